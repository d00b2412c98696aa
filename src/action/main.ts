/**
 * The GitHub Action (action.yml, `runs.using: node24`), bundled into bundle/action.mjs so that a run installs and
 * builds nothing. It runs the CLI's check once and reports it four ways:
 * - a check run created with the job's GITHUB_TOKEN (`checks: write`), with every annotation in batches of 50
 *   and the same summary and fix diffs as the App's check; without the permission (a pull request from a fork
 *   gets a read-only token) it falls back to workflow commands, which GitHub shows at most 10 of per type;
 * - the job summary ($GITHUB_STEP_SUMMARY), the per-file table and the fixes;
 * - a SARIF file for github/codeql-action/upload-sarif (never written when nothing was checked);
 * - outputs (counts, the SARIF path, the check run's URL) and the exit status, by `fail-on`.
 * Inputs arrive as INPUT_<NAME> environment variables, the name upper-cased with spaces as underscores and
 * hyphens kept (docs.github.com/en/actions/sharing-automations/creating-actions/metadata-syntax-for-github-actions
 * #inputs; @actions/core's getInput reads them the same way).
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { Octokit } from '@octokit/rest';
import { batches, CHECK_NAME, renderCheckRun, type CheckOutput } from '../render/check-run.js';
import { escapeData, escapeProperty, renderGithubAnnotations } from '../render/github.js';
import { renderSarif } from '../render/sarif.js';
import { SourceText } from '../parsers/source.js';
import { defaultKnowledgeBase } from '../knowledge/index.js';
import { packageVersion } from '../util/package-root.js';
import { RULES } from '../../rules/index.js';
import { ruleDocs, runAsync, type BaselineProblem, type Checked } from '../cli/main.js';

export interface ActionIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** How registries are reached (tests pass a fake registry's fetch). */
  readonly fetch?: typeof fetch;
}

/**
 * GitHub's limit for one step's summary: 1 MiB
 * (https://docs.github.com/en/actions/writing-workflows/choosing-what-your-workflow-does/workflow-commands-for-github-actions#adding-a-job-summary).
 */
const SUMMARY_LIMIT = 1024 * 1024;

function input(io: ActionIo, name: string): string {
  return (io.env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] ?? '').trim();
}

/**
 * The baseline's ref: the `baseline-ref` input; on a pull request by default its base branch, fetched, so a pull
 * request cannot loosen its own policy; "checkout" reads the baseline from the checked-out files.
 */
function baselineRef(io: ActionIo): string | undefined {
  const named = input(io, 'baseline-ref');
  if (named === 'checkout') return undefined;
  if (named) return named;
  const base = io.env.GITHUB_BASE_REF;
  if (!base) return undefined;
  try {
    execFileSync(
      'git',
      ['fetch', '--no-tags', '--depth=1', 'origin', `+refs/heads/${base}:refs/remotes/origin/${base}`],
      { cwd: io.cwd, stdio: 'ignore' },
    );
    return `origin/${base}`;
  } catch {
    io.out(
      `::warning::${escapeData(`cuda-gatekeeper could not fetch the base branch ${base}; the baseline is read from the checkout`)}\n`,
    );
    return undefined;
  }
}

/** The CLI's arguments for the inputs. */
function checkArguments(io: ActionIo, ref: string | undefined): string[] {
  const paths = input(io, 'paths').split(/\s+/).filter(Boolean);
  const args = [
    'check',
    ...(paths.length ? paths : ['.']),
    '--format',
    input(io, 'format') || 'text',
    '--fail-on',
    input(io, 'fail-on') || 'error',
  ];
  const baseline = input(io, 'baseline');
  if (baseline) args.push('--baseline', baseline);
  if (ref) args.push('--baseline-ref', ref);
  const since = input(io, 'changed-since');
  if (since) args.push('--changed-since', since);
  // The Action looks images up unless told not to (README "Images").
  args.push(input(io, 'lookup') === 'false' ? '--offline' : '--online');
  return args;
}

function event(io: ActionIo): { pull_request?: { head?: { sha?: string } } } {
  try {
    return io.env.GITHUB_EVENT_PATH ? (JSON.parse(readFileSync(io.env.GITHUB_EVENT_PATH, 'utf8')) as object) : {};
  } catch {
    return {};
  }
}

