/**
 * conda's version specs as match-spec reads them (conda's models/version.py; docs.conda.io "Package match
 * specifications").
 */
import { describe, expect, it } from 'vitest';
import { compareCondaVersions, condaAdmits, parseCondaVersionSpec } from '../../src/analysis/conda-versions.js';

const admits = (spec: string, version: string, bare: 'exact' | 'fuzzy' = 'exact') =>
  condaAdmits(parseCondaVersionSpec(spec, bare)!, version);

describe('conda version specs', () => {
  it('orders versions as VersionOrder does', () => {
    expect(compareCondaVersions('2.1.0a0', '2.1.0')).toBeLessThan(0);
    expect(compareCondaVersions('1.9', '1.9.0')).toBe(0);
    expect(compareCondaVersions('1.10.0', '1.9.1')).toBeGreaterThan(0);
    expect(compareCondaVersions('1.0.post1', '1.0')).toBeGreaterThan(0);
    // conda's documented order (docs.conda.io, "Package match specifications" / VersionOrder):
    const documented = ['1.1dev1', '1.1a1', '1.1.0dev1', '1.1.a1', '1.1.0rc1', '1.1.0'];
    for (let i = 1; i < documented.length; i++)
      expect(compareCondaVersions(documented[i - 1]!, documented[i]!), documented[i]).toBeLessThan(0);
    expect(compareCondaVersions('1.1.0dev1', '1.1.dev1')).toBe(0);
    expect(compareCondaVersions('1.1.0', '1.1')).toBe(0);
  });

  it.each([
    ['=1.9', '1.9.1', true],
    ['=1.9', '1.10.0', false],
    ['1.12.*', '1.12.1', true],
    ['==1.12.*', '1.13.0', false],
    ['==1.9', '1.9.0', true],
    ['==1.9', '1.9.1', false],
    ['1.9.0', '1.9.0', true],
    ['>=1.10,<1.11', '1.10.2', true],
    ['>=1.10,<1.11', '1.11.0', false],
    ['>=2.0.0,<2.1.0a0', '2.0.1', true],
    ['>=2.0.0,<2.1.0a0', '2.1.0', false],
    ['1.9|1.10', '1.10.1', false],
    ['=1.9|=1.10', '1.10.1', true],
    ['!=2.0.0', '2.0.1', true],
    ['~=1.9.0', '1.9.3', true],
    ['~=1.9.0', '1.10.0', false],
  ])('%s admits %s: %s', (spec, version, expected) => expect(admits(spec, version)).toBe(expected));

  it('a bare version is fuzzy where conda reads it so (name=1.9 in a file, MatchSpec("pytorch 1.9*"))', () => {
    expect(admits('1.9', '1.9.1', 'fuzzy')).toBe(true);
    expect(admits('1.9', '1.9.1', 'exact')).toBe(false);
  });

  it('reads nothing it cannot', () => {
    expect(parseCondaVersionSpec('')).toBeUndefined();
    expect(parseCondaVersionSpec('>=1.*')).toBeUndefined();
    expect(parseCondaVersionSpec('1.9 py39')).toBeUndefined();
  });
});
