/**
 * The organisation baseline's lifecycle: a pull request to `<org>/.github` that changes `cuda-gatekeeper.yml`
 * is validated and previewed (which repositories and open pull requests would newly fail or pass), and a
 * push of a new baseline to the default branch re-checks every open pull request.
 */
import { createHash } from 'node:crypto';
import { loadBaseline } from '../baseline/load.js';
import { gate } from '../gate.js';
import { defaultKnowledgeBase } from '../knowledge/index.js';
import { classifyPath, parseFile } from '../parsers/index.js';
import { CHECK_NAME, MAX_OUTPUT } from '../render/check-run.js';
import { RULE_IDS } from '../../rules/index.js';
import { resolveBaseline } from './config.js';
import type { AppDeps } from './handlers.js';
import { enqueue } from './jobs.js';
import { migrate } from './migrate.js';
import { CONFIG_PATH, MAX_BLOB_BYTES, ORG_CONFIG_PATH, ORG_CONFIG_REPO, readBlobs, type ConfigBlob } from './read.js';
import type { GitHub, Logger, PullTarget } from './types.js';

/** Pull requests previewed per repository (the newest first). */
const MAX_PULLS_PER_REPO = 20;

export function isConfigRepo(repo: string): boolean {
  return repo === ORG_CONFIG_REPO;
}

interface Outcome {
  readonly name: string;
  readonly url: string;
  readonly before: number;
  readonly after: number;
  readonly changed: boolean;
  readonly calls: number;
}

function verdict(outcome: Outcome): 'newly fails' | 'newly passes' | 'findings change' | 'unchanged' {
  if (outcome.before === 0 && outcome.after > 0) return 'newly fails';
  if (outcome.before > 0 && outcome.after === 0) return 'newly passes';
  return outcome.changed ? 'findings change' : 'unchanged';
}

const errorsOf = (findings: readonly { severity: string }[]) => findings.filter((finding) => finding.severity === 'error').length;
const keysOf = (findings: readonly { ruleId: string; location: { path: string; start: { line: number } }; message: string }[]) => findings.map((finding) => `${finding.ruleId}@${finding.location.path}:${finding.location.start.line}:${finding.message}`).sort().join('\n');

/** Evaluate files under the old and the new organisation baseline. */
function compare(files: { path: string; text: string }[], owner: string, repo: string, repoConfig: ConfigBlob | undefined, oldOrg: ConfigBlob | null, newOrg: ConfigBlob, today: string) {
  const parsed = files.map((file) => parseFile(file.path, file.text, classifyPath(file.path) ?? 'requirements'));
  const run = (org: ConfigBlob | null) => {
    const resolved = resolveBaseline(owner, repo, repoConfig, org);
    return gate(parsed, resolved.baseline, defaultKnowledgeBase(), { ...(resolved.repoFile ? { policy: resolved.repoFile } : {}), policyProblems: resolved.problems, repository: `${owner}/${repo}`, today }).findings;
  };
  const before = run(oldOrg);
  const after = run(newOrg);
  return { before: errorsOf(before), after: errorsOf(after), changed: keysOf(before) !== keysOf(after) };
}

async function readFiles(github: GitHub, owner: string, repo: string, paths: readonly string[], revision: string): Promise<{ path: string; text: string }[]> {
  const out: { path: string; text: string }[] = [];
  for (let i = 0; i < paths.length; i += 100) {
    for (const [path, blob] of await readBlobs(github, { owner, repo }, paths.slice(i, i + 100), revision)) {
      if (blob?.text != null && blob.byteSize <= MAX_BLOB_BYTES && !blob.isBinary) out.push({ path, text: blob.text });
    }
  }
  return out;
}