/** Run the Action; resolves to the exit status (0, 1 by `fail-on`, 2 when nothing could be checked). */
export async function action(io: ActionIo): Promise<number> {
  let checked: Checked | undefined;
  let refused: readonly BaselineProblem[] = [];
  const status = await runAsync(checkArguments(io, baselineRef(io)), {
    cwd: io.cwd,
    out: io.out,
    err: io.err,
    env: io.env,
    ...(io.fetch ? { fetch: io.fetch } : {}),
    onReport: (result) => (checked = result),
    onInvalidBaseline: (problems) => (refused = problems),
  });
  if (!checked) {
    if (refused.length > 0) return invalidBaseline(io, refused, status);
    io.out(`::error::${escapeData('cuda-gatekeeper checked nothing: see the message above')}\n`);
    return status;
  }
  const { report, sources } = checked;
  const texts = new Map(sources.map((source) => [source.path, source.text]));
  const rendered = renderCheckRun(report, {
    baselineOrigin: checked.baselineOrigin,
    knowledgeRetrieved: defaultKnowledgeBase().retrieved,
    texts,
    skipped: checked.unchecked,
    relevantFiles: report.filesChecked,
    // No App here: no Apply fixes button and no `/cuda-check` commands, only `check --fix` and a re-run of the job.
    fixes: { kind: 'local' },
  });
  // The check's verdict follows `fail-on`: error-level findings that do not fail the job leave it neutral.
  const output: CheckOutput = {
    ...rendered,
    conclusion: checked.failed ? 'failure' : rendered.conclusion === 'failure' ? 'neutral' : rendered.conclusion,
  };

  const sarifFile = io.env['INPUT_SARIF-FILE'] === undefined ? 'cuda-gatekeeper.sarif' : input(io, 'sarif-file');
  /** The SARIF file, once it is written: the `sarif-file` output names only a file that exists. */
  let sarifWritten: string | undefined;
  if (sarifFile) {
    const sarif = renderSarif(report, {
      rules: RULES,
      version: packageVersion(),
      sources: new Map(sources.map((source) => [source.path, new SourceText(source.path, source.text)])),
      docs: ruleDocs(),
    });
    // A folder that does not exist yet (`reports/x.sarif`) is created; a file that cannot be written is a
    // warning, and the annotations, summary and outputs still follow.
    try {
      mkdirSync(dirname(resolve(io.cwd, sarifFile)), { recursive: true });
      writeWhole(resolve(io.cwd, sarifFile), sarif);
      sarifWritten = sarifFile;
    } catch (error) {
      io.out(
        `::warning::${escapeData(`cuda-gatekeeper could not write the SARIF file ${sarifFile}: ${(error as Error).message}`)}\n`,
      );
    }
  }

  const url = await postCheckRun(io, output);
  // Without a check run the findings become workflow annotations, unless the log already holds them (format github).
  if (url === undefined && (input(io, 'format') || 'text') !== 'github') io.out(renderGithubAnnotations(report));

  if (io.env.GITHUB_STEP_SUMMARY) {
    let summary = `## ${CHECK_NAME}: ${output.title}\n\n${output.summary}\n`;
    if (Buffer.byteLength(summary) > SUMMARY_LIMIT)
      summary = `${summary.slice(0, SUMMARY_LIMIT - 200)}\n\n… cut at GitHub's 1 MiB summary limit.\n`;
    appendFileSync(io.env.GITHUB_STEP_SUMMARY, summary);
  }
  if (io.env.GITHUB_OUTPUT) {
    const outputs: Record<string, string> = {
      errors: String(report.counts.error),
      warnings: String(report.counts.warning),
      notices: String(report.counts.notice),
      conclusion: output.conclusion,
      ...(sarifWritten ? { 'sarif-file': sarifWritten } : {}),
      ...(url ? { 'check-run-url': url } : {}),
    };
    appendFileSync(
      io.env.GITHUB_OUTPUT,
      Object.entries(outputs)
        .map(([key, value]) => `${key}=${value}\n`)
        .join(''),
    );
  }
  return status;
}

/**
 * A refused baseline: each problem an error annotation on the baseline file at its position, the job summary
 * saying that nothing was checked and why, and the outputs (conclusion failure); the exit status stays 2.
 */
function invalidBaseline(io: ActionIo, problems: readonly BaselineProblem[], status: number): number {
  for (const problem of problems) {
    // `path@ref` (read at the base branch) names the file; annotations take the path alone.
    const file = problem.path.replace(/@[^@/]+$/, '');
    const path = file.startsWith('/') ? relative(io.cwd, file) : file;
    io.out(
      `::error file=${escapeProperty(path)},line=${problem.line},col=${problem.column},title=${escapeProperty('cuda-gatekeeper: invalid baseline')}::${escapeData(problem.message)}\n`,
    );
  }
  if (io.env.GITHUB_STEP_SUMMARY) {
    const lines = problems.map(
      (problem) => `- \`${problem.path}:${problem.line}:${problem.column}\`: ${problem.message}`,
    );
    appendFileSync(
      io.env.GITHUB_STEP_SUMMARY,
      `## ${CHECK_NAME}: the baseline is invalid\n\nNothing was checked. Fix the baseline and re-run the job:\n\n${lines.join('\n')}\n`,
    );
  }
  if (io.env.GITHUB_OUTPUT)
    appendFileSync(io.env.GITHUB_OUTPUT, `errors=${problems.length}\nwarnings=0\nnotices=0\nconclusion=failure\n`);
  return status;
}

