/**
 * A client for a registry's pull API, just enough to read an image's config: the manifest of a tag (through an
 * index to the fleet's platform), then the config blob. I/O lives here; what a config means is config.ts.
 *
 * What each step follows:
 * - The OCI Distribution Spec v1.1.0 (https://github.com/opencontainers/distribution-spec/blob/v1.1.0/spec.md):
 *   `GET|HEAD /v2/<name>/manifests/<reference>` with the Accept header naming the manifest types the client reads,
 *   `GET /v2/<name>/blobs/<digest>` (which a registry may answer with a 307 redirect to its storage), error bodies
 *   `{"errors":[{"code":"MANIFEST_UNKNOWN",…}]}` with 404 for a tag or repository that does not exist.
 * - The OCI image index and manifest (https://github.com/opencontainers/image-spec/blob/v1.1.0/image-index.md,
 *   manifest.md) and Docker's manifest list and image manifest v2 (application/vnd.docker.distribution.manifest.
 *   list.v2+json, …manifest.v2+json): an index's `manifests[]` carry `platform.os`/`architecture`/`variant`.
 * - Token authentication (https://distribution.github.io/distribution/spec/auth/token/): a 401 carries
 *   `WWW-Authenticate: Bearer realm="…",service="…",scope="…"`; the client GETs the realm with `service` and `scope`
 *   (with Basic credentials, if it has any) and retries with the `token` (or `access_token`) it answers, valid for
 *   `expires_in` seconds (60 when not said). Docker Hub (auth.docker.io), nvcr.io (/proxy_auth; user `$oauthtoken`
 *   with an NGC API key, https://docs.nvidia.com/ngc/latest/ngc-private-registry-user-guide.html), ghcr.io
 *   (https://docs.github.com/en/packages/working-with-a-github-packages-registry/working-with-the-container-registry),
 *   quay.io, public.ecr.aws (https://docs.aws.amazon.com/AmazonECR/latest/public/public-registry-auth.html) and
 *   Google's Artifact Registry (https://cloud.google.com/artifact-registry/docs/docker/authentication) all challenge
 *   this way; a `Basic` challenge is answered with the credentials, where there are some.
 * - Docker Hub's pull limits (https://docs.docker.com/docker-hub/usage/pulls/): a manifest GET counts as a pull, a
 *   HEAD does not, so a tag is resolved with HEAD and its config read once per digest (the caches keep it); 429
 *   `TOOMANYREQUESTS` when the limit is spent.
 * - HTTP Retry-After (RFC 9110 §10.2.3): seconds or a date; honoured when the wait fits the budget.
 *
 * Bounds: every request within the lookup's deadline; at most MAX_ATTEMPTS tries per request (429 and 5xx), three
 * redirects, manifests and configs of at most MAX_BYTES; credentials only to the host they are for (a redirect to
 * blob storage carries none: its URL is signed). Never throws: every failure is a lookup state with a reason.
 */
import { createHash } from 'node:crypto';
import { readImageConfig, type ImageConfig } from './config.js';
import { registryHost, registryName, repositoryPath, type ImageRef } from './reference.js';

/** A registry's user and password (or token), from the environment variables the baseline names. */
export interface RegistryCredentials {
  readonly username: string;
  readonly password: string;
}

export interface RegistryOptions {
  readonly fetch?: typeof fetch;
  /** The credentials for a registry host, where there are some. */
  readonly credentials?: (host: string) => RegistryCredentials | undefined;
  /** When every request must be done (ms since the epoch, as `now` tells time). */
  readonly deadline: number;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

/** A manifest or config larger than this is not read (the distribution spec has registries accept 4 MiB manifests). */
export const MAX_BYTES = 4 * 1024 * 1024;
export const MAX_ATTEMPTS = 3;
const MAX_REDIRECTS = 3;

const INDEX_TYPES = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
];
const MANIFEST_TYPES = [
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
];
const ACCEPT = [...INDEX_TYPES, ...MANIFEST_TYPES].join(', ');

/** Why a lookup stopped: the tag does not exist (`missing`), or it could not be read (`unread`). */
export class LookupFailure extends Error {
  constructor(
    readonly state: 'missing' | 'unread',
    message: string,
  ) {
    super(message);
  }
}

/** What one image's read found: the tag's digest and the platform's config. */
export interface ReadImage {
  readonly digest: string;
  readonly config: ImageConfig;
}

