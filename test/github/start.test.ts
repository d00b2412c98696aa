/**
 * Starting the App the way the README says (issue 25): `npm start` from a fresh clone (no dist/), the manifest
 * flow when no App is registered yet, and the code exchange against the fake GitHub
 * ("Registering a GitHub App from a manifest": POST /app-manifests/{code}/conversions).
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { setupHandler } from '../../src/github/setup.js';
import { packageRoot } from '../../src/util/package-root.js';
import { FakeGitHub } from '../support/fake-github.js';
import { privateKey } from '../support/probot.js';
import { freePort, waitFor } from '../support/server.js';

const ROOT = packageRoot();
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** The files a clone has (tracked, and new files git does not ignore), with the installed node_modules linked in. */
function freshClone(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cg-clone-'));
  made.push(dir);
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\0')
    .filter(Boolean);
  for (const file of files) {
    try {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      cpSync(join(ROOT, file), join(dir, file));
    } catch {
      // a file listed but deleted in the working tree
    }
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/** `npm start` in `cwd`; `stop` sends SIGTERM and resolves once the process has exited. */
function npmStart(cwd: string, env: Record<string, string>): { output: () => string; stop: () => Promise<void> } {
  let output = '';
  const child = spawn('npm', ['start', '--silent'], {
    cwd,
    env: { PATH: process.env.PATH!, HOME: cwd, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    output: () => output,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

describe('npm start from a fresh clone', () => {
  it('builds what it needs, serves the registration page without an App, and the App with one', async () => {
    const clone = freshClone();
    const port = await freePort();
    const setup = npmStart(clone, { PORT: String(port), HOST: '127.0.0.1' });
    try {
      await waitFor(
        () => (/to register the App on GitHub/.test(setup.output()) ? true : undefined),
        120_000,
        setup.output,
      );
      const page = await (await fetch(`http://127.0.0.1:${port}/`)).text();
      expect(page).toContain('<form method="post" action="/setup/start">');
    } finally {
      await setup.stop();
    }
    // Now with credentials: the App itself (against a fake GitHub), from the build the first start made.
    const fake = new FakeGitHub();
    const { server, port: githubPort } = await fake.listen();
    const appPort = await freePort();
    const app = npmStart(clone, {
      PORT: String(appPort),
      HOST: '127.0.0.1',
      APP_ID: '1',
      PRIVATE_KEY: privateKey(),
      WEBHOOK_SECRET: 'start-test-secret',
      GHE_HOST: `127.0.0.1:${githubPort}`,
      GHE_PROTOCOL: 'http',
    });
    try {
      await waitFor(() => (/Listening on/.test(app.output()) ? true : undefined), 60_000, app.output);
      expect(app.output()).not.toContain('compiling');
      expect((await fetch(`http://127.0.0.1:${appPort}/healthz`)).status).toBe(200);
    } finally {
      await app.stop();
      server.close();
    }
  }, 240_000);
});

describe('registering the App from app.yml', () => {
  async function serve(handler: ReturnType<typeof setupHandler>): Promise<{ server: Server; url: string }> {
    const server = createServer((req, res) => void handler(req, res).then((done) => done || res.writeHead(404).end()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
  }

  it('posts app.yml as the manifest, exchanges the code and writes .env (0600), keeping what it held', async () => {
    const fake = new FakeGitHub();
    const github = await fake.listen();
    const dir = mkdtempSync(join(tmpdir(), 'cg-setup-'));
    made.push(dir);
    const envPath = join(dir, '.env');
    writeFileSync(envPath, 'LOG_LEVEL=debug\n');
    const pem = privateKey();
    fake.manifestCodes.set('code-123', {
      id: 4242,
      slug: 'cuda-gatekeeper-acme',
      pem,
      webhook_secret: 'whsec-from-github',
    });
    const app = await serve(
      setupHandler({
        manifest: readFileSync(join(ROOT, 'app.yml'), 'utf8'),
        envPath,
        webUrl: 'https://github.test',
        apiUrl: `http://127.0.0.1:${github.port}/api/v3`,
        selfUrl: 'http://127.0.0.1:3000',
      }),
    );
    try {
      const start = await (
        await fetch(`${app.url}/setup/start`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'webhook=https%3A%2F%2Fsmee.io%2Fabc&org=acme',
        })
      ).text();
      const action = /action="([^"]+)"/.exec(start)![1]!.replace(/&amp;/g, '&');
      expect(action).toMatch(/^https:\/\/github\.test\/organizations\/acme\/settings\/apps\/new\?state=[0-9a-f]{32}$/);
      const manifest = JSON.parse(
        /name="manifest" value="([^"]+)"/
          .exec(start)![1]!
          .replace(/&quot;/g, '"')
          .replace(/&amp;/g, '&'),
      ) as {
        name: string;
        hook_attributes: { url: string };
        redirect_url: string;
        default_permissions: Record<string, string>;
      };
      expect(manifest).toMatchObject({
        name: 'cuda-gatekeeper',
        hook_attributes: { url: 'https://smee.io/abc' },
        redirect_url: 'http://127.0.0.1:3000/setup/callback',
      });
      expect(manifest.default_permissions.checks).toBe('write');
      // A callback with a state this server never issued is refused, and exchanges nothing.
      expect((await fetch(`${app.url}/setup/callback?code=code-123&state=${'0'.repeat(32)}`)).status).toBe(400);
      const state = new URL(action).searchParams.get('state')!;
      const done = await fetch(`${app.url}/setup/callback?code=code-123&state=${state}`);
      expect(done.status).toBe(200);
      expect(await done.text()).toContain('Restart the server');
      const env = readFileSync(envPath, 'utf8');
      expect(env.startsWith('LOG_LEVEL=debug\n')).toBe(true);
      expect(env).toContain('APP_ID=4242\n');
      expect(env).toContain('WEBHOOK_SECRET="whsec-from-github"');
      expect(statSync(envPath).mode & 0o777).toBe(0o600);
      // Node reads the key back as it was.
      const probe = execFileSync(
        process.execPath,
        ['-e', `process.loadEnvFile(${JSON.stringify(envPath)}); process.stdout.write(process.env.PRIVATE_KEY)`],
        {
          encoding: 'utf8',
        },
      );
      expect(probe).toBe(pem);
      expect(fake.requests.filter((request) => request.path === '/app-manifests/code-123/conversions')).toHaveLength(1);
    } finally {
      app.server.close();
      github.server.close();
    }
  });

  it('never overwrites an .env that already names an App', async () => {
    const fake = new FakeGitHub();
    const github = await fake.listen();
    const dir = mkdtempSync(join(tmpdir(), 'cg-setup-'));
    made.push(dir);
    const envPath = join(dir, '.env');
    writeFileSync(envPath, 'APP_ID=1\n');
    fake.manifestCodes.set('c', { id: 7, slug: 's', pem: 'p', webhook_secret: 'w' });
    const app = await serve(
      setupHandler({
        manifest: 'name: x\n',
        envPath,
        webUrl: 'https://github.test',
        apiUrl: `http://127.0.0.1:${github.port}/api/v3`,
        selfUrl: 'http://x',
      }),
    );
    try {
      const start = await (
        await fetch(`${app.url}/setup/start`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'webhook=https%3A%2F%2Fa.b',
        })
      ).text();
      const state = /state=([0-9a-f]{32})/.exec(start)![1]!;
      const answer = await fetch(`${app.url}/setup/callback?code=c&state=${state}`);
      expect(answer.status).toBe(409);
      expect(readFileSync(envPath, 'utf8')).toBe('APP_ID=1\n');
    } finally {
      app.server.close();
      github.server.close();
    }
  });
});

describe('compose.yaml: the App with Redis, for several replicas', () => {
  it('runs the image with the durable queue on a Redis that keeps its data, behind one address', () => {
    const compose = parse(readFileSync(join(ROOT, 'compose.yaml'), 'utf8')) as {
      services: Record<
        string,
        {
          build?: string;
          image?: string;
          environment?: Record<string, string>;
          command?: string[];
          ports?: string[];
          depends_on?: unknown;
        }
      >;
      volumes: Record<string, unknown>;
      configs: Record<string, { content: string }>;
    };
    const { app, redis, proxy } = compose.services;
    expect(app!.build).toBe('.');
    expect(app!.environment).toMatchObject({
      NODE_ENV: 'production',
      REDIS_URL: 'redis://redis:6379',
      REQUIRE_DURABLE_REDIS: '1',
    });
    expect(app!.ports).toBeUndefined(); // replicas sit behind the proxy: one webhook URL for GitHub
    expect(redis!.command).toEqual(expect.arrayContaining(['--appendonly', 'yes']));
    expect(proxy!.ports).toEqual(['${PORT:-3000}:3000']);
    expect(compose.configs.nginx!.content).toContain('proxy_pass http://app;');
    expect(Object.keys(compose.volumes)).toContain('redis-data');
  });
});
