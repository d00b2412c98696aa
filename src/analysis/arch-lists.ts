/**
 * GPU architecture lists a build compiles for: `TORCH_CUDA_ARCH_LIST` (PyTorch's extensions: "7.0;8.0;9.0+PTX",
 * space or semicolon separated) and CMake's `CMAKE_CUDA_ARCHITECTURES` / `CUDA_ARCHITECTURES` / `CUDAARCHS`
 * ("70;80-real;90a-virtual"). Pure: which entries a CUDA release can compile, and the text without the others.
 */
import type { EnvFact } from '../parsers/facts.js';
import { isUnverified, type GpuInfo, type KnowledgeBase, type Sourced } from '../knowledge/index.js';
import { cudaMajor } from '../knowledge/versions.js';
import { compareDotted } from '../util/dotted.js';
import { ownValue } from '../util/collections.js';

/** The variables that hold an architecture list, and how each spells a compute capability. */
export const ARCH_LIST_VARIABLES: Readonly<Record<string, 'torch' | 'cmake'>> = {
  TORCH_CUDA_ARCH_LIST: 'torch',
  CMAKE_CUDA_ARCHITECTURES: 'cmake',
  CUDA_ARCHITECTURES: 'cmake',
  CUDAARCHS: 'cmake',
};

export interface ArchEntry {
  /** As written (`7.0+PTX`, `90a-real`). */
  readonly text: string;
  /** The compute capability (`7.0`, `9.0`). */
  readonly cc: string;
  /** Offset of the entry in the value. */
  readonly offset: number;
}

/**
 * The names PyTorch's extension builder reads in TORCH_CUDA_ARCH_LIST, and the capabilities each stands for
 * (pytorch/pytorch torch/utils/cpp_extension.py, `_get_cuda_arch_flags`: `named_arches`).
 */
const TORCH_NAMED_ARCHES: ReadonlyMap<string, readonly string[]> = new Map([
  ['kepler+tesla', ['3.7']],
  ['kepler', ['3.5+PTX']],
  ['maxwell+tegra', ['5.3']],
  ['maxwell', ['5.0', '5.2+PTX']],
  ['pascal', ['6.0', '6.1+PTX']],
  ['volta+tegra', ['7.2']],
  ['volta', ['7.0+PTX']],
  ['turing', ['7.5+PTX']],
  ['ampere+tegra', ['8.7']],
  ['ampere', ['8.0', '8.6+PTX']],
  ['ada', ['8.9+PTX']],
  ['hopper', ['9.0+PTX']],
]);

/** A TORCH_CUDA_ARCH_LIST entry as PyTorch reads it: a name as the entries it stands for, else itself. */
export function torchArchEntries(entry: string): readonly string[] {
  return TORCH_NAMED_ARCHES.get(entry.toLowerCase()) ?? [entry];
}

/**
 * The entries of a list: numbered ones, and in TORCH_CUDA_ARCH_LIST the names PyTorch expands (`Pascal` is 6.0 and
 * 6.1, each an entry written `Pascal` at the name's offset). Other names (CMake's `all`, `all-major`, `native`) are
 * left out: they follow the compiler.
 */
export function archEntries(value: string, style: 'torch' | 'cmake'): ArchEntry[] {
  const entries: ArchEntry[] = [];
  for (const match of value.matchAll(/[^;\s]+/g)) {
    const text = match[0];
    const named = style === 'torch' ? TORCH_NAMED_ARCHES.get(text.toLowerCase()) : undefined;
    if (named) {
      for (const each of named) entries.push({ text, cc: each.replace('+PTX', ''), offset: match.index });
      continue;
    }
    const cc =
      style === 'torch'
        ? /^(\d+\.\d+)[af]?(\+PTX)?$/i.exec(text)?.[1]
        : (/^(\d+)(\d)[af]?(-real|-virtual)?$/.exec(text) ?? undefined)?.slice(1, 3).join('.');
    if (cc) entries.push({ text, cc, offset: match.index });
  }
  return entries;
}

/**
 * Why a CUDA release cannot compile for a compute capability, or that the knowledge base cannot say: `too-new` (the
 * CUDA that first compiles it is `bound`), `dropped` (the last major that compiles it is `bound`, or at most `bound`
 * where the table does not list the capability and the major's lowest listed one is above it: `exact` false), or
 * `unknown` (a capability the table does not list, inside or above the range the major compiles).
 */
