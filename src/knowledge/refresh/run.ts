/**
 * `npm run kb:refresh`: re-read upstream sources and update src/knowledge/data/*.json, printing what
 * changed (the files are in git, so `git diff` shows the same). Hand-curated fields (confidence, notes,
 * companions) are kept; new rows are marked unverified until someone checks them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as schema from '../schema.js';
import { compareDotted } from '../../util/dotted.js';
import { parseDockerHubTags, parseDriverTable, parseWheelIndex } from './parse.js';

export const SOURCES = {
  torchIndex: 'https://download.pytorch.org/whl/torch/',
  releaseNotes: 'https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html',
  dockerHub: 'https://hub.docker.com/v2/repositories/nvidia/cuda/tags?page_size=100&name=cudnn-devel',
} as const;

export class OfflineError extends Error {}

export type Fetch = (url: string) => Promise<string>;

export async function fetchText(url: string): Promise<string> {
  try {
    const response = await fetch(url, {
      signal: AbortSignal.timeout(20_000),
      headers: { 'user-agent': 'cuda-gatekeeper kb:refresh' },
    });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    return await response.text();
  } catch (error) {
    throw new OfflineError(
      `cannot read ${url} (${(error as Error).message}); kb:refresh needs network access. The bundled data is unchanged.`,
    );
  }
}

export interface RefreshResult {
  readonly changes: readonly string[];
  readonly files: Readonly<Record<string, unknown>>;
}

/** Compute the updated data files from fetched sources; pure apart from `fetchSource`. */
export async function refresh(dataDir: string, fetchSource: Fetch, today: string): Promise<RefreshResult> {
  const read = (name: string): unknown => JSON.parse(readFileSync(join(dataDir, name), 'utf8'));
  const pytorch = schema.PyTorch.parse(read('pytorch.json'));
  const drivers = schema.CudaDrivers.parse(read('cuda-drivers.json'));
  const images = schema.Images.parse(read('images.json'));
  const changes: string[] = [];

  const index = parseWheelIndex(await fetchSource(SOURCES.torchIndex));
  for (const [version, tags] of [...index].sort(([a], [b]) => compareDotted(a, b))) {
    const variants = [...tags].sort((a, b) => compareDotted(a.slice(2), b.slice(2)));
    const existing = pytorch.releases.find((release) => release.version === version);
    if (!existing) {
      pytorch.releases.push({
        version,
        variants,
        pypiDefault: null,
        torchvision: [],
        torchaudio: [],
        variantsComplete: true,
        source: [SOURCES.torchIndex],
        retrieved: today,
        confidence: 'unverified',
        note: 'added by kb:refresh from the wheel index; companions and PyPI build not yet recorded',
      });
      changes.push(`pytorch: new release ${version} (${variants.join(', ')})`);
    } else if (existing.variants.join() !== variants.join()) {
      changes.push(`pytorch: ${version} variants ${existing.variants.join(', ')} -> ${variants.join(', ')}`);
      Object.assign(existing, {
        variants,
        retrieved: today,
        source: [...new Set([...existing.source, SOURCES.torchIndex])],
      });
    }
  }
  pytorch.releases.sort((a, b) => compareDotted(a.version, b.version));

  const rows = parseDriverTable(await fetchSource(SOURCES.releaseNotes));
  for (const row of rows) {
    // Releases before 11.0 are kept as a list of versions (the driver floors of 11.0+ never need their rows).
    if (compareDotted(row.version, '11.0') < 0) {
      const earlier = drivers.earlierReleases.versions;
      if (!earlier.includes(row.version)) {
        earlier.push(row.version);
        earlier.sort(compareDotted);
        changes.push(`drivers: CUDA ${row.label} added to the releases before 11.0`);
      }
      continue;
    }
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
  for (const tag of parseDockerHubTags(await fetchSource(SOURCES.dockerHub))) {
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

  return { changes, files: { 'pytorch.json': pytorch, 'cuda-drivers.json': drivers, 'images.json': images } };
}

export function writeData(dataDir: string, files: Readonly<Record<string, unknown>>): void {
  for (const [name, data] of Object.entries(files))
    writeFileSync(join(dataDir, name), `${JSON.stringify(data, null, 2)}\n`);
}

const SOURCE_OF_CHANGE: Readonly<Record<string, string>> = {
  pytorch: SOURCES.torchIndex,
  drivers: SOURCES.releaseNotes,
  images: SOURCES.dockerHub,
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
