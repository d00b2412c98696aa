/**
 * `npm start`: the App's HTTP server. Configuration comes from the environment (and `./.env`, which never
 * overrides a variable already set): APP_ID, PRIVATE_KEY or PRIVATE_KEY_PATH, WEBHOOK_SECRET, PORT (3000), HOST,
 * LOG_LEVEL, GHE_HOST/GHE_PROTOCOL for GitHub Enterprise or a test server, WEBHOOK_MAX_BYTES, METRICS_TOKEN or
 * METRICS_PORT, DRAIN_TIMEOUT_MS (25 s), WEBHOOK_BACKLOG, REDIS_URL, REQUIRE_DURABLE_REDIS, GITHUB_WRITE_INTERVAL_MS
 * (src/github/octokit.ts), REDELIVER_INTERVAL_MINUTES and REDELIVER_WINDOW_HOURS (src/github/redeliver.ts),
 * TRUST_PROXY (src/web/handler.ts). Probot never logs the key or the secret. See src/github/server.ts for what the
 * server refuses, and why.
 *
 * Without APP_ID outside production, it serves the manifest flow instead (src/github/setup.ts): one page that
 * registers the App on GitHub from app.yml and writes its credentials to `.env` (SETUP_URL: the address the
 * operator's browser uses, when it is not this machine's loopback).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { createProbot } from 'probot';
import { gatekeeperOctokit, paceFromEnv } from './github/octokit.js';
import { redisPersistence } from './github/durable.js';
import {
  createAppServer,
  createMetricsServer,
  DEFAULT_BACKLOG,
  DEFAULT_DRAIN_MS,
  drainableChecks,
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_UNVERIFIED_BYTES,
  productionProblems,
} from './github/server.js';
import { setupHandler } from './github/setup.js';
import { packageRoot } from './util/package-root.js';

// 1. The environment, with ./.env under it.
const envPath = join(process.cwd(), '.env');
if (existsSync(envPath)) process.loadEnvFile(envPath);
const env = process.env;
// Probot's logger prints nothing unless a level is named: the App's own default is info.
env.LOG_LEVEL ??= 'info';
const production = env.NODE_ENV === 'production';
const host = env.HOST ?? (production ? '0.0.0.0' : '127.0.0.1');
const port = Number(env.PORT ?? 3000);

// 2. Production refuses to start without its credentials; elsewhere, no App yet means registering one.
const problems = productionProblems(env);
if (problems.length > 0) {
  process.stderr.write(`cuda-gatekeeper: refusing to start in production: ${problems.join('; ')}\n`);
  process.exit(1);
}
if (!env.APP_ID || (!env.PRIVATE_KEY && !env.PRIVATE_KEY_PATH)) {
  const ghe = env.GHE_HOST ? `${env.GHE_PROTOCOL ?? 'https'}://${env.GHE_HOST}` : undefined;
  // The address the operator's browser uses (SETUP_URL when it is not this machine's loopback): the only Host the
  // setup server answers to, with loopback.
  const selfUrl = env.SETUP_URL?.replace(/\/$/, '') ?? `http://${host === '0.0.0.0' ? 'localhost' : host}:${port}`;
  const handler = setupHandler({
    manifest: readFileSync(join(packageRoot(), 'app.yml'), 'utf8'),
    envPath,
    webUrl: ghe ?? 'https://github.com',
    apiUrl: ghe ? `${ghe}/api/v3` : 'https://api.github.com',
    selfUrl,
    ...(env.WEBHOOK_PROXY_URL ? { webhookProxyUrl: env.WEBHOOK_PROXY_URL } : {}),
    allowedHosts: [new URL(selfUrl).host, `localhost:${port}`, `127.0.0.1:${port}`],
  });
  const setupServer = createServer((req, res) => {
    void handler(req, res).then((answered) => {
      if (!answered)
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: open / to register the App\n');
    });
  });
  // Nothing is in hand during setup: SIGTERM (docker stop, npm's group) or Ctrl-C ends it at once, exit 0.
  for (const signal of ['SIGTERM', 'SIGINT'] as const)
    process.on(signal, () => {
      setupServer.close();
      setupServer.closeAllConnections();
      process.exit(0);
    });
  setupServer.listen(port, host, () =>
    process.stdout.write(
      `cuda-gatekeeper: no APP_ID is set. Open ${selfUrl}/ to register the App on GitHub from app.yml; its credentials go to ${envPath}.\n`,
    ),
  );
} else {
  await startApp();
}

/** 3. The App: Probot, the webhook server in front of it, the metrics server, and the drain on SIGTERM. */
async function startApp(): Promise<void> {
  // A Redis that keeps nothing on disk loses every queued job when it restarts: say so once, or refuse.
  if (env.REDIS_URL) {
    const persistence = await redisPersistence(env.REDIS_URL);
    const problem =
      'durable' in persistence ? (persistence.durable ? undefined : persistence.why) : persistence.unknown;
    if (problem && env.REQUIRE_DURABLE_REDIS === '1') {
      process.stderr.write(
        `cuda-gatekeeper: refusing to start: REQUIRE_DURABLE_REDIS=1, and Redis may lose jobs: ${problem}\n`,
      );
      process.exit(1);
    }
    if (problem)
      process.stderr.write(
        `cuda-gatekeeper: warning: Redis may lose queued jobs on restart (${problem}); turn on appendonly, or set REQUIRE_DURABLE_REDIS=1 to refuse such a Redis\n`,
      );
    // What an acknowledged delivery can still be lost to, said once: the operator chooses appendfsync.
    if ('durable' in persistence && persistence.durable)
      process.stderr.write(
        `cuda-gatekeeper: Redis keeps deliveries in its append-only file (appendfsync ${persistence.fsync}): a crash of its host loses ${persistence.loses}${persistence.fsync === 'always' ? '' : '; appendfsync always loses none'}\n`,
      );
  }
  const { default: app } = await import('./app.js');
  // REDIS_URL is the App's durable queue, not Probot's: Probot 14 would fetch its own ioredis with npx at start
  // (a network install in production) and log every reconnection of it as a raw error. Each replica throttles
  // its own requests, and GitHub's rate limits are waited out through the durable queue (src/github/pull-check.ts).
  const probot = createProbot({ overrides: { Octokit: gatekeeperOctokit(paceFromEnv(env)), redisConfig: '' } });
  const handlers: ((req: IncomingMessage, res: ServerResponse) => Promise<boolean> | boolean)[] = [];
  await probot.load(app, {
    cwd: process.cwd(),
    addHandler: (handler: (req: IncomingMessage, res: ServerResponse) => Promise<boolean> | boolean) =>
      void handlers.push(handler),
  } as never);

  const metricsPort = env.METRICS_PORT ? Number(env.METRICS_PORT) : undefined;
  const drainMs = Number(env.DRAIN_TIMEOUT_MS ?? DEFAULT_DRAIN_MS);
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
    ...(app.store ? { store: app.store } : {}),
    backlog: Number(env.WEBHOOK_BACKLOG ?? DEFAULT_BACKLOG),
    // What one installation's writes can finish within the drain window; the rest is answered 503 and redelivered.
    backlogPerInstallation: drainableChecks(drainMs, paceFromEnv(env)),
    maxUnverifiedBytes: Number(env.WEBHOOK_UNVERIFIED_BYTES ?? DEFAULT_MAX_UNVERIFIED_BYTES),
    maxConnections: Number(env.MAX_CONNECTIONS ?? DEFAULT_MAX_CONNECTIONS),
  });

  server.listen(port, host, () => probot.log.info(`Listening on http://${host}:${port}`));
  // Local development: GitHub cannot reach this machine, so webhooks come through a smee.io channel (Probot's
  // convention, WEBHOOK_PROXY_URL, whatever NODE_ENV says, as Probot does): its events are relayed to this server,
  // signed as GitHub signed them (the signature is still verified here).
  const relay = env.WEBHOOK_PROXY_URL ? await startRelay(env.WEBHOOK_PROXY_URL, port, probot.log) : undefined;
  if (metricsPort !== undefined)
    createMetricsServer().listen(metricsPort, env.METRICS_HOST ?? host, () =>
      probot.log.info(`Metrics on http://${env.METRICS_HOST ?? host}:${metricsPort}/metrics`),
    );

  // SIGTERM (docker stop, Kubernetes) and SIGINT drain: stop taking work, finish what is in hand, exit within the
  // bound.
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    const timeoutMs = drainMs;
    probot.log.info({ signal, timeoutMs }, 'draining: no new work is taken');
    void relay?.stop();
    void drain(timeoutMs).then((finished) => {
      if (finished)
        probot.log.info(
          { finished },
          app.store ? 'drained; the durable queue keeps what is left for the other replicas' : 'drained; exiting',
        );
      else
        probot.log.error(
          { finished },
          'the drain timed out: deliveries still in hand were not checked (GitHub can redeliver them)',
        );
      process.exit(finished ? 0 : 1);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/**
 * The smee.io relay (smee-client, as Probot runs it): events posted to the channel are forwarded to this server's
 * webhook path with their headers (the signature included). A channel that cannot be reached is a warning, never a
 * failed start: the server still answers deliveries that reach it directly.
 */
async function startRelay(
  source: string,
  port: number,
  log: { info(message: string): void; warn(object: object, message: string): void },
): Promise<{ stop(): Promise<void> } | undefined> {
  const { default: SmeeClient } = await import('smee-client');
  const target = `http://127.0.0.1:${port}/api/github/webhooks`;
  try {
    const client = new SmeeClient({
      source,
      target,
      logger: {
        info: (...parts: unknown[]) => log.info(`webhook relay: ${parts.map(String).join(' ')}`),
        error: (...parts: unknown[]) =>
          log.warn(
            { relay: source },
            `webhook relay: ${parts.map((part) => (part instanceof Error ? part.message : String(part))).join(' ')}`,
          ),
      } as never,
      maxConnectionTimeout: 10_000,
    });
    await client.start();
    log.info(`Relaying webhooks from ${source} to ${target}`);
    return client;
  } catch (error) {
    log.warn({ relay: source, err: { message: (error as Error).message } }, 'the webhook relay could not connect');
    return undefined;
  }
}
