/**
 * Real lock files as their repositories keep them (fixtures/locks, byte for byte: SOURCES.md), checked as the CLI
 * checks them: what a user of each would see.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { EMPTY_BASELINE } from '../../src/baseline/schema.js';
import { gate } from '../../src/gate.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import { parseFile } from '../../src/parsers/index.js';
import { ROOT } from '../support/harness.js';

const LOCKS = join(ROOT, 'fixtures', 'locks');

describe("NVIDIA/Megatron-LM's uv.lock: packages built from git repositories (issue 50, item 2)", () => {
  const lock = parseFile(
    'uv.lock',
    gunzipSync(readFileSync(join(LOCKS, 'NVIDIA__Megatron-LM__uv.lock.gz'))).toString('utf8'),
    'uv-lock',
  );
  const pyproject = parseFile(
    'pyproject.toml',
    readFileSync(join(LOCKS, 'NVIDIA__Megatron-LM__pyproject.toml'), 'utf8'),
    'pyproject',
  );

  it('reads each git source as a direct reference, never looked up on an index', () => {
    const fromGit = new Set(
      lock.packages.filter((pkg) => pkg.url?.startsWith('https://github.com/')).map((pkg) => pkg.name),
    );
    expect(fromGit).toEqual(
      new Set([
        'deep-gemm',
        'emerging-optimizers',
        'fast-hadamard-transform',
        'flash-mla',
        'mamba-ssm',
        'nemo-lens',
        'nemo-run',
        'torch-memory-saver',
        'transformer-engine',
      ]),
    );
  });

  it('gives no index-url error for their +<commit> versions (five before: "pip cannot find it")', () => {
    const report = gate([pyproject, lock], EMPTY_BASELINE, defaultKnowledgeBase());
    expect(report.findings.filter((finding) => finding.ruleId === 'index-url')).toEqual([]);
  });
});
