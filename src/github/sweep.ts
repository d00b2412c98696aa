/**
 * The drift sweep: default branches re-evaluated on a schedule (SWEEP_INTERVAL_HOURS, default 24), so that
 * newly published knowledge (a deleted image tag, a new driver floor) shows up without anyone pushing. With
 * `sweep.issues` in the organisation baseline it keeps one "CUDA compliance" issue per repository, or one
 * dashboard issue in the config repository, up to date; compliant repositories get their issue closed.
 */
import type { Probot } from 'probot';
import type { Report } from '../finding.js';
import { complianceDashboard, complianceIssueBody } from '../render/github-prose.js';
import type { AppDeps } from './deps.js';
import { evaluateDefaultBranch, organisationRepositories } from './org.js';
import { ORG_CONFIG_REPO } from '../baseline/layers.js';
import { readOrgLayer } from './read.js';
import type { PathIndex } from './path-index.js';
import type { GitHub, Logger } from './types.js';

export const COMPLIANCE_TITLE = 'CUDA compliance';
export const COMPLIANCE_MARKER = '<!-- cuda-gatekeeper:compliance -->';

export interface SweepRow {
  readonly repo: string;
  readonly url: string;
  readonly errors: number;
  readonly warnings: number;
  readonly report: Report;
}

/** Our compliance issue among the open issues, page by page until found. */
async function findIssue(github: GitHub, owner: string, repo: string) {
  for await (const page of github.paginate.iterator(github.rest.issues.listForRepo, {
    owner,
    repo,
    state: 'open',
    per_page: 100,
  })) {
    const found = page.data.find((issue) => !issue.pull_request && issue.body?.includes(COMPLIANCE_MARKER));
    if (found) return found;
  }
  return undefined;
}

async function upsertIssue(
  github: GitHub,
  owner: string,
  repo: string,
  body: string,
  open: boolean,
): Promise<'created' | 'updated' | 'closed' | 'none'> {
  const existing = await findIssue(github, owner, repo);
  const text = `${COMPLIANCE_MARKER}\n${body}`;
  if (existing) {
    if (existing.body === text && open) return 'none';
    await github.rest.issues.update({
      owner,
      repo,
      issue_number: existing.number,
      body: text,
      ...(open ? {} : { state: 'closed' as const }),
    });
    return open ? 'updated' : 'closed';
  }
  if (!open) return 'none';
  await github.rest.issues.create({ owner, repo, title: COMPLIANCE_TITLE, body: text });
  return 'created';
}

export async function sweepInstallation(
  github: GitHub,
  owner: string,
  log: Logger,
  today = new Date().toISOString().slice(0, 10),
  index?: PathIndex,
): Promise<SweepRow[]> {
  const layer = await readOrgLayer(github, owner);
  if (layer.state === 'unavailable') {
    log.warn({ owner, reason: layer.reason }, 'the organisation baseline could not be read; no sweep');
    return [];
  }
  const orgConfig = layer.state === 'found' ? layer.config : null;
  const repos = await organisationRepositories(github, owner);
  const rows: SweepRow[] = [];
  let mode: 'none' | 'repository' | 'dashboard' = 'none';
  for (const repo of repos) {
    const evaluated = await evaluateDefaultBranch(github, owner, repo.name, orgConfig, index);
    mode = evaluated.resolved.baseline.sweep.issues;
    const row = {
      repo: repo.name,
      url: repo.html_url,
      errors: evaluated.report.counts.error,
      warnings: evaluated.report.counts.warning,
      report: evaluated.report,
    };
    rows.push(row);
    if (mode === 'repository') {
      await upsertIssue(
        github,
        owner,
        repo.name,
        complianceIssueBody(row.report, today),
        row.errors + row.warnings > 0,
      );
    }
  }
  if (mode === 'dashboard') {
    await upsertIssue(github, owner, ORG_CONFIG_REPO, complianceDashboard(rows, today), true);
  }
  log.info(
    { owner, repositories: rows.length, failing: rows.filter((row) => row.errors > 0).length, issues: mode },
    'drift sweep completed',
  );
  return rows;
}

/** Start the periodic sweep over every installation (queued, keyed per installation and period). */
export function scheduleSweeps(
  listInstallations: () => Promise<{ id: number; owner: string }[]>,
  auth: (id: number) => Promise<GitHub>,
  deps: AppDeps,
  log: Logger,
  intervalMs: number,
): NodeJS.Timeout {
  const tick = async (): Promise<void> => {
    const period = Math.floor(Date.now() / intervalMs);
    for (const installation of await listInstallations()) {
      await deps.fanout.add(
        { kind: 'sweep', installationId: installation.id, owner: installation.owner, period },
        await auth(installation.id),
      );
    }
  };
  const timer = setInterval(
    () =>
      void tick().catch((error: Error) =>
        log.error({ err: { message: error.message } }, 'could not list installations for the sweep'),
      ),
    intervalMs,
  );
  timer.unref();
  return timer;
}

/** The sweep over every installation of the App (accounts with a login: organisations and users), on Probot's auth. */
export function sweepEveryInstallation(probot: Probot, deps: AppDeps, intervalMs: number): NodeJS.Timeout {
  const installations = async () => {
    const app = await probot.auth();
    const all = await app.paginate(app.rest.apps.listInstallations, { per_page: 100 });
    return all
      .map((installation) => ({
        id: installation.id,
        owner: installation.account && 'login' in installation.account ? installation.account.login : '',
      }))
      .filter((installation) => installation.owner);
  };
  return scheduleSweeps(installations, async (id) => (await probot.auth(id)) as GitHub, deps, probot.log, intervalMs);
}
