/**
 * Layering baselines: the organisation's file, then a repository's file that `_extends` it. Every effective value
 * remembers where it came from.
 *
 * Locks, defined once here. The organisation lists key paths under `locked`; locking a section (`pinning`,
 * `driver`, `rules`, `packages`) locks every key below it, named in the organisation file or left at its default.
 * Below a locked key a later layer may only tighten: fewer CUDA versions or package versions, an older-or-equal
 * driver minimum, no forward compatibility, more GPUs, stricter pinning, pre-releases forbidden, a rule severity at
 * least the one in effect (the organisation's, or the rule's default), more files included and none excluded. Any
 * attempt to loosen one is reported (a positioned `policy-error`) and the value in effect stays. A waiver in a later
 * layer that silences a rule behind a locked key is reported and has no effect: such waivers belong in the
 * organisation file.
 */
import { compareDotted } from '../util/dotted.js';
import type { LoadedBaseline } from './load.js';
import { EMPTY_BASELINE, type Baseline, type BaselineFile, type RuleSeverity } from './schema.js';
import { ownValue } from '../util/collections.js';

export interface Layer {
  /** Where the file lives, for provenance: `octo-org/.github:cuda-gatekeeper.yml@1a2b3c4`. */
  readonly origin: string;
  readonly loaded: LoadedBaseline;
  /** The commit the file was read at (GitHub), for links to it. */
  readonly commit?: string;
  /** The organisation's baseline (its config repository): the only layer that may name registry credentials. */
  readonly organisation?: boolean;
}

export interface Weakening {
  readonly key: string;
  readonly message: string;
  readonly layer: Layer;
  /** Where in the layer's file (defaults to the key's path). */
  readonly at?: readonly (string | number)[];
}

export interface MergedBaseline {
  readonly baseline: Baseline;
  /** Key path → origin of the value in effect. */
  readonly provenance: Readonly<Record<string, string>>;
  readonly weakenings: readonly Weakening[];
}

const SEVERITY_RANK: Readonly<Record<RuleSeverity, number>> = { off: 0, notice: 1, warning: 2, error: 3 };
const IMAGES_RANK = { none: 0, tag: 1, digest: 2 } as const;

/** A key a layer can set, and what setting it to a looser value means. */
interface KeySpec {
  readonly path: string;
  /** Whether the layer's file sets the key. */
  readonly present: (file: BaselineFile) => boolean;
  readonly apply: (result: Baseline, next: Baseline) => Baseline;
  /** Why `next`'s value is looser than the value in effect, if it is. */
  readonly loosens: (current: Baseline, next: Baseline) => string | undefined;
}

