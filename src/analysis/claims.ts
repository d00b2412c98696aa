import { imageFullName } from '../parsers/image-ref.js';
import { formatOf } from '../parsers/formats.js';
import type { ContainerFact, ImageFact, IndexFact, PackageFact, ParsedFile } from '../parsers/facts.js';
import type { TextEdit } from '../finding.js';
import { imagePatchFor, isUnverified, type KnowledgeBase, type Sourced } from '../knowledge/index.js';
import { configCuda } from '../images/config.js';
import type { Span } from '../parsers/source.js';
import type { Machine } from '../parsers/markers.js';
import {
  cudaFromDigits,
  cudaMajorMinor,
  cudaOfVersion,
  parseCuda,
  publicVersion,
  tagFromCuda,
} from '../knowledge/versions.js';
import {
  cudaFromAptName,
  cudaFromCondaLabel,
  cudaFromLabel,
  cudaFromPythonName,
  cudaFromUrl,
  isPytorchIndex,
} from './cuda-labels.js';
import { replaceExact, replaceWithin, type Located } from './edits.js';
import { releaseFor } from './torch-build.js';
import { TORCH_FAMILY } from '../parsers/python-requirement.js';

/** Where a CUDA version was declared; the order is the precedence for choosing a target. */
export type ClaimKind =
  | 'image'
  | 'env'
  | 'conda'
  | 'conda-build'
  | 'conda-channel'
  | 'wheel-tag'
  | 'index'
  | 'wheel-url'
  | 'implied'
  | 'apt'
  | 'nvidia-wheel'
  | 'cupy'
  | 'jax'
  | 'tensorflow'
  | 'library'
  // An extra, group or pixi environment named for a CUDA (`cu124`, `cu126-torch280`): compared, never the target.
  | 'name'
  // pixi's `system-requirements.cuda`: the CUDA the machines' driver supports, a floor the builds must not pass.
  | 'system';

export const CLAIM_PRECEDENCE: Readonly<Record<ClaimKind, number>> = {
  image: 0,
  env: 1,
  conda: 2,
  'conda-build': 3,
  'conda-channel': 4,
  'wheel-tag': 5,
  index: 6,
  'wheel-url': 7,
  implied: 8,
  apt: 9,
  // Library wheels are peers: the first one in the file wins a tie.
  'nvidia-wheel': 10,
  cupy: 10,
  jax: 10,
  tensorflow: 10,
  library: 10,
  name: 11,
  system: 12,
};

export interface CudaClaim {
  readonly kind: ClaimKind;
  readonly file: ParsedFile;
  /** Install context (or stage, for images/ENV) the claim belongs to. */
  readonly context?: number;
  readonly stage?: number;
  /** `12.4`, `12.4.1`, or a major alone (`12`) when precision is 'major'. */
  readonly cuda: string;
  readonly precision: 'minor' | 'major';
  readonly span: Span;
  /** What declares it, for messages: `nvidia/cuda:12.1.0-devel-ubuntu22.04`, `torch==2.3.0+cu121`. */
  readonly subject: string;
  /**
   * How to make this declaration say another CUDA version, where plain text edits can (several when an ARG is
   * involved).
   */
  readonly rewrite?: (target: string) => readonly TextEdit[] | undefined;
  /**
   * How a move of the whole repository to another CUDA rewrites it, where a fix of one finding must not: a
   * pyproject.toml's index is chosen per extra, so only a plan that moves every unit may move its URL.
   */
  readonly moveTo?: (target: string) => readonly TextEdit[] | undefined;
  /** Knowledge the claim rests on (implied builds, NGC tags). */
  readonly record?: Sourced;
  /** The machines whose build of the package is a CUDA build, where others' is not (ctranslate2: x86_64 alone). */
  readonly machines?: readonly Machine[];
  readonly package?: PackageFact;
  readonly image?: ImageFact;
  readonly index?: IndexFact;
  /** A claim carried to a Kubernetes container from the Dockerfile that builds its image: where it is written there. */
  readonly origin?: { readonly file: ParsedFile; readonly span: Span; readonly subject: string };
  /**
   * What an install that pins nothing takes today, where the claim rests on that pick (`2.14.0 (with Python 3.10 …)`,
   * `CUDA 13.3 for ubuntu22.04`): the newest release it admits, which moves as releases appear (unpinned.ts).
   */
  readonly newest?: string;
  /**
   * A newest pick's claim (`torch>=2.1,<2.9`: 2.8.0, CUDA 12.8) whose range admits releases of one CUDA major only:
   * the claim of that major, certain whatever release pip takes, which a finding about the major says instead.
   */
  readonly certainMajor?: CudaClaim;
}

/** How an index is named in messages: the option as written, or a pyproject.toml's index URL. */
export function indexSubject(file: ParsedFile, index: IndexFact): string {
  const written = formatOf(file.kind).indexes;
  if (written === 'tables') return `the index ${index.url}`;
  if (written === 'registry') return `the registry ${index.url}`;
  // Written without a URL (`--torch-backend=cu129`): as written, with the index it means.
  if (index.written) return `${index.written} (${index.url})`;
  // No alternative named: an index whose URL a conditional value built shows that value in its URL, and one that
  // every reading shares is one finding.
  return `${index.kind === 'find-links' ? '--find-links' : `--${index.kind}`} ${index.url}`;
}

/**
 * A package read from one of a command's alternative readings says which (`torch==2.3.0 (when $CU is 'cu118')`): the
 * build takes one path, and the message names it.
 */
export function withAlternative(file: ParsedFile, context: number, subject: string): string {
  const alternative = file.contexts[context]?.alternative;
  return alternative ? `${subject} (${alternative})` : subject;
}

/** A claim with every field present, in one order: one hidden class for all claims (see `packageFact` in facts.ts). */
export function cudaClaim(f: CudaClaim): CudaClaim {
  return {
    kind: f.kind,
    file: f.file,
    context: f.context,
    stage: f.stage,
    cuda: f.cuda,
    precision: f.precision,
    span: f.span,
    subject: f.subject,
    rewrite: f.rewrite,
    moveTo: f.moveTo,
    record: f.record,
    package: f.package,
    image: f.image,
    index: f.index,
    origin: f.origin,
    newest: f.newest,
    certainMajor: f.certainMajor,
    machines: f.machines,
  };
}

/**
 * How a finding names a claim: an unpinned torch or a range that the unit says pip resolves to one release today
 * (`torch>=1.5.0`: 2.14.0, a cu130 build) names that release, which moves as releases appear; any other its subject.
 */
export function pickSubject(claim: CudaClaim): string {
  const version = todaysPick(claim);
  return version
    ? `${claim.subject} (torch ${version} today, its ${tagFromCuda(claim.cuda)} build on PyPI)`
    : claim.subject;
}

