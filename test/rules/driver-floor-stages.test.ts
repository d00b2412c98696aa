/** driver-floor judges what runs: a stage that only builds what another copies is a warning (sweep 9's toolkit). */
import { describe, expect, it } from 'vitest';
import { loadBaseline } from '../../src/baseline/load.js';
import { gate } from '../../src/gate.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import { parseFile } from '../../src/parsers/index.js';
import { RULE_IDS } from '../../rules/index.js';

const kb = defaultKnowledgeBase();
const { baseline } = loadBaseline(
  'baseline.yaml',
  'fleet:\n  pools:\n    - { name: old, driver: "470.256.02", gpus: [V100], class: data-center }\n',
  RULE_IDS,
);

function severities(dockerfile: string): string[] {
  const report = gate([parseFile('Dockerfile', dockerfile, 'dockerfile')], baseline, kb);
  return report.findings
    .filter((finding) => finding.ruleId === 'driver-floor')
    .map((finding) => `${finding.location.start.line} ${finding.severity}`);
}

describe('driver-floor on a multi-stage Dockerfile', () => {
  const build = 'FROM nvidia/cuda:12.4.1-devel-ubuntu22.04 AS build\nRUN make\n';

  it('warns of a stage that another stage only copies from', () => {
    expect(severities(`${build}FROM debian:12-slim\nCOPY --from=build /out /app\n`)).toEqual(['1 warning']);
  });

  it('still errs where the stage that runs has the same CUDA, reported at its own line', () => {
    expect(
      severities(`${build}FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nCOPY --from=build /out /app\n`).sort(),
    ).toEqual(['3 error']);
  });

  it("warns of a stage only built on by stages copied from (TEI's base-builder under builder)", () => {
    expect(
      severities(
        `${build}FROM build AS builder\nRUN cargo build\nFROM nvidia/cuda:12.8.1-runtime-ubuntu22.04\nCOPY --from=builder /out /app\n`,
      ),
    ).toEqual(['1 warning', '5 error']);
  });

  it('errs for a stage the last one is built on, and for the last stage itself', () => {
    expect(severities(`${build}FROM build AS app\nRUN true\n`)).toEqual(['1 error']);
    expect(severities(build)).toEqual(['1 error']);
  });

  it('says as a notice what the manifests run only without GPUs', () => {
    const withImages = loadBaseline(
      'baseline.yaml',
      'fleet:\n  pools:\n    - { name: old, driver: "470.256.02", gpus: [V100], class: data-center }\nimages:\n  ghcr.io/acme/cpu: Dockerfile\n',
      RULE_IDS,
    ).baseline;
    const job =
      'apiVersion: batch/v1\nkind: Job\nmetadata: { name: cpu }\nspec:\n  template:\n    spec:\n      containers:\n        - { name: main, image: ghcr.io/acme/cpu:1 }\n';
    const files = (gpu: boolean) => [
      parseFile('Dockerfile', 'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n', 'dockerfile'),
      parseFile(
        'job.yaml',
        gpu
          ? job.replace(
              'image: ghcr.io/acme/cpu:1',
              'image: ghcr.io/acme/cpu:1, resources: { limits: { nvidia.com/gpu: 1 } }',
            )
          : job,
        'kubernetes',
        { images: withImages.images },
      ),
    ];
    const found = (gpu: boolean) =>
      gate(files(gpu), withImages, kb)
        .findings.filter((finding) => finding.ruleId === 'driver-floor' && finding.location.path === 'Dockerfile')
        .map((finding) => finding.severity);
    expect(found(false)).toEqual(['notice']);
    expect(found(true)).toEqual(['error']);
  });
});
