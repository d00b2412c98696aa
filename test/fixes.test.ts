/**
 * All safe fixes together: on every fixture case and the demo repository, applying every safe fix at once
 * never adds errors, and repeating it reaches a fixed point (fixes of different rules do not fight).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyEdits } from '../src/analysis/edits.js';
import type { ParsedFile } from '../src/parsers/facts.js';
import { parseFile } from '../src/parsers/index.js';
import { merged, overlaps } from '../src/verify.js';
import { ROOT, runCase } from './support/harness.js';

const cases = [
  join(ROOT, 'fixtures', 'repos', 'demo'),
  ...readdirSync(join(ROOT, 'fixtures', 'rules')).flatMap((rule) =>
    readdirSync(join(ROOT, 'fixtures', 'rules', rule)).map((name) => join(ROOT, 'fixtures', 'rules', rule, name)),
  ),
];

function applySafe(files: ParsedFile[], dir: string): { files: ParsedFile[]; applied: number } {
  const report = runCase(dir, files).report;
  const edits = report.findings.flatMap((finding) => (finding.fix?.safety === 'safe' ? finding.fix.edits : []));
  return {
    applied: edits.length,
    files: files.map((file) => {
      const own = edits.filter((edit) => edit.path === file.path);
      return own.length ? parseFile(file.path, applyEdits(file.source.text, own), file.kind) : file;
    }),
  };
}

describe('safe fixes applied together', () => {
  it.each(cases.map((dir) => [dir.slice(ROOT.length + 1), dir]))('%s', (_name, dir) => {
    const start = runCase(dir);
    let files = start.files;
    let rounds = 0;
    for (; rounds < 4; rounds++) {
      const next = applySafe(files, dir);
      if (next.applied === 0) break;
      files = next.files;
    }
    expect(rounds, 'reaches a fixed point').toBeLessThan(4);
    const end = runCase(dir, files).report;
    expect(end.counts.error, 'no new errors').toBeLessThanOrEqual(start.report.counts.error);
  });
});

describe('overlapping edits', () => {
  it('names the pair that cannot both be applied, and merged refuses them', () => {
    const a = { path: 'r.txt', range: [0, 5] as [number, number], text: 'x' };
    const b = { path: 'r.txt', range: [3, 8] as [number, number], text: 'y' };
    const c = { path: 'r.txt', range: [8, 9] as [number, number], text: 'z' };
    expect(overlaps([c, b, a, a])).toEqual([[a, b]]);
    expect(merged([a, b])).toBeUndefined();
    expect(overlaps([a, c])).toEqual([]);
    expect(merged([a, a, c])).toEqual([a, c]);
  });
});