/** The torch release an unpinned torch or a range resolves to today, where the unit says one (see pickSubject). */
export function todaysPick(claim: CudaClaim): string | undefined {
  const release = claim.kind === 'implied' && claim.package?.name === 'torch' ? claim.record : undefined;
  if (!release || !('version' in release) || !claim.newest || claim.newest.includes(' or ')) return undefined;
  if (claim.precision !== 'minor' || claim.index) return undefined;
  return String(release.version);
}

/** For a claim carried from a Dockerfile to a manifest: the related location where the Dockerfile makes it. */
export function originRelated(claim: CudaClaim): { file: ParsedFile; span: Span; message: string }[] {
  return claim.origin
    ? [
        {
          file: claim.origin.file,
          span: claim.origin.span,
          message: `the image is built from here: ${claim.origin.subject}`,
        },
      ]
    : [];
}

/** The CUDA a Kubernetes container's image says by its name (an nvidia/cuda, PyTorch or NGC tag), if any. */
export function containerImageClaim(
  file: ParsedFile,
  container: ContainerFact,
  kb: KnowledgeBase,
): CudaClaim | undefined {
  const claim = imageClaim(file, container.image, kb);
  // No rewrite: a manifest's image is deployed as built, so no fix edits its tag; a plan that moves the repository to
  // another CUDA moves it with the rest.
  return claim && cudaClaim({ ...claim, rewrite: undefined, ...(claim.rewrite ? { moveTo: claim.rewrite } : {}) });
}

/** CUDA claims a file makes on its own (builds implied by PyPI/index resolution are added per unit). */
export function fileClaims(file: ParsedFile, kb: KnowledgeBase): CudaClaim[] {
  const claims: CudaClaim[] = [];
  for (const image of file.images) {
    const claim = imageClaim(file, image, kb);
    if (claim) claims.push(claim);
  }
  for (const env of file.env) {
    if (env.instruction !== 'ENV' || env.key !== 'CUDA_VERSION') continue;
    const minor = cudaMajorMinor(env.value);
    if (!minor) continue;
    claims.push(
      cudaClaim({
        kind: 'env',
        file,
        stage: env.stage,
        cuda: env.value,
        precision: 'minor',
        span: env.span,
        subject: `ENV CUDA_VERSION=${env.value}`,
      }),
    );
  }
  for (const index of file.indexes) {
    if (index.ignoredReason) continue;
    if (index.kind === 'conda-channel') {
      const label = cudaFromCondaLabel(index.url);
      if (label)
        claims.push(
          cudaClaim({
            kind: 'conda-channel',
            file,
            context: index.context,
            cuda: label,
            precision: 'minor',
            span: index.span,
            subject: `channel ${index.url}`,
            index,
          }),
        );
      continue;
    }
    const found = cudaFromUrl(index.url);
    if (!found) continue;
    // Only PyTorch's own index, and only to a build it publishes: `/whl/cu123` does not exist (no release has a
    // cu123 build), and what another index's path for another CUDA holds (Jetson AI Lab's `jp6/cu130`, a mirror) is
    // not known here.
    const pytorch = isPytorchIndex(index.url);
    const move = (target: string): readonly TextEdit[] | undefined =>
      pytorch && kb.publishesTorchBuild(tagFromCuda(target))
        ? one(rewriteLabel(file, { span: index.urlSpan, value: index.url }, found, target))
        : undefined;
    claims.push(
      cudaClaim({
        kind: 'index',
        file,
        context: index.context,
        cuda: found.cuda,
        precision: found.precision,
        span: index.span,
        subject: indexSubject(file, index),
        index,
        // A pyproject.toml's index is named for its CUDA and chosen per extra: what to change there is the
        // selection (`uv sync --extra …`) or the routing, which no single text edit decides.
        ...(formatOf(file.kind).indexes === 'tables' ? { moveTo: move } : { rewrite: move }),
      }),
    );
  }
  for (const pkg of file.packages) packageClaims(file, pkg, kb, claims);
  nameClaims(file, claims);
  systemClaims(file, claims);
  return claims;
}

/**
 * pixi's `system-requirements.cuda = "12.0"`: pixi solves the selection as if the driver supported CUDA 12.0
 * (the `__cuda` virtual package; pixi.sh/latest/workspace/system_requirements). One claim per context of the
 * selection; cuda-mismatch compares it as a floor (a build for a newer CUDA major cannot be solved for it).
 */
function systemClaims(file: ParsedFile, claims: CudaClaim[]): void {
  for (const context of file.contexts) {
    const required = context.systemCuda;
    const major = required ? /^(\d+)(?:\.(\d+))?/.exec(required.value) : null;
    if (!required || !major) continue;
    const original = required.value;
    // As written: `"11.8"` (system-requirements) or `"__cuda=11.8"` (a named platform's virtual packages).
    const literal = file.source.text.slice(required.span.start, required.span.end);
    const at = Math.max(literal.indexOf(original), 0);
    const where = context.variant ?? 'this environment';
    claims.push(
      cudaClaim({
        kind: 'system',
        file,
        context: context.id,
        cuda: major[2] !== undefined ? `${major[1]}.${major[2]}` : major[1]!,
        precision: major[2] !== undefined ? 'minor' : 'major',
        span: required.span,
        subject: literal.includes('__cuda')
          ? `the platform's virtual package ${literal} (${where})`
          : `system-requirements cuda = ${literal} (${where})`,
        // Raising the floor keeps its spelling: "12" → "13", "12.0" → "13.0".
        rewrite: (target) => {
          const to = parseCuda(target);
          if (!to) return undefined;
          return one(
            replaceWithin(
              file,
              { span: required.span, value: literal },
              [at, at + original.length],
              major[2] !== undefined ? `${to.major}.0` : `${to.major}`,
            ),
          );
        },
      }),
    );
  }
}

/**
 * The CUDA an extra, a group or a pixi environment names: `cu124` (12.4), `cu118only`, `cu126-torch280`,
 * `cu12` (the major 12; two-digit tags below 10 are CUDA 8.0–9.2, as `cu92`), `cuda12`, `cuda-12.4`. One claim
 * per context of the selection, so each unit of that selection compares it with what it installs.
 */
