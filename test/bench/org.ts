/**
 * Organisation-scale benchmark: the baseline preview of a config pull request and the re-check after a baseline
 * lands, over 1,000 and 10,000 repositories in the fake GitHub (REST validated against GitHub's OpenAPI
 * description, GraphQL executed against GitHub's schema). Reports API calls (total and per repository) and wall
 * time. One repository in five holds real files from fixtures/corpus (a Dockerfile and a requirements file),
 * the others none, as in an organisation where some teams train models; one in ten has an open pull request.
 * Part of `npm run bench`; writes bench-results/org.json.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { Probot, ProbotOctokit } from 'probot';
import { createDeps } from '../../src/github/deps.js';
import type { FanoutJob } from '../../src/github/jobs.js';
import { recheckOrganisation } from '../../src/github/org-recheck.js';
import { cudaGatekeeper } from '../../src/app.js';
import { packageRoot } from '../../src/util/package-root.js';
import { FakeGitHub } from '../support/fake-github.js';
import { privateKey } from '../support/probot.js';
import { addedPatch, configPull } from '../support/scenario.js';
import { codeBlock } from '../support/code-block.js';

const OWNER = 'octo-org';
const corpus = join(packageRoot(), 'fixtures', 'corpus');
const DOCKERFILE = readFileSync(join(corpus, 'b13__facebookresearch__sam2__backend.Dockerfile'), 'utf8');
const REQUIREMENTS = readFileSync(join(corpus, 'b26__KwaiVGI__LivePortrait__requirements.txt'), 'utf8');
const OLD = codeBlock`
  cuda:
    allowed: ["12.1", "12.4", "12.6"]
`;
const NEW = codeBlock`
  cuda:
    allowed: ["12.4", "12.6"]
`;

function organisation(fake: FakeGitHub, repositories: number): void {
  fake.addRepo(`${OWNER}/.github`, { 'cuda-gatekeeper.yml': OLD });
  for (let i = 0; i < repositories; i++) {
    const full = `${OWNER}/repo-${i}`;
    const ml = i % 5 === 0;
    fake.addRepo(
      full,
      ml
        ? { Dockerfile: DOCKERFILE, 'requirements.txt': REQUIREMENTS, 'README.md': '# model\n' }
        : { 'README.md': '# service\n', 'src/main.py': 'print(1)\n' },
    );
    if (i % 10 === 0) {
      const changed = ml ? 'requirements.txt' : 'README.md';
      const text = ml ? `${REQUIREMENTS}numpy==1.26.4\n` : '# service, edited\n';
      const headSha = fake.commit(
        ml ? { Dockerfile: DOCKERFILE, 'requirements.txt': text } : { 'README.md': text, 'src/main.py': 'print(1)\n' },
      );
      fake.addPull(full, {
        number: 1,
        headSha,
        headRef: 'work',
        headRepo: full,
        files: [{ filename: changed, status: 'modified', patch: addedPatch(text) }],
      });
    }
  }
}

async function main(): Promise<void> {
  const rows: {
    repositories: number;
    job: string;
    calls: number;
    perRepository: number;
    seconds: number;
    detail: string;
  }[] = [];
  for (const repositories of [1000, 10000]) {
    const fake = new FakeGitHub();
    organisation(fake, repositories);
    const { server, port } = await fake.listen(0);
    const Octokit = ProbotOctokit.defaults((options: Record<string, unknown>) => ({
      ...options,
      retry: { enabled: false },
      throttle: { ...(options.throttle as object), enabled: false },
    }));
    const probot = new Probot({
      appId: 1,
      privateKey: privateKey(),
      baseUrl: `http://127.0.0.1:${port}/api/v3`,
      log: pino({ level: 'silent' }),
      Octokit,
    });
    const deps = createDeps({ appId: 1 });
    await probot.load(cudaGatekeeper(deps));
    const github = await probot.auth(42);

    // The re-check after a baseline lands: listing the repositories and their open pull requests, and queuing one
    // job per pull request (each job is then one pull request's check: ≤ 4 calls, see the App bench).
    const queued: FanoutJob[] = [];
    const counting = {
      ...deps,
      fanout: { add: async (_key: string, job: FanoutJob) => (queued.push(job), true), idle: async () => {} },
    } as unknown as typeof deps;
    let before = fake.requests.length;
    let started = performance.now();
    await recheckOrganisation(github as never, counting, pino({ level: 'silent' }) as never, {
      owner: OWNER,
      installationId: 42,
      deliveryId: 'bench',
    });
    let calls = fake.requests.length - before;
    rows.push({
      repositories,
      job: 're-check: list and queue',
      calls,
      perRepository: calls / repositories,
      seconds: (performance.now() - started) / 1000,
      detail: `${queued.length} pull requests queued`,
    });

    // The preview of a config pull request: every repository's default branch and open pull requests under both
    // baselines. The first lists every repository's tree (the path index is empty); pushes to a fifth of the
    // repositories' default branches then arrive as GitHub sends them, and the second preview (a new commit of the
    // config pull request) reads only what the index names.
    const previewOnce = async (job: string, text: string): Promise<void> => {
      const payload = configPull(fake, OWNER, text, 'synchronize');
      const headSha = (payload.pull_request as { head: { sha: string } }).head.sha;
      before = fake.requests.length;
      started = performance.now();
      await probot.receive({ id: `bench-${job}`, name: 'pull_request', payload } as never);
      await deps.fanout.idle();
      calls = fake.requests.length - before;
      const run = fake.checkRuns.find(
        (candidate) => candidate.repo === `${OWNER}/.github` && candidate.head_sha === headSha,
      );
      const trees = fake.requests.slice(before).filter((request) => request.path.includes('/git/trees/')).length;
      rows.push({
        repositories,
        job,
        calls,
        perRepository: calls / repositories,
        seconds: (performance.now() - started) / 1000,
        detail: `${trees} trees listed; ${run?.conclusion ?? 'no check run'}: ${run?.output?.title ?? ''}`,
      });
    };
    await previewOnce('preview, path index empty', NEW);
    for (let i = 0; i < repositories; i++) {
      if (i % 10 !== 3 && i % 10 !== 5) continue; // one in ten repositories without CUDA files, one in ten with
      const full = `${OWNER}/repo-${i}`;
      const state = fake.repos.get(full)!;
      const ml = i % 5 === 0;
      const previous = state.head;
      state.head = fake.commit(
        ml
          ? { Dockerfile: DOCKERFILE, 'requirements.txt': `${REQUIREMENTS}einops==0.8.0\n`, 'README.md': '# model\n' }
          : { 'README.md': '# service, pushed\n', 'src/main.py': 'print(2)\n' },
      );
      const push = {
        ref: 'refs/heads/main',
        before: previous,
        after: state.head,
        created: false,
        deleted: false,
        forced: false,
        installation: { id: 42 },
        repository: {
          id: i + 2,
          name: `repo-${i}`,
          full_name: full,
          default_branch: 'main',
          owner: { login: OWNER, name: OWNER },
        },
        commits: [
          { id: `c${i}`, added: [], removed: [], modified: ml ? ['requirements.txt'] : ['README.md', 'src/main.py'] },
        ],
      };
      await probot.receive({ id: `bench-push-${i}`, name: 'push', payload: push } as never);
    }
    await previewOnce('preview, index kept by pushes', `${NEW}# second commit\n`);
    if (fake.violations.length)
      throw new Error(`fake GitHub saw invalid requests: ${fake.violations.slice(0, 3).join('; ')}`);
    await new Promise((resolve) => server.close(resolve));
  }
  process.stdout.write(codeBlock`

    Organisation scale (fake GitHub on loopback, zero latency)
  `);
  for (const row of rows)
    process.stdout.write(
      `${String(row.repositories).padStart(6)} repositories  ${row.job.padEnd(32)} ${String(row.calls).padStart(6)} calls  ${row.perRepository.toFixed(3)}/repository  ${row.seconds.toFixed(1)} s  ${row.detail}\n`,
    );
  mkdirSync(join(packageRoot(), 'bench-results'), { recursive: true });
  writeFileSync(join(packageRoot(), 'bench-results', 'org.json'), `${JSON.stringify(rows, null, 2)}\n`);
}

await main();