export async function previewConfigPull(github: GitHub, target: PullTarget, deps: AppDeps, log: Logger): Promise<void> {
  const owner = target.owner;
  const today = new Date().toISOString().slice(0, 10);
  const [newText, oldText] = await Promise.all([
    readBlobs(github, { owner, repo: target.repo }, [ORG_CONFIG_PATH], target.headSha),
    readBlobs(github, { owner, repo: target.repo }, [ORG_CONFIG_PATH], 'HEAD'),
  ]);
  const next = newText.get(ORG_CONFIG_PATH);
  const previous = oldText.get(ORG_CONFIG_PATH);
  const created = await github.rest.checks.create({ owner, repo: target.repo, name: CHECK_NAME, head_sha: target.headSha, status: 'in_progress', output: { title: 'Validating the organisation baseline', summary: 'Reading the new baseline…' } });
  const id = created.data.id;
  try {
    if (!next?.text) {
      await github.rest.checks.update({ owner, repo: target.repo, check_run_id: id, status: 'completed', conclusion: 'neutral', output: { title: 'The organisation baseline is removed', summary: `This pull request deletes \`${ORG_CONFIG_PATH}\`; repositories fall back to their own files or the bundled baseline.` } });
      return;
    }
    const loaded = loadBaseline(ORG_CONFIG_PATH, next.text, RULE_IDS);
    if (loaded.problems.length > 0) {
      await github.rest.checks.update({
        owner,
        repo: target.repo,
        check_run_id: id,
        status: 'completed',
        conclusion: 'failure',
        output: {
          title: `The new baseline is invalid (${loaded.problems.length} problem${loaded.problems.length === 1 ? '' : 's'})`,
          summary: 'Nothing was previewed: fix the baseline first.',
          annotations: loaded.problems.slice(0, 50).map((problem) => {
            const start = loaded.source.position(problem.span.start);
            const end = loaded.source.position(problem.span.end);
            return { path: ORG_CONFIG_PATH, start_line: start.line, end_line: Math.max(end.line, start.line), annotation_level: 'failure' as const, message: problem.message, title: 'policy-error' };
          }),
        },
      });
      return;
    }
    const newOrg: ConfigBlob = { text: next.text, commit: target.headSha };
    const oldOrg: ConfigBlob | null = previous?.text ? { text: previous.text, commit: 'HEAD' } : null;
    const repos = (await github.paginate(github.rest.apps.listReposAccessibleToInstallation, { per_page: 100 })).filter((repo) => !repo.archived && repo.name !== ORG_CONFIG_REPO && repo.owner.login.toLowerCase() === owner.toLowerCase());
    const outcomes: Outcome[] = [];
    let done = 0;
    const progressEvery = Math.max(1, Math.ceil(repos.length / 10));
    for (const repo of repos) {
      let calls = 0;
      const counted = async <T>(call: () => Promise<T>): Promise<T> => {
        calls++;
        return call();
      };
      const tree = await counted(() => github.rest.git.getTree({ owner, repo: repo.name, tree_sha: repo.default_branch, recursive: 'true' }));
      const paths = tree.data.tree.filter((entry) => entry.type === 'blob' && entry.path && classifyPath(entry.path)).map((entry) => entry.path!);
      const configBlob = (await counted(() => readBlobs(github, { owner, repo: repo.name }, [CONFIG_PATH], 'HEAD'))).get(CONFIG_PATH);
      const repoConfig = configBlob?.text ? { text: configBlob.text, commit: 'HEAD' } : undefined;
      calls += Math.ceil(paths.length / 100);
      const files = await readFiles(github, owner, repo.name, paths, 'HEAD');
      const branch = compare(files, owner, repo.name, repoConfig, oldOrg, newOrg, today);
      const pulls = await counted(() => github.rest.pulls.list({ owner, repo: repo.name, state: 'open', per_page: MAX_PULLS_PER_REPO, sort: 'updated', direction: 'desc' }));
      const pullOutcomes: Outcome[] = [];
      for (const pull of pulls.data) {
        const changed = await counted(() => github.paginate(github.rest.pulls.listFiles, { owner, repo: repo.name, pull_number: pull.number, per_page: 100 }));
        const relevant = changed.filter((file) => file.status !== 'removed' && classifyPath(file.filename)).map((file) => file.filename);
        if (relevant.length === 0) continue;
        calls += Math.ceil(relevant.length / 100);
        const pullFiles = await readFiles(github, owner, repo.name, relevant, pull.head.sha);
        pullOutcomes.push({ name: `${repo.name}#${pull.number}`, url: pull.html_url, ...compare(pullFiles, owner, repo.name, repoConfig, oldOrg, newOrg, today), calls: 0 });
      }
      outcomes.push({ name: repo.name, url: repo.html_url, ...branch, calls }, ...pullOutcomes);
      done++;
      if (done % progressEvery === 0 && done < repos.length) {
        await github.rest.checks.update({ owner, repo: target.repo, check_run_id: id, output: { title: `Previewing: ${done} of ${repos.length} repositories`, summary: `Evaluating every repository's default branch and open pull requests under the old and the new baseline: ${done} of ${repos.length} repositories done.` } });
      }
    }
    const breaking = outcomes.filter((outcome) => verdict(outcome) === 'newly fails');
    const fixed = outcomes.filter((outcome) => verdict(outcome) === 'newly passes');
    const changed = outcomes.filter((outcome) => verdict(outcome) === 'findings change');
    const title = breaking.length ? `Would newly fail ${breaking.length} repositor${breaking.length === 1 ? 'y or pull request' : 'ies and pull requests'}` : `Breaks nothing (${fixed.length} newly pass, ${changed.length} change findings)`;
    const row = (outcome: Outcome) => `| [${outcome.name}](${outcome.url}) | ${verdict(outcome)} | ${outcome.before} | ${outcome.after} | ${outcome.calls || ''} |`;
    const interesting = [...breaking, ...fixed, ...changed];
    const table = (rows: readonly Outcome[]) => ['| repository / pull request | result | errors before | errors after | API calls |', '|---|---|---:|---:|---:|', ...rows.map(row)].join('\n');
    const summaryRows = interesting.slice(0, 50);
    const summary = [`Evaluated ${repos.length} repositories (default branches) and their open pull requests under the current and the proposed baseline.`, '', `**${breaking.length}** newly fail, **${fixed.length}** newly pass, **${changed.length}** change findings, ${outcomes.length - interesting.length} unchanged.`, '', interesting.length ? table(summaryRows) : '', interesting.length > summaryRows.length ? `\n… and ${interesting.length - summaryRows.length} more in the details below.` : ''].join('\n');
    const text = table(outcomes).slice(0, MAX_OUTPUT);
    await github.rest.checks.update({ owner, repo: target.repo, check_run_id: id, status: 'completed', conclusion: breaking.length ? 'failure' : 'neutral', output: { title, summary: summary.slice(0, MAX_OUTPUT), text } });
    log.info({ repo: `${owner}/${target.repo}`, pr: target.number, repositories: repos.length, newlyFailing: breaking.length }, 'baseline preview completed');
  } catch (error) {
    await github.rest.checks.update({ owner, repo: target.repo, check_run_id: id, status: 'completed', conclusion: 'failure', output: { title: 'cuda-gatekeeper could not preview this baseline', summary: `${(error as Error).message}. Re-run the check to try again.` } });
    throw error;
  }
  void deps;
}