function nameClaims(file: ParsedFile, claims: CudaClaim[]): void {
  for (const context of file.contexts) {
    if (!context.variantSpan || !context.variant) continue;
    const kind = context.variant.slice(0, context.variant.indexOf(' '));
    // "environment cuda on linux-64-cuda": the environment's name is the part before its platforms.
    const written = context.variant.slice(kind.length + 1).split(' on ')[0]!;
    const name = written.toLowerCase();
    const cuda = cudaOfName(name);
    if (!cuda) continue;
    claims.push(
      cudaClaim({
        kind: 'name',
        file,
        context: context.id,
        cuda: cuda.cuda,
        precision: cuda.precision,
        span: context.variantSpan,
        subject: `the ${kind} "${written}"`,
      }),
    );
  }
}

/** The CUDA major an image's tag names (vLLM's `v0.15.1-cu130`, `cuda12.4.1`: the publisher's own word). */
function tagMajor(claim: CudaClaim): number | undefined {
  const tag = claim.kind === 'image' ? claim.image?.tag : undefined;
  const named = tag ? cudaOfName(tag.toLowerCase()) : undefined;
  return named ? Number(named.cuda.split('.')[0]) : undefined;
}

/**
 * Whether an image claim's CUDA major is at least `major` for certain though its row is unverified: its tag names that
 * major, or an NGC tag is later than a verified one of that major (NGC containers never go back a major).
 */
export function majorCertain(claim: CudaClaim, major: number, kb: KnowledgeBase): boolean {
  if (tagMajor(claim) === major) return true;
  const image = claim.image;
  return (
    claim.kind === 'image' &&
    image?.registry === 'nvcr.io' &&
    !!image.tag &&
    kb.ngcMajorAtLeast(image.repository, image.tag, major)
  );
}

/**
 * Whether a finding that rests only on two claims' CUDA majors differing rests on an unverified fact: not where each
 * unverified side's major is certain (its tag names it; an NGC image's, known only not to be older than a verified
 * tag's, where the other side's major is the older one).
 */
export function majorsUnverified(claim: CudaClaim, target: CudaClaim, kb: KnowledgeBase): boolean {
  return majorUncertain(claim, claimMajor(target), kb) || majorUncertain(target, claimMajor(claim), kb);
}

/**
 * Whether a claim's CUDA major, set against another major `other` it differs from, rests on an unverified fact: its
 * row is unverified, its tag does not name the major, and it is not known to be at least its major where `other` is
 * older.
 */
export function majorUncertain(side: CudaClaim, other: number, kb: KnowledgeBase): boolean {
  const major = claimMajor(side);
  return isUnverified(side.record) && tagMajor(side) !== major && !(other < major && majorCertain(side, major, kb));
}

const claimMajor = (claim: CudaClaim): number => Number(claim.cuda.split('.')[0]);

export function cudaOfName(name: string): { cuda: string; precision: 'minor' | 'major' } | undefined {
  const tag = /(?:^|[^a-z0-9])cu(\d{2,3})(?![0-9])/.exec(name);
  if (tag) return cudaFromDigits(tag[1]!);
  const spelled = /(?:^|[^a-z0-9])cuda[-_]?(\d{2})(?:[._-]?(\d))?(?![0-9])/.exec(name);
  if (spelled)
    return spelled[2]
      ? { cuda: `${spelled[1]}.${spelled[2]}`, precision: 'minor' }
      : { cuda: spelled[1]!, precision: 'major' };
  return undefined;
}

function imageClaim(file: ParsedFile, image: ImageFact, kb: KnowledgeBase): CudaClaim | undefined {
  const known = imageCuda(image, kb);
  if (!known) return undefined;
  const nvidia = known.nvidiaCuda;
  return cudaClaim({
    kind: 'image',
    file,
    stage: image.stage,
    cuda: known.cuda,
    precision: known.precision,
    span: image.span,
    subject: image.reference,
    image,
    record: known.record,
    rewrite: nvidia
      ? (target) => rewriteNvidiaCudaTag({ file, image, ...nvidia }, target, kb)
      : image.registry === 'nvcr.io' && !known.fromConfig
        ? (target) => rewriteNgcTag(file, image, target, kb)
        : undefined,
  });
}

/**
 * An NGC base moved to another CUDA: the newest tag of the same container and variant whose CUDA it is, as the
 * knowledge records them (`pytorch:24.05-py3` → `pytorch:25.01-py3` for CUDA 12.8). Undefined where none is known,
 * or where the tag is not written out in the file (an ARG default elsewhere is edited only when it holds all of it).
 */
function rewriteNgcTag(file: ParsedFile, image: ImageFact, target: string, kb: KnowledgeBase): TextEdit[] | undefined {
  const tag = image.tag;
  const found = tag ? kb.ngcTagFor(image.repository, tag, target) : undefined;
  const span = tag ? image.tagMap?.origin(0, tag.length) : undefined;
  if (!tag || !found || !span) return undefined;
  return one(replaceExact(file, span, tag, found.tag));
}

/** What is known of an image's CUDA, and from where. */
export interface ImageCuda {
  readonly cuda: string;
  readonly precision: 'minor' | 'major';
  /** The knowledge row, or the registry's config, it rests on (none: the tag's own grammar says it). */
  readonly record?: Sourced;
  /** Where the tag is read from the image's own config rather than the knowledge snapshot. */
  readonly fromConfig: boolean;
  /** An nvidia/cuda tag's parts (a fix can rewrite those). */
  readonly nvidiaCuda?: {
    readonly version: string;
    readonly cudnn: string | undefined;
    readonly os: string | undefined;
    readonly osVersion: string | undefined;
  };
}

/**
 * An image's CUDA: from the knowledge snapshot by its tag (nvidia/cuda's grammar, pytorch/pytorch's, NGC's release
 * notes and cuda-dl-base's grammar, vendor images' rows), else from its config as the registry served it in this
 * check (CUDA_VERSION, src/images/config.ts). Undefined where neither says.
 */
export function imageCuda(image: ImageFact, kb: KnowledgeBase): ImageCuda | undefined {
  if (image.unresolved) return writtenNvidiaCuda(image, kb);
  return snapshotCuda(image, lookupTag(image), kb) ?? configImageCuda(image, kb);
}

/**
 * The tag the snapshot is asked for: the one written, else `latest`, which a reference with neither tag nor digest
 * pulls (Docker: "If you omit the tag, Docker uses :latest"); a reference by digest alone is asked with no tag, so
 * that only rows that read the CUDA from the image's name (Azure's `…-cu118-…`) answer.
 */
function lookupTag(image: ImageFact): string {
  if (image.tag !== undefined) return image.tag;
  return image.digest ? '' : 'latest';
}

/**
 * An nvidia/cuda reference a build argument completes after its CUDA version (`nvidia/cuda:13.0.3-base-ubuntu${
 * UBUNTU_VERSION}.04`, dstack's base image): every value gives that CUDA, so the CUDA is known though the tag is not
 * (no edit is offered, and whether the tag exists is not judged).
 */
