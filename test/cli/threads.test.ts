/**
 * `check` on worker threads (src/cli/threads.ts) gives exactly what one thread gives: the same output in every
 * format, the same exit code, the same files skipped, on a tree of the real corpus files with the demos and
 * includes that cross from one part of the tree into another (so parts must be joined and checked again).
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cutIntoParts, threadsFor } from '../../src/cli/threads.js';
import { realProjects, realSources } from '../bench/real.js';
import { ROOT } from '../support/harness.js';
import { codeBlock } from '../support/code-block.js';
import { binProcess, runCli, type ProcessResult } from '../support/cli.js';

function tree(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cgk-threads-'));
  for (const project of realProjects(realSources(join(ROOT, 'fixtures', 'corpus')), 400))
    for (const [name, text] of Object.entries(project.files)) {
      mkdirSync(join(dir, project.dir), { recursive: true });
      writeFileSync(join(dir, project.dir, name), text);
    }
  for (const demo of ['demo', 'demo-uv', 'demo-fleet'])
    cpSync(join(ROOT, 'fixtures', 'repos', demo), join(dir, 'apps', demo), { recursive: true });
  // The first service installs a requirements file at the end of the tree, and another reaches back to the first:
  // their parts read each other's files.
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  write(
    'aaa/Dockerfile',
    codeBlock`
      FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04
      COPY requirements.txt .
      RUN pip install -r requirements.txt
    `,
  );
  write('aaa/requirements.txt', '-r ../zzz/shared/requirements.txt\n');
  write(
    'zzz/shared/requirements.txt',
    codeBlock`
      --extra-index-url https://download.pytorch.org/whl/cu118
      torch==2.3.0+cu118
    `,
  );
  write('zzz/other/requirements.txt', '-r ../../aaa/requirements.txt\n');
  // A KServe InferenceService at the start of the tree whose runtime is defined at its end (NVIDIA/nim-deploy's).
  const kserve = join(ROOT, 'fixtures', 'rules', 'image-unknown', 'kserve-runtime-in-other-file', 'kserve');
  cpSync(join(kserve, 'nim-models'), join(dir, 'aaa', 'nim-models'), { recursive: true });
  cpSync(join(kserve, 'runtimes'), join(dir, 'zzz', 'runtimes'), { recursive: true });
  write('zzz/big.bin', 'x\0y');
  return dir;
}

function check(dir: string, threads: number, ...args: string[]): ProcessResult {
  return binProcess(['check', ...args], {
    cwd: dir,
    env: { ...process.env, CUDA_GATEKEEPER_THREADS: String(threads) },
    input: '',
    timeout: 110_000,
  });
}

describe('check on worker threads', () => {
  const dir = tree();

  it.each([['text'], ['json'], ['sarif']])(
    'two threads give what one thread gives (%s)',
    { timeout: 120_000 },
    (format) => {
      const one = check(dir, 1, '.', '--format', format, '--verbose');
      const two = check(dir, 2, '.', '--format', format, '--verbose');
      expect(one.code).toBe(1);
      expect(two).toEqual(one);
      expect(one.out.length).toBeGreaterThan(10_000);
    },
  );

  it('the crossing include is judged as one thread judges it', { timeout: 120_000 }, () => {
    const out = check(dir, 2, '.').out;
    expect(out).toMatch(/^zzz\/shared\/requirements\.txt:2:\d+: error: .*CUDA 11\.8.*12\.1/m);
    // A KServe runtime at the end of the tree is judged for the service at its start, in whichever part each is.
    expect(out).toMatch(/^zzz\/runtimes\/.*\(for InferenceService\/llama3-8b-instruct-1xgpu in aaa\/nim-models\//m);
    expect(out).not.toMatch(/^aaa\/nim-models\/.*is not checked/m);
    expect(out).toEqual(check(dir, 1, '.').out);
  });

  it('a tree with a baseline file: the workers apply the same baseline', { timeout: 120_000 }, () => {
    writeFileSync(
      join(dir, 'policy.yaml'),
      readFileSync(join(ROOT, 'fixtures', 'repos', 'demo', 'baseline.yaml'), 'utf8'),
    );
    expect(check(dir, 2, '.', '--baseline', 'policy.yaml')).toEqual(check(dir, 1, '.', '--baseline', 'policy.yaml'));
  });
});

describe('when threads cannot help', () => {
  it(
    'a worker that never starts: the check runs on one thread, says why, and gives the same result',
    { timeout: 60_000 },
    () => {
      const dir = tree();
      const script = join(mkdtempSync(join(tmpdir(), 'cgk-no-worker-')), 'empty.mjs');
      writeFileSync(script, '');
      const inProcess = (threadScript?: string) => {
        const saved = process.env.CUDA_GATEKEEPER_THREADS;
        process.env.CUDA_GATEKEEPER_THREADS = '3';
        try {
          return runCli(dir, ['check', '.'], undefined, threadScript ? { threadScript } : {});
        } finally {
          if (saved === undefined) delete process.env.CUDA_GATEKEEPER_THREADS;
          else process.env.CUDA_GATEKEEPER_THREADS = saved;
        }
      };
      const failed = inProcess(script);
      const one = inProcess();
      expect(failed.err).toContain(
        'checking on 3 threads failed (a worker thread did not start: its script ended without starting a check); checking on one',
      );
      expect(failed.out).toEqual(one.out);
      expect(failed.code).toBe(one.code);
    },
  );

  it(
    'a tree with files reached through links is checked on one thread (a file is read once, by its real path)',
    { timeout: 60_000 },
    () => {
      const dir = tree();
      mkdirSync(join(dir, 'zzz', 'linked'), { recursive: true });
      symlinkSync(join(dir, 'zzz', 'shared', 'requirements.txt'), join(dir, 'zzz', 'linked', 'requirements.txt'));
      expect(check(dir, 3, '.', '--format', 'json')).toEqual(check(dir, 1, '.', '--format', 'json'));
    },
  );
});

describe('how a tree is cut and how many threads check it', () => {
  it('cuts where a directory ends, into parts of about equal size', () => {
    const files = ['a/1', 'a/2', 'a/3', 'b/1', 'c/1', 'c/2', 'd/1', 'd/2'].map((path) => ({ path }));
    expect(cutIntoParts(files, 3).map((part) => part.map((file) => file.path))).toEqual([
      ['a/1', 'a/2', 'a/3'],
      ['b/1', 'c/1', 'c/2'],
      ['d/1', 'd/2'],
    ]);
    expect(cutIntoParts(files.slice(0, 3), 4)).toHaveLength(1);
  });

  it('one thread for a small tree or a small machine; CUDA_GATEKEEPER_THREADS decides when set', () => {
    expect(threadsFor(100, {})).toBe(1);
    expect(threadsFor(100_000, { CUDA_GATEKEEPER_THREADS: '6' })).toBe(6);
    expect(threadsFor(3, { CUDA_GATEKEEPER_THREADS: '6' })).toBe(3);
    expect(threadsFor(100_000, { CUDA_GATEKEEPER_THREADS: 'many' })).toBeGreaterThanOrEqual(1);
  });
});
