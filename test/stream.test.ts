/**
 * gateRepository() checks a repository a few hundred files at a time and must give exactly gate()'s report over
 * all of them: for any order of the files, any window, includes in either direction (later files including
 * earlier ones, which forces a group to be checked again), cycles, waivers and suppressions.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadBaseline } from '../src/baseline/load.js';
import type { FileKind } from '../src/facts.js';
import { gate } from '../src/gate.js';
import { defaultKnowledgeBase } from '../src/knowledge/index.js';
import { classifyPath, parseFile } from '../src/parsers/index.js';
import { gateRepository, type SourceFile } from '../src/stream.js';
import { RULE_IDS } from '../rules/index.js';
import { project } from './bench/synthetic.js';
import { ROOT } from './harness.js';
import { RUNS } from './support/fuzz-inputs.js';

const kb = defaultKnowledgeBase();
const repoBaseline = readFileSync(join(ROOT, 'baseline.yaml'), 'utf8');
const waivers = `waivers:\n  - rule: cuda-not-allowed\n    repo: octo/mono\n    path: p1/\n    reason: the fleet runs an older driver here\n    owner: ml-platform\n    expires: 2026-12-31\n  - rule: companion-mismatch\n    repo: mono\n    reason: rebuilt in-house\n    owner: ml-platform\n    expires: 2026-01-01\n`;
const policy = loadBaseline('baseline.yaml', `${repoBaseline}\n${waivers}`, RULE_IDS);
const options = { policy, repository: 'octo/mono', today: '2026-11-30' };

const whole = (sources: readonly SourceFile[]) => gate(sources.map((source) => parseFile(source.path, source.text, source.kind)), policy.baseline, kb, options);

function synthetic(projects: number): SourceFile[] {
  const sources = Array.from({ length: projects }, (_, i) =>
    Object.entries(project(i)).map(([name, text]): SourceFile => {
      // Every seventh project installs a shared file that sits at the end of the list, every eleventh one at the start.
      const shared = name === 'requirements.txt' && i % 7 === 0 ? '-r ../zz/shared.txt\n' : name === 'requirements.txt' && i % 11 === 3 ? '-r ../aa/first.txt\n' : '';
      return { path: `p${i}/${name}`, kind: classifyPath(name)!, text: shared + text };
    }),
  ).flat();
  return [
    { path: 'aa/first.txt', kind: 'requirements', text: 'torch==2.3.1 # cuda-gatekeeper: ignore[exact-pin] pinned elsewhere\ntorchvision\n' },
    ...sources,
    { path: 'zz/shared.txt', kind: 'requirements', text: 'torch==2.6.0+cu121\nnvidia-cudnn-cu12==9.1.0.70\n' },
  ];
}

describe('gateRepository', () => {
  it('gives gate()\'s report for a monorepo in its own order, reversed and in small windows', () => {
    const sources = synthetic(60);
    const expected = whole(sources);
    expect(expected.findings.length).toBeGreaterThan(100);
    expect(expected.waived).toBeGreaterThan(0);
    expect(expected.findings.some((finding) => finding.messageId === 'waiverExpired')).toBe(true);
    // (A finding about a shared file names the first unit that reported it, so the order of the files matters.)
    const reversed = [...sources].reverse();
    const expectedReversed = whole(reversed);
    for (const windowFiles of [1, 5, 64, 256]) {
      expect(gateRepository(sources, policy.baseline, kb, { ...options, windowFiles })).toEqual(expected);
      expect(gateRepository(reversed, policy.baseline, kb, { ...options, windowFiles })).toEqual(expectedReversed);
    }
  });

  it('checks a group again, whole, when a later file includes a file checked earlier', () => {
    const sources: SourceFile[] = [
      { path: 'requirements.txt', kind: 'requirements', text: 'torch==2.3.1+cu118\ntorchvision==0.18.1\n' },
      { path: 'requirements-dev.txt', kind: 'requirements', text: 'pytest==8.2.2\n' },
      { path: 'services/api/Dockerfile', kind: 'dockerfile', text: 'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nCOPY requirements.txt /app/\nRUN pip install -r /app/requirements.txt\n' },
    ];
    // On its own the requirements file is its own unit; installed by the Dockerfile it is part of the stage's, and
    // its findings differ. With a window of one file, requirements.txt is complete (it includes nothing) and is
    // checked before the Dockerfile is read: only checking the joined group again gives gate()'s findings.
    const about = (report: ReturnType<typeof gate>) => report.findings.filter((finding) => finding.location.path === 'requirements.txt');
    const alone = gate([parseFile('requirements.txt', sources[0]!.text, 'requirements')], policy.baseline, kb, options);
    const expected = whole(sources);
    expect(about(expected)).not.toEqual(about(alone));
    expect(gateRepository(sources, policy.baseline, kb, { ...options, windowFiles: 1 })).toEqual(expected);
  });

  it('gives gate()\'s report for random repositories with includes in every direction, in any order and window', () => {
    const names = ['a/requirements.txt', 'a/base.txt', 'b/requirements.txt', 'b/Dockerfile', 'environment.yml', 'c/constraints.txt', 'requirements.txt'];
    const kindOf = (path: string): FileKind => classifyPath(path.split('/').pop()!) ?? 'requirements';
    const requirement = fc.constantFrom('torch==2.3.1+cu121', 'torch==2.6.0', 'torchvision', 'torchvision==0.18.1', 'nvidia-cudnn-cu12==9.1.0.70', 'numpy>=1 # cuda-gatekeeper: ignore[exact-pin] ok', '--extra-index-url https://download.pytorch.org/whl/cu124');
    const file = (path: string) =>
      fc.tuple(fc.array(fc.constantFrom(...names), { maxLength: 2 }), fc.array(requirement, { maxLength: 4 }), fc.constantFrom('12.1.1', '12.4.1', '11.8.0')).map(([targets, lines, cuda]): SourceFile => {
        const relative = (target: string) => (path.includes('/') ? `../${target}` : target);
        if (path.endsWith('Dockerfile')) {
          const copies = targets.map((target) => `COPY ${relative(target)} /deps/${target.replace(/\//g, '_')}\nRUN pip install -r /deps/${target.replace(/\//g, '_')}\n`).join('');
          return { path, kind: 'dockerfile', text: `FROM nvidia/cuda:${cuda}-devel-ubuntu22.04\n${copies}RUN pip install ${lines.filter((line) => !line.startsWith('-') && !line.includes('#')).join(' ') || 'numpy==1.26.4'}\n` };
        }
        if (path.endsWith('.yml')) return { path, kind: 'conda', text: `dependencies:\n  - cuda-version=${cuda.slice(0, 4)}\n  - pip:\n${targets.map((target) => `      - -r ${target}\n`).join('')}` };
        return { path, kind: kindOf(path), text: `${targets.map((target) => `-r ${relative(target)}\n`).join('')}${lines.join('\n')}\n` };
      });
    const repository = fc.tuple(...names.map(file)).chain((files) => fc.tuple(fc.shuffledSubarray(files, { minLength: 1 }), fc.integer({ min: 1, max: 8 })));
    fc.assert(
      fc.property(repository, ([sources, windowFiles]) => {
        expect(gateRepository(sources, policy.baseline, kb, { ...options, windowFiles })).toEqual(whole(sources));
      }),
      { numRuns: Math.min(RUNS, 300) },
    );
  });

  it('refuses two files with one path', () => {
    const file: SourceFile = { path: 'requirements.txt', kind: 'requirements', text: 'torch==2.6.0\n' };
    expect(() => gateRepository([file, file], policy.baseline, kb)).toThrow(/path of its own/);
  });
});
