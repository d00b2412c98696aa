/**
 * What the gate makes of images read from their registries (GateOptions.images): the config's CUDA_VERSION as the
 * image's CUDA, its NVIDIA_REQUIRE_* as the toolkit's start check, a registry's "no such tag", and adding a lookup
 * never hides a finding the snapshot gives.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBaseline } from '../../src/baseline/load.js';
import { gate } from '../../src/gate.js';
import { readImageConfig, type ImageConfig } from '../../src/images/config.js';
import type { ImageLookups } from '../../src/images/lookup.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import { parseFile } from '../../src/parsers/index.js';
import type { FileKind } from '../../src/parsers/facts.js';
import { RULE_IDS } from '../../rules/index.js';

const kb = defaultKnowledgeBase();
const CONFIGS = join(import.meta.dirname, '..', '..', 'fixtures', 'images', 'configs');

function config(name: string): ImageConfig {
  const read = readImageConfig(JSON.parse(readFileSync(join(CONFIGS, name), 'utf8')));
  if (typeof read === 'string') throw new Error(read);
  return read;
}

function check(files: Readonly<Record<string, [FileKind, string]>>, baselineText: string, images: ImageLookups = {}) {
  const policy = loadBaseline('baseline.yaml', baselineText, RULE_IDS);
  const parsed = Object.entries(files).map(([path, [kind, text]]) => parseFile(path, text, kind));
  return gate(parsed, policy.baseline, kb, { images }).findings.map(
    (finding) =>
      `${finding.location.path}:${finding.location.start.line}: ${finding.severity}: ${finding.message} [${finding.ruleId}]`,
  );
}

function gateHelp(files: Readonly<Record<string, [FileKind, string]>>, baselineText: string, images: ImageLookups) {
  const policy = loadBaseline('baseline.yaml', baselineText, RULE_IDS);
  const parsed = Object.entries(files).map(([path, [kind, text]]) => parseFile(path, text, kind));
  return gate(parsed, policy.baseline, kb, { images }).findings[0]?.help ?? '';
}

const read = (name: string, digest = `sha256:${'a'.repeat(64)}`) =>
  ({ state: 'read', registry: 'registry.example.com', digest, config: config(name), retrieved: '2026-12-05' }) as const;

describe('images read from their registries', () => {
  it('refuses, on a legacy GeForce pool, an image whose own NVIDIA_REQUIRE_CUDA no term of admits', () => {
    // CUDA 13.2.0, with brand terms for R535–R590 on data-center and professional brands, none for GeForce.
    const dockerfile = 'FROM registry.example.com/llm/serve:2026.06\n';
    const baseline = `fleet:
  pools:
    - { name: desk, driver: "580.95.05", gpus: [RTX 5090], class: geforce, runtime: legacy }
    - { name: dc, driver: "580.95.05", gpus: [B200], class: data-center, runtime: legacy }
`;
    const images = { 'registry.example.com/llm/serve:2026.06': read('vllm-build-on-nvidia-cuda-13.2.0-arm64.json') };
    const findings = check({ Dockerfile: ['dockerfile', dockerfile] }, baseline, images);
    // The B200 reports brand Unknown, which a term admits on R580; the RTX 5090 (GeForce) no term admits.
    expect(findings).toEqual([
      'Dockerfile:1: warning: registry.example.com/llm/serve:2026.06 needs CUDA 13.2: it runs on dc (minor-version compatibility), not on desk (driver 580.95.05) [driver-floor]',
    ]);
    const help = gateHelp({ Dockerfile: ['dockerfile', dockerfile] }, baseline, images);
    expect(help).toMatch(
      /desk: The NVIDIA Container Toolkit's legacy path .* refuses to start the container: "unsatisfied condition: cuda>=13\.2/,
    );
    expect(help).toContain("the image's config on registry.example.com");
    // Offline, the same image is unknown, and said so.
    expect(check({ Dockerfile: ['dockerfile', dockerfile] }, baseline)).toEqual([
      expect.stringMatching(
        /Dockerfile:1: notice: the CUDA of registry\.example\.com\/llm\/serve:2026\.06 is not known/,
      ),
    ]);
  });

  it('compares a base read from its registry with the CUDA builds installed on it', () => {
    const dockerfile =
      'FROM registry.example.com/ml/base:2024.01\nRUN pip install torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124\n';
    const images = { 'registry.example.com/ml/base:2024.01': read('anomalib-on-nvidia-cuda-11.4.0.json') };
    expect(check({ Dockerfile: ['dockerfile', dockerfile] }, '{}', images)).toContainEqual(
      expect.stringMatching(/^Dockerfile:2: error: .*torch==2\.5\.1\+cu124.*CUDA 12\.4.*11\.4.*\[cuda-mismatch\]$/),
    );
  });

  it("says a config without CUDA_VERSION at notice in a GPU container, and needs none for a stage's wheels", () => {
    const images = {
      'registry.example.com/tools/python:3.12': {
        ...read('vllm-vllm-openai-v0.8.5.json'),
        config: { env: { PATH: '/usr/bin' }, labels: {}, platform: 'linux/amd64' },
      },
    };
    const job = `apiVersion: batch/v1
kind: Job
metadata: { name: t }
spec:
  template:
    spec:
      containers:
        - name: t
          image: registry.example.com/tools/python:3.12
          resources: { limits: { nvidia.com/gpu: 1 } }
`;
    expect(check({ 'job.yaml': ['kubernetes', job] }, '{}', images)).toEqual([
      expect.stringMatching(/notice: .*sets no CUDA_VERSION.*\[image-unknown\]$/),
    ]);
    const dockerfile =
      'FROM registry.example.com/tools/python:3.12\nRUN pip install torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124\n';
    expect(check({ Dockerfile: ['dockerfile', dockerfile] }, '{}', images)).toEqual([]);
  });

  it('reports a tag the registry says it does not have, once', () => {
    const job = 'FROM vllm/vllm-openai:v0.99.0\n';
    const images: ImageLookups = {
      'docker.io/vllm/vllm-openai:v0.99.0': {
        state: 'missing',
        registry: 'docker.io',
        reason: 'docker.io has no tag v0.99.0 of vllm/vllm-openai (404 manifest unknown)',
      },
    };
    expect(check({ Dockerfile: ['dockerfile', job] }, '{}', images)).toEqual([
      'Dockerfile:1: error: vllm/vllm-openai:v0.99.0 does not exist: docker.io has no tag v0.99.0 of vllm/vllm-openai (404 manifest unknown) [image-missing]',
    ]);
  });

  it('never hides what the snapshot says: a lookup of a known tag adds nothing and takes nothing away', () => {
    const dockerfile = 'FROM nvcr.io/nvidia/tritonserver:25.10-py3\n';
    const baseline = 'driver:\n  minimum: "550.127.05"\n  forwardCompat: false\n';
    const offline = check({ Dockerfile: ['dockerfile', dockerfile] }, baseline);
    // A (wrong) config that claims an older CUDA: the release notes' row stands.
    const images = {
      'nvcr.io/nvidia/tritonserver:25.10-py3': {
        ...read('anomalib-on-nvidia-cuda-11.4.0.json'),
        registry: 'nvcr.io',
      },
    };
    expect(offline).toHaveLength(1);
    expect(check({ Dockerfile: ['dockerfile', dockerfile] }, baseline, images)).toEqual(offline);
  });
});
