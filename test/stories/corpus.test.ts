/**
 * The real-world corpus (../shared/corpus): every file parses without problems, yields the facts its README
 * describes, and the gate's findings match the reviewer's reading where the reading depends on our rules.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EMPTY_BASELINE, type Baseline } from '../../src/baseline/schema.js';
import type { FileKind, ParsedFile } from '../../src/parsers/facts.js';
import type { Finding } from '../../src/finding.js';
import { gate } from '../../src/gate.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import { classifyPath, parseFile, sniffKind } from '../../src/parsers/index.js';
import { CORPUS } from '../support/harness.js';

const kb = defaultKnowledgeBase();

/** A corpus file's kind: by the name it has in its repository (the part after owner__repo__), else by content. */
function kindOf(name: string, text: string): FileKind {
  const path = name.split('__').slice(3).join('__').replace(/_/g, '/');
  return classifyPath(path) ?? classifyPath(name) ?? sniffKind(text)!;
}

function load(prefix: string): ParsedFile {
  const name = readdirSync(CORPUS).find((file) => file.startsWith(`${prefix}__`))!;
  const text = readFileSync(join(CORPUS, name), 'utf8');
  return parseFile(name, text, kindOf(name, text));
}

function lineOf(file: ParsedFile, name: string): number | undefined {
  const pkg = file.packages.find((candidate) => candidate.name === name);
  return pkg ? file.source.position(pkg.span.start).line : undefined;
}

function findings(file: ParsedFile, baseline: Baseline = EMPTY_BASELINE, rule?: string): Finding[] {
  return gate([file], baseline, kb).findings.filter((finding) => !rule || finding.ruleId === rule);
}

const lines = (list: readonly Finding[]): number[] => list.map((finding) => finding.location.start.line);
const exact: Baseline = { ...EMPTY_BASELINE, pinning: { python: 'exact', images: 'none', packages: [] } };