/** Every policy key of the baseline schema (packages.<name> and rules.<id> are expanded per entry). */
export const POLICY_KEYS: readonly KeySpec[] = [
  {
    path: 'cuda.allowed',
    present: (file) => file.cuda?.allowed !== undefined,
    apply: (result, next) => ({ ...result, cuda: { allowed: next.cuda.allowed! } }),
    loosens: (current, next) => addedTo(next.cuda.allowed!, current.cuda.allowed, 'CUDA versions'),
  },
  {
    path: 'driver.minimum',
    present: (file) => file.driver?.minimum !== undefined,
    apply: (result, next) => ({ ...result, driver: { ...result.driver, minimum: next.driver.minimum! } }),
    loosens: (current, next) =>
      current.driver.minimum && compareDotted(next.driver.minimum!, current.driver.minimum) > 0
        ? `a newer fleet driver (${next.driver.minimum}) than ${current.driver.minimum} hides driver problems`
        : undefined,
  },
  {
    path: 'driver.forwardCompat',
    present: (file) => file.driver?.forwardCompat !== undefined,
    apply: (result, next) => ({ ...result, driver: { ...result.driver, forwardCompat: next.driver.forwardCompat! } }),
    loosens: (current, next) =>
      next.driver.forwardCompat && current.driver.forwardCompat !== true
        ? 'assuming forward compatibility (data-center GPUs) lowers driver findings'
        : undefined,
  },
  {
    path: 'gpus',
    present: (file) => file.gpus !== undefined,
    apply: (result, next) => ({ ...result, gpus: next.gpus }),
    loosens: (current, next) => {
      const missing = current.gpus.filter((gpu) => !next.gpus.includes(gpu));
      return missing.length ? `it drops ${missing.join(', ')} from the fleet` : undefined;
    },
  },
  {
    path: 'fleet.pools',
    present: (file) => file.fleet?.pools !== undefined,
    apply: (result, next) => ({ ...result, pools: next.pools }),
    loosens: (current, next) => {
      const missing = current.pools.filter((pool) => !next.pools.some((other) => other.name === pool.name));
      if (missing.length)
        return `it drops the pool${missing.length === 1 ? '' : 's'} ${missing.map((pool) => pool.name).join(', ')} from the fleet`;
      const newer = next.pools.find((pool) => {
        const was = current.pools.find((other) => other.name === pool.name);
        return was !== undefined && compareDotted(pool.driver, was.driver) > 0;
      });
      return newer ? `a newer driver for pool ${newer.name} (${newer.driver}) hides driver problems` : undefined;
    },
  },
  {
    path: 'pinning.python',
    present: (file) => file.pinning?.python !== undefined,
    apply: (result, next) => ({ ...result, pinning: { ...result.pinning, python: next.pinning.python } }),
    loosens: (current, next) =>
      current.pinning.python === 'exact' && next.pinning.python !== 'exact'
        ? 'exact pinning cannot be turned off'
        : undefined,
  },
  {
    path: 'pinning.images',
    present: (file) => file.pinning?.images !== undefined,
    apply: (result, next) => ({ ...result, pinning: { ...result.pinning, images: next.pinning.images } }),
    loosens: (current, next) =>
      IMAGES_RANK[next.pinning.images] < IMAGES_RANK[current.pinning.images]
        ? `"${next.pinning.images}" is weaker than "${current.pinning.images}"`
        : undefined,
  },
  {
    // A later layer adds packages that must be pinned; it cannot take any away.
    path: 'pinning.packages',
    present: (file) => file.pinning?.packages !== undefined,
    apply: (result, next) => ({
      ...result,
      pinning: { ...result.pinning, packages: [...new Set([...result.pinning.packages, ...next.pinning.packages])] },
    }),
    loosens: () => undefined,
  },
  {
    path: 'prerelease',
    present: (file) => file.prerelease !== undefined,
    apply: (result, next) => ({ ...result, prerelease: next.prerelease }),
    loosens: (current, next) =>
      current.prerelease === 'forbid' && next.prerelease === 'allow' ? 'pre-releases cannot be allowed' : undefined,
  },
  {
    path: 'unchecked',
    present: (file) => file.unchecked !== undefined,
    apply: (result, next) => ({ ...result, unchecked: next.unchecked }),
    loosens: (current, next) =>
      current.unchecked === 'fail' && next.unchecked === 'neutral'
        ? 'a file that could not be checked cannot be let through as neutral'
        : undefined,
  },
  {
    // Which Dockerfile builds an image: a later layer adds names and may point one elsewhere (it is not a policy).
    path: 'images',
    present: (file) => file.images !== undefined,
    apply: (result, next) => ({ ...result, images: { ...result.images, ...next.images } }),
    loosens: () => undefined,
  },
  {
    path: 'registries.lookup',
    present: (file) => file.registries?.lookup !== undefined,
    apply: (result, next) => ({ ...result, registries: { ...result.registries, lookup: next.registries.lookup! } }),
    loosens: (current, next) =>
      next.registries.lookup === false && current.registries.lookup !== false
        ? 'turning image lookups off leaves images unread that their registries would describe'
        : undefined,
  },
  {
    path: 'files.include',
    present: (file) => file.files?.include !== undefined,
    apply: (result, next) => ({
      ...result,
      files: { ...result.files, include: [...new Set([...result.files.include, ...next.files.include])] },
    }),
    loosens: () => undefined,
  },
  {
    path: 'files.exclude',
    present: (file) => file.files?.exclude !== undefined,
    apply: (result, next) => ({
      ...result,
      files: { ...result.files, exclude: [...new Set([...result.files.exclude, ...next.files.exclude])] },
    }),
    loosens: (current, next) => addedTo(next.files.exclude, current.files.exclude, 'excluded files'),
  },
];

/** Sections and keys `locked` may name. */
export const LOCKABLE: readonly string[] = [
  'cuda',
  'driver',
  'fleet',
  'pinning',
  'files',
  'packages',
  'rules',
  ...POLICY_KEYS.map((spec) => spec.path),
];

/** Which key a rule's findings enforce: a waiver of the rule gets round a lock of that key. */
const RULE_KEYS: Readonly<Record<string, string>> = {
  'cuda-not-allowed': 'cuda.allowed',
  'package-not-allowed': 'packages',
  'driver-floor': 'driver.minimum',
  'gpu-arch': 'gpus',
  'exact-pin': 'pinning.python',
  'image-pin': 'pinning.images',
  prerelease: 'prerelease',
};

/** Whether `path` or a section above it is locked. */
export function isLocked(locked: ReadonlySet<string>, path: string): boolean {
  const parts = path.split('.');
  for (let i = 1; i <= parts.length; i++) if (locked.has(parts.slice(0, i).join('.'))) return true;
  return false;
}

/**
 * Merge layers, first the organisation's. `ruleDefaults` gives each rule's own severity: a locked rule the
 * organisation file does not name may not go below it.
 */
