/**
 * Registering the App in one step, by GitHub's manifest flow ("Registering a GitHub App from a manifest",
 * docs.github.com/en/apps/sharing-github-apps/registering-a-github-app-from-a-manifest). `npm start` without an
 * APP_ID outside production serves this instead of the App:
 *
 * 1. `GET /`: a page that asks where GitHub will send webhooks (and, optionally, the organisation to own the App).
 * 2. `POST /setup/start`: a form, posted by the browser to `https://github.com/settings/apps/new?state=…` (or
 *    `…/organizations/<org>/settings/apps/new`), whose `manifest` field is app.yml as JSON with that webhook URL
 *    and this server's callback as `redirect_url`.
 * 3. GitHub redirects to `GET /setup/callback?code=…&state=…`; the state must be one this server issued (no one
 *    else can make it register an App), and the code is exchanged within the hour it lives:
 *    `POST /app-manifests/{code}/conversions` answers the new App's `id`, `pem` and `webhook_secret`.
 * 4. They are written to `.env` (mode 0600): APP_ID, PRIVATE_KEY, WEBHOOK_SECRET, added to what the file already
 *    holds; an `.env` that already names an APP_ID (`APP_ID=` or `export APP_ID=`) is never overwritten, and an
 *    `.env` that is a symbolic link is not written through. The page says to restart.
 *
 * Only the operator's browser can finish it:
 * - the state is bound to the browser that started the flow by a cookie (HttpOnly, SameSite=Lax: GitHub's redirect
 *   back is a cross-site top-level navigation, on which a Strict cookie is not sent, RFC 6265bis §8.8.2); a callback
 *   without that cookie is refused before the state or the code is touched, so a stranger can neither finish the flow
 *   nor burn the operator's state;
 * - requests must name this server's own Host (loopback, or SETUP_URL's host) and, for the POST, come from its own
 *   Origin: a page the operator visits cannot drive it through DNS rebinding or a cross-site form;
 * - a browser has one registration in progress at a time; past STATES_KEPT the next start is refused, never the
 *   operator's evicted;
 * - the setup server listens on loopback unless HOST says otherwise (src/main.ts).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, constants, fchmodSync, ftruncateSync, lstatSync, openSync, readFileSync, writeSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse } from 'yaml';
import { esc } from '../web/html.js';

export interface SetupOptions {
  /** app.yml's text (the manifest). */
  readonly manifest: string;
  /** Where the new App's credentials go. */
  readonly envPath: string;
  /** GitHub's web address (https://github.com, or a GitHub Enterprise host). */
  readonly webUrl: string;
  /** GitHub's REST API (https://api.github.com, or https://<host>/api/v3). */
  readonly apiUrl: string;
  /** This server's own address as the browser reaches it (for the callback). */
  readonly selfUrl: string;
  /** WEBHOOK_PROXY_URL, when webhooks come through a proxy such as smee.io. */
  readonly webhookProxyUrl?: string;
  /** Host headers accepted besides loopback (`host:port`, lower case): SETUP_URL's. */
  readonly allowedHosts?: readonly string[];
  readonly fetch?: typeof fetch;
}

interface Registered {
  readonly id: number;
  readonly slug: string;
  readonly pem: string;
  readonly webhook_secret: string | null;
  readonly html_url?: string;
}

const STATES_KEPT = 20;
/** GitHub's manifest code is valid for an hour; a state older than that is no use. */
const STATE_TTL_MS = 60 * 60 * 1000;

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${esc(title)}</title><style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1f2328;line-height:1.5}input{width:100%;padding:.4rem;margin:.2rem 0 1rem;box-sizing:border-box}button{padding:.5rem 1rem;font-size:1rem}code{background:#f6f8fa;padding:0 .2rem;overflow-wrap:anywhere}.error{color:#b42318}</style></head><body><h1>${esc(title)}</h1>${body}</body></html>`;
}

function send(res: ServerResponse, status: number, html: string): true {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  res.end(html);
  return true;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > 16 * 1024) throw new RangeError('the form is larger than 16 KiB');
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/**
 * A value as `.env` holds it, read the same by every reader of the file: `docker run --env-file` (which takes what
 * follows `=` literally, quotes included: docs.docker.com/reference/cli/docker/container/run, "--env-file"), Compose's
 * `env_file` and `.env` (unquoted values: surrounding spaces trimmed, ` #` starts a comment, `$` interpolates:
 * docs.docker.com/compose/how-tos/environment-variables/variable-interpolation, ".env file syntax") and Node's
 * `--env-file`/`process.loadEnvFile` (unquoted: taken as written). So the value is written unquoted, on one line, its
 * newlines as the two characters `\n` (the App expands them in PRIVATE_KEY, as Probot's getPrivateKey does), and a
 * value no reader could agree on (quotes, `$`, `#`, a backslash, surrounding spaces) is refused rather than written.
 */
