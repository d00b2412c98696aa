/** Every rule is a folder with rule.ts, a README with the required headings and current examples, and fixtures. */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RULES } from '../../rules/index.js';
import { RULE_SEVERITIES } from '../../rules/ids.js';
import { baselineJsonSchema, withExamples, withRulesTable } from '../../scripts/generate.js';
import { ROOT, runCase } from '../support/harness.js';

const RULES_DIR = join(ROOT, 'rules');
const folders = readdirSync(RULES_DIR)
  .filter((entry) => statSync(join(RULES_DIR, entry)).isDirectory())
  .sort();
const HEADINGS = ['## What it checks', '## Why', '## How to fix', '## Options', '## Examples'];

/** Message ids no rule fixture can produce, and why; each is covered where it can be. */
const WITHOUT_FIXTURE: Readonly<Record<string, string>> = {
  'driver-floor.refused':
    'a per-pool verdict: its text is the help of refusedEverywhere and somePools, never a finding of its own',
  'image-missing.registry': "a registry's 404, which needs a registry: test/images/gate.test.ts produces it",
  'image-missing.deleted': "a deletion record marked unverified; the bundled record is verified, so it is 'gone'",
};

describe('rule registry', () => {
  it('has one entry per rule folder, with the folder name as id', () => {
    expect(RULES.map((rule) => rule.id).sort()).toEqual(folders);
  });

  it('agrees with rules/ids.ts, the ids and default severities as data', () => {
    expect(Object.fromEntries(RULES.map((rule) => [rule.id, rule.defaultSeverity]))).toEqual(RULE_SEVERITIES);
  });

  it('has unique ids in kebab case', () => {
    const ids = RULES.map((rule) => rule.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z]+(-[a-z]+)*$/);
  });
});

describe('generated files are current (npm run docs)', () => {
  it('README rule table', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(withRulesTable(readme)).toBe(readme);
  });
  it('schema/baseline.schema.json', () => {
    expect(readFileSync(join(ROOT, 'schema', 'baseline.schema.json'), 'utf8')).toBe(baselineJsonSchema());
  });
});

describe.each(folders)('rules/%s', (id) => {
  const dir = join(RULES_DIR, id);
  const rule = RULES.find((candidate) => candidate.id === id)!;

  it('has rule.ts and a README with the required headings', () => {
    expect(existsSync(join(dir, 'rule.ts'))).toBe(true);
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    expect(readme.startsWith(`# ${id}\n`)).toBe(true);
    for (const heading of HEADINGS) expect(readme, heading).toContain(`\n${heading}\n`);
    expect(readme).toContain(`**Default severity:** ${rule.defaultSeverity}`);
  });

  it('has README examples generated from its current fixtures', () => {
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    expect(withExamples(readme, id), 'run npm run docs').toBe(readme);
  });

  it('has an error case and an ok case', () => {
    const cases = join(ROOT, 'fixtures', 'rules', id);
    const names = readdirSync(cases);
    expect(names.some((name) => existsSync(join(cases, name, 'expected.out')))).toBe(true);
    expect(names.some((name) => !existsSync(join(cases, name, 'expected.out')))).toBe(true);
  });

  it('says, in each case that expects no finding, what false alarm it guards against', () => {
    // A case without expected.out passes as long as the rule stays quiet, which a rule that never fires does too.
    // So its files mark the lines that must stay quiet (`# OK`, see harness.ts's markers) and a comment says why
    // (`# OK: why`, or a comment of its own), or a README.md in the case folder says it.
    const cases = join(ROOT, 'fixtures', 'rules', id);
    const prose = /(?:^|\s)#(?!\s*OK\s*$)[^#\n]*(?:\S+\s+){5}/m;
    for (const name of readdirSync(cases)) {
      const dir = join(cases, name);
      if (existsSync(join(dir, 'expected.out')) || existsSync(join(dir, 'README.md'))) continue;
      const texts = readdirSync(dir).map((file) => readFileSync(join(dir, file), 'utf8'));
      const where = `fixtures/rules/${id}/${name}`;
      expect(
        texts.some((text) => /#\s*OK\b/.test(text)),
        `${where}: an # OK marker`,
      ).toBe(true);
      expect(
        texts.some((text) => prose.test(text.replace(/^# This .*generated.*$/gim, ''))),
        `${where}: why`,
      ).toBe(true);
    }
  });

  it('has a fixture that produces each of its message ids', () => {
    const cases = join(ROOT, 'fixtures', 'rules', id);
    const produced = new Set(
      readdirSync(cases).flatMap((name) =>
        runCase(join(cases, name))
          .report.findings.filter((finding) => finding.ruleId === id)
          .map((finding) => finding.messageId),
      ),
    );
    const missing = Object.keys(rule.messages).filter(
      (messageId) => !produced.has(messageId) && !(`${id}.${messageId}` in WITHOUT_FIXTURE),
    );
    expect(missing, 'message ids no fixture produces').toEqual([]);
    for (const messageId of Object.keys(WITHOUT_FIXTURE).filter((key) => key.startsWith(`${id}.`)))
      expect(produced.has(messageId.slice(id.length + 1)), `${messageId} has a fixture now`).toBe(false);
  });

  it('declares metadata and messages', () => {
    expect(rule.description.length).toBeGreaterThan(10);
    expect(Object.keys(rule.messages).length).toBeGreaterThan(0);
    expect(['none', 'safe', 'unsafe']).toContain(rule.fix);
  });
});
