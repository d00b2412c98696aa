/**
 * The main suite: every folder under fixtures/rules/<rule-id>/<case>/ is a case. Findings of that rule must
 * equal expected.out (no file = no finding), `# ERROR`/`# OK` markers must agree with them, and where
 * `X.fixed` exists, applying the rule's safe fixes to X must give exactly X.fixed, which the rule accepts.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyEdits } from '../../src/analysis/edits.js';
import { parseFile, classifyPath } from '../../src/parsers/index.js';
import { renderGolden } from '../../src/render/text.js';
import { RULE_IDS, RULES } from '../../rules/index.js';
import { inputPaths, markers, ROOT, runCase } from '../support/harness.js';

const FIXTURES = join(ROOT, 'fixtures', 'rules');

/** Every name a rule's message or help template fills in (`{{subject}}`). */
const PLACEHOLDERS = new Set(
  RULES.flatMap((rule) =>
    [...Object.values(rule.messages), ...Object.values(rule.helps ?? {})].flatMap((template) =>
      [...String(template).matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((match) => match[1]!),
    ),
  ),
);

describe("the templates' placeholders", () => {
  it('are found, so a message that leaves one unfilled is caught', () =>
    expect([...PLACEHOLDERS].filter((name) => ['subject', 'image', 'expected'].includes(name)).sort()).toEqual([
      'expected',
      'image',
      'subject',
    ]));
});

for (const ruleId of readdirSync(FIXTURES).sort()) {
  describe(ruleId, () => {
    it('is a registered rule', () => expect(RULE_IDS.has(ruleId)).toBe(true));
    for (const name of readdirSync(join(FIXTURES, ruleId)).sort()) {
      const dir = join(FIXTURES, ruleId, name);
      it(name, () => {
        const result = runCase(dir);
        const own = result.report.findings.filter((finding) => finding.ruleId === ruleId);
        const expectedPath = join(dir, 'expected.out');
        const expected = existsSync(expectedPath) ? readFileSync(expectedPath, 'utf8') : '';
        expect(renderGolden(own)).toBe(expected);
        // Every placeholder of a message or help template was filled from the report's data (a template's text that
        // a file holds, `FROM {{ SRC_IMAGE }}`, may be quoted).
        for (const finding of result.report.findings) {
          const left = [...`${finding.message}\n${finding.help ?? ''}`.matchAll(/\{\{\s*(\w+)\s*\}\}/g)];
          expect(
            left.map((match) => match[0]).filter((_, k) => PLACEHOLDERS.has(left[k]![1]!)),
            `${finding.ruleId} ${finding.messageId}`,
          ).toEqual([]);
        }

        for (const file of result.files) {
          for (const marker of markers(file)) {
            const hit = own.some(
              (finding) => finding.location.path === file.path && finding.location.start.line === marker.line,
            );
            expect(hit, `${file.path}:${marker.line} is marked # ${marker.kind}`).toBe(marker.kind === 'ERROR');
          }
        }

        const fixedFiles = inputPaths(dir).filter((path) => existsSync(join(dir, `${path}.fixed`)));
        if (fixedFiles.length === 0) return;
        const edits = own.flatMap((finding) => (finding.fix?.safety === 'safe' ? finding.fix.edits : []));
        const after = result.files.map((file) => {
          const fixedPath = join(dir, `${file.path}.fixed`);
          if (!existsSync(fixedPath)) return file;
          const text = applyEdits(
            file.source.text,
            edits.filter((edit) => edit.path === file.path),
          );
          expect(text, `${file.path} after safe fixes`).toBe(readFileSync(fixedPath, 'utf8'));
          return parseFile(file.path, text, file.kind ?? classifyPath(file.path)!);
        });
        const again = runCase(dir, after).report.findings.filter(
          (finding) => finding.ruleId === ruleId && finding.fix?.safety === 'safe',
        );
        expect(renderGolden(again), 'safe fixes leave nothing for the rule to fix').toBe('');
      });
    }
  });
}
