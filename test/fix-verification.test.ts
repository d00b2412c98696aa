/**
 * Fixes verified before they are offered (issue 15), as properties over every rule fixture and every real file of
 * fixtures/corpus: applying all the safe fixes of a report never adds a finding of any level, and `plan --write` to
 * each CUDA that PyTorch builds for never adds an error. Plus the cases the audit found, where a "safe" fix wrote a
 * build that does not exist.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyEdits } from '../src/analysis/edits.js';
import { loadBaseline } from '../src/baseline/load.js';
import { EMPTY_BASELINE, type Baseline } from '../src/baseline/schema.js';
import type { ParsedFile } from '../src/parsers/facts.js';
import type { Finding } from '../src/finding.js';
import { gate, type GateOptions } from '../src/gate.js';
import { defaultKnowledgeBase } from '../src/knowledge/index.js';
import { classifyPath, parseFile, sniffKind } from '../src/parsers/index.js';
import { plan } from '../src/plan/plan.js';
import { ALONE_PER_GROUP, merged, overlaps, verifyFixes } from '../src/verify.js';
import { RULE_IDS } from '../rules/index.js';
import { CORPUS, inputPaths, ROOT } from './support/harness.js';
import { codeBlock } from './support/code-block.js';

const kb = defaultKnowledgeBase();

interface Case {
  readonly name: string;
  readonly files: ParsedFile[];
  readonly baseline: Baseline;
  readonly options: GateOptions;
}

function parse(path: string, text: string): ParsedFile {
  return parseFile(path, text, classifyPath(path) ?? sniffKind(text) ?? 'requirements');
}

function fixtureCases(): Case[] {
  const root = join(ROOT, 'fixtures', 'rules');
  const cases: Case[] = [];
  for (const rule of readdirSync(root).sort()) {
    for (const name of readdirSync(join(root, rule)).sort()) {
      const dir = join(root, rule, name);
      const files = inputPaths(dir).map((path) => parse(path, readFileSync(join(dir, path), 'utf8')));
      const baselinePath = join(dir, 'baseline.yaml');
      const policy = existsSync(baselinePath)
        ? loadBaseline('baseline.yaml', readFileSync(baselinePath, 'utf8'), RULE_IDS)
        : undefined;
      const removedPath = join(dir, 'removed.txt');
      const removed = existsSync(removedPath) ? readFileSync(removedPath, 'utf8').split('\n').filter(Boolean) : [];
      cases.push({
        name: `${rule}/${name}`,
        files,
        baseline: policy?.baseline ?? EMPTY_BASELINE,
        options: { ...(policy ? { policy } : {}), removed },
      });
    }
  }
  return cases;
}

function corpusCases(baseline: Baseline = EMPTY_BASELINE): Case[] {
  const expectations = JSON.parse(readFileSync(join(CORPUS, 'expect.json'), 'utf8')) as Record<
    string,
    { path: string; with?: Record<string, string> }
  >;
  return Object.entries(expectations).map(([name, entry]) => ({
    name,
    files: [[name, entry.path], ...Object.entries(entry.with ?? {})].map(([file, path]) =>
      parse(path!, readFileSync(join(CORPUS, file!), 'utf8')),
    ),
    baseline,
    options: {},
  }));
}

const key = (finding: Finding): string =>
  `${finding.ruleId} ${finding.severity} ${finding.location.path}: ${finding.message}`;

/** Findings of `after` that `before` does not have (as many times). */
function added(before: readonly Finding[], after: readonly Finding[]): string[] {
  const left = before.map(key);
  const out: string[] = [];
  for (const finding of after) {
    const at = left.indexOf(key(finding));
    if (at >= 0) left.splice(at, 1);
    else out.push(key(finding));
  }
  return out;
}

function applied(files: readonly ParsedFile[], edits: Parameters<typeof applyEdits>[1]): ParsedFile[] {
  return files.map((file) => {
    const own = edits.filter((edit) => edit.path === file.path);
    return own.length === 0 ? file : parseFile(file.path, applyEdits(file.source.text, own), file.kind);
  });
}

