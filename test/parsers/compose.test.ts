/**
 * Docker Compose files: which files are read as Compose files, and what the parser reads of each service (its image
 * with Compose's interpolation, whether it gets GPUs by each of the spec's three ways, the Dockerfile and stage its
 * build names), and what it says not checked.
 */
import { describe, expect, it } from 'vitest';
import { classifyPath, kindByContent, looksLikeCompose } from '../../src/parsers/index.js';
import { parseCompose } from '../../src/parsers/compose/parse.js';

function services(path: string, text: string) {
  const file = parseCompose(path, text);
  return {
    file,
    containers: file.containers.map((c) => ({
      workload: c.workload,
      name: c.name,
      image: c.image.reference,
      gpu: c.gpu,
      ...(c.image.tagSpan ? { tag: text.slice(c.image.tagSpan.start, c.image.tagSpan.end) } : {}),
      ...(c.image.unresolved ? { unresolved: c.image.unresolved } : {}),
      ...(c.dockerfile ? { dockerfile: c.dockerfile.path, stage: c.dockerfile.stage } : {}),
    })),
    unresolved: file.unresolved.map((u) => `${u.text}: ${u.reason}`),
  };
}

describe('which files are Compose files', () => {
  it.each([
    ['compose.yaml', 'compose'],
    ['compose.yml', 'compose'],
    ['docker-compose.yml', 'compose'],
    ['deploy/docker-compose.gpu.yaml', 'compose'],
    ['docker-compose-nims.yaml', 'compose'],
    ['docker_compose.yaml', 'compose'],
    ['compose.override.yaml', 'compose'],
    ['composer.yaml', undefined],
    ['decompose.yml', undefined],
  ])('%s → %s', (path, kind) => {
    expect(classifyPath(path)).toBe(kind);
  });

  it('reads a YAML file of another name by its top-level services mapping, not a CI file services list', () => {
    const compose = 'services:\n  nim:\n    image: nvcr.io/nim/meta/llama3-8b-instruct:1.0.0\n';
    expect(looksLikeCompose(compose)).toBe(true);
    expect(kindByContent('deploy/nims.yaml', compose)).toBe('compose');
    expect(looksLikeCompose('image: python:3.12\nservices:\n  - docker:dind\n')).toBe(false);
    expect(looksLikeCompose('services:\n  api:\n    port: 80\n')).toBe(false);
  });
});

