/**
 * Failed deliveries, asked for again. GitHub does not redeliver a failed webhook delivery by itself ("Handling failed
 * webhook deliveries": "GitHub does not automatically redeliver failed deliveries"); its guide "Automatically
 * redelivering failed deliveries for a GitHub App webhook" lists the App's deliveries and asks for a new attempt of
 * each failed one. Here, on start and every REDELIVER_INTERVAL_MINUTES:
 *
 * - `GET /app/hook/deliveries` (the App's JWT; newest first, `per_page` up to 100, `cursor` pages from the `link`
 *   header) back to where the last scan stopped (at most REDELIVER_WINDOW_HOURS back; GitHub keeps three days);
 * - a delivery GUID (`guid`, shared by a delivery and its redeliveries) with no attempt answered 2xx, whose attempts
 *   failed for a reason that may pass (no answer, a timeout, 429, 5xx: the App was down, busy or draining, or Redis
 *   could not store it), is redelivered once per scan, MAX_REDELIVERIES times at most in all (a redelivery can meet
 *   the same full backlog): `POST /app/hook/deliveries/{delivery_id}/attempts` (202). A 4xx other than 408 and 429
 *   (a bad signature, a body too large) would fail again and is left alone.
 *
 * With Redis, one replica scans at a time (a lock), and where the last scan stopped is shared.
 */
import type { Logger } from './types.js';

/** A delivery as "List deliveries for an app webhook" gives it (the fields used here). */
export interface DeliveryItem {
  readonly id: number;
  readonly guid: string;
  readonly delivered_at: string;
  readonly redelivery: boolean;
  readonly status_code: number;
  readonly event: string;
  readonly action?: string | null;
}

/** Redeliveries of one delivery at most. */
export const MAX_REDELIVERIES = 3;

/** An answer that may be different next time: none (0), a timeout, 429, or a server error. */
export function mayPass(statusCode: number | null | undefined): boolean {
  const code = statusCode ?? 0;
  return code === 0 || code === 408 || code === 429 || code >= 500;
}

/** The deliveries to ask for again: one per GUID that never succeeded, failed for a passing reason, not yet retried. */
export function toRedeliver(deliveries: readonly DeliveryItem[]): DeliveryItem[] {
  const byGuid = new Map<string, DeliveryItem[]>();
  for (const delivery of deliveries) {
    const list = byGuid.get(delivery.guid) ?? [];
    list.push(delivery);
    byGuid.set(delivery.guid, list);
  }
  const chosen: DeliveryItem[] = [];
  for (const attempts of byGuid.values()) {
    if (attempts.some((attempt) => attempt.status_code >= 200 && attempt.status_code < 300)) continue;
    if (!attempts.every((attempt) => mayPass(attempt.status_code))) continue;
    chosen.push(attempts.reduce((newest, attempt) => (attempt.id > newest.id ? attempt : newest)));
  }
  return chosen.sort((a, b) => a.id - b.id);
}

/** The App's Octokit (JWT), the two routes used. */
export interface AppClient {
  request(
    route: 'GET /app/hook/deliveries',
    parameters: { per_page: number; cursor?: string },
  ): Promise<{ data: DeliveryItem[]; headers: { link?: string } }>;
  request(
    route: 'POST /app/hook/deliveries/{delivery_id}/attempts',
    parameters: { delivery_id: number },
  ): Promise<unknown>;
}

/** Where scans stopped, and who scans: in this process, or shared through Redis. */
export interface RedeliveryState {
  /** Hold the scan for `ms` (false: another replica is scanning). */
  lock(ms: number): Promise<boolean>;
  unlock(): Promise<void>;
  /** Where the last scan stopped (epoch ms), if any. */
  since(): Promise<number | undefined>;
  setSince(at: number): Promise<void>;
  /** How often a delivery GUID was asked for again (kept three days, as GitHub keeps deliveries). */
  redeliveries(guid: string): Promise<number>;
  /** Count one more for a GUID (a redelivery asked for, or the App giving up on it). */
  countRedelivery(guid: string): Promise<void>;
}

export class MemoryRedeliveryState implements RedeliveryState {
  private held = false;
  private stopped: number | undefined;
  async lock(): Promise<boolean> {
    if (this.held) return false;
    this.held = true;
    return true;
  }
  async unlock(): Promise<void> {
    this.held = false;
  }
  async since(): Promise<number | undefined> {
    return this.stopped;
  }
  async setSince(at: number): Promise<void> {
    this.stopped = at;
  }
  private readonly counts = new Map<string, { count: number; at: number }>();
  async redeliveries(guid: string): Promise<number> {
    return this.counts.get(guid)?.count ?? 0;
  }
  async countRedelivery(guid: string): Promise<void> {
    const now = Date.now();
    for (const [key, entry] of this.counts) if (now - entry.at > KEPT_MS) this.counts.delete(key);
    const entry = this.counts.get(guid) ?? { count: 0, at: now };
    entry.count++;
    this.counts.set(guid, entry);
  }
}

