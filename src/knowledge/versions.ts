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
  return { major: Number(match[1]), minor: Number(match[2]), ...(match[3] !== undefined ? { patch: Number(match[3]) } : {}) };
}

export function cudaMajorMinor(text: string): string | undefined {
  const parsed = parseCuda(text);
  return parsed ? `${parsed.major}.${parsed.minor}` : undefined;
}

/** `cu121` → `12.1`, `cu118` → `11.8`, `cu92` → `9.2`, `cu130` → `13.0`; anything else → undefined. */
export function cudaFromTag(tag: string): string | undefined {
  const match = /^cu(\d{2,3})$/i.exec(tag);
  if (!match) return undefined;
  const digits = match[1]!;
  return `${digits.slice(0, -1)}.${digits.slice(-1)}`;
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