describe('real-world corpus', () => {
  it('parses every file without a problem or a crash', () => {
    for (const name of readdirSync(CORPUS).filter((file) => file !== 'README.md' && file !== 'expect.json')) {
      const text = readFileSync(join(CORPUS, name), 'utf8');
      const parsed = parseFile(name, text, kindOf(name, text));
      expect(parsed.problems, name).toEqual([]);
      if (parsed.kind !== 'dockerfile') expect(parsed.packages.length, name).toBeGreaterThan(0);
    }
  });

  it('22 nvImageCodec cu13: a cu124 index in a CUDA 13 file, unpinned torch', () => {
    const file = load('22');
    expect(file.indexes.map((index) => [index.kind, file.source.position(index.span.start).line])).toEqual([
      ['extra-index-url', 1],
      ['extra-index-url', 28],
    ]);
    expect(lineOf(file, 'torch')).toBe(8);
    expect(file.packages.find((pkg) => pkg.name === 'torch')?.markers).toContain('python_version');
    const mismatch = findings(file, EMPTY_BASELINE, 'cuda-mismatch');
    expect(lines(mismatch)).toEqual([1]);
    expect(mismatch[0]!.severity).toBe('error');
    expect(lines(findings(file, exact, 'exact-pin'))).toEqual(expect.arrayContaining([8, 9, 29, 30, 31, 32, 33]));
  });

  it('23 nvImageCodec cu12: consistent; the commented runtime pin is not a package', () => {
    const file = load('23');
    expect(file.packages.find((pkg) => pkg.name === 'torch')?.exact).toBe('2.6.0+cu124');
    expect(file.packages.filter((pkg) => pkg.name === 'nvidia-cuda-runtime-cu12').map((pkg) => pkg.exact)).toEqual([
      '12.4.127',
    ]);
    expect(findings(file, EMPTY_BASELINE, 'cuda-mismatch')).toEqual([]);
  });

  it('24 nvImageCodec cu11: consistent CUDA 11 family including TensorFlow 2.10', () => {
    const file = load('24');
    expect(lineOf(file, 'tensorflow')).toBe(21);
    expect(findings(file, EMPTY_BASELINE, 'cuda-mismatch')).toEqual([]);
  });

  it('25 nvImageCodec cu13 (old): CUDA 13 libraries mixed into a CUDA 12.4 set', () => {
    const mismatch = findings(load('25'), EMPTY_BASELINE, 'cuda-mismatch');
    expect(lines(mismatch)).toEqual([16, 17, 18]);
    expect(
      mismatch.every((finding) => finding.severity === 'error' && finding.related[0]?.location.start.line === 6),
    ).toBe(true);
  });

  it('26/27 stable-diffusion and ControlNet: consistent cudatoolkit 11.3 environments', () => {
    for (const prefix of ['26', '27']) {
      const file = load(prefix);
      expect(file.packages.find((pkg) => pkg.name === 'cudatoolkit')?.exact).toBe('11.3');
      expect(findings(file)).toEqual([]);
    }
  });

  it('28 dinov2 conda: channel-prefixed specs and a zero-padded pytorch-cuda', () => {
    const file = load('28');
    const cuda = file.packages.find((pkg) => pkg.name === 'pytorch-cuda')!;
    expect([cuda.channel, cuda.exact, file.source.position(cuda.span.start).line]).toEqual(['pytorch', '11.7.0', 11]);
    expect(
      file.indexes.some((index) => index.kind === 'extra-index-url' && index.url === 'https://pypi.nvidia.com'),
    ).toBe(true);
    expect(findings(file)).toEqual([]);
  });

  it('29 dinov2 requirements: cu117 extra index with exact pins the index has: pip takes the cu117 builds, nothing to say', () => {
    // torch==2.0.0 matches 2.0.0+cu117 on the index, which sorts above PyPI's 2.0.0 (PEP 440 local versions).
    expect(findings(load('29'))).toEqual([]);
  });

  it('33/34 torchopt recipes: spaced MatchSpecs, build globs, unpinned pytorch', () => {
    const head = load('33');
    expect(head.packages.find((pkg) => pkg.name === 'pytorch-mutex')?.build).toBe('*cuda*');
    expect(head.packages.find((pkg) => pkg.name === 'cuda-toolkit')?.channel).toBe('nvidia/label/cuda-12.1.0');
    expect(lines(findings(head, exact, 'exact-pin'))).toEqual(expect.arrayContaining([34, 35]));
    const old = load('34');
    expect(old.packages.find((pkg) => pkg.name === 'jaxlib')?.build).toBe('*cuda*');
    expect(findings(old, EMPTY_BASELINE, 'cuda-mismatch')).toEqual([]);
  });

  it("38 whisperX: unpinned torch, a faster-whisper of CUDA 12 beside today's CUDA 13 torch", () => {
    const file = load('38');
    // ctranslate2 loads CUDA 11's cuBLAS before 4.0 and CUDA 12's from 4.0: `<4.5.0` admits both (faster-whisper 1.1.0
    // narrows it to 4.x, which only a resolver works out), so a baseline that asks for exact pins names it too.
    expect(lines(findings(file, exact, 'exact-pin'))).toEqual([1, 2, 4]);
    // faster-whisper 1.1.0's ctranslate2 loads CUDA 12's cuBLAS, and `torch>=2` is today a CUDA 13 build: a warning,
    // not an error, since a machine with CUDA 12's libraries too runs both (nothing here says the machine's CUDA).
    const mismatch = findings(file);
    expect(mismatch.map((finding) => [finding.ruleId, finding.severity, finding.location.start.line])).toEqual([
      ['cuda-mismatch', 'warning', 3],
    ]);
  });

  it('53 oobabooga: cu124 and cu128 wheels mixed; wildcards are not exact', () => {
    const file = load('53');
    const mismatch = findings(file, EMPTY_BASELINE, 'cuda-mismatch');
    // The target is CUDA 12.8: xformers 0.0.33.post2 requires torch 2.9.1, PyPI's cu128 build (the torch one_click.py
    // installs), as exllamav3's and flash-attn's wheels are; the cu124 llama.cpp wheels for Linux (L47, L49) are the
    // ones of another CUDA. Their Windows twins (`platform_system == "Windows"`) never install on Linux.
    expect(lines(mismatch)).toEqual([47, 49]);
    expect(mismatch.every((finding) => finding.severity === 'warning')).toBe(true);
    expect(findings(file, exact, 'exact-pin').map((finding) => finding.message)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('bitsandbytes==0.49.*'),
        expect.stringContaining('torchao==0.15.*'),
      ]),
    );
  });

  it('56 detectron2 docs: CPU wheels by URL, no CUDA, nothing to report', () => {
    const file = load('56');
    expect(file.packages.find((pkg) => pkg.name === 'torch')?.localLabel).toBe('cpu');
    expect(findings(file)).toEqual([]);
  });

  it('61 Fooocus: PyPI torch 2.1.0 is the cu121 build, consistent on its own', () => {
    expect(findings(load('61'))).toEqual([]);
  });

  it('67 SuGaR: exported environment with build strings is consistent; CUDA 11.8 needs driver 520.61.05', () => {
    const file = load('67');
    expect(file.packages.find((pkg) => pkg.name === 'pytorch')?.build).toBe('py3.9_cuda11.8_cudnn8.7.0_0');
    expect(findings(file)).toEqual([]);
    const old: Baseline = { ...EMPTY_BASELINE, driver: { minimum: '515.65.01' } };
    const floor = findings(file, old, 'driver-floor');
    expect(floor.length).toBeGreaterThan(0);
    expect(floor[0]!.message).toContain('520.61.05');
    expect(floor[0]!.severity).toBe('warning');
  });
});
