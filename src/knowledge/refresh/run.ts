/**
 * `npm run kb:refresh`: re-read upstream sources and update src/knowledge/data/*.json, printing what
 * changed (the files are in git, so `git diff` shows the same). Hand-curated fields (confidence, notes,
 * companions) are kept; new rows are marked unverified until someone checks them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as schema from '../schema.js';
import { compareDotted } from '../../util/dotted.js';
import { parseDockerHubTags, parseDriverTable } from './parse.js';
import { addVariantPage, parseProjectPage, SIMPLE_ACCEPT, type IndexListing } from './simple-index.js';
import { cudaFromTag, tagFromCuda } from '../versions.js';
import type { WheelPlatform } from '../schema.js';
import { configCuda } from '../../images/config.js';
import type { ImageLookups } from '../../images/lookup.js';
import { imageKey, type ImageRef } from '../../images/reference.js';
import { parseImageRef } from '../../parsers/image-ref.js';

export const SOURCES = {
  /** Each variant's project page: `https://download.pytorch.org/whl/cu129/torch/` (a PEP 503 / PEP 691 page). */
  torchIndexes: 'https://download.pytorch.org/whl/',
  releaseNotes: 'https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html',
  dockerHub: 'https://hub.docker.com/v2/repositories/nvidia/cuda/tags?page_size=100&name=cudnn-devel',
} as const;

/** The packages whose variant pages are read. */
export const INDEXED_PACKAGES = ['torch', 'torchvision', 'torchaudio'] as const;

export class OfflineError extends Error {}

/**
 * Reads a source: its text, or undefined where the server says there is no such page (404, or 403 as S3 answers
 * for a missing key behind download.pytorch.org). Any other failure throws OfflineError.
 */
export type Fetch = (url: string, accept?: string) => Promise<string | undefined>;

export async function fetchText(url: string, accept?: string): Promise<string | undefined> {
  let response: Response;
  try {
    response = await fetch(url, {
      signal: AbortSignal.timeout(20_000),
      headers: { 'user-agent': 'cuda-gatekeeper kb:refresh', ...(accept ? { accept } : {}) },
    });
  } catch (error) {
    throw new OfflineError(
      `cannot read ${url} (${(error as Error).message}); kb:refresh needs network access. The bundled data is unchanged.`,
    );
  }
  if (response.status === 404 || response.status === 403) return undefined;
  if (!response.ok)
    throw new OfflineError(`cannot read ${url} (HTTP ${response.status}); the bundled data is unchanged.`);
  return await response.text();
}

/** A source that must exist: its text, or OfflineError. */
async function required(fetchSource: Fetch, url: string): Promise<string> {
  const text = await fetchSource(url);
  if (text === undefined) throw new OfflineError(`${url} is not there (404); the bundled data is unchanged.`);
  return text;
}

export interface RefreshResult {
  readonly changes: readonly string[];
  readonly files: Readonly<Record<string, unknown>>;
}

/** The variant index a CUDA minor would have (`12.9` → cu129), for every CUDA the driver table knows from 9.0. */
function candidateVariants(drivers: schema.CudaDrivers, pytorch: schema.PyTorchData): string[] {
  const minors = new Set<string>();
  for (const release of drivers.releases)
    if (compareDotted(release.version, '9.0') >= 0) minors.add(release.version.split('.').slice(0, 2).join('.'));
  const tags = new Set([...minors].map(tagFromCuda));
  for (const release of pytorch.releases) for (const tag of release.variants) tags.add(tag);
  return [...tags].sort((a, b) => compareDotted(cudaFromTag(a) ?? '0', cudaFromTag(b) ?? '0'));
}

/** Every variant index's page of `project`: what it lists, and the pages that were there. */
async function readVariantPages(
  fetchSource: Fetch,
  variants: readonly string[],
  project: string,
): Promise<{ listing: IndexListing; pages: Map<string, string> }> {
  const listing: IndexListing = new Map();
  const pages = new Map<string, string>();
  for (const variant of variants) {
    const url = `${SOURCES.torchIndexes}${variant}/${project}/`;
    const page = await fetchSource(url, SIMPLE_ACCEPT);
    if (page === undefined) continue;
    pages.set(variant, url);
    addVariantPage(listing, variant, parseProjectPage(page, project));
  }
  return { listing, pages };
}

