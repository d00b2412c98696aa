/**
 * HTTP routes of the self-service page and its JSON API, plus /healthz and /metrics. A plain Node handler:
 * mounted into the Probot server with addHandler, or served alone by `npm run serve`.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { loadBaseline, type LoadedBaseline } from '../baseline/load.js';
import { EMPTY_BASELINE } from '../baseline/schema.js';
import { bundledBaselinePath } from '../util/package-root.js';
import { FILE_KIND_NAMES, FILE_KINDS, type FileKind, type ParsedFile } from '../parsers/facts.js';
import { verifyFixes } from '../verify.js';
import { gate } from '../gate.js';
import { defaultKnowledgeBase } from '../knowledge/index.js';
import { metrics } from '../util/metrics.js';
import { parseFile } from '../parsers/index.js';
import { matrices, recommend, type RecommendInput } from './recommend.js';
import { RULE_IDS } from '../../rules/index.js';
import { SCRIPT, STYLE } from './html.js';
import { API_DOC, checkPage, matrixPage, recommendPage } from './pages.js';

const PREFIX = '/cuda-gatekeeper';
/** A snippet is one file: 64 KiB of text (and the form or JSON around it) is plenty. */
const MAX_SNIPPET = 64 * 1024;
const MAX_BODY = MAX_SNIPPET * 3 + 4096;
const FILE_NAMES: Readonly<Record<FileKind, string>> = FILE_KINDS;

