/**
 * Starting the App the way the README says (issue 25): `npm start` from a fresh clone (no dist/), the manifest
 * flow when no App is registered yet, and the code exchange against the fake GitHub
 * ("Registering a GitHub App from a manifest": POST /app-manifests/{code}/conversions).
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { getPrivateKey } from '@probot/get-private-key';
import { setupHandler, type SetupOptions } from '../../src/github/setup.js';
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

/**
 * `npm start` in `cwd`, in a process group of its own; `stop` sends SIGTERM to the group (npm, its shell and the
 * server: what a terminal's Ctrl-C or `docker stop` reaches) and resolves once the server's port is closed.
 */
function npmStart(
  cwd: string,
  env: Record<string, string>,
): { output: () => string; stop: () => Promise<void>; exited: Promise<number | null> } {
  let output = '';
  const child = spawn('npm', ['start', '--silent'], {
    cwd,
    env: { PATH: process.env.PATH!, HOME: cwd, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const closed = async (): Promise<void> => {
    const port = Number(env.PORT);
    await waitFor(
      () =>
        fetch(`http://127.0.0.1:${port}/healthz`).then(
          () => undefined,
          () => true,
        ),
      10_000,
      () => `a server still answers on ${port}`,
    );
  };
  return {
    output: () => output,
    exited,
    stop: async () => {
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // already gone
      }
      await exited;
      await closed();
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
      // SIGTERM during setup: the server exits at once, cleanly, and leaves nothing listening.
      const stopped = Date.now();
      await setup.stop();
      expect(Date.now() - stopped).toBeLessThan(5000);
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

/**
 * `docker run --env-file`'s rules (docs.docker.com/reference/cli/docker/container/run, "Set environment variables"):
 * one `VAR=VAL` per line, `#` lines are comments, and the value is everything after the first `=`, as written (no
 * quote removal, no escapes).
 */
function dockerEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const at = line.indexOf('=');
    out[line.slice(0, at).trim()] = line.slice(at + 1);
  }
  return out;
}

/**
 * Compose's rules for an unquoted value (docs.docker.com/compose/how-tos/environment-variables/
 * variable-interpolation, ".env file syntax"): surrounding blanks trimmed, an inline comment starts at ` #`, and
 * `$VAR`/`${VAR}` are interpolated (none may appear in what the App writes). Quoted values are not written by it.
 */
function composeEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const at = line.indexOf('=');
    let value = line.slice(at + 1);
    const comment = value.indexOf(' #');
    if (comment >= 0) value = value.slice(0, comment);
    expect(value).not.toMatch(/\$/);
    out[line.slice(0, at).trim()] = value.trim();
  }
  return out;
}

describe('registering the App from app.yml', () => {
  /** The handler on a free loopback port; the browser reaches it there (its Host is allowed). */
  async function serve(options: SetupOptions): Promise<{ server: Server; url: string }> {
    const current: { handler?: ReturnType<typeof setupHandler> } = {};
    const server = createServer(
      (req, res) => void current.handler!(req, res).then((done) => done || res.writeHead(404).end()),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    current.handler = setupHandler({ ...options, allowedHosts: [new URL(url).host] });
    return { server, url };
  }

  /** The setup cookie a start answer set, as the browser sends it back. */
  const cookieFrom = (answer: Response) => answer.headers.get('set-cookie')!.split(';')[0]!;

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
    const app = await serve({
      manifest: readFileSync(join(ROOT, 'app.yml'), 'utf8'),
      envPath,
      webUrl: 'https://github.test',
      apiUrl: `http://127.0.0.1:${github.port}/api/v3`,
      selfUrl: 'http://127.0.0.1:3000',
    });
    try {
      const started = await fetch(`${app.url}/setup/start`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'webhook=https%3A%2F%2Fsmee.io%2Fabc&org=acme',
      });
      const cookie = cookieFrom(started);
      const start = await started.text();
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
      expect(
        (await fetch(`${app.url}/setup/callback?code=code-123&state=${'0'.repeat(32)}`, { headers: { cookie } }))
          .status,
      ).toBe(400);
      const state = new URL(action).searchParams.get('state')!;
      const done = await fetch(`${app.url}/setup/callback?code=code-123&state=${state}`, { headers: { cookie } });
      expect(done.status).toBe(200);
      expect(await done.text()).toContain('Restart the server');
      const env = readFileSync(envPath, 'utf8');
      expect(env.startsWith('LOG_LEVEL=debug\n')).toBe(true);
      expect(env).toContain('APP_ID=4242\n');
      expect(env).toContain('WEBHOOK_SECRET=whsec-from-github\n');
      // The webhook URL given was a smee.io channel: the App relays it once it runs.
      expect(env).toContain('WEBHOOK_PROXY_URL=https://smee.io/abc\n');
      expect(statSync(envPath).mode & 0o777).toBe(0o600);
      // Every reader of the file gets the same values, and the App's key reader (Probot's getPrivateKey) the key.
      const node = JSON.parse(
        execFileSync(
          process.execPath,
          ['-e', `process.loadEnvFile(${JSON.stringify(envPath)}); process.stdout.write(JSON.stringify(process.env))`],
          { encoding: 'utf8' },
        ),
      ) as Record<string, string>;
      for (const read of [node, dockerEnvFile(env), composeEnvFile(env)]) {
        expect(read.APP_ID).toBe('4242');
        expect(read.WEBHOOK_SECRET).toBe('whsec-from-github');
        expect(read.WEBHOOK_PROXY_URL).toBe('https://smee.io/abc');
        expect(getPrivateKey({ env: { PRIVATE_KEY: read.PRIVATE_KEY } })).toBe(pem);
      }
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
    const app = await serve({
      manifest: 'name: x\n',
      envPath,
      webUrl: 'https://github.test',
      apiUrl: `http://127.0.0.1:${github.port}/api/v3`,
      selfUrl: 'http://x',
    });
    try {
      const started = await fetch(`${app.url}/setup/start`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'webhook=https%3A%2F%2Fa.b',
      });
      const cookie = cookieFrom(started);
      const state = /state=([0-9a-f]{32})/.exec(await started.text())![1]!;
      const answer = await fetch(`${app.url}/setup/callback?code=c&state=${state}`, { headers: { cookie } });
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
          healthcheck?: { test: string[] };
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
    // One trusted proxy, which appends the client's address ($$ is Compose's escape for $).
    expect(app!.environment!.TRUST_PROXY).toBe('1');
    expect(compose.configs.nginx!.content).toContain('X-Forwarded-For $$proxy_add_x_forwarded_for');
    // Scaling without a restart: the upstream is re-resolved (`resolve` needs a shared zone and a resolver).
    expect(compose.configs.nginx!.content).toMatch(/resolver 127\.0\.0\.11 valid=\d+s/);
    expect(compose.configs.nginx!.content).toMatch(/zone app \d+k;\s*server app:3000 resolve;/);
    expect(proxy!.image).toMatch(/^nginx:1\.(2[89]|[3-9]\d)/); // 1.27.3+: open-source nginx has `resolve`
    expect(proxy!.depends_on).toEqual({ app: { condition: 'service_healthy' } });
    // The App's health check asks /healthz with the image's own node (no curl in the image).
    expect(app!.healthcheck!.test.join(' ')).toContain("fetch('http://127.0.0.1:3000/healthz')");
  });

  it('the image runs the current Node LTS (24), as the workflows do', () => {
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const bases = [...dockerfile.matchAll(/^FROM node:(\d+)[.\w-]*/gm)].map((match) => match[1]);
    expect(bases.length).toBeGreaterThan(0);
    expect(new Set(bases)).toEqual(new Set(['24']));
    for (const workflow of ['release.yml', 'kb-refresh.yml']) {
      const text = readFileSync(join(ROOT, '.github', 'workflows', workflow), 'utf8');
      expect(text).not.toMatch(/actions\/(checkout|setup-node)@v[1-5]\b/);
      for (const version of text.matchAll(/node-version: (\d+)/g)) expect(version[1]).toBe('24');
    }
  });
});

