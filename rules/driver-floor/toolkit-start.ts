/**
 * Whether a unit's container starts on a pool, as the NVIDIA Container Toolkit decides it from the image's
 * NVIDIA_REQUIRE_* (src/analysis/toolkit.ts has the rules and their sources): the base image's own value, under the
 * stage's ENV. Only the legacy path checks it; a pool's `runtime` says which path its nodes take.
 */
import type { CudaClaim } from '../../src/analysis/claims.js';
import { legacyStart, requirementsOf, toolkitHost, type StartVerdict } from '../../src/analysis/toolkit.js';
import type { Pool } from '../../src/baseline/schema.js';
import type { KnowledgeBase, Sourced } from '../../src/knowledge/index.js';
import type { ImageFact } from '../../src/parsers/facts.js';
import { envOfStage } from '../../src/analysis/env-by-stage.js';

/** The requirements a stage's containers are started with, and the record the image's value comes from. */
export interface StageRequirements {
  readonly env: ReadonlyMap<string, string>;
  readonly record: Sourced;
  /** The image the value is the base of (for messages). */
  readonly image: string;
}

/**
 * The environment the toolkit reads for an image claim: the image's own config where this check read it from the
 * registry (every NVIDIA_REQUIRE_*, CUDA_VERSION, NVIDIA_DISABLE_REQUIRE), else an nvidia/cuda image's recorded
 * CUDA_VERSION and NVIDIA_REQUIRE_CUDA; the stage's own ENV over it. Undefined where the image's value is not known,
 * or where the stage writes its own NVIDIA_REQUIRE_CUDA (the requireCuda check judges that one).
 */
export function stageRequirements(claim: CudaClaim, kb: KnowledgeBase): StageRequirements | undefined {
  const image = claim.image;
  if (claim.kind !== 'image' || !image) return undefined;
  const base = fromConfig(image, kb) ?? fromRecord(image, kb);
  if (!base) return undefined;
  const own = envOfStage(claim.file, image.stage).filter((fact) => fact.instruction === 'ENV');
  if (own.some((fact) => fact.key === 'NVIDIA_REQUIRE_CUDA')) return undefined;
  const env = new Map(base.env);
  for (const fact of own) env.set(fact.key, fact.value);
  return { env, record: base.record, image: image.reference };
}

/** The toolkit's variables of an image config this check read from its registry. */
function fromConfig(image: ImageFact, kb: KnowledgeBase): Pick<StageRequirements, 'env' | 'record'> | undefined {
  const lookup = kb.imageLookup(image);
  if (lookup?.state !== 'read') return undefined;
  const env = new Map(
    Object.entries(lookup.config.env).filter(
      ([key]) => key.startsWith('NVIDIA_REQUIRE_') || key === 'CUDA_VERSION' || key === 'NVIDIA_DISABLE_REQUIRE',
    ),
  );
  if (![...env.keys()].some((key) => key.startsWith('NVIDIA_REQUIRE_'))) return undefined;
  return {
    env,
    record: {
      source: [`the image's config on ${lookup.registry} (${lookup.digest}, ${lookup.config.platform})`],
      retrieved: lookup.retrieved,
    },
  };
}

/** An nvidia/cuda tag's recorded NVIDIA_REQUIRE_CUDA (knowledge data). */
function fromRecord(image: ImageFact, kb: KnowledgeBase): Pick<StageRequirements, 'env' | 'record'> | undefined {
  if (!image.tag || !kb.isNvidiaCuda(image.registry, image.repository)) return undefined;
  const version = kb.nvidiaCudaTag(image.tag)?.version;
  const value = version ? kb.nvidiaCudaRequire(version) : undefined;
  if (!version || !value) return undefined;
  return {
    env: new Map([
      ['CUDA_VERSION', version],
      ['NVIDIA_REQUIRE_CUDA', value.value],
    ]),
    record: value.record,
  };
}

/** What a pool's nodes do with the stage's requirements on the legacy path, or undefined where that is not known. */
export function startOn(pool: Pool, requirements: StageRequirements, kb: KnowledgeBase): StartVerdict | undefined {
  const host = toolkitHost(pool, kb);
  if (!host) return undefined;
  const read = requirementsOf(requirements.env);
  if (read.disabled || read.invalid.length > 0) return undefined;
  return legacyStart(read.requirements, host);
}
