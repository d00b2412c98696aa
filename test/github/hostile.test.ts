/**
 * A server no stranger can hurt (issue 16), probed from outside: the real server process (`npm start`'s entry) on
 * loopback, hostile requests over raw HTTP, a local fake GitHub behind it.
 */
import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { privateKey } from '../support/probot.js';
import { SECRET, sendWebhook, useAppServer, waitFor } from '../support/server.js';
import { pullScenario } from '../support/scenario.js';

const ROOT = join(import.meta.dirname, '..', '..');
const server = useAppServer({
  METRICS_TOKEN: 'metrics-token-for-tests',
  WEBHOOK_MAX_BYTES: String(1024 * 1024),
  WEBHOOK_BODY_TIMEOUT_MS: '1500',
  DRAIN_TIMEOUT_MS: '15000',
});

function post(
  port: number,
  headers: Record<string, string>,
  body: Buffer | string,
  options: { chunked?: boolean } = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/github/webhooks',
        headers: {
          'content-type': 'application/json',
          ...headers,
          ...(options.chunked
            ? { 'transfer-encoding': 'chunked' }
            : { 'content-length': String(Buffer.byteLength(body)) }),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    // A write after the answer came can fail with EPIPE; a reset before any answer is a failure to report, not a hang.
    let answered = false;
    req.on('response', () => (answered = true));
    req.on('error', (error: NodeJS.ErrnoException) =>
      answered && (error.code === 'EPIPE' || error.code === 'ECONNRESET') ? undefined : reject(error),
    );
    req.end(body);
  });
}

/**
 * POST a body of `size` bytes of `{`: the headers and a first 64 KiB chunk, then nothing more until the server answers
 * (or `holdMs` passes); after the answer, the rest of the body in 64 KiB chunks with backpressure, as a sender that
 * does not read answers early would go on. `sent` is how many bytes were written when the answer came: a server that
 * refuses before it reads the body answers at the first chunk; one that waits for the body gets the rest only after
 * `holdMs` and answers at `size`. What is measured is which bytes the answer needed, not how fast anything ran.
 */
function postHeld(
  port: number,
  headers: Record<string, string>,
  size: number,
  holdMs: number,
): Promise<{ status: number; sent: number }> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answer: { status: number; sent: number } | undefined;
    let bodyDone = false;
    const settle = (): void => {
      if (answer && bodyDone) resolve(answer);
    };
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/github/webhooks',
        headers: { 'content-type': 'application/json', ...headers, 'content-length': String(size) },
      },
      (res) => {
        answer = { status: res.statusCode ?? 0, sent };
        clearTimeout(hold);
        res.resume();
        pump();
      },
    );
    // The server may close the connection once it has answered (and read the rest into nothing for a while): a write
    // after the answer can then fail with EPIPE or a reset. Before the answer, any error is a failure.
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (answer && (error.code === 'EPIPE' || error.code === 'ECONNRESET')) {
        bodyDone = true;
        settle();
      } else reject(error);
    });
    req.on('close', () => {
      if (!answer) return reject(new Error(`the connection closed after ${sent} bytes without an answer`));
      bodyDone = true;
      settle();
    });
    const chunk = Buffer.alloc(64 * 1024, 0x7b);
    let pumping = false;
    const pump = (): void => {
      if (pumping) return;
      pumping = true;
      const next = (): void => {
        while (sent < size && !req.destroyed) {
          const piece = chunk.subarray(0, Math.min(chunk.length, size - sent));
          sent += piece.length;
          if (!req.write(piece)) {
            req.once('drain', next);
            return;
          }
        }
        if (!req.destroyed) req.end();
      };
      next();
    };
    const first = chunk.subarray(0, Math.min(chunk.length, size));
    sent = first.length;
    req.write(first);
    req.flushHeaders();
    const hold = setTimeout(pump, holdMs);
  });
}

const sign = (body: string | Buffer, secret = SECRET) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

describe('production refuses to start without its secrets', () => {
  const start = (env: Record<string, string>) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, NODE_ENV: 'production', PORT: '0', ...env },
      encoding: 'utf8',
      timeout: 30_000,
    });
  it('without WEBHOOK_SECRET', () => {
    const result = start({ APP_ID: '1', PRIVATE_KEY: privateKey() });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('refusing to start in production: WEBHOOK_SECRET is not set');
  });
  it("with Probot's public default secret, or without APP_ID and a key", () => {
    expect(start({ APP_ID: '1', PRIVATE_KEY: privateKey(), WEBHOOK_SECRET: 'development' }).stderr).toContain(
      'WEBHOOK_SECRET is Probot\'s public default "development"',
    );
    const bare = start({ WEBHOOK_SECRET: 's3cret' });
    expect(bare.status).toBe(1);
    expect(bare.stderr).toContain('APP_ID is not set; neither PRIVATE_KEY nor PRIVATE_KEY_PATH is set');
    expect(bare.stderr).not.toContain('s3cret');
  });
});

