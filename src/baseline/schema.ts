import { valid, validRange } from '@renovatebot/pep440';
import { z } from 'zod';
import { imageName } from '../parsers/image-ref.js';

const cudaMinor = z
  .union([z.string(), z.number().transform(String)])
  .pipe(z.string().regex(/^\d{1,2}\.\d{1,2}$/, 'expected a CUDA version as major.minor, e.g. "12.4"'));
const driverVersion = z
  .union([z.string(), z.number().transform(String)])
  .pipe(z.string().regex(/^\d{3}(\.\d{1,3}){0,2}$/, 'expected an NVIDIA driver version, e.g. "550.54.14"'));
export const RuleSeverity = z.enum(['error', 'warning', 'notice', 'off']);
export type RuleSeverity = z.infer<typeof RuleSeverity>;

const RuleSetting = z.union([RuleSeverity, z.strictObject({ severity: RuleSeverity.optional() })]);

/**
 * The name of an environment variable that holds a registry credential. Only names that start with REGISTRY_: a
 * baseline can then never have the App send another of its secrets (its private key, a GitHub token) to a registry.
 */
const credentialVariable = z
  .string()
  .regex(
    /^REGISTRY_[A-Z0-9_]+$/,
    'expected the name of an environment variable that starts with REGISTRY_ (never the credential itself)',
  );