function writtenNvidiaCuda(image: ImageFact, kb: KnowledgeBase): ImageCuda | undefined {
  if (!image.tag || !kb.isNvidiaCuda(image.registry, image.repository)) return undefined;
  const written = /^(\d+\.\d+(?:\.\d+)?)-[^$]*\$/.exec(image.tag)?.[1];
  return written ? { cuda: written, precision: 'minor', fromConfig: false } : undefined;
}

/** An NGC tag whose month cannot be (`25.13-py3`, `24.00-py3`): no registry has it (image-missing says so). */
export function impossibleNgcTag(image: Pick<ImageFact, 'registry' | 'repository' | 'tag'>): boolean {
  if (image.registry !== 'nvcr.io' || !image.repository.startsWith('nvidia/') || !image.tag) return false;
  const month = /^\d{2}\.(\d{2})(?=[.-]|$)/.exec(image.tag)?.[1];
  return month !== undefined && (Number(month) < 1 || Number(month) > 12);
}

/** Whether the knowledge snapshot judges this image by its tag (nvidia/cuda tags are image-missing's, known or not). */
export function snapshotKnows(image: ImageFact, kb: KnowledgeBase): boolean {
  const name = imageFullName(image);
  return (
    kb.isNvidiaCuda(image.registry, image.repository) ||
    impossibleNgcTag(image) ||
    kb.officialImage(image.registry, image.repository) !== undefined ||
    kb.redHatPythonImage(name) !== undefined ||
    kb.osImage(name) !== undefined ||
    kb.driverToolImage(name) !== undefined ||
    kb.acceleratorImage(name) !== undefined ||
    kb.toolImage(name, image.tag ?? 'latest') !== undefined ||
    snapshotCuda(image, lookupTag(image), kb) !== undefined
  );
}

function snapshotCuda(image: ImageFact, tag: string, kb: KnowledgeBase): ImageCuda | undefined {
  if (kb.isNvidiaCuda(image.registry, image.repository)) {
    const parsed = kb.nvidiaCudaTag(tag);
    return parsed
      ? {
          cuda: parsed.version,
          precision: 'minor',
          fromConfig: false,
          nvidiaCuda: { version: parsed.version, cudnn: parsed.cudnn, os: parsed.os, osVersion: parsed.osVersion },
        }
      : undefined;
  }
  if (!image.registry && image.repository === 'pytorch/pytorch') {
    const parsed = kb.pytorchImageTag(tag);
    return parsed ? { cuda: parsed.cuda, precision: 'minor', fromConfig: false } : undefined;
  }
  if (image.registry === 'nvcr.io' && image.repository.startsWith('nvidia/')) return ngcCuda(image.repository, tag, kb);
  const name = imageFullName(image);
  const vendor = kb.vendorImage(name, tag);
  if (vendor) return { cuda: vendor.cuda, precision: 'minor', record: vendor.record, fromConfig: false };
  const tool = kb.toolImage(name, tag);
  return tool && tool.cuda !== 'none'
    ? { cuda: tool.cuda, precision: 'minor', record: tool.record, fromConfig: false }
    : undefined;
}

/**
 * Where an image is known to ship no CUDA of its own, why: a Docker Official Image, a package-manager image on a
 * plain OS (knowledge), or a config this check read that sets no CUDA_VERSION. What runs in it brings its CUDA.
 */
export function imageWithoutCuda(image: ImageFact, kb: KnowledgeBase): string | undefined {
  // Where only the tag is a build argument (`ubuntu:${UBUNTU_VERSION}`, `python:${PY}-slim`), what holds for every tag
  // of the repository still does; what a tag decides is not known.
  if (image.unresolved && (image.repository.includes('$') || (image.registry ?? '').includes('$'))) return undefined;
  if (kb.officialImage(image.registry, image.repository))
    return 'a Docker Official Image, which ships no CUDA of its own';
  const name = imageFullName(image);
  const os = kb.osImage(name);
  if (os) return `a minimal OS image with no CUDA of its own (${sourceNaming(os.source, image.repository)})`;
  const driverTool = kb.driverToolImage(name);
  if (driverTool)
    return `one of NVIDIA's GPU management tools, which reads the GPUs through the driver (NVML) and turns off the container toolkit's CUDA requirement, so no CUDA of it needs a newer driver (${driverTool.source.map((source) => source.split(' ')[0]).join(', ')})`;
  const redHat = kb.redHatPythonImage(name);
  if (redHat)
    return `one of Red Hat's Python images, RHEL with Python and build tools and no CUDA of its own (${redHat.source[0]!.split(' ')[0]})`;
  if (image.unresolved) return undefined;
  // No tag is `latest`.
  const tool = kb.toolImage(name, image.tag ?? 'latest');
  if (tool?.cuda === 'none')
    return `a package-manager or wheel-build image on a plain OS, with no CUDA of its own (${tool.record.source[0]!.split(' ')[0]})`;
  const cpu = image.tag !== undefined ? kb.cpuImage(name, image.tag) : undefined;
  if (cpu)
    return `its CPU image: a tag without -gpu or -cuXY aliases -cpu, built on Ubuntu with no CUDA of its own (${cpu.source[0]!.split(' ')[0]})`;
  const lookup = kb.imageLookup(image);
  if (lookup?.state === 'read' && !configCuda(lookup.config))
    return `its config on ${lookup.registry} (${lookup.digest}) sets no CUDA_VERSION, so no CUDA of NVIDIA's images is in it`;
  if (rocmImage(image)) return `an AMD ROCm image (${ROCM_SOURCE}), which ships no CUDA`;
  const accelerator = kb.acceleratorImage(name);
  if (accelerator)
    return `an image for ${accelerator.vendor}, which ships no CUDA (${accelerator.source[0]!.split(' ')[0]})`;
  return undefined;
}

/**
 * The address of the source that names an image's repository (its last part, else any part: `pause`, `ubi-minimal`,
 * `distroless`), of a record whose one pattern covers many images; all of them where none does.
 */
function sourceNaming(sources: readonly string[], repository: string): string {
  const parts = repository.toLowerCase().split('/').reverse();
  for (const part of parts) {
    const found = sources.find((source) => source.toLowerCase().includes(part));
    if (found) return found.split(' ')[0]!;
  }
  return sources.map((source) => source.split(' ')[0]).join(', ');
}

/**
 * Where an image is for another vendor's accelerators (AMD ROCm, Ascend, Gaudi, Neuron, Intel XPU), which ones: what
 * a stage on it installs runs there, never on NVIDIA GPUs.
 */
export function otherAccelerator(image: ImageFact, kb: KnowledgeBase): string | undefined {
  if (image.unresolved) return undefined;
  if (rocmImage(image)) return 'AMD GPUs (ROCm)';
  return kb.acceleratorImage(imageFullName(image))?.vendor;
}

