/**
 * A fake container registry that answers as the documents say a registry does, reached through an injected fetch
 * (no sockets): the OCI Distribution Spec v1.1.0 pull API
 * (https://github.com/opencontainers/distribution-spec/blob/v1.1.0/spec.md), the token authentication spec
 * (https://distribution.github.io/distribution/spec/auth/token/), and the failure modes registries document:
 *
 * - every /v2/ request without a valid token: 401 `WWW-Authenticate: Bearer realm="…",service="…",scope="…"` and an
 *   `UNAUTHORIZED` error body; the realm answers `{"token","access_token","expires_in","issued_at"}`, anonymously
 *   for public repositories and to Basic credentials for private ones (401 otherwise). Docker Hub answers 401 for a
 *   repository that does not exist or is private (`hubStyle`), other registries 404 `NAME_UNKNOWN`.
 * - manifests by tag or digest, GET and HEAD, with `Content-Type` the manifest's media type and
 *   `Docker-Content-Digest`; an index (OCI image index or Docker manifest list) for multi-platform images; 404
 *   `MANIFEST_UNKNOWN` for a tag it does not have.
 * - blobs by digest, 200 or (with `redirectBlobs`) 307 to storage on another host whose URL is signed: like S3, that
 *   host refuses a request that also carries an Authorization header (400).
 * - 429 `TOOMANYREQUESTS` with Retry-After (Docker Hub's pull limit, https://docs.docker.com/docker-hub/usage/pulls/)
 *   and 5xx, queued per request with `fault`.
 */
import { createHash } from 'node:crypto';

const INDEX = 'application/vnd.oci.image.index.v1+json';
const MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const DOCKER_LIST = 'application/vnd.docker.distribution.manifest.list.v2+json';
const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';

export interface FakeImage {
  /** Platform (`linux/amd64`) → the image config JSON for it. One platform: a plain manifest, no index. */
  readonly platforms: Readonly<Record<string, unknown>>;
  /** Serve the index as Docker's manifest list, and manifests as Docker's v2 (default: OCI). */
  readonly docker?: boolean;
}

export interface Fault {
  /** Which requests: a path fragment (`/manifests/`, `/blobs/`, `/token`). */
  readonly match: string;
  readonly status: number;
  readonly retryAfter?: string;
  readonly body?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface FakeRegistryOptions {
  /** The registry's host (`registry.example`, `registry-1.docker.io`). */
  readonly host: string;
  /** The token service's URL (default `https://auth.<host>/token`). */
  readonly realm?: string;
  readonly service?: string;
  /** Credentials for private repositories. */
  readonly user?: { readonly username: string; readonly password: string };
  /** Answer a Basic challenge instead of Bearer tokens (a registry with htpasswd auth). */
  readonly basic?: boolean;
  /** Docker Hub's way with unknown or private repositories: 401 insufficient_scope, not 404. */
  readonly hubStyle?: boolean;
  /** Serve blobs by a 307 redirect to signed storage on another host. */
  readonly redirectBlobs?: boolean;
  /** Send no Docker-Content-Digest header (the spec makes it optional). */
  readonly noDigestHeader?: boolean;
}

interface Stored {
  readonly bytes: Buffer;
  readonly mediaType: string;
}

export class FakeRegistry {
  /** Every request it answered, as `METHOD url [authorization scheme]`. */
  readonly requests: string[] = [];
  private readonly manifests = new Map<string, Stored>();
  private readonly tags = new Map<string, string>();
  private readonly blobs = new Map<string, Buffer>();
  private readonly privateRepos = new Set<string>();
  private readonly faults: Fault[] = [];
  private readonly issued = new Set<string>();
  private readonly realm: string;
  private readonly service: string;
  private tokenCount = 0;

  constructor(private readonly options: FakeRegistryOptions) {
    this.realm = options.realm ?? `https://auth.${options.host}/token`;
    this.service = options.service ?? options.host;
  }

