/**
 * Sending check runs, by one model (README, "Check runs"):
 *
 * - A run is created `completed`, never `queued` or `in_progress`, so no run is ever left in progress when a
 *   process dies. Its first 50 annotations go with the create; the rest follow in updates of 50, each annotation
 *   sent once (GitHub appends the annotations of every update to the run: docs.github.com/en/rest/checks/runs,
 *   "Update a check run", `output.annotations`).
 * - A run's `external_id` names its pull request and a digest of its verdict. A check caused by an event
 *   (`pull_request`, `check_suite.requested`, a baseline merge) whose verdict equals the newest run's on the
 *   commit writes nothing: `synchronize` and `check_suite.requested` for one push give one run. A different
 *   verdict gets a new run, because annotations already on a run cannot be taken back.
 * - A check a person asked for (Re-run, Re-run all checks, `/cuda-check`) always gets a new run, as GitHub's
 *   Checks API tutorial does on `rerequested` (docs.github.com/en/apps/creating-github-apps/writing-code-for-a-
 *   github-app/building-ci-checks-with-a-github-app). GitHub shows the newest run of a name on the commit.
 */
import { createHash } from 'node:crypto';
import { batches, CHECK_NAME, type CheckOutput } from '../render/check-run.js';
import type { ExistingRun } from './read.js';
import type { GitHub, PullTarget } from './types.js';

export const APPLY_FIXES = 'apply_fixes';

/** Why a check runs: an event GitHub sent on its own, or a person asking for it. */
export type Trigger = 'event' | 'request';

const EXTERNAL_ID = /^cuda-gatekeeper:pr=(\d+):(verdict|failed)=([0-9a-f]{16})$/;

/**
 * The external_id of a run: its pull request (check_run payloads of forks list none) and its digest, as a
 * `verdict` (the files were judged) or `failed` (the check could not run: it must never replace a verdict).
 */
export function externalId(pull: number, verdict: string, kind: 'verdict' | 'failed' = 'verdict'): string {
  return `cuda-gatekeeper:pr=${pull}:${kind}=${verdict}`;
}

export function parseExternalId(text: string | null | undefined): {
  readonly pull?: number;
  readonly verdict?: string;
  readonly failed?: boolean;
} {
  const match = EXTERNAL_ID.exec(text ?? '');
  return match ? { pull: Number(match[1]), verdict: match[3]!, failed: match[2] === 'failed' } : {};
}

/** Whether a run of ours holds a verdict (it judged the files), not a "could not check". */
export function holdsVerdict(run: ExistingRun | undefined): boolean {
  const parsed = parseExternalId(run?.externalId);
  return parsed.verdict !== undefined && !parsed.failed;
}

/**
 * What a run says (its verdict data, CheckOutput.verdict, and whether it offers Apply fixes): equal digests, equal
 * runs.
 */
export function verdictOf(output: CheckOutput, actions: boolean): string {
  const stable = JSON.stringify([output.conclusion, output.verdict, actions]);
  return createHash('sha256').update(stable).digest('hex').slice(0, 16);
}

export interface Sent {
  /** The run that shows the verdict: the new one, or the newest one when nothing was written. */
  readonly id: number;
  readonly externalId: string | null;
  readonly posted: boolean;
}

export interface SendOptions {
  readonly existing?: ExistingRun;
  readonly trigger: Trigger;
  /** Offer the Apply fixes button (safe fixes exist and the branch can receive a commit). */
  readonly applyFixes: boolean;
  /** The run says the check could not run (never posted over a verdict: see pull-check.ts). */
  readonly failed?: boolean;
}

/** Post the verdict for a pull request's head commit, following the model above. */
export async function sendCheck(
  github: GitHub,
  target: PullTarget,
  output: CheckOutput,
  options: SendOptions,
): Promise<Sent> {
  const verdict = verdictOf(output, options.applyFixes);
  if (
    options.trigger === 'event' &&
    options.existing &&
    parseExternalId(options.existing.externalId).verdict === verdict
  )
    return { ...options.existing, posted: false };
  const identity = externalId(target.number, verdict, options.failed ? 'failed' : 'verdict');
  const [first = [], ...rest] = batches(output.annotations);
  const created = await github.rest.checks.create({
    owner: target.owner,
    repo: target.repo,
    name: CHECK_NAME,
    head_sha: target.headSha,
    external_id: identity,
    status: 'completed',
    conclusion: output.conclusion,
    completed_at: new Date().toISOString(),
    output: {
      title: output.title,
      summary: output.summary,
      ...(output.text ? { text: output.text } : {}),
      annotations: first,
    },
    ...(options.applyFixes
      ? {
          actions: [
            { label: 'Apply fixes', identifier: APPLY_FIXES, description: 'Commit the safe fixes to this branch' },
          ],
        }
      : {}),
  });
  const id = created.data.id;
  for (const annotations of rest) {
    await github.rest.checks.update({
      owner: target.owner,
      repo: target.repo,
      check_run_id: id,
      output: { title: output.title, summary: output.summary, annotations },
    });
  }
  return { id, externalId: identity, posted: true };
}