/**
 * An image built for AMD's ROCm, not CUDA: AMD's own images on Docker Hub (`rocm/pytorch`, `rocm/vllm`,
 * `rocm/dev-ubuntu-22.04`), a repository or tag that names ROCm as a word (`lmsysorg/sglang:v0.4.6-rocm630`).
 */
export function rocmImage(image: ImageFact): boolean {
  const hub = !image.registry || image.registry === 'docker.io' || image.registry === 'registry-1.docker.io';
  if (hub && image.repository.startsWith('rocm/')) return true;
  return ROCM_WORD.test(image.repository) || (image.tag !== undefined && ROCM_WORD.test(image.tag));
}

export const ROCM_SOURCE =
  'rocm.docs.amd.com/projects/install-on-linux/en/latest/install/3rd-party/pytorch-install.html';

const ROCM_WORD = /(?:^|[-_./])rocm(?:\d+(?:\.\d+)*)?(?:$|[-_./])/i;

/**
 * An NGC container's CUDA: its release-notes row (PyTorch's own rows, then every other repository's), else a CUDA
 * that the tag itself names (`cuda-dl-base:25.03-cuda12.8-devel-ubuntu24.04`).
 */
function ngcCuda(repository: string, tag: string, kb: KnowledgeBase): ImageCuda | undefined {
  const pytorch = repository === 'nvidia/pytorch' ? kb.ngcPytorch(tag) : undefined;
  if (pytorch) {
    const cuda = pytorch.cuda ?? (pytorch.cudaMajor !== undefined ? String(pytorch.cudaMajor) : undefined);
    return cuda ? { cuda, precision: pytorch.cuda ? 'minor' : 'major', record: pytorch, fromConfig: false } : undefined;
  }
  const row = kb.ngcImage(repository, tag);
  if (row?.cuda) return { cuda: row.cuda, precision: 'minor', record: row, fromConfig: false };
  // NVIDIA's tag names the CUDA it is built on: `cuda-dl-base:25.03-cuda12.8-devel-ubuntu24.04`, the device plugin's
  // test images `k8s/cuda-sample:vectoradd-cuda12.5.0-ubuntu22.04`.
  const named = /(?:^|-)cuda(\d+\.\d+)(?:\.\d+)?(?=-|$)/.exec(tag);
  return named ? { cuda: named[1]!, precision: 'minor', fromConfig: false } : undefined;
}

/** The CUDA_VERSION of the image's config, where this check read it from the registry. */
function configImageCuda(image: ImageFact, kb: KnowledgeBase): ImageCuda | undefined {
  const lookup = kb.imageLookup(image);
  if (lookup?.state !== 'read') return undefined;
  const cuda = configCuda(lookup.config);
  if (!cuda) return undefined;
  return {
    cuda,
    precision: 'minor',
    fromConfig: true,
    record: {
      source: [
        `the image's config on ${lookup.registry} (${lookup.digest}, ${lookup.config.platform}): CUDA_VERSION=${lookup.config.env.CUDA_VERSION}`,
      ],
      retrieved: lookup.retrieved,
    },
  };
}

/** An nvidia/cuda image and its tag's CUDA version and cuDNN part, as the tag spells them. */
interface NvidiaCudaImage {
  readonly file: ParsedFile;
  readonly image: ImageFact;
  readonly version: string;
  readonly cudnn?: string | undefined;
  readonly os?: string | undefined;
  readonly osVersion?: string | undefined;
}

function rewriteNvidiaCudaTag(
  { file, image, version, cudnn, os, osVersion }: NvidiaCudaImage,
  target: string,
  kb: KnowledgeBase,
): TextEdit[] | undefined {
  const map = image.tagMap;
  if (!map) return undefined;
  const minor = cudaMajorMinor(target);
  if (!minor) return undefined;
  // Only to a tag NVIDIA publishes: 12.8.1 has no ubuntu18.04 images (that OS ends at 12.1.0, so 12.1 is 12.1.0
  // there), and moving the OS is a choice about the image's packages and Python, not an edit of its CUDA.
  const full = parseCuda(target)?.patch !== undefined ? target : imagePatchFor(kb, minor, os, osVersion);
  if (!full) return undefined;
  if (os && osVersion && kb.nvidiaCudaOs(os, osVersion, full)?.published === false) return undefined;
  const spelling = cudnn ? kb.cudnnSpelling(full)?.spelling : undefined;
  if (cudnn && !spelling) return undefined;
  // The version may live in an ARG default and the cuDNN part in the FROM line: edit each where it is.
  const versionSpan = map.origin(0, version.length);
  const versionEdit = versionSpan ? replaceExact(file, versionSpan, version, full) : undefined;
  if (!versionEdit) return undefined;
  if (!cudnn || spelling === cudnn) return [versionEdit];
  const cudnnSpan = map.origin(version.length + 1, version.length + 1 + cudnn.length);
  const cudnnEdit = cudnnSpan ? replaceExact(file, cudnnSpan, cudnn, spelling!) : undefined;
  return cudnnEdit ? [versionEdit, cudnnEdit] : undefined;
}

/**
 * Whether a torch, torchvision or torchaudio pin has a build for CUDA `target` (other packages: not known here, so
 * yes).
 */
function hasBuild(kb: KnowledgeBase, pkg: PackageFact, target: string): boolean {
  if (!TORCH_FAMILY.has(pkg.name)) return true;
  const release = releaseFor(kb, pkg, publicVersion(pkg.exact!));
  return release !== undefined && kb.torchBuilds(release).has(tagFromCuda(target));
}

function one(edit: TextEdit | undefined): TextEdit[] | undefined {
  return edit ? [edit] : undefined;
}

/** A CUDA label found in a located value: the label (`cu121`, `cuda12.1`) and where in the value its digits are. */
interface FoundLabel {
  readonly label: string;
  readonly range: readonly [number, number];
}

/**
 * The label's digits rewritten to CUDA `target`, in the label's own spelling (`cu121` → `cu124`, `cuda12.1` →
 * `cuda12.4`).
 */
function rewriteLabel(
  file: ParsedFile,
  at: Located,
  { label, range }: FoundLabel,
  target: string,
): TextEdit | undefined {
  const parsed = parseCuda(target);
  if (!parsed) return undefined;
  const isDotted = label.toLowerCase().startsWith('cuda') && at.value.slice(range[0], range[1]).includes('.');
  const digits = isDotted ? `${parsed.major}.${parsed.minor}` : `${parsed.major}${parsed.minor}`;
  return replaceWithin(file, at, range, digits);
}

