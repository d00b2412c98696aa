/**
 * Organisation locks (issue 16), generated over every policy key of the baseline schema and every lock path that
 * covers it: a repository value that loosens a locked key is reported and has no effect; one that tightens it
 * applies. Plus waivers that would get round a lock, and the App's path (positions in the repository file).
 */
import { describe, expect, it } from 'vitest';
import { loadBaseline } from '../../src/baseline/load.js';
import { isLocked, LOCKABLE, mergeBaselines, POLICY_KEYS, type Layer } from '../../src/baseline/merge.js';
import { BaselineFile, type Baseline } from '../../src/baseline/schema.js';
import { RULE_DEFAULTS, RULE_IDS } from '../../rules/index.js';

interface Sample {
  /** The organisation's value, as YAML under the key. */
  readonly org: string;
  /** Repository values that loosen it (none: the key can only be added to). */
  readonly loose: readonly string[];
  readonly tight: string;
  readonly get: (baseline: Baseline) => unknown;
}

const SAMPLES: Readonly<Record<string, Sample>> = {
  'cuda.allowed': {
    org: 'cuda: { allowed: ["12.4", "12.6"] }',
    loose: ['cuda: { allowed: ["12.4", "12.8"] }'],
    tight: 'cuda: { allowed: ["12.4"] }',
    get: (b) => b.cuda.allowed,
  },
  'driver.minimum': {
    org: 'driver: { minimum: "550.54.14" }',
    loose: ['driver: { minimum: "570.86.10" }'],
    tight: 'driver: { minimum: "535.104.05" }',
    get: (b) => b.driver.minimum,
  },
  'driver.forwardCompat': {
    org: 'driver: { forwardCompat: false }',
    loose: ['driver: { forwardCompat: true }'],
    tight: 'driver: { forwardCompat: false }',
    get: (b) => b.driver.forwardCompat,
  },
  gpus: {
    org: 'gpus: [A100, H100]',
    loose: ['gpus: [A100]', 'gpus: []'],
    tight: 'gpus: [A100, H100, L4]',
    get: (b) => b.gpus,
  },
  'fleet.pools': {
    org: 'fleet: { pools: [{ name: a100, driver: "535.183.01" }, { name: h100, driver: "550.127.05" }] }',
    loose: [
      'fleet: { pools: [{ name: h100, driver: "550.127.05" }] }',
      'fleet: { pools: [{ name: a100, driver: "570.172.08" }, { name: h100, driver: "550.127.05" }] }',
    ],
    tight:
      'fleet: { pools: [{ name: a100, driver: "535.104.05" }, { name: h100, driver: "550.127.05" }, { name: l4, driver: "550.127.05" }] }',
    get: (b) => b.pools,
  },
  'pinning.python': {
    org: 'pinning: { python: exact }',
    loose: ['pinning: { python: none }'],
    tight: 'pinning: { python: exact }',
    get: (b) => b.pinning.python,
  },
  'pinning.images': {
    org: 'pinning: { images: digest }',
    loose: ['pinning: { images: tag }', 'pinning: { images: none }'],
    tight: 'pinning: { images: digest }',
    get: (b) => b.pinning.images,
  },
  'pinning.packages': {
    org: 'pinning: { packages: [xformers] }',
    loose: [],
    tight: 'pinning: { packages: [triton] }',
    get: (b) => b.pinning.packages.includes('triton'),
  },
  prerelease: {
    org: 'prerelease: forbid',
    loose: ['prerelease: allow'],
    tight: 'prerelease: forbid',
    get: (b) => b.prerelease,
  },
  unchecked: {
    org: 'unchecked: fail',
    loose: ['unchecked: neutral'],
    tight: 'unchecked: fail',
    get: (b) => b.unchecked,
  },
  // Which Dockerfile builds an image is not a policy: a repository adds its own images, whatever is locked.
  images: {
    org: 'images: { ghcr.io/org/base: docker/base/Dockerfile }',
    loose: [],
    tight: 'images: { ghcr.io/org/trainer: trainer/Dockerfile }',
    get: (b) => b.images['ghcr.io/org/trainer'],
  },
  'files.include': {
    org: 'files: { include: ["ci/*.yml"] }',
    loose: [],
    tight: 'files: { include: ["env/*.yml"] }',
    get: (b) => b.files.include.includes('env/*.yml'),
  },
  'registries.lookup': {
    org: 'registries: { lookup: true }',
    loose: ['registries: { lookup: false }'],
    tight: 'registries: { lookup: true }',
    get: (b) => b.registries.lookup,
  },
  'files.exclude': {
    org: 'files: { exclude: [] }',
    loose: ['files: { exclude: ["docker/**"] }'],
    tight: 'files: { exclude: [] }',
    get: (b) => b.files.exclude,
  },
  'packages.torch': {
    org: 'packages: { torch: ["2.6.0", "2.7.1"] }',
    loose: ['packages: { torch: ["2.5.1"] }', 'packages: { torch: ["2.7.1", ">=2.0"] }'],
    tight: 'packages: { torch: ["2.7.1"] }',
    get: (b) => b.packages.torch,
  },
  // The organisation names no rule: a locked rule may not go below its own default severity.
  'rules.cuda-not-allowed': {
    org: 'rules: {}',
    loose: ['rules: { cuda-not-allowed: warning }', 'rules: { cuda-not-allowed: off }'],
    tight: 'rules: { cuda-not-allowed: error }',
    get: (b) => b.rules['cuda-not-allowed'],
  },
  'rules.index-url': {
    org: 'rules: { index-url: warning }',
    loose: ['rules: { index-url: notice }'],
    tight: 'rules: { index-url: error }',
    get: (b) => b.rules['index-url'],
  },
};

