/**
 * The files of one commit on GitHub, read through the shared reader (src/reader.ts) exactly as the CLI reads a
 * checkout. GitHub is read in rounds: the reader runs over the blobs known so far, notes every path it needed
 * and did not have, and those are fetched in one request before it runs again. The last round has seen every
 * path it asked about, so an include leads to the same file it would lead to on disk.
 */
import { followLinks } from './links.js';
import { dirname } from '../analysis/paths.js';
import {
  maxBytes,
  MAX_FILE_BYTES,
  MAX_MANIFEST_BYTES,
  readRepository,
  sourceOf,
  type Listed,
  type ReadFile,
  type RepositoryReader,
  type SourceFile,
} from '../reader.js';
import type { FileKind } from '../parsers/facts.js';
import { isLfsPointer, kindByContent, type ParseOptions } from '../parsers/index.js';
import { READ_CHUNK, readBlobs, readBlobsAcross, readWholeBlob, type BlobAnswer } from './read.js';
import type { GitHub, RepoRef } from './types.js';
import { overLimit } from '../util/bytes.js';

/** Rounds of reads after the first: how long an include chain is followed beyond the files given. */
export const INCLUDE_ROUNDS = 4;

export interface Skipped {
  readonly path: string;
  readonly reason: string;
}

/** A RepositoryReader over blobs read from GitHub, remembering what it was asked and did not know. */
export class CommitFiles implements RepositoryReader {
  readonly blobs: Map<string, BlobAnswer>;
  readonly skipped = new Map<string, string>();
  private readonly wanted = new Set<string>();
  /** Lock files GraphQL gave in part or may have (over 1 MiB), to read whole through REST: path → blob SHA. */
  private readonly whole = new Map<string, string>();

  /**
   * `tree`: every file path of the commit, when its whole tree is known; a path outside it is no file, without a
   * read. `listing`: directories whose files are all known (the first read lists some); the same holds in them.
   */
  constructor(
    known: ReadonlyMap<string, BlobAnswer> = new Map(),
    private readonly tree?: ReadonlySet<string>,
    private readonly listing?: Listing,
    /**
     * YAML files listed without a kind for their content to decide (a Kubernetes manifest, a conda environment):
     * one that is neither is not a CUDA-relevant file, and is passed over without a word.
     */
    private readonly byContent: ReadonlySet<string> = new Set(),
  ) {
    this.blobs = new Map(known);
  }

  /** Known to be no file without a read: outside the whole tree, or unlisted in a directory listed in full. */
  private absent(path: string): boolean {
    if (this.tree) return !this.tree.has(path);
    return (
      this.listing !== undefined &&
      !this.blobs.has(path) &&
      this.listing.directories.has(dirname(path)) &&
      !this.listing.files.has(path)
    );
  }

  read(path: string, kind: FileKind | undefined): SourceFile | undefined {
    if (this.absent(path)) return undefined;
    const blob = this.blobs.get(path);
    if (blob === undefined) {
      this.wanted.add(path);
      return undefined;
    }
    if (blob === null) return undefined;
    // A YAML file its content decides may be a manifest: read as far as one may be long.
    const limit = kind === undefined && this.byContent.has(path) ? MAX_MANIFEST_BYTES : maxBytes(path, kind);
    // GitHub calls a UTF-16 file binary (it has zero bytes) and gives no text: its bytes, read whole, tell by their
    // byte-order mark (readWholeBlob). Only a file its name says is one (a requirements file a Windows editor saved),
    // of an even size, costs that read; a binary YAML file stays binary.
    if (
      !('unreadable' in blob) &&
      blob.byteSize <= limit &&
      !blob.whole &&
      (blob.isBinary
        ? kind !== undefined && blob.byteSize >= 2 && blob.byteSize % 2 === 0
        : blob.isTruncated || blob.byteSize > MAX_FILE_BYTES)
    ) {
      if (blob.oid) this.whole.set(path, blob.oid);
      else this.skipped.set(path, 'GitHub gave only part of it');
      return undefined;
    }
    const reason = unreadable(blob, limit);
    if (reason) {
      this.skipped.set(path, reason);
      return undefined;
    }
    const text = (blob as { text: string }).text;
    if (kind === undefined && this.byContent.has(path)) {
      const decided = kindByContent(path, text);
      return decided ? { path, kind: decided, text } : undefined;
    }
    const source = sourceOf(path, text, kind);
    if (typeof source === 'string') {
      this.skipped.set(path, source);
      return undefined;
    }
    return source;
  }

