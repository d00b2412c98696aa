/** Probot under test: real payloads from @octokit/webhooks-examples, GitHub answered by FakeGitHub via nock. */
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import nock from 'nock';
import { pino } from 'pino';
import { Probot, ProbotOctokit } from 'probot';
import { cudaGatekeeper } from '../../src/app.js';
import { packageRoot } from '../../src/util/package-root.js';
import { createDeps, type AppDeps, type DepsOptions } from '../../src/github/deps.js';
import type { FakeGitHub } from './fake-github.js';

const EXAMPLES = JSON.parse(
  readFileSync(
    join(packageRoot(), 'node_modules', '@octokit', 'webhooks-examples', 'api.github.com', 'index.json'),
    'utf8',
  ),
) as {
  name: string;
  examples: Record<string, unknown>[];
}[];

/** A real example payload of an event/action that carries an installation. */
export function example(name: string, action?: string): Record<string, unknown> {
  const found = EXAMPLES.find((entry) => entry.name === name)?.examples.find(
    (payload) => (action === undefined || payload.action === action) && payload.installation,
  );
  if (!found) throw new Error(`no example for ${name}.${action}`);
  return structuredClone(found);
}

let key: string | undefined;
export function privateKey(): string {
  key ??= generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  }).privateKey;
  return key;
}

export interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly [key: string]: unknown;
}

export interface SetupOptions {
  /** The Octokit class; default: Probot's with retries and throttling off, so tests see each request once. */
  readonly Octokit?: typeof ProbotOctokit;
  /** What the App is given instead of the defaults (createDeps): a path index, a fan-out queue, gates. */
  readonly deps?: Omit<DepsOptions, 'appId'>;
}

/**
 * Probot with the App loaded, its GitHub requests answered by `fake` through nock. A fault registered on the fake
 * with status 0 is a connection reset (ECONNRESET) instead of an HTTP answer.
 */
export function setup(
  fake: FakeGitHub,
  options: SetupOptions = {},
): { probot: Probot; deps: AppDeps; logs: LogLine[] } {
  nock.disableNetConnect();
  for (const method of ['get', 'post', 'patch', 'put', 'delete'] as const) {
    const scope = nock('https://api.github.com').persist();
    scope[method](/.*/).reply(async function reply(uri, body) {
      const reset = fake.faults.find(
        (fault) =>
          fault.times > 0 &&
          fault.status === 0 &&
          fault.path.test(new URL(uri, 'https://x').pathname) &&
          (!fault.method || fault.method === method.toUpperCase()),
      );
      if (reset) {
        reset.times--;
        throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
      }
      const authorization = this.req.headers.authorization;
      const response = await fake.handle(
        method.toUpperCase(),
        uri,
        body === '' ? undefined : typeof body === 'string' ? JSON.parse(body) : body,
        Array.isArray(authorization) ? authorization[0] : authorization,
      );
      return [
        response.status,
        JSON.stringify(response.body),
        { 'content-type': 'application/json', ...response.headers },
      ];
    });
  }
  const logs: LogLine[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as LogLine) });
  const probot = new Probot({
    appId: 1,
    privateKey: privateKey(),
    log,
    Octokit:
      options.Octokit ??
      ProbotOctokit.defaults((defaults: Record<string, unknown>) => ({
        ...defaults,
        retry: { enabled: false },
        throttle: { ...(defaults.throttle as object), enabled: false },
      })),
  });
  const deps = createDeps({ appId: 1, ...options.deps });
  void probot.load(cudaGatekeeper(deps));
  return { probot, deps, logs };
}

export function teardown(): void {
  nock.cleanAll();
  nock.enableNetConnect();
}
