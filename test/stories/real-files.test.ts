/**
 * The real files of fixtures/corpus as a user meets them: each laid out at the path it has in its repository (with
 * the files it includes), checked by the CLI with an empty baseline, and compared with the reviewer's reading in
 * fixtures/corpus/expect.json (the same check as ../shared/tools/real-files.mjs, in the suite). A `must` item is a
 * problem the reviewer found; a `mustNot` item is a finding the reviewer's reading contradicts.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../support/cli.js';
import { CORPUS } from '../support/harness.js';

interface Item {
  readonly rule: string | readonly string[];
  readonly level?: string | readonly string[];
  readonly lines?: readonly number[];
}
interface Entry {
  readonly path: string;
  readonly with?: Readonly<Record<string, string>>;
  readonly exit?: readonly number[];
  readonly must?: readonly Item[];
  readonly mustNot?: readonly Item[];
  readonly note: string;
}
interface SarifResult {
  readonly ruleId: string;
  readonly level?: string;
  readonly locations?: readonly { physicalLocation?: { region?: { startLine?: number } } }[];
  readonly relatedLocations?: readonly { physicalLocation?: { region?: { startLine?: number } } }[];
}

const expectations = JSON.parse(readFileSync(join(CORPUS, 'expect.json'), 'utf8')) as Record<string, Entry>;
const list = <T>(value: T | readonly T[] | undefined): readonly T[] | undefined =>
  value === undefined ? undefined : Array.isArray(value) ? value : [value as T];

function matches(result: SarifResult, item: Item, anywhere: boolean): boolean {
  if (!list(item.rule)!.includes(result.ruleId)) return false;
  if (item.level && !list(item.level)!.includes(result.level ?? 'warning')) return false;
  const lines = [...(result.locations ?? []), ...(anywhere ? (result.relatedLocations ?? []) : [])].map(
    (location) => location.physicalLocation?.region?.startLine,
  );
  return !item.lines || lines.some((line) => line !== undefined && item.lines!.includes(line));
}

describe.each(Object.entries(expectations))('real file %s', (name, entry) => {
  it(`as the reviewer reads it: ${entry.note}`, () => {
    const work = mkdtempSync(join(tmpdir(), 'cgk-real-'));
    for (const [file, path] of [[name, entry.path], ...Object.entries(entry.with ?? {})] as [string, string][]) {
      mkdirSync(dirname(join(work, path)), { recursive: true });
      copyFileSync(join(CORPUS, file), join(work, path));
    }
    writeFileSync(join(work, 'empty-baseline.yaml'), '{}\n');
    const { code, out, err } = cli(work, 'check', entry.path, '--baseline', 'empty-baseline.yaml', '--format', 'sarif');
    expect(list(entry.exit) ?? [0, 1]).toContain(code);
    expect(err, 'every file is checked').not.toMatch(/skipped/);
    const results = (JSON.parse(out) as { runs: { results?: SarifResult[] }[] }).runs.flatMap(
      (sarif) => sarif.results ?? [],
    );
    for (const item of entry.must ?? [])
      expect(
        results.some((result) => matches(result, item, true)),
        `missing ${JSON.stringify(item)}`,
      ).toBe(true);
    for (const item of entry.mustNot ?? [])
      expect(
        results.filter((result) => matches(result, item, false)).map((result) => `${result.ruleId}/${result.level}`),
        `contradicted ${JSON.stringify(item)}`,
      ).toEqual([]);
  });
});
