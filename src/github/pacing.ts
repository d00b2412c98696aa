/**
 * Writes paced as GitHub asks, in the order that gets verdicts out soonest.
 *
 * GitHub's guidance ("Best practices for using the REST API", docs.github.com/en/rest/using-the-rest-api/
 * best-practices-for-using-the-rest-api): "If you are making a large number of POST, PATCH, PUT, or DELETE requests
 * for a mutative operation, wait at least one second between each request"; requests that create content which
 * triggers notifications further apart; a GraphQL query is a read (only a mutation mutates). The secondary limits
 * are per user or installation, so each installation has its own lanes.
 *
 * @octokit/plugin-throttling (which Probot uses) puts every write of the process in one lane, counts each GraphQL
 * query as a write, and serves the lane first come, first served: thirty pull requests opened at once each wait for
 * the other twenty-nine's writes before their own, so the first verdict lands after thirty seconds. Here each
 * request carries the place in line of the check it belongs to (`inCheckOrder`, taken when the check starts): a
 * lane serves the earliest check's writes first, so one pull request's check is finished before the next one's
 * writes start, and a request outside any check takes its place in line when it is made.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * How far apart the App spaces its requests to GitHub, and how long one second of a `Retry-After` is waited.
 * GitHub's guidance ("Best practices for using the REST API": "If you're making a large number of POST, PATCH,
 * PUT, or DELETE requests … wait at least one second between each request"; requests that create content and notify
 * people further apart) is what @octokit/plugin-throttling applies by default: 1 s between writes (it counts GraphQL
 * queries too) and 3 s between requests that notify. The App runs at that pace; only a GitHub Enterprise Server
 * without secondary rate limits, or a local fake GitHub in the tests, may be paced faster (GITHUB_WRITE_INTERVAL_MS).
 */
export interface Pace {
  /** Between two writes (and GraphQL queries) of one installation. */
  readonly writeMs: number;
  /** Between two writes that notify people (comments, reviews, issues). */
  readonly notificationMs: number;
  /** One second of a wait GitHub asks for (Retry-After, X-RateLimit-Reset). */
  readonly secondMs: number;
}

type RequestKind = 'read' | 'write' | 'notify';

/**
 * Routes whose writes notify people (the list plugin-throttling keeps, from GitHub's guidance): comments, reviews,
 * issues, pull requests, releases, invitations, discussions.
 */
const NOTIFYING = [
  /^\/repos\/[^/]+\/[^/]+\/issues$/,
  /^\/repos\/[^/]+\/[^/]+\/issues\/[^/]+\/comments$/,
  /^\/repos\/[^/]+\/[^/]+\/pulls$/,
  /^\/repos\/[^/]+\/[^/]+\/pulls\/[^/]+\/(comments|reviews|requested_reviewers|merge)$/,
  /^\/repos\/[^/]+\/[^/]+\/pulls\/[^/]+\/comments\/[^/]+\/replies$/,
  /^\/repos\/[^/]+\/[^/]+\/releases$/,
  /^\/orgs\/[^/]+\/(invitations|teams\/[^/]+\/discussions)/,
  /^\/teams\/[^/]+\/discussions/,
];

