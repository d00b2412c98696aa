/**
 * Recall on realistic upgrade mistakes (issue 27): every mutant of test/support/mutants.ts, checked by the CLI as a
 * user runs it (the files laid out at their paths, an empty baseline), must be caught at error by one of its rules
 * on one of its lines; every original stays free of errors. The floor is the target; the table per kind is
 * printed for the note.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../support/cli.js';
import { ROOT } from '../support/harness.js';
import { mutantsOf, originals, type Mutant, type MutantKind } from '../support/mutants.js';

interface Finding {
  readonly ruleId: string;
  readonly severity: string;
  readonly location: { readonly path: string; readonly start: { readonly line: number } };
}

function findings(files: Readonly<Record<string, string>>): Finding[] {
  const work = mkdtempSync(join(tmpdir(), 'cgk-mutant-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(work, path)), { recursive: true });
    writeFileSync(join(work, path), text);
  }
  writeFileSync(join(work, '.empty-baseline.yaml'), '{}\n');
  const { out } = cli(work, 'check', ...Object.keys(files), '--baseline', '.empty-baseline.yaml', '--format', 'json');
  return (JSON.parse(out) as { findings: Finding[] }).findings;
}

const clean = originals(ROOT).filter((original) =>
  findings(original.files).every((finding) => finding.severity !== 'error'),
);
const mutants = clean.flatMap(mutantsOf);

function caught(mutant: Mutant): boolean {
  return findings(mutant.files).some(
    (finding) =>
      finding.severity === 'error' &&
      mutant.rules.includes(finding.ruleId) &&
      finding.location.path === mutant.path &&
      mutant.lines.includes(finding.location.start.line),
  );
}

/** The target: 95 % of realistic mistakes caught at error. */
export const RECALL_FLOOR = 0.95;

describe('realistic upgrade mistakes are caught at error', () => {
  it(`at least ${RECALL_FLOOR * 100} % of ${mutants.length} mutants of ${clean.length} clean real files, on the right line by the right rule`, () => {
    expect(mutants.length).toBeGreaterThan(60);
    const byKind = new Map<MutantKind, { total: number; caught: number; missed: string[] }>();
    for (const mutant of mutants) {
      const row = byKind.get(mutant.kind) ?? { total: 0, caught: 0, missed: [] };
      row.total++;
      if (caught(mutant)) row.caught++;
      else row.missed.push(`${mutant.id}: ${mutant.what}`);
      byKind.set(mutant.kind, row);
    }
    const total = [...byKind.values()].reduce((sum, row) => sum + row.total, 0);
    const hit = [...byKind.values()].reduce((sum, row) => sum + row.caught, 0);
    const table = [...byKind]
      .map(
        ([kind, row]) =>
          `${kind.padEnd(14)} ${String(row.caught).padStart(4)}/${String(row.total).padEnd(4)} ${((100 * row.caught) / row.total).toFixed(0)} %`,
      )
      .join('\n');
    process.stdout.write(
      `\nmutants caught at error, by kind:\n${table}\nall            ${hit}/${total} ${((100 * hit) / total).toFixed(1)} %\n`,
    );
    if (process.env.MUTANTS_MISSED)
      process.stdout.write(`${[...byKind.values()].flatMap((row) => row.missed).join('\n')}\n`);
    expect(hit / total).toBeGreaterThanOrEqual(RECALL_FLOOR);
  }, 600_000);

  it('every original it mutates is free of errors', () => {
    expect(clean.length).toBeGreaterThan(40);
  });
});
