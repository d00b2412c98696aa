/**
 * The App's HTTP server (`npm start`), in front of Probot's webhook handling so that no stranger can hurt it:
 *
 * - production (NODE_ENV=production) refuses to start without APP_ID, a private key and a WEBHOOK_SECRET of its
 *   own (Probot's documented default secret is "development", which anyone can sign with);
 * - a webhook body is capped before it is buffered (WEBHOOK_MAX_BYTES, default 10 MiB; GitHub caps payloads at
 *   25 MB, and the events the App handles are far smaller), must arrive within WEBHOOK_BODY_TIMEOUT_MS (10 s), and
 *   its X-Hub-Signature-256 is verified over the raw bytes before it is parsed; a rejected body is never logged;
 * - a verified delivery is answered 202 at once and handled after the answer (GitHub waits 10 s at most); a signed
 *   payload without the fields its event needs gets 400 with a plain reason, never an internal error;
 * - /metrics answers only with METRICS_TOKEN as a bearer token, or on its own METRICS_PORT; outside production it is
 *   open. /healthz stays cheap;
 * - a 202 is a promise: with Redis (`store`), a delivery is answered 202 only once it is stored for the workers
 *   (503 if Redis cannot take it); without, an installation has at most as many deliveries waiting in memory as
 *   its writes can finish within the drain window (`drainableChecks`), all installations at most WEBHOOK_BACKLOG
 *   (50), and the next gets 503 (GitHub records it as failed, and the App's redelivery scan asks for it again)
 *   rather than an answer the App cannot keep;
 * - bodies not yet verified hold at most WEBHOOK_UNVERIFIED_BYTES (32 MiB) together across connections (503
 *   past it), and at most MAX_CONNECTIONS (1,024) sockets are open, so a few hundred idle senders cannot make
 *   the server hold gigabytes;
 * - SIGTERM (and SIGINT) drain: new deliveries get 503 (the server keeps listening, so GitHub sees an answer, not a
 *   refused connection), /healthz says draining, the deliveries in hand and the in-process job queue finish up to
 *   DRAIN_TIMEOUT_MS (25 s: within Kubernetes' default terminationGracePeriodSeconds of 30), then the server
 *   closes.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Probot } from 'probot';
import { metrics } from '../util/metrics.js';

export const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
/** Unverified bytes held across every connection at once. */
export const DEFAULT_MAX_UNVERIFIED_BYTES = 32 * 1024 * 1024;
/** Deliveries accepted and waiting in memory (without Redis). */
export const DEFAULT_BACKLOG = 50;
/** How long SIGTERM waits for the work in hand: within Kubernetes' default grace period of 30 s, with room to exit. */
export const DEFAULT_DRAIN_MS = 25_000;

/**
 * How many checks of one installation can finish within `drainMs`. Its writes share one lane (pacing.ts): a check
 * needs up to two writes (the run, a review) and one notifying write (the review), so it holds its lanes for
 * max(2 × write, notification) — 3 s at GitHub's pace; a fifth of the window is left for reads and the gate.
 */
export function drainableChecks(
  drainMs: number,
  pace: { readonly writeMs: number; readonly notificationMs: number },
): number {
  const perCheck = Math.max(2 * pace.writeMs, pace.notificationMs, 1);
  return Math.max(1, Math.floor((drainMs * 0.8) / perCheck));
}
export const DEFAULT_MAX_CONNECTIONS = 1024;
const PROBOT_DEFAULT_SECRET = 'development';

