/**
 * An in-memory GitHub for App tests that answers as GitHub documents, failure modes included. It answers the
 * REST routes the App uses and any GraphQL query (executed against GitHub's real schema), validates every request
 * against GitHub's published API description, records requests and violations, and can inject faults. Used
 * through nock (in-process) and through an HTTP server on 127.0.0.1 (end-to-end).
 *
 * What it copies from GitHub, with the source of each behaviour:
 * - GraphQL partial errors: a repository that does not exist or that the installation cannot see answers its
 *   field with null and `{ type: "NOT_FOUND", path: [alias], locations, message: "Could not resolve to a Repository
 *   with the name 'owner/name'." }`, with HTTP 200 and the rest of `data` filled; a repository behind SAML SSO or an
 *   IP allow list answers `type: "FORBIDDEN"` (docs.github.com/en/graphql/guides/forming-calls-with-graphql; shapes
 *   as real responses show them: fwouts/prmonitor#1042, jasperapp/jasper#187). `errors` is left out when empty
 *   (@octokit/graphql throws whenever the key is present).
 * - `object(expression:)` answers null for a path with no file (the schema's nullable GitObject) and a Tree for a
 *   directory; connections need `first` or `last` within 1–100, else the whole query fails with
 *   EXCESSIVE_PAGINATION (docs.github.com/en/graphql/overview/rate-limits-and-query-limits-for-the-graphql-api).
 * - REST errors: `{ message: "Not Found", documentation_url, status: "404" }` (the `basic-error` schema of the
 *   OpenAPI description); a repository the token cannot see is a 404, not a 403 (docs.github.com/en/rest/
 *   authentication/authenticating-to-the-rest-api). Lists are pages of at most 100 with `link` headers.
 * - Checks: annotations of every update are appended to the run's ("Update a check run", output.annotations), at
 *   most 50 per request (422 "No more than 50 items are allowed; 51 were supplied."); `external_id` is kept; runs
 *   belong to one check suite per repository and head commit.
 * - Forks: `GET /repos/{o}/{r}/commits/{sha}/pulls` answers `[]` in the base repository for a commit only a fork's
 *   branch has (observed: TooTallNate/nx.js#410, learningequality/kolibri#14719).
 * - "List pull requests files": "Responses include a maximum of 3000 files" (REST reference, the note on that
 *   endpoint), always of the pull request's current head: each entry's `blob_url`, `raw_url` and `contents_url`
 *   name the head commit it was computed at, and `sha` is the file's blob SHA (the example response there).
 * - "Compare two commits" (`GET …/compare/{base}...{head}`): the diff from the merge base to head, with
 *   `merge_base_commit`; "the list of changed files … includes up to 300 changed files for the entire comparison"
 *   (REST reference, commits#compare-two-commits).
 * - "Get a tree" with `recursive`: every entry below the tree, each blob with its SHA; "If truncated is true in the
 *   response then the number of items in the tree array exceeded our maximum limit … 100,000 entries with a maximum
 *   size of 7 MB" (REST reference, git/trees#get-a-tree). Without `recursive`, only the top level. `treeLimit` sets
 *   the entry limit here.
 * - Rate limits: a secondary limit answers 403 (or 429) with `retry-after` and a message that says so; "you should
 *   not retry your request until after that many seconds has elapsed" (docs.github.com/en/rest/using-the-rest-api/
 *   rate-limits-for-the-rest-api, "Exceeding the rate limit"). Tests inject it with `secondaryRateLimit()`.
 * - Installations: the access token's response lists the permissions granted and `repository_selection` (REST
 *   reference, apps#create-an-installation-access-token-for-an-app). A token keeps the permissions it was created
 *   with: permissions an owner accepts later ("installation.new_permissions_accepted") need a new token. A commit
 *   (createCommitOnBranch) or a ref write with a token not granted `contents: write` is refused: REST 403, GraphQL
 *   `FORBIDDEN`, "Resource not accessible by integration" (docs.github.com/en/rest/using-the-rest-api/
 *   troubleshooting-the-rest-api, "Resource not accessible"). `GET /app/installations/{id}` answers the
 *   installation's permissions now.
 * - Registering from a manifest: `POST /app-manifests/{code}/conversions` answers 201 with the new App's `id`,
 *   `pem`, `webhook_secret`, `client_id` and `client_secret`, once per code; a used or unknown code is 404
 *   (docs.github.com/en/apps/sharing-github-apps/registering-a-github-app-from-a-manifest).
 * - Blobs: GraphQL's `Blob` has `text` ("UTF8 text data or null if the Blob is binary"), `byteSize`, `isTruncated`
 *   ("Indicates whether the contents is truncated") and `oid` (the GraphQL reference, objects#blob). GitHub does not
 *   document where it truncates; the fake truncates past `blobTextLimit` (1 MiB by default). "Get a blob" (REST,
 *   git/blobs#get-a-blob) answers `{ sha, node_id, size, url, content, encoding: "base64" }` for "blobs up to 100
 *   megabytes in size", 404 for a SHA the repository does not have.
 * - Webhook deliveries: `send` delivers an event to the App's webhook URL, signed (X-Hub-Signature-256), waiting 10 s
 *   for an answer ("Handling failed webhook deliveries": GitHub "does not automatically redeliver failed deliveries";
 *   "Best practices": respond within 10 seconds), and records the attempt as "List deliveries for an app webhook"
 *   shows it (`GET /app/hook/deliveries`: newest first, `per_page` up to 100, `cursor` pages named in the `link`
 *   header; `guid` shared by a delivery and its redeliveries; `redelivery`, `status`, `status_code`: the App's
 *   answer, 502 "failed to connect" when nothing listens, 0 "timed out" past 10 s). "Redeliver a delivery for an app
 *   webhook" (`POST /app/hook/deliveries/{delivery_id}/attempts`) answers 202 and sends the delivery again, with
 *   the same guid and `redelivery: true`; an unknown id is 404.
 * - Annotations: GitHub shows an annotation on a file of the run's commit at a line of that file; one on a path the
 *   commit does not have, or past its last line, is shown nowhere. The fake accepts them as GitHub does and records
 *   each in `annotationProblems` for tests to assert on.
 */