export type ArchMiss =
  | { readonly reason: 'too-new'; readonly bound: string; readonly record: Sourced }
  | {
      readonly reason: 'dropped';
      readonly bound: string;
      readonly exact: boolean;
      /** Where not exact: the lowest capability the major still compiles. */
      readonly lowest?: string;
      readonly record: Sourced;
    }
  | { readonly reason: 'unknown' };

/** Why `cuda` cannot compile for `cc` (or that it is not known), or undefined where it can. */
export function archMiss(cc: string, cuda: string, kb: KnowledgeBase): ArchMiss | undefined {
  const row = kb.gpu(cc);
  const major = Number(cudaMajor(cuda));
  if (row && !isUnverified(row.record)) return rowMiss(row, cuda, major);
  // A CUDA major compiles one contiguous range of capabilities and drops them from the bottom: below a capability the
  // major no longer compiles (a verified row), none is compiled either, and none was compiled by a later major. So a
  // capability the table does not list, or lists unverified, is certainly dropped when such a row is above it.
  const verified = kb.computeCapabilities().filter((known) => !isUnverified(known));
  const above = verified
    .filter(
      (known) => compareDotted(known.cc, cc) > 0 && known.lastCudaMajor !== undefined && known.lastCudaMajor < major,
    )
    .sort((a, b) => compareDotted(a.cc, b.cc))[0];
  if (above) {
    const lowest = verified
      .filter((known) => known.lastCudaMajor === undefined || known.lastCudaMajor >= major)
      .sort((a, b) => compareDotted(a.cc, b.cc))[0];
    return {
      reason: 'dropped',
      bound: String(above.lastCudaMajor),
      exact: false,
      ...(lowest ? { lowest: lowest.cc } : {}),
      record: above,
    };
  }
  return row ? rowMiss(row, cuda, major) : { reason: 'unknown' };
}

/** What a capability's own row says of `cuda`. */
function rowMiss(row: GpuInfo, cuda: string, major: number): ArchMiss | undefined {
  if (compareDotted(cuda, row.minCuda) < 0) return { reason: 'too-new', bound: row.minCuda, record: row.record };
  if (row.lastCudaMajor !== undefined && major > row.lastCudaMajor)
    return { reason: 'dropped', bound: String(row.lastCudaMajor), exact: true, record: row.record };
  return undefined;
}

/** An architecture list of an ENV or ARG, with its style, or undefined for any other variable. */
export function archList(env: EnvFact): { style: 'torch' | 'cmake'; entries: ArchEntry[] } | undefined {
  const style = ownValue(ARCH_LIST_VARIABLES, env.key);
  return style ? { style, entries: archEntries(env.value, style) } : undefined;
}

/**
 * The list without `drop`, separators kept as the list writes them; undefined when nothing would remain (a build
 * with no architecture is no fix), or when a name of `all` (the list's entries) would go with only some of what it
 * stands for.
 */
export function withoutEntries(
  value: string,
  drop: readonly ArchEntry[],
  all: readonly ArchEntry[] = drop,
): string | undefined {
  // A name that stands for several capabilities (`Ampere`: 8.0 and 8.6) is dropped only with all of them.
  if (all.some((entry) => !drop.includes(entry) && drop.some((other) => other.offset === entry.offset)))
    return undefined;
  const keep = [...value.matchAll(/[^;\s]+/g)].filter((match) => !drop.some((entry) => entry.offset === match.index));
  if (keep.length === 0) return undefined;
  const separator = value.includes(';') ? ';' : ' ';
  return keep.map((match) => match[0]).join(separator);
}

/**
 * A file's TORCH_CUDA_ARCH_LIST settings, each value once: `ENV TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST}"` copies
 * the ARG's value (its value's span is the ARG's), so what is said of the list is said once, where it is written
 * (detectron2's docker/Dockerfile).
 */
export function ownArchValues(env: readonly EnvFact[]): EnvFact[] {
  const written = new Set<number>();
  const own: EnvFact[] = [];
  for (const fact of env) {
    if (fact.key !== 'TORCH_CUDA_ARCH_LIST' || written.has(fact.valueSpan.start)) continue;
    written.add(fact.valueSpan.start);
    own.push(fact);
  }
  return own;
}
