/**
 * `check --online`: the images of the checked Dockerfiles and manifests looked up in their registries before the
 * check (src/images), through the user's cache folder. Only image references leave the machine.
 */
import { formatOf } from '../parsers/formats.js';
import type { Baseline } from '../baseline/schema.js';
import { snapshotKnows } from '../analysis/claims.js';
import { cacheFolder, FileCache, MemoryCache, TieredCache } from '../images/cache.js';
import type { ImageLookups } from '../images/lookup.js';
import { fleetPlatform, imagesToLookUp, lookUpImages } from '../images/resolve.js';
import type { KnowledgeBase } from '../knowledge/index.js';
import { servingIndex } from '../parsers/kubernetes/parse.js';
import { parseFile } from '../parsers/index.js';
import type { Listed, RepositoryReader } from '../reader.js';

/** How long the CLI's lookups may take, all images together (CUDA_GATEKEEPER_LOOKUP_BUDGET_MS overrides). */
const BUDGET_MS = 20_000;

export interface CliLookup {
  readonly images: ImageLookups;
  /** One line for --verbose: what was looked up and what it cost. */
  readonly summary: string;
}

/** Look up the images of the listed Dockerfiles and manifests (read through `reader`). */
export async function lookUpForCli(
  list: readonly Listed[],
  reader: RepositoryReader,
  baseline: Baseline,
  kb: KnowledgeBase,
  options: {
    readonly env: Readonly<Record<string, string | undefined>>;
    readonly today: string;
    readonly fetch?: typeof globalThis.fetch;
  },
): Promise<CliLookup> {
  const sources = list
    .filter(
      (entry) =>
        entry.kind !== undefined && (entry.kind === 'dockerfile' || formatOf(entry.kind).units === 'containers'),
    )
    .map((entry) => reader.read(entry.path, entry.kind))
    .filter((source) => source !== undefined);
  // A KServe runtime's image runs on the GPUs of the services of other files that name it: it is looked up too.
  const serving = servingIndex(sources.filter((source) => source.kind === 'kubernetes'));
  const files = sources.map((source) =>
    parseFile(source.path, source.text, source.kind, { images: baseline.images, ...(serving ? { serving } : {}) }),
  );
  const refs = imagesToLookUp(files, (image) => snapshotKnows(image, kb));
  if (refs.length === 0)
    return { images: {}, summary: 'no image needed a lookup (the knowledge snapshot knows them all)' };
  const { env, today } = options;
  const budget = Number(env.CUDA_GATEKEEPER_LOOKUP_BUDGET_MS);
  const run = await lookUpImages(refs, baseline, {
    cache: new TieredCache(new MemoryCache(), new FileCache(cacheFolder(env))),
    env,
    budgetMs: Number.isFinite(budget) && budget > 0 ? budget : BUDGET_MS,
    platform: fleetPlatform(baseline),
    today,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const states = Object.values(run.lookups);
  const count = (state: string) => states.filter((lookup) => lookup.state === state).length;
  return {
    images: run.lookups,
    summary: `looked up ${refs.length} image${refs.length === 1 ? '' : 's'}: ${count('read')} read (${run.spent.cached} from the cache), ${count('missing')} missing, ${count('unread')} not read; ${run.spent.requests} registry requests`,
  };
}