const sortTags = (tags: Iterable<string>): string[] =>
  [...tags].sort((a, b) => compareDotted(cudaFromTag(a) ?? '0', cudaFromTag(b) ?? '0'));

/**
 * A release's CUDA variants as the indexes list them: the tags with a Linux x86_64 wheel (what `variants` records),
 * and the platforms of each tag that has more than that one (`platforms`).
 */
function variantsOf(tags: ReadonlyMap<string, ReadonlySet<WheelPlatform>>): {
  variants: string[];
  platforms: Record<string, WheelPlatform[]>;
} {
  const cuda = [...tags].filter(([tag]) => /^cu\d{2,3}$/.test(tag));
  const variants = sortTags(cuda.filter(([, platforms]) => platforms.has('linux_x86_64')).map(([tag]) => tag));
  const platforms: Record<string, WheelPlatform[]> = {};
  for (const [tag, seen] of cuda)
    if (seen.size > 1 || !seen.has('linux_x86_64')) platforms[tag] = PLATFORM_ORDER.filter((p) => seen.has(p));
  return { variants, platforms };
}

const PLATFORM_ORDER: readonly WheelPlatform[] = ['linux_x86_64', 'linux_aarch64', 'win_amd64'];

/**
 * Reads images' configs from their registries (src/images), for the rows of images.json: what the registry says of
 * each image key. The script passes one over the network; tests a fake registry's.
 */
export type ReadImages = (refs: readonly ImageRef[]) => Promise<ImageLookups>;