/** Evaluate a repository's default branch under the organisation baseline (and its own file). */
export async function evaluateDefaultBranch(github: GitHub, owner: string, repo: string, defaultBranch: string, orgConfig: ConfigBlob | null) {
  const configBlob = (await readBlobs(github, { owner, repo }, [CONFIG_PATH], 'HEAD')).get(CONFIG_PATH);
  const repoConfig = configBlob?.text ? { text: configBlob.text, commit: 'HEAD' } : undefined;
  const resolved = resolveBaseline(owner, repo, repoConfig, orgConfig);
  const branch = await github.rest.repos.getBranch({ owner, repo, branch: defaultBranch });
  const headSha = branch.data.commit.sha;
  const tree = await github.rest.git.getTree({ owner, repo, tree_sha: headSha, recursive: 'true' });
  const paths = tree.data.tree.filter((entry) => entry.type === 'blob' && entry.path && classifyPath(entry.path)).map((entry) => entry.path!);
  const files = await readFiles(github, owner, repo, paths, headSha);
  const parsed = files.map((file) => parseFile(file.path, file.text, classifyPath(file.path) ?? 'requirements'));
  const report = gate(parsed, resolved.baseline, defaultKnowledgeBase(), { ...(resolved.repoFile ? { policy: resolved.repoFile } : {}), policyProblems: resolved.problems, repository: `${owner}/${repo}`, today: new Date().toISOString().slice(0, 10) });
  return { resolved, headSha, report, texts: new Map(files.map((file) => [file.path, file.text])), files: files.length };
}

