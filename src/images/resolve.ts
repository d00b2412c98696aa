/**
 * Looking up a check's images: which images need it (those the knowledge snapshot does not know), and the lookups
 * themselves, in parallel with a cap, within one time budget, through the caches. Only image references leave the
 * machine, and only to the registry each names (and the token service that registry names).
 */
import type { Baseline } from '../baseline/schema.js';
import type { ImageFact, ParsedFile } from '../parsers/facts.js';
import { DIGEST_SECONDS, MISSING_SECONDS, TAG_SECONDS, type LookupCache } from './cache.js';
import type { ImageLookup, ImageLookups } from './lookup.js';
import { imageKey, isScratch, registryHost, registryName, type ImageRef } from './reference.js';
import { LookupFailure, RegistryClient, type RegistryCredentials, type Spent } from './registry.js';

/**
 * Registries looked up without being named in the baseline: the public ones ML images live on. Any other host is
 * looked up only when the baseline names it under `registries.credentials` (an App must not be made to call hosts a
 * pull request picks).
 */
const PUBLIC_REGISTRIES: readonly (string | RegExp)[] = [
  'registry-1.docker.io',
  'nvcr.io',
  'ghcr.io',
  'quay.io',
  'public.ecr.aws',
  'gcr.io',
  /^[a-z]+\.gcr\.io$/,
  /^[a-z0-9-]+-docker\.pkg\.dev$/,
  'mcr.microsoft.com',
  'registry.k8s.io',
];