/** Keys of the public baseline format (baseline.yaml, .github/cuda-gatekeeper.yml). Unknown keys are errors. */
export const BaselineFile = z.strictObject({
  _extends: z
    .string()
    .min(1)
    .optional()
    .describe('The organisation config repository this file builds on (".github"); implied when it exists'),
  cuda: z
    .strictObject({
      allowed: z
        .array(cudaMinor)
        .optional()
        .describe('CUDA versions (major.minor, e.g. "12.4") an image or wheel may target'),
    })
    .optional(),
  driver: z
    .strictObject({
      minimum: driverVersion.optional().describe('Oldest NVIDIA Linux driver in the GPU fleet, e.g. "550.54.14"'),
      forwardCompat: z
        .boolean()
        .optional()
        .describe(
          "true: the fleet is data-center GPUs on Linux, where an image's cuda-compat package runs newer CUDA on an older driver branch (forward compatibility); false: it is not",
        ),
    })
    .optional(),
  gpus: z
    .array(z.union([z.string().min(1), z.number()]).transform(String))
    .optional()
    .describe(
      'GPU models ("A100", "H100") or compute capabilities ("8.0") in the fleet (one pool; see fleet for several)',
    ),
  fleet: z
    .strictObject({
      pools: z
        .array(
          z.strictObject({
            name: z.string().min(1).describe('The pool\'s name, e.g. "a100-legacy" (a node pool, a partition)'),
            driver: driverVersion.describe(
              'The NVIDIA Linux driver its nodes run, e.g. "535.183.01" (the oldest, if they differ)',
            ),
            gpus: z
              .array(z.union([z.string().min(1), z.number()]).transform(String))
              .optional()
              .describe('GPU models ("H100") or compute capabilities ("9.0") of its nodes'),
            class: z
              .enum(['data-center', 'workstation', 'geforce', 'jetson'])
              .optional()
              .describe(
                "Its GPUs' product line: forward compatibility (cuda-compat) works on data-center and Jetson GPUs only",
              ),
            nodes: z.number().int().positive().optional().describe('How many nodes it has'),
            runtime: z
              .enum(['legacy', 'cdi'])
              .optional()
              .describe(
                'How its nodes start GPU containers: legacy (docker run --gpus, the nvidia runtime before toolkit 1.18, mode = "legacy") checks the image\'s NVIDIA_REQUIRE_CUDA and refuses what it does not meet; cdi (the nvidia runtime\'s default from 1.18.0, native CDI) never checks it',
              ),
            labels: z
              .record(z.string(), z.string())
              .optional()
              .describe('Node labels that select it (nodeSelector), e.g. { "cloud.google.com/gke-nodepool": "a100" }'),
          }),
        )
        .min(1)
        .describe('The GPU node pools, each with its own driver and GPUs; an image must run on at least one'),
    })
    .optional()
    .describe('The GPU fleet as pools (driver.minimum and gpus are the one-pool shorthand)'),
  images: z
    .record(z.string().min(1), z.string().min(1))
    .optional()
    .describe(
      'Images this repository builds, by name without tag ("ghcr.io/org/trainer"), each with the Dockerfile that builds it (a path from the repository root): a Kubernetes manifest that runs one is judged by that Dockerfile. The key "unknown" (error | warning | notice | off) sets the level of image-unknown instead',
    ),
  registries: z
    .strictObject({
      lookup: z
        .boolean()
        .optional()
        .describe(
          "Read images' configs from their registries: the CLI does with true (as with --online); the App and the Action do unless false",
        ),
      credentials: z
        .record(
          z
            .string()
            .regex(/^[a-z0-9.-]+(:\d+)?$/, 'expected a registry host, e.g. "registry.example.com" or "nvcr.io"'),
          z.strictObject({
            username: credentialVariable.describe('The environment variable that holds the user name'),
            password: credentialVariable.describe('The environment variable that holds the password or token'),
          }),
        )
        .optional()
        .describe(
          'Registries to read private images from (beyond the public ones), each with the environment variables (REGISTRY_…) that hold its credentials; read from the organisation baseline only',
        ),
    })
    .optional()
    .describe('Looking images up in their registries (see README "Images")'),
  packages: z
    .record(
      z.string().min(1),
      z.array(
        z
          .union([z.string(), z.number()])
          .transform(String)
          .refine((version) => valid(version) !== null || validRange(version), {
            error: (issue) =>
              `${JSON.stringify(issue.input)} is neither a PEP 440 version ("2.6.0") nor a specifier (">=2.6,<2.8")`,
          }),
      ),
    )
    .optional()
    .describe('Allowed versions (PEP 440 versions or specifiers) per package'),
  pinning: z
    .strictObject({
      python: z
        .enum(['exact', 'none'])
        .optional()
        .describe('exact: CUDA-relevant Python/conda packages must be pinned to one version'),
      images: z.enum(['tag', 'digest', 'none']).optional().describe('How base images must be pinned'),
      packages: z.array(z.string()).optional().describe('More packages that must be pinned exactly'),
    })
    .optional(),
  prerelease: z.enum(['forbid', 'allow']).optional().describe('forbid: no nightly, rc, dev or /whl/test builds'),
  unchecked: z
    .enum(['fail', 'neutral'])
    .optional()
    .describe(
      'A CUDA-relevant file that could not be checked (too large, over the time budget, not listed by GitHub): fail (default) or neutral (fail-open: branch protection lets neutral through)',
    ),
  rules: z
    .record(z.string(), RuleSetting)
    .optional()
    .describe('Per rule: error | warning | notice | off (or { severity })'),
  waivers: z
    .array(
      z.strictObject({
        rule: z.string().min(1).describe('Rule id the waiver silences'),
        repo: z.string().min(1).describe('Repository ("name" or "owner/name"; "*" for all)'),
        path: z.string().min(1).optional().describe('File path or prefix ending in "/" (default: every file)'),
        reason: z.string().min(1).describe('Why the finding is accepted'),
        owner: z.string().min(1).describe('Who owns the exception'),
        expires: z
          .union([z.string(), z.date().transform((date) => date.toISOString().slice(0, 10))])
          .pipe(z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date, YYYY-MM-DD'))
          .describe('Last day the waiver applies (YYYY-MM-DD)'),
      }),
    )
    .optional()
    .describe('Time-limited exceptions; each needs an owner and an expiry date'),
  migration: z
    .strictObject({
      pullRequests: z
        .boolean()
        .optional()
        .describe(
          'Open one migration pull request per repository whose default branch no longer conforms (off by default)',
        ),
    })
    .optional(),
  files: z
    .strictObject({
      include: z
        .array(z.string().min(1))
        .optional()
        .describe(
          'More files to check, as gitignore-style patterns from the repository root; their kind is read from their content',
        ),
      exclude: z
        .array(z.string().min(1))
        .optional()
        .describe('Files not to check, as gitignore-style patterns from the repository root (added to .gitignore)'),
    })
    .optional(),
  sweep: z
    .strictObject({
      issues: z
        .enum(['none', 'repository', 'dashboard'])
        .optional()
        .describe(
          'Keep a "CUDA compliance" issue per repository, one dashboard issue in the config repository, or none (default)',
        ),
    })
    .optional(),
  /** Dotted key paths a repository may not weaken (organisation baselines). */
  locked: z
    .array(z.string())
    .optional()
    .describe('Keys a repository may not weaken, e.g. ["cuda.allowed", "driver.minimum", "rules"]'),
});
export type BaselineFile = z.infer<typeof BaselineFile>;

/** The effective policy the gate runs with: every key resolved to a value. */
export interface Baseline {
  readonly cuda: { readonly allowed?: readonly string[] };
  readonly driver: { readonly minimum?: string; readonly forwardCompat?: boolean };
  readonly gpus: readonly string[];
  /** The fleet's pools (empty: driver.minimum and gpus describe the one pool, if any). */
  readonly pools: readonly Pool[];
  /** Image name (registry/repository, lower case, no tag) → the repository's Dockerfile that builds it. */
  readonly images: Readonly<Record<string, string>>;
  readonly registries: Registries;
  readonly packages: Readonly<Record<string, readonly string[]>>;
  readonly pinning: {
    readonly python: 'exact' | 'none';
    readonly images: 'tag' | 'digest' | 'none';
    readonly packages: readonly string[];
  };
  readonly prerelease: 'forbid' | 'allow';
  /** What a CUDA-relevant file that could not be checked makes the verdict. */
  readonly unchecked: 'fail' | 'neutral';
  readonly rules: Readonly<Record<string, RuleSeverity>>;
  readonly locked: readonly string[];
  readonly waivers: readonly Waiver[];
  readonly migration: { readonly pullRequests: boolean };
  readonly sweep: { readonly issues: 'none' | 'repository' | 'dashboard' };
  /** gitignore-style patterns: files to check beyond the names we know, and files not to check. */
  readonly files: { readonly include: readonly string[]; readonly exclude: readonly string[] };
}

/** Looking images up: whether (unset: the App and the Action do, the CLI does not), and with which credentials. */
export interface Registries {
  readonly lookup?: boolean;
  /** Registry host → the environment variables that hold its user name and password. */
  readonly credentials: Readonly<Record<string, { readonly username: string; readonly password: string }>>;
}

/** One GPU node pool of the fleet: its driver, GPUs and their product line. */
export interface Pool {
  readonly name: string;
  readonly driver: string;
  readonly gpus: readonly string[];
  readonly class?: 'data-center' | 'workstation' | 'geforce' | 'jetson';
  readonly nodes?: number;
  readonly labels: Readonly<Record<string, string>>;
  /** How its nodes start GPU containers: legacy checks NVIDIA_REQUIRE_*, cdi does not; unset when not said. */
  readonly runtime?: 'legacy' | 'cdi';
}

export interface Waiver {
  readonly rule: string;
  readonly repo: string;
  readonly path?: string;
  readonly reason: string;
  readonly owner: string;
  readonly expires: string;
  /** Index in the file's waivers list (for positions). */
  readonly index: number;
  /** The file the waiver is written in, when it came from a layered (organisation) baseline. */
  readonly file?: string;
}

/** An empty baseline: only the built-in consistency rules apply. */
export const EMPTY_BASELINE: Baseline = {
  cuda: {},
  driver: {},
  gpus: [],
  pools: [],
  images: {},
  registries: { credentials: {} },
  packages: {},
  pinning: { python: 'none', images: 'none', packages: [] },
  prerelease: 'allow',
  unchecked: 'fail',
  rules: {},
  locked: [],
  waivers: [],
  migration: { pullRequests: false },
  sweep: { issues: 'none' },
  files: { include: [], exclude: [] },
};

export function resolveBaseline(file: BaselineFile): Baseline {
  const rules: Record<string, RuleSeverity> = {};
  // `images.unknown: warning` is the level of image-unknown (an image called "unknown" would need a registry).
  const unknownLevel = RuleSeverity.safeParse(file.images?.unknown);
  if (unknownLevel.success) rules['image-unknown'] = unknownLevel.data;
  for (const [id, setting] of Object.entries(file.rules ?? {})) {
    const severity = typeof setting === 'string' ? setting : setting.severity;
    if (severity) rules[id] = severity;
  }
  const packages: Record<string, string[]> = {};
  for (const [name, versions] of Object.entries(file.packages ?? {}))
    packages[name.toLowerCase().replace(/[-_.]+/g, '-')] = versions;
  return {
    cuda: file.cuda?.allowed ? { allowed: file.cuda.allowed } : {},
    driver: {
      ...(file.driver?.minimum ? { minimum: file.driver.minimum } : {}),
      ...(file.driver?.forwardCompat !== undefined ? { forwardCompat: file.driver.forwardCompat } : {}),
    },
    gpus: file.gpus ?? [],
    pools: (file.fleet?.pools ?? []).map((pool) => ({
      name: pool.name,
      driver: pool.driver,
      gpus: pool.gpus ?? [],
      ...(pool.class ? { class: pool.class } : {}),
      ...(pool.nodes !== undefined ? { nodes: pool.nodes } : {}),
      labels: pool.labels ?? {},
      ...(pool.runtime ? { runtime: pool.runtime } : {}),
    })),
    images: Object.fromEntries(
      Object.entries(file.images ?? {})
        .filter(([name]) => !(name === 'unknown' && unknownLevel.success))
        .map(([name, path]) => [imageName(name), path.replace(/^\.\//, '')]),
    ),
    registries: {
      ...(file.registries?.lookup !== undefined ? { lookup: file.registries.lookup } : {}),
      credentials: file.registries?.credentials ?? {},
    },
    packages,
    pinning: {
      python: file.pinning?.python ?? 'none',
      images: file.pinning?.images ?? 'none',
      packages: (file.pinning?.packages ?? []).map((name) => name.toLowerCase().replace(/[-_.]+/g, '-')),
    },
    prerelease: file.prerelease ?? 'allow',
    unchecked: file.unchecked ?? 'fail',
    rules,
    locked: file.locked ?? [],
    waivers: (file.waivers ?? []).map((waiver, index) => ({ ...waiver, index })),
    migration: { pullRequests: file.migration?.pullRequests ?? false },
    sweep: { issues: file.sweep?.issues ?? 'none' },
    files: { include: file.files?.include ?? [], exclude: file.files?.exclude ?? [] },
  };
}