/** Open or update the repository's migration pull request when the baseline asks for them. */
export async function migrateIfEnabled(github: GitHub, owner: string, repo: string, defaultBranch: string, log: Logger): Promise<void> {
  const orgBlob = (await readBlobs(github, { owner, repo: ORG_CONFIG_REPO }, [ORG_CONFIG_PATH], 'HEAD')).get(ORG_CONFIG_PATH);
  const orgConfig: ConfigBlob | null = orgBlob?.text ? { text: orgBlob.text, commit: 'HEAD' } : null;
  const evaluated = await evaluateDefaultBranch(github, owner, repo, defaultBranch, orgConfig);
  if (!evaluated.resolved.baseline.migration.pullRequests || evaluated.report.counts.error === 0) return;
  const result = await migrate(github, owner, repo, defaultBranch, evaluated.headSha, evaluated.report, evaluated.texts, evaluated.resolved.origin);
  log.info({ repo: `${owner}/${repo}`, ...result }, 'migration pull request');
}

/** After a new organisation baseline lands: re-check every open pull request of the installation's repositories. */
export async function recheckOrganisation(github: GitHub, owner: string, installationId: number, deps: AppDeps, log: Logger, deliveryId: string): Promise<number> {
  deps.orgCache.invalidate(installationId, owner);
  const repos = (await github.paginate(github.rest.apps.listReposAccessibleToInstallation, { per_page: 100 })).filter((repo) => !repo.archived && repo.owner.login.toLowerCase() === owner.toLowerCase());
  let queued = 0;
  const orgBlob = (await readBlobs(github, { owner, repo: ORG_CONFIG_REPO }, [ORG_CONFIG_PATH], 'HEAD')).get(ORG_CONFIG_PATH);
  const orgConfig: ConfigBlob | null = orgBlob?.text ? { text: orgBlob.text, commit: createHash('sha1').update(orgBlob.text).digest('hex').slice(0, 12) } : null;
  for (const repo of repos) {
    if (repo.name !== ORG_CONFIG_REPO) {
      await enqueue(deps, `migrate:${installationId}:${owner}/${repo.name}:${orgConfig?.commit ?? 'none'}`, { kind: 'migrate', installationId, owner, repo: repo.name, defaultBranch: repo.default_branch, deliveryId }, github, log);
    }
    const pulls = await github.paginate(github.rest.pulls.list, { owner, repo: repo.name, state: 'open', per_page: 100 });
    for (const pull of pulls) {
      const target: PullTarget = { owner, repo: repo.name, number: pull.number, headSha: pull.head.sha, headRef: pull.head.ref, headRepo: pull.head.repo?.full_name ?? `${owner}/${repo.name}`, installationId };
      const key = `recheck:${installationId}:${owner}/${repo.name}@${pull.head.sha}:${orgConfig?.commit ?? 'none'}`;
      if (await enqueue(deps, key, { kind: 'check-pull', installationId, target, deliveryId, skipUnchanged: true }, github, log)) queued++;
    }
  }
  log.info({ deliveryId, owner, repositories: repos.length, queued }, 'organisation re-check queued');
  return queued;
}
