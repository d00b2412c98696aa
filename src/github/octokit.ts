/**
 * The Octokit the App runs with: Probot's, with bounded retries. Probot retries rate-limited requests
 * forever by default; a webhook handler must not wait an hour, so a request is retried at most twice and only
 * when GitHub asks for a wait of at most a minute (Retry-After / X-RateLimit-Reset are honoured). Beyond
 * that the request fails and the check run completes with the reason.
 */
import Bottleneck from 'bottleneck';
import { ProbotOctokit } from 'probot';
import { Lanes, pacedBy, type Pace } from './pacing.js';

export type { Pace } from './pacing.js';

export const MAX_RATE_LIMIT_RETRIES = 2;
export const MAX_RETRY_AFTER_SECONDS = 60;

type Log = { warn(message: string): void };

export function shouldRetry(
  retryAfter: number,
  options: { method?: string; url?: string; request?: { retryCount?: number } },
  octokit: { log: Log },
): boolean {
  const attempt = options.request?.retryCount ?? 0;
  const retry = attempt < MAX_RATE_LIMIT_RETRIES && retryAfter <= MAX_RETRY_AFTER_SECONDS;
  octokit.log.warn(
    `rate limited on ${options.method} ${options.url}: ${retry ? `retrying in ${retryAfter} s (attempt ${attempt + 1})` : `giving up (asked to wait ${retryAfter} s, ${attempt} retries so far)`}`,
  );
  return retry;
}

/** Abort any single request that takes longer than this (a hung connection must not hang the handler). */
export const REQUEST_TIMEOUT_MS = Number(process.env.GITHUB_REQUEST_TIMEOUT_MS ?? 20_000);

/** Octokit plugin: a fresh timeout signal per request, unless the caller passed its own. */
export function requestTimeout(
  octokit: {
    hook: {
      wrap(
        name: 'request',
        wrapper: (
          request: (options: Record<string, unknown>) => Promise<unknown>,
          options: Record<string, unknown>,
        ) => Promise<unknown>,
      ): void;
    };
  },
  options: { requestTimeoutMs?: number },
): void {
  const ms = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  octokit.hook.wrap('request', (request, requestOptions) => {
    const inner = (requestOptions.request ?? {}) as { signal?: AbortSignal };
    return request({ ...requestOptions, request: { ...inner, signal: inner.signal ?? AbortSignal.timeout(ms) } });
  });
}

export const GITHUB_PACE: Pace = { writeMs: 1000, notificationMs: 3000, secondMs: 1000 };

/** GITHUB_WRITE_INTERVAL_MS sets the spacing of writes (notifying writes three times it); waits stay in seconds. */
export function paceFromEnv(env: NodeJS.ProcessEnv): Pace {
  const writeMs = Number(env.GITHUB_WRITE_INTERVAL_MS);
  if (env.GITHUB_WRITE_INTERVAL_MS === undefined || !Number.isFinite(writeMs) || writeMs < 0) return GITHUB_PACE;
  return { ...GITHUB_PACE, writeMs, notificationMs: 3 * writeMs };
}

/**
 * The App's Octokit at a pace. Writes are paced by pacing.ts (a write and a notification lane per installation,
 * served in check order, GraphQL queries as reads; kept across the Octokit instances of one process); the
 * throttling plugin keeps its rate-limit handling with its own lanes opened wide. Octokit's retry of 5xx answers
 * waits (attempt + 1)² seconds of the pace.
 */
export function gatekeeperOctokit(pace: Pace = GITHUB_PACE): typeof ProbotOctokit {
  const { write, notifications, lanes } = limiterGroups(pace);
  return ProbotOctokit.plugin(requestTimeout as never, pacedBy(lanes) as never).defaults(
    (options: Record<string, unknown>) => ({
      ...options,
      throttle: {
        ...(options.throttle as object),
        write,
        notifications,
        retryAfterBaseValue: pace.secondMs,
        onRateLimit: shouldRetry,
        onSecondaryRateLimit: shouldRetry,
      },
      retry: { retries: 2, retryAfterBaseValue: pace.secondMs, ...(options.retry as object) },
    }),
  ) as typeof ProbotOctokit;
}

interface Limiters {
  readonly write: Bottleneck.Group;
  readonly notifications: Bottleneck.Group;
  readonly lanes: Lanes;
}

const groups = new Map<string, Limiters>();

/**
 * The lanes for a pace: ours, and the throttling plugin's write and notification groups without limits (pacing.ts
 * paces those requests; the plugin's groups are required options).
 */
function limiterGroups(pace: Pace): Limiters {
  const key = `${pace.writeMs}/${pace.notificationMs}`;
  let found = groups.get(key);
  if (!found) {
    found = {
      write: new Bottleneck.Group({ id: 'octokit-write', maxConcurrent: null, minTime: 0 }),
      notifications: new Bottleneck.Group({ id: 'octokit-notifications', maxConcurrent: null, minTime: 0 }),
      lanes: new Lanes(pace),
    };
    groups.set(key, found);
  }
  return found;
}

/** The App's Octokit at GitHub's pace. */
export const GatekeeperOctokit = gatekeeperOctokit();
