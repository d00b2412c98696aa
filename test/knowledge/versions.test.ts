import fc from 'fast-check';
import { assertProperty } from '../support/property.js';
import { describe, expect, it } from 'vitest';
import { cudaOfName } from '../../src/analysis/claims.js';
import { cudaFromCondaLabel, cudaFromLabel, cudaFromPythonName } from '../../src/analysis/cuda-labels.js';
import { cudaFromDigits, cudaFromTag, cudaOfVersion } from '../../src/knowledge/versions.js';
import { compareDotted } from '../../src/util/dotted.js';

/** The definition compareDotted implements: dotted parts compared as integers, missing and non-numeric parts as 0. */
function reference(a: string, b: string): number {
  const pa = a.split('.');
  const pb = b.split('.');
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = Number.parseInt(pa[i] ?? '0', 10) || 0;
    const y = Number.parseInt(pb[i] ?? '0', 10) || 0;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

describe('compareDotted', () => {
  it('orders driver and CUDA versions numerically', () => {
    expect(compareDotted('550.54.14', '550.54.15')).toBe(-1);
    expect(compareDotted('12.10', '12.9')).toBe(1);
    expect(compareDotted('12.4', '12.4.0')).toBe(0);
    expect(compareDotted('535.104.05', '535.104.5')).toBe(0);
  });

  it('agrees with its definition on any input, including non-numeric parts', () => {
    const part = fc.oneof(
      fc.integer({ min: 0, max: 999 }).map(String),
      fc.constantFrom('', '0', '00', '05', 'rc1', '1a', ' 3', '-2', '+1', 'x'),
    );
    const version = fc.array(part, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('.'));
    assertProperty(
      fc.property(version, version, (a, b) => compareDotted(a, b) === reference(a, b)),
      { numRuns: 20_000 },
    );
  });
});

describe('packed CUDA digits: one reading everywhere', () => {
  it('reads three digits as major and minor, two from 10 up as a major, two below 10 as X.Y', () => {
    expect(cudaFromDigits('121')).toEqual({ cuda: '12.1', precision: 'minor' });
    expect(cudaFromDigits('130')).toEqual({ cuda: '13.0', precision: 'minor' });
    expect(cudaFromDigits('100')).toEqual({ cuda: '10.0', precision: 'minor' });
    expect(cudaFromDigits('12')).toEqual({ cuda: '12', precision: 'major' });
    expect(cudaFromDigits('14')).toEqual({ cuda: '14', precision: 'major' });
    expect(cudaFromDigits('92')).toEqual({ cuda: '9.2', precision: 'minor' });
    expect(cudaFromDigits('80')).toEqual({ cuda: '8.0', precision: 'minor' });
    expect(cudaFromDigits('1')).toBeUndefined();
    expect(cudaFromDigits('1210')).toBeUndefined();
    expect(cudaFromTag('cu121')).toBe('12.1');
    expect(cudaFromTag('cu92')).toBe('9.2');
    // A major-only tag names no release.
    expect(cudaFromTag('cu12')).toBeUndefined();
  });

  it('gives the same CUDA for the same digits in a label, a package name and a selection name', () => {
    assertProperty(
      fc.property(fc.stringMatching(/^(?:[2-9]\d|1\d|1[0-3]\d)$/), (digits) => {
        const expected = cudaFromDigits(digits);
        const label = cudaFromLabel(`cu${digits}`);
        expect(label && { cuda: label.cuda, precision: label.precision }).toEqual(expected);
        expect(cudaOfName(`extra cu${digits}`)).toEqual(expected);
        const mxnet = cudaFromPythonName(`mxnet-cu${digits}`);
        expect(mxnet && { cuda: mxnet.cuda, precision: mxnet.precision }).toEqual(expected);
      }),
    );
  });

  it('reads the CUDA major.minor of a version number', () => {
    expect(cudaOfVersion('12.4.1')).toBe('12.4');
    expect(cudaOfVersion('12.4.127')).toBe('12.4');
    expect(cudaOfVersion('11.8')).toBe('11.8');
    expect(cudaOfVersion('12')).toBeUndefined();
    expect(cudaOfVersion('cu12')).toBeUndefined();
  });
});

describe("NVIDIA's per-release conda label", () => {
  it('reads the CUDA of the label as a channel, a channel URL and a package channel', () => {
    expect(cudaFromCondaLabel('nvidia/label/cuda-12.1.0')).toBe('12.1');
    expect(cudaFromCondaLabel('https://conda.anaconda.org/nvidia/label/cuda-11.8.0')).toBe('11.8');
    expect(cudaFromCondaLabel('https://conda.anaconda.org/nvidia/label/cuda-11.8.0/linux-64')).toBe('11.8');
    expect(cudaFromCondaLabel('nvidia/label/cuda-12.4')).toBe('12.4');
    expect(cudaFromCondaLabel('nvidia/label/cudnn-9')).toBeUndefined();
    expect(cudaFromCondaLabel('nvidia')).toBeUndefined();
  });
});
