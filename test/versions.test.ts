import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareDotted } from '../src/util/dotted.js';

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
    const part = fc.oneof(fc.integer({ min: 0, max: 999 }).map(String), fc.constantFrom('', '0', '00', '05', 'rc1', '1a', ' 3', '-2', '+1', 'x'));
    const version = fc.array(part, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('.'));
    fc.assert(
      fc.property(version, version, (a, b) => compareDotted(a, b) === reference(a, b)),
      { numRuns: 20_000 },
    );
  });
});
