/**
 * Who and what may write. Two questions, one answer each:
 *
 * - What the installation was granted: the installation access token's response lists its `permissions` and
 *   `repository_selection` (REST reference, apps#create-an-installation-access-token-for-an-app). Octokit's app
 *   auth keeps that response with the cached token, so asking costs no request. Without `contents: write` no
 *   commit can be made ("Resource not accessible by integration"), so no Apply fixes button is offered.
 * - Whether a person may have the App write for them: every path that writes because someone asked (the Apply
 *   fixes button, `/cuda-check fix`) requires `write`, `maintain` or `admin` on the repository, read from
 *   "Get repository permissions for a user" (repos/get-collaborator-permission-level), once per delivery. The
 *   `sender` of a `check_run.requested_action` is whoever clicked, and GitHub does not check their access for us.
 */
import type { GitHub, RepoRef } from './types.js';

export interface Grants {
  /** The installation may write contents (commit fixes, open migration pull requests). */
  readonly contentsWrite: boolean;
  /** All repositories of the account, or only selected ones (the organisation's `.github` may be left out). */
  readonly selection: 'all' | 'selected' | 'unknown';
}

interface InstallationAuth {
  readonly permissions?: Readonly<Record<string, string>>;
  readonly repositorySelection?: string;
}

/** The installation's grants, from its (cached) access token. Unknown grants offer nothing that writes. */
export async function installationGrants(github: GitHub): Promise<Grants> {
  try {
    const auth =
      (await (github.auth as (options: { type: string }) => Promise<InstallationAuth>)({ type: 'installation' })) ?? {};
    const selection =
      auth.repositorySelection === 'all' || auth.repositorySelection === 'selected'
        ? auth.repositorySelection
        : 'unknown';
    return { contentsWrite: auth.permissions?.contents === 'write', selection };
  } catch {
    return { contentsWrite: false, selection: 'unknown' };
  }
}

/**
 * A new access token for the installation, now. A token keeps the permissions it was created with, so after an owner
 * accepts new ones (`installation.new_permissions_accepted`) or unsuspends the installation, Octokit's cached token
 * is stale: `refresh` makes @octokit/auth-app create one and replace the cached one (its README, "refresh").
 */
export async function renewToken(github: GitHub): Promise<void> {
  await (github.auth as (options: { type: string; refresh: boolean }) => Promise<unknown>)({
    type: 'installation',
    refresh: true,
  });
}

/**
 * The grants for a write a person asked for: when the cached token may not write, a new token is asked for once (the
 * owner may have accepted `contents: write` since, with the event sent to another replica).
 */
export async function grantsForWrite(github: GitHub): Promise<Grants> {
  const grants = await installationGrants(github);
  if (grants.contentsWrite) return grants;
  try {
    await renewToken(github);
  } catch {
    return grants;
  }
  return installationGrants(github);
}

const WRITERS = new Set(['admin', 'maintain', 'write']);

/** The permission rule for people, with the answers of one delivery remembered. */
export class WriteAccess {
  private readonly answers = new Map<string, Promise<boolean>>();

  constructor(private readonly github: GitHub) {}

  /** Whether `login` has write access (or more) to `repo`. A user GitHub does not know has none. */
  allows(repo: RepoRef, login: string): Promise<boolean> {
    const key = `${repo.owner}/${repo.repo}#${login}`.toLowerCase();
    let answer = this.answers.get(key);
    if (!answer) {
      answer = this.github.rest.repos
        .getCollaboratorPermissionLevel({ ...repo, username: login })
        .then((response) => WRITERS.has(response.data.permission) || WRITERS.has(response.data.role_name ?? ''))
        .catch((error: { status?: number }) => {
          if (error.status === 404) return false;
          throw error;
        });
      this.answers.set(key, answer);
    }
    return answer;
  }
}
