/**
 * Kubernetes manifests (issue 29): which YAML files are manifests, what the parser reads of their workloads (every
 * container, its image with its exact position, whether it gets GPUs, its node selection, the Dockerfile that builds
 * its image), which pools a node selection allows, and the CLI on the demo fleet repository.
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { assertProperty } from '../support/property.js';
import { describe, expect, it, vi } from 'vitest';
import { selectPools } from '../../src/analysis/placement.js';
import type { Pool } from '../../src/baseline/schema.js';
import { cli } from '../support/cli.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import {
  classifyPath,
  kindByContent,
  looksLikeManifest,
  parseFile,
  sniffKind,
  yamlByContent,
} from '../../src/parsers/index.js';
import type { Placement } from '../../src/parsers/facts.js';
import { kustomizePatches, parseKubernetesManifest, servingIndex } from '../../src/parsers/kubernetes/parse.js';
import { ROOT } from '../support/harness.js';
import { servingPartners } from '../../src/reader.js';
import { codeBlock } from '../support/code-block.js';

const kb = defaultKnowledgeBase();
const manifest = (text: string, images: Record<string, string> = {}) =>
  parseFile('k8s/app.yaml', text, 'kubernetes', { images });
const at = (text: string, span: { start: number; end: number }) => text.slice(span.start, span.end);

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer
spec:
  template:
    metadata:
      annotations:
        cuda-gatekeeper.io/dockerfile: ./docker/Dockerfile.train
    spec:
      nodeSelector:
        cloud.google.com/gke-nodepool: a100
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions:
                  - { key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-A100-SXM4-80GB] }
              - matchExpressions:
                  - key: nvidia.com/cuda.driver.major
                    operator: Gt
                    values: ["549"]
      initContainers:
        - name: fetch
          image: busybox:1.36
      containers:
        - name: train
          image: "ghcr.io/acme/trainer:1.4"
          resources:
            limits:
              nvidia.com/gpu: 8
`;

describe('which YAML files are manifests', () => {
  it('an apiVersion and a kind at the top level and a workload shape, whatever the kind, templates included', () => {
    expect(looksLikeManifest(DEPLOYMENT)).toBe(true);
    expect(
      looksLikeManifest(codeBlock`
        ---
        apiVersion: v1
        kind: ConfigMap
        ---
        apiVersion: leaderworkerset.x-k8s.io/v1
        kind: "LeaderWorkerSet"
        spec:
          leaderWorkerTemplate:
            leaderTemplate:
              spec:
                containers: []
      `),
    ).toBe(true);
    // No container, no image, no GPU: nothing of a workload to read.
    expect(
      looksLikeManifest(codeBlock`
        apiVersion: v1
        kind: ConfigMap
        data: {}
      `),
    ).toBe(false);
    // A Helm template is read too: its documents that parse, and the others said not checked.
    expect(
      looksLikeManifest(
        codeBlock`
          apiVersion: apps/v1
          kind: Deployment
          spec:
            template:
              spec:
                containers:
                  - image: {{ .Values.image }}
        `,
      ),
    ).toBe(true);
    // A chart's template that writes its objects from named templates alone: by Helm's layout, not by a kind.
    const include = '{{ include "nim.common.v1.deployment" . }}\n';
    expect(looksLikeManifest(include, 'chart/templates/base.yaml')).toBe(true);
    expect(looksLikeManifest(include, 'chart/templates/_helpers.yaml')).toBe(false);
    expect(looksLikeManifest(include, 'docs/snippets/base.yaml')).toBe(false);
    expect(looksLikeManifest('{{ .Values.note }}\n', 'chart/templates/note.yaml')).toBe(false);
    expect(
      looksLikeManifest(codeBlock`
        name: ci
        on: push
        jobs:
          build:
            runs-on: ubuntu-latest
            container:
              image: nvidia/cuda:12.4.1-base-ubuntu22.04
      `),
    ).toBe(false);
    // A KServe InferenceService that names no image but asks for GPUs: read, to be said not checked.
    expect(
      looksLikeManifest(codeBlock`
        apiVersion: serving.kserve.io/v1beta1
        kind: InferenceService
        spec:
          predictor:
            model:
              modelFormat: { name: huggingface }
              resources:
                limits:
                  nvidia.com/gpu: 1
      `),
    ).toBe(true);
  });

  it('YAML no name claims is read by content: conda where the path hints at an environment, else a manifest', () => {
    expect(yamlByContent('deploy/train.yaml')).toBe(true);
    expect(yamlByContent('environment.yml')).toBe(false); // its name says conda
    expect(kindByContent('deploy/train.yaml', DEPLOYMENT)).toBe('kubernetes');
    expect(kindByContent('envs/train.yaml', DEPLOYMENT)).toBe('kubernetes');
    expect(
      kindByContent(
        'envs/gpu.yaml',
        codeBlock`
          name: gpu
          channels: [conda-forge]
          dependencies: [python=3.11]
        `,
      ),
    ).toBe('conda');
    expect(
      kindByContent(
        '.github/workflows/ci.yml',
        codeBlock`
          on: push
          jobs: {}
        `,
      ),
    ).toBeUndefined();
    expect(classifyPath('k8s/train.yaml')).toBeUndefined();
    expect(sniffKind(DEPLOYMENT)).toBe('kubernetes');
    // Named on the command line, any Kubernetes object is a manifest (checked: it asks for nothing), where a walk
    // takes only those of a workload's shape.
    const queue = 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: q\n';
    expect(sniffKind(queue)).toBe('kubernetes');
    expect(kindByContent('deploy/queue.yaml', queue)).toBeUndefined();
  });
});

describe('reading a manifest', () => {
  it('every container with its image at its exact position, GPUs, node selection and the annotated Dockerfile', () => {
    const file = manifest(DEPLOYMENT);
    expect(file.problems).toEqual([]);
    expect(file.containers.map((c) => [c.workload, c.name, c.image.reference, c.gpu])).toEqual([
      ['Deployment/trainer', 'fetch', 'busybox:1.36', false],
      ['Deployment/trainer', 'train', 'ghcr.io/acme/trainer:1.4', true],
    ]);
    const train = file.containers[1]!;
    expect(at(DEPLOYMENT, train.span)).toBe('ghcr.io/acme/trainer:1.4');
    expect(at(DEPLOYMENT, train.image.tagSpan!)).toBe('1.4');
    expect(train.image).toMatchObject({ registry: 'ghcr.io', repository: 'acme/trainer', tag: '1.4' });
    expect(train.placement.selector.map((r) => [r.key, r.operator, r.values])).toEqual([
      ['cloud.google.com/gke-nodepool', 'In', ['a100']],
    ]);
    expect(
      train.placement.terms.map((term) => term.map((r) => `${r.key} ${r.operator} ${r.values.join(',')}`)),
    ).toEqual([['nvidia.com/gpu.product In NVIDIA-A100-SXM4-80GB'], ['nvidia.com/cuda.driver.major Gt 549']]);
    expect(train.dockerfile).toMatchObject({ path: 'docker/Dockerfile.train', how: 'annotation' });
    expect(file.includes[train.dockerfile!.include]).toMatchObject({
      kind: 'dockerfile',
      target: 'docker/Dockerfile.train',
    });
  });

  it("the baseline's images mapping names the Dockerfile of an image by its name, whatever its tag or registry spelling", () => {
    const text = DEPLOYMENT.replace(/ {6}annotations:\n.*\n/, '      labels: { app: t }\n');
    const file = manifest(text, { 'ghcr.io/acme/trainer': 'trainer/Dockerfile' });
    expect(file.containers[1]!.dockerfile).toMatchObject({ path: 'trainer/Dockerfile', how: 'baseline' });
    expect(manifest(text).containers[1]!.dockerfile).toBeUndefined();
  });

  it('CronJob, List, operator jobs and multi-document files: every pod template, named by workload and replica', () => {
    const text = `apiVersion: v1
kind: List
items:
  - apiVersion: batch/v1
    kind: CronJob
    metadata: { name: nightly }
    spec:
      jobTemplate:
        spec:
          template:
            spec:
              runtimeClassName: nvidia
              containers: [{ name: a, image: nvidia/cuda:12.4.1-base-ubuntu22.04 }]
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: { name: bert }
spec:
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          containers:
            - name: pytorch
              image: pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime
              env: [{ name: NVIDIA_VISIBLE_DEVICES, value: all }]
    Worker:
      template:
        spec:
          containers:
            - name: pytorch
              image: pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime
              resources: { limits: { nvidia.com/mig-1g.10gb: 1 } }
`;
    const file = manifest(text);
    expect(file.problems).toEqual([]);
    expect(file.containers.map((c) => `${c.workload} ${c.name} ${c.gpu}`)).toEqual([
      'CronJob/nightly a true',
      'PyTorchJob/bert (Master) pytorch true',
      'PyTorchJob/bert (Worker) pytorch true',
    ]);
  });

  it('a CustomResourceDefinition is passed over unread, and the documents beside it keep their places', () => {
    const schema = Array.from(
      { length: 2000 },
      (_, i) => `            containers${i}:\n              description: image`,
    ).join('\n');
    const crd = `apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: { name: things.example.com }\nspec:\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        properties:\n${schema}\n`;
    const pod =
      'apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: main\n    image: nvcr.io/nvidia/pytorch:24.05-py3\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n';
    for (const text of [`${crd}---\n${pod}`, `${pod}---\n${crd}`, `---\n${crd}...\n---\n${pod}`]) {
      const file = manifest(text);
      expect([file.problems, file.unresolved]).toEqual([[], []]);
      expect(file.containers.map((container) => at(text, container.image.span))).toEqual([
        'nvcr.io/nvidia/pytorch:24.05-py3',
      ]);
    }
  });

  it("a KServe runtime the file's GPU InferenceService names runs on its GPUs, scheduled where its predictor is", () => {
    const runtime = codeBlock`
      apiVersion: serving.kserve.io/v1alpha1
      kind: ClusterServingRuntime
      metadata:
        name: nim-llama3-8b
      spec:
        containers:
        - image: nvcr.io/nim/meta/llama3-8b-instruct:1.0.0
          name: kserve-container
    `;
    const service = (name: string, runtimeName: string) => codeBlock`
      apiVersion: serving.kserve.io/v1beta1
      kind: InferenceService
      metadata:
        name: ${name}
      spec:
        predictor:
          nodeSelector:
            pool: h100
          model:
            modelFormat:
              name: nim
            resources:
              limits:
                nvidia.com/gpu: "1"
            runtime: ${runtimeName}
    `;
    const file = manifest(`${service('llama', 'nim-llama3-8b')}---\n${runtime}`);
    expect(file.unresolved).toEqual([]);
    expect(
      file.containers.map((container) => [
        container.workload,
        container.gpu,
        container.placement.selector.map((r) => r.values),
      ]),
    ).toEqual([['ClusterServingRuntime/nim-llama3-8b (for InferenceService/llama)', true, [['h100']]]]);
    // A runtime defined elsewhere is named in the reason the service is not checked.
    const alone = manifest(`${service('other', 'elsewhere')}---\n${runtime}`);
    expect(alone.containers.map((container) => container.gpu)).toEqual([false]);
    expect(alone.unresolved.map((fact) => fact.reason)).toEqual([
      'it asks for NVIDIA GPUs, but its image is that of the serving runtime its model names (runtime: elsewhere, a ServingRuntime or ClusterServingRuntime), not in this document',
    ]);
  });

  it("RayCluster's head and worker groups are replicas of their own", () => {
    const text = `apiVersion: ray.io/v1
kind: RayCluster
metadata: { name: serve }
spec:
  headGroupSpec:
    rayStartParams: { dashboard-host: "0.0.0.0" }
    template:
      spec:
        containers: [{ name: head, image: rayproject/ray:2.9.0 }]
  workerGroupSpecs:
    - groupName: gpu
      template:
        spec:
          containers:
            - name: worker
              image: rayproject/ray:2.9.0-gpu
              resources: { limits: { nvidia.com/gpu: 1 } }
`;
    expect(manifest(text).containers.map((c) => `${c.workload} ${c.name} ${c.gpu}`)).toEqual([
      'RayCluster/serve (head) head false',
      'RayCluster/serve (gpu) worker true',
    ]);
  });

  it('templated images are read but not judged; YAML errors are positioned problems (notices without GPUs), never a crash', () => {
    const templated = manifest(DEPLOYMENT.replace('"ghcr.io/acme/trainer:1.4"', '"${REGISTRY}/trainer:${TAG}"'));
    expect(templated.containers[1]!.image.unresolved).toBeDefined();
    const broken = manifest(codeBlock`
      apiVersion: v1
      kind: Pod
      spec:
        containers:
          - image: [unclosed
            resources: { limits: { nvidia.com/gpu: 1 } }
    `);
    expect(broken.problems.length).toBeGreaterThan(0);
    expect(broken.problems[0]!.message).toMatch(/^YAML: /);
    // One that asks for no GPU anywhere in its text hides no CUDA that is loaded: a notice, with YAML's reason.
    const sample = manifest(codeBlock`
      apiVersion: v1
      kind: Pod
      spec:
        containers:
          - image: {username}/torchserve:latest
    `);
    expect(sample.problems).toEqual([]);
    expect(sample.unresolved.map((fact) => [fact.reason, fact.fails])).toEqual([
      ['YAML cannot read it (YAML: Unexpected scalar at node end) (it asks for no NVIDIA GPU)', undefined],
    ]);
    const lookalike = manifest(codeBlock`
      apiVersion: v1
      kind: Pod
      spec: 3
    `);
    expect(lookalike.containers).toEqual([]);
  });

  it("a Terraform template's document (`%{ for … ~}` lines) is one template, not a YAML error per directive", () => {
    // GoogleCloudPlatform/ai-on-gke's locust-worker-controller.yaml.tpl, trimmed, with and without a GPU.
    const template = (gpu: string) =>
      manifest(codeBlock`
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: locust-worker
        spec:
          template:
            spec:
              containers:
                - name: locust-worker
                  image: \${artifact_registry}/locust-tasks:latest
                  env:
        %{ for hugging_face_token_secret in hugging_face_token_secret_list ~}
                    - name: HUGGINGFACE_TOKEN
                      valueFrom:
                        secretKeyRef:
                          name: hf-key
                          key: HF_TOKEN
        %{ endfor ~}
                  resources:
                    limits:
                      ${gpu}
      `);
    for (const [gpu, fails] of [
      ['cpu: 1', false],
      ['nvidia.com/gpu: 1', true],
    ] as const) {
      const file = template(gpu);
      expect(file.problems).toEqual([]);
      expect(file.unresolved.map((fact) => [fact.text, fact.fails ?? false])).toEqual([['kind: Deployment', fails]]);
    }
  });

  it('a Helm template is said to be one, also where YAML reads it, and is not said to ask for no GPU when its blocks come from the chart', () => {
    // pytorch/serve kubernetes/Helm/templates/torchserve.yaml: `image: {{ .Values.image }}` is a YAML flow mapping.
    const unquoted = manifest(codeBlock`
      kind: Deployment
      apiVersion: apps/v1
      spec:
        template:
          spec:
            containers:
            - name: ts
              image: {{ .Values.image }}
              resources:
                limits:
                  nvidia.com/gpu: {{ .Values.n_gpu }}
    `);
    expect(unquoted.unresolved.map((fact) => [fact.text, fact.reason, fact.fails])).toEqual([
      [
        'kind: Deployment',
        "a template (`{{ … }}` placeholders as Helm, Go and Jinja write them, or `%{ … }` directives as Terraform does) that asks for NVIDIA GPUs, so what runs on them is only known once rendered: check the rendered output (`helm template`, or the templating tool's)",
        true,
      ],
    ]);
    // vllm-project/production-stack helm/templates/deployment-vllm-multi.yaml: resources from a helper.
    const included = manifest(codeBlock`
      apiVersion: apps/v1
      kind: Deployment
      spec:
        template:
          spec:
            containers:
              - name: vllm
                image: "{{ .Values.image }}"
                resources:
                  {{- include "chart.resources" . | nindent 18 }}
      ---
      apiVersion: v1
      kind: ConfigMap
      data:
        {{- toYaml .Values.config | nindent 2 }}
    `);
    // A ConfigMap's template holds no pod: nothing to say of it, rendered or not.
    expect(included.unresolved.map((fact) => [fact.text, fact.fails ?? false])).toEqual([['kind: Deployment', false]]);
    expect(included.unresolved[0]!.reason).toMatch(
      /only known once rendered: check the rendered output \(`helm template`, or the templating tool.s\)$/,
    );
    // vllm-project/aibrix's regression charts: a `{{- if }}` first line ends YAML's document there, but the template
    // runs on to the next one, GPU request and all; a CRD's template holds no pod, whatever blocks the chart writes.
    const wrapped = manifest(codeBlock`
      {{- if .Values.enabled }}
      apiVersion: apps/v1
      kind: Deployment
      spec:
        template:
          spec:
            containers:
              - name: engine
                image: "{{ .Values.image }}"
                resources:
                  limits:
                    nvidia.com/gpu: {{ .Values.gpus }}
      {{- end }}
      ---
      {{- if .Values.crds }}
      apiVersion: apiextensions.k8s.io/v1
      kind: CustomResourceDefinition
      spec:
        versions:
          {{- toYaml .Values.versions | nindent 4 }}
      {{- end }}
    `);
    expect(wrapped.unresolved.map((fact) => [fact.text, fact.reason, fact.fails ?? false])).toEqual([
      [
        'kind: Deployment',
        "a template (`{{ … }}` placeholders as Helm, Go and Jinja write them, or `%{ … }` directives as Terraform does) that asks for NVIDIA GPUs, so what runs on them is only known once rendered: check the rendered output (`helm template`, or the templating tool's)",
        true,
      ],
    ]);
    // NVIDIA/k8s-device-plugin's chart: a preamble of a license comment and an `if` before the first `---` writes
    // nothing and is nothing to check; the DaemonSet after it is said not checked, once.
    const preamble = manifest(codeBlock`
      {{- /*
      Copyright (c) 2019, NVIDIA CORPORATION.  All rights reserved.
      */ -}}
      {{- if .Values.devicePlugin.enabled }}
      ---
      {{- $options := (include "nvidia-device-plugin.options" . | fromJson) }}
      apiVersion: apps/v1
      kind: DaemonSet
      metadata:
        name: {{ $options.name }}
      spec:
        template:
          spec:
            containers:
              - image: {{ include "nvidia-device-plugin.fullimage" . }}
      {{- end }}
    `);
    expect(preamble.unresolved.map((fact) => fact.text)).toEqual(['kind: DaemonSet']);
  });

  it("fails closed where a kind's own GPU request has no image to judge: Dynamo's mainContainer, Spark's executor", () => {
    const dynamo = manifest(codeBlock`
      apiVersion: nvidia.com/v1alpha1
      kind: DynamoGraphDeployment
      metadata:
        name: agg
      spec:
        services:
          Worker:
            resources:
              limits:
                gpu: "1"
            extraPodSpec:
              mainContainer:
                workingDir: /workspace
    `);
    expect(dynamo.containers).toEqual([]);
    expect(dynamo.unresolved.map((fact) => [fact.text, fact.fails])).toEqual([
      ['DynamoGraphDeployment/agg (Worker) mainContainer', true],
    ]);
    // The executor asks for a GPU and names no image, nor does spec.image: only the driver is read.
    const spark = manifest(codeBlock`
      apiVersion: sparkoperator.k8s.io/v1beta2
      kind: SparkApplication
      metadata:
        name: s
      spec:
        sparkVersion: "3.5.1"
        driver:
          image: spark:3.5.1
        executor:
          gpu:
            name: nvidia.com/gpu
            quantity: 1
    `);
    expect(spark.containers.map((container) => [container.workload, container.gpu])).toEqual([
      ['SparkApplication/s (driver)', false],
    ]);
    expect(spark.unresolved.map((fact) => [fact.text, fact.fails])).toEqual([['kind: SparkApplication', true]]);
  });

  it('zero GPUs ask for none; a GPU request in a manifest written as text, or with no image, is said as such', () => {
    const pod = (resources: string, image = 'busybox:1.36') =>
      manifest(
        `apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: main\n    image: ${image}\n    resources:\n      limits:\n        ${resources}\n`,
      );
    expect(pod('nvidia.com/gpu: 0').unresolved).toEqual([]);
    expect(pod('"nvidia.com/gpu": "0"').unresolved).toEqual([]);
    expect(pod('nvidia.com/gpu: 1', 'null  # set by the operator').unresolved.map((fact) => fact.reason)).toEqual([
      'it asks for NVIDIA GPUs, but a container of it names no image (`image:` is empty or null), so what runs on them is not known',
    ]);
    // volcano-sh/volcano's Argo example: the Job it submits is text in resource.manifest.
    const argo = manifest(codeBlock`
      apiVersion: argoproj.io/v1alpha1
      kind: WorkflowTemplate
      spec:
        templates:
        - name: submit
          resource:
            action: create
            manifest: |
              apiVersion: batch.volcano.sh/v1alpha1
              kind: Job
              metadata:
                name: {{workflow.parameters.job-name}}
              spec:
                tasks:
                - template:
                    spec:
                      containers:
                      - image: volcanosh/example-mpi:0.0.3
                        resources:
                          limits:
                            nvidia.com/gpu: 1
    `);
    // It is read where it is written: a literal block's lines are the file's, less their indentation.
    expect(argo.unresolved).toEqual([]);
    const [embedded] = argo.containers;
    expect(embedded!.workload).toBe('Job/(unnamed)');
    expect(argo.source.text.slice(embedded!.image.span.start, embedded!.image.span.end)).toBe(
      'volcanosh/example-mpi:0.0.3',
    );
    expect(argo.source.position(embedded!.image.span.start).line).toBe(18);
    // A quoted (or folded) string is not the file's text line for line: still said not read, failing closed.
    const folded = manifest(
      codeBlock`
        apiVersion: argoproj.io/v1alpha1
        kind: WorkflowTemplate
        spec:
          templates:
          - name: submit
            resource:
              manifest: >
                apiVersion: batch/v1
                kind: Job
                spec:
                  template:
                    spec:
                      containers:
                      - name: a
                        image: x:1
                        resources:
                          limits:
                            nvidia.com/gpu: 1
      `,
    );
    expect(folded.unresolved.map((fact) => [fact.text, fact.reason, fact.fails])).toEqual([
      [
        'kind: WorkflowTemplate',
        "it asks for NVIDIA GPUs in a manifest written as text inside it (as Argo's resource.manifest is), which is not read",
        true,
      ],
    ]);
    // A kustomize overlay's patch: the image is in the base it patches.
    const patch = manifest(codeBlock`
      apiVersion: apps/v1
      kind: Deployment
      spec:
        template:
          spec:
            containers:
            - name: main
              resources:
                limits:
                  nvidia.com/gpu: 1
    `);
    expect(patch.unresolved[0]!.reason).toMatch(/only known in the output of `kustomize build`$/);
    // An annotation is data about the object: OLM's alm-examples (the form a console prefills) and kubectl's copy of
    // the object ask for nothing; the object's own request is read where it is.
    const example = JSON.stringify(
      { kind: 'NIMService', spec: { resources: { limits: { 'nvidia.com/gpu': 1 } } } },
      null,
      2,
    );
    const annotated = (spec: string) =>
      manifest(
        `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  annotations:\n    alm-examples: |-\n${example.replace(/^/gm, '      ')}\n${spec}`,
      );
    expect(annotated('spec:\n  replicas: 1\n').unresolved).toEqual([]);
    const own = annotated(
      'spec:\n  template:\n    spec:\n      containers:\n      - name: a\n        image: x:1\n        resources:\n          limits:\n            nvidia.com/gpu: 1\n',
    );
    expect([own.unresolved, own.containers.map((container) => [container.image.reference, container.gpu])]).toEqual([
      [],
      [['x:1', true]],
    ]);
    expect(
      annotated(
        'spec:\n  template:\n    spec:\n      containers:\n      - name: a\n        resources:\n          limits:\n            nvidia.com/gpu: 1\n',
      ).unresolved,
    ).toHaveLength(1);
  });

  it('never throws and keeps every position inside the file, whatever the text (property)', () => {
    assertProperty(
      fc.property(fc.string({ maxLength: 400 }), fc.integer({ min: 0, max: DEPLOYMENT.length }), (noise, cut) => {
        const text = DEPLOYMENT.slice(0, cut) + noise + DEPLOYMENT.slice(cut);
        const file = manifest(text);
        for (const container of file.containers) {
          expect(container.span.start).toBeGreaterThanOrEqual(0);
          expect(container.span.end).toBeLessThanOrEqual(text.length);
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 300) },
    );
  });
});

describe('which pools a node selection allows', () => {
  const pools: Pool[] = [
    {
      name: 'a100',
      driver: '550.127.05',
      gpus: ['A100'],
      class: 'data-center',
      labels: { 'cloud.google.com/gke-nodepool': 'a100' },
    },
    {
      name: 'h200',
      driver: '580.159.04',
      gpus: ['H200'],
      class: 'data-center',
      labels: { 'cloud.google.com/gke-nodepool': 'h200' },
    },
    { name: 'dev', driver: '570.172.08', gpus: ['RTX 4090'], class: 'geforce', labels: {} },
  ];
  const span = { start: 0, end: 0 };
  const placement = (selector: Record<string, string>, terms: [string, string, string[]][][] = []): Placement => ({
    selector: Object.entries(selector).map(([key, value]) => ({ key, operator: 'In' as const, values: [value], span })),
    terms: terms.map((term) =>
      term.map(([key, operator, values]) => ({ key, operator: operator as 'In', values, span })),
    ),
  });
  const names = (p: Placement) => selectPools(pools, p, kb).pools.map((pool) => pool.name);

  it("a pool's own labels, its GPUs (GFD product names) and its driver decide; an unknown label never leaves a pool out", () => {
    expect(names(placement({ 'cloud.google.com/gke-nodepool': 'h200' }))).toEqual(['h200', 'dev']); // dev has no such label: it may match
    expect(names(placement({ 'nvidia.com/gpu.product': 'NVIDIA-H200' }))).toEqual(['h200']);
    expect(names(placement({ 'nvidia.com/gpu.product': 'NVIDIA-A100-SXM4-80GB-SHARED' }))).toEqual(['a100']);
    expect(names(placement({ 'nvidia.com/gpu.product': 'NVIDIA-A100-SXM4-80GB-MIG-1g.10gb' }))).toEqual(['a100']);
    expect(names(placement({ 'nvidia.com/gpu.compute.major': '9' }))).toEqual(['h200']);
    expect(names(placement({}, [[['nvidia.com/cuda.driver.major', 'Gt', ['560']]]]))).toEqual(['h200', 'dev']);
    expect(names(placement({}, [[['nvidia.com/gpu.product', 'NotIn', ['NVIDIA-H200']]]]))).toEqual(['a100', 'dev']);
    expect(names(placement({ 'kubernetes.io/arch': 'amd64' }))).toEqual(['a100', 'h200', 'dev']);
    // GKE's and Karpenter's labels that name the GPU model are known from the pool's GPUs.
    expect(names(placement({ 'cloud.google.com/gke-accelerator': 'nvidia-h200-141gb' }))).toEqual(['h200']);
    expect(names(placement({ 'cloud.google.com/gke-accelerator': 'nvidia-tesla-a100' }))).toEqual(['a100']);
    expect(names(placement({ 'karpenter.k8s.aws/instance-gpu-name': 'a100' }))).toEqual(['a100']);
    expect(selectPools(pools, placement({ 'cloud.google.com/gke-accelerator': 'nvidia-b200' }), kb).unmatched).toMatch(
      /matches no pool/,
    );
    // Terms are ORed, expressions within one ANDed.
    expect(
      names(
        placement({}, [
          [
            ['nvidia.com/gpu.compute.major', 'In', ['8']],
            ['nvidia.com/cuda.driver.major', 'In', ['550']],
          ],
          [['nvidia.com/gpu.product', 'In', ['NVIDIA-H200']]],
        ]),
      ),
    ).toEqual(['a100', 'h200']);
  });

  it('a selection that matches no pool is judged on every pool, and says so', () => {
    const selection = selectPools(pools, placement({ 'nvidia.com/gpu.product': 'NVIDIA-L4' }), kb);
    expect(selection.pools).toHaveLength(3);
    expect(selection.unmatched).toMatch(/matches no pool/);
    expect(selectPools(pools, undefined, kb)).toMatchObject({ narrowed: false, by: [] });
  });
});

describe('the demo fleet repository', () => {
  it('fails the job pinned to the R550 pool at its image line, with the Dockerfile and the pool as related locations', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cg-fleet-demo-'));
    cpSync(join(ROOT, 'fixtures', 'repos', 'demo-fleet'), dir, { recursive: true });
    const { code, out } = cli(dir, 'check', '--verbose');
    expect(code).toBe(1);
    expect(out).toContain(
      'k8s/train.yaml:17:22: error: ghcr.io/demo/trainer:1.4.0 (built from trainer/Dockerfile: nvidia/cuda:13.0.1-cudnn-runtime-ubuntu24.04) needs CUDA 13.0, which no pool it is scheduled on can run: a100-legacy (driver 550.127.05) [driver-floor]',
    );
    expect(out).toContain('    see: trainer/Dockerfile:2:6: the image is built from here');
    expect(out).toContain('    see: k8s/train.yaml:14:13: schedules it on a100-legacy (driver 550.127.05)');
    // The same image on the H200 pool passes; the pool table says where each unit runs.
    expect(out).not.toMatch(/k8s\/train\.yaml:4\d:\d+: error/);
    expect(out).toContain('  k8s/train.yaml:41 (Job/eval, container eval)\n    a100-legacy: not scheduled');
    expect(out).toMatch(
      /\(CronJob\/nightly-finetune, container train\)\n {4}a100-legacy: FAILS: CUDA 13.0 needs driver >= 580, the pool runs 550.127.05/,
    );
  });

  it('finds a workload after a large first document (rendered output that starts with a big ConfigMap or CRD)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cg-fleet-big-'));
    cpSync(join(ROOT, 'fixtures', 'repos', 'demo-fleet'), dir, { recursive: true });
    const config = `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: big }\ndata:\n${Array.from({ length: 3000 }, (_, i) => `  key${i}: "${'x'.repeat(24)}"`).join('\n')}\n---\n`;
    expect(config.length).toBeGreaterThan(64 * 1024);
    writeFileSync(join(dir, 'k8s', 'rendered.yaml'), config + readFileSync(join(dir, 'k8s', 'train.yaml'), 'utf8'));
    const { out } = cli(dir, 'check');
    expect(out).toMatch(
      /k8s\/rendered\.yaml:\d+:22: error: ghcr\.io\/demo\/trainer:1\.4\.0 .* which no pool it is scheduled on can run/,
    );
  });

  it('a CPU-only copy of the job passes: only containers that get GPUs are judged', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cg-fleet-cpu-'));
    cpSync(join(ROOT, 'fixtures', 'repos', 'demo-fleet'), dir, { recursive: true });
    writeFileSync(
      join(dir, 'k8s', 'train.yaml'),
      codeBlock`
        apiVersion: batch/v1
        kind: Job
        metadata: { name: t }
        spec:
          template:
            spec:
              nodeSelector: { cloud.google.com/gke-nodepool: a100-legacy }
              containers: [{ name: t, image: "ghcr.io/demo/trainer:1.4.0" }]
      `,
    );
    const { out } = cli(dir, 'check');
    expect(out).not.toContain('k8s/train.yaml');
  });
});

describe("KServe runtimes in another file (the repository's serving index)", () => {
  const service = (name: string, runtime: string, placed = false) => codeBlock`
    apiVersion: serving.kserve.io/v1beta1
    kind: InferenceService
    metadata:
      name: ${name}
    spec:
      predictor:${placed ? '\n        nodeSelector:\n          nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB' : ''}
        model:
          modelFormat:
            name: nim
          resources:
            limits:
              nvidia.com/gpu: "1"
          runtime: ${runtime}
  `;
  const runtimeNamed = (name: string, placed = false) => codeBlock`
    apiVersion: serving.kserve.io/v1alpha1
    kind: ClusterServingRuntime
    metadata:
      name: ${name}
    spec:${placed ? '\n      nodeSelector:\n        nvidia.com/gpu.present: "true"' : ''}
      containers:
      - name: kserve-container
        image: nvcr.io/nim/meta/llama3-8b-instruct:1.0.0
        resources:
          limits:
            cpu: "12"
  `;
  const files = [
    { path: 'models/a.yaml', text: service('a', 'nim-runtime') },
    { path: 'models/placed.yaml', text: service('placed', 'nim-runtime', true) },
    { path: 'models/other.yaml', text: service('other', 'missing-runtime') },
    { path: 'runtimes/nim.yaml', text: runtimeNamed('nim-runtime') },
    { path: 'models/pinned.yaml', text: service('pinned', 'placed-runtime', true) },
    { path: 'runtimes/placed.yaml', text: runtimeNamed('placed-runtime', true) },
  ];

  it('pairs each service with the runtime another file defines, unless both place their pods', () => {
    const index = servingIndex(files)!;
    expect(index).toEqual({
      runtimes: { 'nim-runtime': ['runtimes/nim.yaml'], 'placed-runtime': ['runtimes/placed.yaml'] },
      services: {
        'nim-runtime': [
          { path: 'models/a.yaml', label: 'InferenceService/a' },
          { path: 'models/placed.yaml', label: 'InferenceService/placed' },
        ],
      },
    });
    expect(servingPartners(index, 'models/a.yaml')).toEqual(['runtimes/nim.yaml']);
    expect(servingPartners(index, 'runtimes/nim.yaml')).toEqual(['models/a.yaml', 'models/placed.yaml']);
    expect(servingPartners(index, 'models/other.yaml')).toEqual([]);
    expect(servingPartners(index, 'models/pinned.yaml')).toEqual([]);
    expect(servingIndex([files[2]!, files[3]!])).toBeUndefined();
  });

  it("judges the runtime's containers on the service's GPUs, and the paired service through them", () => {
    const index = servingIndex(files)!;
    const parsed = (at: number) => parseKubernetesManifest(files[at]!.path, files[at]!.text, { serving: index });
    const container = parsed(3).containers[0]!;
    expect([container.gpu, container.workload]).toEqual([
      true,
      'ClusterServingRuntime/nim-runtime (for InferenceService/a in models/a.yaml, InferenceService/placed in models/placed.yaml)',
    ]);
    expect(parsed(0).unresolved).toEqual([]);
    // A placed service on a runtime that places itself nowhere: the runtime is judged on every pool, which holds the
    // pools its predictor picks.
    expect(parsed(1).unresolved).toEqual([]);
    // Both placed: KServe merges the two placements, and the service's is not carried to another file: the service
    // fails closed, and says where its runtime is.
    expect(parsed(4).unresolved.map((entry) => entry.reason)).toEqual([
      expect.stringContaining('which runtimes/placed.yaml defines (checked there), and its predictor'),
    ]);
    // Without the index, as before: the runtime asks for no GPU, and the service is not checked.
    expect(parseKubernetesManifest(files[3]!.path, files[3]!.text).containers[0]!.gpu).toBe(false);
    expect(parseKubernetesManifest(files[0]!.path, files[0]!.text).unresolved).toHaveLength(1);
  });
});

describe('a compiled Kubeflow pipeline (KFP v2 PipelineSpec)', () => {
  const text = readFileSync(join(ROOT, 'fixtures/rules/driver-floor/kfp-pipeline-spec/pipeline.yaml'), 'utf8');

  it('is read by content as a manifest, each executor a container placed by the platform document', () => {
    expect(kindByContent('pipelines/train.yaml', text)).toBe('kubernetes');
    const file = parseKubernetesManifest('pipeline.yaml', text);
    expect(
      file.containers.map((c) => [c.workload, c.image.reference, c.gpu, c.placement.selector.map((r) => r.key)]),
    ).toEqual([
      [
        'KFP pipeline train-and-eval (exec-train)',
        'pytorch/pytorch:2.9.0-cuda13.0-cudnn9-runtime',
        true,
        ['cloud.google.com/gke-nodepool'],
      ],
      ['KFP pipeline train-and-eval (exec-evaluate)', 'pytorch/pytorch:2.9.0-cuda13.0-cudnn9-runtime', true, []],
    ]);
    expect(file.unresolved).toEqual([]);
  });

  it('an executor without an accelerator gets no GPU', () => {
    const cpu = text.replace(/\n +resources:\n +accelerator:\n +count: '1'\n +type: nvidia.com\/gpu/, '');
    const file = parseKubernetesManifest('pipeline.yaml', cpu);
    expect(file.containers.map((c) => c.gpu)).toEqual([true, false]);
  });
});

describe('a metadata block with no name of its own', () => {
  it('is read in time linear in its lines (the fuzz suite found a mutated llmaz OpenModel that hung the parser)', () => {
    // The fuzz suite's input (fixtures/rules/parse-error/ok-no-pod-kinds/deploy/llmaz-openmodel.yaml with `name:` and
    // `spec:` merged into one odd key): the name pattern backtracked through every way of splitting each indented
    // line of the block (20 lines: 10 s; the 25 here: hours).
    const text =
      '# An llmaz OpenModel: its flavors\' limits are written into the pods of what serves it; it runs nothing. # OK\napiVersion: llmaz.io/v1alpha1\nkind: OpenModel\nmetadata:\n  labels:\n    app.kubernetes.io/name: model\n    app.kubernetes.io/instance: model-sample\n    app.kubernetes.io/part-of: llmaz\n    app.kubernetes.io/managed-by: kustomize\n    app.kubernetes.io/created-by: llmaz\n  namI2\'}&`oc:\n  familyName: "opt"\n  source:\n    modelHub:\n      # name: Huggingface\n      modelID: "facebook/opt-125m"\n  inferenceConfig:\n    flavors:\n    - name: a100\n      limits:\n        nvidia.com/gpu: 1\n    # nodeSelector:\n    #   cloud-provider.com/accelerator: nvidia-a100\n    # params:\n    #   instance-type: p4d.24xlarge\n';
    const started = performance.now();
    const file = parseKubernetesManifest('model.yaml', text);
    expect(file.containers).toEqual([]);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it("reads a kustomization's patches that merge into files checked with them and set no image nor placement", () => {
    const texts: Record<string, string> = {
      'base/deploy.yaml': 'kind: Deployment\n',
      'deploy.yaml': 'kind: Deployment\n',
      'overlay/gpu.yaml':
        'kind: Deployment\nspec: {template: {spec: {containers: [{name: a, resources: {limits: {nvidia.com/gpu: 1}}}]}}}\n',
      'overlay/image.yaml': 'kind: Deployment\nspec: {template: {spec: {containers: [{name: a, image: other:2}]}}}\n',
      'overlay/nodes.yaml': 'kind: Deployment\nspec:\n  template:\n    spec:\n      nodeSelector: {pool: b200}\n',
      'p.yaml': 'kind: Deployment\n',
    };
    const patches = (text: string, path = 'overlay/kustomization.yaml') =>
      kustomizePatches(
        { path, text },
        (candidate) => candidate in texts,
        (candidate) => texts[candidate],
      );
    expect(
      patches('resources: [../base/deploy.yaml]\npatches:\n  - path: gpu.yaml\n    target: {kind: Deployment}\n'),
    ).toEqual({ 'overlay/gpu.yaml': { kustomization: 'overlay/kustomization.yaml', resources: ['base/deploy.yaml'] } });
    expect(
      Object.keys(patches('resources: [deploy.yaml]\npatchesStrategicMerge: [./p.yaml]\n', 'kustomization.yaml')),
    ).toEqual(['p.yaml']);
    // Another patch that sets an image or moves the pods, a field that rewrites images, an inline patch, a patch not
    // checked with it: none of its patches is taken.
    const base = 'resources: [../base/deploy.yaml]\n';
    expect(patches(`${base}patches: [{path: gpu.yaml}, {path: image.yaml}]\n`)).toEqual({});
    expect(patches(`${base}patches: [{path: gpu.yaml}, {path: nodes.yaml}]\n`)).toEqual({});
    expect(patches(`${base}images: [{name: x, newTag: v2}]\npatches: [{path: gpu.yaml}]\n`)).toEqual({});
    expect(patches(`${base}replacements: [{path: r.yaml}]\npatches: [{path: gpu.yaml}]\n`)).toEqual({});
    expect(patches(`${base}patches: [{path: gpu.yaml}, {patch: "image: x"}]\n`)).toEqual({});
    expect(patches(`${base}patches: [{path: gpu.yaml}, {path: missing.yaml}]\n`)).toEqual({});
    // A folder or an address as a resource, a resource outside the repository, YAML that cannot be read.
    expect(patches('resources: [../base]\npatches: [{path: gpu.yaml}]\n')).toEqual({});
    expect(patches('resources: [https://github.com/org/repo//deploy?ref=v1]\npatches: [{path: gpu.yaml}]\n')).toEqual(
      {},
    );
    expect(patches('resources: [../../../deploy.yaml]\npatches: [{path: gpu.yaml}]\n')).toEqual({});
    expect(patches('resources: [: [\n')).toEqual({});
  });
});

describe("a template's placeholder YAML reads as a key", () => {
  it('writes no warning to the process (a JSON report redirected with stderr stays JSON)', () => {
    const warn = vi.spyOn(process, 'emitWarning');
    try {
      const file = parseKubernetesManifest(
        'claim.yaml.tmpl',
        codeBlock`
          apiVersion: resource.k8s.io/v1
          kind: ResourceClaim
          metadata:
            name: gpu-device
            namespace: {{ .Namespace }}
          spec:
            devices:
              requests:
              - name: gpu
                exactly:
                  deviceClassName: gpu.nvidia.com
          ---
          apiVersion: v1
          kind: Pod
          metadata:
            name: gpu-test
          spec:
            resourceClaims:
            - name: gpu-device
              resourceClaimName: gpu-device
            containers:
            - name: ctr
              image: nvcr.io/nvidia/cuda:12.2.0-base-ubuntu22.04
              resources:
                claims:
                - name: gpu-device
        `,
      );
      expect(file.containers.map((container) => container.image.reference)).toEqual([
        'nvcr.io/nvidia/cuda:12.2.0-base-ubuntu22.04',
      ]);
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });
});
