/**
 * No input blocks the server (issue 16), on the real server process: a check past its time budget fails, saying
 * which file was not checked, while the server goes on answering. The budget here is 1 ms, which no gate of the
 * 10,000-stage Dockerfile below meets on any machine, so the outcome never depends on the machine's speed; that a
 * gate runs off the event loop at all is test/sandbox/gate-pool.test.ts's.
 */
import { describe, expect, it } from 'vitest';
import { sendWebhook, useAppServer, waitFor } from '../support/server.js';
import { pullScenario } from '../support/scenario.js';

const server = useAppServer({ GATE_TIMEOUT_MS: '1' });

describe('no input blocks the server', () => {
  it('a Dockerfile of 10,000 chained stages: /healthz answers meanwhile, and the check fails past its budget, saying the file was not checked', async () => {
    const { fake, app } = server;
    const lines = ['FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04 AS s0', 'RUN pip install torch==2.5.1'];
    for (let i = 1; i < 10_000; i++)
      lines.push(
        `FROM s${i - 1} AS s${i}`,
        `COPY --from=s${i - 1} /opt/conda /opt/conda`,
        `RUN pip install numpy==1.${i}.0`,
      );
    const scenario = pullScenario(fake, {
      head: { Dockerfile: `${lines.join('\n')}\n` },
      changed: ['Dockerfile'],
      number: 63,
    });
    expect((await sendWebhook(app.port, 'pull_request', scenario.payload, 'heavy-1')).status).toBe(202);
    const completed = () =>
      fake.checkRuns.find((candidate) => candidate.head_sha === scenario.headSha && candidate.status === 'completed');
    // Until the verdict is posted, /healthz keeps answering ok.
    let probes = 0;
    do {
      expect((await fetch(`http://127.0.0.1:${app.port}/healthz`)).status).toBe(200);
      probes++;
    } while (!completed() && probes < 10_000);
    const run = await waitFor(completed, 30_000, app.output);
    // Not checked is not a pass: the run fails (neutral would let branch protection through) and says why.
    expect(run).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(run.output?.title).toMatch(
      /^1 file not checked \(Dockerfile: could not be checked: .*did not finish within 1 ms/,
    );
    expect(run.output?.summary).toContain('did not finish within 1 ms');
  });
});