  /** Publish `repository:tag`; returns the tag's digest (the index's, for several platforms). */
  push(repository: string, tag: string, image: FakeImage, { isPrivate = false } = {}): string {
    if (isPrivate) this.privateRepos.add(repository);
    const entries = Object.entries(image.platforms).map(([platform, config]) => {
      const configBytes = Buffer.from(JSON.stringify(config));
      const configDigest = this.storeBlob(configBytes);
      const manifest = {
        schemaVersion: 2,
        mediaType: image.docker ? DOCKER_MANIFEST : MANIFEST,
        config: {
          mediaType: image.docker
            ? 'application/vnd.docker.container.image.v1+json'
            : 'application/vnd.oci.image.config.v1+json',
          digest: configDigest,
          size: configBytes.length,
        },
        layers: [],
      };
      const [os, architecture, variant] = platform.split('/');
      const digest = this.storeManifest(repository, manifest, manifest.mediaType);
      return { digest, platform: { os, architecture, ...(variant ? { variant } : {}) } };
    });
    let digest = entries[0]!.digest;
    if (entries.length > 1) {
      const index = {
        schemaVersion: 2,
        mediaType: image.docker ? DOCKER_LIST : INDEX,
        manifests: [
          ...entries.map((entry) => ({
            mediaType: image.docker ? DOCKER_MANIFEST : MANIFEST,
            digest: entry.digest,
            size: 0,
            platform: entry.platform,
          })),
          // buildx attestations ride along in real indexes with unknown/unknown platforms.
          {
            mediaType: MANIFEST,
            digest: entries[0]!.digest,
            size: 0,
            platform: { os: 'unknown', architecture: 'unknown' },
          },
        ],
      };
      digest = this.storeManifest(repository, index, index.mediaType);
    }
    this.tags.set(`${repository}:${tag}`, digest);
    return digest;
  }

  /** Store raw manifest bytes under a tag (a malformed or huge manifest). */
  pushRaw(repository: string, tag: string, bytes: Buffer, mediaType = MANIFEST): void {
    const digest = `sha256:${sha256(bytes)}`;
    this.manifests.set(`${repository}@${digest}`, { bytes, mediaType });
    this.tags.set(`${repository}:${tag}`, digest);
  }

  /** The next request whose URL contains `fault.match` is answered with the fault (faults queue in order). */
  fault(...faults: Fault[]): void {
    this.faults.push(...faults);
  }

  /** Whether a URL is this registry's (its API, its token service or its blob storage). */
  answers(url: URL): boolean {
    return (
      url.host === this.options.host || url.href.startsWith(this.realm) || url.host === `storage.${this.options.host}`
    );
  }

  /** Tokens the token service issued. */
  get tokens(): number {
    return this.tokenCount;
  }

  /** A fetch that answers for this registry, its token service and its blob storage; anything else is refused. */
  readonly fetch: typeof fetch = async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const method = (init?.method ?? 'GET').toUpperCase();
    const headers = new Headers(init?.headers);
    const authorization = headers.get('authorization') ?? '';
    this.requests.push(`${method} ${url.href}${authorization ? ` [${authorization.split(' ')[0]}]` : ''}`);
    if (init?.signal?.aborted) throw init.signal.reason;
    const faultIndex = this.faults.findIndex((fault) => url.href.includes(fault.match));
    if (faultIndex >= 0) {
      const [fault] = this.faults.splice(faultIndex, 1);
      return new Response(fault!.body ?? errors(fault!.status === 429 ? 'TOOMANYREQUESTS' : 'UNAVAILABLE'), {
        status: fault!.status,
        headers: { ...(fault!.retryAfter ? { 'retry-after': fault!.retryAfter } : {}), ...fault!.headers },
      });
    }
    if (url.href.startsWith(this.realm)) return this.token(url, authorization);
    if (url.host === `storage.${this.options.host}`) return this.storage(url, authorization, method);
    if (url.host !== this.options.host) throw new TypeError(`fetch failed (no route to ${url.host})`);
    return this.api(url, method, headers, authorization);
  };

