/**
 * The files of one commit on GitHub, read through the shared reader (src/reader.ts) exactly as the CLI reads a
 * checkout. GitHub is read in rounds: the reader runs over the blobs known so far, notes every path it needed
 * and did not have, and those are fetched in one request before it runs again. The last round has seen every
 * path it asked about, so an include leads to the same file it would lead to on disk.
 */
import { dirname } from '../analysis/paths.js';
import { maxBytes, MAX_FILE_BYTES, readRepository, sourceOf, type Listed, type ReadFile, type RepositoryReader, type SourceFile } from '../reader.js';
import type { FileKind } from '../parsers/facts.js';
import type { ParseOptions } from '../parsers/index.js';
import { READ_CHUNK, readBlobs, readWholeBlob, type BlobAnswer } from './read.js';
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
  ) {
    this.blobs = new Map(known);
  }

  /** Known to be no file without a read: outside the whole tree, or unlisted in a directory listed in full. */
  private absent(path: string): boolean {
    if (this.tree) return !this.tree.has(path);
    return this.listing !== undefined && !this.blobs.has(path) && this.listing.directories.has(dirname(path)) && !this.listing.files.has(path);
  }

  read(path: string, kind: FileKind | undefined): SourceFile | undefined {
    if (this.absent(path)) return undefined;
    const blob = this.blobs.get(path);
    if (blob === undefined) {
      this.wanted.add(path);
      return undefined;
    }
    if (blob === null) return undefined;
    const limit = maxBytes(path, kind);
    if (!('unreadable' in blob) && !blob.isBinary && blob.byteSize <= limit && !blob.whole && (blob.isTruncated || blob.byteSize > MAX_FILE_BYTES)) {
      if (blob.oid) this.whole.set(path, blob.oid);
      else this.skipped.set(path, 'GitHub gave only part of it');
      return undefined;
    }
    const reason = unreadable(blob, limit);
    if (reason) {
      this.skipped.set(path, reason);
      return undefined;
    }
    const source = sourceOf(path, (blob as { text: string }).text, kind);
    if (typeof source === 'string') {
      this.skipped.set(path, source);
      return undefined;
    }
    return source;
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
  /** Requests made after the blobs given. */
  readonly requests: number;
}

/**
 * Read `listed` at `revision` and every file their includes lead to, starting from blobs already known (the first
 * read). One request per round; after INCLUDE_ROUNDS the paths still unknown are reported as not followed.
 */
export async function readCommit(
  github: GitHub,
  repo: RepoRef,
  revision: string,
  listed: readonly Listed[],
  known?: ReadonlyMap<string, BlobAnswer>,
  tree?: ReadonlySet<string>,
  listing?: Listing,
  parse: ParseOptions = {},
): Promise<CommitRead> {
  const source = new CommitFiles(known, tree, listing);
  let requests = 0;
  for (let round = 0; ; round++) {
    const files = [...readRepository(listed, source, true, parse)];
    const wanted = source.takeWanted();
    const whole = source.takeWhole();
    if (whole.length > 0) {
      // Large locks are read whole, then the reader runs again over them (asking again for what it wanted).
      requests += whole.length;
      for (const [path, sha] of whole) source.blobs.set(path, await readWholeBlob(github, repo, sha));
      round--;
      continue;
    }
    if (wanted.length === 0 || round >= INCLUDE_ROUNDS) {
      const skipped = [...source.skipped].map(([path, reason]) => ({ path, reason }));
      for (const path of wanted) skipped.push({ path, reason: `not read: the chain of included files is longer than ${INCLUDE_ROUNDS + 1} files` });
      return { files, skipped, blobs: source.blobs, requests };
    }
    requests += Math.ceil(wanted.length / READ_CHUNK);
    for (const [path, blob] of await readBlobs(github, repo, wanted, revision)) source.blobs.set(path, blob);
  }
}
