/**
 * GPU architecture lists a build compiles for: `TORCH_CUDA_ARCH_LIST` (PyTorch's extensions: "7.0;8.0;9.0+PTX",
 * space or semicolon separated) and CMake's `CMAKE_CUDA_ARCHITECTURES` / `CUDA_ARCHITECTURES` / `CUDAARCHS`
 * ("70;80-real;90a-virtual"). Pure: which entries a CUDA release can compile, and the text without the others.
 */
import type { EnvFact } from '../parsers/facts.js';
import type { KnowledgeBase, Sourced } from '../knowledge/index.js';
import { cudaMajor } from '../knowledge/versions.js';
import { compareDotted } from '../util/dotted.js';

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
 * The numbered entries of a list; names (`Volta`, `all`, `native`) are left out: they are not one compute capability,
 * and CMake's `all`/`all-major`/`native` follow the compiler.
 */
export function archEntries(value: string, style: 'torch' | 'cmake'): ArchEntry[] {
  const entries: ArchEntry[] = [];
  for (const match of value.matchAll(/[^;\s]+/g)) {
    const text = match[0];
    const cc =
      style === 'torch'
        ? /^(\d+\.\d+)[af]?(\+PTX)?$/i.exec(text)?.[1]
        : (/^(\d+)(\d)[af]?(-real|-virtual)?$/.exec(text) ?? undefined)?.slice(1, 3).join('.');
    if (cc) entries.push({ text, cc, offset: match.index });
  }
  return entries;
}

/** Why a CUDA release cannot compile for a compute capability. */
export interface ArchMiss {
  readonly reason: 'too-new' | 'dropped';
  /** The CUDA that first compiles it (too-new), or the last major that does (dropped). */
  readonly bound: string;
  readonly record: Sourced;
}

/** Why `cuda` cannot compile for `cc`, or undefined where it can or the knowledge base does not say. */
export function archMiss(cc: string, cuda: string, kb: KnowledgeBase): ArchMiss | undefined {
  const row = kb.gpu(cc);
  const major = Number(cudaMajor(cuda));
  if (row) {
    if (compareDotted(cuda, row.minCuda) < 0) return { reason: 'too-new', bound: row.minCuda, record: row.record };
    if (row.lastCudaMajor !== undefined && major > row.lastCudaMajor)
      return { reason: 'dropped', bound: String(row.lastCudaMajor), record: row.record };
    return undefined;
  }
  // A compute capability the table does not list (5.3, 6.2): a CUDA major compiles one contiguous range, so one below
  // the lowest the major still compiles is dropped as well.
  const lowest = kb
    .computeCapabilities()
    .filter((row) => row.lastCudaMajor === undefined || row.lastCudaMajor >= major)
    .sort((a, b) => compareDotted(a.cc, b.cc))[0];
  const below = kb
    .computeCapabilities()
    .filter((row) => row.lastCudaMajor !== undefined && row.lastCudaMajor < major)
    .sort((a, b) => compareDotted(b.cc, a.cc))[0];
  if (lowest && below && compareDotted(cc, lowest.cc) < 0)
    return { reason: 'dropped', bound: String(below.lastCudaMajor), record: below };
  return undefined;
}

/** An architecture list of an ENV or ARG, with its style, or undefined for any other variable. */
export function archList(env: EnvFact): { style: 'torch' | 'cmake'; entries: ArchEntry[] } | undefined {
  const style = ARCH_LIST_VARIABLES[env.key];
  return style ? { style, entries: archEntries(env.value, style) } : undefined;
}

/**
 * The list without `drop`, separators kept as the list writes them; undefined when nothing would remain (a build
 * with no architecture is no fix).
 */
export function withoutEntries(value: string, drop: readonly ArchEntry[]): string | undefined {
  const keep = [...value.matchAll(/[^;\s]+/g)].filter((match) => !drop.some((entry) => entry.offset === match.index));
  if (keep.length === 0) return undefined;
  const separator = value.includes(';') ? ';' : ' ';
  return keep.map((match) => match[0]).join(separator);
}