  private api(url: URL, method: string, headers: Headers, authorization: string): Response {
    const match = /^\/v2\/(.+)\/(manifests|blobs)\/([^/]+)$/.exec(url.pathname);
    if (!match) return new Response(errors('UNSUPPORTED'), { status: 404 });
    const [, repository, kind, reference] = match as unknown as [string, string, string, string];
    const known = [...this.tags.keys()].some((key) => key.startsWith(`${repository}:`));
    const challenge = `repository:${repository}:pull`;
    if (!this.authorized(authorization, repository)) {
      return new Response(errors('UNAUTHORIZED'), {
        status: 401,
        headers: {
          'www-authenticate': this.options.basic
            ? `Basic realm="${this.options.host}"`
            : `Bearer realm="${this.realm}",service="${this.service}",scope="${challenge}"`,
          'content-type': 'application/json',
        },
      });
    }
    if (!known && this.options.hubStyle)
      return new Response(errors('UNAUTHORIZED'), {
        status: 401,
        headers: {
          'www-authenticate': `Bearer realm="${this.realm}",service="${this.service}",scope="${challenge}",error="insufficient_scope"`,
        },
      });
    if (!known) return new Response(errors('NAME_UNKNOWN'), { status: 404 });
    if (kind === 'blobs') {
      const blob = this.blobs.get(reference);
      if (!blob) return new Response(errors('BLOB_UNKNOWN'), { status: 404 });
      if (this.options.redirectBlobs)
        return new Response(null, {
          status: 307,
          headers: { location: `https://storage.${this.options.host}/blobs/${reference}?X-Signature=signed` },
        });
      return new Response(method === 'HEAD' ? null : new Uint8Array(blob), {
        status: 200,
        headers: { 'content-length': String(blob.length), 'docker-content-digest': reference },
      });
    }
    const digest = reference.startsWith('sha256:') ? reference : this.tags.get(`${repository}:${reference}`);
    const stored = digest ? this.manifests.get(`${repository}@${digest}`) : undefined;
    if (!digest || !stored) return new Response(errors('MANIFEST_UNKNOWN'), { status: 404 });
    const accept = headers.get('accept') ?? '';
    if (!accept.split(',').some((type) => type.trim() === stored.mediaType))
      return new Response(errors('MANIFEST_UNKNOWN'), { status: 404 });
    return new Response(method === 'HEAD' ? null : new Uint8Array(stored.bytes), {
      status: 200,
      headers: {
        'content-type': stored.mediaType,
        'content-length': String(stored.bytes.length),
        ...(this.options.noDigestHeader ? {} : { 'docker-content-digest': digest }),
      },
    });
  }

  private authorized(authorization: string, repository: string): boolean {
    if (this.options.basic) {
      if (!this.privateRepos.has(repository)) return true;
      return authorization === basic(this.options.user);
    }
    const token = /^Bearer (.+)$/.exec(authorization)?.[1];
    return token !== undefined && this.issued.has(`${token} ${repository}`);
  }

  private token(url: URL, authorization: string): Response {
    const scope = url.searchParams.get('scope') ?? '';
    const service = url.searchParams.get('service');
    const repository = /^repository:(.+):pull$/.exec(scope)?.[1];
    if (service !== this.service || !repository) return new Response('{"details":"bad request"}', { status: 400 });
    if (this.privateRepos.has(repository) && authorization !== basic(this.options.user))
      return new Response('{"details":"incorrect username or password"}', { status: 401 });
    const token = `token-${++this.tokenCount}`;
    this.issued.add(`${token} ${repository}`);
    return Response.json({ token, access_token: token, expires_in: 300, issued_at: '2026-12-05T00:00:00Z' });
  }

  private storage(url: URL, authorization: string, method: string): Response {
    if (authorization)
      return new Response(
        '<Error><Code>InvalidArgument</Code><Message>Only one auth mechanism allowed</Message></Error>',
        {
          status: 400,
        },
      );
    if (url.searchParams.get('X-Signature') !== 'signed') return new Response('', { status: 403 });
    const blob = this.blobs.get(url.pathname.replace('/blobs/', ''));
    if (!blob) return new Response('', { status: 404 });
    return new Response(method === 'HEAD' ? null : new Uint8Array(blob), { status: 200 });
  }

  private storeBlob(bytes: Buffer): string {
    const digest = `sha256:${sha256(bytes)}`;
    this.blobs.set(digest, bytes);
    return digest;
  }

  private storeManifest(repository: string, manifest: unknown, mediaType: string): string {
    const bytes = Buffer.from(JSON.stringify(manifest));
    const digest = `sha256:${sha256(bytes)}`;
    this.manifests.set(`${repository}@${digest}`, { bytes, mediaType });
    return digest;
  }
}

/** An image config with these environment variables, as `docker inspect` shows configs. */
export function imageConfig(env: Readonly<Record<string, string>>, platform = 'linux/amd64'): unknown {
  const [os, architecture, variant] = platform.split('/');
  return {
    architecture,
    os,
    ...(variant ? { variant } : {}),
    config: { Env: Object.entries(env).map(([key, value]) => `${key}=${value}`), Labels: {} },
    rootfs: { type: 'layers', diff_ids: [] },
  };
}

function errors(code: string): string {
  return JSON.stringify({ errors: [{ code, message: code.toLowerCase().replace(/_/g, ' '), detail: null }] });
}

function basic(user: { readonly username: string; readonly password: string } | undefined): string {
  return user ? `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}` : '';
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** One fetch for several fake registries: each request goes to the registry whose hosts it names. */
export function registriesFetch(...registries: readonly FakeRegistry[]): typeof fetch {
  return async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const owner = registries.find((registry) => registry.answers(url));
    if (!owner) throw new TypeError(`fetch failed (no route to ${url.host})`);
    return owner.fetch(input, init);
  };
}
