/**
 * HTTP routes of the self-service page and its JSON API, plus /healthz and /metrics. A plain Node handler:
 * mounted into the Probot server with addHandler, or served alone by `npm run serve`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { defaultKnowledgeBase, type KnowledgeBase } from '../knowledge/index.js';
import { metrics } from '../util/metrics.js';
import { matrices, recommend, type RecommendInput } from './recommend.js';
import { SCRIPT, STYLE } from './html.js';
import { API_DOC, checkPage, imagePage, matrixPage, recommendPage } from './pages.js';
import { imageVerdict } from './image.js';
import { loadBaseline } from '../baseline/load.js';
import { bundledBaseline as bundledFile } from '../util/package-root.js';
import type { Baseline } from '../baseline/schema.js';
import { RULE_IDS } from '../../rules/ids.js';
import { checkSnippet, MAX_SNIPPET, type SnippetRequest, type SnippetResult } from './snippet.js';

const PREFIX = '/cuda-gatekeeper';
const MAX_BODY = MAX_SNIPPET * 3 + 4096;
/** A snippet request's body must arrive within this (slow bodies are refused, not held). */
export const BODY_TIMEOUT_MS = 10_000;

/** The body arrived too slowly: 408, and the connection is closed. */
class SlowBodyError extends Error {}