import { createHash, createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { executeGraphql, GitHubGraphqlError, validateGraphql, validateRest } from './openapi.js';

export interface FakeFile {
  readonly filename: string;
  readonly status: 'added' | 'modified' | 'removed' | 'renamed';
  readonly patch?: string;
  readonly previous_filename?: string;
}

export interface FakeComment {
  readonly id: number;
  body: string;
  readonly login: string;
}

export interface FakePull {
  readonly number: number;
  headSha: string;
  /** The base branch's commit the pull request was opened against (its merge base here). */
  baseSha: string;
  readonly headRef: string;
  readonly headRepo: string;
  readonly files: FakeFile[];
  readonly reviews: { body: string; comments: { path: string; line: number; body: string }[] }[];
  readonly comments: FakeComment[];
  state: 'open' | 'closed' | 'merged';
}

export interface CheckRun {
  readonly id: number;
  readonly repo: string;
  readonly head_sha: string;
  readonly suiteId: number;
  name: string;
  status: string;
  conclusion?: string;
  external_id?: string;
  output?: { title?: string; summary?: string; text?: string; annotations?: unknown[] };
  annotations: unknown[];
  actions?: unknown[];
  updates: number;
}

/** A delivery attempt as "List deliveries for an app webhook" lists it (the hook-delivery-item schema). */
export interface DeliveryRecord {
  readonly id: number;
  readonly guid: string;
  readonly delivered_at: string;
  readonly redelivery: boolean;
  readonly duration: number;
  readonly status: string;
  readonly status_code: number;
  readonly event: string;
  readonly action: string | null;
  readonly installation_id: number | null;
  readonly repository_id: number | null;
}

export interface Recorded {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly body: unknown;
  readonly status: number;
}

export interface Fault {
  readonly method?: string;
  readonly path: RegExp;
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  times: number;
}

export interface Response {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

/** The login of the app's bot user: comments written with the installation token have it. */
export const BOT_LOGIN = 'cuda-gatekeeper[bot]';

export class FakeGitHub {
  readonly repos = new Map<
    string,
    { defaultBranch: string; head: string; id: number; ownerType: 'Organization' | 'User' }
  >();
  /** commit sha → path → text */
  readonly trees = new Map<string, Map<string, string>>();
  /** commit sha → path → mode, for entries that are links or submodules (see `commit`). */
  readonly modes = new Map<string, Map<string, '120000' | '160000'>>();
  readonly pulls = new Map<string, FakePull>();
  readonly checkRuns: CheckRun[] = [];
  readonly reactions: { commentId: number; content: string }[] = [];
  readonly commits: {
    branch: string;
    repo: string;
    oid: string;
    files: { path: string; contents: string }[];
    message: { headline: string; body?: string };
  }[] = [];
  readonly permissions = new Map<string, string>();
  /** repo#branch → head commit, for branches that are not a pull request's head. */
  readonly branches = new Map<string, string>();
  readonly createdPulls: {
    repo: string;
    number: number;
    head: string;
    base: string;
    title: string;
    body: string;
    draft?: boolean;
  }[] = [];
  readonly issues: { repo: string; number: number; title: string; body: string; state: 'open' | 'closed' }[] = [];
  readonly requests: Recorded[] = [];
  readonly violations: string[] = [];
  readonly faults: Fault[] = [];
  /**
   * The repositories the installation can see (an installation on selected repositories); every other one answers
   * as if it did not exist. Unset: all of them.
   */
  selected?: Set<string>;
  /** Repositories GitHub refuses to show (SAML SSO enforcement, an IP allow list), with the message it gives. */
  readonly forbidden = new Map<string, string>();
  /**
   * Paths whose object GitHub will not give, with the message: a partial error on that one field (the data is null
   * and `errors` names its path, as for `forbidden` repositories), whatever the reason GitHub has.
   */
  readonly refusedPaths = new Map<string, string>();
  /** What each installation's token is granted (the shipped app.yml by default). */
  installationPermissions: Record<string, string> = {
    checks: 'write',
    contents: 'read',
    issues: 'write',
    metadata: 'read',
    pull_requests: 'write',
  };
  /** Bytes of a blob's `text` GraphQL gives before it answers `isTruncated: true` (undocumented at GitHub). */
  blobTextLimit = 1024 * 1024;
  /** The most entries a recursive tree lists before it is `truncated` (GitHub: 100,000). */
  treeLimit = 100_000;
  /** Manifest codes not yet exchanged, and what each becomes. */
  readonly manifestCodes = new Map<string, { id: number; slug: string; pem: string; webhook_secret: string }>();
  /** Annotations GitHub would show nowhere: a path the run's commit lacks, or a line past the file's end. */
  readonly annotationProblems: string[] = [];
  private nextId = 1000;
  /** Each installation token issued, with the permissions it was created with. */
  private readonly tokens = new Map<string, Record<string, string>>();
  private readonly suites = new Map<string, number>();
  /** Validate requests against GitHub's API description (the benchmark turns it off to measure the App alone). */
  constructor(readonly validateRequests = true) {}

  /** Where clients reach this fake (used in pagination links). */
  baseUrl = 'https://api.github.com';

  addRepo(
    fullName: string,
    files: Record<string, string>,
    defaultBranch = 'main',
    ownerType: 'Organization' | 'User' = 'Organization',
  ): string {
    const sha = this.commit(files);
    this.repos.set(fullName.toLowerCase(), { defaultBranch, head: sha, id: this.nextId++, ownerType });
    return sha;
  }

  /**
   * Store a tree and return its (fake) commit sha. `modes` marks entries that are not regular files: `120000`, a
   * symbolic link, whose blob is the target's path (the text given); `160000`, a submodule (a commit of another
   * repository; its text is ignored). "Get a tree": mode "100644 for file (blob), 100755 for executable (blob),
   * 040000 for subdirectory (tree), 160000 for submodule (commit), or 120000 for a blob that specifies the path of
   * a symlink" (REST reference, git/trees#get-a-tree).
   */
  commit(files: Record<string, string>, modes: Record<string, '120000' | '160000'> = {}): string {
    const sha = createHash('sha1')
      .update(JSON.stringify(files) + this.nextId++)
      .digest('hex');
    this.trees.set(sha, new Map(Object.entries(files)));
    if (Object.keys(modes).length > 0) this.modes.set(sha, new Map(Object.entries(modes)));
    return sha;
  }

  /** An entry's mode at a commit, as git writes it (octal text). */
  modeOf(sha: string, path: string): string {
    return this.modes.get(sha)?.get(path) ?? '100644';
  }

  addPull(
    repo: string,
    pull: Omit<FakePull, 'reviews' | 'comments' | 'state' | 'baseSha'> &
      Partial<Pick<FakePull, 'comments' | 'state' | 'baseSha'>>,
  ): FakePull {
    const base = pull.baseSha ?? this.repos.get(repo.toLowerCase())?.head ?? '';
    const full: FakePull = { reviews: [], comments: [], state: 'open', ...pull, baseSha: base };
    this.pulls.set(`${repo.toLowerCase()}#${pull.number}`, full);
    return full;
  }

  /** A push to a pull request's branch: its head moves to a commit of `files`, and its file list with it. */
  push(
    repo: string,
    number: number,
    files: Record<string, string>,
    changed: FakeFile[],
    modes: Record<string, '120000' | '160000'> = {},
  ): string {
    const pull = this.pull(repo, number)!;
    pull.headSha = this.commit(files, modes);
    pull.files.splice(0, pull.files.length, ...changed);
    return pull.headSha;
  }

  /**
   * A new base branch for a pull request ("Changing the base branch of a pull request"; GitHub does it by itself for
   * a stacked pull request when its base branch is deleted after merging): the base moves to `ref`'s head and the
   * file list is the diff from it, as "List pull requests files" then answers. GitHub sends `pull_request.edited`
   * with `changes.base` and no `synchronize` (docs.github.com/en/webhooks/webhook-events-and-payloads#pull_request).
   */
  retarget(repo: string, number: number, ref: string): string {
    const pull = this.pull(repo, number)!;
    pull.baseSha = this.resolve(repo, ref)!;
    pull.files.splice(0, pull.files.length, ...this.diff(pull.baseSha, pull.headSha));
    return pull.baseSha;
  }

  /** A commit by SHA, or the head of a branch by name (the default branch, or one in `branches`). */
  resolve(repo: string, ref: string): string | undefined {
    if (/^[0-9a-f]{40}$/.test(ref)) return this.trees.has(ref) ? ref : undefined;
    const name = ref.replace(/^refs\/heads\//, '');
    const found = this.repos.get(repo.toLowerCase());
    if (found && found.defaultBranch === name) return found.head;
    return this.branches.get(`${repo.toLowerCase()}#${name}`);
  }

  /** The files that differ from commit `base` to commit `head`, as GitHub's diff entries list them. */
  diff(base: string, head: string): FakeFile[] {
    const before = this.trees.get(base)!;
    const after = this.trees.get(head)!;
    const files: FakeFile[] = [];
    for (const [filePath, text] of after) {
      const old = before.get(filePath);
      if (old === text) continue;
      files.push({ filename: filePath, status: old === undefined ? 'added' : 'modified', patch: patchOf(text) });
    }
    for (const filePath of before.keys())
      if (!after.has(filePath)) files.push({ filename: filePath, status: 'removed' });
    return files;
  }

  /**
   * GitHub's secondary rate limit on the requests matching `path`, `times` times (REST docs, "Exceeding the rate
   * limit").
   */
  secondaryRateLimit(path: RegExp, retryAfterSeconds: number, times = 1, method?: string): void {
    this.fail({
      ...(method ? { method } : {}),
      path,
      status: 403,
      times,
      headers: { 'retry-after': String(retryAfterSeconds), 'x-ratelimit-remaining': '4990' },
      body: {
        message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
        documentation_url:
          'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits',
        status: '403',
      },
    });
  }

  fail(fault: Omit<Fault, 'times'> & { times?: number }): void {
    this.faults.push({ times: 1, ...fault });
  }

  /** The check suite of a repository's head commit (one per commit for our app). */
  suiteId(repo: string, headSha: string): number {
    const key = `${repo.toLowerCase()}@${headSha}`;
    let id = this.suites.get(key);
    if (id === undefined) this.suites.set(key, (id = this.nextId++));
    return id;
  }

  /** A repository as the installation sees it: undefined when it does not exist or is not selected. */
  visible(fullName: string): ReturnType<FakeGitHub['repos']['get']> {
    const key = fullName.toLowerCase();
    if (this.selected && !this.selected.has(key)) return undefined;
    return this.repos.get(key);
  }

  // ------------------------------------------------------------------------------------------ dispatch

  /** Where webhooks go (the App's URL and secret); unset, deliveries fail as "failed to connect". */
  hook?: { readonly url: string; readonly secret: string };
  /** Every delivery attempt, oldest first, with the event sent. */
  readonly deliveries: (DeliveryRecord & { readonly payload: unknown })[] = [];

  /** Deliver `event` to the App as GitHub does, and record the attempt (see the header). */
  async send(event: string, payload: Record<string, unknown>, guid: string, redelivery = false): Promise<number> {
    const body = JSON.stringify(payload);
    let statusCode = 502;
    let status = 'failed to connect';
    const started = Date.now();
    if (this.hook) {
      try {
        const answer = await fetch(this.hook.url, {
          method: 'POST',
          body,
          signal: AbortSignal.timeout(10_000),
          headers: {
            'content-type': 'application/json',
            'user-agent': 'GitHub-Hookshot/fake',
            'x-github-event': event,
            'x-github-delivery': guid,
            'x-hub-signature-256': `sha256=${createHmac('sha256', this.hook.secret).update(body).digest('hex')}`,
          },
        });
        await answer.arrayBuffer();
        statusCode = answer.status;
        status = answer.ok ? 'OK' : `Invalid HTTP Response: ${answer.status}`;
      } catch (error) {
        const timedOut = (error as Error).name === 'TimeoutError';
        statusCode = timedOut ? 0 : 502;
        status = timedOut ? 'timed out' : 'failed to connect';
      }
    }
    this.deliveries.push({
      id: this.nextId++,
      guid,
      delivered_at: new Date(started).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      redelivery,
      duration: (Date.now() - started) / 1000,
      status,
      status_code: statusCode,
      event,
      action: typeof payload.action === 'string' ? payload.action : null,
      installation_id: (payload.installation as { id?: number } | undefined)?.id ?? null,
      repository_id: (payload.repository as { id?: number } | undefined)?.id ?? null,
      payload,
    });
    return statusCode;
  }

  /** Tokens issued so far (each `POST …/access_tokens` is one). */
  get tokensIssued(): number {
    return this.tokens.size;
  }

  /**
   * One request. `authorization` is the request's header: with an installation token this fake issued, writes are
   * held to that token's permissions; without one (a test calling in directly, the App's JWT) they are not checked.
   */
  async handle(method: string, rawPath: string, body: unknown, authorization?: string): Promise<Response> {
    const url = new URL(rawPath, 'http://github.test');
    const path = url.pathname.replace(/^\/api\/v3/, '').replace(/^\/api\/graphql$/, '/graphql');
    const granted = this.tokens.get(/^(?:token|bearer) (\S+)$/i.exec(authorization ?? '')?.[1] ?? '');
    const response =
      granted && granted.contents !== 'write' && this.writesContents(method, path, body)
        ? forbidden(path === '/graphql')
        : await this.route(method, path, url.searchParams, body);
    this.requests.push({ method, path, query: url.search, body, status: response.status });
    return response;
  }

  /** A request that needs `contents: write`: a commit through GraphQL, or a branch created or moved. */
  private writesContents(method: string, path: string, body: unknown): boolean {
    if (path === '/graphql') return /\bcreateCommitOnBranch\b/.test((body as { query?: string })?.query ?? '');
    return (method === 'POST' || method === 'PATCH') && /^\/repos\/[^/]+\/[^/]+\/git\/refs/.test(path);
  }

  private async route(method: string, path: string, query: URLSearchParams, body: unknown): Promise<Response> {
    if (!this.validateRequests) {
      // no validation
    } else if (path === '/graphql' && method === 'POST') {
      const { query: text } = body as { query: string };
      const problems = validateGraphql(text);
      if (problems.length) {
        this.violations.push(...problems);
        return { status: 200, body: { errors: problems.map((message) => ({ message })) } };
      }
    } else {
      const problems = validateRest(method, path, query, body);
      if (problems.length) this.violations.push(...problems.map((problem) => `${method} ${path}: ${problem}`));
    }
    const fault = this.faults.find(
      (candidate) =>
        candidate.times > 0 && (!candidate.method || candidate.method === method) && candidate.path.test(path),
    );
    if (fault) {
      fault.times--;
      return {
        status: fault.status,
        body: fault.body ?? {
          message: `injected ${fault.status}`,
          documentation_url: 'https://docs.github.com/rest',
          status: String(fault.status),
        },
        ...(fault.headers ? { headers: fault.headers } : {}),
      };
    }
    if (path === '/graphql') return this.graphql(body as { query: string; variables?: Record<string, unknown> });
    const repoPath = /^\/repos\/([^/]+\/[^/]+)(\/|$)/.exec(path)?.[1];
    if (repoPath && !this.visible(repoPath))
      return notFound('https://docs.github.com/rest/repos/repos#get-a-repository');
    return this.rest(method, path, query, body);
  }

  /** One page of a REST list, with GitHub's `link` header (per_page at most 100, default 30). */
  private page<T>(items: readonly T[], query: URLSearchParams, path: string): Response {
    const perPage = Math.min(100, Math.max(1, Number(query.get('per_page') ?? 30)));
    const page = Math.max(1, Number(query.get('page') ?? 1));
    const last = Math.max(1, Math.ceil(items.length / perPage));
    const headers: Record<string, string> = {};
    const params = new URLSearchParams(query);
    const link = (n: number) => {
      params.set('per_page', String(perPage));
      params.set('page', String(n));
      return `<${this.baseUrl}${path}?${params}>`;
    };
    if (page < last) headers.link = `${link(page + 1)}; rel="next", ${link(last)}; rel="last"`;
    return { status: 200, body: items.slice((page - 1) * perPage, page * perPage), headers };
  }

  private rest(method: string, path: string, query: URLSearchParams, body: unknown): Response {
    let match: RegExpExecArray | null;
    if (method === 'POST' && (match = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(path))) {
      const token = `ghs_fake${match[1]}_${this.nextId++}`;
      this.tokens.set(token, { ...this.installationPermissions });
      return {
        status: 201,
        body: {
          token,
          expires_at: new Date(Date.now() + 3600_000).toISOString(),
          permissions: { ...this.installationPermissions },
          repository_selection: this.selected ? 'selected' : 'all',
        },
      };
    }
    if (method === 'GET' && (match = /^\/app\/installations\/(\d+)$/.exec(path))) {
      return {
        status: 200,
        body: {
          id: Number(match[1]),
          account: { login: 'octo-org', id: 1, type: 'Organization' },
          repository_selection: this.selected ? 'selected' : 'all',
          access_tokens_url: '',
          repositories_url: '',
          html_url: '',
          app_id: 1,
          target_id: 1,
          target_type: 'Organization',
          permissions: { ...this.installationPermissions },
          events: [],
          created_at: '2026-01-01T00:00:00Z',
          updated_at: '2026-01-01T00:00:00Z',
          single_file_name: null,
          app_slug: 'cuda-gatekeeper',
          suspended_at: null,
          suspended_by: null,
        },
      };
    }
    if (method === 'GET' && path === '/app/hook/deliveries') {
      // Newest first; `cursor` is the id of the first delivery of the page (the `link` header names the next one).
      const newest = [...this.deliveries].reverse().map(({ payload: _, ...record }) => record);
      const perPage = Math.min(100, Math.max(1, Number(query.get('per_page') ?? 30)));
      const cursor = query.get('cursor');
      const from = cursor ? newest.findIndex((record) => String(record.id) === cursor) : 0;
      const items = from < 0 ? [] : newest.slice(from, from + perPage);
      const next = from < 0 ? undefined : newest[from + perPage];
      return {
        status: 200,
        body: items,
        ...(next
          ? {
              headers: {
                link: `<${this.baseUrl}/app/hook/deliveries?per_page=${perPage}&cursor=${next.id}>; rel="next"`,
              },
            }
          : {}),
      };
    }
    if (method === 'POST' && (match = /^\/app\/hook\/deliveries\/(\d+)\/attempts$/.exec(path))) {
      const original = this.deliveries.find((record) => String(record.id) === match![1]);
      if (!original)
        return notFound('https://docs.github.com/rest/apps/webhooks#redeliver-a-delivery-for-an-app-webhook');
      void this.send(original.event, original.payload as Record<string, unknown>, original.guid, true);
      return { status: 202, body: {} };
    }
    if (method === 'POST' && (match = /^\/app-manifests\/([^/]+)\/conversions$/.exec(path))) {
      const app = this.manifestCodes.get(match[1]!);
      if (!app) return notFound('https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest');
      this.manifestCodes.delete(match[1]!);
      return {
        status: 201,
        body: {
          id: app.id,
          slug: app.slug,
          node_id: 'A',
          owner: { login: 'octo-org', id: 1 },
          name: app.slug,
          description: '',
          external_url: '',
          html_url: `https://github.test/apps/${app.slug}`,
          created_at: '2026-01-01T00:00:00Z',
          updated_at: '2026-01-01T00:00:00Z',
          permissions: {},
          events: [],
          client_id: `Iv1.${app.id}`,
          client_secret: 'client-secret',
          webhook_secret: app.webhook_secret,
          pem: app.pem,
        },
      };
    }
    if (method === 'GET' && path === '/installation/repositories') {
      const repositories = [...this.repos]
        .filter(([full]) => this.visible(full))
        .map(([full, repo]) => {
          const [owner, name] = full.split('/');
          return {
            id: repo.id,
            node_id: 'R',
            name,
            full_name: full,
            private: false,
            archived: false,
            default_branch: repo.defaultBranch,
            html_url: `https://github.test/${full}`,
            owner: { login: owner, id: 1, type: repo.ownerType },
          };
        });
      const page = this.page(repositories, query, path);
      return { ...page, body: { total_count: repositories.length, repositories: page.body } };
    }
    if (method === 'GET' && (match = /^\/repos\/([^/]+\/[^/]+)\/git\/blobs\/([0-9a-f]{40})$/.exec(path))) {
      const sha = match[2]!;
      for (const tree of this.trees.values())
        for (const text of tree.values())
          if (gitBlobSha(text) === sha) {
            const bytes = bytesOf(text);
            return {
              status: 200,
              body: {
                sha,
                node_id: `B_${sha}`,
                size: bytes.length,
                url: '',
                content: bytes.toString('base64'),
                encoding: 'base64',
              },
            };
          }
      return notFound('https://docs.github.com/rest/git/blobs#get-a-blob');
    }
    if (method === 'GET' && (match = /^\/repos\/([^/]+\/[^/]+)\/git\/trees\/([^/]+)$/.exec(path))) {
      const repo = this.repos.get(match[1]!.toLowerCase())!;
      const sha = match[2] === repo.defaultBranch ? repo.head : match[2]!;
      const tree = this.trees.get(sha);
      if (!tree) return notFound('https://docs.github.com/rest/git/trees#get-a-tree');
      // `recursive` set to anything lists every entry below; without it, only the top level.
      const recursive = query.has('recursive');
      const blobs = [...tree.keys()].filter((entryPath) => recursive || !entryPath.includes('/'));
      const dirs = new Set<string>();
      for (const entryPath of tree.keys()) {
        const parts = entryPath.split('/').slice(0, -1);
        for (let i = 1; i <= (recursive ? parts.length : Math.min(1, parts.length)); i++)
          dirs.add(parts.slice(0, i).join('/'));
      }
      const entries = [
        ...[...dirs].map((dir) => ({ path: dir, mode: '040000', type: 'tree', sha: gitBlobSha(dir), url: '' })),
        ...blobs.map((entryPath) => ({
          path: entryPath,
          mode: this.modeOf(sha, entryPath),
          type: this.modeOf(sha, entryPath) === '160000' ? 'commit' : 'blob',
          sha: gitBlobSha(tree.get(entryPath)!),
          size: bytesOf(tree.get(entryPath)!).length,
          url: '',
        })),
      ].sort((a, b) => a.path.localeCompare(b.path));
      const truncated = entries.length > this.treeLimit;
      return { status: 200, body: { sha, url: '', truncated, tree: entries.slice(0, this.treeLimit) } };
    }
    if (method === 'GET' && (match = /^\/repos\/([^/]+\/[^/]+)\/issues$/.exec(path))) {
      const repo = match[1]!.toLowerCase();
      const state = query.get('state') ?? 'open';
      return this.page(
        this.issues
          .filter((issue) => issue.repo === repo && (state === 'all' || issue.state === state))
          .map((issue) => this.issueBody(issue)),
        query,
        path,
      );
    }
    if (method === 'POST' && (match = /^\/repos\/([^/]+\/[^/]+)\/issues$/.exec(path))) {
      const input = body as { title: string; body?: string };
      const issue = {
        repo: match[1]!.toLowerCase(),
        number: this.nextId++,
        title: input.title,
        body: input.body ?? '',
        state: 'open' as const,
      };
      this.issues.push(issue);
      return { status: 201, body: this.issueBody(issue) };
    }
    if (method === 'PATCH' && (match = /^\/repos\/([^/]+\/[^/]+)\/issues\/(\d+)$/.exec(path))) {
      const issue = this.issues.find((candidate) => candidate.number === Number(match![2]));
      if (!issue) return notFound('https://docs.github.com/rest/issues/issues#update-an-issue');
      const input = body as { body?: string; state?: 'open' | 'closed' };
      if (input.body !== undefined) issue.body = input.body;
      if (input.state) issue.state = input.state;
      return { status: 200, body: this.issueBody(issue) };
    }
    if (method === 'GET' && (match = /^\/repos\/([^/]+\/[^/]+)\/branches\/([^/]+)$/.exec(path))) {
      const repo = this.repos.get(match[1]!.toLowerCase())!;
      return {
        status: 200,
        body: {
          name: decodeURIComponent(match[2]!),
          commit: { sha: repo.head, url: '' },
          protected: false,
          _links: { html: '', self: '' },
        },
      };
    }
    if (method === 'POST' && (match = /^\/repos\/([^/]+\/[^/]+)\/git\/refs$/.exec(path))) {
      const input = body as { ref: string; sha: string };
      const key = `${match[1]!.toLowerCase()}#${input.ref.replace(/^refs\/heads\//, '')}`;
      if (this.branches.has(key))
        return {
          status: 422,
          body: {
            message: 'Reference already exists',
            documentation_url: 'https://docs.github.com/rest/git/refs#create-a-reference',
            status: '422',
          },
        };
      this.branches.set(key, input.sha);
      return {
        status: 201,
        body: { ref: input.ref, node_id: 'REF', url: '', object: { type: 'commit', sha: input.sha, url: '' } },
      };
    }
    if (method === 'PATCH' && (match = /^\/repos\/([^/]+\/[^/]+)\/git\/refs\/(.+)$/.exec(path))) {
      const key = `${match[1]!.toLowerCase()}#${decodeURIComponent(match[2]!).replace(/^heads\//, '')}`;
      if (!this.branches.has(key))
        return {
          status: 422,
          body: {
            message: 'Reference does not exist',
            documentation_url: 'https://docs.github.com/rest/git/refs#update-a-reference',
            status: '422',
          },
        };
      this.branches.set(key, (body as { sha: string }).sha);
      return {
        status: 200,
        body: {
          ref: `refs/heads/${key.split('#')[1]}`,
          node_id: 'REF',
          url: '',
          object: { type: 'commit', sha: (body as { sha: string }).sha, url: '' },
        },
      };
    }
    if (method === 'POST' && (match = /^\/repos\/([^/]+\/[^/]+)\/pulls$/.exec(path))) {
      // "Create a pull request": `draft` opens it as a draft (docs.github.com/rest/pulls/pulls#create-a-pull-request).
      const input = body as { head: string; base: string; title: string; body: string; draft?: boolean };
      const number = this.nextId++;
      this.createdPulls.push({ repo: match[1]!.toLowerCase(), number, ...input, draft: input.draft ?? false });
      return {
        status: 201,
        body: {
          id: number,
          number,
          state: 'open',
          draft: input.draft ?? false,
          html_url: '',
          head: { ref: input.head },
          base: { ref: input.base },
        },
      };
    }
    if (method === 'PATCH' && (match = /^\/repos\/([^/]+\/[^/]+)\/pulls\/(\d+)$/.exec(path))) {
      const pull = this.createdPulls.find((candidate) => candidate.number === Number(match![2]));
      if (!pull) return notFound('https://docs.github.com/rest/pulls/pulls#update-a-pull-request');
      pull.body = (body as { body: string }).body;
      return { status: 200, body: { id: pull.number, number: pull.number, state: 'open', html_url: '' } };
    }
    if (method === 'GET' && (match = /^\/repos\/([^/]+\/[^/]+)\/pulls$/.exec(path))) {
      const repo = match[1]!.toLowerCase();
      const head = query.get('head');
      if (head) {
        const branch = head.split(':')[1];
        return this.page(
          this.createdPulls
            .filter((pull) => pull.repo === repo && pull.head === branch)
            .map((pull) => ({
              id: pull.number,
              number: pull.number,
              state: 'open',
              draft: pull.draft ?? false,
              html_url: '',
              head: { ref: pull.head, sha: '', repo: { full_name: repo } },
              base: { ref: pull.base },
            })),
          query,
          path,
        );
      }
      const pulls = [...this.pulls]
        .filter(([key, pull]) => key.startsWith(`${repo}#`) && pull.state === 'open')
        .map(([, pull]) => this.pullBody(repo, pull));
      return this.page(pulls, query, path);
    }
    if (method === 'GET' && (match = /^\/repos\/([^/]+\/[^/]+)\/commits\/([^/]+)\/pulls$/.exec(path))) {
      const repo = match[1]!.toLowerCase();
      // The base repository answers [] for a commit only a fork's branch has (observed; see the header).
      const pulls = [...this.pulls]
        .filter(
          ([key, pull]) =>
            key.startsWith(`${repo}#`) && pull.headSha === match![2] && pull.headRepo.toLowerCase() === repo,
        )
        .map(([, pull]) => this.pullBody(repo, pull));
      return this.page(pulls, query, path);
    }
    if (method === 'GET' && (match = /^\/repos\/([^/]+\/[^/]+)\/pulls\/(\d+)\/files$/.exec(path))) {
      const pull = this.pull(match[1]!, Number(match[2]));
      if (!pull) return notFound('https://docs.github.com/rest/pulls/pulls#list-pull-requests-files');
      // "Responses include a maximum of 3000 files", each of the current head.
      const items = pull.files.slice(0, 3000).map((file) => this.diffEntry(match![1]!, pull.headSha, file));
      return this.page(items, query, path);
    }
    // "Compare two commits": `basehead` is `BASE...HEAD`, each a commit SHA or a branch name (REST reference).
    if (method === 'GET' && (match = /^\/repos\/([^/]+\/[^/]+)\/compare\/(.+)\.\.\.(.+)$/.exec(path))) {
      const [, repo, baseRef, headRef] = match as unknown as [string, string, string, string];
      const base = this.resolve(repo, decodeURIComponent(baseRef));
      const head = this.resolve(repo, decodeURIComponent(headRef));
      if (!base || !head) return notFound('https://docs.github.com/rest/commits/commits#compare-two-commits');
      const files = this.diff(base, head);
      return {
        status: 200,
        body: {
          url: '',
          html_url: '',
          permalink_url: '',
          diff_url: '',
          patch_url: '',
          base_commit: this.commitBody(repo, base),
          merge_base_commit: this.commitBody(repo, base),
          status: 'ahead',
          ahead_by: 1,
          behind_by: 0,
          total_commits: 1,
          commits: [this.commitBody(repo, head)],
          // "includes up to 300 changed files for the entire comparison"
          files: files.slice(0, 300).map((file) => this.diffEntry(repo, head, file)),
        },
      };
    }
    if (method === 'POST' && (match = /^\/repos\/([^/]+\/[^/]+)\/check-runs$/.exec(path))) {
      const input = body as {
        name: string;
        head_sha: string;
        status?: string;
        conclusion?: string;
        external_id?: string;
        output?: CheckRun['output'];
        actions?: unknown[];
      };
      if ((input.output?.annotations?.length ?? 0) > 50) return tooMany(input.output!.annotations!.length);
      const repo = match[1]!.toLowerCase();
      const run: CheckRun = {
        id: this.nextId++,
        repo,
        head_sha: input.head_sha,
        suiteId: this.suiteId(repo, input.head_sha),
        name: input.name,
        // "Providing conclusion will automatically set the status parameter to completed."
        status: input.conclusion ? 'completed' : (input.status ?? 'queued'),
        ...(input.conclusion ? { conclusion: input.conclusion } : {}),
        ...(input.external_id ? { external_id: input.external_id } : {}),
        ...(input.output ? { output: input.output } : {}),
        annotations: [...(input.output?.annotations ?? [])],
        ...(input.actions ? { actions: input.actions } : {}),
        updates: 0,
      };
      this.checkRuns.push(run);
      this.noteAnnotations(run, input.output?.annotations);
      return { status: 201, body: this.checkRunBody(run) };
    }
    if (method === 'PATCH' && (match = /^\/repos\/([^/]+\/[^/]+)\/check-runs\/(\d+)$/.exec(path))) {
      const run = this.checkRuns.find((candidate) => candidate.id === Number(match![2]));
      if (!run) return notFound('https://docs.github.com/rest/checks/runs#update-a-check-run');
      const input = body as Partial<CheckRun> & { output?: CheckRun['output'] };
      if ((input.output?.annotations?.length ?? 0) > 50) return tooMany(input.output!.annotations!.length);
      if (input.status) run.status = input.status;
      if (input.conclusion) {
        run.conclusion = input.conclusion;
        run.status = 'completed';
      }
      if (input.external_id !== undefined) run.external_id = input.external_id;
      if (input.output) {
        // The output is replaced as a whole (a PATCH without `text` clears it); annotations are appended.
        run.output = { ...input.output };
        run.annotations.push(...(input.output.annotations ?? []));
        this.noteAnnotations(run, input.output.annotations);
      }
      if (input.actions) run.actions = input.actions;
      run.updates++;
      return { status: 200, body: this.checkRunBody(run) };
    }
    if (method === 'GET' && (match = /^\/repos\/([^/]+\/[^/]+)\/check-suites\/(\d+)\/check-runs$/.exec(path))) {
      const name = query.get('check_name');
      const runs = this.checkRuns
        .filter((run) => run.suiteId === Number(match![2]) && (!name || run.name === name))
        .map((run) => this.checkRunBody(run));
      const page = this.page(runs, query, path);
      return { ...page, body: { total_count: runs.length, check_runs: page.body } };
    }
    if (method === 'POST' && (match = /^\/repos\/([^/]+\/[^/]+)\/pulls\/(\d+)\/reviews$/.exec(path))) {
      const pull = this.pull(match[1]!, Number(match[2]));
      if (!pull) return notFound('https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request');
      const input = body as { body?: string; comments?: { path: string; line: number; body: string }[] };
      pull.reviews.push({ body: input.body ?? '', comments: input.comments ?? [] });
      return {
        status: 200,
        body: {
          id: this.nextId++,
          node_id: 'R',
          user: null,
          body: input.body ?? '',
          state: 'COMMENTED',
          html_url: '',
          pull_request_url: '',
          _links: { html: { href: '' }, pull_request: { href: '' } },
          commit_id: null,
          author_association: 'NONE',
        },
      };
    }
    if (method === 'POST' && (match = /^\/repos\/([^/]+\/[^/]+)\/issues\/comments\/(\d+)\/reactions$/.exec(path))) {
      this.reactions.push({ commentId: Number(match[2]), content: (body as { content: string }).content });
      return {
        status: 201,
        body: {
          id: this.nextId++,
          node_id: 'X',
          user: null,
          content: (body as { content: string }).content,
          created_at: new Date().toISOString(),
        },
      };
    }
    if (method === 'POST' && (match = /^\/repos\/([^/]+\/[^/]+)\/issues\/(\d+)\/comments$/.exec(path))) {
      const pull = this.pull(match[1]!, Number(match[2]));
      if (!pull) return notFound('https://docs.github.com/rest/issues/comments#create-an-issue-comment');
      const comment = { id: this.nextId++, body: (body as { body: string }).body, login: BOT_LOGIN };
      pull.comments.push(comment);
      return { status: 201, body: this.commentBody(comment) };
    }
    if (method === 'PATCH' && (match = /^\/repos\/([^/]+\/[^/]+)\/issues\/comments\/(\d+)$/.exec(path))) {
      for (const pull of this.pulls.values()) {
        const comment = pull.comments.find((candidate) => candidate.id === Number(match![2]));
        if (comment) {
          comment.body = (body as { body: string }).body;
          return { status: 200, body: this.commentBody(comment) };
        }
      }
      return notFound('https://docs.github.com/rest/issues/comments#update-an-issue-comment');
    }
    if (method === 'GET' && (match = /^\/repos\/([^/]+\/[^/]+)\/collaborators\/([^/]+)\/permission$/.exec(path))) {
      const permission = this.permissions.get(match[2]!) ?? 'read';
      return { status: 200, body: { permission, role_name: permission, user: { login: match[2], id: 1 } } };
    }
    return {
      status: 404,
      body: {
        message: `Not Found (the fake GitHub has no route for ${method} ${path})`,
        documentation_url: 'https://docs.github.com/rest',
        status: '404',
      },
    };
  }

  /** A "diff entry" as the pull request files and compare endpoints give it, for a file at `headSha`. */
  private diffEntry(repo: string, headSha: string, file: FakeFile): unknown {
    const text = this.trees.get(headSha)?.get(file.filename);
    const encoded = file.filename.split('/').map(encodeURIComponent).join('/');
    return {
      sha: text === undefined ? '0'.repeat(40) : gitBlobSha(text),
      filename: file.filename,
      status: file.status,
      additions: 1,
      deletions: 0,
      changes: 1,
      blob_url: `https://github.test/${repo}/blob/${headSha}/${encoded}`,
      raw_url: `https://github.test/${repo}/raw/${headSha}/${encoded}`,
      contents_url: `${this.baseUrl}/repos/${repo}/contents/${encoded}?ref=${headSha}`,
      ...(file.patch ? { patch: file.patch } : {}),
      ...(file.previous_filename ? { previous_filename: file.previous_filename } : {}),
    };
  }

  private commitBody(repo: string, sha: string): unknown {
    return {
      url: '',
      sha,
      node_id: 'C',
      html_url: `https://github.test/${repo}/commit/${sha}`,
      comments_url: '',
      commit: { url: '', author: null, committer: null, message: '', comment_count: 0, tree: { sha, url: '' } },
      author: null,
      committer: null,
      parents: [],
    };
  }

  private noteAnnotations(run: CheckRun, annotations: unknown[] | undefined): void {
    const files = this.trees.get(run.head_sha);
    for (const annotation of (annotations ?? []) as { path: string; start_line: number; end_line: number }[]) {
      const text = files?.get(annotation.path);
      if (text === undefined)
        this.annotationProblems.push(`${annotation.path}: not a file of ${run.head_sha.slice(0, 7)}`);
      else if (annotation.end_line > lineCount(text))
        this.annotationProblems.push(`${annotation.path}: end_line ${annotation.end_line} past its last line`);
    }
  }

  private pullBody(repo: string, pull: FakePull): unknown {
    return {
      id: pull.number,
      number: pull.number,
      // REST says a merged pull request is closed, with `merged: true`.
      state: pull.state === 'merged' ? 'closed' : pull.state,
      merged: pull.state === 'merged',
      html_url: `https://github.test/${repo}/pull/${pull.number}`,
      head: { sha: pull.headSha, ref: pull.headRef, repo: { full_name: pull.headRepo } },
      base: { ref: 'main', sha: pull.baseSha, repo: { full_name: repo } },
    };
  }

  private checkRunBody(run: CheckRun): unknown {
    return {
      id: run.id,
      head_sha: run.head_sha,
      node_id: 'CR',
      external_id: run.external_id ?? null,
      url: `${this.baseUrl}/repos/${run.repo}/check-runs/${run.id}`,
      html_url: `https://github.test/${run.repo}/runs/${run.id}`,
      details_url: null,
      status: run.status,
      conclusion: run.conclusion ?? null,
      started_at: null,
      completed_at: null,
      output: {
        title: run.output?.title ?? null,
        summary: run.output?.summary ?? null,
        text: run.output?.text ?? null,
        annotations_count: run.annotations.length,
        annotations_url: '',
      },
      name: run.name,
      check_suite: { id: run.suiteId },
      app: null,
      pull_requests: [],
    };
  }

  private issueBody(issue: { repo: string; number: number; title: string; body: string; state: string }): unknown {
    return {
      id: issue.number,
      node_id: 'I',
      number: issue.number,
      title: issue.title,
      body: issue.body,
      state: issue.state,
      url: '',
      html_url: `https://github.test/${issue.repo}/issues/${issue.number}`,
      repository_url: '',
      labels_url: '',
      comments_url: '',
      events_url: '',
      labels: [],
      assignee: null,
      assignees: [],
      milestone: null,
      locked: false,
      comments: 0,
      created_at: new Date().toISOString(),
      updated_at: new Date().toISOString(),
      closed_at: null,
      author_association: 'NONE',
      user: { login: BOT_LOGIN, id: 1 },
    };
  }

  private commentBody(comment: FakeComment): unknown {
    return {
      id: comment.id,
      node_id: 'IC',
      url: '',
      html_url: '',
      body: comment.body,
      user: { login: comment.login, id: 1, type: comment.login.endsWith('[bot]') ? 'Bot' : 'User' },
      created_at: new Date().toISOString(),
      updated_at: new Date().toISOString(),
      issue_url: '',
      author_association: 'NONE',
    };
  }

  pull(repo: string, number: number): FakePull | undefined {
    return this.pulls.get(`${repo.toLowerCase()}#${number}`);
  }

  /** The check runs on a commit, oldest first. */
  runsOn(headSha: string): CheckRun[] {
    return this.checkRuns.filter((run) => run.head_sha === headSha);
  }

  // ------------------------------------------------------------------------------------------ GraphQL

  private async graphql(request: { query: string; variables?: Record<string, unknown> }): Promise<Response> {
    const excessive = excessivePagination(request.query, request.variables ?? {});
    if (excessive) return { status: 200, body: { errors: [excessive] } };
    const result = await executeGraphql(request.query, request.variables ?? {}, rootResolvers(this));
    // Errors GitHub gives (NOT_FOUND, FORBIDDEN) are answers; any other error is a bug in the query or the fake.
    const unexpected = (result.errors ?? []).filter((error) => !error.type);
    if (unexpected.length) this.violations.push(...unexpected.map((error) => `GraphQL execution: ${error.message}`));
    return { status: 200, body: result };
  }

  // ------------------------------------------------------------------------------------------ HTTP

  /** Serve this fake on 127.0.0.1 (REST under /api/v3, GraphQL at /api/graphql, as GitHub Enterprise does). */
  async listen(latencyMs = 0): Promise<{ server: Server; port: number }> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const respond = async () => {
          if (latencyMs) await new Promise((resolve) => setTimeout(resolve, latencyMs));
          const result = await this.handle(
            req.method ?? 'GET',
            req.url ?? '/',
            raw ? JSON.parse(raw) : undefined,
            req.headers.authorization,
          );
          res.writeHead(result.status, { 'content-type': 'application/json', ...result.headers });
          res.end(result.status === 204 ? undefined : JSON.stringify(result.body));
        };
        respond().catch((error: Error) => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ message: error.message }));
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    this.baseUrl = `http://127.0.0.1:${port}/api/v3`;
    return { server, port };
  }
}