/** What the client spent, for the run's log and the limits. */
export interface Spent {
  requests: number;
  /** Manifest GETs on Docker Hub (its pull limit counts these). */
  hubPulls: number;
}

interface Challenge {
  readonly scheme: 'bearer' | 'basic';
  readonly params: Readonly<Record<string, string>>;
}

export class RegistryClient {
  readonly spent: Spent = { requests: 0, hubPulls: 0 };
  private readonly fetch: typeof fetch;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  /** Bearer tokens by host and scope, with when they stop. */
  private readonly tokens = new Map<string, { readonly token: string; readonly until: number }>();

  constructor(private readonly options: RegistryOptions) {
    this.fetch = options.fetch ?? globalThis.fetch;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** The digest a tag names now, by HEAD (no pull counted); undefined where the registry sends no digest header. */
  async digestOf(ref: ImageRef): Promise<string | undefined> {
    const response = await this.request(ref, `manifests/${ref.tag ?? 'latest'}`, 'HEAD');
    if (response.status === 404) throw this.notFound(ref, response);
    await response.body?.cancel();
    const digest = response.headers.get('docker-content-digest') ?? undefined;
    return digest && /^sha256:[a-f0-9]{64}$/.test(digest) ? digest : undefined;
  }

  /**
   * The image's config for `platform` (`linux/amd64`): the manifest at `reference` (a tag or digest), through an
   * index to the platform's manifest, then its config blob, each checked against its digest.
   */
  async read(ref: ImageRef, reference: string, platform: string): Promise<ReadImage> {
    const top = await this.manifest(ref, reference);
    let manifest = top.json;
    if (Array.isArray(manifest.manifests)) {
      const chosen = pickPlatform(manifest.manifests, platform);
      if ('problem' in chosen) throw new LookupFailure('unread', chosen.problem);
      manifest = (await this.manifest(ref, chosen.digest)).json;
    }
    if (manifest.schemaVersion === 1)
      throw new LookupFailure('unread', 'the registry serves a schema 1 manifest, which has no config to read');
    const digest = isObject(manifest.config) ? manifest.config.digest : undefined;
    if (typeof digest !== 'string' || !/^sha256:[a-f0-9]{64}$/.test(digest))
      throw new LookupFailure('unread', 'the manifest names no config blob (not an image manifest)');
    const blob = await this.request(ref, `blobs/${digest}`, 'GET');
    if (blob.status === 404)
      throw new LookupFailure('unread', `${registryName(ref)} lists a config blob it does not serve (${digest})`);
    const bytes = await readCapped(blob, 'config');
    checkDigest(bytes, digest, 'config');
    const config = readImageConfig(parseJson(bytes, 'config'));
    if (typeof config === 'string') throw new LookupFailure('unread', config);
    return { digest: top.digest, config };
  }

  private async manifest(ref: ImageRef, reference: string): Promise<{ digest: string; json: Record<string, unknown> }> {
    const response = await this.request(ref, `manifests/${reference}`, 'GET');
    if (response.status === 404) throw this.notFound(ref, response);
    if (!ref.registry) this.spent.hubPulls += 1;
    const bytes = await readCapped(response, 'manifest');
    const digest = reference.startsWith('sha256:')
      ? reference
      : (response.headers.get('docker-content-digest') ?? `sha256:${sha256(bytes)}`);
    if (reference.startsWith('sha256:')) checkDigest(bytes, reference, 'manifest');
    const json = parseJson(bytes, 'manifest');
    if (!isObject(json)) throw new LookupFailure('unread', 'the manifest is not a JSON object');
    return { digest, json };
  }

  /** A 404 from the manifests endpoint: the tag or repository does not exist, in the registry's own words. */
  private notFound(ref: ImageRef, response: Response): LookupFailure {
    void response.body?.cancel();
    return new LookupFailure(
      'missing',
      `${registryName(ref)} has no ${ref.tag ? `tag ${ref.tag} of ` : ''}${ref.repository} (404 manifest unknown)`,
    );
  }

  /** One API request, with authentication, redirects and retries; a 404 is returned, other failures thrown. */
  private async request(ref: ImageRef, path: string, method: 'GET' | 'HEAD'): Promise<Response> {
    const host = registryHost(ref);
    const scope = `repository:${repositoryPath(ref)}:pull`;
    let url = `https://${host}/v2/${repositoryPath(ref)}/${path}`;
    let authorization = this.tokens.get(`${host} ${scope}`);
    let authenticated = false;
    let redirects = 0;
    for (let attempt = 1; ; ) {
      const sameHost = new URL(url).host === host;
      const headers: Record<string, string> = { accept: ACCEPT };
      const token = authorization && authorization.until > this.now() ? authorization.token : undefined;
      if (sameHost && token) headers.authorization = token;
      const response = await this.send(ref, url, { method, headers });
      const status = response.status;
      if (status >= 300 && status < 400 && response.headers.has('location')) {
        void response.body?.cancel();
        if (++redirects > MAX_REDIRECTS)
          throw new LookupFailure('unread', `${registryName(ref)} redirected more than ${MAX_REDIRECTS} times`);
        const next = new URL(response.headers.get('location')!, url);
        if (next.protocol !== 'https:')
          throw new LookupFailure('unread', `${registryName(ref)} redirected to ${next.protocol} (only https is read)`);
        url = next.href;
        continue;
      }
      if (status === 401 && sameHost && !authenticated) {
        void response.body?.cancel();
        authenticated = true;
        const header = await this.authorize(ref, response.headers.get('www-authenticate'), scope);
        authorization = { token: header, until: Number.POSITIVE_INFINITY };
        continue;
      }
      if (status === 401 || status === 403) {
        void response.body?.cancel();
        const credentials = this.options.credentials?.(host);
        throw new LookupFailure(
          'unread',
          `${registryName(ref)} refused access (${status}): ${credentials ? 'the credentials the baseline names were not accepted' : 'a private image, or one that does not exist; name credentials for it under registries in the baseline'}`,
        );
      }
      if (status === 429 || status >= 500) {
        const wait = retryAfter(response.headers.get('retry-after'), this.now()) ?? 500 * 2 ** (attempt - 1);
        void response.body?.cancel();
        const what = status === 429 ? '429 too many requests' : `${status}`;
        if (attempt >= MAX_ATTEMPTS)
          throw new LookupFailure('unread', `${registryName(ref)} answered ${what} ${attempt} times`);
        if (this.now() + wait >= this.options.deadline)
          throw new LookupFailure(
            'unread',
            `${registryName(ref)} answered ${what} and asks to wait ${Math.ceil(wait / 1000)} s, past the lookup budget`,
          );
        await this.sleep(wait);
        attempt += 1;
        continue;
      }
      if (status === 404 || (status >= 200 && status < 300)) return response;
      void response.body?.cancel();
      throw new LookupFailure('unread', `${registryName(ref)} answered ${status}`);
    }
  }

  /** fetch within the deadline; a timeout or a network failure is a lookup failure that says which. */
  private async send(ref: ImageRef, url: string, init: { method: string; headers: Record<string, string> }) {
    const left = this.options.deadline - this.now();
    if (left <= 0) throw new LookupFailure('unread', 'the lookup budget was spent before this image');
    this.spent.requests += 1;
    try {
      return await this.fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(left) });
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'TimeoutError' || name === 'AbortError')
        throw new LookupFailure('unread', `${registryName(ref)} did not answer within the lookup budget`);
      throw new LookupFailure('unread', `cannot reach ${registryName(ref)} (${describe(error)})`);
    }
  }

  /** The Authorization header a 401's challenge asks for: a bearer token from its realm, or Basic credentials. */
  private async authorize(ref: ImageRef, header: string | null, scope: string): Promise<string> {
    const host = registryHost(ref);
    const challenge = parseChallenge(header ?? '');
    const credentials = this.options.credentials?.(host);
    const basic = credentials
      ? `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`
      : undefined;
    if (challenge?.scheme === 'basic') {
      if (basic) {
        this.tokens.set(`${host} ${scope}`, { token: basic, until: Number.POSITIVE_INFINITY });
        return basic;
      }
      throw new LookupFailure(
        'unread',
        `${registryName(ref)} asks for a user and password: name credentials for it under registries in the baseline`,
      );
    }
    const realm = challenge?.params.realm;
    if (!realm) throw new LookupFailure('unread', `${registryName(ref)} answered 401 without a challenge to answer`);
    let url: URL;
    try {
      url = new URL(realm);
    } catch {
      throw new LookupFailure('unread', `${registryName(ref)} names a token service that is not a URL (${realm})`);
    }
    if (url.protocol !== 'https:')
      throw new LookupFailure('unread', `${registryName(ref)} names a token service that is not https (${realm})`);
    if (challenge.params.service) url.searchParams.set('service', challenge.params.service);
    url.searchParams.set('scope', challenge.params.scope ?? scope);
    const cached = this.tokens.get(`${host} ${scope}`);
    if (cached && cached.until > this.now()) return cached.token;
    const response = await this.send(ref, url.href, {
      method: 'GET',
      headers: { accept: 'application/json', ...(basic ? { authorization: basic } : {}) },
    });
    if (response.status !== 200) {
      void response.body?.cancel();
      throw new LookupFailure(
        'unread',
        `${registryName(ref)}'s token service (${url.host}) answered ${response.status}${credentials ? ' to the credentials the baseline names' : ''}`,
      );
    }
    const body = parseJson(await readCapped(response, 'token'), 'token');
    const token = isObject(body) ? (body.token ?? body.access_token) : undefined;
    if (typeof token !== 'string' || token === '')
      throw new LookupFailure('unread', `${registryName(ref)}'s token service answered no token`);
    const seconds = isObject(body) && typeof body.expires_in === 'number' ? body.expires_in : 60;
    const bearer = `Bearer ${token}`;
    this.tokens.set(`${host} ${scope}`, { token: bearer, until: this.now() + Math.max(0, seconds - 5) * 1000 });
    return bearer;
  }
}

