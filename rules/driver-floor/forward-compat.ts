/**
 * Whether forward compatibility (cuda-compat) is possible on a pool, or on the one-pool fleet: its GPUs' product line.
 */
import type { KnowledgeBase } from '../../src/knowledge/index.js';
import type { Pool } from '../../src/baseline/schema.js';

/**
 * A pool's forward compatibility: its product line decides (cuda-compat: data-center and Jetson GPUs only), else its
 * GPUs.
 */
export function poolForwardCompat(pool: Pool, stated: boolean | undefined, kb: KnowledgeBase): ForwardCompat {
  if (pool.class === 'data-center' || pool.class === 'jetson')
    return { allowed: true, reason: `pool ${pool.name} is ${pool.class} GPUs` };
  if (pool.class === 'geforce')
    return {
      allowed: false,
      reason: `pool ${pool.name} is GeForce GPUs, on which cuda-compat fails with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804)`,
    };
  if (pool.class === 'workstation' && stated !== true)
    return {
      allowed: false,
      reason: `pool ${pool.name} is workstation GPUs: only select NGC-Server-Ready RTX SKUs support cuda-compat (if these are, set driver.forwardCompat: true)`,
    };
  return fleetForwardCompat(stated, pool.gpus, kb);
}

export interface ForwardCompat {
  /** true: the fleet's GPUs may use cuda-compat; false: they may not; undefined: not known. */
  readonly allowed: boolean | undefined;
  /** Why, when the fleet's GPUs decided it. */
  readonly reason?: string;
}

/**
 * Whether forward compatibility can work on the fleet: only NVIDIA data-center GPUs, Jetson boards and select
 * NGC-Server-Ready RTX SKUs may use cuda-compat; elsewhere it fails with error 804. A GeForce GPU in the fleet rules it
 * out whatever the baseline says; a workstation RTX only if the baseline does not say the fleet's cards are such SKUs
 * (driver.forwardCompat: true); a fleet of data-center and Jetson GPUs allows it unless the baseline says false. GPUs
 * the knowledge base cannot place leave the baseline's word (or nothing) to decide.
 */
export function fleetForwardCompat(
  stated: boolean | undefined,
  gpus: readonly string[],
  kb: KnowledgeBase,
): ForwardCompat {
  const placed = gpus.map((name) => ({ name, line: kb.gpu(name)?.class }));
  const geforce = placed.find((gpu) => gpu.line === 'geforce');
  if (geforce)
    return {
      allowed: false,
      reason: `the fleet's ${geforce.name} is a GeForce GPU, on which cuda-compat fails with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804)`,
    };
  const workstation = placed.find((gpu) => gpu.line === 'workstation');
  if (workstation && stated !== true)
    return {
      allowed: false,
      reason: `the fleet's ${workstation.name} is a workstation GPU: only select NGC-Server-Ready RTX SKUs support cuda-compat (if these are, set driver.forwardCompat: true)`,
    };
  if (stated !== undefined) return { allowed: stated };
  if (placed.length > 0 && placed.every((gpu) => gpu.line === 'data-center' || gpu.line === 'jetson'))
    return { allowed: true, reason: `the fleet's GPUs (${gpus.join(', ')}) are data-center or Jetson GPUs` };
  const unknown = placed.find((gpu) => !gpu.line);
  return {
    allowed: undefined,
    ...(unknown ? { reason: `the knowledge base does not know which product line ${unknown.name} is` } : {}),
  };
}