describe('webhook bodies', () => {
  it('eight 25 MB wrongly signed bodies are refused before they are buffered: memory and log stay small', async () => {
    const { app } = server;
    const rss = app.rssMb();
    const logBefore = app.output().length;
    const size = 25 * 1024 * 1024;
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        postHeld(
          app.port,
          { 'x-github-event': 'pull_request', 'x-github-delivery': `big-${i}`, 'x-hub-signature-256': sign('other') },
          size,
          20_000,
        ),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(413));
    // Each answer came with only the first chunk sent: nothing waited for the bytes (a size bound, not a clock).
    for (const answer of answers) expect(answer.sent).toBe(64 * 1024);
    // What the server holds and logs is no share of the 200 MiB offered: less than half of it in memory (noise of
    // the heap included), and a few lines of log (one per refusal), not the bodies.
    const offeredMb = (answers.length * size) / 1024 / 1024;
    expect(app.rssMb() - rss).toBeLessThan(offeredMb / 2);
    expect(app.output().length - logBefore).toBeLessThan(answers.length * 1000);
  }, 60_000);

  it('a chunked body past the cap is cut off with 413', async () => {
    const answer = await post(
      server.app.port,
      { 'x-github-event': 'pull_request', 'x-github-delivery': 'chunked', 'x-hub-signature-256': sign('x') },
      Buffer.alloc(2 * 1024 * 1024, 0x20),
      { chunked: true },
    );
    expect(answer.status).toBe(413);
  });

  it('an unsigned body gets 401, a wrongly signed one 401, and neither is logged', async () => {
    const { app } = server;
    const body = JSON.stringify({ action: 'opened', secret_marker: 'BODY-MARKER-42' });
    expect((await post(app.port, { 'x-github-event': 'pull_request', 'x-github-delivery': 'u1' }, body)).status).toBe(
      401,
    );
    expect(
      (
        await post(
          app.port,
          { 'x-github-event': 'pull_request', 'x-github-delivery': 'u2', 'x-hub-signature-256': sign(body, 'wrong') },
          body,
        )
      ).status,
    ).toBe(401);
    // The wrongly signed one is logged (without its body) before it is answered: once that line is out, anything
    // either delivery would have logged is too.
    await waitFor(() => (/signature does not match\s+deliveryId: "u2"/.test(app.output()) ? true : undefined));
    expect(app.output()).not.toContain('BODY-MARKER-42');
  });

  it('a body that trickles in too slowly gets 408, not 202', async () => {
    const status = await new Promise<number>((resolve) => {
      const socket = connect(server.app.port, '127.0.0.1', () => {
        socket.write(
          `POST /api/github/webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nX-GitHub-Event: push\r\nX-GitHub-Delivery: slow\r\nX-Hub-Signature-256: ${sign('x')}\r\n\r\n{`,
        );
      });
      socket.on('data', (chunk: Buffer) => resolve(Number(/HTTP\/1\.1 (\d{3})/.exec(chunk.toString())?.[1] ?? 0)));
    });
    expect(status).toBe(408);
  });

  it('a signed payload without the fields its event needs gets 400 with a plain reason', async () => {
    const body = JSON.stringify({ action: 'opened', repository: { name: 'x' } });
    const answer = await post(
      server.app.port,
      { 'x-github-event': 'pull_request', 'x-github-delivery': 'm1', 'x-hub-signature-256': sign(body) },
      body,
    );
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toEqual({ error: 'a pull_request event needs pull_request, installation' });
    const notJson = '{"action": ';
    expect(
      (
        await post(
          server.app.port,
          { 'x-github-event': 'push', 'x-github-delivery': 'm2', 'x-hub-signature-256': sign(notJson) },
          notJson,
        )
      ).status,
    ).toBe(400);
  });

  it('an event whose name only an object prototype knows is accepted and ignored, as any other event', async () => {
    const body = JSON.stringify({ action: 'opened' });
    const answer = await post(
      server.app.port,
      { 'x-github-event': 'constructor', 'x-github-delivery': 'm3', 'x-hub-signature-256': sign(body) },
      body,
    );
    expect(answer.status).toBe(202);
  });

  it('a good delivery is answered 202 at once and checked after', async () => {
    const { fake, app } = server;
    const scenario = pullScenario(fake, {
      head: { 'requirements.txt': 'torch==2.3.0+cu121\n' },
      changed: ['requirements.txt'],
      number: 61,
    });
    const response = await sendWebhook(app.port, 'pull_request', scenario.payload, 'good-1');
    expect(response.status).toBe(202);
    await waitFor(() => fake.checkRuns.find((run) => run.head_sha === scenario.headSha), 20_000, app.output);
  });
});

describe('/metrics and /healthz', () => {
  const get = async (path: string, headers: Record<string, string> = {}) =>
    fetch(`http://127.0.0.1:${server.app.port}${path}`, { headers });
  it('/metrics needs the token; /healthz does not', async () => {
    expect((await get('/metrics')).status).toBe(401);
    expect((await get('/metrics', { authorization: 'Bearer wrong-token-for-tests!!' })).status).toBe(401);
    const ok = await get('/metrics', { authorization: 'Bearer metrics-token-for-tests' });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('cuda_gatekeeper_webhooks_total');
    expect(await (await get('/healthz')).json()).toEqual({ status: 'ok' });
  });
});

describe('SIGTERM drains', () => {
  it('finishes the delivery in hand and exits 0 within the bound', async () => {
    const { fake, app } = server;
    const scenario = pullScenario(fake, {
      head: { 'requirements.txt': 'torch==2.3.0+cu121\n' },
      changed: ['requirements.txt'],
      number: 62,
    });
    expect((await sendWebhook(app.port, 'pull_request', scenario.payload, 'drain-1')).status).toBe(202);
    const exited = new Promise<number | null>((resolve) => app.process.on('exit', (code) => resolve(code)));
    app.process.kill('SIGTERM');
    // Exit 0 says the drain finished within DRAIN_TIMEOUT_MS; past it the server exits 1 (src/main.ts).
    expect(await exited).toBe(0);
    expect(
      fake.checkRuns.filter((run) => run.head_sha === scenario.headSha && run.status === 'completed'),
    ).toHaveLength(1);
  }, 30_000);
});