function verified(c: Case): Finding[] {
  const regate = (subset: readonly ParsedFile[]) => gate(subset, c.baseline, kb, c.options);
  return [...verifyFixes(regate(c.files), c.files, regate).findings];
}

describe('applying every safe fix never adds a finding', () => {
  const cases = [...fixtureCases(), ...corpusCases()];
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const before = verified(c);
    const safe = before.flatMap((finding) => (finding.fix?.safety === 'safe' ? finding.fix.edits : []));
    expect(overlaps(safe), 'the safe fixes do not overlap').toEqual([]);
    const edits = merged(safe);
    const after = gate(applied(c.files, edits!), c.baseline, kb, c.options).findings;
    expect(added(before, after)).toEqual([]);
  });
});

const SUPPORTED = [...new Set(kb.torchReleases().flatMap((release) => release.variants))]
  .filter((tag) => /^cu1[1-3]\d$/.test(tag))
  .map((tag) => `${tag.slice(2, 4)}.${tag.slice(4)}`)
  .filter((cuda) => kb.cudaExists(cuda) !== 'no' && Number.parseFloat(cuda) >= 11.8);

describe('plan --write never adds an error', () => {
  it.each(corpusCases().map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const errors = (files: readonly ParsedFile[]) =>
      gate(files, c.baseline, kb).findings.filter((finding) => finding.severity === 'error');
    const before = errors(c.files);
    for (const cuda of SUPPORTED) {
      const result = plan(c.files, cuda, kb, c.baseline);
      const planned = result.steps.flatMap((step) => step.edits ?? []);
      expect(overlaps(planned), `plan --cuda ${cuda}: edits do not overlap`).toEqual([]);
      const edits = merged(planned);
      expect(added(before, errors(applied(c.files, edits!))), `plan --cuda ${cuda}`).toEqual([]);
    }
  });
});

describe('the "safe" fixes the audit caught writing builds that do not exist', () => {
  const check = (files: Record<string, string>): Finding[] => {
    const parsed = Object.entries(files).map(([path, text]) => parse(path, text));
    return verified({ name: 'probe', files: parsed, baseline: EMPTY_BASELINE, options: {} });
  };
  const safeTexts = (findings: readonly Finding[]): string[] =>
    findings.flatMap((finding) => (finding.fix?.safety === 'safe' ? finding.fix.edits.map((edit) => edit.text) : []));

  it('torch 2.6.0 under a CUDA 12.8 image is not relabelled +cu128 (2.6.0 has no cu128 build)', () => {
    const findings = check({
      Dockerfile: codeBlock`
        FROM nvidia/cuda:12.8.1-runtime-ubuntu24.04
        RUN pip install torch==2.6.0+cu124 torchvision==0.21.0+cu124 --index-url https://download.pytorch.org/whl/cu124
      `,
    });
    expect(safeTexts(findings)).toEqual([]);
    const torch = findings.find(
      (finding) => finding.ruleId === 'cuda-mismatch' && finding.message.startsWith('torch=='),
    );
    expect(torch?.suggestions?.map((option) => option.edits.map((edit) => edit.text))).toEqual([
      ['2.6.0+cu126', '0.21.0+cu126', '126'],
      ['2.7.1+cu128', '0.22.1+cu128', '128'],
    ]);
    // The index URL cannot move to cu128 without torch: no fix is offered for it either.
    expect(findings.find((finding) => finding.message.startsWith('--index-url'))?.fix).toBeUndefined();
  });

  it("a rule's safe fix that adds a finding is offered as unsafe, with what applying it gives", () => {
    // index-url would add the cu128 index that torchaudio's label asks for; cuda-mismatch moves torchaudio to cu126.
    const findings = check({
      'requirements.txt': codeBlock`
        --index-url https://download.pytorch.org/whl/cu126
        torch==2.7.1+cu126
        torchvision==0.22.1+cu126
        torchaudio==2.7.1+cu128
      `,
    });
    const index = findings.find((finding) => finding.ruleId === 'index-url');
    expect(index?.fix).toMatchObject({
      safety: 'unsafe',
      verification: expect.stringContaining('gives warning cuda-mismatch'),
    });
    expect(findings.find((finding) => finding.ruleId === 'cuda-mismatch')?.fix).toMatchObject({
      safety: 'safe',
      edits: [expect.objectContaining({ text: '126' })],
    });
  });

  it('torch==1.10.1+cu113 under a CUDA 11.6 image is not relabelled +cu116 (1.10.1 has no cu116 build)', () => {
    const findings = check({
      Dockerfile: codeBlock`
        FROM nvidia/cuda:11.6.2-cudnn8-runtime-ubuntu20.04
        RUN pip install torch==1.10.1+cu113 -f https://download.pytorch.org/whl/cu113/torch_stable.html
      `,
    });
    expect(safeTexts(findings).filter((text) => text.includes('116'))).toEqual([]);
  });
});