/** What is wrong with the environment for production, one line each (empty: fine). */
export function productionProblems(env: NodeJS.ProcessEnv): string[] {
  if (env.NODE_ENV !== 'production') return [];
  const problems: string[] = [];
  if (!env.APP_ID) problems.push('APP_ID is not set');
  if (!env.PRIVATE_KEY && !env.PRIVATE_KEY_PATH) problems.push('neither PRIVATE_KEY nor PRIVATE_KEY_PATH is set');
  if (!env.WEBHOOK_SECRET)
    problems.push(
      "WEBHOOK_SECRET is not set (without it anyone can send webhooks signed with Probot's public default)",
    );
  else if (env.WEBHOOK_SECRET === PROBOT_DEFAULT_SECRET)
    problems.push('WEBHOOK_SECRET is Probot\'s public default "development"');
  return problems;
}

/** Top-level fields each handled event needs; other events are accepted and ignored by the App. */
const REQUIRED: ReadonlyMap<string, readonly string[]> = new Map([
  ['pull_request', ['action', 'pull_request', 'repository', 'installation']],
  ['check_suite', ['action', 'check_suite', 'repository', 'installation']],
  ['check_run', ['action', 'check_run', 'repository', 'installation']],
  ['issue_comment', ['action', 'issue', 'comment', 'repository', 'installation']],
  ['push', ['ref', 'after', 'repository', 'installation']],
  ['installation', ['action', 'installation']],
  ['installation_repositories', ['action', 'installation']],
]);

export interface ServerOptions {
  readonly probot: Probot;
  /** Handlers for everything that is not a webhook (the self-service page, /healthz, /metrics). */
  readonly handlers: readonly ((req: IncomingMessage, res: ServerResponse) => Promise<boolean> | boolean)[];
  readonly secret: string;
  readonly webhookPath?: string;
  readonly maxBytes?: number;
  readonly bodyTimeoutMs?: number;
  readonly metricsToken?: string;
  /** Serve /metrics on the main port without a token (outside production). */
  readonly openMetrics?: boolean;
  /** Waits for queued jobs when draining. */
  readonly idle?: () => Promise<void>;
  /** Stores a verified delivery durably (Redis) before it is answered 202; its workers then run it. */
  readonly store?: (delivery: {
    readonly id: string;
    readonly name: string;
    readonly payload: Record<string, unknown>;
  }) => Promise<void>;
  /** Deliveries that may wait in memory (without `store`). */
  readonly backlog?: number;
  /** Of them, deliveries of one installation (its writes share one lane: see drainableChecks). */
  readonly backlogPerInstallation?: number;
  /** Bytes of bodies not yet verified, across all connections. */
  readonly maxUnverifiedBytes?: number;
  readonly maxConnections?: number;
}

export interface AppServer {
  readonly server: Server;
  /** Stop taking work, finish what is in hand (at most `timeoutMs`), close. Resolves true when all finished. */
  drain(timeoutMs: number): Promise<boolean>;
}