/** The first Bearer or Basic challenge of a WWW-Authenticate header, with its parameters (RFC 9110 §11.6.1). */
export function parseChallenge(header: string): Challenge | undefined {
  const match = /\b(bearer|basic)\b\s*(.*)$/i.exec(header);
  if (!match) return undefined;
  const params: Record<string, string> = {};
  for (const [, key, quoted, bare] of match[2]!.matchAll(/([a-z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/gi))
    params[key!.toLowerCase()] = quoted !== undefined ? quoted.replace(/\\(.)/g, '$1') : bare!;
  return { scheme: match[1]!.toLowerCase() as Challenge['scheme'], params };
}

/** Retry-After as milliseconds from now: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function retryAfter(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The digest of the index entry for `platform` (`linux/amd64`, `linux/arm64`), or why there is none. */
export function pickPlatform(
  entries: readonly unknown[],
  platform: string,
): { readonly digest: string } | { readonly problem: string } {
  const [os, architecture, variant] = platform.split('/');
  const offered: string[] = [];
  for (const entry of entries) {
    if (!isObject(entry) || !isObject(entry.platform) || typeof entry.digest !== 'string') continue;
    const p = entry.platform;
    if (p.os === 'unknown') continue; // attestation manifests (buildx) carry unknown/unknown
    offered.push(`${String(p.os)}/${String(p.architecture)}${p.variant ? `/${String(p.variant)}` : ''}`);
    if (p.os !== os || p.architecture !== architecture) continue;
    // linux/arm64 is linux/arm64/v8 unless it says another variant.
    if (variant && p.variant !== undefined && p.variant !== variant) continue;
    return { digest: entry.digest };
  }
  return {
    problem: `the image has no ${platform} build (its index lists ${offered.length ? offered.join(', ') : 'none'})`,
  };
}

async function readCapped(response: Response, what: string): Promise<Uint8Array> {
  const length = Number(response.headers.get('content-length'));
  if (Number.isFinite(length) && length > MAX_BYTES) {
    void response.body?.cancel();
    throw new LookupFailure('unread', `the ${what} is larger than ${MAX_BYTES / 1024 / 1024} MiB (${length} bytes)`);
  }
  if (!response.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body.getReader();
  for (;;) {
    let next: ReadableStreamReadResult<Uint8Array>;
    try {
      next = await reader.read();
    } catch (error) {
      throw new LookupFailure('unread', `the ${what} could not be read to its end (${describe(error)})`);
    }
    if (next.done) break;
    size += next.value.byteLength;
    if (size > MAX_BYTES) {
      await reader.cancel();
      throw new LookupFailure('unread', `the ${what} is larger than ${MAX_BYTES / 1024 / 1024} MiB`);
    }
    chunks.push(next.value);
  }
  return Buffer.concat(chunks);
}

function parseJson(bytes: Uint8Array, what: string): unknown {
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    throw new LookupFailure('unread', `the ${what} is not valid JSON`);
  }
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function checkDigest(bytes: Uint8Array, digest: string, what: string): void {
  if (`sha256:${sha256(bytes)}` !== digest)
    throw new LookupFailure('unread', `the ${what} the registry sent does not match its digest ${digest}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message ?? String(error);
}
