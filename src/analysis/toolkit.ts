/**
 * Will the container start? An image's `NVIDIA_REQUIRE_*` variables as the NVIDIA Container Toolkit evaluates them
 * (../shared/reference/toolkit-require-cuda.md has the facts and their sources):
 *
 * - Every variable named `NVIDIA_REQUIRE_*` but `NVIDIA_REQUIRE_JETPACK*` is one requirement, and all must hold; an
 *   image with `CUDA_VERSION` and no `NVIDIA_REQUIRE_CUDA` gets `cuda>=<major.minor>` (CUDA.GetRequirements,
 *   nvidia-container-toolkit internal/config/image/cuda_image.go). `NVIDIA_DISABLE_REQUIRE` turns them off when Go's
 *   strconv.ParseBool reads it as true.
 * - Within one value, space-separated terms are alternatives and a term's comma-separated constraints must all hold
 *   (libnvidia-container src/cli/dsl.c, dsl_evaluate). A constraint is `<property><op><value>` with `cuda` (the
 *   driver's CUDA version: R535 is 12.2), `driver`, `arch` (compute capability) or `brand`, names compared without
 *   case; versions compare part by part, trailing zeros ignored. An unknown property is an invalid expression.
 * - The brand is NVML's, as libnvidia-container names it: Quadro, Tesla, NVS, GRID, GeForce, TITAN, or Unknown for
 *   everything else (an A100 or H100 reports "NVIDIA", so Unknown) (src/driver.c).
 * - Only the legacy path evaluates them (`docker run --gpus`, the nvidia runtime before toolkit 1.18, `mode =
 *   "legacy"`): it refuses with "unsatisfied condition: …". The CDI modes, the nvidia runtime's default from 1.18.0,
 *   never do (NVIDIA/nvidia-container-toolkit#1470).
 *
 * Pure: what the image and the host say in, whether it starts out.
 */
import type { Pool } from '../baseline/schema.js';
import type { KnowledgeBase } from '../knowledge/index.js';

type Property = 'cuda' | 'driver' | 'arch' | 'brand';
type Operator = '=' | '!=' | '<' | '<=' | '>' | '>=';

interface Constraint {
  readonly property: Property;
  readonly operator: Operator;
  readonly value: string;
}

/** One NVIDIA_REQUIRE_* variable: its name, its value, and its terms (alternatives of constraints). */
export interface Requirement {
  readonly name: string;
  readonly value: string;
  readonly terms: readonly (readonly Constraint[])[];
}

/** The brands libnvidia-container reports. */
export type ToolkitBrand = 'Quadro' | 'Tesla' | 'NVS' | 'GRID' | 'GeForce' | 'TITAN' | 'Unknown';

const ALL_BRANDS: readonly ToolkitBrand[] = ['Quadro', 'Tesla', 'NVS', 'GRID', 'GeForce', 'TITAN', 'Unknown'];

/** What a node answers the requirement with: its driver, its driver CUDA, the brands and archs its GPUs may report. */
export interface ToolkitHost {
  readonly driver: string;
  readonly driverCuda: string;
  readonly brands: readonly ToolkitBrand[];
  /** Compute capabilities of its GPUs; empty when not known. */
  readonly arches: readonly string[];
}

/** A requirement's value read as the toolkit reads it, or why it is an invalid expression. */
export function parseRequirement(name: string, value: string): Requirement | { readonly invalid: string } {
  const terms: Constraint[][] = [];
  for (const term of value.split(' ')) {
    if (term === '') continue;
    const constraints: Constraint[] = [];
    for (const piece of term.split(',')) {
      if (piece === '') continue;
      const match = /^([A-Za-z]+)(!=|<=|>=|=|<|>)(.+)$/.exec(piece);
      const property = match?.[1]?.toLowerCase();
      if (!match || !['cuda', 'driver', 'arch', 'brand'].includes(property!))
        return { invalid: `${name}: "${piece}" is not a constraint the toolkit reads (cuda, driver, arch, brand)` };
      constraints.push({ property: property as Property, operator: match[2] as Operator, value: match[3]! });
    }
    if (constraints.length > 0) terms.push(constraints);
  }
  return { name, value, terms };
}