/** The lock paths that cover a key: the key and every section above it. */
function coveringLocks(path: string): string[] {
  const parts = path.split('.');
  return parts
    .map((_, i) => parts.slice(0, i + 1).join('.'))
    .filter((lock) => LOCKABLE.includes(lock) || /^(packages|rules)\.[^.]+$/.test(lock));
}

function layer(origin: string, text: string): Layer {
  const loaded = loadBaseline(`${origin}.yml`, text, RULE_IDS);
  expect(loaded.problems, text).toEqual([]);
  return { origin, loaded };
}

function merge(org: string, repo: string) {
  return mergeBaselines([layer('org', org), layer('repo', repo)], RULE_DEFAULTS);
}

describe('every policy key of the schema has a lock model', () => {
  it('lists each leaf key of BaselineFile', () => {
    const leaves: string[] = [];
    for (const [key, value] of Object.entries(BaselineFile.shape)) {
      if (['_extends', 'waivers', 'migration', 'sweep', 'locked'].includes(key)) continue;
      // registries.credentials is not layered: only the organisation's file may name it (tested below).
      const inner = (value as { unwrap?: () => unknown }).unwrap?.() as { shape?: Record<string, unknown> } | undefined;
      if (inner?.shape) for (const child of Object.keys(inner.shape)) leaves.push(`${key}.${child}`);
      else leaves.push(key);
    }
    const modelled = [...POLICY_KEYS.map((spec) => spec.path), 'packages', 'rules'];
    expect(leaves.filter((leaf) => !modelled.includes(leaf) && leaf !== 'registries.credentials')).toEqual([]);
    for (const spec of POLICY_KEYS) expect(SAMPLES[spec.path], spec.path).toBeDefined();
  });
});