describe('only the operator finishes the setup (the real server process)', () => {
  /** A request with any Host and headers (fetch does not let a page, or a test, set Host). */
  function raw(
    port: number,
    method: string,
    path: string,
    headers: Record<string, string>,
    body = '',
  ): Promise<{ status: number; text: string; cookie?: string }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            text,
            ...(res.headers['set-cookie'] ? { cookie: res.headers['set-cookie'][0]!.split(';')[0]! } : {}),
          }),
        );
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  it('refuses a foreign Host or Origin, a callback from another browser, a symlinked .env and an exported APP_ID; the operator registers', async () => {
    const fake = new FakeGitHub();
    const github = await fake.listen();
    for (const code of ['stranger', 'linked', 'exported', 'operator'])
      fake.manifestCodes.set(code, {
        id: 4000 + code.length,
        slug: `app-${code}`,
        pem: privateKey(),
        webhook_secret: `w-${code}`,
      });
    const dir = mkdtempSync(join(tmpdir(), 'cg-setup-'));
    made.push(dir);
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), join(ROOT, 'src', 'main.ts')], {
      cwd: dir,
      env: {
        PATH: process.env.PATH!,
        HOME: dir,
        PORT: String(port),
        GHE_HOST: `127.0.0.1:${github.port}`,
        GHE_PROTOCOL: 'http',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      await waitFor(
        () => (output.includes('no APP_ID is set') ? true : undefined),
        30_000,
        () => output,
      );
      const self = `127.0.0.1:${port}`;
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      const start = (headers: Record<string, string>) =>
        raw(port, 'POST', '/setup/start', { ...form, ...headers }, 'webhook=https%3A%2F%2Fsmee.io%2Fabc');
      const stateOf = (text: string) => /state=([0-9a-f]{32})/.exec(text)![1]!;
      const callback = (code: string, state: string, cookie?: string) =>
        raw(port, 'GET', `/setup/callback?code=${code}&state=${state}`, { host: self, ...(cookie ? { cookie } : {}) });

      // DNS rebinding: a page on a foreign name that resolves here carries that name as its Host.
      expect((await start({ host: `rebind.example:${port}` })).status).toBe(403);
      // A cross-site form posted from a page the operator visits.
      expect((await start({ host: self, origin: 'https://evil.example' })).status).toBe(403);

      const operator = await start({ host: self, origin: `http://${self}` });
      expect(operator.status).toBe(200);
      const cookie = operator.cookie!;
      expect(cookie).toMatch(/^cuda_gatekeeper_setup=[0-9a-f]{32}$/);
      let state = stateOf(operator.text);
      // Strangers flood the starts: they are refused past the cap, and the operator's state stays.
      const flood = await Promise.all(Array.from({ length: 25 }, () => start({ host: self })));
      expect(flood.filter((answer) => answer.status === 429).length).toBeGreaterThan(0);
      // A stranger who learned the state has no cookie: refused, and nothing is used up.
      expect((await callback('..malformed..', state)).status).toBe(400);
      expect((await callback('stranger', state)).status).toBe(400);
      expect(fake.requests.filter((request) => request.path.includes('/app-manifests/'))).toEqual([]);

      // .env as a link to a file elsewhere: nothing is written through it.
      const elsewhere = join(dir, 'elsewhere.env');
      writeFileSync(elsewhere, 'KEEP=1\n');
      symlinkSync(elsewhere, join(dir, '.env'));
      const linked = await callback('linked', state, cookie);
      expect(linked.status).toBe(409);
      expect(linked.text).toContain('is a symbolic link');
      expect(readFileSync(elsewhere, 'utf8')).toBe('KEEP=1\n');
      rmSync(join(dir, '.env'));

      // An .env that exports an APP_ID already names an App.
      writeFileSync(join(dir, '.env'), 'export APP_ID=5\n');
      state = stateOf((await start({ host: self, origin: `http://${self}`, cookie })).text);
      expect((await callback('exported', state, cookie)).status).toBe(409);
      expect(readFileSync(join(dir, '.env'), 'utf8')).toBe('export APP_ID=5\n');
      rmSync(join(dir, '.env'));

      state = stateOf((await start({ host: self, origin: `http://${self}`, cookie })).text);
      const done = await callback('operator', state, cookie);
      expect(done.status).toBe(200);
      expect(readFileSync(join(dir, '.env'), 'utf8')).toContain(`APP_ID=${4000 + 'operator'.length}\n`);
    } finally {
      child.kill('SIGTERM');
      github.server.close();
    }
  }, 60_000);
});