  /** Known to be no file of the commit: GitHub answered none there, or absent() says so without a read. */
  noFile(path: string): boolean {
    return this.blobs.get(path) === null || this.absent(path);
  }

  isFile(path: string): boolean {
    if (this.absent(path)) return false;
    const blob = this.blobs.get(path);
    if (blob === undefined) this.wanted.add(path);
    return blob !== undefined && blob !== null;
  }

  /** The blobs to read whole (path → SHA), and forget them (they are about to be read). */
  takeWhole(): [string, string][] {
    const out = [...this.whole];
    this.whole.clear();
    return out;
  }

  /** The paths asked about and not known, and forget them (they are about to be read). */
  takeWanted(): string[] {
    const paths = [...this.wanted].filter((path) => !this.blobs.has(path));
    this.wanted.clear();
    return paths;
  }
}

/** Why a blob cannot be checked, or undefined when it can. */
function unreadable(blob: Exclude<BlobAnswer, null>, limit: number): string | undefined {
  if ('unreadable' in blob) return blob.unreadable;
  if (blob.byteSize > limit) return overLimit(blob.byteSize, limit);
  if (blob.isBinary || blob.text === null) return 'binary file';
  if (isLfsPointer(blob.text)) return 'Git LFS pointer (its content is stored outside the repository)';
  return undefined;
}

/** Directories whose every file is known, and those files. */
export interface Listing {
  readonly directories: ReadonlySet<string>;
  readonly files: ReadonlySet<string>;
}

export interface CommitRead {
  readonly files: readonly ReadFile[];
  /** Files that were asked for (given, or an include leads to them) and could not be checked, with the reason. */
  readonly skipped: readonly Skipped[];
  /** Every blob known at the end, by path (null: no file there). */
  readonly blobs: ReadonlyMap<string, BlobAnswer>;
  /** Whether a path is known to be no file of the commit (a read's answer, or a tree or listing without it). */
  readonly noFile?: (path: string) => boolean;
  /** Requests made after the blobs given. */
  readonly requests: number;
}

/** What a commit's read needs next: blobs to read whole (REST), paths to read at the revision, or nothing (done). */
export type ReadStep =
  | { readonly whole: readonly (readonly [path: string, sha: string])[] }
  | { readonly wanted: readonly string[] }
  | { readonly done: CommitRead };

/**
 * One commit's read, round by round: `step()` runs the reader over the blobs known so far and says what it needs;
 * `learn()` adds what was read. After INCLUDE_ROUNDS rounds of reads the paths still unknown are reported as not
 * followed. Reads of large locks through REST do not count as rounds.
 */
export class CommitReading {
  private readonly source: CommitFiles;
  private rounds = 0;

  constructor(
    private readonly listed: readonly Listed[],
    known?: ReadonlyMap<string, BlobAnswer>,
    tree?: ReadonlySet<string>,
    listing?: Listing,
    private readonly parse: ParseOptions = {},
    byContent?: ReadonlySet<string>,
  ) {
    this.source = new CommitFiles(known, tree, listing, byContent);
  }

  step(): ReadStep {
    const files = [...readRepository(this.listed, this.source, true, this.parse)];
    const wanted = this.source.takeWanted();
    const whole = this.source.takeWhole();
    if (whole.length > 0) return { whole };
    if (wanted.length === 0 || this.rounds >= INCLUDE_ROUNDS) {
      const skipped = [...this.source.skipped].map(([path, reason]) => ({ path, reason }));
      for (const path of wanted)
        skipped.push({
          path,
          reason: `not read: the chain of included files is longer than ${INCLUDE_ROUNDS + 1} files`,
        });
      const source = this.source;
      return { done: { files, skipped, blobs: source.blobs, requests: 0, noFile: (path) => source.noFile(path) } };
    }
    this.rounds++;
    return { wanted };
  }

  learn(blobs: Iterable<readonly [string, BlobAnswer]>): void {
    for (const [path, blob] of blobs) this.source.blobs.set(path, blob);
  }
}

/** What a commit's read starts from: blobs already known (the first read), its tree or a listing, the parse options. */
export interface CommitReadOptions {
  readonly known?: ReadonlyMap<string, BlobAnswer>;
  readonly tree?: ReadonlySet<string>;
  readonly listing?: Listing;
  readonly parse?: ParseOptions;
  /** YAML files listed for their content to decide their kind (CommitFiles). */
  readonly byContent?: ReadonlySet<string>;
}

