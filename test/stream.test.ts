/**
 * gateRepository() checks a repository a few hundred files at a time and must give exactly gate()'s report over
 * all of them: for any order of the files, any window, includes in either direction (later files including
 * earlier ones, which forces a group to be checked again), cycles, waivers and suppressions.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { assertProperty } from './support/property.js';
import { describe, expect, it } from 'vitest';
import { includeCandidates } from '../src/analysis/links.js';
import { loadBaseline } from '../src/baseline/load.js';
import type { FileKind } from '../src/parsers/facts.js';
import { gate } from '../src/gate.js';
import { defaultKnowledgeBase } from '../src/knowledge/index.js';
import { classifyPath, parseFile } from '../src/parsers/index.js';
import {
  listed,
  readRepository,
  sourceReader,
  type Listed,
  type RepositoryReader,
  type SourceFile,
} from '../src/reader.js';
import { gateRepository } from '../src/stream.js';
import { RULE_IDS } from '../rules/index.js';
import { project } from './bench/synthetic.js';
import { ROOT } from './support/harness.js';
import { RUNS } from './support/fuzz-inputs.js';
import { codeBlock } from './support/code-block.js';

const kb = defaultKnowledgeBase();
const repoBaseline = readFileSync(join(ROOT, 'examples', 'platform-team.yaml'), 'utf8');
const waivers = codeBlock`
  waivers:
    - rule: cuda-not-allowed
      repo: octo/mono
      path: p1/
      reason: the fleet runs an older driver here
      owner: ml-platform
      expires: 2026-12-31
    - rule: companion-mismatch
      repo: mono
      reason: rebuilt in-house
      owner: ml-platform
      expires: 2026-01-01
`;
const policy = loadBaseline('baseline.yaml', `${repoBaseline}\n${waivers}`, RULE_IDS);
const options = { policy, repository: 'octo/mono', today: '2026-11-30' };

const whole = (sources: readonly SourceFile[]) =>
  gate(
    sources.map((source) => parseFile(source.path, source.text, source.kind)),
    policy.baseline,
    kb,
    options,
  );
/** gateRepository over texts in memory, all of them given as the paths to check. */
const inParts = (sources: readonly SourceFile[], windowFiles?: number) =>
  gateRepository(
    sources.map((source) => ({ path: source.path, kind: source.kind })),
    sourceReader(sources),
    policy.baseline,
    kb,
    { ...options, ...(windowFiles ? { windowFiles } : {}) },
  ).report;

function synthetic(projects: number): SourceFile[] {
  const sources = Array.from({ length: projects }, (_, i) =>
    Object.entries(project(i)).map(([name, text]): SourceFile => {
      // Every seventh project installs a shared file that sits at the end of the list, every eleventh one at the start.
      const shared =
        name === 'requirements.txt' && i % 7 === 0
          ? '-r ../zz/shared.txt\n'
          : name === 'requirements.txt' && i % 11 === 3
            ? '-r ../aa/first.txt\n'
            : '';
      return { path: `p${i}/${name}`, kind: classifyPath(name)!, text: shared + text };
    }),
  ).flat();
  return [
    {
      path: 'aa/first.txt',
      kind: 'requirements',
      text: codeBlock`
        torch==2.3.1 # cuda-gatekeeper: ignore[exact-pin] pinned elsewhere
        torchvision
      `,
    },
    ...sources,
    {
      path: 'zz/shared.txt',
      kind: 'requirements',
      text: codeBlock`
        torch==2.6.0+cu121
        nvidia-cudnn-cu12==9.1.0.70
      `,
    },
  ];
}

