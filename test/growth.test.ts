/**
 * Every rule is linear in its input (issue 46): each rule's own fixture cases, made sixteen times larger, take at most
 * twenty times as long to gate and to verify their fixes. A case's main file (its largest requirements file,
 * Dockerfile or conda environment) is scaled the way real files grow: a requirements file repeats its lines (more
 * pins in one unit), a Dockerfile its stages (renamed, so each copy is a stage of its own that may build on the copy
 * before it), an environment its dependency list. test/fuzz.test.ts has the hand-made hostile shapes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBaseline } from '../src/baseline/load.js';
import { EMPTY_BASELINE } from '../src/baseline/schema.js';
import { gate, regateFiles } from '../src/gate.js';
import { defaultKnowledgeBase } from '../src/knowledge/index.js';
import type { FileKind } from '../src/parsers/facts.js';
import { classifyPath, parseFile } from '../src/parsers/index.js';
import { verifyFixes } from '../src/verify.js';
import { RULE_IDS } from '../rules/ids.js';
import { growthUnder } from './support/growth.js';
import { SCALABLE, scaled, type Scalable } from './support/scale.js';
import { inputPaths, ROOT } from './support/harness.js';

const kb = defaultKnowledgeBase();
const RULES_DIR = join(ROOT, 'fixtures', 'rules');
/** Cases per rule: its first ones with a main file to scale, failing cases first (they carry findings and fixes). */
const CASES_PER_RULE = 3;
/** The small size's main file, in characters; the large one is sixteen times that. */
const SMALL_CHARS = 3000;

interface GrowthCase {
  readonly name: string;
  readonly files: { path: string; kind: FileKind; text: string }[];
  readonly main: number;
  readonly baseline?: string;
}

function casesOf(rule: string): GrowthCase[] {
  const dir = join(RULES_DIR, rule);
  const cases: GrowthCase[] = [];
  for (const name of readdirSync(dir).sort((a, b) => Number(a.startsWith('ok')) - Number(b.startsWith('ok')))) {
    const caseDir = join(dir, name);
    const files = inputPaths(caseDir).flatMap((path) => {
      const kind = classifyPath(path);
      return kind ? [{ path, kind, text: readFileSync(join(caseDir, path), 'utf8') }] : [];
    });
    const scalable = files.filter((file) => SCALABLE.includes(file.kind));
    if (scalable.length === 0) continue;
    const main = files.indexOf(scalable.reduce((a, b) => (b.text.length > a.text.length ? b : a)));
    let baseline: string | undefined;
    try {
      baseline = readFileSync(join(caseDir, 'baseline.yaml'), 'utf8');
    } catch {
      baseline = undefined;
    }
    cases.push({ name: `${rule}/${name}`, files, main, ...(baseline ? { baseline } : {}) });
    if (cases.length === CASES_PER_RULE) break;
  }
  return cases;
}

const RULE_DIRS = readdirSync(RULES_DIR).sort();

describe("every rule's fixture cases, made sixteen times larger", () => {
  it('covers every rule that reads a requirements file, a Dockerfile or a conda environment', () => {
    expect(RULE_DIRS.filter((rule) => casesOf(rule).length === 0)).toEqual([]);
    expect([...RULE_DIRS].sort()).toEqual([...RULE_IDS].sort());
  });

  it.each(RULE_DIRS.flatMap((rule) => casesOf(rule)).map((c) => [c.name, c] as const))(
    '%s: gate and fix verification within 20× the time',
    async (_name, growthCase) => {
      const policy = growthCase.baseline ? loadBaseline('baseline.yaml', growthCase.baseline, RULE_IDS) : undefined;
      const baseline = policy?.baseline ?? EMPTY_BASELINE;
      const options = policy ? { policy } : {};
      const mainFile = growthCase.files[growthCase.main]!;
      const unit = Math.max(1, Math.ceil(SMALL_CHARS / Math.max(1, mainFile.text.length)));
      const check = (n: number): void => {
        const copies = Math.max(1, Math.round((n * unit) / 16));
        const files = growthCase.files.map((file, i) =>
          parseFile(
            file.path,
            i === growthCase.main ? scaled(file.kind as Scalable, file.text, copies) : file.text,
            file.kind,
            { images: baseline.images },
          ),
        );
        verifyFixes(gate(files, baseline, kb, options), files, regateFiles(baseline, kb, options));
      };
      // Linear is 16×; the bar leaves room for caches that a larger input outgrows, never for a square (256×).
      expect(await growthUnder(20, check, 16, 256)).toBeLessThan(20);
    },
    120_000,
  );
});
