/** Small, dependency-free helpers for the dotted version numbers of CUDA, drivers and cuDNN. */
import { memoize } from '../util/memo.js';

export interface CudaVersion {
  readonly major: number;
  readonly minor: number;
  readonly patch?: number;
}

/** `12.4.1` → {12,4,1}; `12.4` → {12,4}; `12` → undefined (a CUDA target needs major.minor). */
export const parseCuda: (text: string) => CudaVersion | undefined = memoize((text) => computeParseCuda(text));

function computeParseCuda(text: string): CudaVersion | undefined {
  const match = /^(\d{1,2})\.(\d{1,2})(?:\.(\d{1,3}))?$/.exec(text.trim());
  if (!match) return undefined;
  return {
    major: Number(match[1]),
    minor: Number(match[2]),
    ...(match[3] !== undefined ? { patch: Number(match[3]) } : {}),
  };
}

export function cudaMajorMinor(text: string): string | undefined {
  const parsed = parseCuda(text);
  return parsed ? `${parsed.major}.${parsed.minor}` : undefined;
}

/**
 * The one reading of packed CUDA digits (`cu121`, `cuda118`, `cu92`, `cu12`, `cupy-cuda113`, `mxnet-cu112`):
 * - three digits are the major and one minor digit: `121` → 12.1, `118` → 11.8, `130` → 13.0;
 * - two digits 10–19 are a major alone: `cu12` (flash-attn's, RAPIDS' and NVIDIA's `-cu12` wheels) means any
 *   CUDA 12, and `cu14` would be CUDA 14 (no CUDA 1.x build ever had a tag);
 * - two other digits are a major and a minor: `cu92` → 9.2, `cu80` → 8.0 (PyTorch's and MXNet's tags for CUDA
 *   8.0–9.2, which came before CUDA 10 and the three-digit tags).
 * Anything but two or three digits → undefined. src/analysis/cuda-labels.ts finds the labels in text; this reads
 * their digits.
 */
export function cudaFromDigits(
  digits: string,
): { readonly cuda: string; readonly precision: 'minor' | 'major' } | undefined {
  if (!/^\d{2,3}$/.test(digits)) return undefined;
  if (digits.length === 2 && digits.startsWith('1')) return { cuda: String(Number(digits)), precision: 'major' };
  return { cuda: `${Number(digits.slice(0, -1))}.${digits.slice(-1)}`, precision: 'minor' };
}

/**
 * A wheel tag's CUDA release: `cu121` → `12.1`, `cu118` → `11.8`, `cu92` → `9.2`, `cu130` → `13.0`; a major-only tag
 * (`cu12`) or anything else → undefined.
 */
export function cudaFromTag(tag: string): string | undefined {
  const match = /^cu(\d{2,3})$/i.exec(tag);
  const read = match ? cudaFromDigits(match[1]!) : undefined;
  return read?.precision === 'minor' ? read.cuda : undefined;
}

/** `12.1` → `cu121`. */
export function tagFromCuda(cuda: string): string {
  const parsed = parseCuda(cuda);
  return parsed ? `cu${parsed.major}${parsed.minor}` : `cu${cuda.replace('.', '')}`;
}

export function cudaMajor(cuda: string): number {
  return Number.parseInt(cuda, 10);
}

/** The public release part of a PEP 440 version: `2.3.0+cu121` → `2.3.0`, `2.1.0.post1` kept. */
export function publicVersion(version: string): string {
  const plus = version.indexOf('+');
  return plus < 0 ? version : version.slice(0, plus);
}

/** `2.3.0` → `2.3`. */
export function minorOf(version: string): string {
  return version.split('.').slice(0, 2).join('.');
}

/** The CUDA major.minor a version number names: `12.4.1` and `12.4.127` → `12.4`; `12` or `cu12` → undefined. */
export function cudaOfVersion(version: string): string | undefined {
  return cudaMajorMinor(minorOf(version));
}
