/**
 * Counting the GitHub requests of one piece of work (a check, a preview), for the logs, the metrics and the
 * benchmark. The request hook is added once per Octokit instance; the count belongs to the async context that
 * makes the request, so jobs sharing one Octokit (the in-process fan-out) each count only their own requests.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { apiCalls, rateLimitRemaining } from '../util/metrics.js';
import type { GitHub } from './types.js';

const counter = new AsyncLocalStorage<{ calls: number }>();
const hooked = new WeakSet<object>();

function hook(github: GitHub): void {
  if (hooked.has(github)) return;
  hooked.add(github);
  github.hook.before('request', () => {
    apiCalls.inc();
    const store = counter.getStore();
    if (store) store.calls++;
  });
  github.hook.after('request', (response) => {
    const remaining = Number((response.headers as Record<string, string | undefined>)['x-ratelimit-remaining']);
    if (Number.isFinite(remaining)) rateLimitRemaining.set(remaining);
  });
}

/** Run `task` with a count of the requests it makes through `github` (and only those). */
export function counted<T>(github: GitHub, task: (calls: () => number) => Promise<T>): Promise<T> {
  hook(github);
  const store = { calls: 0 };
  return counter.run(store, () => task(() => store.calls));
}
