/**
 * What starting the App as a process takes, shared by the end-to-end tests (test/support/server.ts) and the soak
 * bench (test/bench/soak.ts); no vitest here, so the bench can run it compiled.
 */
import { createHmac } from 'node:crypto';
import { createServer } from 'node:net';
import { privateKey } from './probot.js';

export const SECRET = 'e2e-webhook-secret';

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The App's environment against the fake GitHub on loopback (GHE_HOST), production mode. */
export function appEnv(port: number, githubPort: number, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    APP_ID: '1',
    PRIVATE_KEY: privateKey(),
    WEBHOOK_SECRET: SECRET,
    PORT: String(port),
    HOST: '127.0.0.1',
    GHE_HOST: `127.0.0.1:${githubPort}`,
    GHE_PROTOCOL: 'http',
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    // No registry is asked from a test (test/github/images.test.ts gives the App a fake registry instead).
    IMAGE_LOOKUP: 'off',
    ...extra,
  };
}

/** A webhook delivery signed as GitHub signs it (X-Hub-Signature-256: HMAC-SHA256 of the body). */
export function sendWebhook(
  port: number,
  name: string,
  payload: unknown,
  delivery: string,
  secret = SECRET,
): Promise<Response> {
  const body = JSON.stringify(payload);
  const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  return fetch(`http://127.0.0.1:${port}/api/github/webhooks`, {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      'x-github-event': name,
      'x-github-delivery': delivery,
      'x-hub-signature-256': signature,
    },
  });
}
