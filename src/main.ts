/**
 * `npm start`: the App's HTTP server. Configuration comes from the environment: APP_ID, PRIVATE_KEY or
 * PRIVATE_KEY_PATH, WEBHOOK_SECRET, PORT (3000), HOST, LOG_LEVEL, GHE_HOST/GHE_PROTOCOL for GitHub Enterprise or a
 * test server, WEBHOOK_MAX_BYTES, METRICS_TOKEN or METRICS_PORT, DRAIN_TIMEOUT_MS. Probot never logs the key or the
 * secret. See src/server.ts for what the server refuses, and why.
 */
import { createProbot } from 'probot';
import type { IncomingMessage, ServerResponse } from 'node:http';
import app from './app.js';
import { GatekeeperOctokit } from './github/octokit.js';
import { createAppServer, createMetricsServer, DEFAULT_MAX_BYTES, productionProblems } from './github/server.js';

const env = process.env;
const problems = productionProblems(env);
if (problems.length > 0) {
  process.stderr.write(`cuda-gatekeeper: refusing to start in production: ${problems.join('; ')}\n`);
  process.exit(1);
}
if (!env.APP_ID || (!env.PRIVATE_KEY && !env.PRIVATE_KEY_PATH)) {
  process.stderr.write('cuda-gatekeeper: APP_ID and PRIVATE_KEY (or PRIVATE_KEY_PATH) are needed; register the App with app.yml first (see the README)\n');
  process.exit(1);
}

const probot = createProbot({ overrides: { Octokit: GatekeeperOctokit } });
const handlers: ((req: IncomingMessage, res: ServerResponse) => Promise<boolean> | boolean)[] = [];
await probot.load(app, {
  cwd: process.cwd(),
  addHandler: (handler: (req: IncomingMessage, res: ServerResponse) => Promise<boolean> | boolean) => void handlers.push(handler),
} as never);

const production = env.NODE_ENV === 'production';
const metricsPort = env.METRICS_PORT ? Number(env.METRICS_PORT) : undefined;
const { server, drain } = createAppServer({
  probot,
  handlers,
  secret: env.WEBHOOK_SECRET ?? 'development',
  maxBytes: Number(env.WEBHOOK_MAX_BYTES ?? DEFAULT_MAX_BYTES),
  bodyTimeoutMs: Number(env.WEBHOOK_BODY_TIMEOUT_MS ?? 10_000),
  ...(env.METRICS_TOKEN ? { metricsToken: env.METRICS_TOKEN } : {}),
  // Outside production, /metrics is open on the main port unless a token or a port of its own is configured.
  openMetrics: !production && !env.METRICS_TOKEN && metricsPort === undefined,
  idle: () => app.idle(),
});

const host = env.HOST ?? (production ? '0.0.0.0' : '127.0.0.1');
const port = Number(env.PORT ?? 3000);
server.listen(port, host, () => probot.log.info(`Listening on http://${host}:${port}`));
if (metricsPort !== undefined)
  createMetricsServer().listen(metricsPort, env.METRICS_HOST ?? host, () =>
    probot.log.info(`Metrics on http://${env.METRICS_HOST ?? host}:${metricsPort}/metrics`),
  );

// SIGTERM (docker stop, Kubernetes) and SIGINT drain: stop taking work, finish what is in hand, exit within the bound.
let stopping = false;
const stop = (signal: string): void => {
  if (stopping) return;
  stopping = true;
  const timeoutMs = Number(env.DRAIN_TIMEOUT_MS ?? 20_000);
  probot.log.info({ signal, timeoutMs }, 'draining: no new work is taken');
  void drain(timeoutMs).then((finished) => {
    probot.log.info({ finished }, finished ? 'drained; exiting' : 'drain timed out; unfinished work is redelivered or retried');
    process.exit(finished ? 0 : 1);
  });
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