describe.each(Object.entries(SAMPLES))('%s', (path, sample) => {
  for (const lock of coveringLocks(path)) {
    for (const loose of sample.loose) {
      it(`locked as "${lock}": ${loose} is reported and has no effect`, () => {
        const orgValue = merge(`${sample.org}\nlocked: ["${lock}"]\n`, '{}').baseline;
        const merged = merge(`${sample.org}\nlocked: ["${lock}"]\n`, loose);
        expect(merged.weakenings.map((weakening) => weakening.key)).toEqual([path]);
        expect(merged.weakenings[0]!.message).toContain(`${path} is locked by org`);
        expect(sample.get(merged.baseline)).toEqual(sample.get(orgValue));
      });
    }
    it(`locked as "${lock}": ${sample.tight} applies`, () => {
      const merged = merge(`${sample.org}\nlocked: ["${lock}"]\n`, sample.tight);
      expect(merged.weakenings).toEqual([]);
      expect(sample.get(merged.baseline)).toEqual(sample.get(merge('{}', sample.tight).baseline));
    });
  }
  if (sample.loose.length) {
    it('unlocked, the repository value applies', () => {
      const merged = merge(sample.org, sample.loose[0]!);
      expect(merged.weakenings).toEqual([]);
      expect(sample.get(merged.baseline)).toEqual(sample.get(merge('{}', sample.loose[0]!).baseline));
    });
  }
});

describe('waivers cannot get round a lock', () => {
  const waiver = (rule: string) =>
    `waivers:\n  - { rule: ${rule}, repo: "*", reason: r, owner: o, expires: 2099-01-01 }\n`;
  it.each([
    ['cuda.allowed', 'cuda-not-allowed'],
    ['cuda', 'cuda-not-allowed'],
    ['packages', 'package-not-allowed'],
    ['driver', 'driver-floor'],
    ['pinning', 'exact-pin'],
    ['rules', 'companion-mismatch'],
    ['rules.wheel-missing', 'wheel-missing'],
  ])('a repository waiver of a rule behind "%s" (%s) is reported and dropped', (lock, rule) => {
    const merged = merge(`locked: ["${lock}"]\n`, waiver(rule));
    expect(merged.weakenings).toEqual([
      expect.objectContaining({
        at: ['waivers', 0],
        message: expect.stringContaining('such waivers belong in the organisation baseline'),
      }),
    ]);
    expect(merged.baseline.waivers).toEqual([]);
  });

  it('the organisation file may waive a locked rule, and a repository may waive an unlocked one', () => {
    expect(merge(`locked: [cuda]\n${waiver('cuda-not-allowed')}`, '{}').baseline.waivers).toHaveLength(1);
    expect(merge('locked: [cuda]\n', waiver('companion-mismatch')).baseline.waivers).toHaveLength(1);
  });
});

describe('lock names', () => {
  it('an unknown lock path is reported at its position', () => {
    const merged = merge('locked: [cuda.allowd]\n', '{}');
    expect(merged.weakenings).toEqual([
      expect.objectContaining({
        at: ['locked', 0],
        message: expect.stringContaining('"cuda.allowd" is not a key that can be locked'),
      }),
    ]);
  });
  it('a section covers its keys', () => {
    expect(isLocked(new Set(['pinning']), 'pinning.images')).toBe(true);
    expect(isLocked(new Set(['pinning.python']), 'pinning.images')).toBe(false);
    expect(isLocked(new Set(['rules']), 'rules.exact-pin')).toBe(true);
  });
});

describe('registries.credentials', () => {
  const credentials =
    'registries: { credentials: { registry.example.com: { username: REGISTRY_USER, password: REGISTRY_TOKEN } } }';

  it("is read from the organisation's baseline", () => {
    const merged = mergeBaselines([{ ...layer('org', credentials), organisation: true }], RULE_DEFAULTS);
    expect(merged.baseline.registries.credentials).toEqual({
      'registry.example.com': { username: 'REGISTRY_USER', password: 'REGISTRY_TOKEN' },
    });
  });

  it("is refused from a repository's file, which cannot name where the App sends registry credentials", () => {
    const merged = mergeBaselines(
      [
        { ...layer('org', '{}'), organisation: true },
        layer('repo', credentials.replace('registry.example.com', 'evil.example')),
      ],
      RULE_DEFAULTS,
    );
    expect(merged.baseline.registries.credentials).toEqual({});
    expect(merged.weakenings.map((weakening) => weakening.key)).toEqual(['registries.credentials']);
  });
});