describe('gateRepository', () => {
  it("gives gate()'s report for a monorepo in its own order, reversed and in small windows", () => {
    const sources = synthetic(60);
    const expected = whole(sources);
    expect(expected.findings.length).toBeGreaterThan(100);
    expect(expected.waived).toBeGreaterThan(0);
    expect(expected.findings.some((finding) => finding.messageId === 'waiverExpired')).toBe(true);
    // (A finding about a shared file names the first unit that reported it, so the order of the files matters.)
    const reversed = [...sources].reverse();
    const expectedReversed = whole(reversed);
    for (const windowFiles of [1, 5, 64, 256]) {
      expect(inParts(sources, windowFiles)).toEqual(expected);
      expect(inParts(reversed, windowFiles)).toEqual(expectedReversed);
    }
  });

  it('parses nothing twice when each project sits in a directory of its own, wherever the windows fall', () => {
    // Five files a project: windows of 16 files end inside projects, often just before environment.yml, which
    // installs requirements-base.txt. Checking the rest of the project at that point would be undone by it.
    const sources = Array.from({ length: 40 }, (_, i) =>
      Object.entries(project(i)).map(
        ([name, text]): SourceFile => ({ path: `p${i}/${name}`, kind: classifyPath(name)!, text }),
      ),
    ).flat();
    const expected = whole(sources);
    for (const windowFiles of [3, 7, 16]) {
      const checked = gateRepository(
        sources.map((source) => ({ path: source.path, kind: source.kind })),
        sourceReader(sources),
        policy.baseline,
        kb,
        { ...options, windowFiles },
      );
      expect(checked.report).toEqual(expected);
      expect(checked.parsedAgain).toBe(0);
    }
  });

  it('checks a group again, whole, when a later file includes a file checked earlier', () => {
    const sources: SourceFile[] = [
      {
        path: 'requirements.txt',
        kind: 'requirements',
        text: codeBlock`
          torch==2.3.1+cu118
          torchvision==0.18.1
        `,
      },
      { path: 'requirements-dev.txt', kind: 'requirements', text: 'pytest==8.2.2\n' },
      {
        path: 'services/api/Dockerfile',
        kind: 'dockerfile',
        text: codeBlock`
          FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
          COPY requirements.txt /app/
          RUN pip install -r /app/requirements.txt
        `,
      },
    ];
    // On its own the requirements file is its own unit; installed by the Dockerfile it is part of the stage's, and
    // its findings differ. With a window of one file, requirements.txt is complete (it includes nothing) and is
    // checked before the Dockerfile is read: only checking the joined group again gives gate()'s findings.
    const about = (report: ReturnType<typeof gate>) =>
      report.findings.filter((finding) => finding.location.path === 'requirements.txt');
    const alone = gate([parseFile('requirements.txt', sources[0]!.text, 'requirements')], policy.baseline, kb, options);
    const expected = whole(sources);
    expect(about(expected)).not.toEqual(about(alone));
    expect(inParts(sources, 1)).toEqual(expected);
  });

  it("gives gate()'s report for random repositories with includes in every direction, in any order and window", () => {
    const names = [
      'a/requirements.txt',
      'a/base.txt',
      'b/requirements.txt',
      'b/Dockerfile',
      'environment.yml',
      'c/constraints.txt',
      'requirements.txt',
    ];
    const kindOf = (path: string): FileKind => classifyPath(path.split('/').pop()!) ?? 'requirements';
    const requirement = fc.constantFrom(
      'torch==2.3.1+cu121',
      'torch==2.6.0',
      'torchvision',
      'torchvision==0.18.1',
      'nvidia-cudnn-cu12==9.1.0.70',
      'numpy>=1 # cuda-gatekeeper: ignore[exact-pin] ok',
      '--extra-index-url https://download.pytorch.org/whl/cu124',
    );
    const file = (path: string) =>
      fc
        .tuple(
          fc.array(fc.constantFrom(...names), { maxLength: 2 }),
          fc.array(requirement, { maxLength: 4 }),
          fc.constantFrom('12.1.1', '12.4.1', '11.8.0'),
        )
        .map(([targets, lines, cuda]): SourceFile => {
          const relative = (target: string) => (path.includes('/') ? `../${target}` : target);
          if (path.endsWith('Dockerfile')) {
            const copies = targets
              .map(
                (target) =>
                  `COPY ${relative(target)} /deps/${target.replace(/\//g, '_')}\nRUN pip install -r /deps/${target.replace(/\//g, '_')}\n`,
              )
              .join('');
            return {
              path,
              kind: 'dockerfile',
              text: `FROM nvidia/cuda:${cuda}-devel-ubuntu22.04\n${copies}RUN pip install ${lines.filter((line) => !line.startsWith('-') && !line.includes('#')).join(' ') || 'numpy==1.26.4'}\n`,
            };
          }
          if (path.endsWith('.yml'))
            return {
              path,
              kind: 'conda',
              text: `dependencies:\n  - cuda-version=${cuda.slice(0, 4)}\n  - pip:\n${targets.map((target) => `      - -r ${target}\n`).join('')}`,
            };
          return {
            path,
            kind: kindOf(path),
            text: `${targets.map((target) => `-r ${relative(target)}\n`).join('')}${lines.join('\n')}\n`,
          };
        });
    const repository = fc
      .tuple(...names.map(file))
      .chain((files) => fc.tuple(fc.shuffledSubarray(files, { minLength: 1 }), fc.integer({ min: 1, max: 8 })));
    assertProperty(
      fc.property(repository, ([sources, windowFiles]) => {
        expect(inParts(sources, windowFiles)).toEqual(whole(sources));
      }),
      { numRuns: Math.min(RUNS, 300) },
    );
  });

  it("reads the files includes lead to, once each and in the order the CLI always read them, and gives gate()'s report over them", () => {
    // A repository on "disk": every file exists, some cannot be read (binary, too large, a link out), and the
    // check starts from some of them. b/Dockerfile's COPY requirements.txt may be b/requirements.txt or the
    // top-level requirements.txt: when the first cannot be read, gate() links the include to the second.
    const names = [
      'requirements.txt',
      'b/requirements.txt',
      'b/Dockerfile',
      'b/base.txt',
      'c/constraints.txt',
      'environment.yml',
    ];
    const requirement = fc.constantFrom(
      'torch==2.3.1+cu121',
      'torch==2.6.0',
      'torchvision',
      'torchvision==0.18.1',
      'numpy>=1 # cuda-gatekeeper: ignore[exact-pin] ok',
    );
    const text = (path: string) =>
      fc
        .tuple(
          fc.subarray(['requirements.txt', 'b/base.txt', 'c/constraints.txt']),
          fc.array(requirement, { maxLength: 3 }),
        )
        .map(([targets, lines]) => {
          if (path === 'b/Dockerfile')
            return `FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nCOPY requirements.txt /deps/r.txt\nRUN pip install -r /deps/r.txt\n${targets.map((target) => `COPY ../${target} /deps/${target.replace(/\//g, '_')}\nRUN pip install -r /deps/${target.replace(/\//g, '_')}\n`).join('')}`;
          if (path.endsWith('.yml'))
            return `dependencies:\n  - cuda-version=12.4\n  - pip:\n${targets.map((target) => `      - -r ${target}\n`).join('')}`;
          const up = path.includes('/') ? '../' : '';
          return `${targets.map((target) => `-r ${up}${target}\n`).join('')}${lines.join('\n')}\n`;
        });
    const repository = fc.record({
      texts: fc.tuple(...names.map(text)),
      unreadable: fc.subarray(names),
      start: fc.shuffledSubarray(names, { minLength: 1 }),
      follow: fc.boolean(),
      windowFiles: fc.integer({ min: 1, max: 4 }),
    });
    assertProperty(
      fc.property(repository, ({ texts, unreadable, start, follow, windowFiles }) => {
        const files = new Map(names.map((path, i) => [path, texts[i]!]));
        const reader: RepositoryReader = {
          read: (path) =>
            files.has(path) && !unreadable.includes(path)
              ? {
                  path,
                  kind: path.endsWith('Dockerfile') ? 'dockerfile' : path.endsWith('.yml') ? 'conda' : 'requirements',
                  text: files.get(path)!,
                }
              : undefined,
          isFile: (path) => files.has(path),
        };
        const read = [...readRepository(kinded(start), reader, follow)].map((file) => file.source);
        expect(read.map((source) => source.path)).toEqual(readTheOldWay(start, reader, follow));
        const checked = gateRepository(kinded(start), reader, policy.baseline, kb, { ...options, follow, windowFiles });
        expect(checked.sources).toEqual(read);
        expect(checked.report).toEqual(whole(read));
      }),
      { numRuns: Math.min(RUNS, 300) },
    );
  });

  it('links an include whose first candidate cannot be read to the next one read, as gate() does', () => {
    // b/Dockerfile's COPY requirements.txt is b/requirements.txt if that can be read, else the top-level file.
    // The top-level file is checked on its own first (window of one file); the Dockerfile's include can only be
    // linked to it once it is known that b/requirements.txt will never be read, and that spoils the check.
    const files: SourceFile[] = [
      { path: 'requirements.txt', kind: 'requirements', text: 'torch==2.3.1+cu121\n' },
      {
        path: 'b/Dockerfile',
        kind: 'dockerfile',
        text: codeBlock`
          FROM nvidia/cuda:12.4.1-devel-ubuntu22.04
          COPY requirements.txt /deps/r.txt
          RUN pip install -r /deps/r.txt
        `,
      },
    ];
    const reader: RepositoryReader = {
      ...sourceReader(files),
      isFile: (path) => path === 'b/requirements.txt' || files.some((file) => file.path === path),
    };
    const checked = gateRepository(listed(['requirements.txt', 'b/Dockerfile']), reader, policy.baseline, kb, {
      ...options,
      windowFiles: 1,
    });
    expect(checked.sources).toEqual(files);
    expect(
      checked.report.findings.some(
        (finding) => finding.ruleId === 'cuda-mismatch' && finding.location.path === 'requirements.txt',
      ),
    ).toBe(true);
    expect(checked.report).toEqual(whole(files));
  });

  it('reads a file a COPY renames by the name it is installed by (FastVideo: pyproject_other.toml as pyproject.toml)', () => {
    const files = new Map([
      [
        'Dockerfile',
        'FROM rocm/dev-ubuntu-22.04\nWORKDIR /app\nCOPY pyproject_other.toml ./pyproject.toml\nRUN pip install -e ".[rocm]"\n',
      ],
      ['pyproject_other.toml', '[project]\nname = "app"\nversion = "0.1.0"\ndependencies = ["numpy==1.26.4"]\n'],
    ]);
    const reader: RepositoryReader = {
      read: (path, kind) =>
        files.has(path) ? { path, kind: kind ?? 'dockerfile', text: files.get(path)! } : undefined,
      isFile: (path) => files.has(path),
    };
    const read = [...readRepository(kinded(['Dockerfile']), reader, true)].map((file) => file.source);
    expect(read.map((source) => `${source.path} ${source.kind}`)).toEqual([
      'Dockerfile dockerfile',
      'pyproject_other.toml pyproject',
    ]);
  });

  it('refuses two files with one path', () => {
    const file: SourceFile = { path: 'requirements.txt', kind: 'requirements', text: 'torch==2.6.0\n' };
    expect(() => sourceReader([file, file])).toThrow(/two files have the path requirements.txt/);
  });
});

/** Paths with the kind the property's reader gives them. */
function kinded(paths: readonly string[]): Listed[] {
  return paths.map((path) => ({
    path,
    kind: path.endsWith('Dockerfile') ? 'dockerfile' : path.endsWith('.yml') ? 'conda' : 'requirements',
  }));
}

/**
 * The paths the CLI read before readRepository, by its own loop: follow an include to its first candidate that was seen
 * or is a file.
 */
function readTheOldWay(paths: readonly string[], reader: RepositoryReader, follow: boolean): string[] {
  const read: string[] = [];
  const seen = new Set<string>();
  const queue = [...paths];
  for (let next = 0; next < queue.length; next++) {
    const path = queue[next]!;
    if (seen.has(path)) continue;
    seen.add(path);
    const source = reader.read(path, kinded([path])[0]!.kind);
    if (!source) continue;
    read.push(path);
    if (!follow) continue;
    const parsed = parseFile(source.path, source.text, source.kind);
    for (const include of parsed.includes) {
      for (const candidate of includeCandidates(parsed, include)) {
        if (seen.has(candidate)) break;
        if (reader.isFile(candidate)) {
          queue.push(candidate);
          break;
        }
      }
    }
  }
  return read;
}