/** Compute the updated data files from fetched sources; pure apart from `fetchSource` and `readImages`. */
export async function refresh(
  dataDir: string,
  fetchSource: Fetch,
  today: string,
  readImages?: ReadImages,
): Promise<RefreshResult> {
  const read = (name: string): unknown => JSON.parse(readFileSync(join(dataDir, name), 'utf8'));
  const pytorch = schema.PyTorch.parse(read('pytorch.json'));
  const drivers = schema.CudaDrivers.parse(read('cuda-drivers.json'));
  const images = schema.Images.parse(read('images.json'));
  const changes: string[] = [];

  const variants = candidateVariants(drivers, pytorch);
  const torch = await readVariantPages(fetchSource, variants, 'torch');
  if (torch.pages.size === 0)
    throw new OfflineError(`no variant index answered under ${SOURCES.torchIndexes}; the bundled data is unchanged.`);
  for (const [version, tags] of [...torch.listing].sort(([a], [b]) => compareDotted(a, b))) {
    const listed = variantsOf(tags);
    if (listed.variants.length === 0) continue; // CPU-only on these indexes (or not for Linux x86_64)
    const sources = [...tags.keys()].flatMap((tag) => {
      const page = torch.pages.get(tag);
      return page ? [page] : [];
    });
    const platforms = Object.keys(listed.platforms).length > 0 ? { platforms: listed.platforms } : {};
    const existing = pytorch.releases.find((release) => release.version === version);
    if (!existing) {
      pytorch.releases.push({
        version,
        variants: listed.variants,
        pypiDefault: null,
        torchvision: [],
        torchaudio: [],
        ...platforms,
        variantsComplete: true,
        source: sources,
        retrieved: today,
        confidence: 'unverified',
        note: 'added by kb:refresh from the wheel indexes; companions and PyPI build not yet recorded',
      });
      changes.push(`pytorch: new release ${version} (${listed.variants.join(', ')})`);
      continue;
    }
    const before = JSON.stringify([existing.variants, existing.platforms ?? {}]);
    if (before === JSON.stringify([listed.variants, listed.platforms])) continue;
    const platformText = (record: Readonly<Record<string, readonly string[]>>) =>
      Object.entries(record)
        .map(([tag, list]) => `${tag} on ${list.join(' and ')}`)
        .join('; ');
    changes.push(
      `pytorch: ${version} variants ${existing.variants.join(', ')} -> ${listed.variants.join(', ')}` +
        (platformText(existing.platforms ?? {}) !== platformText(listed.platforms)
          ? ` (${platformText(listed.platforms) || 'Linux x86_64 only'})`
          : ''),
    );
    Object.assign(existing, {
      variants: listed.variants,
      retrieved: today,
      source: [...new Set([...existing.source, ...sources])],
    });
    if (platforms.platforms) existing.platforms = platforms.platforms;
    else delete existing.platforms;
    delete existing.variantsComplete;
  }
  pytorch.releases.sort((a, b) => compareDotted(a.version, b.version));
  changes.push(...(await companionGaps(fetchSource, variants, pytorch)));

  const rows = parseDriverTable(await required(fetchSource, SOURCES.releaseNotes));
  for (const row of rows) {
    // Releases before 11.0 are rows like the others: with no minor-version compatibility, each needs its own driver.
    const existing = drivers.releases.find((release) => release.version === row.version);
    if (!existing) {
      drivers.releases.push({
        version: row.version,
        label: row.label,
        ...(row.linux ? { linux: row.linux } : {}),
        ...(row.windows ? { windows: row.windows } : {}),
        source: [SOURCES.releaseNotes],
        retrieved: today,
      });
      changes.push(`drivers: new row CUDA ${row.label} (Linux ${row.linux ?? 'n/a'})`);
    } else if (existing.linux !== row.linux || (row.windows && existing.windows !== row.windows)) {
      changes.push(
        `drivers: CUDA ${row.label} Linux ${existing.linux ?? 'n/a'} -> ${row.linux ?? 'n/a'}${row.windows ? `, Windows ${existing.windows ?? 'n/a'} -> ${row.windows}` : ''}`,
      );
      Object.assign(existing, {
        ...(row.linux ? { linux: row.linux } : {}),
        ...(row.windows ? { windows: row.windows } : {}),
        retrieved: today,
        source: [SOURCES.releaseNotes, ...existing.source.filter((s) => s !== SOURCES.releaseNotes)],
      });
      delete (existing as { confidence?: string }).confidence;
    }
  }
  drivers.releases.sort((a, b) => compareDotted(a.version, b.version));

  const seen = images.nvidiaCuda.cudnnDevelTagsSeen;
  for (const tag of parseDockerHubTags(await required(fetchSource, SOURCES.dockerHub))) {
    const match = /^(\d+\.\d+\.\d+)-(cudnn\d*)-devel-/.exec(tag);
    if (!match) continue;
    const [, version, spelling] = match;
    const list = (seen.versions[spelling!] ??= []);
    if (!list.includes(version!)) {
      list.push(version!);
      list.sort(compareDotted);
      changes.push(`images: nvidia/cuda ${version}-${spelling}-devel seen on Docker Hub`);
    }
  }
  if (changes.some((change) => change.startsWith('images:')))
    Object.assign(seen, { retrieved: today, source: [...new Set([...seen.source, SOURCES.dockerHub])] });
  if (readImages) changes.push(...(await verifyImageRows(images, readImages, today)));

  return { changes, files: { 'pytorch.json': pytorch, 'cuda-drivers.json': drivers, 'images.json': images } };
}

/**
 * The unverified NGC and vendor rows checked against the images' own configs: a config whose CUDA_VERSION is the
 * row's makes it verified, with the config as a source; one that says another CUDA corrects the row (and says so);
 * a registry that has no such tag is named for a reviewer (the row is left to them). Images not read are left.
 */