export function createAppServer(options: ServerOptions): AppServer {
  const path = options.webhookPath ?? '/api/github/webhooks';
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const bodyTimeoutMs = options.bodyTimeoutMs ?? 10_000;
  const log = options.probot.log;
  const inFlight = new Set<Promise<unknown>>();
  const backlog = options.backlog ?? DEFAULT_BACKLOG;
  const perInstallation = options.backlogPerInstallation ?? backlog;
  /** Deliveries in hand per installation (without `store`). */
  const held = new Map<number, number>();
  const unverified = { bytes: 0, limit: options.maxUnverifiedBytes ?? DEFAULT_MAX_UNVERIFIED_BYTES };
  let draining = false;

  const reply = (res: ServerResponse, status: number, body: Record<string, unknown>, close = false): void => {
    if (res.headersSent) return;
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      ...(close ? { connection: 'close' } : {}),
    });
    res.end(`${JSON.stringify(body)}\n`);
  };

  const receive = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const id = header(req, 'x-github-delivery');
    const name = header(req, 'x-github-event');
    const signature = header(req, 'x-hub-signature-256');
    const refuse = (status: number, error: string): void => {
      reply(res, status, { error });
      lingerAndDrop(req);
    };
    if (draining) return refuse(503, 'shutting down; GitHub can redeliver this delivery');
    if (!options.store && inFlight.size >= backlog)
      return refuse(503, `busy: ${inFlight.size} deliveries are waiting to be checked; GitHub can redeliver this one`);
    if (!id || !name) return refuse(400, 'X-GitHub-Delivery and X-GitHub-Event headers are required');
    if (!signature || !/^sha256=[0-9a-f]{64}$/.test(signature))
      return refuse(401, 'X-Hub-Signature-256 is missing or malformed');
    const declared = Number(req.headers['content-length'] ?? Number.NaN);
    if (Number.isFinite(declared) && declared > maxBytes)
      return refuse(413, `the body is larger than ${maxBytes} bytes`);
    const body = await readCapped(req, maxBytes, bodyTimeoutMs, unverified);
    if (body === 'too-large') return refuse(413, `the body is larger than ${maxBytes} bytes`);
    if (body === 'timeout') return refuse(408, `the body did not arrive within ${bodyTimeoutMs / 1000} s`);
    if (body === 'crowded')
      return refuse(503, 'busy: too many bodies are being received at once; GitHub can redeliver this delivery');
    if (body === 'aborted') return;
    const expected = Buffer.from(`sha256=${createHmac('sha256', options.secret).update(body).digest('hex')}`);
    if (expected.length !== signature.length || !timingSafeEqual(expected, Buffer.from(signature))) {
      log.warn(
        { deliveryId: id.slice(0, 64), event: name.slice(0, 64) },
        'webhook rejected: the signature does not match',
      );
      return refuse(401, 'the signature does not match');
    }
    let payload: Record<string, unknown>;
    try {
      payload = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      if (!payload || typeof payload !== 'object' || Array.isArray(payload)) throw new Error('not an object');
    } catch {
      return refuse(400, 'the body is not a JSON object');
    }
    const needed = REQUIRED.get(name) ?? [];
    const missing = needed.filter((field) => payload[field] === undefined || payload[field] === null);
    if (missing.length > 0) return refuse(400, `a ${name} event needs ${missing.join(', ')}`);
    if (options.store) {
      // Durable: answered only once Redis holds it; any replica's worker runs it, after a restart too.
      try {
        await options.store({ id, name, payload });
      } catch (error) {
        log.error(
          { deliveryId: id, event: name, err: { message: (error as Error).message } },
          'delivery could not be stored; answered 503',
        );
        return refuse(503, 'the durable queue (Redis) cannot take this delivery now; GitHub can redeliver it');
      }
      reply(res, 202, { accepted: id, stored: true });
      return;
    }
    const installation = Number((payload.installation as { id?: unknown } | undefined)?.id ?? 0) || 0;
    const holding = held.get(installation) ?? 0;
    if (holding >= perInstallation)
      return refuse(
        503,
        `busy: ${holding} deliveries of this installation are waiting (what its writes can finish within the drain window); GitHub can redeliver this one`,
      );
    held.set(installation, holding + 1);
    reply(res, 202, { accepted: id });
    const work = options.probot.webhooks
      .receive({ id, name, payload } as never)
      .catch((error: unknown) =>
        log.error(
          { deliveryId: id, event: name, err: { message: error instanceof Error ? error.message : String(error) } },
          'webhook handler failed',
        ),
      )
      .finally(() => {
        inFlight.delete(work);
        const left = (held.get(installation) ?? 1) - 1;
        if (left > 0) held.set(installation, left);
        else held.delete(installation);
      });
    inFlight.add(work);
  };

  // Slow clients: headers within 10 s, the whole request within 30 s, checked every 2 s (Node's default check
  // interval of 30 s let a slow body hold its socket for a minute).
  const server = createServer(
    { headersTimeout: 10_000, requestTimeout: 30_000, connectionsCheckingInterval: 2_000 },
    (req, res) => {
      const url = (req.url ?? '/').split('?')[0];
      if (url === '/healthz' && draining) {
        reply(res, 503, { status: 'draining' });
        return;
      }
      if (url === path && req.method === 'POST') {
        void receive(req, res).catch((error: Error) => {
          log.error({ err: { message: error.message } }, 'webhook receiver failed');
          reply(res, 500, { error: 'internal error' }, true);
        });
        return;
      }
      if (url === '/metrics' && !options.openMetrics) {
        const auth = req.headers.authorization ?? '';
        const token = options.metricsToken;
        if (
          !token ||
          auth.length !== token.length + 7 ||
          !timingSafeEqual(Buffer.from(auth), Buffer.from(`Bearer ${token}`))
        ) {
          reply(res, token ? 401 : 404, { error: token ? 'a bearer token is required' : 'not found' });
          return;
        }
      }
      void (async () => {
        for (const handler of options.handlers) if (await handler(req, res)) return;
        reply(res, 404, { error: 'not found' });
      })().catch((error: Error) => {
        log.error({ err: { message: error.message }, path: url }, 'request failed');
        reply(res, 500, { error: 'internal error' });
      });
    },
  );
  server.maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;

  return {
    server,
    async drain(timeoutMs: number): Promise<boolean> {
      // Still listening: a delivery that arrives now gets 503 (GitHub can redeliver it), not a refused connection.
      draining = true;
      const work = (async () => {
        while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
        await options.idle?.();
      })();
      let timer: NodeJS.Timeout | undefined;
      const finished = await Promise.race([
        work.then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
      ]);
      clearTimeout(timer);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      return finished;
    },
  };
}

