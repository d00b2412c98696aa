/**
 * Which pools of the fleet a pod may be scheduled on, from its `nodeSelector` and required node affinity
 * (kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/): a node must carry every nodeSelector label and
 * match one of the affinity's nodeSelectorTerms, whose expressions must all hold.
 *
 * What a pool's nodes carry is known for the pool's own `labels`, for the GPU Feature Discovery labels its GPUs and
 * driver determine (`nvidia.com/gpu.product`, `nvidia.com/gpu.compute.major`/`.minor`, `nvidia.com/cuda.driver.*`,
 * docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-feature-discovery.html) and, for the node-pool
 * labels of GKE, EKS and AKS, its name. A label nothing tells us about may match: a pool is left out only when a
 * requirement certainly fails on it, so a selection never hides a pool the pod may land on.
 */
import type { GpuAsk, LabelRequirement, Placement } from '../parsers/facts.js';
import type { Pool } from '../baseline/schema.js';
import type { KnowledgeBase } from '../knowledge/index.js';

/** The node-pool labels of the managed Kubernetes services, whose value is the pool's name. */
const POOL_NAME_LABELS = new Set([
  'cloud.google.com/gke-nodepool',
  'eks.amazonaws.com/nodegroup',
  'kubernetes.azure.com/agentpool',
  'agentpool',
  'karpenter.sh/nodepool',
]);

export interface Selection {
  /** The pools the pod may run on (every pool when nothing narrows it). */
  readonly pools: readonly Pool[];
  /** Whether its selection leaves some pool out. */
  readonly narrowed: boolean;
  /** Set when the selection matches no pool: then every pool is judged, and this says why. */
  readonly unmatched?: string;
  /** The requirements that narrowed it, as written (`nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB`). */
  readonly by: readonly string[];
}

type Match = 'yes' | 'no' | 'unknown';

/**
 * The managed services' labels that name a node's GPU model: GKE's `cloud.google.com/gke-accelerator`
 * (`nvidia-h200-141gb`, `nvidia-tesla-t4`, `nvidia-l4`: cloud.google.com/kubernetes-engine/docs/how-to/gpus) and
 * Karpenter's `karpenter.k8s.aws/instance-gpu-name` (`a100`, `l4`: karpenter.sh/docs/reference/instance-types). A
 * pool whose GPUs the baseline names carries the value of its model.
 */
const ACCELERATOR_LABELS = new Set(['cloud.google.com/gke-accelerator', 'karpenter.k8s.aws/instance-gpu-name']);

/** A GPU model from such a label's value: `nvidia-h100-mega-80gb` → `H100`, `nvidia-tesla-a100` → `A100`. */
function acceleratorProduct(value: string): string {
  return value
    .toLowerCase()
    .replace(/^nvidia-/, '')
    .replace(/^tesla-/, '')
    .replace(/-(?:mega-)?\d+gb$/, '')
    .replace(/-/g, ' ')
    .toUpperCase();
}

export function selectPools(pools: readonly Pool[], placement: Placement | undefined, kb: KnowledgeBase): Selection {
  const requirements = placement ? [...placement.selector, ...placement.terms.flat()] : [];
  if (!placement || requirements.length === 0) return { pools, narrowed: false, by: [] };
  const holds = (pool: Pool, requirement: LabelRequirement): boolean =>
    (pool.labels[requirement.key] === undefined && requirement.key === 'nvidia.com/gpu.product'
      ? productMatch(requirement, pool, kb)
      : pool.labels[requirement.key] === undefined && ACCELERATOR_LABELS.has(requirement.key)
        ? productMatch({ ...requirement, values: requirement.values.map(acceleratorProduct) }, pool, kb)
        : matches(requirement, labelOf(pool, requirement.key, pools, kb))) !== 'no';
  const selected = pools.filter(
    (pool) =>
      placement.selector.every((requirement) => holds(pool, requirement)) &&
      (placement.terms.length === 0 ||
        placement.terms.some((term) => term.every((requirement) => holds(pool, requirement)))),
  );
  const by = requirements.map(describe);
  if (selected.length === 0)
    return {
      pools,
      narrowed: false,
      by,
      unmatched: `its node selection (${by.join(', ')}) matches no pool of the baseline's fleet`,
    };
  return { pools: selected, narrowed: selected.length < pools.length, by };
}

function describe(requirement: LabelRequirement): string {
  if (requirement.operator === 'In' && requirement.values.length === 1)
    return `${requirement.key}=${requirement.values[0]}`;
  if (requirement.operator === 'Exists' || requirement.operator === 'DoesNotExist')
    return `${requirement.key} ${requirement.operator}`;
  return `${requirement.key} ${requirement.operator} (${requirement.values.join(', ')})`;
}