async function verifyImageRows(images: schema.Images, readImages: ReadImages, today: string): Promise<string[]> {
  const ngc = images.ngc
    .filter((row) => row.confidence === 'unverified')
    .map((row) => ({ row, ref: { registry: 'nvcr.io', repository: row.repository, tag: row.tag } }));
  const vendor = images.vendor
    .filter((group) => group.confidence === 'unverified')
    .flatMap((group) => Object.keys(group.tags).map((tag) => ({ group, tag, ref: refOf(group.name, tag) })));
  if (ngc.length + vendor.length === 0) return [];
  const lookups = await readImages([...ngc, ...vendor].map(({ ref }) => ref));
  const changes: string[] = [];
  /** What the registry said of one image: its CUDA and the config as a source, after saying what changed. */
  const read = (ref: ImageRef, recorded: string | undefined) => {
    const name = `${ref.registry ? `${ref.registry}/` : ''}${ref.repository}:${ref.tag}`;
    const lookup = lookups[imageKey(ref)];
    if (lookup?.state === 'missing') changes.push(`images: ${name} is not on its registry (${lookup.reason})`);
    const cuda = lookup?.state === 'read' ? configCuda(lookup.config) : undefined;
    if (lookup?.state !== 'read' || !cuda) return undefined;
    changes.push(
      recorded === cuda
        ? `images: ${name} CUDA ${cuda} confirmed by its config`
        : `images: ${name} CUDA ${recorded ?? 'not recorded'} -> ${cuda} (its config)`,
    );
    const source = `${lookup.registry} image config of ${name} (${lookup.digest}, ${lookup.config.platform}): CUDA_VERSION=${lookup.config.env.CUDA_VERSION}`;
    return { cuda, source };
  };
  for (const { row, ref } of ngc) {
    const found = read(ref, row.cuda);
    if (!found) continue;
    Object.assign(row, { cuda: found.cuda, retrieved: today, source: [found.source, ...row.source] });
    delete (row as { confidence?: string }).confidence;
  }
  // A vendor tag its config confirms (or corrects) leaves its unverified group for a verified one of its own.
  for (const { group, tag, ref } of vendor) {
    const found = read(ref, group.tags[tag]);
    if (!found) continue;
    delete group.tags[tag];
    images.vendor.push({
      name: group.name,
      tags: { [tag]: found.cuda },
      source: [found.source, ...group.source],
      retrieved: today,
    });
  }
  images.vendor = images.vendor.filter((group) => Object.keys(group.tags).length > 0);
  return changes;
}

function refOf(name: string, tag: string): ImageRef {
  const parsed = parseImageRef(`${name}:${tag}`);
  return { ...(parsed.registry ? { registry: parsed.registry } : {}), repository: parsed.repository, tag };
}

/**
 * torchvision and torchaudio builds that the indexes list differently from the torch release they belong to: a
 * companion is checked by its release's variants, so each difference is named for a reviewer (a change line; the
 * data is left to them).
 */
async function companionGaps(
  fetchSource: Fetch,
  variants: readonly string[],
  pytorch: schema.PyTorchData,
): Promise<string[]> {
  const gaps: string[] = [];
  for (const project of ['torchvision', 'torchaudio'] as const) {
    const { listing } = await readVariantPages(fetchSource, variants, project);
    for (const [version, tags] of [...listing].sort(([a], [b]) => compareDotted(a, b))) {
      const owner = pytorch.releases.find((release) => release[project].includes(version));
      if (!owner) continue;
      const own = new Set(variantsOf(tags).variants);
      const extra = owner.variants.filter((tag) => !own.has(tag));
      if (extra.length > 0)
        gaps.push(
          `pytorch: ${project} ${version} has no ${extra.join(', ')} build on the indexes, though torch ${owner.version} has`,
        );
    }
  }
  return gaps;
}

export function writeData(dataDir: string, files: Readonly<Record<string, unknown>>): void {
  for (const [name, data] of Object.entries(files))
    writeFileSync(join(dataDir, name), `${JSON.stringify(data, null, 2)}\n`);
}

const SOURCE_OF_CHANGE: Readonly<Record<string, string>> = {
  pytorch: `${SOURCES.torchIndexes}<variant>/<package>/`,
  drivers: SOURCES.releaseNotes,
  images: `${SOURCES.dockerHub} and the images' configs on their registries`,
};

/** The pull request body the weekly workflow opens: each change under the source it was read from. */
export function summary(changes: readonly string[], today: string): string {
  if (changes.length === 0) return `kb:refresh on ${today}: the knowledge base matches its sources.\n`;
  const lines = [`kb:refresh on ${today} read the upstream sources and found ${changes.length} change(s).`, ''];
  for (const [kind, source] of Object.entries(SOURCE_OF_CHANGE)) {
    const own = changes.filter((change) => change.startsWith(`${kind}:`));
    if (own.length === 0) continue;
    lines.push(`### From ${source}`, '', ...own.map((change) => `- ${change.slice(kind.length + 1).trim()}`), '');
  }
  lines.push(
    'New rows are marked `confidence: unverified` until someone checks them against the source; rules treat',
    'unverified facts leniently (never an error on them alone). Review with `git diff src/knowledge/data`, check each',
    'row against its source, drop `confidence` where it holds, and run `npm test`.',
    '',
  );
  return lines.join('\n');
}
