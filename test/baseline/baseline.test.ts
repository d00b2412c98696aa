import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBaseline } from '../../src/baseline/load.js';
import { EMPTY_BASELINE } from '../../src/baseline/schema.js';
import { RULE_IDS } from '../../rules/index.js';
import { ROOT } from '../support/harness.js';
import { codeBlock } from '../support/code-block.js';

const where = (loaded: ReturnType<typeof loadBaseline>) =>
  loaded.problems.map((problem) => {
    const position = loaded.source.position(problem.span.start);
    return `${position.line}:${position.column} ${problem.message}`;
  });

describe('baseline loading', () => {
  it('accepts the documented default baseline.yaml, which is neutral: no CUDA, driver, GPU or version policy', () => {
    const loaded = loadBaseline('baseline.yaml', readFileSync(join(ROOT, 'baseline.yaml'), 'utf8'), RULE_IDS);
    expect(loaded.problems).toEqual([]);
    expect(loaded.baseline).toMatchObject({
      cuda: {},
      driver: {},
      gpus: [],
      packages: {},
      pinning: { python: 'exact', images: 'tag' },
      rules: { 'exact-pin': 'warning', 'image-pin': 'warning' },
    });
  });

  it('accepts the example policy examples/platform-team.yaml', () => {
    const loaded = loadBaseline(
      'examples/platform-team.yaml',
      readFileSync(join(ROOT, 'examples', 'platform-team.yaml'), 'utf8'),
      RULE_IDS,
    );
    expect(loaded.problems).toEqual([]);
    expect(loaded.baseline).toMatchObject({
      cuda: { allowed: ['12.4', '12.6', '12.8'] },
      driver: { minimum: '550.54.14', forwardCompat: true },
      gpus: ['A100', 'H100'],
      packages: { torch: ['2.6.0', '2.7.1'] },
      pinning: { python: 'exact', images: 'tag' },
      prerelease: 'forbid',
      rules: { 'index-url': 'warning' },
    });
  });

  it('treats an empty file as the empty baseline', () => {
    expect(loadBaseline('b.yaml', '').baseline).toEqual(EMPTY_BASELINE);
    expect(loadBaseline('b.yaml', '# nothing\n').problems).toEqual([]);
  });

  it('accepts rule settings as a word or an object, and numbers where YAML makes them', () => {
    const loaded = loadBaseline(
      'b.yaml',
      codeBlock`
        driver: { minimum: 550 }
        rules:
          exact-pin: off
          index-url: { severity: error }
      `,
      RULE_IDS,
    );
    expect(loaded.problems).toEqual([]);
    expect(loaded.baseline.driver.minimum).toBe('550');
    expect(loaded.baseline.rules).toEqual({ 'exact-pin': 'off', 'index-url': 'error' });
  });

  it('reports schema errors at the offending key or value', () => {
    expect(
      where(
        loadBaseline(
          'b.yaml',
          codeBlock`
            cuda:
              allowed: ["12.4", "twelve"]
            pinning:
              python: always
          `,
        ),
      ),
    ).toEqual([
      '2:21 cuda.allowed.1: expected a CUDA version as major.minor, e.g. "12.4"',
      '4:11 pinning.python: Invalid option: expected one of "exact"|"none"',
    ]);
    expect(where(loadBaseline('b.yaml', 'gpu: [A100]\n'))).toEqual(['1:1 unknown key "gpu" in the baseline']);
    expect(
      where(
        loadBaseline(
          'b.yaml',
          codeBlock`
            rules:
              no-such-rule: off
          `,
          RULE_IDS,
        ),
      )[0],
    ).toMatch(/^2:3 unknown rule "no-such-rule"/);
  });

  it('reports YAML syntax errors and duplicate keys with positions', () => {
    expect(where(loadBaseline('b.yaml', 'cuda: [\n'))[0]).toMatch(/^\d+:\d+ YAML: /);
    expect(
      where(
        loadBaseline(
          'b.yaml',
          codeBlock`
            prerelease: allow
            prerelease: forbid
          `,
        ),
      )[0],
    ).toMatch(/^2:1 YAML: Map keys must be unique/);
  });

  it('refuses alias bombs instead of expanding them', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      ...'bcdefgh'.split('').map((key, i) => `${key}: &${key} [${Array(10).fill(`*${'abcdefgh'[i]}`).join(', ')}]`),
      'gpus: *h',
    ].join('\n');
    const loaded = loadBaseline('b.yaml', bomb);
    expect(loaded.problems[0]!.message).toMatch(/YAML: .*(alias|Excessive)/i);
  });
});
