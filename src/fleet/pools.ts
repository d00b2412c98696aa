/**
 * Nodes → the baseline's `fleet.pools`: nodes are grouped by a label the user names, else by the node-pool label
 * of GKE, EKS or AKS, else by GPU product and driver. A pool's driver is its oldest node's (what an image must run
 * on), its GPUs the knowledge base's names for the products, its class their product line (forward compatibility
 * depends on it). Each grouping decision is said.
 */
import type { Pool } from '../baseline/schema.js';
import type { KnowledgeBase } from '../knowledge/index.js';
import { compareDotted } from '../util/dotted.js';
import type { FleetGpu, FleetNode } from './read.js';

/** The managed-Kubernetes node pool labels (GKE, EKS managed node groups, AKS agent pools). */
export const POOL_LABELS = [
  'cloud.google.com/gke-nodepool',
  'eks.amazonaws.com/nodegroup',
  'kubernetes.azure.com/agentpool',
] as const;

export interface Grouped {
  readonly pools: readonly Pool[];
  /** One line per pool: what it holds and why those nodes are together. */
  readonly explained: readonly string[];
}

type GpuClass = NonNullable<Pool['class']>;

/** The product line of a GPU: the knowledge base's, else what nvidia-smi's brand says. */
export function gpuClass(gpu: FleetGpu, kb: KnowledgeBase): GpuClass | undefined {
  const known = kb.gpu(gpu.product)?.class;
  if (known) return known;
  const brand = gpu.brand?.toLowerCase() ?? '';
  if (/geforce|titan/.test(brand) || /^(geforce|titan)\b/i.test(gpu.product)) return 'geforce';
  if (/quadro|rtx/.test(brand)) return 'workstation';
  if (/^tesla$/.test(brand)) return 'data-center';
  return undefined;
}

/** The knowledge base's name for a product (A100 for A100-SXM4-80GB), else the product as reported. */
function gpuName(gpu: FleetGpu, kb: KnowledgeBase): string {
  return kb.gpu(gpu.product)?.name ?? gpu.computeCapability ?? gpu.product;
}

function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9.]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

export function groupIntoPools(nodes: readonly FleetNode[], kb: KnowledgeBase, by?: string): Grouped {
  const label = by ?? POOL_LABELS.find((name) => nodes.some((node) => node.labels[name] !== undefined));
  const groups = new Map<string, { nodes: FleetNode[]; reason: string }>();
  for (const node of nodes) {
    const value = label ? node.labels[label] : undefined;
    const product = node.gpus[0] ? gpuName(node.gpus[0], kb) : 'gpu';
    const key = value !== undefined ? slug(value) : `${slug(product)}-${node.driver.split('.')[0]}`;
    const reason =
      value !== undefined
        ? `label ${label}=${value}`
        : `GPU ${product} with driver branch ${node.driver.split('.')[0]}`;
    const group = groups.get(key) ?? { nodes: [], reason };
    group.nodes.push(node);
    groups.set(key, group);
  }
  const pools: Pool[] = [];
  const explained: string[] = [];
  for (const [name, group] of groups) {
    const drivers = [...new Set(group.nodes.map((node) => node.driver))].sort(compareDotted);
    const gpus = [...new Set(group.nodes.flatMap((node) => node.gpus.map((gpu) => gpuName(gpu, kb))))];
    const classes = [...new Set(group.nodes.flatMap((node) => node.gpus.map((gpu) => gpuClass(gpu, kb))))];
    // One product line for the pool only when every GPU has it; a mixed or unknown pool says none (the rule then
    // judges forward compatibility from the GPUs).
    const gpuClassOf = classes.length === 1 && classes[0] ? classes[0] : undefined;
    pools.push({
      name,
      driver: drivers[0]!,
      gpus,
      ...(gpuClassOf ? { class: gpuClassOf } : {}),
      nodes: group.nodes.length,
      labels: label && group.reason.startsWith('label') ? { [label]: group.nodes[0]!.labels[label]! } : {},
    });
    const count = group.nodes.reduce((sum, node) => sum + node.gpus.length, 0);
    explained.push(
      `${name}: ${group.nodes.length} node${group.nodes.length === 1 ? '' : 's'}, ${count} GPU${count === 1 ? '' : 's'} (${gpus.join(', ')}${gpuClassOf ? `, ${gpuClassOf}` : ''}), driver ${drivers.length === 1 ? drivers[0] : `${drivers[0]} (oldest of ${drivers.join(', ')})`}; grouped by ${group.reason}`,
    );
  }
  return { pools, explained };
}
