/**
 * SkyPilot task YAML: found by its shape, its container and its commands' installs read as a stage's, positioned
 * where they are written.
 */
import { describe, expect, it } from 'vitest';
import { kindByContent } from '../../src/parsers/index.js';
import { parseSkypilot } from '../../src/parsers/skypilot/parse.js';
import { codeBlock } from '../support/code-block.js';

const TASK = codeBlock`
  envs:
    TORCH: 2.4.0
    HF_TOKEN: null
  resources:
    accelerators: H100:8
    image_id: docker:nvcr.io/nvidia/pytorch:25.10-py3
  setup: |
    pip install torch==\${TORCH}
    huggingface-cli login --token $HF_TOKEN
    bash install.sh
  run: |
    python train.py
`;

describe('a SkyPilot task', () => {
  it('is told by its shape from the other YAML files no name claims', () => {
    expect(kindByContent('sky/task.yaml', TASK)).toBe('skypilot');
    // A CI file's top-level `resources` is no task; nor is a Compose file or a conda environment.
    expect(kindByContent('ci.yaml', 'resources:\n  limits: {}\njobs:\n  build: {}\n')).toBeUndefined();
    expect(kindByContent('compose.yaml', 'services:\n  app:\n    image: x\n')).toBe('compose');
    // A key of another mapping is not the task's resources'; a pipeline's later task may name them.
    expect(
      kindByContent('values.yaml', 'resources:\n  limits: {}\nother:\n  cloud: aws\nrun: |\n  x\n'),
    ).toBeUndefined();
    expect(
      kindByContent(
        'pipeline.yaml',
        'name: data\nresources:\n  cpus: 64+\nrun: |\n  x\n---\nname: train\nresources:\n  accelerators: H100:8\nrun: |\n  y\n',
      ),
    ).toBe('skypilot');
    expect(kindByContent('task.yaml', 'resources: {accelerators: A100:8}\nrun: python x\n')).toBe('skypilot');
  });

  it('runs its commands in its container: the image, and the installs at their lines', () => {
    const file = parseSkypilot('task.yaml', TASK);
    expect(file.images.map((image) => image.reference)).toEqual(['nvcr.io/nvidia/pytorch:25.10-py3']);
    const image = file.images[0]!;
    expect(TASK.slice(image.span.start, image.span.end)).toBe('nvcr.io/nvidia/pytorch:25.10-py3');
    const torch = file.packages.find((pkg) => pkg.name === 'torch')!;
    // The task's envs give the version; the requirement is where it is written in the block.
    expect(torch.exact).toBe('2.4.0');
    expect(TASK.slice(torch.span.start, torch.span.end)).toBe('torch==${TORCH}');
    // A script it runs is said not read.
    expect(file.unresolved.map((fact) => fact.text)).toContain('install.sh');
  });

  it('says which container is not known where its candidate resources name several', () => {
    const file = parseSkypilot(
      'task.yaml',
      codeBlock`
        resources:
          any_of:
            - image_id: docker:vllm/vllm-openai:v0.8.5
            - image_id: docker:lmsysorg/sglang:v0.4.6-cu124
        run: |
          python serve.py
      `,
    );
    expect(file.images).toEqual([]);
    expect(file.unresolved[0]?.reason).toMatch(/2 images .* SkyPilot picks one/);
  });
});