/** Go's strconv.ParseBool: 1, t, T, TRUE, true, True are true; anything else (yes, an empty value) is not. */
export function parseBoolTrue(value: string): boolean {
  return ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value);
}

/**
 * The requirements an image's environment makes: every `NVIDIA_REQUIRE_*` but `NVIDIA_REQUIRE_JETPACK*`, or the
 * `cuda>=X.Y` of `CUDA_VERSION` for an image without `NVIDIA_REQUIRE_CUDA`; none when `NVIDIA_DISABLE_REQUIRE` is
 * true. Invalid values are returned as such: the container fails to start on them.
 */
export function requirementsOf(env: ReadonlyMap<string, string>): {
  readonly requirements: readonly Requirement[];
  readonly invalid: readonly string[];
  readonly disabled: boolean;
} {
  if (parseBoolTrue(env.get('NVIDIA_DISABLE_REQUIRE') ?? '')) return { requirements: [], invalid: [], disabled: true };
  const requirements: Requirement[] = [];
  const invalid: string[] = [];
  for (const [name, value] of env) {
    if (!name.startsWith('NVIDIA_REQUIRE_') || name.startsWith('NVIDIA_REQUIRE_JETPACK')) continue;
    const parsed = parseRequirement(name, value);
    if ('invalid' in parsed) invalid.push(parsed.invalid);
    else requirements.push(parsed);
  }
  const cuda = env.get('CUDA_VERSION');
  if (!env.has('NVIDIA_REQUIRE_CUDA') && cuda && /^\d+\.\d+/.test(cuda)) {
    const minor = /^(\d+\.\d+)/.exec(cuda)![1]!;
    requirements.push(parseRequirement('NVIDIA_REQUIRE_CUDA', `cuda>=${minor}`) as Requirement);
  }
  return { requirements, invalid, disabled: false };
}