export function mergeBaselines(
  layers: readonly Layer[],
  ruleDefaults: ReadonlyMap<string, RuleSeverity> = new Map(),
): MergedBaseline {
  let result: Baseline = EMPTY_BASELINE;
  const provenance: Record<string, string> = {};
  const weakenings: Weakening[] = [];
  let locked = new Set<string>();
  const lockedBy = (path: string): string => {
    const parts = path.split('.');
    for (let i = parts.length; i >= 1; i--) {
      const origin = provenance[`locked:${parts.slice(0, i).join('.')}`];
      if (origin) return origin;
    }
    return 'the organisation';
  };
  for (const layer of layers) {
    const file = layer.loaded.file;
    if (!file) continue;
    const next = layer.loaded.baseline;
    const set = (
      path: string,
      apply: () => Baseline,
      loosens: () => string | undefined,
      at?: readonly (string | number)[],
    ): void => {
      if (isLocked(locked, path)) {
        const why = loosens();
        if (why) {
          weakenings.push({
            key: path,
            message: `${path} is locked by ${lockedBy(path)}: ${why}`,
            layer,
            ...(at ? { at } : {}),
          });
          return;
        }
      }
      result = apply();
      provenance[path] = layer.origin;
    };
    for (const spec of POLICY_KEYS) {
      if (spec.present(file))
        set(
          spec.path,
          () => spec.apply(result, next),
          () => spec.loosens(result, next),
        );
    }
    for (const [name, versions] of Object.entries(next.packages)) {
      set(
        `packages.${name}`,
        () => ({ ...result, packages: { ...result.packages, [name]: versions } }),
        () => addedTo(versions, result.packages[name], `${name} versions`),
      );
    }
    for (const [id, severity] of Object.entries(next.rules)) {
      set(
        `rules.${id}`,
        () => ({ ...result, rules: { ...result.rules, [id]: severity } }),
        () => {
          const current = result.rules[id] ?? ruleDefaults.get(id);
          if (current !== undefined)
            return SEVERITY_RANK[severity] < SEVERITY_RANK[current]
              ? `severity ${severity} is lower than ${current}${result.rules[id] === undefined ? ' (its default)' : ''}`
              : undefined;
          return severity === 'off' || severity === 'notice'
            ? `rule ${id} cannot be lowered to ${severity}`
            : undefined;
        },
      );
    }
    const waivers = next.waivers.filter((waiver) => {
      const key = ownValue(RULE_KEYS, waiver.rule);
      const path =
        (key && isLocked(locked, key) ? key : undefined) ??
        (isLocked(locked, `rules.${waiver.rule}`) ? `rules.${waiver.rule}` : undefined);
      if (!path) return true;
      weakenings.push({
        key: path,
        message: `a waiver of ${waiver.rule} gets round ${path}, which is locked by ${lockedBy(path)}: such waivers belong in the organisation baseline`,
        layer,
        at: ['waivers', waiver.index],
      });
      return false;
    });
    if (waivers.length)
      result = {
        ...result,
        waivers: [...result.waivers, ...waivers.map((waiver) => ({ ...waiver, file: layer.loaded.source.path }))],
      };
    if (file.registries?.credentials !== undefined) {
      // Credentials leave the machine: only the organisation's layer may name them, so a repository's own file cannot
      // have the App send the organisation's registry credentials to a host it picks.
      if (layer.organisation)
        result = { ...result, registries: { ...result.registries, credentials: next.registries.credentials } };
      else
        weakenings.push({
          key: 'registries.credentials',
          message:
            "registries.credentials is read from the organisation baseline only: a repository's file cannot name where registry credentials are sent",
          layer,
        });
    }
    if (file.migration?.pullRequests !== undefined)
      result = { ...result, migration: { pullRequests: next.migration.pullRequests } };
    if (file.sweep?.issues !== undefined) result = { ...result, sweep: { issues: next.sweep.issues } };
    next.locked.forEach((path, index) => {
      if (!LOCKABLE.includes(path) && !/^(packages|rules)\.[^.]+$/.test(path)) {
        weakenings.push({
          key: 'locked',
          message: `"${path}" is not a key that can be locked (use ${LOCKABLE.join(', ')}, packages.<name> or rules.<id>)`,
          layer,
          at: ['locked', index],
        });
        return;
      }
      if (!locked.has(path)) provenance[`locked:${path}`] = layer.origin;
      locked.add(path);
    });
    locked = new Set(locked);
    if (next.locked.length) result = { ...result, locked: [...locked] };
  }
  return { baseline: result, provenance, weakenings };
}

function addedTo(next: readonly string[], current: readonly string[] | undefined, what: string): string | undefined {
  if (!current) return undefined;
  const extra = next.filter((value) => !current.includes(value));
  return extra.length ? `it adds ${what} ${extra.join(', ')}` : undefined;
}