/**
 * NVIDIA's meta-packages, versioned by the CUDA release itself (cuda-toolkit 12.4.0, 12.4.1; cuda-runtime 11.8.0): the
 * components they depend on carry versions of their own (cuda-cudart 11.8.89, cuda-nvcc 12.4.131).
 */
const CONDA_CUDA_METAPACKAGES: ReadonlySet<string> = new Set([
  'cuda',
  'cuda-toolkit',
  'cuda-runtime',
  'cuda-compiler',
  'cuda-libraries',
  'cuda-libraries-dev',
]);

/**
 * NVIDIA's split CUDA packages (12.0 on): the meta-packages (`cuda` depends on `cuda-runtime` and `cuda-toolkit` of
 * its own version, conda-forge/cuda-feedstock recipe/meta.yaml) and the toolkit's components, versioned by the CUDA
 * release (`cuda-cccl` 13.0.50) and depending on `cuda-version` of their major.minor (`pin_compatible("cuda-version",
 * max_pin="x.x")`, conda-forge/cuda-cccl-feedstock recipe/meta.yaml). Two of them of different CUDA releases in one
 * environment cannot be solved.
 */
export const CONDA_CUDA_RELEASE_PACKAGES: ReadonlySet<string> = new Set([
  'cuda-version',
  ...CONDA_CUDA_METAPACKAGES,
  'cuda-cudart',
  'cuda-cudart-dev',
  'cuda-nvcc',
  'cuda-nvrtc',
  'cuda-nvvm',
  'cuda-crt',
  'cuda-cccl',
  'cuda-cupti',
  'cuda-nvtx',
  'cuda-driver-dev',
  'cuda-profiler-api',
]);

/** conda packages whose version names the CUDA release they are for. */
const CONDA_CUDA_PACKAGES: ReadonlySet<string> = new Set([
  'pytorch-cuda',
  'cudatoolkit',
  ...CONDA_CUDA_RELEASE_PACKAGES,
]);
const NVIDIA_VERSIONED = /^nvidia-cuda-(runtime|nvrtc|cupti|nvcc)(-cu\d{2})?$/;

/** Cheap test that a package can declare a CUDA version at all (most lines of a requirements file cannot). */
const MAY_CLAIM =
  /^(nvidia-|cupy-|cuda|jax|tensorflow|pytorch-cuda|cudatoolkit|onnxruntime-gpu|paddlepaddle-gpu|mxnet-|dgl-|bitsandbytes-cuda|mlx|ctranslate2|faster-whisper)|-cu1\d$/;

/** Makes the claims of one package: kind, CUDA and precision, with the package's file, span and subject. */
type ClaimOf = (
  kind: ClaimKind,
  cuda: string,
  precision: 'minor' | 'major',
  more?: Pick<CudaClaim, 'rewrite' | 'record' | 'subject' | 'machines'>,
) => CudaClaim;

/** One package being read for claims: its file, what the findings call it, and how to make one of its claims. */
interface PackageSite {
  readonly file: ParsedFile;
  readonly pkg: PackageFact;
  readonly subject: string;
  readonly claimOf: ClaimOf;
}

/** Appends the claims `pkg` makes to `claims`. */
function packageClaims(file: ParsedFile, pkg: PackageFact, kb: KnowledgeBase, claims: CudaClaim[]): CudaClaim[] {
  if (
    pkg.ecosystem === 'pip' &&
    !pkg.localLabel &&
    !pkg.url &&
    !MAY_CLAIM.test(pkg.name) &&
    !pkg.specifier.includes('+')
  )
    return claims;
  // A conda package claims only through these four (condaClaims): a build string without a CUDA label says nothing.
  if (
    pkg.ecosystem === 'conda' &&
    !(pkg.localLabel && pkg.build) &&
    !pkg.channel &&
    !CONDA_CUDA_PACKAGES.has(pkg.name) &&
    !CUDA_BINDINGS.has(pkg.name) &&
    !CUDA_SELECTOR.test(pkg.name)
  )
    return claims;
  // An apt package claims by its name (`cuda-nvcc-12-4`, `libcudnn8`) or a version label (aptClaims); most do neither.
  if (pkg.ecosystem === 'apt' && !pkg.localLabel && !cudaFromAptName(pkg.name)) return claims;
  const subject = withAlternative(file, pkg.context, describePackage(pkg));
  const claimOf: ClaimOf = (kind, cuda, precision, more) =>
    cudaClaim({
      kind,
      file,
      context: pkg.context,
      package: pkg,
      span: pkg.span,
      cuda,
      precision,
      subject: more?.subject ?? subject,
      rewrite: more?.rewrite,
      record: more?.record,
      machines: more?.machines,
    });
  const site: PackageSite = { file, pkg, subject, claimOf };
  if (pkg.ecosystem === 'conda') condaClaims(site, claims);
  else if (pkg.ecosystem === 'apt') aptClaims(site, claims);
  else pipClaims(site, kb, claims);
  return claims;
}

/**
 * A conda pin of a CUDA package (`cudatoolkit=11.8`, `pytorch-cuda=12.1`), a CUDA build string, a `label/cuda-X.Y`
 * channel.
 */
/**
 * The pytorch channel's CUDA selectors of PyTorch 0.3–1.0 (`conda install pytorch cuda92 -c pytorch`): empty
 * packages that only track the feature of the same name, which the CUDA 9.2 builds carried (pytorch/builder
 * conda/cuda92/meta.yaml: `track_features: - cuda92`). Each names one CUDA release.
 */
export const CUDA_SELECTOR = /^cuda(75|80|90|91|92|100)$/;

