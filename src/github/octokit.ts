/**
 * The Octokit the App runs with: Probot's, with bounded retries. Probot retries rate-limited requests
 * forever by default; a webhook handler must not wait an hour, so a request is retried at most twice and only
 * when GitHub asks for a wait of at most a minute (Retry-After / X-RateLimit-Reset are honoured). Beyond
 * that the request fails and the check run completes with the reason.
 */
import { ProbotOctokit } from 'probot';

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

export const GatekeeperOctokit = ProbotOctokit.plugin(requestTimeout as never).defaults(
  (options: Record<string, unknown>) => ({
    ...options,
    throttle: { ...(options.throttle as object), onRateLimit: shouldRetry, onSecondaryRateLimit: shouldRetry },
    retry: { retries: 2, ...(options.retry as object) },
  }),
);
