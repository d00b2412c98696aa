/** Sending the check run: one create (or update, on a re-run) with the first 50 annotations, then 50 per update. */
import type { Analysis } from './analyze.js';
import { batches, CHECK_NAME, renderCheckRun, type CheckOutput } from '../render/check-run.js';
import { defaultKnowledgeBase } from '../knowledge/index.js';
import type { GitHub, PullTarget } from './types.js';

export const APPLY_FIXES = 'apply_fixes';

export function checkOutput(analysis: Analysis): CheckOutput {
  return renderCheckRun(analysis.report, {
    baselineOrigin: analysis.baseline.origin,
    knowledgeRetrieved: defaultKnowledgeBase().retrieved,
    texts: analysis.texts,
    skipped: analysis.skipped,
    relevantFiles: analysis.relevant.length,
  });
}

/** Create or update the check run as completed; returns its id. */
export async function sendCheck(github: GitHub, target: PullTarget, output: CheckOutput, existingId: number | undefined, hasSafeFixes: boolean): Promise<number> {
  const [first = [], ...rest] = batches(output.annotations);
  const body = {
    owner: target.owner,
    repo: target.repo,
    name: CHECK_NAME,
    head_sha: target.headSha,
    status: 'completed' as const,
    conclusion: output.conclusion,
    completed_at: new Date().toISOString(),
    output: { title: output.title, summary: output.summary, ...(output.text ? { text: output.text } : {}), annotations: first },
    ...(hasSafeFixes ? { actions: [{ label: 'Apply fixes', identifier: APPLY_FIXES, description: 'Commit the safe fixes to this branch' }] } : {}),
  };
  let id: number;
  if (existingId !== undefined) {
    const { head_sha: _head, ...update } = body;
    await github.rest.checks.update({ ...update, check_run_id: existingId, ...(hasSafeFixes ? {} : { actions: [] }) });
    id = existingId;
  } else {
    id = (await github.rest.checks.create(body)).data.id;
  }
  for (const annotations of rest) {
    await github.rest.checks.update({ owner: target.owner, repo: target.repo, check_run_id: id, output: { title: output.title, summary: output.summary, annotations } });
  }
  return id;
}

/** The check could not run: complete it with the reason instead of leaving nothing (or something in progress). */
export async function sendFailure(github: GitHub, target: PullTarget, reason: string, existingId: number | undefined): Promise<void> {
  const output = {
    title: 'cuda-gatekeeper could not check this pull request',
    summary: `${reason}\n\nNothing was checked, so the check fails closed. Re-run it with the **Re-run** button or a \`/cuda-check\` comment once the cause is gone.`,
  };
  const common = { owner: target.owner, repo: target.repo, status: 'completed' as const, conclusion: 'failure' as const, completed_at: new Date().toISOString(), output };
  if (existingId !== undefined) await github.rest.checks.update({ ...common, check_run_id: existingId });
  else await github.rest.checks.create({ ...common, name: CHECK_NAME, head_sha: target.headSha });
}
