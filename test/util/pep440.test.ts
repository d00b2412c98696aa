import { satisfies } from '@renovatebot/pep440';
import { describe, expect, it } from 'vitest';
import { satisfiesPep440 } from '../../src/util/pep440.js';

describe('satisfiesPep440 (PEP 440 matching, remembered)', () => {
  it('answers as the library does, asked once or again, and says undefined where the library throws', () => {
    const pairs: [string, string][] = [
      ['2.5.1', '>=2.4,<2.6'],
      ['2.6.0', '>=2.4,<2.6'],
      ['2.6.0rc1', '>=2.5'],
      ['1.13.1', '~=1.13.0'],
      ['0.20.1', '==0.20.*'],
    ];
    for (const [version, specifier] of pairs)
      for (let ask = 0; ask < 2; ask++) expect(satisfiesPep440(version, specifier)).toBe(satisfies(version, specifier));
    // The library throws on a version it cannot read (and answers false for a specifier it cannot).
    expect(() => satisfies('not a version', '>=2')).toThrow();
    expect(satisfiesPep440('not a version', '>=2')).toBeUndefined();
    expect(satisfiesPep440('2.5.1', '>>2')).toBe(false);
  });

  it('keeps the answers with and without pre-releases apart', () => {
    expect(satisfies('2.6.0rc1', '>=2.5,<2.7')).toBe(false);
    expect(satisfiesPep440('2.6.0rc1', '>=2.5,<2.7', true)).toBe(true);
    expect(satisfiesPep440('2.6.0rc1', '>=2.5,<2.7')).toBe(false);
  });
});
