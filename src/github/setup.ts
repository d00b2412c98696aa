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
 *    holds; an `.env` that already names an APP_ID is never overwritten. The page says to restart.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
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
 * A value as `.env` holds it: double-quoted, newlines and quotes escaped (Node's `--env-file` and dotenv read it back).
 */
function envValue(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\r?\n/g, '\\n')}"`;
}

/** Add the App's credentials to `.env`, keeping what it holds; refuse when it already names an App. */
export function writeCredentials(envPath: string, app: Registered): void {
  const existing = existsSync(envPath) ? readFileSync(envPath, 'utf8') : '';
  if (/^\s*APP_ID\s*=/m.test(existing)) throw new Error(`${envPath} already sets APP_ID: it was left as it is`);
  const lines = [
    `# GitHub App "${app.slug}", registered from app.yml on ${new Date().toISOString().slice(0, 10)}`,
    `APP_ID=${app.id}`,
    `PRIVATE_KEY=${envValue(app.pem)}`,
    ...(app.webhook_secret ? [`WEBHOOK_SECRET=${envValue(app.webhook_secret)}`] : []),
  ];
  const text = `${existing}${existing && !existing.endsWith('\n') ? '\n' : ''}${lines.join('\n')}\n`;
  writeFileSync(envPath, text, { mode: 0o600 });
  chmodSync(envPath, 0o600);
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
  const states = new Map<string, number>();
  const doFetch = options.fetch ?? fetch;
  const defaultHook = options.webhookProxyUrl ?? `${options.selfUrl}/api/github/webhooks`;

  const form = (error?: string, hook = defaultHook, org = '') =>
    page(
      'Register cuda-gatekeeper on GitHub',
      `${error ? `<p class="error">${esc(error)}</p>` : ''}<p>No <code>APP_ID</code> is set, so this server registers the App first: GitHub creates it from <code>app.yml</code>, and its credentials are written to <code>${esc(options.envPath)}</code>.</p>
<form method="post" action="/setup/start">
<label>Webhook URL (where GitHub can reach this server, or a proxy such as smee.io)<input name="webhook" value="${esc(hook)}" required></label>
<label>Organisation to own the App (empty: your account)<input name="org" value="${esc(org)}" pattern="[A-Za-z0-9-]*"></label>
<button type="submit">Continue to GitHub</button></form>`,
    );

  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://setup.local');
    if (req.method === 'GET' && url.pathname === '/') return send(res, 200, form());
    if (req.method === 'POST' && url.pathname === '/setup/start') {
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
      const state = randomBytes(16).toString('hex');
      states.set(state, Date.now());
      while (states.size > STATES_KEPT) states.delete(states.keys().next().value!);
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
      if (!issued || Date.now() - issued > STATE_TTL_MS)
        return send(res, 400, form('This registration was not started here (or is over an hour old): start again.'));
      states.delete(state);
      if (!/^[A-Za-z0-9_-]{1,100}$/.test(code)) return send(res, 400, form('GitHub sent no usable code: start again.'));
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
        writeCredentials(options.envPath, app);
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
