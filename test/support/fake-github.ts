/**
 * A small in-memory GitHub for App tests. It answers the REST routes the App uses and any GraphQL query
 * (executed against GitHub's real schema), validates every request against GitHub's published API
 * description, records requests and violations, and can inject faults. Used through nock (in-process) and
 * through an HTTP server on 127.0.0.1 (end-to-end).
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { executeGraphql, validateGraphql, validateRest } from './openapi.js';

export interface FakeFile {
  readonly filename: string;
  readonly status: 'added' | 'modified' | 'removed' | 'renamed';
  readonly patch?: string;
}

export interface FakePull {
  readonly number: number;
  headSha: string;
  readonly headRef: string;
  readonly headRepo: string;
  readonly files: FakeFile[];
  readonly reviews: { body: string; comments: { path: string; line: number; body: string }[] }[];
  readonly comments: { id: number; body: string; login: string }[];
}

export interface CheckRun {
  readonly id: number;
  readonly repo: string;
  readonly head_sha: string;
  name: string;
  status: string;
  conclusion?: string;
  output?: { title?: string; summary?: string; text?: string; annotations?: unknown[] };
  annotations: unknown[];
  actions?: unknown[];
  updates: number;
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

export class FakeGitHub {
  readonly repos = new Map<string, { defaultBranch: string; head: string; id: number }>();
  /** commit sha → path → text */
  readonly trees = new Map<string, Map<string, string>>();
  readonly pulls = new Map<string, FakePull>();
  readonly checkRuns: CheckRun[] = [];
  readonly reactions: { commentId: number; content: string }[] = [];
  readonly commits: { branch: string; repo: string; oid: string; files: { path: string; contents: string }[]; message: unknown }[] = [];
  readonly permissions = new Map<string, string>();
  /** repo#branch → head commit, for branches that are not a pull request's head. */
  readonly branches = new Map<string, string>();
  readonly createdPulls: { repo: string; number: number; head: string; base: string; title: string; body: string }[] = [];
  readonly issues: { repo: string; number: number; title: string; body: string; state: 'open' | 'closed' }[] = [];
  readonly requests: Recorded[] = [];
  readonly violations: string[] = [];
  readonly faults: Fault[] = [];
  private nextId = 1000;
  /** Validate requests against GitHub's API description (the benchmark turns it off to measure the App alone). */
  constructor(readonly validateRequests = true) {}

  /** Where clients reach this fake (used in pagination links). */
  baseUrl = 'https://api.github.com';

  addRepo(fullName: string, files: Record<string, string>, defaultBranch = 'main'): string {
    const sha = this.commit(files);
    this.repos.set(fullName.toLowerCase(), { defaultBranch, head: sha, id: this.nextId++ });
    return sha;
  }

  /** Store a tree and return its (fake) commit sha. */
  commit(files: Record<string, string>): string {
    const sha = createHash('sha1').update(JSON.stringify(files) + this.nextId++).digest('hex');
    this.trees.set(sha, new Map(Object.entries(files)));
    return sha;
  }

  addPull(repo: string, pull: Omit<FakePull, 'reviews' | 'comments'> & Partial<Pick<FakePull, 'comments'>>): FakePull {
    const full: FakePull = { reviews: [], comments: [], ...pull };
    this.pulls.set(`${repo.toLowerCase()}#${pull.number}`, full);
    return full;
  }

  fail(fault: Omit<Fault, 'times'> & { times?: number }): void {
    this.faults.push({ times: 1, ...fault });
  }

  // ------------------------------------------------------------------------------------------ dispatch

  async handle(method: string, rawPath: string, body: unknown): Promise<Response> {
    const url = new URL(rawPath, 'http://github.test');
    const path = url.pathname.replace(/^\/api\/v3/, '').replace(/^\/api\/graphql$/, '/graphql');
    const response = await this.route(method, path, url.searchParams, body);
    this.requests.push({ method, path, query: url.search, body, status: response.status });
    return response;
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
    const fault = this.faults.find((candidate) => candidate.times > 0 && (!candidate.method || candidate.method === method) && candidate.path.test(path));
    if (fault) {
      fault.times--;
      return { status: fault.status, body: fault.body ?? { message: `injected ${fault.status}` }, ...(fault.headers ? { headers: fault.headers } : {}) };
    }
    if (path === '/graphql') return this.graphql(body as { query: string; variables?: Record<string, unknown> });
    return this.rest(method, path, query, body);
  }

  private rest(method: string, path: string, query: URLSearchParams, body: unknown): Response {
    let match: RegExpExecArray | null;
    if (method === 'POST' && (match = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(path))) {
      return { status: 201, body: { token: `ghs_fake${match[1]}`, expires_at: new Date(Date.now() + 3600_000).toISOString(), permissions: { checks: 'write' }, repository_selection: 'all' } };
    }
    if (method === 'GET' && path === '/installation/repositories') {
      const repositories = [...this.repos].map(([full, repo]) => {
        const [owner, name] = full.split('/');
        return { id: repo.id, node_id: 'R', name, full_name: full, private: false, archived: false, default_branch: repo.defaultBranch, html_url: `https://github.test/${full}`, owner: { login: owner, id: 1, type: 'Organization' } };
      });
      return { status: 200, body: { total_count: repositories.length, repositories } };
    }
    if (method === 'GET' && (match = /^\/repos\/([^/]+\/[^/]+)\/git\/trees\/([^/]+)$/.exec(path))) {
      const repo = this.repos.get(match[1]!.toLowerCase());
      if (!repo) return notFound();
      const sha = match[2] === repo.defaultBranch ? repo.head : match[2]!;
      const tree = this.trees.get(sha);
      if (!tree) return notFound();
      return { status: 200, body: { sha, url: '', truncated: false, tree: [...tree.keys()].map((entryPath) => ({ path: entryPath, mode: '100644', type: 'blob', sha: '0'.repeat(40), size: tree.get(entryPath)!.length, url: '' })) } };
    }
    if (method === 'GET' && (match = /^\/repos\/([^/]+\/[^/]+)\/issues$/.exec(path))) {
      const repo = match[1]!.toLowerCase();
      const state = query.get('state') ?? 'open';
      return { status: 200, body: this.issues.filter((issue) => issue.repo === repo && (state === 'all' || issue.state === state)).map((issue) => this.issueBody(issue)) };
    }
    if (method === 'POST' && (match = /^\/repos\/([^/]+\/[^/]+)\/issues$/.exec(path))) {
      const input = body as { title: string; body?: string };
      const issue = { repo: match[1]!.toLowerCase(), number: this.nextId++, title: input.title, body: input.body ?? '', state: 'open' as const };
      this.issues.push(issue);
      return { status: 201, body: this.issueBody(issue) };
    }
    if (method === 'PATCH' && (match = /^\/repos\/([^/]+\/[^/]+)\/issues\/(\d+)$/.exec(path))) {
      const issue = this.issues.find((candidate) => candidate.number === Number(match![2]));
      if (!issue) return notFound();
      const input = body as { body?: string; state?: 'open' | 'closed' };
      if (input.body !== undefined) issue.body = input.body;
      if (input.state) issue.state = input.state;
      return { status: 200, body: this.issueBody(issue) };
    }
    if (method === 'GET' && (match = /^\/repos\/([^/]+\/[^/]+)\/branches\/([^/]+)$/.exec(path))) {
      const repo = this.repos.get(match[1]!.toLowerCase());
      if (!repo) return notFound();
      return { status: 200, body: { name: decodeURIComponent(match[2]!), commit: { sha: repo.head, url: '' }, protected: false, _links: { html: '', self: '' } } };
    }
    if (method === 'POST' && (match = /^\/repos\/([^/]+\/[^/]+)\/git\/refs$/.exec(path))) {
      const input = body as { ref: string; sha: string };
      const key = `${match[1]!.toLowerCase()}#${input.ref.replace(/^refs\/heads\//, '')}`;
      if (this.branches.has(key)) return { status: 422, body: { message: 'Reference already exists' } };
      this.branches.set(key, input.sha);
      return { status: 201, body: { ref: input.ref, node_id: 'REF', url: '', object: { type: 'commit', sha: input.sha, url: '' } } };
    }
    if (method === 'PATCH' && (match = /^\/repos\/([^/]+\/[^/]+)\/git\/refs\/(.+)$/.exec(path))) {
      const key = `${match[1]!.toLowerCase()}#${decodeURIComponent(match[2]!).replace(/^heads\//, '')}`;
      if (!this.branches.has(key)) return { status: 422, body: { message: 'Reference does not exist' } };
      this.branches.set(key, (body as { sha: string }).sha);
      return { status: 200, body: { ref: `refs/heads/${key.split('#')[1]}`, node_id: 'REF', url: '', object: { type: 'commit', sha: (body as { sha: string }).sha, url: '' } } };
    }
    if (method === 'POST' && (match = /^\/repos\/([^/]+\/[^/]+)\/pulls$/.exec(path))) {
      const input = body as { head: string; base: string; title: string; body: string };
      const number = this.nextId++;
      this.createdPulls.push({ repo: match[1]!.toLowerCase(), number, ...input });
      return { status: 201, body: { id: number, number, state: 'open', html_url: '', head: { ref: input.head }, base: { ref: input.base } } };
    }
    if (method === 'PATCH' && (match = /^\/repos\/([^/]+\/[^/]+)\/pulls\/(\d+)$/.exec(path))) {
      const pull = this.createdPulls.find((candidate) => candidate.number === Number(match![2]));
      if (!pull) return notFound();
      pull.body = (body as { body: string }).body;
      return { status: 200, body: { id: pull.number, number: pull.number, state: 'open', html_url: '' } };
    }
    if (method === 'GET' && (match = /^\/repos\/([^/]+\/[^/]+)\/pulls$/.exec(path))) {
      const repo = match[1]!.toLowerCase();
      const head = query.get('head');
      if (head) {
        const branch = head.split(':')[1];
        return { status: 200, body: this.createdPulls.filter((pull) => pull.repo === repo && pull.head === branch).map((pull) => ({ id: pull.number, number: pull.number, state: 'open', html_url: '', head: { ref: pull.head, sha: '', repo: { full_name: repo } }, base: { ref: pull.base } })) };
      }
      const pulls = [...this.pulls].filter(([key]) => key.startsWith(`${repo}#`)).map(([, pull]) => ({ id: pull.number, number: pull.number, state: 'open', html_url: `https://github.test/${repo}/pull/${pull.number}`, head: { sha: pull.headSha, ref: pull.headRef, repo: { full_name: pull.headRepo } }, base: { ref: 'main' } }));
      return { status: 200, body: pulls };
    }
    if (method === 'GET' && (match = /^\/repos\/([^/]+\/[^/]+)\/pulls\/(\d+)\/files$/.exec(path))) {
      const pull = this.pull(match[1]!, Number(match[2]));
      if (!pull) return notFound();
      const perPage = Number(query.get('per_page') ?? 30);
      const page = Number(query.get('page') ?? 1);
      const items = pull.files.slice((page - 1) * perPage, page * perPage).map((file, i) => ({ sha: `${i}`.padStart(40, '0'), filename: file.filename, status: file.status, additions: 1, deletions: 0, changes: 1, blob_url: '', raw_url: '', contents_url: '', ...(file.patch ? { patch: file.patch } : {}) }));
      const last = Math.max(1, Math.ceil(pull.files.length / perPage));
      const headers: Record<string, string> = {};
      const link = (n: number) => `<${this.baseUrl}/repos/${match![1]}/pulls/${pull.number}/files?per_page=${perPage}&page=${n}>`;
      if (page < last) headers.link = `${link(page + 1)}; rel="next", ${link(last)}; rel="last"`;
      return { status: 200, body: items, headers };
    }
    if (method === 'POST' && (match = /^\/repos\/([^/]+\/[^/]+)\/check-runs$/.exec(path))) {
      const input = body as { name: string; head_sha: string; status?: string; conclusion?: string; output?: CheckRun['output']; actions?: unknown[] };
      const run: CheckRun = { id: this.nextId++, repo: match[1]!.toLowerCase(), head_sha: input.head_sha, name: input.name, status: input.status ?? 'queued', ...(input.conclusion ? { conclusion: input.conclusion } : {}), ...(input.output ? { output: input.output } : {}), annotations: [...(input.output?.annotations ?? [])], ...(input.actions ? { actions: input.actions } : {}), updates: 0 };
      this.checkRuns.push(run);
      return { status: 201, body: this.checkRunBody(run) };
    }
    if (method === 'PATCH' && (match = /^\/repos\/([^/]+\/[^/]+)\/check-runs\/(\d+)$/.exec(path))) {
      const run = this.checkRuns.find((candidate) => candidate.id === Number(match![2]));
      if (!run) return notFound();
      const input = body as Partial<CheckRun> & { output?: CheckRun['output'] };
      if (input.status) run.status = input.status;
      if (input.conclusion) run.conclusion = input.conclusion;
      if (input.output) {
        run.output = { ...run.output, ...input.output };
        run.annotations.push(...(input.output.annotations ?? []));
      }
      if (input.actions) run.actions = input.actions;
      run.updates++;
      return { status: 200, body: this.checkRunBody(run) };
    }
    if (method === 'POST' && (match = /^\/repos\/([^/]+\/[^/]+)\/pulls\/(\d+)\/reviews$/.exec(path))) {
      const pull = this.pull(match[1]!, Number(match[2]));
      if (!pull) return notFound();
      const input = body as { body?: string; comments?: { path: string; line: number; body: string }[] };
      pull.reviews.push({ body: input.body ?? '', comments: input.comments ?? [] });
      return { status: 200, body: { id: this.nextId++, node_id: 'R', user: null, body: input.body ?? '', state: 'COMMENTED', html_url: '', pull_request_url: '', _links: { html: { href: '' }, pull_request: { href: '' } }, commit_id: null, author_association: 'NONE' } };
    }
    if (method === 'POST' && (match = /^\/repos\/([^/]+\/[^/]+)\/issues\/comments\/(\d+)\/reactions$/.exec(path))) {
      this.reactions.push({ commentId: Number(match[2]), content: (body as { content: string }).content });
      return { status: 201, body: { id: this.nextId++, node_id: 'X', user: null, content: (body as { content: string }).content, created_at: new Date().toISOString() } };
    }
    if (method === 'POST' && (match = /^\/repos\/([^/]+\/[^/]+)\/issues\/(\d+)\/comments$/.exec(path))) {
      const pull = this.pull(match[1]!, Number(match[2]));
      if (!pull) return notFound();
      const comment = { id: this.nextId++, body: (body as { body: string }).body, login: 'cuda-gatekeeper[bot]' };
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
      return notFound();
    }
    if (method === 'GET' && (match = /^\/repos\/([^/]+\/[^/]+)\/collaborators\/([^/]+)\/permission$/.exec(path))) {
      const permission = this.permissions.get(match[2]!) ?? 'read';
      return { status: 200, body: { permission, role_name: permission, user: { login: match[2], id: 1 } } };
    }
    return { status: 404, body: { message: `fake GitHub has no route for ${method} ${path}` } };
  }

  private checkRunBody(run: CheckRun): unknown {
    return { id: run.id, head_sha: run.head_sha, node_id: 'CR', external_id: null, url: '', html_url: '', details_url: null, status: run.status, conclusion: run.conclusion ?? null, started_at: null, completed_at: null, output: { title: run.output?.title ?? null, summary: run.output?.summary ?? null, text: null, annotations_count: run.annotations.length, annotations_url: '' }, name: run.name, check_suite: null, app: null, pull_requests: [] };
  }

  private issueBody(issue: { repo: string; number: number; title: string; body: string; state: string }): unknown {
    return { id: issue.number, node_id: 'I', number: issue.number, title: issue.title, body: issue.body, state: issue.state, url: '', html_url: `https://github.test/${issue.repo}/issues/${issue.number}`, repository_url: '', labels_url: '', comments_url: '', events_url: '', labels: [], assignee: null, assignees: [], milestone: null, locked: false, comments: 0, created_at: new Date().toISOString(), updated_at: new Date().toISOString(), closed_at: null, author_association: 'NONE', user: { login: 'cuda-gatekeeper[bot]', id: 1 } };
  }

  private commentBody(comment: { id: number; body: string; login: string }): unknown {
    return { id: comment.id, node_id: 'IC', url: '', html_url: '', body: comment.body, user: { login: comment.login, id: 1, type: 'Bot' }, created_at: new Date().toISOString(), updated_at: new Date().toISOString(), issue_url: '', author_association: 'NONE' };
  }

  pull(repo: string, number: number): FakePull | undefined {
    return this.pulls.get(`${repo.toLowerCase()}#${number}`);
  }

  // ------------------------------------------------------------------------------------------ GraphQL

  private async graphql(request: { query: string; variables?: Record<string, unknown> }): Promise<Response> {
    const result = await executeGraphql(request.query, request.variables ?? {}, this.root());
    if (result.errors?.length) this.violations.push(...result.errors.map((error) => `GraphQL execution: ${error.message}`));
    return { status: 200, body: result };
  }

  private root(): unknown {
    return rootResolvers(this);
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
          const result = await this.handle(req.method ?? 'GET', req.url ?? '/', raw ? JSON.parse(raw) : undefined);
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

function notFound(): Response {
  return { status: 404, body: { message: 'Not Found' } };
}

/** GraphQL root resolvers over the fake's state (graphql-js calls nested functions with their arguments). */
function rootResolvers(fake: FakeGitHub): unknown {
  const blob = (text: string | undefined) => (text === undefined ? null : { __typename: 'Blob', text: text.includes('\0') ? null : text, byteSize: Buffer.byteLength(text), isBinary: text.includes('\0') });
  return {
    repository: ({ owner, name }: { owner: string; name: string }) => {
      const full = `${owner}/${name}`.toLowerCase();
      const repo = fake.repos.get(full);
      if (!repo) return null;
      return {
        defaultBranchRef: { name: repo.defaultBranch, target: { __typename: 'Commit', oid: repo.head } },
        object: ({ expression, oid }: { expression?: string; oid?: string }) => {
          if (oid) {
            const runs = fake.checkRuns.filter((run) => run.repo === full && run.head_sha === oid);
            return { __typename: 'Commit', oid, checkSuites: () => ({ nodes: runs.length ? [{ checkRuns: ({ filterBy }: { filterBy?: { checkName?: string } }) => ({ nodes: runs.filter((run) => !filterBy?.checkName || run.name === filterBy.checkName).map((run) => ({ databaseId: run.id, conclusion: run.conclusion ? run.conclusion.toUpperCase() : null, title: run.output?.title ?? null, summary: run.output?.summary ?? null })) }) }] : [] }) };
          }
          const [revision, ...rest] = (expression ?? '').split(':');
          const sha = revision === 'HEAD' ? repo.head : revision!;
          return blob(fake.trees.get(sha)?.get(rest.join(':')));
        },
        pullRequest: ({ number }: { number: number }) => {
          const pull = fake.pull(full, number);
          if (!pull) return null;
          return {
            headRefOid: pull.headSha,
            headRefName: pull.headRef,
            headRepository: { nameWithOwner: pull.headRepo },
            reviews: () => ({ nodes: pull.reviews.map((review) => ({ comments: () => ({ nodes: review.comments.map((comment) => ({ body: comment.body })) }) })) }),
            comments: () => ({ nodes: pull.comments.map((comment) => ({ databaseId: comment.id, body: comment.body })) }),
          };
        },
      };
    },
    createCommitOnBranch: ({ input }: { input: { branch: { repositoryNameWithOwner: string; branchName: string }; expectedHeadOid: string; message: unknown; fileChanges: { additions?: { path: string; contents: string }[] } } }) => {
      const branchKey = `${input.branch.repositoryNameWithOwner.toLowerCase()}#${input.branch.branchName}`;
      const pull = [...fake.pulls.values()].find((candidate) => candidate.headRepo.toLowerCase() === input.branch.repositoryNameWithOwner.toLowerCase() && candidate.headRef === input.branch.branchName);
      const current = fake.branches.get(branchKey) ?? pull?.headSha;
      if (!current || current !== input.expectedHeadOid) throw new Error('Expected branch to point to the expected head oid');
      const files = Object.fromEntries(fake.trees.get(current) ?? []);
      const additions = (input.fileChanges.additions ?? []).map((file) => ({ path: file.path, contents: Buffer.from(file.contents, 'base64').toString('utf8') }));
      for (const file of additions) files[file.path] = file.contents;
      const oid = fake.commit(files);
      fake.commits.push({ branch: input.branch.branchName, repo: input.branch.repositoryNameWithOwner, oid, files: additions, message: input.message });
      if (fake.branches.has(branchKey)) fake.branches.set(branchKey, oid);
      else if (pull) pull.headSha = oid;
      return { commit: { oid, url: `https://github.test/commit/${oid}` } };
    },
  };
}
