/**
 * NVIDIA_REQUIRE_* as the NVIDIA Container Toolkit's legacy path evaluates them, on the cases
 * ../shared/reference/toolkit-require-cuda.md settles from libnvidia-container's and the toolkit's code.
 */
import { describe, expect, it } from 'vitest';
import {
  legacyStart,
  parseBoolTrue,
  parseRequirement,
  poolBrands,
  requirementsOf,
  toolkitHost,
  type Requirement,
} from '../../src/analysis/toolkit.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';

const kb = defaultKnowledgeBase();
const pool = (driver: string, gpus: string[], klass?: 'geforce' | 'data-center' | 'workstation' | 'jetson') => ({
  name: 'p',
  driver,
  gpus,
  labels: {},
  ...(klass ? { class: klass } : {}),
});
const image = (version: string): readonly Requirement[] =>
  requirementsOf(new Map([['NVIDIA_REQUIRE_CUDA', kb.nvidiaCudaRequire(version)!.value]])).requirements;

describe('the legacy path on nvidia/cuda images', () => {
  it('refuses 12.8.1 on a GeForce R535 node: unsatisfied condition cuda>=12.8 (R535 is CUDA 12.2)', () => {
    expect(legacyStart(image('12.8.1'), toolkitHost(pool('535.183.01', ['RTX 3090']), kb)!)).toMatchObject({
      refused: 'unsatisfied condition: cuda>=12.8',
    });
  });

  it('admits it on an A100 on R535: the GPU reports NVIDIA (Unknown), and brand=unknown,driver>=535 holds', () => {
    expect(legacyStart(image('12.8.1'), toolkitHost(pool('535.183.01', ['A100']), kb)!)).toEqual({ starts: true });
  });

  it('refuses 12.6.3 on a GeForce R550 node, and starts 12.4.1 there (its list still named geforce)', () => {
    const geforce = toolkitHost(pool('550.144.03', ['RTX 4090']), kb)!;
    expect(legacyStart(image('12.6.3'), geforce)).toHaveProperty('refused');
    expect(legacyStart(image('12.4.1'), geforce)).toEqual({ starts: true });
  });

  it('starts any image whose cuda term the driver meets', () => {
    expect(legacyStart(image('12.8.1'), toolkitHost(pool('570.172.08', ['RTX 5090']), kb)!)).toEqual({ starts: true });
  });
});

describe('the grammar', () => {
  it('spaces are alternatives, commas conjunctions, names without case, versions by parts', () => {
    const requirement = parseRequirement('NVIDIA_REQUIRE_CUDA', 'CUDA>=12.8 brand=tesla,driver>=535,driver<536');
    expect(requirement).toMatchObject({ terms: [[{ property: 'cuda' }], [{}, {}, {}]] });
    const tesla = { driver: '535.183.01', driverCuda: '12.2', brands: ['Tesla' as const], arches: [] };
    expect(legacyStart([requirement as Requirement], tesla)).toEqual({ starts: true });
    expect(legacyStart([requirement as Requirement], { ...tesla, driver: '536.1' })).toHaveProperty('refused');
  });

  it('an unknown property is an invalid expression', () => {
    expect(parseRequirement('NVIDIA_REQUIRE_X', 'os=linux')).toHaveProperty('invalid');
  });

  it('every NVIDIA_REQUIRE_* but JETPACK must hold; CUDA_VERSION alone gives cuda>=X.Y; the disable switch is ParseBool', () => {
    const env = new Map([
      ['CUDA_VERSION', '12.4.1'],
      ['NVIDIA_REQUIRE_ARCH', 'arch>=8.0'],
      ['NVIDIA_REQUIRE_JETPACK_HOST_MOUNTS', ''],
    ]);
    expect(requirementsOf(env).requirements.map((requirement) => `${requirement.name}=${requirement.value}`)).toEqual([
      'NVIDIA_REQUIRE_ARCH=arch>=8.0',
      'NVIDIA_REQUIRE_CUDA=cuda>=12.4',
    ]);
    expect(['1', 't', 'T', 'TRUE', 'true', 'True'].every(parseBoolTrue)).toBe(true);
    expect(['yes', '', 'on', 'y'].some(parseBoolTrue)).toBe(false);
    expect(requirementsOf(new Map([...env, ['NVIDIA_DISABLE_REQUIRE', 'true']]))).toMatchObject({ disabled: true });
    expect(requirementsOf(new Map([...env, ['NVIDIA_DISABLE_REQUIRES', '1']]))).toMatchObject({ disabled: false });
  });

  it('an arch constraint depends on the GPUs when the pool does not say them', () => {
    const requirement = parseRequirement('NVIDIA_REQUIRE_ARCH', 'arch>=8.0') as Requirement;
    expect(
      legacyStart([requirement], { driver: '550.54.14', driverCuda: '12.4', brands: ['Unknown'], arches: [] }),
    ).toHaveProperty('depends');
    expect(
      legacyStart([requirement], { driver: '550.54.14', driverCuda: '12.4', brands: ['Unknown'], arches: ['7.0'] }),
    ).toHaveProperty('refused');
  });
});

describe('brands', () => {
  it('as libnvidia-container names them, by product line and name', () => {
    expect(poolBrands(pool('550.54.14', ['RTX 4090']), kb)).toEqual(['GeForce']);
    expect(poolBrands(pool('550.54.14', ['H100']), kb)).toEqual(['Tesla', 'Unknown']);
    expect(poolBrands(pool('550.54.14', ['RTX 6000 Ada']), kb)).toEqual(['Unknown']);
    expect(poolBrands(pool('550.54.14', ['Quadro RTX 8000']), kb)).toEqual(['Quadro', 'Unknown']);
    expect(poolBrands(pool('550.54.14', ['TITAN RTX']), kb)).toEqual(['Unknown']);
    expect(poolBrands(pool('550.54.14', []), kb)).toHaveLength(7);
    expect(toolkitHost(pool('540.4.0', ['Jetson AGX Orin'], 'jetson'), kb)).toBeUndefined();
  });
});
