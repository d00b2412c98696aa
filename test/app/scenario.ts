/** Builds a repository, a pull request and the matching webhook payload on a FakeGitHub. */
import type { FakeGitHub, FakeFile } from '../support/fake-github.js';
import { example } from '../support/probot.js';

export const OWNER = 'octo-org';
export const REPO = 'trainer';
export const FULL = `${OWNER}/${REPO}`;

export interface Scenario {
  readonly headSha: string;
  readonly number: number;
  readonly payload: Record<string, unknown>;
}

/** Unified diff that adds every line of `text` (what GitHub returns for a new file). */
export function addedPatch(text: string): string {
  const lines = text.replace(/\n$/, '').split('\n');
  return `@@ -0,0 +1,${lines.length} @@\n${lines.map((line) => `+${line}`).join('\n')}`;
}

export function pullScenario(fake: FakeGitHub, options: { main?: Record<string, string>; head: Record<string, string>; changed: readonly string[]; number?: number; fork?: string; removed?: readonly string[]; org?: Record<string, string> }): Scenario {
  const main = options.main ?? {};
  if (!fake.repos.has(FULL)) fake.addRepo(FULL, main);
  if (options.org && !fake.repos.has(`${OWNER}/.github`)) fake.addRepo(`${OWNER}/.github`, options.org);
  const headSha = fake.commit({ ...main, ...options.head });
  const number = options.number ?? 7;
  const files: FakeFile[] = [
    ...options.changed.map((filename) => ({ filename, status: filename in main ? ('modified' as const) : ('added' as const), patch: addedPatch(options.head[filename] ?? '') })),
    ...(options.removed ?? []).map((filename) => ({ filename, status: 'removed' as const })),
  ];
  fake.addPull(FULL, { number, headSha, headRef: 'cuda-upgrade', headRepo: options.fork ?? FULL, files });
  const payload = example('pull_request', 'opened');
  const repository = payload.repository as Record<string, unknown>;
  Object.assign(repository, { name: REPO, full_name: FULL, default_branch: 'main' });
  Object.assign(repository.owner as object, { login: OWNER });
  const pr = payload.pull_request as Record<string, unknown>;
  Object.assign(pr, { number });
  Object.assign(pr.head as object, { sha: headSha, ref: 'cuda-upgrade', repo: { ...(((pr.head as Record<string, unknown>).repo as object) ?? {}), full_name: options.fork ?? FULL } });
  Object.assign(payload, { number });
  Object.assign(payload.installation as object, { id: 42 });
  return { headSha, number, payload };
}