function condaClaims({ file, pkg, subject, claimOf }: PackageSite, claims: CudaClaim[]): void {
  if (CUDA_BINDINGS.has(pkg.name)) {
    const major = bindingsMajor(pkg);
    if (major) claims.push(claimOf('conda', major, 'major', { subject }));
  }
  const selector = CUDA_SELECTOR.exec(pkg.name);
  if (selector) {
    claims.push(claimOf('conda', cudaFromDigits(selector[1]!)!.cuda, 'minor', { subject }));
  }
  const version =
    pkg.exact ??
    (pkg.clauses.length === 1 && pkg.clauses[0]!.operator === '='
      ? pkg.clauses[0]!.version.replace(/\.\*$/, '')
      : undefined);
  if (CONDA_CUDA_PACKAGES.has(pkg.name) && version) {
    const minor = cudaOfVersion(version);
    const clause = pkg.clauses[0];
    if (minor && clause) {
      claims.push(
        claimOf('conda', minor, 'minor', {
          subject,
          rewrite: (target) => {
            const t = cudaMajorMinor(target);
            // A build string names one build of one version (`cuda-cccl=12.2.140=0`): no other version has it.
            if (!t || pkg.build) return undefined;
            const replacement =
              pkg.name === 'pytorch-cuda' || pkg.name === 'cuda-version' || version.split('.').length <= 2
                ? t
                : CONDA_CUDA_METAPACKAGES.has(pkg.name)
                  ? `${t}.0`
                  : // A component's version is its own (cuda-cccl 11.8.89, cuda-profiler-api 11.8.86; cudatoolkit
                    // 10.2.89): any of the release's, which conda's `X.Y.*` matches, never a made-up `X.Y.0`.
                    `${t}.*`;
            return one(replaceExact(file, clause.versionSpan, clause.version, replacement));
          },
        }),
      );
    }
  }
  if (pkg.localLabel && pkg.build) {
    const offset = pkg.build.toLowerCase().indexOf(pkg.localLabel);
    const found = cudaFromLabel(pkg.localLabel, Math.max(0, offset));
    // conda-forge's CUDA 12+ builds run with any cuda-version of their major from the one they were built with
    // (`jaxlib …cuda120…` depends on `cuda-version >=12.0,<13`): their build string says the major.
    const forge = pkg.channel === 'conda-forge' && found && Number.parseInt(found.cuda, 10) >= 12;
    if (found)
      claims.push(
        forge
          ? claimOf('conda-build', String(Number.parseInt(found.cuda, 10)), 'major')
          : claimOf('conda-build', found.cuda, found.precision),
      );
  }
  if (pkg.channel) {
    const label = cudaFromCondaLabel(pkg.channel);
    if (label) claims.push(claimOf('conda-channel', label, 'minor'));
  }
}

/** An apt package named for a CUDA version (`cuda-toolkit-12-4`) or with a `+cudaX.Y` version suffix. */
function aptClaims({ file, pkg, subject, claimOf }: PackageSite, claims: CudaClaim[]): void {
  const byName = cudaFromAptName(pkg.name);
  // cuDNN 9 is published for CUDA 11 (to 9.10), 12 and 13 under one name per major (`cudnn9-cuda-12`): a name
  // written as is moves to the target's major.
  const written = file.source.text.slice(pkg.nameSpan.start, pkg.nameSpan.end) === pkg.rawName && !pkg.via;
  const rewrite =
    // Only a name without a version: a pinned cuDNN release (`=9.1.0.70-1`) may have no build for the other major.
    byName?.precision === 'major' && written && !pkg.specifier
      ? (target: string): TextEdit[] | undefined => {
          const major = target.split('.')[0]!;
          if (!['12', '13'].includes(major)) return undefined;
          const [from, to] = byName.range!;
          return [{ path: file.path, range: [pkg.nameSpan.start + from, pkg.nameSpan.start + to], text: major }];
        }
      : undefined;
  if (byName)
    claims.push(
      claimOf('apt', byName.cuda, byName.precision, rewrite ? { rewrite, subject, record: undefined } : undefined),
    );
  const suffix = pkg.localLabel ? cudaFromLabel(pkg.localLabel) : undefined;
  if (suffix) claims.push(claimOf('apt', suffix.cuda, suffix.precision));
}

/**
 * A pip requirement: a wheel URL or `+cuXYZ` label, a CUDA-named wheel, an extra, or a build whose version says its
 * CUDA.
 */
function pipClaims({ file, pkg, subject, claimOf }: PackageSite, kb: KnowledgeBase, claims: CudaClaim[]): void {
  if (pkg.url) {
    const fromUrl = cudaFromUrl(pkg.url);
    if (fromUrl) {
      claims.push(claimOf('wheel-url', fromUrl.cuda, fromUrl.precision));
      return;
    }
  }
  if (pkg.localLabel && pkg.exact) {
    const plus = pkg.exact.indexOf('+');
    const found = cudaFromLabel(pkg.localLabel, plus + 1);
    const clause = pkg.clauses[0];
    if (found && !pkg.url) {
      claims.push(
        claimOf('wheel-tag', found.cuda, found.precision, {
          subject,
          // Only to a build that exists: torch 2.6.0 has no +cu128, so no rewrite is offered there.
          rewrite: clause
            ? (target: string) =>
                hasBuild(kb, pkg, target)
                  ? one(
                      rewriteLabel(
                        file,
                        { span: clause.versionSpan, value: clause.version },
                        { label: pkg.localLabel!, range: found.range },
                        target,
                      ),
                    )
                  : undefined
            : undefined,
        }),
      );
    } else if (found) {
      claims.push(claimOf('wheel-url', found.cuda, found.precision));
    }
  }
  const byName = cudaFromPythonName(pkg.name);
  if (byName) {
    let cuda = byName.cuda;
    let precision = byName.precision;
    if (NVIDIA_VERSIONED.test(pkg.name) && pkg.exact) {
      const minor = cudaOfVersion(publicVersion(pkg.exact));
      if (minor && minor.startsWith(`${cuda}.`)) {
        cuda = minor;
        precision = 'minor';
      }
    }
    claims.push(claimOf(byName.family === 'cupy' ? 'cupy' : 'nvidia-wheel', cuda, precision));
  } else if (NVIDIA_VERSIONED.test(pkg.name) && pkg.exact) {
    // CUDA 13 toolkit wheels have no suffix; their version is the CUDA version.
    const minor = cudaOfVersion(publicVersion(pkg.exact));
    if (minor) claims.push(claimOf('nvidia-wheel', minor, 'minor'));
  }
  // `jax[cuda12]`, `jax[cuda12_pip]`, `jax[cuda11_cudnn82]`: the CUDA major the extra installs or expects. The
  // `*_local` / `*-local` extras use the image's CUDA and bring none of their own: they claim nothing.
  const jaxExtra =
    pkg.name === 'jax' || pkg.name === 'jaxlib'
      ? pkg.extras.find((item) => /^cuda1\d/.test(item) && !/[-_]local$/.test(item))
      : undefined;
  if (jaxExtra) claims.push(claimOf('jax', jaxExtra.slice(4, 6), 'major'));
  if (pkg.name === 'jaxlib' && pkg.localLabel) {
    const found = /^cuda(\d{2})/.exec(pkg.localLabel);
    if (found) claims.push(claimOf('jax', found[1]!, 'major'));
  }
  // Builds whose CUDA comes with the version (onnxruntime-gpu, paddlepaddle-gpu) or with an extra
  // (tensorflow[and-cuda], jax[cuda]). A plain `tensorflow` pin is a GPU-capable build that uses the CUDA of the
  // machine: it sets no target of its own.
  // Not a wheel from elsewhere (`onnxruntime_gpu-1.18.0-…-linux_aarch64.whl`, a Jetson build from the Jetson Zoo): its
  // CUDA is its builder's, not PyPI's build of that version.
  if (pkg.exact && !byName && !(pkg.url && !PYPI_FILES.test(pkg.url))) {
    const paddlePost = pkg.name === 'paddlepaddle-gpu' ? /\.post(\d+)(\d)$/.exec(publicVersion(pkg.exact)) : undefined;
    if (paddlePost) claims.push(claimOf('library', `${paddlePost[1]}.${paddlePost[2]}`, 'minor'));
    else {
      const row = kb.gpuStackBuild(pkg.name, pkg.exact, pkg.extras);
      if (row)
        claims.push(
          claimOf(
            pkg.name === 'tensorflow' ? 'tensorflow' : pkg.name === 'jax' ? 'jax' : 'library',
            String(row.cudaMajor),
            'major',
            {
              subject: row.through ? `${subject} (through ${row.through})` : subject,
              record: row,
              ...(row.machines ? { machines: row.machines } : {}),
            },
          ),
        );
    }
  }
  // NVIDIA's CUDA packages on PyPI: `cuda-toolkit==12.8.1` (its extras pin the toolkit's own wheels) is that CUDA
  // release; `cuda-bindings` and `cuda-python` share the major.minor of the toolkit they were generated from but
  // run with any toolkit of the major ("cuda.bindings 12.x supports any Toolkit 12.y", NVIDIA's support policy):
  // their major alone.
  if (pkg.exact && pkg.name === 'cuda-toolkit') {
    const minor = cudaOfVersion(publicVersion(pkg.exact));
    if (minor) claims.push(claimOf('nvidia-wheel', minor, 'minor'));
  }
  if (CUDA_BINDINGS.has(pkg.name)) {
    const major = bindingsMajor(pkg);
    if (major) claims.push(claimOf('nvidia-wheel', major, 'major'));
  }
  // A range whose bound carries a CUDA label (Poetry's `^2.0.0+cu118`): the author asks for that CUDA's builds.
  if (!pkg.exact && !pkg.url) {
    const labelled = /\+(cu\d{2,3})(?![\w.])/i.exec(pkg.specifier);
    const found = labelled ? cudaFromLabel(labelled[1]!) : undefined;
    if (found && found.precision === 'minor') claims.push(claimOf('wheel-tag', found.cuda, 'minor'));
  }
  // PyG's extension wheels: `torch-scatter==2.1.2+pt21cu121` is built for torch 2.1 and CUDA 12.1.
  const pyg = pkg.localLabel ? /^pt\d+cu(\d{2,3})$/.exec(pkg.localLabel) : undefined;
  const pygCuda = pyg ? cudaFromDigits(pyg[1]!) : undefined;
  if (pygCuda?.precision === 'minor') claims.push(claimOf('wheel-tag', pygCuda.cuda, 'minor'));
}

