/**
 * The paths git tracks in a checkout, read from its index (`.git/index`), for a walk that respects `.gitignore`:
 * a file git tracks is checked even where a `.gitignore` pattern matches it (git itself keeps tracking it; `git add
 * -f`, or a pattern added after the file). The format is git's index-format.txt (git-scm.com/docs/index-format):
 * versions 2, 3 and 4, SHA-1 or SHA-256 object names. An index this cannot read in full (another version, a split
 * index whose entries are in a shared file, a truncated file) gives undefined: the walk then goes by `.gitignore`
 * alone, as before.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** What git tracks: its files, and every folder that holds one (so an ignored folder is entered for them). */
export interface Tracked {
  readonly files: ReadonlySet<string>;
  readonly folders: ReadonlySet<string>;
}

/** The tracked paths of the checkout at `root` (its `.git` a folder there), or undefined. */
export function trackedPaths(root: string): Tracked | undefined {
  let index: Buffer;
  let config = '';
  try {
    index = readFileSync(join(root, '.git', 'index'));
  } catch {
    return undefined;
  }
  try {
    config = readFileSync(join(root, '.git', 'config'), 'utf8');
  } catch {
    // No config: SHA-1 object names, git's default.
  }
  const sha256 = /^\s*objectformat\s*=\s*sha256\s*$/im.test(config);
  const paths = parseGitIndex(index, sha256 ? 32 : 20);
  if (!paths) return undefined;
  const folders = new Set<string>();
  for (const path of paths)
    for (let slash = path.indexOf('/'); slash >= 0; slash = path.indexOf('/', slash + 1))
      folders.add(path.slice(0, slash));
  return { files: new Set(paths), folders };
}

/**
 * The path names of an index's entries, in index order, or undefined where the buffer is not an index this reads in
 * full. `hashSize`: 20 for SHA-1 repositories, 32 for SHA-256 ones.
 */
export function parseGitIndex(buffer: Buffer, hashSize = 20): string[] | undefined {
  if (buffer.length < 12 || buffer.toString('latin1', 0, 4) !== 'DIRC') return undefined;
  const version = buffer.readUInt32BE(4);
  if (version < 2 || version > 4) return undefined;
  const count = buffer.readUInt32BE(8);
  const paths: string[] = [];
  /** ctime, mtime (8 bytes each), dev, ino, mode, uid, gid, size (4 each): 40 bytes, then the object name. */
  const fixed = 40 + hashSize;
  let at = 12;
  let previous: Buffer = Buffer.alloc(0);
  for (let i = 0; i < count; i++) {
    const start = at;
    if (at + fixed + 2 > buffer.length) return undefined;
    const flags = buffer.readUInt16BE(at + fixed);
    at += fixed + 2;
    // Version 3 and later: an extended flags word follows where the flags say so (bit 14).
    if (flags & 0x4000) {
      if (version < 3) return undefined;
      at += 2;
    }
    let name: Buffer;
    if (version === 4) {
      // The name is the previous one less N bytes from its end, then a NUL-terminated suffix (no padding).
      let byte = buffer[at++];
      if (byte === undefined) return undefined;
      let strip = byte & 0x7f;
      while (byte & 0x80) {
        byte = buffer[at++];
        if (byte === undefined) return undefined;
        strip = ((strip + 1) << 7) | (byte & 0x7f);
      }
      const end = buffer.indexOf(0, at);
      if (end < 0 || strip > previous.length) return undefined;
      name = Buffer.concat([previous.subarray(0, previous.length - strip), buffer.subarray(at, end)]);
      at = end + 1;
    } else {
      const end = buffer.indexOf(0, at);
      if (end < 0) return undefined;
      name = buffer.subarray(at, end);
      // 1 to 8 NUL bytes end the entry, so that its length is a multiple of eight.
      at = start + Math.ceil((end + 1 - start) / 8) * 8;
    }
    previous = name;
    paths.push(name.toString('utf8'));
  }
  // A split index keeps most entries in a shared index file (the `link` extension): this one is not the whole list.
  while (at + 8 <= buffer.length - hashSize) {
    const signature = buffer.toString('latin1', at, at + 4);
    if (signature === 'link') return undefined;
    at += 8 + buffer.readUInt32BE(at + 4);
  }
  return paths;
}
