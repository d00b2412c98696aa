/** Which failed deliveries are asked for again (redeliver.ts), and a scan against the fake's delivery log. */
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import {
  MAX_REDELIVERIES,
  MemoryRedeliveryState,
  redeliverFailed,
  toRedeliver,
  type AppClient,
  type DeliveryItem,
} from '../../src/github/redeliver.js';
import { FakeGitHub } from '../support/fake-github.js';

let id = 1;
const attempt = (guid: string, status_code: number, redelivery = false): DeliveryItem => ({
  id: id++,
  guid,
  delivered_at: '2026-12-05T05:00:00Z',
  redelivery,
  status_code,
  event: 'pull_request',
  action: 'opened',
});

describe('toRedeliver', () => {
  it('asks again for what failed for a passing reason and never succeeded, once per delivery', () => {
    const chosen = toRedeliver([
      attempt('busy', 503),
      attempt('down', 502),
      attempt('slow', 0),
      attempt('bad-signature', 401),
      attempt('too-large', 413),
      attempt('recovered', 503),
      attempt('recovered', 202, true),
      attempt('twice', 503),
      attempt('twice', 503, true),
      attempt('fine', 202),
    ]);
    expect(chosen.map((delivery) => delivery.guid)).toEqual(['busy', 'down', 'slow', 'twice']);
    // The newest attempt of a delivery is the one asked for again.
    expect(chosen.at(-1)!.redelivery).toBe(true);
  });
});

describe('a scan', () => {
  /** The App's client, answered by the fake (as Octokit's request would be). */
  function client(fake: FakeGitHub): AppClient {
    return {
      request: (async (route: string, parameters: Record<string, unknown>) => {
        const [method, template] = route.split(' ') as [string, string];
        const path = template.replace('{delivery_id}', String(parameters.delivery_id));
        const query = method === 'GET' ? `?${new URLSearchParams(parameters as Record<string, string>)}` : '';
        const answer = await fake.handle(method, `${path}${query}`, undefined);
        if (answer.status >= 400) throw Object.assign(new Error(`HTTP ${answer.status}`), { status: answer.status });
        return { data: answer.body, headers: answer.headers ?? {} };
      }) as AppClient['request'],
    };
  }
  const said: string[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => void said.push(line) });

  it('reads every page back to the window, redelivers each failed delivery, and gives up after the cap', async () => {
    const fake = new FakeGitHub();
    // Nothing listens: every delivery fails to connect (250 of them: three pages).
    for (let i = 0; i < 250; i++) await fake.send('pull_request', { action: 'opened' }, `guid-${i}`);
    const state = new MemoryRedeliveryState();
    const options = { state, windowMs: 3600_000, log };
    const first = await redeliverFailed(client(fake), options);
    expect(first).toMatchObject({ scanned: 250 });
    expect(first!.redelivered).toHaveLength(200); // the per-scan cap; the rest wait for the next scan
    expect(fake.requests.filter((request) => request.path === '/app/hook/deliveries')).toHaveLength(3);
    await new Promise((resolve) => setTimeout(resolve, 50)); // the fake's redeliveries are sent
    for (let scan = 0; scan < 2 * MAX_REDELIVERIES; scan++) await redeliverFailed(client(fake), options);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const redeliveries = fake.deliveries.filter((delivery) => delivery.redelivery);
    const perGuid = new Map<string, number>();
    for (const delivery of redeliveries) perGuid.set(delivery.guid, (perGuid.get(delivery.guid) ?? 0) + 1);
    expect(perGuid.size).toBe(250);
    expect(Math.max(...perGuid.values())).toBe(MAX_REDELIVERIES);
    // Giving up is said, once per delivery.
    const gaveUp = said.filter((line) => line.includes('it is not asked for again'));
    expect(gaveUp).toHaveLength(250);
    expect(fake.violations).toEqual([]);
  });
});