describe('many fixes in one group stay linear to verify, and stay sound', () => {
  // 40 stages, each with a torchvision of another torch and its safe fix: more than ALONE_PER_GROUP in one file.
  const stages = (n: number) =>
    Array.from(
      { length: n },
      (_, i) =>
        `FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04 AS s${i}\nRUN pip install torch==2.5.1+cu124 torchvision==0.19.0+cu124 --index-url https://download.pytorch.org/whl/cu124\n`,
    ).join('');

  it('fixes past the first ALONE_PER_GROUP are verified together, say so, and their result adds nothing', () => {
    const file = parse('Dockerfile', stages(40));
    const regate = (subset: readonly ParsedFile[]) => gate(subset, EMPTY_BASELINE, kb);
    let regates = 0;
    const report = verifyFixes(regate([file]), [file], (subset) => (regates++, regate(subset)));
    const safe = report.findings.filter((finding) => finding.fix?.safety === 'safe');
    expect(safe).toHaveLength(40);
    expect(safe.filter((finding) => finding.fix!.verification?.includes('not checked alone'))).toHaveLength(
      40 - ALONE_PER_GROUP,
    );
    // ALONE_PER_GROUP alone, once all of those together, once the block of the others with them.
    expect(regates).toBe(ALONE_PER_GROUP + 2);
    const fixed = parse(
      'Dockerfile',
      applyEdits(file.source.text, merged(safe.flatMap((finding) => finding.fix!.edits))!),
    );
    expect(regate([fixed]).findings.filter((finding) => finding.ruleId === 'companion-mismatch')).toEqual([]);
  });

  it('a fix in a block that adds a finding is found by halving the block, and only it is refused', () => {
    const file = parse('Dockerfile', stages(40));
    const real = (subset: readonly ParsedFile[]) => gate(subset, EMPTY_BASELINE, kb);
    const report = real([file]);
    // A re-check that finds something new whenever stage 37's fix is applied (a stand-in for a conflict no rule
    // here can produce on demand): verification must pin it on that fix alone.
    const target = report.findings.filter((finding) => finding.fix?.safety === 'safe')[37]!;
    const marker = target.fix!.edits[0]!;
    const withConflict = (subset: readonly ParsedFile[]): ReturnType<typeof real> => {
      const result = real(subset);
      const applied =
        subset[0]!.source.text.slice(marker.range[0], marker.range[0] + marker.text.length) === marker.text;
      if (!applied) return result;
      const extra: Finding = { ...target, ruleId: 'index-url', message: 'a conflict', fix: undefined };
      return { ...result, findings: [...result.findings, extra] };
    };
    const verified = verifyFixes(report, [file], withConflict);
    const unsafe = verified.findings.filter((finding) => finding.fix?.safety === 'unsafe');
    expect(unsafe.map((finding) => finding.location.start.line)).toEqual([target.location.start.line]);
    expect(verified.findings.filter((finding) => finding.fix?.safety === 'safe')).toHaveLength(39);
  });
});