/** libnvidia-container's dsl_compare_version: numeric parts, missing parts (and trailing zeros) count as 0. */
function compareVersions(a: string, b: string): number {
  const left = a.split('.').map((part) => Number.parseInt(part, 10) || 0);
  const right = b.split('.').map((part) => Number.parseInt(part, 10) || 0);
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const diff = (left[i] ?? 0) - (right[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

function holds(comparison: number, operator: Operator): boolean {
  switch (operator) {
    case '=':
      return comparison === 0;
    case '!=':
      return comparison !== 0;
    case '<':
      return comparison < 0;
    case '<=':
      return comparison <= 0;
    case '>':
      return comparison > 0;
    case '>=':
      return comparison >= 0;
  }
}

/** One constraint on one GPU of the host (its brand and arch); undefined where the arch is not known. */
function constraintHolds(
  constraint: Constraint,
  host: ToolkitHost,
  brand: ToolkitBrand,
  arch: string | undefined,
): boolean | undefined {
  const { property, operator, value } = constraint;
  if (property === 'cuda') return holds(compareVersions(host.driverCuda, value), operator);
  if (property === 'driver') return holds(compareVersions(host.driver, value), operator);
  if (property === 'brand') {
    const equal = brand.toLowerCase() === value.toLowerCase();
    return operator === '=' ? equal : operator === '!=' ? !equal : false;
  }
  return arch === undefined ? undefined : holds(compareVersions(arch, value), operator);
}

/** Whether a value holds for a GPU: some term all of whose constraints hold (undefined: it depends on the arch). */
function requirementHolds(
  requirement: Requirement,
  host: ToolkitHost,
  brand: ToolkitBrand,
  arch: string | undefined,
): boolean | undefined {
  let unknown = false;
  for (const term of requirement.terms) {
    const results = term.map((constraint) => constraintHolds(constraint, host, brand, arch));
    if (results.every((result) => result === true)) return true;
    if (!results.includes(false)) unknown = true;
  }
  return unknown ? undefined : false;
}

/** What the legacy path makes of an image on a host: it starts, it is refused (with the condition), or it depends. */
export type StartVerdict =
  | { readonly starts: true }
  | { readonly refused: string; readonly requirement: Requirement }
  | { readonly depends: string };

/**
 * The legacy path on a host: every requirement must hold for every GPU (each brand and arch the host may report).
 * Refused when one fails for every possible GPU; it depends when the outcome varies with what the host's GPUs report.
 */
export function legacyStart(requirements: readonly Requirement[], host: ToolkitHost): StartVerdict {
  const arches = host.arches.length > 0 ? host.arches : [undefined];
  let depends: string | undefined;
  for (const requirement of requirements) {
    const outcomes = host.brands.flatMap((brand) =>
      arches.map((arch) => requirementHolds(requirement, host, brand, arch)),
    );
    if (outcomes.every((outcome) => outcome === false)) return { refused: refusal(requirement), requirement };
    if (!outcomes.every((outcome) => outcome === true))
      depends ??= `${requirement.name} holds for some GPUs this pool may have and not for others`;
  }
  return depends ? { depends } : { starts: true };
}

/** The toolkit's message: "unsatisfied condition: <first term>" (dsl.c). */
function refusal(requirement: Requirement): string {
  const first = requirement.terms[0]?.map((c) => `${c.property}${c.operator}${c.value}`).join(',') ?? '';
  return `unsatisfied condition: ${first}`;
}

/**
 * The brands a pool's GPUs may report to the toolkit, from their product line and names: GeForce cards GeForce;
 * TITAN V and Xp TITAN (TITAN RTX reports TITAN_RTX, so Unknown); data-center GPUs Tesla (older ones) or NVIDIA
 * (Unknown); workstation cards Quadro (older ones) or NVIDIA RTX (Unknown). Any brand where the pool does not say.
 */
export function poolBrands(pool: Pool, kb: KnowledgeBase): readonly ToolkitBrand[] {
  const brands = new Set<ToolkitBrand>();
  const classes = new Set<string | undefined>();
  for (const gpu of pool.gpus) {
    const info = kb.gpu(gpu);
    const name = info?.name ?? gpu;
    const line = info?.class ?? pool.class;
    classes.add(line);
    if (/^TITAN RTX/i.test(name)) brands.add('Unknown');
    else if (/^TITAN\b/i.test(name)) brands.add('TITAN');
    else if (line === 'geforce') brands.add('GeForce');
    else if (line === 'data-center') brands.add('Tesla').add('Unknown');
    else if (line === 'workstation' && /^Quadro\b/i.test(name)) brands.add('Quadro').add('Unknown');
    else if (line === 'workstation') brands.add('Unknown');
    else return ALL_BRANDS;
  }
  if (pool.gpus.length === 0) {
    if (pool.class === 'geforce') return ['GeForce', 'TITAN'];
    if (pool.class === 'data-center') return ['Tesla', 'Unknown'];
    if (pool.class === 'workstation') return ['Quadro', 'Unknown'];
    return ALL_BRANDS;
  }
  return [...brands];
}

/**
 * A pool as the legacy path sees it, where its driver's CUDA is known. Not for Jetson pools: their toolkit reads the
 * requirements on its csv path, with other rules (brand constraints skipped).
 */
export function toolkitHost(pool: Pool, kb: KnowledgeBase): ToolkitHost | undefined {
  if (pool.class === 'jetson') return undefined;
  const driverCuda = kb.driverCuda(pool.driver);
  if (!driverCuda) return undefined;
  const arches = pool.gpus.flatMap((gpu) => {
    const cc = kb.gpu(gpu)?.cc;
    return cc ? [cc] : [];
  });
  return {
    driver: pool.driver,
    driverCuda,
    brands: poolBrands(pool, kb),
    arches: arches.length === pool.gpus.length ? arches : [],
  };
}
