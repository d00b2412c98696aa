/**
 * Which CUDA-relevant paths each repository's default branch has, so an organisation preview reads only the
 * repositories that have such files, without listing every repository's tree.
 *
 * An entry is built from a whole tree (repository.ts), for one commit, and moved forward by the pushes to the
 * default branch: the App receives every push of every installed repository. It is a superset: every relevant
 * path the commit has is in it, and a path in it may no longer exist (a read finds no file there and says so,
 * as GitHub answers `null` for an expression that names nothing). An entry is used only for the very commit it
 * names, by the build of the App that wrote it, and for at most MAX_AGE_MS after its tree was read; anything else
 * reads the tree again. Kept in memory, or in Redis (REDIS_URL) so every replica and restart shares it.
 */
import { Redis } from 'ioredis';
import { candidatePath } from '../parsers/index.js';
import { packageVersion } from '../util/package-root.js';
import type { Logger } from './types.js';

export interface PathEntry {
  /** The default branch's commit the paths are for. */
  readonly sha: string;
  /** Every CUDA-relevant path of that commit (and perhaps some it no longer has). */
  readonly paths: readonly string[];
  /** When the tree these paths come from was read (ms since the epoch). */
  readonly builtAt: number;
  /** The App's version that classified them (another version may count other files as relevant). */
  readonly version: string;
}

/** What one push to a default branch says: the commits before and after, and the relevant paths it touched. */
export interface BranchPush {
  readonly before: string;
  readonly after: string;
  /** Undefined when the push does not list every change (forced, more than GitHub lists, a new branch). */
  readonly touched?: readonly string[];
}

export interface PathIndex {
  get(repo: string): Promise<PathEntry | undefined>;
  put(repo: string, entry: PathEntry): Promise<void>;
  /** Move an entry forward over a push, or forget it when the push does not follow from it. */
  pushed(repo: string, push: BranchPush): Promise<void>;
}

/** An entry's tree is read again after this long, whatever the pushes said (a bound on any change they missed). */
export const MAX_AGE_MS = 7 * 24 * 3600 * 1000;

/**
 * GitHub lists at most this many commits in a push event
 * (docs.github.com/en/webhooks/webhook-events-and-payloads#push).
 */
export const PUSH_COMMITS_LISTED = 2048;

const ZERO_SHA = /^0+$/;
/**
 * Entries hold every candidate path (named, and YAML files whose content decides, from the second format on): an
 * entry of another App version or format is read again.
 */
const FORMAT = 'paths-2';
const version = (() => {
  let cached: string | undefined;
  return () => (cached ??= `${packageVersion()}+${FORMAT}`);
})();

/** The key an entry is stored under: owner and name, as GitHub compares them (case-insensitively). */
export const indexKey = (owner: string, repo: string): string => `${owner}/${repo}`.toLowerCase();

/** A new entry for a commit whose whole tree was read. */
export function entryFromTree(sha: string, paths: readonly string[], now = Date.now()): PathEntry {
  return { sha, paths: [...paths], builtAt: now, version: version() };
}

/** The entry's paths when it can stand for `sha` now; undefined when the tree must be read. */
export function usablePaths(
  entry: PathEntry | undefined,
  sha: string,
  now = Date.now(),
): readonly string[] | undefined {
  if (
    !entry ||
    entry.sha !== sha ||
    entry.version !== version() ||
    now - entry.builtAt >= MAX_AGE_MS ||
    now < entry.builtAt
  )
    return undefined;
  return entry.paths;
}

interface PushPayload {
  readonly ref: string;
  readonly before: string;
  readonly after: string;
  readonly created?: boolean;
  readonly deleted?: boolean;
  readonly forced?: boolean;
  readonly repository: {
    readonly name: string;
    readonly default_branch?: string;
    readonly owner?: { readonly login?: string } | null;
  };
  readonly commits?: readonly {
    readonly added?: readonly string[];
    readonly modified?: readonly string[];
    readonly removed?: readonly string[];
  }[];
}

/**
 * The index's view of a push event: only pushes to the default branch count. GitHub's push payload lists "all
 * commits included in the compare between the before commit and the after commit", each with its added, removed
 * and modified files, and "a maximum of 2048 commits" (webhook-events-and-payloads#push). A forced push's compare
 * leaves out the commits it dropped, a new or deleted branch has no before (or after) commit, and a full list may
 * have been cut: each of these lists not every change, so the entry is forgotten.
 */
export function branchPush(payload: PushPayload): { readonly repo: string; readonly push: BranchPush } | undefined {
  const { repository } = payload;
  const owner = repository.owner?.login;
  if (!owner || !repository.default_branch || payload.ref !== `refs/heads/${repository.default_branch}`)
    return undefined;
  const commits = payload.commits ?? [];
  const complete =
    !payload.forced &&
    !payload.created &&
    !payload.deleted &&
    !ZERO_SHA.test(payload.before) &&
    !ZERO_SHA.test(payload.after) &&
    commits.length > 0 &&
    commits.length < PUSH_COMMITS_LISTED;
  const push: BranchPush = { before: payload.before, after: payload.after };
  if (!complete) return { repo: indexKey(owner, repository.name), push };
  const touched = new Set<string>();
  for (const commit of commits)
    for (const path of [...(commit.added ?? []), ...(commit.modified ?? []), ...(commit.removed ?? [])])
      if (candidatePath(path)) touched.add(path);
  return { repo: indexKey(owner, repository.name), push: { ...push, touched: [...touched] } };
}

/**
 * The entry after a push: moved forward with the touched paths added, or undefined (forget it). An entry already
 * at the pushed commit (a redelivered push, or a tree read after it) stays as it is: it describes that commit.
 */