/** The values a pool's nodes carry for a label: a list (its GPUs may differ), or undefined when nothing says. */
function labelOf(pool: Pool, key: string, pools: readonly Pool[], kb: KnowledgeBase): readonly string[] | undefined {
  const own = pool.labels[key];
  if (own !== undefined) return [own];
  if (POOL_NAME_LABELS.has(key)) {
    // Pools imported by that label are named by it; a pool written by hand without the label may be named otherwise.
    return pools.some((other) => other.labels[key] !== undefined) ? undefined : [pool.name];
  }
  const driver = pool.driver.split('.');
  switch (key) {
    case 'nvidia.com/cuda.driver.major':
    case 'nvidia.com/cuda.driver-version.major':
      return [driver[0]!];
    case 'nvidia.com/cuda.driver.minor':
    case 'nvidia.com/cuda.driver-version.minor':
      return driver[1] === undefined ? undefined : [driver[1]];
    case 'nvidia.com/cuda.driver.rev':
    case 'nvidia.com/cuda.driver-version.revision':
      return driver[2] === undefined ? undefined : [driver[2]];
    case 'nvidia.com/gpu.present':
      return ['true'];
  }
  if (key === 'nvidia.com/gpu.compute.major' || key === 'nvidia.com/gpu.compute.minor') {
    const ccs = pool.gpus.map((gpu) => kb.gpu(gpu)?.cc);
    if (ccs.length === 0 || ccs.some((cc) => cc === undefined)) return undefined;
    return ccs.map((cc) => cc!.split('.')[key.endsWith('major') ? 0 : 1]!);
  }
  return undefined;
}

function matches(requirement: LabelRequirement, values: readonly string[] | undefined): Match {
  if (values === undefined) return 'unknown';
  const test = (value: string): boolean => {
    switch (requirement.operator) {
      case 'In':
        return requirement.values.includes(value);
      case 'NotIn':
        return !requirement.values.includes(value);
      case 'Exists':
        return true;
      case 'DoesNotExist':
        return false;
      case 'Gt':
        return Number(value) > Number(requirement.values[0]);
      case 'Lt':
        return Number(value) < Number(requirement.values[0]);
    }
  };
  return values.some(test) ? 'yes' : 'no';
}

/**
 * `nvidia.com/gpu.product` against a pool's GPUs: GFD writes the product name with dashes for spaces
 * (`NVIDIA-A100-SXM4-80GB`), with `-SHARED` under time-slicing and `-MIG-1g.10gb` under MIG. Two names are the same
 * product when they are spelled alike or the knowledge base gives them one name; they differ only when it places
 * both under different names.
 */
function productMatch(requirement: LabelRequirement, pool: Pool, kb: KnowledgeBase): Match {
  if (pool.gpus.length === 0) return 'unknown';
  if (requirement.operator === 'Exists') return 'yes';
  if (requirement.operator === 'DoesNotExist') return 'no';
  if (requirement.operator !== 'In' && requirement.operator !== 'NotIn') return 'unknown';
  const same = (gpu: string, value: string): Match => {
    const product = value.replace(/-SHARED$/i, '').replace(/-MIG-[\w.+-]*$/i, '');
    const spelled = (name: string) =>
      name
        .toLowerCase()
        .replace(/[\s_-]+/g, ' ')
        .trim();
    if (spelled(gpu) === spelled(product)) return 'yes';
    const a = kb.gpu(gpu)?.name;
    const b = kb.gpu(product.replace(/-/g, ' '))?.name ?? kb.gpu(product)?.name;
    if (a === undefined || b === undefined) return 'unknown';
    return a === b ? 'yes' : 'no';
  };
  // Each GPU of the pool is in the values (yes), certainly not (no), or not known.
  const perGpu = pool.gpus.map((gpu): Match => {
    const answers = requirement.values.map((value) => same(gpu, value));
    return answers.includes('yes') ? 'yes' : answers.every((answer) => answer === 'no') ? 'no' : 'unknown';
  });
  if (requirement.operator === 'In')
    return perGpu.includes('yes') ? 'yes' : perGpu.every((m) => m === 'no') ? 'no' : 'unknown';
  return perGpu.includes('no') ? 'yes' : perGpu.every((m) => m === 'yes') ? 'no' : 'unknown';
}

/**
 * Where a unit's workload runs: its container's placement, or the GPU models a file names as the ones it runs on (a
 * SkyPilot task's accelerators: pools of other GPUs never run it).
 */
export function unitPlacement(unit: {
  readonly container?: { readonly fact: { readonly placement: Placement } };
  readonly root: { readonly gpus?: readonly GpuAsk[] };
}): Placement | undefined {
  if (unit.container) return unit.container.fact.placement;
  const gpus = unit.root.gpus;
  if (!gpus?.length) return undefined;
  const values = gpus.map((gpu) => gpu.name);
  return { selector: [{ key: 'nvidia.com/gpu.product', operator: 'In', values, span: gpus[0]!.span }], terms: [] };
}