describe('services', () => {
  it('gets GPUs by a device reservation, `gpus`, or the nvidia runtime, and not otherwise', () => {
    const { containers } = services(
      'compose.yaml',
      [
        'services:',
        '  a:',
        '    image: nvidia/cuda:12.4.1-base-ubuntu22.04',
        '    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: 1}]}}}',
        '  b:',
        '    image: nvidia/cuda:12.4.1-base-ubuntu22.04',
        '    deploy: {resources: {reservations: {devices: [{capabilities: [gpu]}]}}}',
        '  c:',
        '    image: nvidia/cuda:12.4.1-base-ubuntu22.04',
        '    gpus: all',
        '  d:',
        '    image: nvidia/cuda:12.4.1-base-ubuntu22.04',
        '    runtime: nvidia',
        '  e:',
        '    image: nvidia/cuda:12.4.1-base-ubuntu22.04',
        '    deploy: {resources: {reservations: {devices: [{capabilities: [tpu]}]}}}',
        '',
      ].join('\n'),
    );
    expect(containers.map((c) => [c.workload, c.gpu])).toEqual([
      ['compose service a', true],
      ['compose service b', true],
      ['compose service c', true],
      ['compose service d', true],
      ['compose service e', false],
    ]);
  });

  it('follows anchors and merge keys, and takes defaults for variables (nested too), editable where the default is written', () => {
    const text = [
      'x-gpu: &gpu',
      '  deploy:',
      '    resources:',
      '      reservations:',
      '        devices: [{driver: nvidia, count: all, capabilities: [gpu]}]',
      'services:',
      '  triton:',
      '    <<: *gpu',
      '    container_name: triton-server',
      '    image: ${REGISTRY:-${MIRROR:-nvcr.io}}/nvidia/tritonserver:${TAG-24.05-py3}',
      '',
    ].join('\n');
    const { containers, unresolved } = services('compose.yaml', text);
    expect(containers).toEqual([
      {
        workload: 'compose service triton',
        name: 'triton-server',
        image: 'nvcr.io/nvidia/tritonserver:24.05-py3',
        gpu: true,
        tag: '24.05-py3',
      },
    ]);
    expect(unresolved).toEqual([]);
  });

  it('says a GPU service not checked where a variable has no default, its image is no reference, or it has none', () => {
    const { containers, unresolved } = services(
      'deploy/compose.yaml',
      [
        'services:',
        '  llm:',
        '    image: nvcr.io/nim/${MODEL}:${TAG:?set TAG}',
        '    runtime: nvidia',
        '  custom:',
        '    image: ${CUSTOM_IMAGE:-""}',
        '    runtime: nvidia',
        '  child:',
        '    extends: {file: base.yaml, service: gpu}',
        '    runtime: nvidia',
        '  cpu:',
        '    image: ${WEB}',
        '',
      ].join('\n'),
    );
    expect(containers.map((c) => c.unresolved)).toEqual([
      '"nvcr.io/nim/${MODEL}:${TAG:?set TAG}" takes ${MODEL} from the environment or the .env file, and the file gives it no default',
      '""" is not an image reference'.replace('"""', '""""'),
      '"${WEB}" takes ${WEB} from the environment or the .env file, and the file gives it no default',
    ]);
    expect(unresolved).toEqual([
      'service llm: the image of the service, which gets NVIDIA GPUs, cannot be judged: "nvcr.io/nim/${MODEL}:${TAG:?set TAG}" takes ${MODEL} from the environment or the .env file, and the file gives it no default',
      'service custom: the image of the service, which gets NVIDIA GPUs, cannot be judged: """" is not an image reference',
      "service child: it gets NVIDIA GPUs, but it extends service gpu of base.yaml, whose image or build and resources it takes where it does not say them, and that file's services are not read with this one: what it runs is not checked here (base.yaml is checked on its own)",
    ]);
  });

  it('names the Dockerfile and stage a build names, from the Compose file folder and the context', () => {
    const { containers, unresolved } = services(
      'deploy/gpu/compose.yaml',
      [
        'services:',
        '  plain:',
        '    build: ../../backend',
        '    gpus: all',
        '  full:',
        '    image: registry.example.com/app:1',
        '    build: {context: ., dockerfile: docker/Dockerfile.cuda, target: runtime}',
        '    gpus: all',
        '  remote:',
        '    build: https://github.com/example/app.git#main',
        '    gpus: all',
        '  inline:',
        '    build: {context: ., dockerfile_inline: "FROM nvidia/cuda:12.4.1-base-ubuntu22.04"}',
        '    gpus: all',
        '  outside:',
        '    build: ../../..',
        '    gpus: all',
        '  absolute:',
        '    build: {context: /srv/app}',
        '    gpus: all',
        '',
      ].join('\n'),
    );
    expect(containers.map((c) => [c.image, c.dockerfile, c.stage])).toEqual([
      ['the image of service plain', 'backend/Dockerfile', undefined],
      ['registry.example.com/app:1', 'deploy/gpu/docker/Dockerfile.cuda', 'runtime'],
    ]);
    expect(unresolved).toEqual([
      'service remote: it gets NVIDIA GPUs, but its image is built from a remote context (https://github.com/example/app.git#main), which is not read',
      'service inline: it gets NVIDIA GPUs, but its image is built from a Dockerfile written inline, which is not read',
      'service outside: it gets NVIDIA GPUs, but its build context ../../.. is outside the repository',
      'service absolute: it gets NVIDIA GPUs, but its build context /srv/app is outside the repository',
    ]);
  });

  it('reports YAML it cannot read as a positioned problem', () => {
    const file = parseCompose('compose.yaml', 'services:\n  a:\n    image: [unclosed\n');
    expect(file.problems.length).toBeGreaterThan(0);
    expect(file.containers).toEqual([]);
  });
});