/** How long GitHub keeps deliveries (three days), and so how long a count is kept. */
export const KEPT_MS = 3 * 24 * 3600 * 1000;

export interface ScanOptions {
  readonly state: RedeliveryState;
  /** How far back a first scan looks. */
  readonly windowMs: number;
  readonly log: Logger;
  readonly now?: () => number;
  /** Redeliveries asked for in one scan at most (the rest wait for the next). */
  readonly max?: number;
}

/** The `cursor` of the `link` header's next page. */
function nextCursor(link: string | undefined): string | undefined {
  const next = /<([^>]+)>;\s*rel="next"/.exec(link ?? '')?.[1];
  if (!next) return undefined;
  try {
    return new URL(next).searchParams.get('cursor') ?? undefined;
  } catch {
    return undefined;
  }
}

/** Pages of deliveries read per scan at most (100 each). */
const MAX_PAGES = 50;

/** One scan: the failed deliveries since the last scan, redelivered. Never throws; says what it did. */
export async function redeliverFailed(
  app: AppClient,
  options: ScanOptions,
): Promise<{ readonly scanned: number; readonly redelivered: readonly string[] } | undefined> {
  const now = options.now ?? Date.now;
  const started = now();
  if (!(await options.state.lock(10 * 60 * 1000).catch(() => false))) return undefined;
  try {
    // A little overlap with the last scan: a delivery made while it ran is read again, not missed.
    const since = Math.max((await options.state.since()) ?? 0, started - options.windowMs) - 60_000;
    const seen: DeliveryItem[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const answer = await app.request('GET /app/hook/deliveries', { per_page: 100, ...(cursor ? { cursor } : {}) });
      seen.push(...answer.data);
      const oldest = answer.data.at(-1);
      cursor = nextCursor(answer.headers.link);
      if (!cursor || !oldest || Date.parse(oldest.delivered_at) < since) break;
    }
    const recent = seen.filter((delivery) => Date.parse(delivery.delivered_at) >= since);
    // Deliveries the App has given up on are left out before the per-scan cap, so they never crowd out new ones.
    const failed: DeliveryItem[] = [];
    for (const delivery of toRedeliver(recent)) {
      const times = await options.state.redeliveries(delivery.guid);
      if (times < MAX_REDELIVERIES) failed.push(delivery);
      else if (times === MAX_REDELIVERIES) {
        // Said once, when the App stops asking (the count moves past the cap): the delivery is lost unless someone
        // redelivers it by hand.
        await options.state.countRedelivery(delivery.guid);
        options.log.warn(
          { delivery: delivery.guid, event: delivery.event, status: delivery.status_code },
          `a delivery failed ${MAX_REDELIVERIES + 1} times; it is not asked for again (redeliver it from the App's settings, Advanced)`,
        );
      }
    }
    const chosen = failed.slice(0, options.max ?? 200);
    const redelivered: string[] = [];
    for (const delivery of chosen) {
      await options.state.countRedelivery(delivery.guid);
      try {
        await app.request('POST /app/hook/deliveries/{delivery_id}/attempts', { delivery_id: delivery.id });
        redelivered.push(delivery.guid);
      } catch (error) {
        options.log.warn(
          { delivery: delivery.guid, err: { message: (error as Error).message } },
          'could not ask GitHub to redeliver a failed delivery',
        );
      }
    }
    // Where this scan stopped, unless it left failed deliveries for the next one.
    if (chosen.length === failed.length) await options.state.setSince(started);
    if (redelivered.length > 0)
      options.log.info(
        { scanned: recent.length, redelivered: redelivered.length },
        'asked GitHub to redeliver failed deliveries',
      );
    return { scanned: recent.length, redelivered };
  } catch (error) {
    options.log.warn({ err: { message: (error as Error).message } }, 'could not list webhook deliveries');
    return undefined;
  } finally {
    await options.state.unlock().catch(() => undefined);
  }
}

/** Scans on start and every `intervalMs` (timers that do not keep the process alive). */
export function scheduleRedelivery(
  client: () => Promise<AppClient>,
  options: ScanOptions & { readonly intervalMs: number; readonly startDelayMs?: number },
): () => void {
  const scan = (): void => {
    void client()
      .then((app) => redeliverFailed(app, options))
      .catch((error: Error) =>
        options.log.warn({ err: { message: error.message } }, 'could not scan webhook deliveries'),
      );
  };
  const first = setTimeout(scan, options.startDelayMs ?? 1000);
  const every = setInterval(scan, options.intervalMs);
  first.unref();
  every.unref();
  return () => {
    clearTimeout(first);
    clearInterval(every);
  };
}
