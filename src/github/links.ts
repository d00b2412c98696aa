/**
 * Symbolic links, read as `docker build`, `pip install -r` and the CLI read them: through to their target.
 *
 * Git stores a link as a blob whose content is the target's path, with tree mode 120000 ("Get a tree": mode "120000
 * for a blob that specifies the path of a symlink", REST reference, git/trees#get-a-tree). GraphQL's
 * `object(expression: "<commit>:<path>")` answers that blob like any other, so a `requirements.txt` turned into a
 * link to `constraints/cu118.txt` reads as the text `constraints/cu118.txt`, which judges as an empty file and
 * passes. A link's content never ends with a newline, so only a blob of one line without one can be a link: those
 * are asked for their mode (`Commit.file(path:)`'s TreeEntry.mode, one request for all of a read), and a link is
 * replaced by its target, read at the same commit, relative to the link's folder. A target outside the repository,
 * a target that is not there, or a chain of more than MAX_HOPS links is not read: the file counts as not checked,
 * with the reason. Nothing is asked when no blob could be a link.
 */
import { posix } from 'node:path';
import { partialQuery } from './graphql.js';
import { readBlobs, type Blob, type BlobAnswer } from './read.js';
import type { GitHub, RepoRef } from './types.js';

/** Git's tree modes, as GraphQL's TreeEntry.mode gives them (an Int). */
export const LINK_MODE = 0o120000;
export const SUBMODULE_MODE = 0o160000;

/** Links followed from one path before giving up (a loop, or a chain nobody meant). */
export const MAX_HOPS = 8;

/** The longest link content asked about (Linux's PATH_MAX is 4096). */
const MAX_TARGET = 4096;

/** A blob that could be a link: text of one line, without a newline. */
function mayBeLink(answer: BlobAnswer | undefined): answer is Blob & { readonly text: string } {
  return (
    answer !== null &&
    answer !== undefined &&
    !('unreadable' in answer) &&
    typeof answer.text === 'string' &&
    answer.text.length > 0 &&
    answer.byteSize <= MAX_TARGET &&
    !answer.text.includes('\n')
  );
}

/** The target of a link at `path` whose content is `text`; undefined when it leaves the repository. */
export function linkTarget(path: string, text: string): string | undefined {
  if (text.startsWith('/')) return undefined;
  const joined = posix.normalize(posix.join(posix.dirname(path), text));
  if (joined === '..' || joined.startsWith('../') || joined === '.' || joined === '') return undefined;
  return joined;
}

/** The modes of `paths` at `revision`, in one request (null: no entry there). */
async function modes(
  github: GitHub,
  repo: RepoRef,
  revision: string,
  paths: readonly string[],
): Promise<Map<string, number | null>> {
  const fields = paths.map((path, i) => `m${i}: file(path: ${JSON.stringify(path)}) { mode }`).join(' ');
  const query = `query CudaGatekeeperModes($owner: String!, $name: String!) {
  repository(owner: $owner, name: $name) { commit: object(expression: ${JSON.stringify(revision)}) { ... on Commit { ${fields} } } }
}`;
  const { data } = await partialQuery<{
    repository: { commit: Record<string, { mode: number } | null> | null } | null;
  }>(github, query, { owner: repo.owner, name: repo.repo });
  const commit = data.repository?.commit;
  return new Map(paths.map((path, i) => [path, commit?.[`m${i}`]?.mode ?? null]));
}

/**
 * `blobs` with every symbolic link among them replaced by its target's blob (or why it is not read); the requests
 * made. The map given is not changed.
 */
export async function followLinks(
  github: GitHub,
  repo: RepoRef,
  revision: string,
  blobs: ReadonlyMap<string, BlobAnswer>,
): Promise<{ readonly blobs: Map<string, BlobAnswer>; readonly requests: number }> {
  const out = new Map(blobs);
  let requests = 0;
  // Each path being resolved, and where its chain stands now.
  let pending = new Map(
    [...blobs].filter(([, answer]) => mayBeLink(answer)).map(([path, answer]) => [path, { at: path, answer }]),
  );
  for (let hop = 0; pending.size > 0; hop++) {
    const asked = [...new Set([...pending.values()].map((chain) => chain.at))];
    const found = await modes(github, repo, revision, asked);
    requests++;
    const targets = new Map<string, string>();
    for (const [path, chain] of pending) {
      if (found.get(chain.at) !== LINK_MODE) {
        // Not a link: the file as read (a link's target that is a regular file ends its chain here too).
        if (chain.at !== path) out.set(path, chain.answer);
        pending.delete(path);
        continue;
      }
      const text = (chain.answer as Blob).text ?? '';
      const target = linkTarget(chain.at, text);
      if (!target) {
        out.set(path, { unreadable: `a symbolic link to \`${text}\`, outside the repository: not followed` });
        pending.delete(path);
      } else if (hop >= MAX_HOPS) {
        out.set(path, { unreadable: `a chain of more than ${MAX_HOPS} symbolic links: not followed` });
        pending.delete(path);
      } else targets.set(path, target);
    }
    if (targets.size === 0) break;
    const read = await readBlobs(github, repo, [...new Set(targets.values())], revision);
    requests++;
    const next = new Map<string, { at: string; answer: BlobAnswer }>();
    for (const [path, target] of targets) {
      const answer = read.get(target) ?? null;
      if (answer === null) out.set(path, { unreadable: `a symbolic link to \`${target}\`, which is not there` });
      else if (mayBeLink(answer)) next.set(path, { at: target, answer });
      else out.set(path, answer);
    }
    pending = next;
  }
  return { blobs: out, requests };
}
