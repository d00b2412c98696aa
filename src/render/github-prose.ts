/**
 * What the App writes to people on GitHub, apart from check runs (check-run.ts) and previews (preview.ts): replies
 * to `/cuda-check` comments, the compliance issue and its dashboard, the migration pull request's body, the fix
 * commit's message, and the notes and failures a check run carries. Pure: data in, Markdown out; the App speaks of
 * itself in the third person.
 */
import type { Finding, Report } from '../finding.js';

/** `- `path:line` message (rule)`, the way each list of findings is written. */
function findingLine(finding: Finding): string {
  return `\`${finding.location.path}:${finding.location.start.line}\` ${finding.message} (${finding.ruleId})`;
}

function bullets(items: readonly string[]): string {
  return items.map((item) => `- ${item}`).join('\n');
}

// Replies to `/cuda-check` commands.

export function noSuchRule(ruleId: string, ruleIds: Iterable<string>): string {
  return `There is no rule \`${ruleId}\`. Rules: ${[...ruleIds]
    .sort()
    .map((id) => `\`${id}\``)
    .join(', ')}.`;
}

/** A rule's README without its generated examples (`npm run docs` writes them under `## Examples`). */
export function ruleExplanation(ruleId: string, readme: string): string {
  const withoutExamples = readme.split('\n## Examples')[0]!.trim();
  return `${withoutExamples.replace(/^# /, '### ')}\n\nExamples: \`rules/${ruleId}/README.md\` in cuda-gatekeeper.`;
}

export function orgBaselineUnreadable(reason: string): string {
  return `The organisation baseline could not be read: ${reason}.`;
}

/** Why the safe fixes were not committed for a person, or that they were. */
export const fixReplies = {
  noWriteAccess: (sender: string, repository: string) =>
    `Sorry @${sender}, only people with write access to ${repository} can ask cuda-gatekeeper to commit fixes. The review suggestions can still be applied by the author.`,
  closed: (state: string) =>
    `This pull request is ${state.toLowerCase()}, so there is no branch to commit the fixes to. Open a new pull request with them instead.`,
  fork: (headRepo: string) =>
    `This pull request comes from the fork ${headRepo}. The app can commit only to repositories it is installed on, so it cannot push the fixes there. Apply the review suggestions with **Commit suggestion**, or run \`cuda-gatekeeper check --fix\` locally and push.`,
  readOnly: () =>
    'This installation may read contents but not write them, so cuda-gatekeeper cannot commit the fixes. Apply the review suggestions with **Commit suggestion**, or give the App the **Contents: Read and write** repository permission (its settings, Permissions & events) and accept it on the installation.',
  nothingToFix: () => 'There are no safe fixes to apply on this pull request.',
  committed: (titles: readonly string[], branch: string, oid: string) =>
    `Committed ${titles.length} safe fix${titles.length === 1 ? '' : 'es'} to \`${branch}\` (${oid.slice(0, 7)}):\n\n${bullets(titles)}`,
  failed: (why: string) =>
    `cuda-gatekeeper could not commit the fixes: ${why} If the branch moved, run the check again first.`,
};

/** Replies to `/cuda-check upgrade`. */
export const upgradeReplies = {
  noWriteAccess: (sender: string, repository: string) =>
    `Sorry @${sender}, only people with write access to ${repository} can ask cuda-gatekeeper to open an upgrade pull request. \`/cuda-check plan <cuda>\` on a pull request shows the same plan to anyone.`,
  readOnly: () =>
    'This installation may read contents but not write them, so cuda-gatekeeper cannot push an upgrade branch. Give the App the **Contents: Read and write** repository permission (its settings, Permissions & events) and accept it on the installation, or run `cuda-gatekeeper plan --cuda <X.Y> --write` locally.',
  refused: (cuda: string, reason: string) => `No upgrade to CUDA ${cuda}: ${reason}.`,
  nothingToMove: (plan: string) => `Nothing on the default branch moves; here is the plan as it stands:\n\n${plan}`,
  done: (action: 'opened' | 'updated', number: number, draft: boolean) =>
    `${action === 'opened' ? 'Opened' : 'Updated'} #${number}${draft ? ' as a draft: something could not move, or a lock file must be regenerated (its body says what)' : ''}. Its check runs like on any pull request.`,
  failed: (why: string) => `cuda-gatekeeper could not open the upgrade pull request: ${why}`,
};

/** The commit that applies the safe fixes: its headline and its body (one line per fix). */
export function fixCommitMessage(titles: readonly string[]): { readonly headline: string; readonly body: string } {
  return { headline: 'Apply cuda-gatekeeper safe fixes', body: bullets(titles) };
}

// Notes and failures of a pull request's check run.

export function orgBaselineUnavailable(location: string, reason: string): string {
  return `The organisation baseline (\`${location}\`) could not be read: ${reason}. The organisation's policy may forbid what this pull request changes, so nothing is judged without it. If the organisation restricts access (SAML single sign-on, an IP allow list), allow the app there.`;
}

/** `since`: an ISO time. */
export function rateLimitNote(since: string): string {
  return `GitHub's rate limit held this check back: it was asked for at ${since.replace('T', ' ').slice(0, 16)} UTC and ran as soon as GitHub allowed.`;
}

// The drift sweep's compliance issue and dashboard.

/** The findings a compliance issue lists: errors and warnings, the first 30. */
export function complianceFindings(report: Report): string {
  const lines = report.findings
    .filter((finding) => finding.severity !== 'notice')
    .slice(0, 30)
    .map((finding) => `**${finding.severity}** ${findingLine(finding)}`);
  const more = report.findings.length > lines.length ? `\n- … ${report.findings.length - lines.length} more` : '';
  return bullets(lines) + more;
}

export function complianceIssueBody(report: Report, today: string): string {
  const { error, warning } = report.counts;
  return error + warning === 0
    ? `The default branch conforms to the organisation's CUDA baseline (checked ${today}).`
    : `The default branch does not conform to the organisation's CUDA baseline (checked ${today}): ${error} errors, ${warning} warnings.\n\n${complianceFindings(report)}`;
}

export function complianceDashboard(
  rows: readonly { readonly repo: string; readonly url: string; readonly errors: number; readonly warnings: number }[],
  today: string,
): string {
  const table = [
    '| repository | errors | warnings |',
    '|---|---:|---:|',
    ...rows.map((row) => `| [${row.repo}](${row.url}) | ${row.errors} | ${row.warnings} |`),
  ].join('\n');
  const failing = rows.filter((row) => row.errors > 0).length;
  return `CUDA compliance of ${rows.length} repositories on ${today}: ${failing} with errors.\n\n${table}`;
}

/** The migration pull request's body, after its marker: the fixes it applies and the errors they answer. */
export function migrationBody(report: Report, titles: readonly string[], baselineOrigin: string): string {
  const reasons = report.findings.filter((finding) => finding.severity === 'error').map(findingLine);
  return `The organisation's CUDA baseline changed (${baselineOrigin}) and this repository's default branch no longer conforms.

### Fixes in this pull request
${bullets(titles)}

### Why
${bullets(reasons)}

This branch is maintained by cuda-gatekeeper and updated when the baseline changes again; findings without a safe fix need a person.`;
}