export interface LookupSettings {
  readonly cache: LookupCache;
  /** The environment the credentials' variables are read from. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Milliseconds the whole lookup may take (each image's requests share it). */
  readonly budgetMs: number;
  /** Today (YYYY-MM-DD), the date a config read now is recorded with. */
  readonly today: string;
  /** The platform whose config is read (`linux/amd64`). */
  readonly platform?: string;
  readonly concurrency?: number;
  /** At most this many images are looked up per check; the rest are said to be unread. */
  readonly maxImages?: number;
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

export interface LookupRun {
  readonly lookups: ImageLookups;
  readonly spent: Spent & { readonly cached: number; readonly images: number };
}

/**
 * The images of parsed files that a lookup could tell more about: resolved references (no variable left) that are
 * not a stage, not `scratch`, and that the knowledge snapshot does not already describe by name and tag (`known`:
 * its CUDA, or that it ships none); each once.
 */
export function imagesToLookUp(
  files: readonly ParsedFile[],
  known: (image: ImageFact) => boolean,
): readonly ImageRef[] {
  const wanted = new Map<string, ImageRef>();
  for (const file of files) {
    for (const image of [...file.images, ...file.containers.map((container) => container.image)]) {
      if (image.fromStage !== undefined || image.unresolved || /[$`{}]/.test(image.reference)) continue;
      if (isScratch(image) || known(image)) continue;
      const ref: ImageRef = {
        ...(image.registry ? { registry: image.registry } : {}),
        repository: image.repository,
        ...(image.tag !== undefined ? { tag: image.tag } : {}),
        ...(image.digest ? { digest: image.digest } : {}),
      };
      wanted.set(imageKey(ref), ref);
    }
  }
  return [...wanted.values()];
}

/**
 * The platform whose config a lookup reads: linux/arm64 where every pool of the fleet is Arm (Grace: GH200, GB200,
 * GB300, GB10; Jetson), else linux/amd64. (A fleet of both is read as amd64; its Arm pools' builds are not checked.)
 */
export function fleetPlatform(baseline: Pick<Baseline, 'pools'>): string {
  const arm = (pool: Baseline['pools'][number]) =>
    pool.class === 'jetson' ||
    (pool.gpus.length > 0 && pool.gpus.every((gpu) => /^G[BH]\d|jetson|orin|thor/i.test(gpu)));
  return baseline.pools.length > 0 && baseline.pools.every(arm) ? 'linux/arm64' : 'linux/amd64';
}

/** Whether the baseline asks a registry for this host: a public registry, or one it names credentials for. */
export function lookupAllowed(host: string, baseline: Pick<Baseline, 'registries'>): boolean {
  return (
    PUBLIC_REGISTRIES.some((known) => (typeof known === 'string' ? known === host : known.test(host))) ||
    Object.hasOwn(baseline.registries.credentials, host)
  );
}

/** Look the images up: the caches first, then their registries, within the budget. Never throws. */
export async function lookUpImages(
  refs: readonly ImageRef[],
  baseline: Pick<Baseline, 'registries'>,
  settings: LookupSettings,
): Promise<LookupRun> {
  const now = settings.now ?? Date.now;
  const client = new RegistryClient({
    deadline: now() + settings.budgetMs,
    credentials: (host) => credentialsFor(host, baseline, settings.env),
    ...(settings.fetch ? { fetch: settings.fetch } : {}),
    now,
    ...(settings.sleep ? { sleep: settings.sleep } : {}),
  });
  const platform = settings.platform ?? 'linux/amd64';
  const maxImages = settings.maxImages ?? 40;
  const lookups: Record<string, ImageLookup> = {};
  let cached = 0;
  const queue = refs.slice(0, maxImages);
  for (const ref of refs.slice(maxImages))
    lookups[imageKey(ref)] = {
      state: 'unread',
      reason: `the check names more than ${maxImages} images to look up; this one was not`,
    };
  const one = async (ref: ImageRef): Promise<void> => {
    const key = imageKey(ref);
    if (!lookupAllowed(registryHost(ref), baseline)) {
      lookups[key] = {
        state: 'unread',
        reason: `${registryName(ref)} is not a public registry cuda-gatekeeper reads; name it under registries.credentials in the baseline to have it read`,
      };
      return;
    }
    const found = await lookUp(ref, client, settings.cache, platform, settings.today);
    if (found.cached) cached += 1;
    lookups[key] = found.lookup;
  };
  const workers = Array.from({ length: Math.min(settings.concurrency ?? 4, queue.length) }, async () => {
    for (let ref = queue.shift(); ref; ref = queue.shift()) await one(ref);
  });
  await Promise.all(workers);
  return { lookups, spent: { ...client.spent, cached, images: refs.length } };
}

/**
 * One image: its tag's digest (cached for TAG_SECONDS, else by HEAD, which Docker Hub does not count as a pull),
 * then its config by digest (cached for good), else read from the registry.
 */
async function lookUp(
  ref: ImageRef,
  client: RegistryClient,
  cache: LookupCache,
  platform: string,
  today: string,
): Promise<{ readonly lookup: ImageLookup; readonly cached: boolean }> {
  const name = `${registryHost(ref)}/${ref.repository}`;
  const tagKey = `tag ${name}:${ref.tag ?? 'latest'}`;
  try {
    let digest = ref.digest;
    if (!digest) {
      const known = await cache.get(tagKey);
      if (known?.startsWith('missing ')) return { lookup: JSON.parse(known.slice(8)) as ImageLookup, cached: true };
      digest = known ?? (await client.digestOf(ref));
      if (digest && !known) await cache.set(tagKey, digest, TAG_SECONDS);
    }
    const configKey = digest ? `config ${name}@${digest} ${platform}` : undefined;
    const hit = configKey ? await cache.get(configKey) : undefined;
    if (hit) return { lookup: JSON.parse(hit) as ImageLookup, cached: true };
    const read = await client.read(ref, digest ?? ref.tag ?? 'latest', platform);
    const lookup: ImageLookup = {
      state: 'read',
      registry: registryName(ref),
      digest: read.digest,
      config: read.config,
      retrieved: today,
    };
    await cache.set(configKey ?? `config ${name}@${read.digest} ${platform}`, JSON.stringify(lookup), DIGEST_SECONDS);
    return { lookup, cached: false };
  } catch (error) {
    if (!(error instanceof LookupFailure))
      return { lookup: { state: 'unread', reason: `the lookup failed (${(error as Error).message})` }, cached: false };
    if (error.state === 'missing') {
      const lookup: ImageLookup = { state: 'missing', registry: registryName(ref), reason: error.message };
      if (!ref.digest) await cache.set(tagKey, `missing ${JSON.stringify(lookup)}`, MISSING_SECONDS);
      return { lookup, cached: false };
    }
    return { lookup: { state: 'unread', reason: error.message }, cached: false };
  }
}

/** A registry's credentials from the environment variables the baseline names for its host, when both are set. */
function credentialsFor(
  host: string,
  baseline: Pick<Baseline, 'registries'>,
  env: Readonly<Record<string, string | undefined>>,
): RegistryCredentials | undefined {
  const named = baseline.registries.credentials[host === 'registry-1.docker.io' ? 'docker.io' : host];
  const username = named && env[named.username];
  const password = named && env[named.password];
  return username && password ? { username, password } : undefined;
}