/**
 * GitHub API calls give up after this long (GITHUB_REQUEST_TIMEOUT_MS, as for the App; default 20 s): an API
 * that accepts the connection and never answers must not hang the job.
 */
function requestTimeoutMs(env: ActionIo['env']): number {
  const ms = Number(env.GITHUB_REQUEST_TIMEOUT_MS);
  return Number.isFinite(ms) && ms > 0 ? ms : 20_000;
}

/** Why a call to GitHub failed, in words: an HTTP status, a timeout, or a connection that did not happen. */
export function describeFailure(error: unknown, baseUrl: string, timeoutMs: number): string {
  const status = (error as { status?: number }).status;
  if (status === 403 || status === 404)
    return 'the token may not create check runs (give the job `permissions: checks: write`; a pull request from a fork gets a read-only token)';
  // @octokit/request reports a request that got no response (refused, reset, timed out) as status 500 with the
  // fetch error as its cause and no response: only a response is GitHub answering.
  if (typeof status === 'number' && (error as { response?: unknown }).response !== undefined)
    return `GitHub answered ${status}`;
  const causes: unknown[] = [];
  for (let at: unknown = error; at && causes.length < 5; at = (at as { cause?: unknown }).cause) causes.push(at);
  const code = causes.map((cause) => (cause as { code?: string }).code).find(Boolean);
  const name = causes
    .map((cause) => (cause as { name?: string }).name)
    .find((value) => value === 'TimeoutError' || value === 'AbortError');
  if (name) return `GitHub at ${baseUrl} did not answer within ${timeoutMs / 1000} s`;
  if (code === 'ECONNREFUSED') return `the connection to ${baseUrl} was refused`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `${baseUrl} could not be resolved`;
  if (code) return `could not reach ${baseUrl} (${code})`;
  return `could not reach ${baseUrl} (${(error as Error).message})`;
}

/**
 * Create the check run on the commit the workflow checks (a pull request's head, else GITHUB_SHA) and add the
 * annotations 50 at a time: GitHub accepts at most 50 per request and appends those of each update
 * (docs.github.com/en/rest/checks/runs#update-a-check-run). Returns its URL, or undefined when it could not be
 * created (no token, no `checks: write`, GitHub unreachable): the caller falls back to workflow commands.
 */
async function postCheckRun(io: ActionIo, output: CheckOutput): Promise<string | undefined> {
  const token = input(io, 'token');
  const repository = io.env.GITHUB_REPOSITORY;
  const headSha = event(io).pull_request?.head?.sha ?? io.env.GITHUB_SHA;
  if (!token || !repository?.includes('/') || !headSha) return undefined;
  const [owner, repo] = repository.split('/') as [string, string];
  const baseUrl = io.env.GITHUB_API_URL || 'https://api.github.com';
  const timeoutMs = requestTimeoutMs(io.env);
  const octokit = new Octokit({
    auth: token,
    baseUrl,
    userAgent: `cuda-gatekeeper-action/${packageVersion()}`,
    // Each request with its own deadline (undici's own is 300 s).
    request: {
      fetch: (url: string, init: RequestInit) => fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) }),
    },
  });
  const [first = [], ...rest] = batches(output.annotations);
  const base = { title: output.title, summary: output.summary, ...(output.text ? { text: output.text } : {}) };
  try {
    const created = await octokit.rest.checks.create({
      owner,
      repo,
      name: `${CHECK_NAME} (Action)`,
      head_sha: headSha,
      status: 'completed',
      conclusion: output.conclusion,
      output: { ...base, annotations: first },
    });
    for (const annotations of rest)
      await octokit.rest.checks.update({
        owner,
        repo,
        check_run_id: created.data.id,
        output: { ...base, annotations },
      });
    return created.data.html_url ?? undefined;
  } catch (error) {
    const why = describeFailure(error, baseUrl, timeoutMs);
    io.out(
      `::warning::${escapeData(`cuda-gatekeeper could not create its check run: ${why}. The findings follow as workflow annotations.`)}\n`,
    );
    return undefined;
  }
}

function writeWhole(path: string, text: string): void {
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, text);
    renameSync(temporary, path);
  } finally {
    rmSync(temporary, { force: true });
  }
}