export function envValue(value: string): string {
  const line = value.replace(/\r?\n/g, '\\n');
  const plain = line.replace(/\\n/g, '');
  if (/["'`$#\\\r\n\t]/.test(plain) || /^\s|\s$/.test(line))
    throw new Error('GitHub answered a credential that .env cannot hold the same way for docker, Compose and Node');
  return line;
}

/** Add the App's credentials to `.env`, keeping what it holds; refuse when it already names an App. */
export function writeCredentials(envPath: string, app: Registered, more: Record<string, string> = {}): void {
  let linked = false;
  try {
    linked = lstatSync(envPath).isSymbolicLink();
  } catch {
    // no file yet
  }
  if (linked) throw new Error(`${envPath} is a symbolic link: nothing was written through it`);
  if (!Number.isSafeInteger(app.id) || app.id <= 0) throw new Error('GitHub answered no App id');
  // O_NOFOLLOW: a link put in place meanwhile is refused by the system (ELOOP), not followed.
  const fd = openSync(envPath, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  try {
    const existing = readFileSync(fd, 'utf8');
    if (/^\s*(?:export\s+)?APP_ID\s*=/m.test(existing))
      throw new Error(`${envPath} already sets APP_ID: it was left as it is`);
    const slug = app.slug.replace(/[^A-Za-z0-9._-]/g, '');
    const lines = [
      `# GitHub App "${slug}", registered from app.yml on ${new Date().toISOString().slice(0, 10)}`,
      `APP_ID=${app.id}`,
      `PRIVATE_KEY=${envValue(app.pem)}`,
      ...(app.webhook_secret ? [`WEBHOOK_SECRET=${envValue(app.webhook_secret)}`] : []),
      ...Object.entries(more)
        .filter(([key]) => !new RegExp(`^\\s*(?:export\\s+)?${key}\\s*=`, 'm').test(existing))
        .map(([key, value]) => `${key}=${envValue(value)}`),
    ];
    const text = `${existing}${existing && !existing.endsWith('\n') ? '\n' : ''}${lines.join('\n')}\n`;
    ftruncateSync(fd, 0);
    writeSync(fd, text, 0, 'utf8');
    fchmodSync(fd, 0o600);
  } finally {
    closeSync(fd);
  }
}

const COOKIE = 'cuda_gatekeeper_setup';

/** The browser's setup cookie, if it sent one. */
function cookieOf(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === COOKIE) return value.join('=');
  }
  return undefined;
}

/** Constant-time equality of two strings' digests. */
function same(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/** The manifest GitHub is sent: app.yml with this deployment's webhook URL and callback. */
export function manifestFor(appYml: string, webhookUrl: string, redirectUrl: string): Record<string, unknown> {
  const manifest = parse(appYml) as Record<string, unknown>;
  return {
    ...manifest,
    hook_attributes: { ...((manifest.hook_attributes as object) ?? {}), url: webhookUrl, active: true },
    redirect_url: redirectUrl,
  };
}

/** The setup server's handler; resolves true when it answered. */
export function setupHandler(options: SetupOptions): (req: IncomingMessage, res: ServerResponse) => Promise<boolean> {
  /** state → when it was issued and the browser (its cookie) it belongs to. */
  const states = new Map<string, { readonly issued: number; readonly browser: string; readonly hook: string }>();
  const self = new URL(options.selfUrl);
  const port = self.port || (self.protocol === 'https:' ? '443' : '80');
  const hosts = new Set(
    [self.host, `localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, ...(options.allowedHosts ?? [])].map(
      (host) => host.toLowerCase(),
    ),
  );
  const origins = new Set([...hosts].flatMap((host) => [`http://${host}`, `https://${host}`]));
  const forbidden = (res: ServerResponse, why: string) =>
    send(res, 403, page('Refused', `<p class="error">${esc(why)}</p>`));
  const doFetch = options.fetch ?? fetch;
  const defaultHook = options.webhookProxyUrl ?? `${options.selfUrl}/api/github/webhooks`;

  const form = (error?: string, hook = defaultHook, org = '') =>
    page(
      'Register cuda-gatekeeper on GitHub',
      `${error ? `<p class="error">${esc(error)}</p>` : ''}<p>No <code>APP_ID</code> is set, so this server registers the App first: GitHub creates it from <code>app.yml</code>, and its credentials are written to <code>${esc(options.envPath)}</code>.</p>
<form method="post" action="/setup/start">
${
  options.webhookProxyUrl
    ? ''
    : `<p>GitHub cannot send webhooks to <code>${esc(options.selfUrl)}</code>. For local development, open <a href="https://smee.io/new">smee.io/new</a> for a channel and paste its address below: it is written to <code>.env</code> as <code>WEBHOOK_PROXY_URL</code> with the credentials, and the App relays the channel to itself. A deployment gives its own address instead.</p>`
}<label>Webhook URL (where GitHub can reach this server, or a smee.io channel)<input name="webhook" value="${esc(hook)}" required></label>
<label>Organisation to own the App (empty: your account)<input name="org" value="${esc(org)}" pattern="[A-Za-z0-9-]*"></label>
<button type="submit">Continue to GitHub</button></form>`,
    );

  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://setup.local');
    // DNS rebinding: a foreign name resolving to this address carries its own Host.
    if (!hosts.has((req.headers.host ?? '').toLowerCase()))
      return forbidden(res, `This setup server answers only at ${options.selfUrl} (Host "${req.headers.host ?? ''}").`);
    if (req.method === 'GET' && url.pathname === '/') return send(res, 200, form());
    if (req.method === 'POST' && url.pathname === '/setup/start') {
      // A form posted from another site names that site as its Origin (browsers send it on every cross-origin POST).
      const origin = req.headers.origin;
      if (origin !== undefined && !origins.has(origin.toLowerCase()))
        return forbidden(res, `A registration can be started only from this page (Origin "${origin}").`);
      let params: URLSearchParams;
      try {
        params = await readForm(req);
      } catch (error) {
        return send(res, 413, form((error as Error).message));
      }
      const hook = (params.get('webhook') ?? '').trim();
      const org = (params.get('org') ?? '').trim();
      if (!/^https?:\/\/[^\s/]+/.test(hook))
        return send(res, 400, form(`"${hook}" is not a web address (it starts with https://)`, hook, org));
      if (!/^[A-Za-z0-9-]*$/.test(org)) return send(res, 400, form(`"${org}" is not an organisation name`, hook, org));
      const now = Date.now();
      for (const [old, entry] of states) if (now - entry.issued > STATE_TTL_MS) states.delete(old);
      // One registration per browser: a new start replaces the browser's own, never anyone else's.
      const browser = cookieOf(req) ?? randomBytes(16).toString('hex');
      for (const [old, entry] of states) if (same(entry.browser, browser)) states.delete(old);
      if (states.size >= STATES_KEPT)
        return send(res, 429, form('Too many registrations are in progress: finish one, or wait an hour.', hook, org));
      const state = randomBytes(16).toString('hex');
      states.set(state, { issued: now, browser, hook });
      res.setHeader('set-cookie', `${COOKIE}=${browser}; Path=/setup; HttpOnly; SameSite=Lax; Max-Age=3600`);
      const manifest = manifestFor(options.manifest, hook, `${options.selfUrl}/setup/callback`);
      const target = `${options.webUrl}${org ? `/organizations/${encodeURIComponent(org)}` : ''}/settings/apps/new?state=${state}`;
      return send(
        res,
        200,
        page(
          'Create the App on GitHub',
          `<p>GitHub will show the App's name, permissions and events from <code>app.yml</code>; create it there, and GitHub sends you back here.</p>
<form method="post" action="${esc(target)}"><input type="hidden" name="manifest" value="${esc(JSON.stringify(manifest))}"><button type="submit">Create on GitHub</button></form>`,
        ),
      );
    }
    if (req.method === 'GET' && url.pathname === '/setup/callback') {
      const code = url.searchParams.get('code') ?? '';
      const state = url.searchParams.get('state') ?? '';
      const issued = states.get(state);
      const browser = cookieOf(req);
      // Checked before anything is used up: a stranger's callback changes nothing.
      if (!issued || Date.now() - issued.issued > STATE_TTL_MS || !browser || !same(issued.browser, browser))
        return send(
          res,
          400,
          form('This registration was not started in this browser (or is over an hour old): start again.'),
        );
      if (!/^[A-Za-z0-9_-]{1,100}$/.test(code)) return send(res, 400, form('GitHub sent no usable code: start again.'));
      states.delete(state);
      let app: Registered;
      try {
        const response = await doFetch(`${options.apiUrl}/app-manifests/${code}/conversions`, {
          method: 'POST',
          headers: { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' },
          signal: AbortSignal.timeout(30_000),
        });
        if (!response.ok) throw new Error(`GitHub answered ${response.status} (a code works once, within an hour)`);
        app = (await response.json()) as Registered;
      } catch (error) {
        return send(
          res,
          502,
          form(`The App could not be fetched from GitHub: ${(error as Error).message}. Start again.`),
        );
      }
      try {
        // A smee.io channel is where the App's webhooks arrive: the App relays it once it runs (WEBHOOK_PROXY_URL).
        const proxy = new URL(issued.hook).host === 'smee.io' && !options.webhookProxyUrl ? issued.hook : undefined;
        writeCredentials(options.envPath, app, proxy ? { WEBHOOK_PROXY_URL: proxy } : {});
      } catch (error) {
        return send(res, 409, page('Not written', `<p class="error">${esc((error as Error).message)}.</p>`));
      }
      return send(
        res,
        200,
        page(
          'Registered',
          `<p>The App <strong>${esc(app.slug)}</strong> (id ${app.id}) exists${app.html_url ? ` at <a href="${esc(app.html_url)}">${esc(app.html_url)}</a>` : ''}. Its id, private key and webhook secret are in <code>${esc(options.envPath)}</code> (readable by you alone).</p>
<p><strong>Restart the server</strong> (<code>npm start</code>) to run the App, then install it on your repositories from its page on GitHub.</p>`,
        ),
      );
    }
    return false;
  };
}