/** A server for /metrics alone (METRICS_PORT): scraped from inside the cluster, not exposed with the App. */
export function createMetricsServer(): Server {
  return createServer((req, res) => {
    if ((req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    void metrics.metrics().then((text) => {
      res.writeHead(200, { 'content-type': metrics.contentType });
      res.end(text);
    });
  });
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' && value.length > 0 && value.length <= 256 ? value : undefined;
}

/**
 * The body, read up to `maxBytes` and within `timeoutMs`, its bytes counted against what all unverified bodies may
 * hold together (`shared`); what went wrong otherwise.
 */
/** How long the rest of a refused body is read (into nothing) before the connection is closed. */
export const LINGER_MS = 2_000;

/**
 * The rest of a refused request's body, read and dropped (nothing of it is kept) for at most LINGER_MS, then the
 * connection is closed if it has not ended. Closing a socket at once, with the client's bytes still unread, makes
 * TCP answer with a reset, and the client can lose the answer it had not read yet ("the TCP reset problem",
 * RFC 9112 §9.6, Tear-down): a sender saw a connection reset instead of our 413.
 */
function lingerAndDrop(req: IncomingMessage): void {
  if (req.complete || req.destroyed) return;
  const timer = setTimeout(() => req.destroy(), LINGER_MS);
  timer.unref();
  req.once('close', () => clearTimeout(timer));
  req.removeAllListeners('data');
  req.resume();
}

function readCapped(
  req: IncomingMessage,
  maxBytes: number,
  timeoutMs: number,
  shared: { bytes: number; readonly limit: number },
): Promise<Buffer | 'too-large' | 'timeout' | 'crowded' | 'aborted'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (value: Buffer | 'too-large' | 'timeout' | 'crowded' | 'aborted'): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      shared.bytes -= size;
      req.removeAllListeners('data');
      resolve(value);
    };
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      if (shared.bytes + chunk.length > shared.limit) return finish('crowded');
      size += chunk.length;
      shared.bytes += chunk.length;
      if (size > maxBytes) finish('too-large');
      else chunks.push(chunk);
    });
    req.on('end', () => finish(Buffer.concat(chunks)));
    req.on('error', () => finish('aborted'));
    req.on('close', () => finish(size > maxBytes ? 'too-large' : 'aborted'));
  });
}