/**
 * Read `listed` at `revision` and every file their includes lead to, starting from blobs already known (the first
 * read). One request per round.
 */
export async function readCommit(
  github: GitHub,
  repo: RepoRef,
  revision: string,
  listed: readonly Listed[],
  options: CommitReadOptions = {},
): Promise<CommitRead> {
  const reading = new CommitReading(
    listed,
    options.known,
    options.tree,
    options.listing,
    options.parse ?? {},
    options.byContent,
  );
  let requests = 0;
  for (;;) {
    const step = reading.step();
    if ('done' in step) return { ...step.done, requests };
    if ('whole' in step) {
      // Large locks are read whole, then the reader runs again over them (asking again for what it wanted).
      requests += step.whole.length;
      for (const [path, sha] of step.whole) reading.learn([[path, await readWholeBlob(github, repo, sha)]]);
      continue;
    }
    requests += Math.ceil(step.wanted.length / READ_CHUNK);
    const linked = await followLinks(github, repo, revision, await readBlobs(github, repo, step.wanted, revision));
    requests += linked.requests;
    reading.learn(linked.blobs);
  }
}

/** One commit of a repository of the owner, to read with others (readCommits). */
export interface CommitJob {
  readonly repo: string;
  readonly revision: string;
  readonly listed: readonly Listed[];
  readonly known?: ReadonlyMap<string, BlobAnswer>;
  readonly tree?: ReadonlySet<string>;
  /** YAML files listed for their content to decide their kind (CommitFiles). */
  readonly byContent?: ReadonlySet<string>;
}

/**
 * Commits of many repositories of one owner read together: each round asks GitHub for what every read still
 * needs in as few requests as READ_CHUNK paths per request allow (readBlobsAcross), so a hundred repositories of
 * two files each cost two requests, not a hundred. Each answer is that commit's read, or the error that stopped
 * it (GitHub would not show the repository, or a request failed): one repository does not sink the others.
 */
export async function readCommits(
  github: GitHub,
  owner: string,
  jobs: readonly CommitJob[],
): Promise<(CommitRead | Error)[]> {
  const readings = jobs.map((job) => new CommitReading(job.listed, job.known, job.tree, undefined, {}, job.byContent));
  const results: (CommitRead | Error | undefined)[] = jobs.map(() => undefined);
  let pending = jobs.map((_, i) => i);
  while (pending.length > 0) {
    const wants: { index: number; paths: readonly string[] }[] = [];
    for (const index of pending) {
      try {
        for (;;) {
          const step = readings[index]!.step();
          if ('done' in step) results[index] = step.done;
          else if ('wanted' in step) wants.push({ index, paths: step.wanted });
          else {
            for (const [path, sha] of step.whole)
              readings[index]!.learn([[path, await readWholeBlob(github, { owner, repo: jobs[index]!.repo }, sha)]]);
            continue;
          }
          break;
        }
      } catch (error) {
        results[index] = error as Error;
      }
    }
    for (const batch of chunkWants(wants)) {
      try {
        const answers = await readBlobsAcross(
          github,
          owner,
          batch.map((want) => ({
            repo: jobs[want.index]!.repo,
            revision: jobs[want.index]!.revision,
            paths: want.paths,
          })),
        );
        for (const [i, want] of batch.entries()) {
          const answer = answers[i]!;
          if (answer instanceof Error) results[want.index] = answer;
          else {
            const job = jobs[want.index]!;
            const linked = await followLinks(github, { owner, repo: job.repo }, job.revision, answer);
            readings[want.index]!.learn(linked.blobs);
          }
        }
      } catch (error) {
        for (const want of batch) results[want.index] = error as Error;
      }
    }
    pending = [...new Set(wants.map((want) => want.index))].filter((index) => results[index] === undefined);
  }
  return results as (CommitRead | Error)[];
}

/** Wants cut and grouped into requests of at most READ_CHUNK paths (a larger want is split over requests). */
function chunkWants<T extends { readonly paths: readonly string[] }>(wants: readonly T[]): T[][] {
  const batches: T[][] = [];
  let batch: T[] = [];
  let size = 0;
  for (const want of wants) {
    for (let at = 0; at < want.paths.length; at += READ_CHUNK) {
      const part = want.paths.slice(at, at + READ_CHUNK);
      if (size + part.length > READ_CHUNK) {
        batches.push(batch);
        batch = [];
        size = 0;
      }
      batch.push({ ...want, paths: part });
      size += part.length;
    }
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}
