/**
 * A KServe InferenceService that places its predictor, whose runtime another file defines and places too, is not
 * judged through it: KServe merges the two placements (nodeSelector, affinity), and the service's is not carried
 * there. That hides something only where the baseline has GPU pools, which the placement chooses between: an error
 * then (the default `unchecked`), a notice without pools. A runtime that places itself nowhere is judged on every pool,
 * and the service through it.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runCase } from '../support/harness.js';

const severities = (fixture: string): string[] =>
  runCase(join(ROOT, 'fixtures', 'rules', 'parse-error', fixture))
    .report.findings.filter((finding) => finding.ruleId === 'parse-error')
    .map((finding) => finding.severity);

describe('an InferenceService whose placed runtime is in another file', () => {
  it('fails closed where the baseline has pools, and is a notice where it has none', () => {
    expect(severities('kserve-placed-service-placed-runtime-elsewhere-pools')).toEqual(['error']);
    expect(severities('kserve-placed-service-placed-runtime-elsewhere')).toEqual(['notice']);
  });
});
