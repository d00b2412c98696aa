/** Small, dependency-free helpers for the dotted version numbers of CUDA, drivers and cuDNN. */
import { memoize } from '../util/memo.js';

/** Compare dotted numeric versions (`550.54.14`, `12.4`); missing parts count as 0. Non-numeric parts compare as 0. */
export function compareDotted(a: string, b: string): number {
  if (a === b) return 0;
  const fast = compareDigitsAndDots(a, b);
  if (fast !== undefined) return fast;
  const pa = a.split('.');
  const pb = b.split('.');
  const length = Math.max(pa.length, pb.length);
  for (let i = 0; i < length; i++) {
    const x = Number.parseInt(pa[i] ?? '0', 10) || 0;
    const y = Number.parseInt(pb[i] ?? '0', 10) || 0;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** compareDotted for strings of digits and dots only, without allocating; undefined for anything else. */
function compareDigitsAndDots(a: string, b: string): number | undefined {
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    let x = 0;
    let y = 0;
    for (; i < a.length; i++) {
      const code = a.charCodeAt(i);
      if (code === 46) break;
      if (code < 48 || code > 57) return undefined;
      x = x * 10 + (code - 48);
    }
    for (; j < b.length; j++) {
      const code = b.charCodeAt(j);
      if (code === 46) break;
      if (code < 48 || code > 57) return undefined;
      y = y * 10 + (code - 48);
    }
    if (x !== y) return x < y ? -1 : 1;
    i++;
    j++;
  }
  return 0;
}

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