/**
 * A file's bytes: its text in UTF-8, or, for a file with zero bytes (binary, or UTF-16 text), one byte per character
 * (`'\xff\xfet\0'` is the bytes FF FE 74 00), so a test can write any bytes.
 */
export function bytesOf(text: string): Buffer {
  return Buffer.from(text, text.includes('\0') ? 'latin1' : 'utf8');
}

/** The SHA git gives a blob of `text` (`git hash-object`). */
export function gitBlobSha(text: string): string {
  const bytes = bytesOf(text);
  return createHash('sha1')
    .update(Buffer.concat([Buffer.from(`blob ${bytes.length}\0`), bytes]))
    .digest('hex');
}

function lineCount(text: string): number {
  if (text === '') return 1;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** A patch that adds every line of `text`. */
function patchOf(text: string): string {
  const lines = text.replace(/\n$/, '').split('\n');
  return `@@ -0,0 +1,${lines.length} @@\n${lines.map((line) => `+${line}`).join('\n')}`;
}

/** A write the token was not granted: REST's 403, or GraphQL's FORBIDDEN error (HTTP 200). */
function forbidden(graphql: boolean): Response {
  const message = 'Resource not accessible by integration';
  if (graphql) return { status: 200, body: { data: null, errors: [{ type: 'FORBIDDEN', message, path: [] }] } };
  return {
    status: 403,
    body: { message, documentation_url: 'https://docs.github.com/rest', status: '403' },
  };
}

function notFound(documentation: string): Response {
  return { status: 404, body: { message: 'Not Found', documentation_url: documentation, status: '404' } };
}

function tooMany(count: number): Response {
  return {
    status: 422,
    body: {
      message: `Invalid request.\n\nNo more than 50 items are allowed; ${count} were supplied.`,
      documentation_url: 'https://docs.github.com/rest/checks/runs',
      status: '422',
    },
  };
}

/** GitHub's whole-query error for `first`/`last` outside 1–100 (literal or from a variable). */
function excessivePagination(
  query: string,
  variables: Record<string, unknown>,
): { type: string; message: string } | undefined {
  for (const match of query.matchAll(/\b(first|last):\s*(\$?\w+)/g)) {
    const raw = match[2]!;
    const value = raw.startsWith('$') ? Number(variables[raw.slice(1)]) : Number(raw);
    if (Number.isFinite(value) && (value < 1 || value > 100))
      return {
        type: value > 100 ? 'EXCESSIVE_PAGINATION' : 'MISSING_PAGINATION_BOUNDARIES',
        message: `Requesting ${value} records on the connection exceeds the \`${match[1]}\` limit of 100 records.`,
      };
  }
  return undefined;
}

/** A GraphQL connection over items: `first`/`after` or `last`/`before`, with cursors that are positions. */
function connection<T>(
  items: readonly T[],
  args: { first?: number; last?: number; after?: string | null; before?: string | null },
): {
  nodes: T[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; endCursor: string | null; startCursor: string | null };
} {
  let from = args.after ? Number(args.after) + 1 : 0;
  let to = args.before ? Number(args.before) : items.length;
  if (args.first !== undefined) to = Math.min(to, from + args.first);
  if (args.last !== undefined) from = Math.max(from, to - args.last);
  const nodes = items.slice(from, to);
  return {
    nodes,
    pageInfo: {
      hasNextPage: to < items.length,
      hasPreviousPage: from > 0,
      endCursor: nodes.length ? String(to - 1) : null,
      startCursor: nodes.length ? String(from) : null,
    },
  };
}

/** GraphQL root resolvers over the fake's state (graphql-js calls nested functions with their arguments). */
function rootResolvers(fake: FakeGitHub): unknown {
  const blob = (text: string | undefined) => {
    if (text === undefined) return null;
    const bytes = bytesOf(text);
    const binary = text.includes('\0');
    const truncated = !binary && bytes.length > fake.blobTextLimit;
    return {
      __typename: 'Blob',
      text: binary ? null : truncated ? bytes.subarray(0, fake.blobTextLimit).toString('utf8') : text,
      byteSize: bytes.length,
      isBinary: binary,
      isTruncated: truncated,
      oid: gitBlobSha(text),
    };
  };
  interface TreeNode {
    readonly __typename: 'Tree';
    readonly entries: readonly { name: string; path: string; type: string; mode: number; object: unknown }[];
  }
  const tree = (files: Map<string, string>, dir: string): TreeNode | null => {
    const prefix = dir === '' ? '' : `${dir}/`;
    const names = new Map<string, 'blob' | 'tree'>();
    for (const path of files.keys()) {
      if (!path.startsWith(prefix)) continue;
      const rest = path.slice(prefix.length);
      const slash = rest.indexOf('/');
      names.set(slash < 0 ? rest : rest.slice(0, slash), slash < 0 ? 'blob' : 'tree');
    }
    if (names.size === 0) return null;
    const entries = [...names]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, type]): TreeNode['entries'][number] => {
        const path = `${prefix}${name}`;
        return {
          name,
          path,
          type,
          mode: type === 'blob' ? 33188 : 16384,
          object: type === 'blob' ? blob(files.get(path)) : tree(files, path),
        };
      });
    return { __typename: 'Tree', entries };
  };
  return {
    repository: ({ owner, name }: { owner: string; name: string }) => {
      const full = `${owner}/${name}`.toLowerCase();
      const refusal = fake.forbidden.get(full);
      if (refusal) throw new GitHubGraphqlError('FORBIDDEN', refusal);
      const repo = fake.visible(full);
      if (!repo)
        throw new GitHubGraphqlError(
          'NOT_FOUND',
          `Could not resolve to a Repository with the name '${owner}/${name}'.`,
        );
      return {
        defaultBranchRef: { name: repo.defaultBranch, target: { __typename: 'Commit', oid: repo.head } },
        object: ({ expression, oid }: { expression?: string; oid?: string }) => {
          if (oid) {
            const runs = fake.checkRuns.filter((run) => run.repo === full && run.head_sha === oid);
            const suites = [...new Set(runs.map((run) => run.suiteId))].map((suiteId) => ({
              checkRuns: (args: { first?: number; last?: number; filterBy?: { checkName?: string } }) =>
                connection(
                  runs
                    .filter(
                      (run) =>
                        run.suiteId === suiteId && (!args.filterBy?.checkName || run.name === args.filterBy.checkName),
                    )
                    .map((run) => ({
                      databaseId: run.id,
                      externalId: run.external_id ?? null,
                      conclusion: run.conclusion ? run.conclusion.toUpperCase() : null,
                      status: run.status.toUpperCase(),
                    })),
                  args,
                ),
            }));
            return {
              __typename: 'Commit',
              oid,
              checkSuites: (args: { first?: number; last?: number }) => connection(suites, args),
            };
          }
          const [revision, ...rest] = (expression ?? '').split(':');
          const sha = revision === 'HEAD' ? repo.head : revision!;
          const files = fake.trees.get(sha);
          if (!files) return null;
          // A revision alone is its commit; `Commit.file(path:)` answers the TreeEntry there, its `mode` an Int.
          if (rest.length === 0)
            return {
              __typename: 'Commit',
              oid: sha,
              file: ({ path }: { path: string }) =>
                files.has(path)
                  ? { path, mode: parseInt(fake.modeOf(sha, path), 8), object: blob(files.get(path)) }
                  : null,
            };
          const path = rest.join(':').replace(/\/$/, '');
          const refused = fake.refusedPaths.get(path);
          if (refused) throw new GitHubGraphqlError('FORBIDDEN', refused);
          return files.has(path) ? blob(files.get(path)) : tree(files, path);
        },
        pullRequests: (args: { states?: string[]; first?: number; last?: number }) => {
          const pulls = [...fake.pulls]
            .filter(
              ([key, pull]) =>
                key.startsWith(`${full}#`) && (!args.states || args.states.includes(pull.state.toUpperCase())),
            )
            .map(([, pull]) => pullNode(full, pull));
          return connection(pulls, args);
        },
        pullRequest: ({ number }: { number: number }) => {
          const pull = fake.pull(full, number);
          if (!pull)
            throw new GitHubGraphqlError(
              'NOT_FOUND',
              `Could not resolve to a PullRequest with the number of ${number}.`,
            );
          return pullNode(full, pull);
        },
      };
    },
    createCommitOnBranch: ({
      input,
    }: {
      input: {
        branch: { repositoryNameWithOwner: string; branchName: string };
        expectedHeadOid: string;
        message: unknown;
        fileChanges: { additions?: { path: string; contents: string }[] };
      };
    }) => {
      const branchKey = `${input.branch.repositoryNameWithOwner.toLowerCase()}#${input.branch.branchName}`;
      const pull = [...fake.pulls.values()].find(
        (candidate) =>
          candidate.headRepo.toLowerCase() === input.branch.repositoryNameWithOwner.toLowerCase() &&
          candidate.headRef === input.branch.branchName,
      );
      const current = fake.branches.get(branchKey) ?? pull?.headSha;
      if (!current || current !== input.expectedHeadOid)
        throw new GitHubGraphqlError(
          'STALE_DATA',
          `Expected branch to point to "${input.expectedHeadOid}" but it did not. Pull and try again.`,
        );
      const files = Object.fromEntries(fake.trees.get(current) ?? []);
      const additions = (input.fileChanges.additions ?? []).map((file) => ({
        path: file.path,
        contents: Buffer.from(file.contents, 'base64').toString('utf8'),
      }));
      for (const file of additions) files[file.path] = file.contents;
      const oid = fake.commit(files);
      fake.commits.push({
        branch: input.branch.branchName,
        repo: input.branch.repositoryNameWithOwner,
        oid,
        files: additions,
        message: input.message as { headline: string; body?: string },
      });
      if (fake.branches.has(branchKey)) fake.branches.set(branchKey, oid);
      else if (pull) pull.headSha = oid;
      return { commit: { oid, url: `https://github.test/commit/${oid}` } };
    },
  };

  function pullNode(full: string, pull: FakePull) {
    const CHANGE: Record<FakeFile['status'], string> = {
      added: 'ADDED',
      modified: 'MODIFIED',
      removed: 'DELETED',
      renamed: 'RENAMED',
    };
    return {
      number: pull.number,
      state: pull.state.toUpperCase(),
      url: `https://github.test/${full}/pull/${pull.number}`,
      headRefOid: pull.headSha,
      headRefName: pull.headRef,
      baseRefOid: pull.baseSha,
      changedFiles: pull.files.length,
      headRepository: { nameWithOwner: pull.headRepo },
      isCrossRepository: pull.headRepo.toLowerCase() !== full,
      files: (args: { first?: number; last?: number; after?: string }) =>
        connection(
          pull.files.map((file) => ({
            path: file.filename,
            changeType: CHANGE[file.status],
            additions: 1,
            deletions: 0,
          })),
          args,
        ),
      reviews: (args: { first?: number; last?: number }) =>
        connection(
          pull.reviews.map((review) => ({
            comments: (inner: { first?: number; last?: number }) =>
              connection(
                review.comments.map((comment) => ({ body: comment.body })),
                inner,
              ),
          })),
          args,
        ),
      comments: (args: { first?: number; last?: number; after?: string; before?: string }) =>
        connection(
          pull.comments.map((comment) => ({
            databaseId: comment.id,
            body: comment.body,
            viewerDidAuthor: comment.login === BOT_LOGIN,
          })),
          args,
        ),
    };
  }
}
