/**
 * The checkout walk takes entry types from the directory listing. Some file systems report no type (DT_UNKNOWN):
 * then every entry must be looked at with lstat, with the same result.
 */
import type * as Fs from 'node:fs';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

const listing = vi.hoisted(() => ({ untyped: false }));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof Fs>();
  const readdirSync = ((path: string, options?: { withFileTypes?: boolean }) => {
    const entries = fs.readdirSync(path, options as never) as unknown[];
    if (!listing.untyped || !options?.withFileTypes) return entries;
    // What a file system without d_type gives: names, and no type at all.
    const no = (): boolean => false;
    return (entries as { name: string }[]).map((entry) => ({
      name: entry.name,
      isFile: no,
      isDirectory: no,
      isSymbolicLink: no,
      isBlockDevice: no,
      isCharacterDevice: no,
      isFIFO: no,
      isSocket: no,
    }));
  }) as typeof fs.readdirSync;
  return { ...fs, default: { ...fs, readdirSync }, readdirSync };
});

const { diskReader, listedFile, walk } = await import('../../src/cli/discover.js');
const { utf16Text } = await import('../../src/util/utf16.js');

afterEach(() => {
  listing.untyped = false;
});

describe('walking a checkout', () => {
  it('finds the same files, in the same order, on a file system that reports no entry types', () => {
    const root = mkdtempSync(join(tmpdir(), 'cgk-walk-'));
    mkdirSync(join(root, 'b', 'node_modules'), { recursive: true });
    mkdirSync(join(root, 'a'));
    writeFileSync(join(root, 'requirements.txt'), 'torch==2.3.0\n');
    writeFileSync(join(root, 'a', 'Dockerfile'), 'FROM ubuntu:22.04\n');
    writeFileSync(join(root, 'a', 'notes.md'), 'not checked\n');
    writeFileSync(join(root, 'b', 'environment.yml'), 'dependencies: []\n');
    writeFileSync(join(root, 'b', 'node_modules', 'requirements.txt'), 'skipped\n');
    symlinkSync(join(root, 'a'), join(root, 'c')); // a link found while walking: never followed
    const typed = walk(root, ['.']);
    expect(typed.paths).toEqual(['a/Dockerfile', 'b/environment.yml', 'requirements.txt']);
    listing.untyped = true;
    const untyped = walk(root, ['.']);
    expect(untyped.paths).toEqual(typed.paths);
    expect([...untyped.plain]).toEqual([...typed.plain]);
  });

  it('walks build/ folders (sources live there; a build output is left out by .gitignore) but not dist/', () => {
    const root = mkdtempSync(join(tmpdir(), 'cgk-build-'));
    mkdirSync(join(root, 'docs', 'examples', 'tensorrt-llm', 'build'), { recursive: true });
    mkdirSync(join(root, 'dist'));
    mkdirSync(join(root, 'docker'));
    writeFileSync(join(root, 'docs', 'examples', 'tensorrt-llm', 'build', 'Dockerfile'), 'FROM ubuntu:22.04\n');
    writeFileSync(join(root, 'dist', 'requirements.txt'), 'torch\n');
    writeFileSync(join(root, 'docker', 'InternVL_Dockerfile'), 'FROM ubuntu:22.04\n');
    writeFileSync(join(root, '.gitignore'), 'out/\n');
    mkdirSync(join(root, 'out', 'build'), { recursive: true });
    writeFileSync(join(root, 'out', 'build', 'Dockerfile'), 'FROM ubuntu:22.04\n');
    expect(walk(root, ['.']).paths).toEqual([
      'docker/InternVL_Dockerfile',
      'docs/examples/tensorrt-llm/build/Dockerfile',
    ]);
  });

  it('answers whether an include leads to a file from its listings, and asks the disk only where they cannot say', () => {
    const root = mkdtempSync(join(tmpdir(), 'cgk-listing-'));
    mkdirSync(join(root, 'svc'));
    mkdirSync(join(root, 'api'));
    mkdirSync(join(root, 'node_modules'));
    writeFileSync(join(root, 'api', 'requirements.txt'), 'torch\n');
    writeFileSync(join(root, 'api', 'Extra.txt'), 'numpy\n'); // `extra.txt` on a case-insensitive disk: the disk says
    writeFileSync(join(root, 'svc', 'Dockerfile'), 'FROM ubuntu:22.04\n');
    writeFileSync(join(root, 'svc', 'setup.py'), '\n'); // not checked, but a file
    writeFileSync(join(root, 'node_modules', 'r.txt'), '\n'); // in a folder the walk skips
    writeFileSync(join(root, 'real.txt'), '\n');
    symlinkSync(join(root, 'real.txt'), join(root, 'svc', 'linked.txt'));
    const walked = walk(root, ['.']);
    // Listed whole, every entry's type known: the root and api/ (svc/ holds a link, node_modules/ is skipped).
    expect([...walked.listing.complete].sort()).toEqual(['', 'api']);
    const reader = diskReader(root, [], walked);
    expect(reader.isFile('svc/Dockerfile')).toBe(true);
    expect(reader.isFile('svc/setup.py')).toBe(true);
    expect(reader.isFile('svc/missing.txt')).toBe(false);
    expect(reader.isFile('svc')).toBe(false);
    expect(reader.isFile('svc/linked.txt')).toBe(true); // a link: the disk says where it leads
    expect(reader.isFile('node_modules/r.txt')).toBe(true); // a folder the walk did not list: the disk says
    expect(reader.isFile('elsewhere/r.txt')).toBe(false);
    expect(reader.isFile('api/requirements.txt')).toBe(true);
    expect(reader.isFile('api/missing.txt')).toBe(false); // from api/'s listing, without a stat
    // Below a folder listed whole, a path with no entry on its way, or one below a file, is no file: no stat.
    expect(listedFile(walked.listing, 'api/requirements/cuda.txt')).toBe(false);
    expect(listedFile(walked.listing, 'elsewhere/deep/r.txt')).toBe(false);
    expect(listedFile(walked.listing, 'api/requirements.txt/cuda.txt')).toBe(false);
    expect(listedFile(walked.listing, 'real.txt/x')).toBe(false);
    // Where a folder on the way was not listed whole, or an entry matches but for case, the disk says.
    expect(listedFile(walked.listing, 'svc/sub/r.txt')).toBeUndefined();
    expect(listedFile(walked.listing, 'node_modules/sub/r.txt')).toBeUndefined();
    expect(listedFile(walked.listing, 'API/sub/r.txt')).toBeUndefined();
    expect(listedFile(walked.listing, '../api/requirements.txt')).toBeUndefined();
    expect(listedFile(walked.listing, 'api/./requirements.txt')).toBeUndefined();
    // A listing says the same as the disk, file for file.
    const disk = diskReader(root, []);
    for (const path of [
      'svc/Dockerfile',
      'svc/setup.py',
      'svc/missing.txt',
      'svc',
      'svc/linked.txt',
      'api/missing.txt',
      'api/extra.txt',
      'api/Extra.txt',
      'api/requirements/cuda.txt',
      'elsewhere/deep/r.txt',
      'api/requirements.txt/cuda.txt',
      'svc/sub/r.txt',
      'API/Extra.txt',
    ])
      expect(reader.isFile(path), path).toBe(disk.isFile(path));
  });
});

describe('reading a UTF-16 file', () => {
  it('decodes it by its byte-order mark, as pip does; other bytes with zeros stay binary', () => {
    const text = 'torch==2.6.0+cu118\r\nnumpy\r\n';
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    expect(utf16Text(le)).toBe(text);
    expect(utf16Text(Buffer.from(le).swap16())).toBe(text);
    expect(utf16Text(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0x00]))).toBeUndefined();
    expect(utf16Text(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a\0b', 'utf16le')]))).toBeUndefined();
    const root = mkdtempSync(join(tmpdir(), 'cgk-utf16-'));
    writeFileSync(join(root, 'requirements.txt'), le);
    const skipped: { path: string; reason: string }[] = [];
    const read = diskReader(root, skipped, walk(root, ['.'])).read('requirements.txt', 'requirements');
    expect(skipped).toEqual([]);
    expect(read?.text).toBe(text);
  });
});
