/**
 * The App's dependencies from its environment (README "Running the GitHub App"): every variable the App reads is
 * read here, once, so src/app.ts is wiring only.
 */
import { pino } from 'pino';
import { createDeps, type AppDeps } from './deps.js';
import { DurableFanout } from './durable.js';
import { RedisPathIndex } from './path-index.js';
import { MemoryCache, TieredCache } from '../images/cache.js';
import { RedisCache } from '../images/redis-cache.js';
import { GatePool } from '../sandbox/gate-pool.js';
import { MemoryRedeliveryState } from './redeliver.js';
import { RedisRedeliveryState } from './redeliver-redis.js';

/** Where Redis's state goes (the queue exists before Probot's logger): pino, one line per change of state. */
const bootLog = (env: NodeJS.ProcessEnv) => pino({ level: env.LOG_LEVEL ?? 'info', name: 'redis' });

/**
 * The app as Probot loads it (`probot run`, createNodeMiddleware): APP_ID names the app for check lookups;
 * REDIS_URL switches fan-out work to the durable queue (Probot itself then shares its rate-limit state there).
 */
export function depsFromEnv(env: NodeJS.ProcessEnv): AppDeps {
  // Gates on worker threads, each within GATE_TIMEOUT_MS (default 30 s), GATE_THREADS at a time (default 2).
  const gatePool = new GatePool(Number(env.GATE_THREADS ?? 2), Number(env.GATE_TIMEOUT_MS ?? 30_000));
  const hours = Number(env.SWEEP_INTERVAL_HOURS ?? 24);
  const redisLog = env.REDIS_URL ? bootLog(env) : undefined;
  return createDeps({
    appId: Number(env.APP_ID ?? 0),
    // Links in check runs point at GitHub's web pages (the GitHub Enterprise host when GHE_HOST is set).
    webUrl: env.GHE_HOST ? `${env.GHE_PROTOCOL ?? 'https'}://${env.GHE_HOST}` : 'https://github.com',
    // With REDIS_URL: the durable fan-out queue, and the path index shared by every replica (it outlives a restart).
    ...(env.REDIS_URL
      ? {
          fanout: new DurableFanout({ redisUrl: env.REDIS_URL, log: redisLog! }),
          paths: new RedisPathIndex(env.REDIS_URL, redisLog!),
        }
      : {}),
    gatePool,
    // The public snippet checks: one thread of their own, a small budget (SNIPPET_TIMEOUT_MS, 5 s) and queue
    // (SNIPPET_QUEUE, 4), and they start only while no pull request's gate is running.
    snippetPool: new GatePool(1, Number(env.SNIPPET_TIMEOUT_MS ?? 5000), {
      maxQueue: Number(env.SNIPPET_QUEUE ?? 4),
      maxWaitMs: 10_000,
      yieldTo: () => gatePool.busy,
    }),
    ...(Number.isFinite(hours) && hours > 0 ? { sweepIntervalMs: hours * 3600 * 1000 } : {}),
    ...imageLookups(env),
    ...redelivery(env),
  });
}

/**
 * Redelivery of failed webhook deliveries (README "Running the GitHub App"): every REDELIVER_INTERVAL_MINUTES
 * (default 10; 0 turns it off) and on start, back at most REDELIVER_WINDOW_HOURS (default 6; GitHub keeps three
 * days). With REDIS_URL one replica scans at a time.
 */
export function redelivery(env: NodeJS.ProcessEnv): Pick<AppDeps, 'redelivery'> {
  const minutes = Number(env.REDELIVER_INTERVAL_MINUTES ?? 10);
  if (!Number.isFinite(minutes) || minutes <= 0) return {};
  const hours = Number(env.REDELIVER_WINDOW_HOURS ?? 6);
  const windowHours = Number.isFinite(hours) && hours > 0 ? Math.min(hours, 72) : 6;
  const shared = env.REDIS_URL ? new RedisRedeliveryState(env.REDIS_URL) : undefined;
  return {
    redelivery: {
      intervalMs: minutes * 60_000,
      windowMs: windowHours * 3600_000,
      state: shared ?? new MemoryRedeliveryState(),
      ...(shared ? { close: () => shared.close() } : {}),
    },
  };
}

/**
 * Image lookups (README "Images"): on unless IMAGE_LOOKUP=off; IMAGE_LOOKUP_BUDGET_MS (default 8 s) per pull
 * request, inside its gate's budget; configs and tags cached in memory, and in Redis with REDIS_URL so every replica
 * shares what one read.
 */
export function imageLookups(env: NodeJS.ProcessEnv): Pick<AppDeps, 'images'> {
  if (env.IMAGE_LOOKUP === 'off') return {};
  const budget = Number(env.IMAGE_LOOKUP_BUDGET_MS ?? 8000);
  const shared = env.REDIS_URL ? new RedisCache(env.REDIS_URL) : undefined;
  return {
    images: {
      cache: shared ? new TieredCache(new MemoryCache(), shared) : new MemoryCache(),
      env,
      budgetMs: Number.isFinite(budget) && budget > 0 ? budget : 8000,
      ...(shared ? { close: () => shared.close() } : {}),
    },
  };
}
