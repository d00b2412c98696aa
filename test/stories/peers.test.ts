/**
 * The packaging tools' own test inputs (fixtures/peers: uv, pixi, Poetry, poetry-core, pip, buildkit, moby), byte
 * for byte, with each tool's verdict and what its test says it reads (fixtures/peers/index.json). What the tools
 * accept we read: no crash, no parse problem on an input the tool treats as valid, and the packages, indexes,
 * extras, groups and platforms its test states, except where the index says why we do not (a git or path
 * source, a platform other than Linux, the project itself).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EMPTY_BASELINE } from '../../src/baseline/schema.js';
import type { FileKind, ParsedFile } from '../../src/parsers/facts.js';
import { gate } from '../../src/gate.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import { parseFile } from '../../src/parsers/index.js';
import { normalizePythonName } from '../../src/parsers/python-requirement.js';
import { ROOT } from '../support/harness.js';

interface PeerInput {
  readonly project: string;
  readonly repo: string;
  readonly path: string;
  readonly commit: string;
  readonly licence: string;
  readonly file: string;
  readonly kind: FileKind;
  readonly verdict: 'valid' | 'rejected';
  readonly evidence: string;
  readonly states: {
    readonly packages?: readonly string[];
    readonly indexes?: readonly string[];
    readonly extras?: readonly string[];
    readonly groups?: readonly string[];
    readonly platforms?: readonly string[];
    readonly baseImages?: readonly string[];
  };
  /** What the tool states that we do not read (packages, indexes, extras and groups), each with the reason. */
  readonly notRead?: {
    readonly packages?: Readonly<Record<string, string>>;
    readonly indexes?: Readonly<Record<string, string>>;
    readonly selections?: Readonly<Record<string, string>>;
  };
  /** A valid input we report a problem on, and why that is right for what we check. */
  readonly weReport?: string;
  /** Named platforms (pixi.lock v7, pixi.toml tables) whose subdir is Linux. */
  readonly linuxPlatforms?: readonly string[];
}

const PEERS = join(ROOT, 'fixtures', 'peers');
const INPUTS = JSON.parse(readFileSync(join(PEERS, 'index.json'), 'utf8')) as PeerInput[];
const PYPI = 'https://pypi.org/simple';
const knowledge = defaultKnowledgeBase();

function read(input: PeerInput): ParsedFile {
  const text = readFileSync(join(PEERS, input.project, input.file), 'utf8');
  return parseFile(input.file.split('__').at(-1)!, text, input.kind);
}

const conda = (kind: FileKind) => kind === 'pixi' || kind === 'pixi-lock';
const key = (input: PeerInput, name: string) => (conda(input.kind) ? name.toLowerCase() : normalizePythonName(name));
const url = (text: string) => text.replace(/\/+$/, '');

describe('the peers’ own test inputs', () => {
  it('holds inputs of each permissively licensed peer, with their origin and verdict', () => {
    const perProject = new Map<string, number>();
    for (const input of INPUTS) {
      perProject.set(input.project, (perProject.get(input.project) ?? 0) + 1);
      expect(input.repo).toMatch(/^[\w.-]+\/[\w.-]+$/);
      expect(input.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(input.licence).not.toMatch(/GPL/);
    }
    expect(Object.fromEntries(perProject)).toEqual({
      uv: 18,
      pixi: 25,
      poetry: 16,
      'poetry-core': 11,
      pip: 20,
      buildkit: 17,
      moby: 6,
    });
  });

  for (const input of INPUTS) {
    describe(`${input.project}: ${input.path}${input.file.includes('.rs__') || input.file.includes('.py__') || input.file.includes('.go__') ? ` (${input.file.split('__').slice(-2, -1)[0]})` : ''}`, () => {
      it(`is read without a crash${input.verdict === 'valid' ? ' or a parse problem' : ''} (${input.verdict} for ${input.project})`, () => {
        const parsed = read(input);
        expect(parsed.problems.filter((problem) => problem.message.startsWith('internal error'))).toEqual([]);
        const report = gate([parsed], EMPTY_BASELINE, knowledge, {});
        expect(report.findings.every((finding) => finding.message.length > 0)).toBe(true);
        if (input.verdict === 'valid') {
          const problems = parsed.problems.map((problem) => problem.message);
          // Said as a problem, or as what is not checked (a Dockerfile with no FROM).
          if (input.weReport) expect(problems.length + parsed.unresolved.length, input.weReport).toBeGreaterThan(0);
          else expect(problems).toEqual([]);
        }
      });

      if (input.verdict !== 'valid') return;
      const { packages, indexes, extras, groups, platforms, baseImages } = input.states;
      if (baseImages?.length)
        it('reads the base images the peer states (parser directives, heredocs and escapes on the way)', () => {
          const ours = read(input).images.map((image) => image.reference);
          expect(ours).toEqual(baseImages);
        });
      const linux = (platforms ?? []).filter(
        (platform) => platform.startsWith('linux') || input.linuxPlatforms?.includes(platform),
      );
      // Only Linux is read (the CUDA checks are about the machines the images run on): nothing else to compare.
      const onLinux = !platforms?.length || linux.length > 0;
      const unread = (category: keyof NonNullable<PeerInput['notRead']>, missing: readonly string[]) =>
        expect(
          Object.fromEntries(
            missing.map((name) => [name, input.notRead?.[category]?.[name] ?? 'stated by the peer, not read by us']),
          ),
        ).toEqual(input.notRead?.[category] ?? {});

      if (packages?.length && onLinux)
        it('reads the packages the peer states, except those the index says we do not', () => {
          const ours = new Set(read(input).packages.map((pkg) => key(input, pkg.name)));
          unread(
            'packages',
            packages.filter((name) => !ours.has(key(input, name))),
          );
        });
      if (indexes?.length && onLinux)
        it('reads the indexes the peer states (PyPI is the default, not an index fact)', () => {
          const parsed = read(input);
          const ours = new Set([
            ...parsed.indexes.map((index) => url(index.url)),
            ...parsed.contexts.flatMap((context) => context.channels.map(url)),
          ]);
          unread(
            'indexes',
            indexes.filter((index) => url(index) !== PYPI && !ours.has(url(index))),
          );
        });
      if (extras?.length || groups?.length)
        it('reads each extra and group the peer states: a selection of its own, or a requirement’s extra', () => {
          const parsed = read(input);
          const variants = parsed.contexts.map((context) => context.variant ?? '');
          const selected = (name: string) =>
            variants.some((variant) => variant === name || variant.startsWith(`${name} `));
          const requested = new Set(parsed.packages.flatMap((pkg) => pkg.extras));
          unread('selections', [
            ...(extras ?? [])
              .filter((extra) => !selected(`extra ${extra}`) && !requested.has(extra))
              .map((extra) => `extra ${extra}`),
            ...(groups ?? []).filter((group) => !selected(`group ${group}`)).map((group) => `group ${group}`),
          ]);
        });
      if (platforms?.length)
        it('reads the Linux platforms the peer states, and no other', () => {
          const parsed = read(input);
          if (linux.length === 0) {
            expect(parsed.packages).toEqual([]);
            return;
          }
          expect(parsed.contexts.length).toBeGreaterThan(0);
          const variants = parsed.contexts.map((context) => context.variant ?? '');
          // One Linux platform: the variants are the environments; several that install different packages: each
          // selection names its platforms.
          const named = variants.some((variant) => / on /.test(variant));
          if (named)
            for (const platform of linux)
              expect(
                variants.some((variant) => variant.includes(platform)),
                platform,
              ).toBe(true);
        });
    });
  }
});
