/**
 * fixtures/plan: one folder per family a CUDA move touches. Each holds the files, `cuda` (the target) and
 * `plan.out` (the plan as `cuda-gatekeeper plan` prints it). The plan is checked against its golden, and the tree
 * with its edits applied is gated again: the move adds no error (lock files excepted: the plan regenerates them).
 * `UPDATE_PLAN_GOLDENS=1` rewrites the goldens.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyEdits } from '../../src/analysis/edits.js';
import { EMPTY_BASELINE } from '../../src/baseline/schema.js';
import { gate } from '../../src/gate.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import { parseFile } from '../../src/parsers/index.js';
import { formatOf } from '../../src/parsers/formats.js';
import { plan, renderPlanText } from '../../src/plan/plan.js';
import { merged } from '../../src/verify.js';
import { ROOT, runCase } from '../support/harness.js';

const DIR = join(ROOT, 'fixtures', 'plan');
const kb = defaultKnowledgeBase();

describe.each(readdirSync(DIR))('plan fixture %s', (name) => {
  const dir = join(DIR, name);
  const cuda = readFileSync(join(dir, 'cuda'), 'utf8').trim();
  const { files, policy } = runCase(dir);
  const baseline = policy?.baseline ?? EMPTY_BASELINE;
  const result = plan(files, cuda, kb, baseline);

  it('prints the golden plan', () => {
    const text = renderPlanText(result);
    if (process.env.UPDATE_PLAN_GOLDENS) writeFileSync(join(dir, 'plan.out'), text);
    expect(text).toBe(readFileSync(join(dir, 'plan.out'), 'utf8'));
  });

  it('adds no error once applied (lock files regenerated, not judged)', () => {
    const edits = merged(result.steps.flatMap((step) => step.edits ?? []));
    expect(edits, 'the steps agree').toBeDefined();
    const moved = files.map((file) => {
      const own = edits!.filter((edit) => edit.path === file.path);
      return own.length ? parseFile(file.path, applyEdits(file.source.text, own), file.kind) : file;
    });
    const errors = (tree: typeof files) =>
      gate(
        tree.filter((file) => formatOf(file.kind).lock === undefined),
        baseline,
        kb,
      )
        .findings.filter((finding) => finding.severity === 'error' && finding.ruleId !== 'cuda-not-allowed')
        .map((finding) => `${finding.location.path}: ${finding.message} [${finding.ruleId}]`);
    const before = new Set(errors(files));
    expect(errors(moved).filter((line) => !before.has(line))).toEqual([]);
    expect(
      result.locks.every((lock) =>
        files.some((file) => file.path === lock.path && formatOf(file.kind).lock !== undefined),
      ),
    ).toBe(true);
  });
});
