/**
 * Real GPU manifests and Dockerfiles from public projects (fixtures/images/real, SOURCES.md there): every image a
 * fleet verdict needs is either judged (its CUDA known, or known to be none) or said to be unknown at its line, with
 * the reason. Never silence. (scripts/measure-images.ts prints how many are known offline and with lookups.)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { imageCuda, imageWithoutCuda } from '../../src/analysis/claims.js';
import { loadBaseline } from '../../src/baseline/load.js';
import { gate } from '../../src/gate.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import type { ImageFact, ParsedFile } from '../../src/parsers/facts.js';
import { classifyPath, kindByContent, parseFile } from '../../src/parsers/index.js';
import { RULE_IDS } from '../../rules/index.js';

const ROOT = join(import.meta.dirname, '..', '..', 'fixtures', 'images', 'real');
const kb = defaultKnowledgeBase();
const { baseline } = loadBaseline(
  'baseline.yaml',
  'fleet:\n  pools:\n    - { name: h100, driver: "550.127.05", gpus: [H100], class: data-center }\n',
  RULE_IDS,
);

function read(folder: string): ParsedFile[] {
  return readdirSync(join(ROOT, folder))
    .filter((name) => !name.endsWith('.md'))
    .flatMap((name) => {
      const text = readFileSync(join(ROOT, folder, name), 'utf8');
      const kind = folder === 'dockerfiles' ? 'dockerfile' : (classifyPath(name) ?? kindByContent(name, text));
      return kind ? [parseFile(name, text, kind)] : [];
    });
}

const judged = (image: ImageFact) => imageCuda(image, kb) !== undefined || imageWithoutCuda(image, kb) !== undefined;

describe('real GPU images: judged or said, never silent', () => {
  it('reads every GPU document of the real manifests, or says it is not checked', () => {
    for (const file of read('manifests')) {
      const findings = gate([file], baseline, kb).findings;
      // A document that names nvidia.com/gpu with a count other than 0 (`nvidia.com/gpu: 0` asks for none).
      const gpuDocuments = file.source.text
        .split(/^---$/m)
        .filter((doc) => /nvidia\.com\/gpu(?!["']?[ \t]*:[ \t]*["']?0+["']?[ \t]*$)/m.test(doc)).length;
      const read = file.containers.some((container) => container.gpu);
      const said = findings.some((finding) => finding.messageId === 'notChecked');
      expect(read || said || gpuDocuments === 0, file.path).toBe(true);
    }
  });

  it.each(read('manifests').map((file) => [file.path, file] as const))('%s', (_path, file) => {
    const findings = gate([file], baseline, kb).findings;
    for (const container of file.containers.filter((candidate) => candidate.gpu)) {
      if (judged(container.image)) continue;
      // A placeholder image (`<image>`, a template) makes its document not checked, failing closed.
      if (container.image.unresolved) {
        expect(findings.some((finding) => finding.messageId === 'notChecked')).toBe(true);
        continue;
      }
      const line = file.source.location(container.span.start, container.span.end).start.line;
      expect(
        findings.some((finding) => finding.ruleId === 'image-unknown' && finding.location.start.line === line),
        `${container.workload} ${container.image.reference}`,
      ).toBe(true);
    }
  });

  it.each(read('dockerfiles').map((file) => [file.path, file] as const))('%s', (_path, file) => {
    const findings = gate([file], baseline, kb).findings;
    // The image the Dockerfile builds starts from its last stage's base: judged, or said (the fleet would run it).
    const last = file.images.at(-1)!;
    let base: ImageFact | undefined = last;
    while (base?.fromStage !== undefined) base = file.images.find((image) => image.stage === base!.fromStage);
    if (!base || base.unresolved || judged(base) || base.repository === 'scratch') return;
    const line = file.source.location(base.span.start, base.span.end).start.line;
    expect(
      findings.some((finding) => finding.ruleId === 'image-unknown' && finding.location.start.line === line),
      base.reference,
    ).toBe(true);
  });

  it('knows, offline, the NGC and vendor tags these projects use', () => {
    const known = read('dockerfiles')
      .flatMap((file) => file.images)
      .filter((image) => image.fromStage === undefined && imageCuda(image, kb))
      .map((image) => `${image.reference} ${imageCuda(image, kb)!.cuda}`);
    expect(known).toEqual(
      expect.arrayContaining([
        'nvcr.io/nvidia/pytorch:24.01-py3 12.3.2',
        'nvcr.io/nvidia/tritonserver:24.01-py3 12.3.2',
        'nvcr.io/nvidia/cuda-dl-base:26.06-cuda13.3-devel-ubuntu24.04 13.3.0',
        'lmsysorg/sglang:v0.5.16-cu129 12.9.1',
        'lmsysorg/sglang:v0.5.16 13.0.1',
      ]),
    );
  });
});