function send(res: ServerResponse, status: number, type: string, body: string): true {
  res.writeHead(status, { 'content-type': `${type}; charset=utf-8`, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  res.end(body);
  return true;
}

function json(res: ServerResponse, status: number, value: unknown): true {
  return send(res, status, 'application/json', `${JSON.stringify(value, null, 2)}\n`);
}

async function readBody(req: IncomingMessage): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new RangeError(`request body larger than ${MAX_BODY / 1024} KiB`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function recommendInput(params: URLSearchParams): RecommendInput | undefined {
  if (![...params.keys()].length) return undefined;
  const framework = params.get('framework') === 'tensorflow' ? 'tensorflow' : 'pytorch';
  const version = params.get('version') ?? (framework === 'tensorflow' ? params.get('tf') : params.get('torch')) ?? undefined;
  const pick = (name: string) => params.get(name)?.trim() || undefined;
  const driver = pick('driver');
  return {
    framework,
    ...(version ? { version } : {}),
    ...(pick('gpu') ? { gpu: pick('gpu')! } : {}),
    ...(pick('python') ? { python: pick('python')! } : {}),
    ...(pick('os') ? { os: pick('os')! } : {}),
    ...(driver && /^\d{3}(\.\d{1,3}){0,2}$/.test(driver) ? { driver } : {}),
  };
}

/** Check one pasted file; returns the report or a user-facing error. */
export function checkSnippet(kind: string, text: string, baselineChoice: string | undefined) {
  if (!(kind in FILE_NAMES)) return { error: `kind must be one of ${FILE_KIND_NAMES.join(', ')}, not "${kind}"` } as const;
  if (Buffer.byteLength(text) > MAX_SNIPPET)
    return { error: `the file is larger than ${MAX_SNIPPET / 1024} KiB; check larger files with the command line` } as const;
  let policy: LoadedBaseline | undefined;
  if (!baselineChoice || baselineChoice === 'bundled') policy = loadBaseline('baseline.yaml', readFileSync(bundledBaselinePath(), 'utf8'), RULE_IDS);
  else if (baselineChoice !== 'none') policy = loadBaseline('baseline.yaml', baselineChoice, RULE_IDS);
  const file = parseFile(FILE_NAMES[kind as FileKind], text, kind as FileKind);
  const check = (files: readonly ParsedFile[]) => gate(files, policy?.baseline ?? EMPTY_BASELINE, defaultKnowledgeBase(), policy ? { policy } : {});
  // Each safe fix is checked by gating its result, as on a pull request (verify.ts).
  const report = verifyFixes(check([file]), [file], check);
  return {
    report,
    policyProblems:
      policy?.problems.map(
        (problem) => `${policy!.source.position(problem.span.start).line}:${policy!.source.position(problem.span.start).column} ${problem.message}`,
      ) ?? [],
  } as const;
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

const snippetLimit = new RateLimiter(Number(process.env.SNIPPET_RATE_PER_MINUTE ?? 30), Number(process.env.SNIPPET_BURST ?? 10));

/** The address a snippet request comes from (behind a proxy, X-Forwarded-For's first hop when TRUST_PROXY=1). */
function clientOf(req: IncomingMessage): string {
  const forwarded =
    process.env.TRUST_PROXY === '1'
      ? String(req.headers['x-forwarded-for'] ?? '')
          .split(',')[0]
          ?.trim()
      : '';
  return forwarded || req.socket.remoteAddress || 'unknown';
}

export async function webHandler(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const path = url.pathname;
  if (path === '/healthz') return json(res, 200, { status: 'ok' });
  if (path === '/metrics') return send(res, 200, metrics.contentType.split(';')[0]!, await metrics.metrics());
  if (path !== PREFIX && !path.startsWith(`${PREFIX}/`)) return false;
  const route = path.slice(PREFIX.length) || '/';
  const kb = defaultKnowledgeBase();
  try {
    if (req.method === 'GET' && route === '/') {
      const input = recommendInput(url.searchParams);
      return send(res, 200, 'text/html', recommendPage(kb, input, input ? recommend(kb, input) : undefined));
    }
    if (req.method === 'GET' && route === '/matrix') return send(res, 200, 'text/html', matrixPage(kb));
    if (req.method === 'POST' && (route === '/check' || route === '/api/check') && !snippetLimit.take(clientOf(req))) {
      res.setHeader('retry-after', '10');
      return json(res, 429, { error: 'too many checks from this address; try again in a few seconds' });
    }
    if (route === '/check') {
      if (req.method === 'GET') return send(res, 200, 'text/html', checkPage({}, undefined, []));
      if (req.method === 'POST') {
        const form = new URLSearchParams(await readBody(req));
        const kind = form.get('kind') ?? 'requirements';
        const choice = form.get('baseline') ?? 'bundled';
        const result = checkSnippet(kind, form.get('text') ?? '', choice === 'custom' ? (form.get('custom') ?? '') : choice);
        if ('error' in result)
          return send(res, 400, 'text/html', checkPage({ kind, text: form.get('text') ?? '', baseline: choice }, undefined, [result.error!]));
        return send(
          res,
          200,
          'text/html',
          checkPage({ kind, text: form.get('text') ?? '', baseline: choice, custom: form.get('custom') ?? '' }, result.report, result.policyProblems),
        );
      }
    }
    if (req.method === 'GET' && route === '/api') return send(res, 200, 'text/plain', API_DOC);
    if (req.method === 'GET' && route === '/api/recommend') {
      const input = recommendInput(url.searchParams) ?? { framework: 'pytorch' as const };
      return json(res, 200, recommend(kb, input));
    }
    if (req.method === 'GET' && route === '/api/matrix') return json(res, 200, matrices(kb));
    if (req.method === 'POST' && route === '/api/check') {
      let body: { kind?: unknown; text?: unknown; baseline?: unknown };
      const raw = await readBody(req);
      try {
        body = JSON.parse(raw) as typeof body;
      } catch {
        return json(res, 400, { error: 'the body must be JSON: { "kind": "requirements", "text": "..." }' });
      }
      if (typeof body.text !== 'string' || typeof body.kind !== 'string') return json(res, 400, { error: '"kind" and "text" must be strings' });
      const result = checkSnippet(body.kind, body.text, typeof body.baseline === 'string' ? body.baseline : undefined);
      if ('error' in result) return json(res, 400, { error: result.error });
      return json(res, 200, { counts: result.report.counts, policyProblems: result.policyProblems, findings: result.report.findings });
    }
    if (req.method === 'GET' && route === '/static/style.css') return send(res, 200, 'text/css', STYLE);
    if (req.method === 'GET' && route === '/static/app.js') return send(res, 200, 'text/javascript', SCRIPT);
    return send(res, 404, 'text/plain', 'Not found\n');
  } catch (error) {
    if (error instanceof RangeError) {
      // The rest of the body is not read: close the connection once the answer is out.
      res.setHeader('connection', 'close');
      res.on('finish', () => req.destroy());
      return json(res, 413, { error: error.message });
    }
    throw error;
  }
}