export function afterPush(entry: PathEntry, push: BranchPush): PathEntry | undefined {
  if (entry.sha === push.after) return entry;
  if (!push.touched || entry.sha !== push.before) return undefined;
  const paths = new Set(entry.paths);
  for (const path of push.touched) paths.add(path);
  return { ...entry, sha: push.after, paths: [...paths] };
}

/** The index in this process's memory, at most `limit` repositories (the least recently used are forgotten first). */
export class MemoryPathIndex implements PathIndex {
  private readonly entries = new Map<string, PathEntry>();

  constructor(private readonly limit = 100_000) {}

  async get(repo: string): Promise<PathEntry | undefined> {
    const entry = this.entries.get(repo);
    if (entry) {
      this.entries.delete(repo);
      this.entries.set(repo, entry);
    }
    return entry;
  }

  async put(repo: string, entry: PathEntry): Promise<void> {
    this.entries.delete(repo);
    this.entries.set(repo, entry);
    while (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value!);
  }

  async pushed(repo: string, push: BranchPush): Promise<void> {
    const entry = this.entries.get(repo);
    if (!entry) return;
    const next = afterPush(entry, push);
    if (next) this.entries.set(repo, next);
    else this.entries.delete(repo);
  }
}

/** Paths are stored joined by NUL, which no Git path contains. */
const SEPARATOR = '\0';

/**
 * The push as one script, so two replicas handling pushes of one repository cannot interleave a read and a write
 * (Redis runs a script atomically: redis.io/docs/latest/develop/interact/programmability/eval-intro). KEYS[1]: the
 * entry (a hash: sha, paths, builtAt, version); ARGV: before, after, complete ("1"/"0"), the touched paths.
 */
const PUSH_SCRIPT = `
local sha = redis.call('HGET', KEYS[1], 'sha')
if not sha then return 0 end
if sha == ARGV[2] then return 2 end
if ARGV[3] ~= '1' or sha ~= ARGV[1] then redis.call('DEL', KEYS[1]) return -1 end
local paths = redis.call('HGET', KEYS[1], 'paths') or ''
local seen = {}
for path in string.gmatch(paths, '[^%z]+') do seen[path] = true end
for path in string.gmatch(ARGV[4], '[^%z]+') do
  if not seen[path] then
    seen[path] = true
    if paths == '' then paths = path else paths = paths .. '\\0' .. path end
  end
end
redis.call('HSET', KEYS[1], 'sha', ARGV[2], 'paths', paths)
return 1
`;

/**
 * The index in Redis: one hash per repository under `cuda-gatekeeper:paths:`, expiring MAX_AGE_MS after its tree
 * was read (a push keeps the expiry: HSET leaves a key's time to live alone). When Redis cannot answer, a read
 * finds no entry (the tree is read, as without an index) and a write is dropped (the entry then no longer matches
 * the branch, and is not used): the index can cost calls, never a wrong answer.
 */
export class RedisPathIndex implements PathIndex {
  private readonly redis: Redis;
  private failing = false;

  constructor(
    url: string,
    private readonly log?: Logger,
    private readonly prefix = 'cuda-gatekeeper:paths:',
  ) {
    // A command waits for a connection while ioredis reconnects once, and for an answer at most 2 s: the index is
    // worth a tree read, not a stalled preview.
    this.redis = new Redis(url, { maxRetriesPerRequest: 1, commandTimeout: 2000 });
    this.redis.on('error', () => undefined);
  }

  private async attempt<T>(what: string, work: () => Promise<T>, otherwise: T): Promise<T> {
    try {
      const result = await work();
      if (this.failing) this.log?.info({ redis: 'paths' }, 'the path index is reachable again');
      this.failing = false;
      return result;
    } catch (error) {
      if (!this.failing)
        this.log?.warn(
          { redis: 'paths', err: { message: (error as Error).message } },
          `the path index could not ${what}; trees are read instead`,
        );
      this.failing = true;
      return otherwise;
    }
  }

  get(repo: string): Promise<PathEntry | undefined> {
    return this.attempt(
      'be read',
      async () => {
        const hash = await this.redis.hgetall(this.prefix + repo);
        if (!hash.sha || hash.paths === undefined || !hash.builtAt || !hash.version) return undefined;
        return {
          sha: hash.sha,
          paths: hash.paths ? hash.paths.split(SEPARATOR) : [],
          builtAt: Number(hash.builtAt),
          version: hash.version,
        };
      },
      undefined,
    );
  }

  put(repo: string, entry: PathEntry): Promise<void> {
    const key = this.prefix + repo;
    const ttl = Math.max(1, entry.builtAt + MAX_AGE_MS - Date.now());
    return this.attempt(
      'be written',
      async () => {
        const results = await this.redis
          .multi()
          .del(key)
          .hset(key, {
            sha: entry.sha,
            paths: entry.paths.join(SEPARATOR),
            builtAt: String(entry.builtAt),
            version: entry.version,
          })
          .pexpire(key, ttl)
          .exec();
        const failed = results?.find(([error]) => error)?.[0];
        if (failed) throw failed;
      },
      undefined,
    );
  }

  pushed(repo: string, push: BranchPush): Promise<void> {
    return this.attempt(
      'be moved forward',
      async () => {
        await this.redis.eval(
          PUSH_SCRIPT,
          1,
          this.prefix + repo,
          push.before,
          push.after,
          push.touched ? '1' : '0',
          (push.touched ?? []).join(SEPARATOR),
        );
      },
      undefined,
    );
  }

  close(): void {
    this.redis.disconnect();
  }
}
