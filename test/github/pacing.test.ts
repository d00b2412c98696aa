/** Write pacing (pacing.ts): what counts as a write, and the order lanes serve requests in. */
import { describe, expect, it } from 'vitest';
import { inCheckOrder, Lanes, requestKind } from '../../src/github/pacing.js';

describe('requestKind', () => {
  it.each([
    ['GET', '/repos/{owner}/{repo}/pulls/{pull_number}/files', undefined, 'read'],
    ['POST', '/graphql', 'query CudaGatekeeperRead($owner: String!) { viewer { login } }', 'read'],
    [
      'POST',
      '/graphql',
      '# commit the fixes\nmutation Commit { createCommitOnBranch(input: {}) { commit { oid } } }',
      'write',
    ],
    ['POST', '/app/installations/{installation_id}/access_tokens', undefined, 'read'],
    ['POST', '/repos/{owner}/{repo}/check-runs', undefined, 'write'],
    ['PATCH', '/repos/{owner}/{repo}/check-runs/{check_run_id}', undefined, 'write'],
    ['POST', '/repos/{owner}/{repo}/pulls/{pull_number}/reviews', undefined, 'notify'],
    ['POST', '/repos/{owner}/{repo}/issues/{issue_number}/comments', undefined, 'notify'],
    ['POST', '/repos/octo-org/trainer/issues/7/comments', undefined, 'notify'],
    ['POST', '/repos/{owner}/{repo}/pulls', undefined, 'notify'],
    ['POST', '/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions', undefined, 'write'],
  ])('%s %s is a %s', (method, url, query, kind) => {
    expect(requestKind(method, url, query)).toBe(kind);
  });
});

describe('lanes', () => {
  const pace = { writeMs: 5, notificationMs: 15, secondMs: 5 };

  it("serve the earliest check's writes first, whatever order they arrive in", async () => {
    const lanes = new Lanes(pace);
    const started: string[] = [];
    // Check A starts first, check B second; B's writes are asked for before A's second write.
    let releaseA!: () => void;
    const aReady = new Promise<void>((resolve) => (releaseA = resolve));
    const a = inCheckOrder(async () => {
      await lanes.turn('42', 'write');
      started.push('A1');
      await aReady;
      await lanes.turn('42', 'write');
      started.push('A2');
    });
    const b = inCheckOrder(async () => {
      const writes = [1, 2].map(async (n) => {
        await lanes.turn('42', 'write');
        started.push(`B${n}`);
      });
      releaseA();
      await Promise.all(writes);
    });
    await Promise.all([a, b]);
    expect(started).toEqual(['A1', 'A2', 'B1', 'B2']);
  });

  it('keep installations apart: a busy installation does not hold another one back', async () => {
    const lanes = new Lanes({ ...pace, writeMs: 60_000 });
    const done: string[] = [];
    await lanes.turn('1', 'write');
    const held = lanes.turn('1', 'write').then(() => done.push('installation 1, second write'));
    await lanes.turn('2', 'write');
    done.push('installation 2');
    expect(done).toEqual(['installation 2']);
    void held;
  });

  it('never hold a read', async () => {
    const lanes = new Lanes({ ...pace, writeMs: 60_000 });
    await lanes.turn('1', 'write');
    void lanes.turn('1', 'write');
    await lanes.turn('1', 'read');
  });
});
