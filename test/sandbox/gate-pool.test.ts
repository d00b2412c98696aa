/**
 * The App's gate threads (src/sandbox/gate-pool.ts): a gate runs off the event loop, a gate past its budget is
 * stopped with the reason, and the pool goes on. Each assertion waits for an event (a timer turn, a settled promise),
 * never for a clock: they hold on any machine.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { GateBudgetError, GatePool } from '../../src/sandbox/gate-pool.js';
import type { GateJob } from '../../src/sandbox/gate-job.js';

/** A Dockerfile of `stages` chained stages: seconds of work for the gate on any machine at 10,000. */
function chained(stages: number): GateJob {
  const lines = ['FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04 AS s0', 'RUN pip install torch==2.5.1'];
  for (let i = 1; i < stages; i++)
    lines.push(
      `FROM s${i - 1} AS s${i}`,
      `COPY --from=s${i - 1} /opt/conda /opt/conda`,
      `RUN pip install numpy==1.${i}.0`,
    );
  return {
    owner: 'o',
    repo: 'r',
    orgConfig: null,
    sources: [{ path: 'Dockerfile', kind: 'dockerfile', text: `${lines.join('\n')}\n` }],
    options: {},
  };
}

const SMALL: GateJob = {
  ...chained(1),
  sources: [{ path: 'requirements.txt', kind: 'requirements', text: 'torch==2.3.0+cu121\n' }],
};

const pools: GatePool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

function pool(timeoutMs: number): GatePool {
  const created = new GatePool(1, timeoutMs);
  pools.push(created);
  return created;
}

describe('GatePool', () => {
  it('runs a heavy gate on a thread: the event loop keeps turning until it answers', async () => {
    const gates = pool(10 * 60_000);
    let settled = false;
    const report = gates.run(chained(200)).finally(() => (settled = true));
    // Turns of the event loop while the gate works; a gate on this thread would allow none before it settled.
    let turns = 0;
    while (!settled) {
      await new Promise((resolve) => setImmediate(resolve));
      turns++;
    }
    expect((await report).findings).toBeDefined();
    expect(turns).toBeGreaterThan(1);
  });

  it('stops a gate past its budget with the reason, and replaces the thread for the next gate', async () => {
    // A budget of 1 ms: no gate of a 10,000-stage Dockerfile ends within it, however fast the machine.
    const gates = pool(1);
    const over = gates.run(chained(10_000));
    await expect(over).rejects.toThrow(GateBudgetError);
    await expect(over).rejects.toThrow('the check did not finish within 1 ms');
    // The stopped thread is replaced: the next gate is taken and stopped the same way, not left waiting.
    await expect(gates.run(SMALL)).rejects.toThrow('the check did not finish within 1 ms');
  });
});