/** A GraphQL document whose operation is a mutation (comments and whitespace before it allowed). */
const MUTATION = /^(?:\s|#[^\n]*\n)*mutation\b/;

/** Whether a request is a read, a write, or a write that notifies people. */
export function requestKind(method: string, url: string, query?: unknown): RequestKind {
  const verb = method.toUpperCase();
  if (verb === 'GET' || verb === 'HEAD') return 'read';
  const path = url
    .replace(/^https?:\/\/[^/]+/, '')
    .replace(/^\/api\/v3/, '')
    .split('?')[0]!;
  if (path === '/graphql' || path === '/api/graphql')
    return typeof query === 'string' && MUTATION.test(query) ? 'write' : 'read';
  // The App's own requests with its JWT (installation tokens, the manifest exchange, redeliveries) create no content.
  if (/^\/app(\/|-manifests\/)/.test(path)) return 'read';
  return NOTIFYING.some((route) => route.test(path)) ? 'notify' : 'write';
}

const order = new AsyncLocalStorage<{ readonly ticket: number }>();
let tickets = 0;

/** Run `task` as one check: its writes go before those of checks started after it. */
export function inCheckOrder<T>(task: () => Promise<T>): Promise<T> {
  return order.run({ ticket: ++tickets }, task);
}

/** The place in line of a request made now. */
function ticket(): number {
  return order.getStore()?.ticket ?? ++tickets;
}

/** One lane: requests start at least `spacingMs` apart, the earliest place in line first. */
class Lane {
  private readonly waiting: { readonly ticket: number; readonly seq: number; readonly go: () => void }[] = [];
  private nextStart = 0;
  private timer: NodeJS.Timeout | undefined;
  private seq = 0;

  constructor(private readonly spacingMs: number) {}

  /** Resolves when the request may start. */
  take(place: number): Promise<void> {
    return new Promise((go) => {
      this.waiting.push({ ticket: place, seq: this.seq++, go });
      this.pump();
    });
  }

  get idle(): boolean {
    return this.waiting.length === 0 && Date.now() >= this.nextStart;
  }

  private pump(): void {
    if (this.timer || this.waiting.length === 0) return;
    const wait = this.nextStart - Date.now();
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.pump();
      }, wait);
      return;
    }
    let best = 0;
    for (let i = 1; i < this.waiting.length; i++) {
      const a = this.waiting[i]!;
      const b = this.waiting[best]!;
      if (a.ticket < b.ticket || (a.ticket === b.ticket && a.seq < b.seq)) best = i;
    }
    const [chosen] = this.waiting.splice(best, 1);
    this.nextStart = Date.now() + this.spacingMs;
    chosen!.go();
    this.pump();
  }
}

/** The write and notification lanes of every installation, at one pace. */
export class Lanes {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly pace: Pace) {}

  private lane(key: string, spacingMs: number): Lane {
    let lane = this.lanes.get(key);
    if (!lane) {
      // Lanes of installations gone quiet are dropped as new ones are made (a few thousand at most).
      if (this.lanes.size > 1000) for (const [old, candidate] of this.lanes) if (candidate.idle) this.lanes.delete(old);
      lane = new Lane(spacingMs);
      this.lanes.set(key, lane);
    }
    return lane;
  }

  /** Wait for a request's turn: none for a read; the installation's write lane, and its notification lane. */
  async turn(installation: string, kind: RequestKind): Promise<void> {
    if (kind === 'read') return;
    const place = ticket();
    if (kind === 'notify') await this.lane(`${installation}/notify`, this.pace.notificationMs).take(place);
    await this.lane(`${installation}/write`, this.pace.writeMs).take(place);
  }
}

type Wrap = (
  name: 'request',
  wrapper: (
    request: (options: Record<string, unknown>) => Promise<unknown>,
    options: Record<string, unknown>,
  ) => Promise<unknown>,
) => void;

/** "Create an installation access token for an app" (the App's JWT). */
const TOKEN_REQUEST = /\/app\/installations\/[^/]+\/access_tokens$/;

/**
 * Token requests in flight, by installation and body: @octokit/auth-app asks for a token whenever its cache has none,
 * so checks that start together would each create one; they share the first one's answer instead.
 */
const tokensInFlight = new Map<string, Promise<unknown>>();

/** An Octokit plugin pacing each installation's writes in `lanes` (an Octokit without an installation: 'app'). */
export function pacedBy(lanes: Lanes) {
  return (octokit: { hook: { wrap: Wrap } }, options: { auth?: unknown }): void => {
    const installationId = (options.auth as { installationId?: number | string } | undefined)?.installationId;
    const installation = installationId === undefined ? 'app' : String(installationId);
    octokit.hook.wrap('request', async (request, requestOptions) => {
      const method = String(requestOptions.method ?? 'GET');
      const url = String(requestOptions.url ?? '');
      if (method === 'POST' && TOKEN_REQUEST.test(url.split('?')[0]!)) {
        const key = JSON.stringify([
          url,
          requestOptions.installation_id,
          requestOptions.repositories ?? null,
          requestOptions.repository_ids ?? null,
          requestOptions.permissions ?? null,
        ]);
        let shared = tokensInFlight.get(key);
        if (!shared) {
          shared = request(requestOptions).finally(() => tokensInFlight.delete(key));
          tokensInFlight.set(key, shared);
        }
        return shared;
      }
      const kind = requestKind(
        method,
        url,
        requestOptions.query ?? (requestOptions.data as { query?: unknown } | undefined)?.query,
      );
      await lanes.turn(installation, kind);
      return request(requestOptions);
    });
  };
}
