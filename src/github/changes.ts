/**
 * What a pull request changes at exactly the commit being judged. GitHub gives three views, each with a limit:
 *
 * - "List pull requests files" is the pull request's *current* head, at most 3,000 files ("Responses include a
 *   maximum of 3000 files", REST reference). Each entry's `contents_url` names the commit it was computed at, so a
 *   list of another commit (a push landed while this check was queued, or between two of its pages) is seen at no
 *   extra cost.
 * - "Compare two commits" (`base...head`) is the diff of one exact pair, from their merge base, with "up to 300
 *   changed files for the entire comparison" (REST reference, commits#compare-two-commits).
 * - The recursive trees of head and merge base, compared by blob SHA, see every path up to "100,000 entries with a
 *   maximum size of 7 MB"; past that the answer is `truncated` (REST reference, git/trees#get-a-tree).
 *
 * The first answers the common pull request in one request; the others only when it cannot be trusted. When none
 * can list every change, the result says which limit was hit: the check then counts its files as not seen.
 */
import type { ChangedFile } from './types.js';
import type { GitHub, PullTarget } from './types.js';

/** What "List pull requests files" returns at most (REST reference). */
export const MAX_LISTED_FILES = 3000;
/** What "Compare two commits" returns at most. */
export const MAX_COMPARED_FILES = 300;

export interface PullChanges {
  readonly files: readonly ChangedFile[];
  /** Which view the files come from. */
  readonly source: 'list' | 'compare' | 'trees';
  /** Set when some changed paths may be missing from `files`: which limit was hit. */
  readonly incomplete?: string;
  /** Requests made. */
  readonly requests: number;
}

interface DiffEntry extends ChangedFile {
  readonly contents_url?: string;
}

/** The commit a listed file was computed at (`…/contents/<path>?ref=<sha>`), if the entry says. */
function refOf(entry: DiffEntry): string | undefined {
  const url = entry.contents_url;
  if (!url) return undefined;
  try {
    return new URL(url).searchParams.get('ref') ?? undefined;
  } catch {
    return undefined;
  }
}

/** Whether every entry that can say so was computed at `headSha` (removed files name no head commit). */
function listedAt(entries: readonly DiffEntry[], headSha: string): 'yes' | 'no' | 'unknown' {
  let seen = false;
  for (const entry of entries) {
    if (entry.status === 'removed') continue;
    const ref = refOf(entry);
    if (ref === undefined) continue;
    if (ref.toLowerCase() !== headSha.toLowerCase()) return 'no';
    seen = true;
  }
  return seen ? 'yes' : 'unknown';
}

/** The changes of `target`'s base...head pair, from the cheapest view GitHub can answer completely. */
export async function readChanges(github: GitHub, target: PullTarget): Promise<PullChanges> {
  const repo = { owner: target.owner, repo: target.repo };
  // A merge queue's commit has no pull request: its changes are the exact pair, from the base it was built on.
  if (target.queue)
    return compared(github, target, target.baseSha ?? target.queue.baseRef, { listed: [], at: 'no', requests: 0 });
  // 1. The pull request's file list: the whole answer when it is of this commit and not cut at 3,000.
  const listed = (await github.paginate(github.rest.pulls.listFiles, {
    ...repo,
    pull_number: target.number,
    per_page: 100,
  })) as DiffEntry[];
  const listRequests = Math.max(1, Math.ceil(listed.length / 100));
  // The payload's count says whether the list was cut; without it, a list of 3,000 may have been.
  const capped =
    target.changedFiles !== undefined ? target.changedFiles > listed.length : listed.length >= MAX_LISTED_FILES;
  const at = listedAt(listed, target.headSha);
  if (at === 'yes' && !capped) return { files: listed, source: 'list', requests: listRequests };
  if (listed.length === 0 && target.changedFiles === 0)
    return { files: listed, source: 'list', requests: listRequests };
  if (!target.baseSha) {
    // Without the base commit no other view can be asked for: the list is all there is.
    const why =
      at === 'no'
        ? 'the pull request moved on while it was being checked, and its base commit is unknown'
        : `GitHub lists at most ${MAX_LISTED_FILES.toLocaleString('en-US')} changed files`;
    return { files: at === 'no' ? [] : listed, source: 'list', incomplete: why, requests: listRequests };
  }

  return compared(github, target, target.baseSha, { listed, at, requests: listRequests });
}

/** What the list gave, for the views after it. */
interface Listed {
  readonly listed: readonly DiffEntry[];
  readonly at: 'yes' | 'no' | 'unknown';
  readonly requests: number;
}

/** Steps 2 and 3: the exact pair `base...head`, then the trees where the pair is cut at 300 files. */
async function compared(github: GitHub, target: PullTarget, from: string, listing: Listed): Promise<PullChanges> {
  const repo = { owner: target.owner, repo: target.repo };
  const { listed, at, requests: listRequests } = listing;
  // 2. The exact pair: compare base...head (merge base to head), complete below 300 files.
  const compared = await github.rest.repos.compareCommitsWithBasehead({
    ...repo,
    basehead: `${from}...${target.headSha}`,
    per_page: 1,
  });
  const files = (compared.data.files ?? []) as ChangedFile[];
  if (files.length < MAX_COMPARED_FILES) return { files, source: 'compare', requests: listRequests + 1 };

  // 3. Every path of head against the merge base, by blob SHA.
  const mergeBase = compared.data.merge_base_commit.sha;
  const [head, base] = await Promise.all([
    github.rest.git.getTree({ ...repo, tree_sha: target.headSha, recursive: 'true' }),
    github.rest.git.getTree({ ...repo, tree_sha: mergeBase, recursive: 'true' }),
  ]);
  const requests = listRequests + 3;
  const blobs = (tree: typeof head.data) =>
    new Map(
      tree.tree
        .filter((entry) => entry.type === 'blob' && entry.path && entry.sha)
        .map((entry) => [entry.path!, entry.sha!]),
    );
  const after = blobs(head.data);
  const before = blobs(base.data);
  const changed: ChangedFile[] = [];
  for (const [path, sha] of after) {
    const old = before.get(path);
    if (old !== sha) changed.push({ filename: path, status: old === undefined ? 'added' : 'modified' });
  }
  for (const path of before.keys()) if (!after.has(path)) changed.push({ filename: path, status: 'removed' });
  // The patches of listed files are kept where the list was of this commit (review suggestions need them).
  if (at === 'yes') {
    const patches = new Map(listed.filter((entry) => entry.patch).map((entry) => [entry.filename, entry.patch!]));
    for (let i = 0; i < changed.length; i++) {
      const patch = patches.get(changed[i]!.filename);
      if (patch) changed[i] = { ...changed[i]!, patch };
    }
  }
  if (head.data.truncated || base.data.truncated) {
    const which = head.data.truncated ? 'head commit' : 'merge base';
    return {
      files: changed,
      source: 'trees',
      incomplete: `GitHub lists at most ${MAX_LISTED_FILES.toLocaleString('en-US')} changed files and the ${which}'s tree is larger than GitHub lists (100,000 entries or 7 MB: the answer was truncated)`,
      requests,
    };
  }
  return { files: changed, source: 'trees', requests };
}
