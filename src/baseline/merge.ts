/**
 * Layering baselines: the organisation's file, then a repository's file that `_extends` it. Keys the
 * organisation lists under `locked` cannot be weakened by the repository; an attempt is reported and the
 * organisation's value stays. Every effective value remembers where it came from.
 */
import { compareDotted } from '../versions.js';
import type { LoadedBaseline } from './load.js';
import { EMPTY_BASELINE, type Baseline, type RuleSeverity } from './schema.js';

export interface Layer {
  /** Where the file lives, for provenance: `octo-org/.github:cuda-gatekeeper.yml@1a2b3c4`. */
  readonly origin: string;
  readonly loaded: LoadedBaseline;
}

export interface Weakening {
  readonly key: string;
  readonly message: string;
  readonly layer: Layer;
}

export interface MergedBaseline {
  readonly baseline: Baseline;
  /** Top-level key path → origin of the value in effect. */
  readonly provenance: Readonly<Record<string, string>>;
  readonly weakenings: readonly Weakening[];
}

const SEVERITY_RANK: Readonly<Record<RuleSeverity, number>> = { off: 0, notice: 1, warning: 2, error: 3 };
const IMAGES_RANK = { none: 0, tag: 1, digest: 2 } as const;

/** Keys a baseline can lock; `rules` locks every rule's severity. */
export const LOCKABLE = ['cuda.allowed', 'driver.minimum', 'gpus', 'packages', 'pinning.python', 'pinning.images', 'prerelease', 'rules'] as const;

export function mergeBaselines(layers: readonly Layer[]): MergedBaseline {
  let result: Baseline = EMPTY_BASELINE;
  const provenance: Record<string, string> = {};
  const weakenings: Weakening[] = [];
  let locked = new Set<string>();
  for (const layer of layers) {
    const file = layer.loaded.file;
    if (!file) continue;
    const next = layer.loaded.baseline;
    const set = <K extends string>(key: K, apply: () => void, weakens: () => string | undefined): void => {
      if (locked.has(key) || (key.startsWith('rules.') && locked.has('rules'))) {
        const why = weakens();
        if (why) {
          weakenings.push({ key, message: `${key} is locked by ${provenance[key] ?? provenance[key.split('.')[0]!] ?? 'the organisation'}: ${why}`, layer });
          return;
        }
      }
      apply();
      provenance[key] = layer.origin;
    };
    if (file.cuda?.allowed) set('cuda.allowed', () => (result = { ...result, cuda: { allowed: next.cuda.allowed! } }), () => subsetProblem(next.cuda.allowed!, result.cuda.allowed, 'CUDA versions'));
    if (file.driver?.forwardCompat !== undefined) set('driver.forwardCompat', () => (result = { ...result, driver: { ...result.driver, forwardCompat: next.driver.forwardCompat! } }), () => (result.driver.forwardCompat === false && next.driver.forwardCompat ? 'forward compatibility cannot be assumed for a fleet the organisation says is not data-center' : undefined));
    if (file.driver?.minimum) set('driver.minimum', () => (result = { ...result, driver: { ...result.driver, minimum: next.driver.minimum! } }), () => (result.driver.minimum && compareDotted(next.driver.minimum!, result.driver.minimum) > 0 ? `a newer fleet driver (${next.driver.minimum}) than ${result.driver.minimum} hides driver problems` : undefined));
    if (file.gpus) set('gpus', () => (result = { ...result, gpus: next.gpus }), () => {
      const missing = result.gpus.filter((gpu) => !next.gpus.includes(gpu));
      return missing.length ? `it drops ${missing.join(', ')} from the fleet` : undefined;
    });
    if (file.packages) {
      for (const [name, versions] of Object.entries(next.packages)) {
        set(`packages.${name}`, () => (result = { ...result, packages: { ...result.packages, [name]: versions } }), () => (locked.has('packages') ? subsetProblem(versions, result.packages[name], `${name} versions`) : undefined));
      }
    }
    if (file.pinning?.python) set('pinning.python', () => (result = { ...result, pinning: { ...result.pinning, python: next.pinning.python } }), () => (result.pinning.python === 'exact' && next.pinning.python !== 'exact' ? 'exact pinning cannot be turned off' : undefined));
    if (file.pinning?.images) set('pinning.images', () => (result = { ...result, pinning: { ...result.pinning, images: next.pinning.images } }), () => (IMAGES_RANK[next.pinning.images] < IMAGES_RANK[result.pinning.images] ? `"${next.pinning.images}" is weaker than "${result.pinning.images}"` : undefined));
    if (file.pinning?.packages) result = { ...result, pinning: { ...result.pinning, packages: [...new Set([...result.pinning.packages, ...next.pinning.packages])] } };
    if (file.prerelease) set('prerelease', () => (result = { ...result, prerelease: next.prerelease }), () => (result.prerelease === 'forbid' && next.prerelease === 'allow' ? 'pre-releases cannot be allowed' : undefined));
    for (const [id, severity] of Object.entries(next.rules)) {
      set(`rules.${id}`, () => (result = { ...result, rules: { ...result.rules, [id]: severity } }), () => {
        const current = result.rules[id];
        return current !== undefined ? (SEVERITY_RANK[severity] < SEVERITY_RANK[current] ? `severity ${severity} is lower than ${current}` : undefined) : severity === 'off' || severity === 'notice' ? `rule ${id} cannot be lowered to ${severity}` : undefined;
      });
    }
    if (next.waivers.length) result = { ...result, waivers: [...result.waivers, ...next.waivers.map((waiver) => ({ ...waiver, file: layer.loaded.source.path }))] };
    if (file.migration?.pullRequests !== undefined) result = { ...result, migration: { pullRequests: next.migration.pullRequests } };
    if (file.sweep?.issues !== undefined) result = { ...result, sweep: { issues: next.sweep.issues } };
    if (file.files) result = { ...result, files: { include: [...new Set([...result.files.include, ...next.files.include])], exclude: [...new Set([...result.files.exclude, ...next.files.exclude])] } };
    locked = new Set([...locked, ...next.locked]);
    if (next.locked.length) result = { ...result, locked: [...locked] };
  }
  return { baseline: result, provenance, weakenings };
}

function subsetProblem(next: readonly string[], current: readonly string[] | undefined, what: string): string | undefined {
  if (!current) return undefined;
  const extra = next.filter((value) => !current.includes(value));
  return extra.length ? `it adds ${what} ${extra.join(', ')}` : undefined;
}