function send(res: ServerResponse, status: number, type: string, body: string): true {
  res.writeHead(status, {
    'content-type': `${type}; charset=utf-8`,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  res.end(body);
  return true;
}

function json(res: ServerResponse, status: number, value: unknown): true {
  return send(res, status, 'application/json', `${JSON.stringify(value, null, 2)}\n`);
}

/** The body, at most MAX_BODY bytes, within BODY_TIMEOUT_MS; RangeError (413) or SlowBodyError (408) otherwise. */
function readBody(req: IncomingMessage, timeoutMs = BODY_TIMEOUT_MS): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    const timer = setTimeout(
      () => finish(new SlowBodyError(`the request body did not arrive within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
    let done = false;
    const finish = (result: string | Error): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.removeAllListeners('data');
      if (typeof result === 'string') resolve(result);
      else reject(result);
    };
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) finish(new RangeError(`request body larger than ${MAX_BODY / 1024} KiB`));
      else chunks.push(chunk);
    });
    req.on('end', () => finish(Buffer.concat(chunks).toString('utf8')));
    req.on('error', (error) => finish(error));
  });
}

/** Runs snippet checks: inline (`npm run serve`, tests), or on the App's snippet thread with its own budget. */
export type SnippetRunner = (request: SnippetRequest) => Promise<SnippetResult>;

/** Why a snippet check could not be run, as the client is told: too heavy (422) or the server busy (503). */
export class SnippetRefused extends Error {
  constructor(
    readonly status: 422 | 503,
    message: string,
  ) {
    super(message);
  }
}

const inline: SnippetRunner = async (request) => checkSnippet(request);

/** Answer and close: what is left of the body is not read, and the socket does not stay open. */
function closing(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('connection', 'close');
  res.on('finish', () => req.destroy());
}

function recommendInput(params: URLSearchParams): RecommendInput | undefined {
  if (![...params.keys()].length) return undefined;
  const framework = params.get('framework') === 'tensorflow' ? 'tensorflow' : 'pytorch';
  const version =
    params.get('version') ?? (framework === 'tensorflow' ? params.get('tf') : params.get('torch')) ?? undefined;
  const pick = (name: string) => params.get(name)?.trim() || undefined;
  const driver = pick('driver');
  return {
    framework,
    ...(version ? { version } : {}),
    ...(pick('gpu') ? { gpu: pick('gpu')! } : {}),
    ...(pick('python') ? { python: pick('python')! } : {}),
    ...(pick('os') ? { os: pick('os')! } : {}),
    ...(driver && /^\d{3}(\.\d{1,3}){0,2}$/.test(driver) ? { driver } : {}),
    ...(pick('fleet') ? { fleet: pick('fleet')!.slice(0, 20_000) } : {}),
  };
}

/**
 * A token bucket per client address for the snippet checks (the public endpoints that cost CPU): `burst` at once,
 * refilled at `perMinute`. Addresses are forgotten when their bucket is full again, and at most 10,000 are kept.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    private readonly perMinute = 30,
    private readonly burst = 10,
    private readonly now: () => number = Date.now,
  ) {}

  take(client: string): boolean {
    const time = this.now();
    const bucket = this.buckets.get(client) ?? { tokens: this.burst, at: time };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((time - bucket.at) / 60_000) * this.perMinute);
    bucket.at = time;
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    this.buckets.delete(client);
    if (this.buckets.size >= 10_000) this.buckets.delete(this.buckets.keys().next().value!);
    this.buckets.set(client, bucket);
    return true;
  }
}

const snippetLimit = new RateLimiter(
  Number(process.env.SNIPPET_RATE_PER_MINUTE ?? 30),
  Number(process.env.SNIPPET_BURST ?? 10),
);

/**
 * The address a request comes from. Behind proxies, TRUST_PROXY=N names how many of them to trust (as Express's
 * `trust proxy` with a number does): each proxy appends the address it received the request from to
 * X-Forwarded-For, so the client is the address N hops from the right of [X-Forwarded-For…, the socket's peer]. The
 * entries further left were written by whoever sent the request and are never trusted: a client that forges
 * `X-Forwarded-For: 1.2.3.4` behind one proxy is still keyed by the address that proxy saw.
 */
export function clientAddress(
  socketAddress: string | undefined,
  forwardedFor: string | readonly string[] | undefined,
  trusted: number,
): string {
  const hops = [socketAddress ?? 'unknown'];
  if (trusted > 0) {
    const header = Array.isArray(forwardedFor) ? forwardedFor.join(',') : String(forwardedFor ?? '');
    const listed = header
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);
    hops.push(...listed.reverse());
  }
  return hops[Math.min(trusted, hops.length - 1)]!;
}

/** How many proxies in front are trusted (TRUST_PROXY; 0 when unset or not a count). */
function trustedProxies(): number {
  const value = Number(process.env.TRUST_PROXY ?? 0);
  return Number.isInteger(value) && value > 0 ? value : 0;
}

function clientOf(req: IncomingMessage): string {
  return clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], trustedProxies());
}

/** The page, the API, /healthz and /metrics; snippet checks run where `snippets` runs them. */
export function createWebHandler(
  snippets: SnippetRunner = inline,
): (req: IncomingMessage, res: ServerResponse) => Promise<boolean> {
  return (req, res) => handle(req, res, snippets);
}

/** The handler with snippet checks inline. */
export const webHandler = createWebHandler();

async function runSnippet(snippets: SnippetRunner, request: SnippetRequest): Promise<SnippetResult | SnippetRefused> {
  try {
    return await snippets(request);
  } catch (error) {
    if (error instanceof SnippetRefused) return error;
    throw error;
  }
}

let bundled: Baseline | undefined;
/** The bundled baseline.yaml: the rules the image box judges with when no pools are pasted. */
function bundledBaseline(): Baseline {
  bundled ??= loadBaseline('baseline.yaml', bundledFile().text, RULE_IDS).baseline;
  return bundled;
}

/** What a route answers with: the request, its URL and route, the knowledge base, and the snippet runner. */
interface RouteContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  readonly route: string;
  readonly kb: KnowledgeBase;
  readonly snippets: SnippetRunner;
}

/** A route's handler for one method; `limited` routes take a check from the address's allowance first. */
interface Handler {
  readonly answer: (context: RouteContext) => boolean | Promise<boolean>;
  readonly limited?: boolean;
}

function recommendRoute({ res, url, kb }: RouteContext): boolean {
  const input = recommendInput(url.searchParams);
  return send(res, 200, 'text/html', recommendPage(kb, input, input ? recommend(kb, input) : undefined));
}

/** "Will this image run?": the page (`/image`) or its JSON (`/api/image`). */
function imageRoute({ res, url, route, kb }: RouteContext): boolean {
  const image = url.searchParams.get('image') ?? undefined;
  const fleet = url.searchParams.get('fleet') ?? undefined;
  const verdict = image !== undefined ? imageVerdict(kb, image, fleet, bundledBaseline()) : undefined;
  if (route === '/api/image')
    return verdict ? json(res, 200, verdict) : json(res, 400, { error: 'give ?image=<reference>[&fleet=<pools>]' });
  return send(res, 200, 'text/html', imagePage({ ...(image ? { image } : {}), ...(fleet ? { fleet } : {}) }, verdict));
}

/** The check form, posted: the page with the findings, or with what refused the check. */
async function checkFormRoute({ req, res, snippets }: RouteContext): Promise<boolean> {
  const form = new URLSearchParams(await readBody(req));
  const kind = form.get('kind') ?? 'requirements';
  const choice = form.get('baseline') ?? 'bundled';
  const input = { kind, text: form.get('text') ?? '', baseline: choice, custom: form.get('custom') ?? '' };
  const result = await runSnippet(snippets, {
    kind,
    text: input.text,
    baseline: choice === 'custom' ? input.custom : choice,
  });
  if (result instanceof SnippetRefused) {
    if (result.status === 503) res.setHeader('retry-after', '10');
    return send(res, result.status, 'text/html', checkPage(input, undefined, [], result.message));
  }
  if ('error' in result) return send(res, 400, 'text/html', checkPage(input, undefined, [], result.error));
  return send(res, 200, 'text/html', checkPage(input, result.report, result.policyProblems));
}

/** The check as JSON: `{ "kind", "text", "baseline"? }` in, counts, policy problems and findings out. */
async function checkJsonRoute({ req, res, snippets }: RouteContext): Promise<boolean> {
  let body: { kind?: unknown; text?: unknown; baseline?: unknown };
  const raw = await readBody(req);
  try {
    body = JSON.parse(raw) as typeof body;
  } catch {
    return json(res, 400, { error: 'the body must be JSON: { "kind": "requirements", "text": "..." }' });
  }
  if (typeof body.text !== 'string' || typeof body.kind !== 'string')
    return json(res, 400, { error: '"kind" and "text" must be strings' });
  const result = await runSnippet(snippets, {
    kind: body.kind,
    text: body.text,
    ...(typeof body.baseline === 'string' ? { baseline: body.baseline } : {}),
  });
  if (result instanceof SnippetRefused) {
    if (result.status === 503) res.setHeader('retry-after', '10');
    return json(res, result.status, { error: result.message });
  }
  if ('error' in result) return json(res, 400, { error: result.error });
  return json(res, 200, {
    counts: result.report.counts,
    policyProblems: result.policyProblems,
    findings: result.report.findings,
  });
}

/** Every route of the page and its API, by path (below PREFIX) and method; anything else is 404. */
const ROUTES: Readonly<Record<string, Readonly<Partial<Record<string, Handler>>>>> = {
  '/': { GET: { answer: recommendRoute } },
  '/matrix': { GET: { answer: ({ res, kb }) => send(res, 200, 'text/html', matrixPage(kb)) } },
  '/image': { GET: { answer: imageRoute } },
  '/check': {
    GET: { answer: ({ res }) => send(res, 200, 'text/html', checkPage({}, undefined, [])) },
    POST: { answer: checkFormRoute, limited: true },
  },
  '/api': { GET: { answer: ({ res }) => send(res, 200, 'text/plain', API_DOC) } },
  '/api/recommend': {
    GET: {
      answer: ({ res, url, kb }) =>
        json(res, 200, recommend(kb, recommendInput(url.searchParams) ?? { framework: 'pytorch' as const })),
    },
  },
  '/api/matrix': { GET: { answer: ({ res, kb }) => json(res, 200, matrices(kb)) } },
  '/api/image': { GET: { answer: imageRoute } },
  '/api/check': { POST: { answer: checkJsonRoute, limited: true } },
  '/static/style.css': { GET: { answer: ({ res }) => send(res, 200, 'text/css', STYLE) } },
  '/static/app.js': { GET: { answer: ({ res }) => send(res, 200, 'text/javascript', SCRIPT) } },
};

async function handle(req: IncomingMessage, res: ServerResponse, snippets: SnippetRunner): Promise<boolean> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const path = url.pathname;
  if (path === '/healthz') return json(res, 200, { status: 'ok' });
  if (path === '/metrics') return send(res, 200, metrics.contentType.split(';')[0]!, await metrics.metrics());
  if (path !== PREFIX && !path.startsWith(`${PREFIX}/`)) return false;
  const route = path.slice(PREFIX.length) || '/';
  const handler = Object.hasOwn(ROUTES, route) ? ROUTES[route]![req.method ?? 'GET'] : undefined;
  if (!handler) return send(res, 404, 'text/plain', 'Not found\n');
  if (handler.limited && !snippetLimit.take(clientOf(req))) {
    res.setHeader('retry-after', '10');
    // The body is not read: close the connection once the answer is out, so the socket is not left open.
    closing(req, res);
    return json(res, 429, { error: 'too many checks from this address; try again in a few seconds' });
  }
  try {
    return await handler.answer({ req, res, url, route, kb: defaultKnowledgeBase(), snippets });
  } catch (error) {
    if (error instanceof RangeError || error instanceof SlowBodyError) {
      // The rest of the body is not read: close the connection once the answer is out.
      closing(req, res);
      return json(res, error instanceof RangeError ? 413 : 408, { error: error.message });
    }
    throw error;
  }
}