/** PyPI's own files (a URL to the wheel pip would take from it): PyPI's build of the version. */
const PYPI_FILES = /^https?:\/\/(?:files\.pythonhosted\.org|pypi\.org|pypi\.python\.org)\//i;

/** NVIDIA's Python bindings of CUDA, versioned by the CUDA major they bind (on PyPI and conda-forge alike). */
const CUDA_BINDINGS: ReadonlySet<string> = new Set(['cuda-bindings', 'cuda-python']);

/**
 * The one CUDA major a `cuda-bindings`/`cuda-python` requirement admits: an exact version's, or a range's that stays
 * in one major (`>=12.9.2,<13.0`, `12.*`, `=12.9`, cudf's environment files). conda-forge's builds depend on the
 * cuda-version of that major (conda-forge/cuda-python-feedstock recipe: `pin_compatible('cuda-version', min_pin='x',
 * max_pin='x')`), and the PyPI wheels bind that major's toolkit.
 */
function bindingsMajor(pkg: PackageFact): string | undefined {
  const majorOf = (version: string) => /^(1[1-9])(?:\.|$|\*)/.exec(version)?.[1];
  if (pkg.exact) return majorOf(publicVersion(pkg.exact));
  let low: number | undefined;
  let high: number | undefined;
  for (const clause of pkg.clauses) {
    const major = Number(majorOf(clause.version));
    if (!major) continue;
    // `<13`, `<13.0`, `<13.0a0` (conda-forge's spelling: below every 13 pre-release) admit nothing of major 13.
    const whole = /^\d+(?:\.0+)*(?:\.\*|a0)?$/.test(clause.version);
    if (clause.operator === '==' || clause.operator === '=' || clause.operator === '~=') {
      low = major;
      high = major;
    } else if (clause.operator === '>=' || clause.operator === '>') low = major;
    else if (clause.operator === '<') high = whole ? major - 1 : major;
    else if (clause.operator === '<=') high = major;
  }
  return low !== undefined && low === high ? String(low) : undefined;
}

/** A version constraint as people write it: no blanks around operators (`>= 2.0` → `>=2.0`). */
export function compactSpec(spec: string): string {
  return spec.trim().replace(/\s*(==|>=|<=|!=|~=|=|<|>|,)\s*/g, '$1');
}

export function describePackage(pkg: PackageFact): string {
  if (pkg.url && !pkg.specifier) return pkg.exact ? `${pkg.rawName} ${pkg.exact}` : pkg.rawName;
  if (pkg.ecosystem === 'conda')
    return `${pkg.channel ? `${pkg.channel}::` : ''}${pkg.rawName}${compactSpec(pkg.specifier)}${pkg.build ? `=${pkg.build}` : ''}`;
  if (pkg.ecosystem === 'apt') return pkg.specifier ? `${pkg.rawName}=${pkg.specifier}` : pkg.rawName;
  return `${pkg.rawName}${pkg.extras.length ? `[${pkg.extras.join(',')}]` : ''}${pkg.specifier}`;
}

/** How two claims relate: same CUDA, same major only, or different majors. Major-only claims compare majors. */
export function compareClaims(a: CudaClaim, b: CudaClaim): 'same' | 'minor' | 'major' {
  const majorA = Number.parseInt(a.cuda, 10);
  const majorB = Number.parseInt(b.cuda, 10);
  if (majorA !== majorB) return 'major';
  if (a.precision === 'major' || b.precision === 'major') return 'same';
  return cudaMajorMinor(a.cuda) === cudaMajorMinor(b.cuda) ? 'same' : 'minor';
}

/** `12.4.1` → `12.4`; a major-only claim stays `13`. */
export function claimCuda(claim: CudaClaim): string {
  return claim.precision === 'major' ? claim.cuda : (cudaMajorMinor(claim.cuda) ?? claim.cuda);
}
