/**
 * Kubernetes manifests: every container of every workload in a (multi-document) YAML file, with its image and where
 * its pod may be scheduled. Plain manifests and the output of `kustomize build` / `helm template` saved as files are
 * read; in a template (`{{ .Values.image }}`) the documents that parse are read and the others are said not checked.
 *
 * A pod spec is any mapping with a `containers` list, wherever the workload keeps it (kinds.ts lists where the kinds
 * ML teams run keep theirs: a Pod's `spec`, a Deployment's `spec.template.spec`, LeaderWorkerSet's leader and worker
 * templates, the replica templates of JobSet, Ray and the training operators, KServe, Knative, Notebooks, Volcano);
 * a single container is read where a kind keeps one (Argo's `container` and `script`, a TrainJob's `trainer`, a
 * NIMService's `image`). A document that asks for NVIDIA GPUs but whose containers are not found is said not checked,
 * never passed. Scheduling follows "Assigning Pods to Nodes" (kubernetes.io/docs/concepts/scheduling-eviction/
 * assign-pod-node/): every `nodeSelector` label must match, and with
 * `affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution` one of its `nodeSelectorTerms` must,
 * each term's `matchExpressions` all holding.
 */
import {
  isAlias,
  isMap,
  isScalar,
  isSeq,
  parse,
  parseAllDocuments,
  type Document,
  type Node,
  type Scalar,
  type YAMLMap,
} from 'yaml';
import { posix } from 'node:path';
import { FactSink, type ContainerFact, type LabelRequirement, type ParsedFile, type Placement } from '../facts.js';
import { imageName, parseImageRef } from '../image-ref.js';
import { SourceText, type Span } from '../source.js';
import { findSuppressions } from '../suppressions.js';
import { firstYamlProblem, scalarText, yamlProblem } from '../yaml-text.js';
import { MappedBuilder, type Mapped } from '../mapped.js';
import {
  GPU_BY_KIND_NAME,
  GPU_CLAIM_KIND,
  GPU_CLASS,
  GPU_REQUEST_KEY,
  GPU_RESOURCE,
  TOP_LEVEL_INCLUDE,
} from './kinds.js';

/**
 * A reference as Docker's grammar writes one (distribution/reference): an optional registry host, lower-case path
 * components, an optional tag and digest. `PLACEHOLDER` or `<image>` is not one.
 */
export const IMAGE_REFERENCE =
  /^(?:[a-zA-Z0-9.-]+(?::\d+)?\/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$/;

/** Aliases resolved per file at most this many times (YAML's "billion laughs" bound). */
const MAX_ALIASES = 200;
/** How deep a document is searched for pod specs (operators nest templates a few levels down). */
const MAX_DEPTH = 12;
/** A Dockerfile named by an annotation: its path and where the path is written. */
interface Annotated {
  readonly path: string;
  readonly span: Span;
}

const OPERATORS = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']);
/** The annotation that names the Dockerfile a workload's images are built from (a path from the repository root). */
export const DOCKERFILE_ANNOTATION = 'cuda-gatekeeper.io/dockerfile';

/** What a manifest's reading needs from the baseline: which Dockerfile builds each image the repository builds. */
export interface ManifestOptions {
  /** Image name (imageName: registry/repository, lower case, no tag) → Dockerfile path from the repository root. */
  readonly images?: Readonly<Record<string, string>>;
  /** The serving runtimes of a repository's other files that its GPU InferenceServices name (servingIndex). */
  readonly serving?: ServingIndex;
}

/**
 * KServe serving runtimes that GPU InferenceServices of other files name, found across a repository's manifests
 * (plain data: it crosses to worker threads). `runtimes`: the files that define a ServingRuntime or
 * ClusterServingRuntime of each name such a service names; `services`: by runtime name, the services of other files
 * that name it and are paired with it. A service whose predictor says nothing of where it runs (no nodeSelector, no
 * affinity) is paired with a runtime in another file: the runtime's containers then run where its own spec says,
 * which is where the service runs. So is one that places its predictor where the runtime says nothing of where it
 * runs: the runtime is judged on every pool, which holds the pools the predictor picks (as where several services of
 * its file name it). A service that places its predictor on a runtime that places itself stays not checked unless
 * the runtime is in its own file (a placement is carried only within a file, and KServe merges the two).
 */
export interface ServingIndex {
  readonly runtimes: Readonly<Record<string, readonly string[]>>;
  readonly services: Readonly<Record<string, readonly { readonly path: string; readonly label: string }[]>>;
  /**
   * kustomize patches that ask for GPUs and name no image, by path: the kustomization beside each that merges it into
   * resources of the repository (kustomizePatches). Carried with the serving index, which each manifest is parsed with.
   */
  readonly patches?: Readonly<Record<string, KustomizePatch>>;
  /**
   * The names of the repository's ResourceClaims and ResourceClaimTemplates that ask NVIDIA's DRA driver for GPUs
   * (gpuClaims): Kubernetes resolves a pod's claim by name, not by file, and claims are often kept in files of their
   * own.
   */
  readonly claims?: readonly string[];
  /**
   * The names of the repository's llmaz OpenModels whose inference flavors ask for NVIDIA GPUs (gpuModels): a
   * Playground claims its model by name (`modelClaim.modelName`), cluster-wide, not by file.
   */
  readonly models?: readonly string[];
  /**
   * Kubeflow Trainer's TrainingRuntimes and ClusterTrainingRuntimes of the repository that a GPU TrainJob names
   * (`runtimeRef.name`), by name: the files that define each, and whether its own containers ask for NVIDIA GPUs there
   * (then they are judged in that file, the TrainJob's `resourcesPerNode` overriding only how many).
   */
  readonly trainingRuntimes?: Readonly<Record<string, readonly { readonly path: string; readonly gpu: boolean }[]>>;
}

/**
 * A file a kustomization merges into its resources (`patches: [{path: patch.yaml}]`, `patchesStrategicMerge`), where
 * nothing the kustomization applies sets an image or moves the pods (kubectl.docs.kubernetes.io: its `images`,
 * `replacements`, `components` and `transformers` may change a container's image, and so may any of its patches) and
 * every resource is a file checked with it: the merged workload runs the image its resource names, judged there.
 */
export interface KustomizePatch {
  readonly kustomization: string;
  readonly resources: readonly string[];
}

/** The names kustomize reads a folder's kustomization from (kubectl.docs.kubernetes.io: "Kustomization File"). */
export const KUSTOMIZATION_NAMES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'] as const;

/** A kustomization's fields that may change a container's image, or generate what the gate does not see. */
const REWRITES = ['images', 'replacements', 'components', 'transformers', 'generators', 'helmCharts'] as const;

/**
 * What a patch may set that decides what runs, or where and on what its pods run: a key of a strategic-merge patch, or
 * a JSON 6902 patch's path (`/spec/template/spec/containers/0/image`), in block or flow style.
 */
const PATCH_DECIDES =
  /(?:^[ \t-]*|[{,][ \t]*)["']?(?:image|nodeSelector|affinity|tolerations|runtimeClassName|nodeName|schedulerName|resourceClaims)["']?[ \t]*:|\/(?:image|nodeSelector|affinity|tolerations|runtimeClassName|nodeName)\b|nvidia\.com\/(?!gpu["']?[ \t]*:)/m;

/**
 * The patches of `kustomization` (its path and text), by path, where none of them sets an image or where pods run
 * and its resources are all files checked with it (`checked`); `textOf` reads a patch file checked with it. A
 * kustomization YAML cannot read, with a field that rewrites images, an inline patch, or a resource or patch the
 * check does not read gives none: its patches stay not checked.
 */
export function kustomizePatches(
  kustomization: { readonly path: string; readonly text: string },
  checked: (path: string) => boolean,
  textOf: (path: string) => string | undefined,
): Record<string, KustomizePatch> {
  let doc: unknown;
  try {
    doc = parse(kustomization.text, { uniqueKeys: false });
  } catch {
    return {};
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return {};
  const fields = doc as Record<string, unknown>;
  if (REWRITES.some((field) => fields[field] !== undefined && fields[field] !== null)) return {};
  const folder = posix.dirname(kustomization.path);
  const inRepository = (written: unknown): string | undefined => {
    if (typeof written !== 'string' || /^[a-z][a-z0-9+.-]*:/i.test(written)) return undefined;
    const path = posix.normalize(posix.join(folder, written));
    return path.startsWith('../') || path === '..' ? undefined : path.replace(/^\.\//, '');
  };
  const resources = (Array.isArray(fields.resources) ? fields.resources : []).map(inRepository);
  if (resources.length === 0 || resources.some((path) => path === undefined || !checked(path))) return {};
  const listOf = (field: string): unknown[] => (Array.isArray(fields[field]) ? (fields[field] as unknown[]) : []);
  const written: unknown[] = [];
  for (const entry of [...listOf('patches'), ...listOf('patchesJson6902')]) {
    const patch = entry && typeof entry === 'object' ? (entry as Record<string, unknown>) : undefined;
    // An inline patch (`patch: |`) is one the gate does not read as a file.
    if (!patch || patch.path === undefined) return {};
    written.push(patch.path);
  }
  written.push(...listOf('patchesStrategicMerge'));
  const paths: string[] = [];
  for (const entry of written) {
    const path = inRepository(entry);
    const text = path === undefined || !checked(path) ? undefined : textOf(path);
    if (path === undefined || text === undefined || PATCH_DECIDES.test(text)) return {};
    paths.push(path);
  }
  const out: Record<string, KustomizePatch> = {};
  for (const path of paths) out[path] = { kustomization: kustomization.path, resources: resources as string[] };
  return out;
}

/** A predictor that says where it runs. */
const PLACED = /^[ \t]+(?:nodeSelector|affinity)[ \t]*:/m;

/**
 * The serving index of a repository's manifests (see ServingIndex), read from their text alone (no YAML is parsed);
 * undefined when no GPU InferenceService names a runtime that only another file defines.
 */
export function servingIndex(
  files: Iterable<{ readonly path: string; readonly text: string }>,
): ServingIndex | undefined {
  const runtimes = new Map<string, string[]>();
  /** Runtimes a definition of which says where its pods run. */
  const placedRuntimes = new Set<string>();
  const asked: { path: string; runtime: string; label: string; placed: boolean }[] = [];
  const claims = new Set<string>();
  const models = new Set<string>();
  const training = new Map<string, { path: string; gpu: boolean }[]>();
  const trainJobsName = new Set<string>();
  for (const { path, text } of files) {
    const claiming = text.includes('ResourceClaim');
    const modelling = text.includes('OpenModel');
    const trainingJobs = text.includes('TrainingRuntime') || text.includes('TrainJob');
    if (
      !text.includes('ServingRuntime') &&
      !text.includes('InferenceService') &&
      !claiming &&
      !modelling &&
      !trainingJobs
    )
      continue;
    const own = new Set<string>();
    const wanted: { runtime: string; label: string; placed: boolean }[] = [];
    for (const body of text.split(/^(?:---|\.\.\.)(?=[ \t\r\n]|$)/m)) {
      const kind = KIND_LINE.exec(body)?.[1];
      const name = METADATA_NAME.exec(body)?.[1];
      if (claiming && name && GPU_CLAIM_KIND.test(body) && GPU_CLASS.test(body)) claims.add(name);
      if (modelling && name && kind === 'OpenModel' && gpuFlavors(body)) models.add(name);
      if (trainingJobs && name && (kind === 'TrainingRuntime' || kind === 'ClusterTrainingRuntime'))
        training.set(name, [...(training.get(name) ?? []), { path, gpu: asksForGpus(body) }]);
      if (trainingJobs && kind === 'TrainJob' && asksForGpus(body)) {
        const runtime = TRAINING_RUNTIME_NAME.exec(body)?.[2];
        if (runtime) trainJobsName.add(runtime);
      }
      if ((kind === 'ServingRuntime' || kind === 'ClusterServingRuntime') && name) {
        own.add(name);
        if (PLACED.test(body)) placedRuntimes.add(name);
      }
      if (kind !== 'InferenceService' || !asksForGpus(body)) continue;
      const runtime = RUNTIME_NAME.exec(body)?.[1];
      if (runtime)
        wanted.push({ runtime, label: `InferenceService/${name ?? '(unnamed)'}`, placed: PLACED.test(body) });
    }
    for (const name of own) runtimes.set(name, [...(runtimes.get(name) ?? []), path]);
    for (const service of wanted) if (!own.has(service.runtime)) asked.push({ path, ...service });
  }
  const services: Record<string, { path: string; label: string }[]> = {};
  const named = new Set<string>();
  for (const { path, runtime, label, placed } of asked) {
    if (!runtimes.get(runtime)?.some((other) => other !== path)) continue;
    named.add(runtime);
    if (!placed || !placedRuntimes.has(runtime)) (services[runtime] ??= []).push({ path, label });
  }
  const trainingRuntimes = Object.fromEntries([...training].filter(([name]) => trainJobsName.has(name)));
  const trains = Object.keys(trainingRuntimes).length > 0;
  if (named.size === 0 && claims.size === 0 && models.size === 0 && !trains) return undefined;
  return {
    runtimes: Object.fromEntries([...runtimes].filter(([name]) => named.has(name))),
    services,
    ...(claims.size > 0 ? { claims: [...claims] } : {}),
    ...(models.size > 0 ? { models: [...models] } : {}),
    ...(trains ? { trainingRuntimes } : {}),
  };
}

/**
 * A Kubeflow Pipelines v2 pipeline compiled to YAML (the IR PipelineSpec `kfp.compiler` writes): a top-level
 * `deploymentSpec` beside `pipelineInfo`, with a second document of `platforms` where the kfp-kubernetes extension
 * places executors (github.com/kubeflow/pipelines, api/v2alpha1/pipeline_spec.proto and kubernetes_platform/proto).
 */
export function looksLikePipelineSpec(text: string): boolean {
  return (
    /^deploymentSpec:[ \t]*$/m.test(text) && /^pipelineInfo:[ \t]*$/m.test(text) && /^\s+executors:[ \t]*$/m.test(text)
  );
}

export function parseKubernetesManifest(path: string, text: string, options: ManifestOptions = {}): ParsedFile {
  const source = new SourceText(path, text);
  const sink = new FactSink();
  sink.suppressions.push(...findSuppressions(source));
  const docs = parseAllDocuments(withoutDefinitions(text), YAML_OPTIONS);
  const list = Array.isArray(docs) ? docs : [docs];
  const claims = gpuClaims(list, text, options.serving?.claims);
  const models = gpuModels(list, text, options.serving?.models);
  const runtimes = runtimesServing(list, text, path, options.serving);
  const images = options.images ?? {};
  // A compiled pipeline YAML cannot read that asks for no accelerator holds no GPU container to miss.
  if (looksLikePipelineSpec(text) && list.some((doc) => doc.errors.length > 0) && !/\baccelerator\b/.test(text))
    return sink.finish(path, 'kubernetes', source);
  if (looksLikePipelineSpec(text) && list.every((doc) => doc.errors.length === 0)) {
    const spec = list.find((doc) => isMap(doc.contents) && doc.contents.has('deploymentSpec'));
    const platforms = list.find((doc) => isMap(doc.contents) && doc.contents.has('platforms'));
    if (spec) {
      new Reader(spec as Document, source, sink, images).pipelineSpec(
        spec.contents as Node,
        platforms?.contents as Node | undefined,
      );
      return sink.finish(path, 'kubernetes', source);
    }
  }
  for (const [i, doc] of list.entries()) {
    const [start, , end] = doc.range ?? [0, 0, text.length];
    const body = text.slice(start, end);
    // A line of a named template's output (`{{ include "nim.common.v1.deployment" . }}`) may read as a YAML flow
    // mapping, but what it writes is only known once rendered.
    if (doc.errors.length > 0 || TOP_LEVEL_INCLUDE.test(body)) {
      // A template's document (Helm, Go) is not YAML until rendered: said not checked at its line, failing closed
      // where it asks for GPUs. Any other document YAML cannot read is a positioned problem (parse-error); none of
      // its containers is guessed at. What a failed document covers runs to the next one: its range may stop where
      // YAML gave up (a chart's `{{- if .Values.enabled }}` first line ends it there).
      const through = list[i + 1]?.range?.[0] ?? text.length;
      const whole = text.slice(start, Math.max(end, through));
      if (isTemplate(body)) templateNotChecked(sink, whole, start, text);
      // A document that asks for no NVIDIA GPU anywhere in its text (a sample with an `{username}` placeholder) hides
      // no CUDA that is loaded: said not checked as a notice, with YAML's reason, not failed.
      else if (!asksForGpus(whole) && !GPU_BY_KIND_NAME.test(whole) && !GPU_BY_RUNTIME_OR_CLAIM.test(whole))
        notChecked(
          sink,
          whole,
          start,
          `YAML cannot read it (${yamlProblem(doc.errors[0]!, text).message})`,
          text,
          false,
        );
      else sink.problems.push(firstYamlProblem(doc.errors, text));
      continue;
    }
    const before = sink.containers.length;
    // A serving runtime that GPU InferenceServices of this file name runs its containers on their GPUs, scheduled
    // where the service's predictor is when one service names it (else wherever its own spec says).
    const servedFor = runtimes.served.get(i);
    const only = servedFor?.services.length === 1 && !servedFor.elsewhere ? list[servedFor.services[0]!] : undefined;
    const serving = servedFor && {
      label: servedFor.label,
      placement: only && new Reader(only as Document, source, sink, images).predictorPlacement(only.contents as Node),
    };
    new Reader(doc as Document, source, sink, images, claims, serving).document(doc.contents as Node | null);
    // A manifest another tool submits, written as a literal block inside this one (Argo's `resource.manifest: |`):
    // read where it asks for GPUs and reads as YAML on its own, at its own places in the file.
    const asks =
      (asksForGpus(body) && !holdsNoPod(body) && asksOutsideAnnotations(doc.contents as Node | null, body, start)) ||
      servesGpuModel(doc as Document, body, models);
    if (sink.containers.length === before && asks)
      readEmbedded(textsAskingForGpus(doc.contents as Node | null), text, source, sink, images);
    const found = sink.containers.slice(before);
    const gpus = found.filter((container) => container.gpu);
    const placeholders = gpus.filter((container) => container.image.unresolved);
    if (asks && gpus.length === 0 && !runtimes.resolved.has(i)) {
      // A manifest another tool submits, written as text (Argo's `resource.manifest`), asks in that text; a template
      // that YAML reads (`image: {{ .Values.image }}` is a flow mapping) is still a template.
      if (gpuRequestInText(doc.contents as Node | null))
        notChecked(
          sink,
          body,
          start,
          "it asks for NVIDIA GPUs in a manifest written as text inside it (as Argo's resource.manifest is), which is not read",
          text,
          true,
        );
      else if (isTemplate(body)) templateNotChecked(sink, body, start, text);
      else if (options.serving?.patches?.[path]) {
        const { kustomization, resources } = options.serving.patches[path];
        notChecked(
          sink,
          body,
          start,
          `it is a patch that ${kustomization} merges into ${resources.join(', ')}, and it sets no image nor where its pods run: the merged workload runs the image named there, which is checked in that file`,
          text,
          false,
          true,
        );
      } else {
        // A TrainJob whose runtime's GPU containers are judged in their file hides nothing where it places itself
        // nowhere: a notice.
        const trained = trainedByRuntime(body, options.serving);
        notChecked(
          sink,
          body,
          start,
          `it asks for NVIDIA GPUs, but ${whereTheImageIs(body, path, options.serving)}`,
          text,
          !trained,
          trained,
          runtimeElsewhere(body, path, options.serving).length > 0,
        );
      }
    } else if (placeholders.length > 0)
      notChecked(
        sink,
        body,
        start,
        `the image of ${[...new Set(placeholders.map(containerLabel))].join(', ')}, which gets NVIDIA GPUs, cannot be judged: ${placeholders[0]!.image.unresolved}`,
        text,
        true,
      );
  }
  return sink.finish(path, 'kubernetes', source);
}

/** A registry written apart (`registry: docker.io`) before the repository: not editable where the reference is. */
function withRegistry(registry: string, repository: Mapped): Mapped {
  const builder = new MappedBuilder();
  builder.pushSegment(`${registry}/`, -1, repository.site(0, 0));
  builder.pushMapped(repository);
  return builder.build();
}

/**
 * The text with every CustomResourceDefinition document turned into one comment line of the same length (so every
 * other position stays where it is). A CRD holds no pod, only the schema of a kind, and operators' schemas run to
 * megabytes (KubeRay's are 0.8–1.4 MB each, full of `containers:` and `image:` property names): reading them as YAML
 * cost seconds and found nothing. A document ends only at a `---` or `...` line at the margin (YAML 1.2, 9.1: no
 * scalar holds one), so documents are split there.
 */
function withoutDefinitions(text: string): string {
  if (!text.includes('CustomResourceDefinition')) return text;
  const ends = [...text.matchAll(/^(?:---|\.\.\.)(?=[ \t\r\n]|$)/gm)].map((match) => match.index);
  let out = '';
  let at = 0;
  for (const end of [...ends, text.length]) {
    const doc = text.slice(at, end);
    if (doc.length > 1 && DEFINITION.test(doc)) {
      const lineFeed = doc.endsWith('\n');
      out += `#${' '.repeat(doc.length - (lineFeed ? 2 : 1))}${lineFeed ? '\n' : ''}`;
    } else out += doc;
    at = end;
  }
  return out;
}

/** A document's `metadata.name`, and the serving runtime a KServe predictor's model names (`runtime:`). */
// Each line of the block is matched one way only (one blank, then the rest of the line): `[ \t]+.*` split a line's
// indentation between its two parts, and a metadata block with no `name:` backtracked through every split of every
// line (a mutated llmaz OpenModel hung the parser; the fuzz suite found it).
const METADATA_NAME = /^metadata:[ \t]*\r?\n(?:[ \t][^\r\n]*\r?\n)*?[ \t]+name:[ \t]*["']?([\w.-]+)/m;
const RUNTIME_NAME = /^[ \t]+runtime[ \t]*:[ \t]*["']?([\w.-]+)/m;

/**
 * A TrainJob's `runtimeRef.name` (trainer.kubeflow.org/v1alpha1: the TrainingRuntime or, by default, the
 * ClusterTrainingRuntime whose template it runs), read from the text: the `name:` among the keys under `runtimeRef:`.
 */
const TRAINING_RUNTIME_NAME =
  /^([ \t]*)runtimeRef[ \t]*:[ \t]*\r?\n(?:\1[ \t]+(?!name[ \t]*:)[\w.-]+[ \t]*:.*\r?\n)*\1[ \t]+name[ \t]*:[ \t]*["']?([\w.-]+)/m;

const DEFINITION = /^kind[ \t]*:[ \t]*["']?CustomResourceDefinition["']?[ \t]*(?:#.*)?\r?$/m;

/**
 * KServe InferenceServices that ask for GPUs and name a serving runtime (`spec.predictor.model.runtime`, a
 * ServingRuntime or ClusterServingRuntime by `metadata.name`): the runtime's containers run on the service's GPUs
 * (kserve.github.io/website/docs/concepts/resources/servingruntime/). A runtime this file defines, or one the
 * repository's serving index pairs it with in another file. `served`: runtime document → the services of this file
 * it serves, and whether services of other files name it too; `resolved`: the services whose runtime is read (here
 * or in the other file).
 */
function runtimesServing(
  docs: readonly { range?: readonly number[] | null; errors: readonly unknown[] }[],
  text: string,
  path: string,
  index: ServingIndex | undefined,
): {
  served: Map<number, { label: string; services: number[]; elsewhere: boolean }>;
  resolved: Set<number>;
} {
  const served = new Map<number, { label: string; services: number[]; elsewhere: boolean }>();
  const resolved = new Set<number>();
  if (!text.includes('ServingRuntime') && !text.includes('InferenceService')) return { served, resolved };
  const byName = new Map<string, number>();
  const bodies = docs.map((doc) => (doc.range ? text.slice(doc.range[0], doc.range[2]) : ''));
  for (const [i, body] of bodies.entries()) {
    const kind = KIND_LINE.exec(body)?.[1];
    const name = METADATA_NAME.exec(body)?.[1];
    if ((kind === 'ServingRuntime' || kind === 'ClusterServingRuntime') && name && !byName.has(name))
      byName.set(name, i);
  }
  for (const [i, body] of bodies.entries()) {
    if (KIND_LINE.exec(body)?.[1] !== 'InferenceService' || !asksForGpus(body)) continue;
    const runtime = RUNTIME_NAME.exec(body)?.[1];
    if (runtime === undefined) continue;
    const service = METADATA_NAME.exec(body)?.[1];
    const label = `InferenceService/${service ?? '(unnamed)'}`;
    const at = byName.get(runtime);
    if (at === undefined) {
      // Defined in another file, which the index pairs this service with: judged there.
      if (index?.services[runtime]?.some((entry) => entry.path === path && entry.label === label)) resolved.add(i);
      continue;
    }
    if (docs[at]!.errors.length > 0) continue;
    const entry = served.get(at);
    served.set(at, {
      label: entry ? `${entry.label}, ${label}` : label,
      services: [...(entry?.services ?? []), i],
      elsewhere: false,
    });
    resolved.add(i);
  }
  // This file's runtimes that services of other files name.
  for (const [name, at] of byName) {
    const others = index?.services[name]?.filter((entry) => entry.path !== path) ?? [];
    if (others.length === 0 || docs[at]!.errors.length > 0) continue;
    const entry = served.get(at);
    const labels = others.map((other) => `${other.label} in ${other.path}`).join(', ');
    served.set(at, {
      label: entry ? `${entry.label}, ${labels}` : labels,
      services: entry?.services ?? [],
      elsewhere: true,
    });
  }
  return { served, resolved };
}

/** `repository` and a `:tag` written elsewhere, as one reference: the tag is not editable where the reference is. */
/** The Argo kinds whose `{{workflow.parameters.NAME}}` the document's own arguments answer (argoParameters). */
const ARGO_WORKFLOWS: ReadonlySet<string> = new Set([
  'Workflow',
  'WorkflowTemplate',
  'ClusterWorkflowTemplate',
  'CronWorkflow',
]);

/** `{{workflow.parameters.NAME}}` (spaces allowed inside the braces, as Argo's template syntax allows). */
const WORKFLOW_PARAMETER = /\{\{\s*workflow\.parameters\.([\w.-]+)\s*\}\}/g;

/**
 * An image reference with each `{{workflow.parameters.NAME}}` replaced by the value the workflow gives it, the text
 * around them kept where it is written (an edit of a written tag still lands there); as written where a parameter has
 * no value here, or none is named.
 */
function withParameters(image: Mapped, values: ReadonlyMap<string, string>): Mapped {
  const text = image.text;
  if (!text.includes('workflow.parameters')) return image;
  const builder = new MappedBuilder();
  let at = 0;
  for (const match of text.matchAll(WORKFLOW_PARAMETER)) {
    const value = values.get(match[1]!);
    if (value === undefined) return image;
    builder.pushMapped(image.slice(at, match.index));
    builder.pushSegment(value, -1, image.site(match.index, match.index + match[0].length));
    at = match.index + match[0].length;
  }
  builder.pushMapped(image.slice(at, text.length));
  return builder.build();
}

function withTag(repository: Mapped, tag: string): Mapped {
  const builder = new MappedBuilder();
  builder.pushMapped(repository);
  builder.pushSegment(`:${tag}`, -1, repository.site(0, repository.length));
  return builder.build();
}

/**
 * Whether a document asks for GPUs somewhere other than in its annotations' values. An annotation is data about the
 * object, never submitted: OLM's `alm-examples` on a ClusterServiceVersion holds the custom resources a console shows
 * to prefill its form (olm.operatorframework.io/docs/concepts/crds/clusterserviceversion/), and kubectl's
 * `last-applied-configuration` a copy of the object itself, read where the object is. A GPU named only there asks for
 * nothing.
 */
function asksOutsideAnnotations(node: Node | null | undefined, body: string, start: number): boolean {
  const ranges: [number, number][] = [];
  annotationValues(node, 0, ranges);
  if (ranges.length === 0) return true;
  let rest = '';
  let at = 0;
  for (const [from, to] of ranges.sort((a, b) => a[0] - b[0])) {
    if (from - start < at) continue;
    rest += `${body.slice(at, from - start)}\n`;
    at = to - start;
  }
  return asksForGpus(rest + body.slice(at));
}

/** The source ranges of the values of every `annotations:` map in a document. */
function annotationValues(node: Node | null | undefined, depth: number, out: [number, number][]): void {
  if (!node || depth > MAX_DEPTH) return;
  if (isMap(node))
    for (const pair of node.items) {
      const value = pair.value as Node | null;
      if (isScalar(pair.key) && pair.key.value === 'annotations' && isMap(value)) {
        for (const annotation of value.items) {
          const range = (annotation.value as Node | null)?.range;
          if (range) out.push([range[0], range[1]]);
        }
      } else annotationValues(value, depth + 1, out);
    }
  else if (isSeq(node)) for (const item of node.items) annotationValues(item as Node | null, depth + 1, out);
}

/** Whether a string of the document (not a key or a structure) holds a GPU request: a manifest written as text. */
function gpuRequestInText(node: Node | null | undefined, depth = 0): boolean {
  return textsAskingForGpus(node, depth).length > 0;
}

/** The strings of a document (not keys or structures) of several lines that ask for GPUs: manifests written as text. */
function textsAskingForGpus(node: Node | null | undefined, depth = 0, out: Scalar[] = []): Scalar[] {
  if (!node || depth > MAX_DEPTH) return out;
  if (isScalar(node)) {
    if (typeof node.value === 'string' && node.value.includes('\n') && asksForGpus(node.value)) out.push(node);
  } else if (isMap(node)) {
    // An annotation's value is data about the object, never submitted (asksOutsideAnnotations).
    for (const pair of node.items)
      if (!isScalar(pair.key) || pair.key.value !== 'annotations')
        textsAskingForGpus(pair.value as Node | null, depth + 1, out);
  } else if (isSeq(node)) for (const item of node.items) textsAskingForGpus(item as Node | null, depth + 1, out);
  return out;
}

/**
 * Read the manifests written as literal blocks (`manifest: |`) at their own places: a literal block's lines are the
 * file's lines less one indentation, so its lines taken from the file as they are (indentation and all) read as that
 * manifest, indented, and each of its nodes is then moved to the block's offset in the file (each block once: many
 * blocks in one file stay linear). A block that does not read as YAML on its own, or a folded or quoted string (its
 * text is not the file's), is left to the reason that it is not read.
 */
function readEmbedded(
  blocks: readonly Scalar[],
  text: string,
  source: SourceText,
  sink: FactSink,
  images: Readonly<Record<string, string>>,
): void {
  for (const block of blocks) {
    if (block.type !== 'BLOCK_LITERAL' || !block.range) continue;
    const start = text.indexOf('\n', block.range[0]) + 1;
    const end = block.range[1];
    if (start <= 0 || start >= end) continue;
    const lines = text.slice(start, end);
    const docs = parseAllDocuments(lines, YAML_OPTIONS);
    const list = Array.isArray(docs) ? docs : [docs];
    if (list.some((doc) => doc.errors.length > 0)) continue;
    const claims = gpuClaims(list, lines);
    for (const doc of list) {
      moveBy(doc.contents as Node | null, start);
      new Reader(doc as Document, source, sink, images, claims).document(doc.contents as Node | null);
    }
  }
}

/** Move every node below `root` (itself included) `offset` characters on (without recursion: any depth). */
function moveBy(root: Node | null | undefined, offset: number): void {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (!node || typeof node !== 'object') continue;
    const range = (node as { range?: number[] | null }).range;
    if (range) (node as { range: number[] }).range = range.map((at) => at + offset);
    if (isMap(node)) for (const pair of node.items) stack.push(pair.key, pair.value);
    else if (isSeq(node)) for (const item of node.items) stack.push(item);
  }
}

/**
 * The keys under which a kind keeps one container: Argo's `container`/`script`, a TrainJob's `trainer`, OME's
 * `runner`, and a KServe predictor's (transformer's, explainer's) framework or model spec, which embeds a container
 * whose `image` replaces the serving runtime's (`spec.predictor.pytorch.image`; kserve.github.io/website/latest/
 * reference/api/, PredictorExtensionSpec).
 */
const SINGLE_CONTAINERS = [
  'container',
  'script',
  'trainer',
  'runner',
  'model',
  'pytorch',
  'tensorflow',
  'sklearn',
  'xgboost',
  'onnx',
  'triton',
  'pmml',
  'lightgbm',
  'paddle',
  'huggingface',
] as const;

/** A KubeAI resource profile of NVIDIA GPUs and a count above zero (`nvidia-gpu-l4:1`; GPU_BY_KIND_NAME). */
const GPU_PROFILE = /^nvidia-[\w.-]+:\s*[1-9]/;

/** A document's `kind:` line, as written at the start of a line (what a template's unread text still shows). */
const KIND_LINE = /^kind:[ \t]*["']?([\w.-]+)/m;

/**
 * The other files that define the serving runtime a GPU InferenceService's model names: what is not carried there is
 * only its predictor's placement (which pool runs the runtime's containers), the image being the runtime's.
 */
function runtimeElsewhere(body: string, path: string, index: ServingIndex | undefined): readonly string[] {
  if (KIND_LINE.exec(body)?.[1] !== 'InferenceService') return [];
  const runtime = RUNTIME_NAME.exec(body)?.[1];
  return runtime === undefined ? [] : (index?.runtimes[runtime] ?? []).filter((other) => other !== path);
}

/**
 * A GPU TrainJob whose training runtime the repository defines with containers that ask for GPUs, themselves judged
 * there, and that says nothing of where it runs (no nodeSelector or affinity in its podSpecOverrides): the runtime's
 * pods run where the runtime says, and only how many GPUs each gets is not read.
 */
function trainedByRuntime(body: string, index: ServingIndex | undefined): boolean {
  if (KIND_LINE.exec(body)?.[1] !== 'TrainJob' || PLACED.test(body)) return false;
  const runtime = TRAINING_RUNTIME_NAME.exec(body)?.[2];
  return runtime !== undefined && (index?.trainingRuntimes?.[runtime] ?? []).some((entry) => entry.gpu);
}

/** Why a GPU document's image is not in it, as its kind has it (kinds.ts). */
function whereTheImageIs(body: string, path: string, index: ServingIndex | undefined): string {
  const kind = KIND_LINE.exec(body)?.[1];
  if (kind === 'InferenceService') {
    const runtime = RUNTIME_NAME.exec(body)?.[1];
    const elsewhere = runtimeElsewhere(body, path, index);
    if (elsewhere.length > 0)
      return `its image is that of the serving runtime its model names (runtime: ${runtime}), which ${elsewhere.join(', ')} defines (checked there), and its predictor's nodeSelector or affinity, which KServe merges with the runtime's own to decide which pool runs the runtime's containers, are not carried to another file`;
    return `its image is that of the serving runtime its model ${runtime ? `names (runtime: ${runtime}, a ServingRuntime or ClusterServingRuntime)` : 'format selects (a ServingRuntime or ClusterServingRuntime whose supportedModelFormats lists it)'}, not in this document`;
  }
  // KServe's LLMInferenceService merges its template over the LLMInferenceServiceConfig presets it names (baseRefs)
  // and KServe's well-known ones (kserve.github.io/website/docs/model-serving/generative-inference/llmisvc/).
  if (kind === 'LLMInferenceService')
    return "its image comes from the LLMInferenceServiceConfig presets it is merged with (`baseRefs`, or KServe's own), not from this document";
  if (kind === 'LLMInferenceServiceConfig')
    return 'it is a preset that KServe merges with others into an LLMInferenceService, and names no image itself, so what runs on them is only known from the merged service';
  if (kind === 'TrainJob') {
    const runtime = TRAINING_RUNTIME_NAME.exec(body)?.[2];
    const defined = runtime === undefined ? [] : (index?.trainingRuntimes?.[runtime] ?? []);
    const where = [...new Set(defined.map((entry) => entry.path))]
      .map((other) => (other === path ? 'this file' : other))
      .join(', ');
    if (defined.some((entry) => entry.gpu))
      return `its image is that of the training runtime it names (runtimeRef: ${runtime}), which ${where} defines, with containers that ask for GPUs (checked there); its trainer's resourcesPerNode and podSpecOverrides, which decide how many GPUs and where, are not carried to the runtime`;
    if (defined.length > 0)
      return `its image is that of the training runtime it names (runtimeRef: ${runtime}), which ${where} defines, where no container asks for GPUs: which of them gets the trainer's resourcesPerNode is not read`;
    return `its image is that of the training runtime it names (runtimeRef${runtime ? `: ${runtime}` : ''}), not in this document`;
  }
  if (kind === 'Model' && /^apiVersion:[ \t]*kubeai\.org\//m.test(body))
    return "it names no `image:`, so its image is that of the engine it names (`engine:`) for its resource profile, set in KubeAI's own configuration (modelServers), not in this document";
  // KAITO's Workspace, InferenceSet, MultiRoleInference and RAGEngine run KAITO's images for the presets they name.
  if (/^apiVersion:[ \t]*kaito\.sh\//m.test(body))
    // A RAGEngine runs the controller's RAG service image (pkg/ragengine/controllers/preset_rag.go).
    return kind === 'RAGEngine'
      ? "its image is KAITO's RAG service (kaito-rag-service), which the controller sets, not in this document"
      : `its image is KAITO's, for the preset or model it names, not in this document`;
  if (kind === 'Playground')
    return "its image is that of the backend runtime it names (llmaz's BackendRuntime, `backendRuntimeConfig.backendName`, vllm by default), not in this document";
  // Seldon Core 2's Server: its podSpec overrides the pod spec of the ServerConfig it names (`serverConfig:`), which
  // holds the containers' images (docs.seldon.ai/seldon-core-2/installation/advanced-configurations/serverconfig).
  if (kind === 'Server' && /^apiVersion:[ \t]*mlops\.seldon\.io\//m.test(body)) {
    const config = /^[ \t]+serverConfig:[ \t]*["']?([\w.-]+)/m.exec(body)?.[1];
    return `its image is that of the ServerConfig it names${config ? ` (serverConfig: ${config})` : ''}, whose pod spec its podSpec overrides, not in this document`;
  }
  if (!/^[ \t-]*image[ \t]*:/m.test(body))
    return 'no container of it names an image (a patch that kustomize merges into a base writes only what it changes), so what runs on them is only known in the output of `kustomize build`';
  if (/^[ \t-]*image[ \t]*:[ \t]*(?:null|~)?[ \t]*(?:#.*)?$/m.test(body))
    return 'a container of it names no image (`image:` is empty or null), so what runs on them is not known';
  return `no container that gets them is where the gate looks for the containers of ${kind ? `kind ${kind}` : 'this document'}`;
}

/**
 * How manifests are parsed: leniently (a repeated key, a template's text), and without the warnings the YAML library
 * writes to the process's stderr (a template's `{{ .Namespace }}` reads as a flow mapping used as a key, which `toJS`
 * stringifies with a warning): they would break a JSON report redirected with stderr, and say nothing to the user.
 */
const YAML_OPTIONS = { uniqueKeys: false, prettyErrors: false, strict: false, logLevel: 'error' } as const;

/**
 * A container as a message names it: with the part of its workload it belongs to, where the workload has parts
 * (a DynamoGraphDeployment's `VllmDecodeWorker`, a LeaderWorkerSet's `leader`), whose containers may share a name.
 */
function containerLabel(container: ContainerFact): string {
  const part = / \(([^()]+)\)$/.exec(container.workload)?.[1];
  return `container ${container.name}${part && part !== container.name ? ` (${part})` : ''}`;
}

/**
 * Whether a document is a template's: Helm's, Go's or Jinja's `{{ … }}`, or a line of Terraform's template directives
 * (`%{ for … ~}`, `%{ endif }`: developer.hashicorp.com/terraform/language/expressions/strings#directives), which
 * `templatefile()` renders.
 */
function isTemplate(body: string): boolean {
  if (/^[ \t]*%\{/m.test(body)) return true;
  if (!body.includes('{{')) return false;
  // KServe expands Go templates in an LLMInferenceService's own fields when it reconciles it (`{{ ChildName
  // .ObjectMeta.Name "-epp-service" }}`, kserve.github.io/website/docs/model-serving/generative-inference/llmisvc/):
  // applied as written, not a chart's template, unless an action reads what only Helm has.
  const kind = KIND_LINE.exec(body)?.[1];
  if (kind === 'LLMInferenceService' || kind === 'LLMInferenceServiceConfig') return HELM_ACTION.test(body);
  return true;
}

/** A template action that reads Helm's objects or functions (`.Values`, `.Release`, `include`, `toYaml`). */
const HELM_ACTION =
  /\{\{-?[^}]*(?:\.(?:Values|Release|Chart|Capabilities|Files|Template)\b|\b(?:include|toYaml|tpl|required)\b)/;

/**
 * A template's document (Helm, Go or Jinja `{{ … }}`, Terraform `%{ … }`), not read until rendered: said not
 * checked, failing closed where it asks for GPUs. Where blocks come from the chart (`{{ include … }}`, `{{ toYaml
 * .Values.resources | nindent 12 }}`), its GPU request may be among them: said so, rather than that it asks for none.
 */
function templateNotChecked(sink: FactSink, body: string, start: number, text: string): void {
  // A kind that holds no pod (a ServiceAccount, a ConfigMap, a ClusterRole) is nothing to check, rendered or not; nor
  // is a chart's preamble before its first `---`, which holds only comments and actions that write nothing (a
  // license in `{{/* … */}}`, `{{- if .Values.enabled }}`, `{{- $name := … }}`).
  if (holdsNoPod(body) || writesNothing(body)) return;
  const gpu = asksForGpus(body);
  const blocks =
    !gpu &&
    TEMPLATE_BLOCK.test(body) &&
    (/^[ \t-]*(?:spec|template|containers)[ \t]*:/m.test(body) || TOP_LEVEL_INCLUDE.test(body));
  notChecked(
    sink,
    body,
    start,
    blocks
      ? "a template (`{{ … }}` placeholders, as Helm, Go and Jinja write them) whose blocks come from the chart, so whether it asks for NVIDIA GPUs is only known once rendered: check the rendered output (`helm template`, or the templating tool's)"
      : gpu
        ? "a template (`{{ … }}` placeholders as Helm, Go and Jinja write them, or `%{ … }` directives as Terraform does) that asks for NVIDIA GPUs, so what runs on them is only known once rendered: check the rendered output (`helm template`, or the templating tool's)"
        : 'a template (`{{ … }}` placeholders as Helm, Go and Jinja write them, or `%{ … }` directives as Terraform does)',
    text,
    gpu,
    blocks,
  );
}

/**
 * Whether a template's document is only comments, blank lines and actions that write no text: a comment, control
 * flow (`if`, `else`, `end`, `with`, `range`, `define`, `fail`) or a variable's assignment. One that writes anything (a
 * key, `{{ include … }}`, `{{ toYaml … }}`) may render an object.
 */
function writesNothing(body: string): boolean {
  const rest = body
    .replace(/\{\{-?\s*\/\*[\s\S]*?\*\/\s*-?\}\}/g, '')
    .replace(/\{\{-?\s*(?:if|else|end|with|range|define|block|fail)\b[^}]*\}\}/g, '')
    .replace(/\{\{-?\s*\$[\w]*\s*:?=[^}]*\}\}/g, '')
    .replace(/^[ \t]*#.*$/gm, '')
    .replace(/^---[ \t]*$/gm, '');
  return rest.trim() === '';
}

/**
 * Kinds that never hold a pod: a GPU resource named in one is a quota, a limit, a class or a queue's capacity, not a
 * container's request, and whatever blocks a chart writes into one, it asks for no GPU. Kubernetes' own
 * (kubernetes.io/docs/reference/kubernetes-api/, DRA's DeviceClass and claims: kubernetes.io/docs/concepts/
 * scheduling-eviction/dynamic-resource-allocation/), Kueue's (kueue.sigs.k8s.io/docs/concepts/), Volcano's and the
 * scheduler-plugins' queues and pod groups, Karpenter's node pools and classes (karpenter.sh/docs/concepts/).
 */
const NO_PODS: ReadonlySet<string> = new Set([
  'DeviceClass',
  'ResourceClaim',
  'ResourceClaimTemplate',
  'ResourceSlice',
  'ClusterQueue',
  'LocalQueue',
  'ResourceFlavor',
  'WorkloadPriorityClass',
  'AdmissionCheck',
  'Cohort',
  'Topology',
  'Queue',
  'PodGroup',
  'ElasticQuota',
  'NodePool',
  'EC2NodeClass',
  'AKSNodeClass',
  'RuntimeClass',
  'CustomResourceDefinition',
  'ConfigMap',
  'Secret',
  'Service',
  'ServiceAccount',
  'Role',
  'RoleBinding',
  'ClusterRole',
  'ClusterRoleBinding',
  'Ingress',
  'IngressClass',
  'NetworkPolicy',
  'PersistentVolume',
  'PersistentVolumeClaim',
  'StorageClass',
  'PodDisruptionBudget',
  'HorizontalPodAutoscaler',
  'Namespace',
  'ResourceQuota',
  'LimitRange',
  'PriorityClass',
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
  'APIService',
  'Endpoints',
  'EndpointSlice',
  // The Gateway API Inference Extension's model and objective (gateway-api-inference-extension.sigs.k8s.io): a model
  // name and a priority served by an InferencePool's pods, which a Deployment of their own runs.
  'InferenceModel',
  'InferenceObjective',
  'InferencePool',
  // llmaz's OpenModel (llmaz.io/v1alpha1): a model and the accelerators its flavors need, which are written into the
  // pods of the Playground or Service that serves it (InftyAI/llmaz api/core/v1alpha1/model_types.go, Flavor.Limits).
  'OpenModel',
]);

/** Whether a document's kind never holds a pod (NO_PODS). */
function holdsNoPod(body: string): boolean {
  const kind = KIND_LINE.exec(body)?.[1];
  return kind !== undefined && NO_PODS.has(kind);
}

/** Template actions that write YAML blocks (keys, not only scalar values): include, template, toYaml, tpl, indent. */
const TEMPLATE_BLOCK = /\{\{-?\s*(?:include|template|toYaml|tpl)\b|\|\s*(?:n?indent|toYaml)\b|^[ \t]*\{\{/m;

/**
 * A GPU request anywhere in a document's text: an extended resource or a MIG profile as a key (`nvidia.com/gpu: 1`),
 * or named as a field's value by an operator (`gpuType: nvidia.com/gpu`). A toleration's or a selector's
 * `key: nvidia.com/gpu` asks for nothing (the device plugin's DaemonSet tolerates the GPU taint without a GPU).
 */
function asksForGpus(body: string): boolean {
  return GPU_REQUEST_KEY.test(body) || GPU_REQUEST_VALUE.test(body) || GPU_BY_KIND_NAME.test(body);
}

/** What gets a pod GPUs outside its resources: NVIDIA's runtime class, or a DRA resource claim (read as text). */
const GPU_BY_RUNTIME_OR_CLAIM = /^[ \t-]*(?:runtimeClassName[ \t]*:[ \t]*["']?nvidia|resourceClaims[ \t]*:)/m;

/** A GPU resource as a field's value (`gpuType: nvidia.com/gpu`), not a toleration's or a selector's `key:`. */
const GPU_REQUEST_VALUE = new RegExp(
  String.raw`^[ \t-]*(?!key[ \t]*:)[\w.-]+[ \t]*:[ \t]*["']?${GPU_RESOURCE}["']?[ \t]*(?:#.*)?$`,
  'm',
);
/** A resource name that is a GPU resource, whole. */
const GPU_RESOURCE_NAME = new RegExp(`^${GPU_RESOURCE}$`);

/**
 * The names of the file's ResourceClaimTemplates and ResourceClaims that ask NVIDIA's DRA driver for GPUs (device
 * class `gpu.nvidia.com` or `mig.nvidia.com`, https://github.com/NVIDIA/k8s-dra-driver-gpu): a pod's
 * `resourceClaims` naming one give the containers that use the claim GPUs (Kubernetes DRA,
 * kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/).
 */
function gpuClaims(docs: readonly Document[], text: string, elsewhere: readonly string[] = []): ReadonlySet<string> {
  const names = new Set<string>();
  /** The claims this file defines, GPU or not: its own definition of a name is the one its pods use. */
  const own = new Set<string>();
  for (const doc of docs) {
    if (doc.errors.length > 0) continue;
    const [start, , end] = doc.range ?? [0, 0, 0];
    const body = text.slice(start, end);
    if (!GPU_CLAIM_KIND.test(body)) continue;
    const name = (doc.toJS({ maxAliasCount: MAX_ALIASES }) as { metadata?: { name?: unknown } } | null)?.metadata?.name;
    if (typeof name !== 'string') continue;
    own.add(name);
    if (GPU_CLASS.test(body)) names.add(name);
  }
  for (const name of elsewhere) if (!own.has(name)) names.add(name);
  return names;
}

/**
 * The names of the file's llmaz OpenModels whose inference flavors ask for NVIDIA GPUs (`inferenceConfig.flavors[]
 * .limits: {nvidia.com/gpu: 1}`): llmaz writes a flavor's limits into the pods of the Playground that serves the
 * model (InftyAI/llmaz api/core/v1alpha1/model_types.go, Flavor.Limits).
 */
function gpuModels(
  docs: readonly Document.Parsed[] | readonly Document[],
  text: string,
  elsewhere: readonly string[] = [],
): ReadonlySet<string> {
  const names = new Set<string>();
  /** The models this file defines, GPU or not: a Playground beside its model serves that one (llmaz's examples each
   * define a model of the same name, with or without GPU flavors). */
  const own = new Set<string>();
  for (const doc of docs) {
    if (doc.errors.length > 0) continue;
    const [start, , end] = doc.range ?? [0, 0, 0];
    const body = text.slice(start, end);
    if (KIND_LINE.exec(body)?.[1] !== 'OpenModel') continue;
    const name = METADATA_NAME.exec(body)?.[1];
    if (!name) continue;
    own.add(name);
    if (gpuFlavors(body)) names.add(name);
  }
  for (const name of elsewhere) if (!own.has(name)) names.add(name);
  return names;
}

/** An OpenModel's inference flavors that ask for NVIDIA GPUs (gpuModels). */
function gpuFlavors(body: string): boolean {
  return /^[ \t]+flavors[ \t]*:/m.test(body) && asksForGpus(body);
}

/** A Playground that serves a model of the file whose flavors ask for NVIDIA GPUs (gpuModels): its pods get them. */
function servesGpuModel(doc: Document, body: string, models: ReadonlySet<string>): boolean {
  if (models.size === 0 || KIND_LINE.exec(body)?.[1] !== 'Playground') return false;
  const spec = (doc.toJS({ maxAliasCount: MAX_ALIASES }) as { spec?: PlaygroundSpec } | null)?.spec;
  const claimed = [spec?.modelClaim?.modelName, ...(spec?.modelClaims?.models ?? []).map((model) => model?.name)];
  return claimed.some((name) => typeof name === 'string' && models.has(name));
}

/** The parts of an llmaz Playground's spec that name the models it serves. */
interface PlaygroundSpec {
  readonly modelClaim?: { readonly modelName?: unknown };
  readonly modelClaims?: { readonly models?: readonly ({ readonly name?: unknown } | null)[] };
}

/** A document the gate cannot judge, at its `kind:` line (else its first line), failing closed if it is a GPU one. */
function notChecked(
  sink: FactSink,
  body: string,
  start: number,
  why: string,
  text: string,
  gpu: boolean,
  /** Whether the document may ask for GPUs in a way not written here (then nothing is said of its GPUs). */
  unknownGpus = false,
  /** Whether what is not read decides only where the pools run it (UnresolvedFact.placementOnly). */
  placementOnly = false,
): void {
  const kindAt = KIND_LINE.exec(body);
  const lineStart = kindAt ? start + kindAt.index : start + (/\S/.exec(body)?.index ?? 0);
  const lineEnd = text.indexOf('\n', lineStart);
  const span = { start: lineStart, end: lineEnd < 0 ? text.length : lineEnd };
  sink.unresolved.push({
    span,
    text: kindAt ? `kind: ${kindAt[1]!.trim()}` : 'this document',
    reason: `${why}${gpu || unknownGpus ? '' : ' (it asks for no NVIDIA GPU)'}`,
    ...(gpu ? { fails: true } : {}),
    ...(placementOnly ? { placementOnly } : {}),
  });
}

/**
 * The pod annotations NVIDIA's Run:ai and KAI schedulers read a share of one GPU from, with no `nvidia.com/gpu`
 * resource (run-ai-docs.nvidia.com, "GPU fractions"; github.com/kai-scheduler/KAI-Scheduler, docs/gpu-sharing):
 * `gpu-fraction: "0.5"`, or `gpu-memory` under those schedulers; the share goes to the first container, or to the one
 * (init containers included) `gpu-fraction-container-name` names.
 */
const FRACTION_SCHEDULERS = new Set(['runai-scheduler', 'kai-scheduler']);

class Reader {
  private aliases = 0;
  /** Pod specs whose pod asks for a share of a GPU by annotation → the container given it (undefined: the first). */
  private readonly fractions = new Map<YAMLMap, string | undefined>();
  constructor(
    private readonly doc: Document,
    private readonly source: SourceText,
    private readonly sink: FactSink,
    private readonly images: Readonly<Record<string, string>>,
    private readonly claims: ReadonlySet<string> = new Set(),
    /**
     * For a serving runtime that GPU InferenceServices of the file name: who they are, and where they are scheduled
     * (one service's predictor placement; undefined: the runtime's own). Its containers run on their GPUs.
     */
    private readonly serving?: { readonly label: string; readonly placement: Placement | undefined },
  ) {}

  /** Where a pipeline's executor is placed (kfp-kubernetes' nodeSelector), while its container is read. */
  private executorPlacement: Placement | undefined;

  /** An Argo workflow's parameters with a value in the document (`spec.arguments.parameters`), while it is read. */
  private workflowParameters: ReadonlyMap<string, string> | undefined;

  /**
   * A compiled Kubeflow pipeline: each executor's container (`deploymentSpec.executors.<name>.container`) with its
   * image, getting NVIDIA GPUs where `resources.accelerator` asks for them (`type`/`resourceType` `nvidia.com/gpu`, or
   * Vertex AI's `NVIDIA_TESLA_T4`-style names, with a count above 0), placed where the `platforms` document's
   * `kubernetes.deploymentSpec.executors.<name>.nodeSelector.labels` says.
   */
  pipelineSpec(node: Node | null | undefined, platformsNode: Node | null | undefined): void {
    const root = this.resolve(node);
    if (!root || !isMap(root)) return;
    const info = this.map(root, 'pipelineInfo');
    const name = (info && this.text(info.get('name', true) as Node | undefined)) ?? '(unnamed)';
    const deployment = this.map(root, 'deploymentSpec');
    const executors = deployment ? this.map(deployment, 'executors') : undefined;
    const platformsRoot = this.resolve(platformsNode);
    const platforms = platformsRoot && isMap(platformsRoot) ? this.map(platformsRoot, 'platforms') : undefined;
    const kubernetes = platforms ? this.map(platforms, 'kubernetes') : undefined;
    const placed = kubernetes ? this.map(kubernetes, 'deploymentSpec') : undefined;
    const placedExecutors = placed ? this.map(placed, 'executors') : undefined;
    for (const pair of executors?.items ?? []) {
      const executor = isScalar(pair.key) ? String(pair.key.value) : undefined;
      const body = this.resolve(pair.value as Node | null);
      const container = body && isMap(body) ? this.map(body, 'container') : undefined;
      if (!executor || !container) continue;
      const resources = this.map(container, 'resources');
      const accelerator = resources ? this.map(resources, 'accelerator') : undefined;
      const kind = accelerator
        ? (this.text(accelerator.get('resourceType', true) as Node | undefined) ??
          this.text(accelerator.get('type', true) as Node | undefined))
        : undefined;
      const count = accelerator
        ? Number(
            this.text(accelerator.get('resourceCount', true) as Node | undefined) ??
              this.text(accelerator.get('count', true) as Node | undefined) ??
              '1',
          )
        : 0;
      const gpu = kind !== undefined && (GPU_RESOURCE_NAME.test(kind) || /^NVIDIA_/i.test(kind)) && !(count <= 0);
      const own = placedExecutors ? this.map(placedExecutors, executor) : undefined;
      const nodeSelector = own ? this.map(own, 'nodeSelector') : undefined;
      const labels = nodeSelector ? this.map(nodeSelector, 'labels') : undefined;
      this.executorPlacement = { selector: labels ? this.selectorOf(labels) : [], terms: [] };
      this.containerOf(container, container, `KFP pipeline ${name} (${executor})`, undefined, 'container', gpu);
      this.executorPlacement = undefined;
    }
  }

  /** Where a KServe InferenceService's predictor is scheduled (`spec.predictor`'s nodeSelector and affinity). */
  predictorPlacement(node: Node | null | undefined): Placement | undefined {
    const root = this.resolve(node);
    const spec = root && isMap(root) ? this.map(root, 'spec') : undefined;
    const predictor = spec ? this.map(spec, 'predictor') : undefined;
    return predictor ? this.placement(predictor) : undefined;
  }

  document(node: Node | null | undefined): void {
    const root = this.resolve(node);
    if (!root || !isMap(root)) return;
    const kind = this.text(root.get('kind', true) as Node | undefined);
    if (kind === 'List') {
      const items = this.resolve(root.get('items', true) as Node | undefined);
      if (items && isSeq(items)) for (const item of items.items) this.document(item as Node);
      return;
    }
    if (!kind || this.text(root.get('apiVersion', true) as Node | undefined) === undefined) return;
    const metadata = this.map(root, 'metadata');
    const name = metadata ? this.text(metadata.get('name', true) as Node | undefined) : undefined;
    const workload = `${kind}/${name ?? '(unnamed)'}`;
    // A bare Pod's own annotations (a template's are read where the template is).
    this.noteFraction(metadata, this.map(root, 'spec'));
    this.workflowParameters = ARGO_WORKFLOWS.has(kind) ? this.argoParameters(root, kind) : undefined;
    this.search(root, workload, '', this.annotation(metadata), 0);
    this.workflowParameters = undefined;
  }

  /**
   * The values an Argo Workflow (WorkflowTemplate, ClusterWorkflowTemplate, CronWorkflow) gives its parameters
   * (`spec.arguments.parameters[].value`; a CronWorkflow's in `spec.workflowSpec`): what `{{workflow.parameters.NAME}}`
   * reads unless `argo submit -p NAME=…` gives another (argo-workflows docs, walk-through/parameters.md), as a
   * Dockerfile's ARG default is read unless `--build-arg` gives another. A parameter with no literal value
   * (`valueFrom`, an enum only) is not known.
   */
  private argoParameters(root: YAMLMap, kind: string): ReadonlyMap<string, string> | undefined {
    let spec = this.map(root, 'spec');
    if (spec && kind === 'CronWorkflow') spec = this.map(spec, 'workflowSpec');
    const args = spec ? this.map(spec, 'arguments') : undefined;
    const list = args ? this.resolve(args.get('parameters', true) as Node | undefined) : undefined;
    if (!list || !isSeq(list)) return undefined;
    const values = new Map<string, string>();
    for (const item of list.items) {
      const parameter = this.resolve(item as Node);
      if (!parameter || !isMap(parameter)) continue;
      const name = this.text(parameter.get('name', true) as Node | undefined);
      const value = this.text(parameter.get('value', true) as Node | undefined);
      if (name !== undefined && value !== undefined) values.set(name, value);
    }
    return values;
  }

  /** Find pod specs below `node`; `replica` names an operator's replica template (PyTorchJob's `Worker`). */
  private search(
    node: YAMLMap,
    workload: string,
    replica: string,
    dockerfile: Annotated | undefined,
    depth: number,
  ): void {
    if (depth > MAX_DEPTH) return;
    const containers = this.resolve(node.get('containers', true) as Node | undefined);
    if (containers && isSeq(containers)) {
      this.podSpec(node, workload + (replica ? ` (${replica})` : ''), dockerfile);
      return;
    }
    // Dynamo's DynamoGraphDeployment (nvidia.com/v1alpha1): a service runs `extraPodSpec.mainContainer` (a
    // corev1.Container) beside the pod's other containers, and asks for GPUs by its own `resources.limits.gpu`, a count
    // the operator turns into nvidia.com/gpu (ai-dynamo/dynamo deploy/operator/api/v1alpha1/common.go, ResourceItem).
    const extra = this.map(node, 'extraPodSpec');
    const main = extra ? this.map(extra, 'mainContainer') : undefined;
    if (extra && main) {
      const service = workload + (replica ? ` (${replica})` : '');
      if (main.get('image', true) !== undefined)
        this.containerOf(main, extra, service, dockerfile, undefined, this.countsGpus(node));
      else if (this.countsGpus(node)) {
        // GPUs asked for by Dynamo's count (no nvidia.com/gpu to see in the text), and no image to judge: not checked.
        const [start, end] = main.range ?? [0, 0];
        this.sink.unresolved.push({
          span: { start, end },
          text: `${service} mainContainer`,
          reason:
            'it asks for NVIDIA GPUs (resources.limits.gpu), but its extraPodSpec.mainContainer names no image, so what runs on them is not known',
          fails: true,
        });
      }
      if (this.resolve(extra.get('containers', true) as Node | undefined)) this.podSpec(extra, service, dockerfile);
      return;
    }
    // spark-operator's SparkApplication (sparkoperator.k8s.io/v1beta2): the driver and the executors run `spec.image`
    // (or their own `image`), and ask for GPUs by `gpu: {name: nvidia.com/gpu, quantity}`
    // (kubeflow.org/docs/components/spark-operator/user-guide/writing-sparkapplication/, "Requesting GPU Resources").
    if (node.get('sparkVersion', true) !== undefined) {
      const shared = this.text(node.get('image', true) as Node | undefined) !== undefined;
      for (const role of ['driver', 'executor']) {
        const pod = this.map(node, role);
        const own = pod !== undefined && this.text(pod.get('image', true) as Node | undefined) !== undefined;
        // A role with no image anywhere reads no container: a GPU request then fails the document closed (parse).
        if (pod && (own || shared))
          this.containerOf(own ? pod : node, pod, `${workload} (${role})`, dockerfile, undefined, this.sparkGpus(pod));
      }
      return;
    }
    // KubeAI's Model (kubeai.org/v1): the server runs `spec.image` where it is set, else the image KubeAI's own
    // configuration gives its engine and resource profile (substratusai/kubeai api/k8s/v1/model_types.go: "Image to be
    // used for the server process. Will be set from ResourceProfile + Engine if not specified"; the controller's
    // lookupServerImage returns spec.image first), with the GPUs of its profile (`resourceProfile: nvidia-gpu-l4:1`).
    if (node.get('engine', true) !== undefined && node.get('resourceProfile', true) !== undefined) {
      if (this.text(node.get('image', true) as Node | undefined) !== undefined) {
        const profile = this.text(node.get('resourceProfile', true) as Node | undefined) ?? '';
        this.containerOf(node, node, workload, dockerfile, undefined, GPU_PROFILE.test(profile));
      }
      return;
    }
    // One container where a kind keeps one: Argo's template `container` or `script`, a TrainJob's `trainer`, the
    // `runner` of each component of OME's ClusterServingRuntime and ServingRuntime (ome.io/v1beta1: engineConfig,
    // decoderConfig, routerConfig, and their leader and worker; github.com/sgl-project/ome, pkg/apis/ome/v1beta1).
    for (const key of SINGLE_CONTAINERS) {
      const single = this.map(node, key);
      if (single && this.text(single.get('image', true) as Node | undefined) !== undefined) {
        const name = this.text(node.get('name', true) as Node | undefined);
        const shape = key === 'script' || key === 'trainer' || key === 'runner' ? key : 'container';
        this.containerOf(single, node, workload + (replica || name ? ` (${replica || name})` : ''), dockerfile, shape);
        return;
      }
    }
    // NIMService: `spec.image.repository` and `.tag`, with `spec.resources`; production-stack's VLLMRuntime:
    // `spec.deploymentConfig.image.registry` and `.name`, with `resources.gpu` (a count).
    const image = this.map(node, 'image');
    if (
      image &&
      (this.text(image.get('repository', true) as Node | undefined) ??
        this.text(image.get('name', true) as Node | undefined)) !== undefined
    ) {
      this.containerOf(node, node, workload, dockerfile, 'image', this.gpuCount(node));
      return;
    }
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
      if (key === undefined || key === 'metadata' || key === 'status') continue;
      const value = this.resolve(pair.value as Node | null);
      // A pod template carries its own metadata: its annotation names the Dockerfile as well as the workload's.
      const own =
        key === 'template' && value && isMap(value)
          ? (this.annotation(this.map(value, 'metadata')) ?? dockerfile)
          : dockerfile;
      if (key === 'template' && value && isMap(value))
        this.noteFraction(this.map(value, 'metadata'), this.map(value, 'spec'));
      if (value && isMap(value) && (/ReplicaSpecs$/.test(key) || (key === 'services' && replica === ''))) {
        // PyTorchJob's pytorchReplicaSpecs, TFJob's tfReplicaSpecs: a map from replica type to its template; Dynamo's
        // `services`, from a service's name to it.
        for (const inner of value.items) {
          const template = this.resolve(inner.value as Node | null);
          if (template && isMap(template))
            this.search(template, workload, isScalar(inner.key) ? String(inner.key.value) : '', own, depth + 1);
        }
      } else if (value && isMap(value)) {
        // RayCluster's headGroupSpec is the "head" replica; LeaderWorkerSet's leaderTemplate and workerTemplate the
        // "leader" and "worker".
        const named = key.endsWith('GroupSpec')
          ? key.slice(0, -'GroupSpec'.length)
          : /^(?:leader|worker)Template$/.test(key)
            ? key.slice(0, -'Template'.length)
            : '';
        this.search(value, workload, replica || named, own, depth + 1);
      } else if (value && isSeq(value)) {
        // Lists of replicas (JobSet's replicatedJobs, RayCluster's workerGroupSpecs) are named by their entries.
        const replicas = /^replicatedJobs$|GroupSpecs$/.test(key);
        value.items.forEach((item, index) => {
          const entry = this.resolve(item as Node);
          if (!entry || !isMap(entry)) return;
          const label =
            this.text(entry.get('groupName', true) as Node | undefined) ??
            this.text(entry.get('name', true) as Node | undefined);
          this.search(entry, workload, replica || (replicas ? (label ?? `${key}[${index}]`) : ''), own, depth + 1);
        });
      }
    }
  }

  private podSpec(spec: YAMLMap, workload: string, annotated: Annotated | undefined): void {
    const fraction = this.fractions.has(spec);
    const named = this.fractions.get(spec);
    for (const list of ['initContainers', 'containers']) {
      const containers = this.resolve(spec.get(list, true) as Node | undefined);
      if (!containers || !isSeq(containers)) continue;
      containers.items.forEach((item, index) => {
        const container = this.resolve(item as Node);
        if (!container || !isMap(container)) return;
        // The first container gets the share, or the one the annotation names, an init container included ("works
        // the same for init and regular containers": KAI-Scheduler docs/gpu-sharing/README.md).
        const share =
          fraction &&
          (named === undefined
            ? list === 'containers' && index === 0
            : this.text(container.get('name', true) as Node | undefined) === named);
        this.containerOf(container, spec, workload, annotated, undefined, share);
      });
    }
  }

  /** A Spark driver's or executor's `gpu: {name, quantity}` naming an NVIDIA GPU resource, more than none. */
  private sparkGpus(pod: YAMLMap): boolean {
    const gpu = this.map(pod, 'gpu');
    const name = gpu ? this.text(gpu.get('name', true) as Node | undefined) : undefined;
    const quantity = gpu ? Number(this.text(gpu.get('quantity', true) as Node | undefined) ?? '1') : 0;
    return name !== undefined && GPU_RESOURCE_NAME.test(name) && !(quantity <= 0);
  }

  /** A count of GPUs in a `resources.{limits,requests}.gpu` of Dynamo's own (a string such as "1"), above zero. */
  private countsGpus(service: YAMLMap): boolean {
    const resources = this.map(service, 'resources');
    return ['limits', 'requests'].some((field) => {
      const map = resources ? this.map(resources, field) : undefined;
      const count = map ? Number(this.text(map.get('gpu', true) as Node | undefined)) : Number.NaN;
      return Number.isFinite(count) && count > 0;
    });
  }

  /** Where a pod's annotations ask its scheduler for a share of a GPU (FRACTION_SCHEDULERS), note its spec. */
  private noteFraction(metadata: YAMLMap | undefined, spec: YAMLMap | undefined): void {
    const annotations = metadata ? this.map(metadata, 'annotations') : undefined;
    if (!annotations || !spec) return;
    const value = (key: string): string | undefined =>
      this.text(annotations.get(key, true) as Node | undefined)?.trim();
    const fraction = Number(value('gpu-fraction'));
    const memory = value('gpu-memory');
    const scheduler = this.text(spec.get('schedulerName', true) as Node | undefined) ?? '';
    const asks =
      (Number.isFinite(fraction) && fraction > 0) ||
      (memory !== undefined && !/^0*$/.test(memory) && FRACTION_SCHEDULERS.has(scheduler));
    if (asks) this.fractions.set(spec, value('gpu-fraction-container-name') || undefined);
  }

  /**
   * One container: its image (a reference; NIMService's `image: {repository, tag}`), whether it gets NVIDIA GPUs,
   * where its pod may run (`spec`: the pod spec, or the mapping that holds a single container), the Dockerfile named
   * for it. `shape` says where a kind keeps a single container (`trainer`: TrainJob's `resourcesPerNode`).
   */
  private containerOf(
    container: YAMLMap,
    spec: YAMLMap,
    workload: string,
    annotated: Annotated | undefined,
    shape?: 'container' | 'script' | 'trainer' | 'runner' | 'image',
    /**
     * Whether it gets GPUs by what its kind writes outside the container: its pod's annotations (a share of one,
     * noteFraction), Dynamo's `gpu` count, a Spark executor's `gpu`.
     */
    givenGpus = false,
  ): void {
    const image = this.imageText(container, shape);
    if (!image) return;
    const placement = this.serving?.placement ?? this.executorPlacement ?? this.placement(spec);
    const runtimeGpu = this.text(spec.get('runtimeClassName', true) as Node | undefined)?.toLowerCase() === 'nvidia';
    const reference = image.text;
    const span = image.origin(0, image.length) ?? image.site(0, image.length);
    const name = this.text(container.get('name', true) as Node | undefined) ?? reference;
    const parts = parseImageRef(reference);
    const templated = /[{}$]/.test(reference);
    const invalid = !templated && !IMAGE_REFERENCE.test(reference);
    const mapped = templated ? undefined : this.images[imageName(reference)];
    const named = annotated ?? (mapped ? { path: mapped, span } : undefined);
    let dockerfile: ContainerFact['dockerfile'];
    if (named) {
      dockerfile = { ...named, how: annotated ? 'annotation' : 'baseline', include: this.sink.includes.length };
      this.sink.includes.push({
        kind: 'dockerfile',
        target: named.path,
        targetSpan: named.span,
        span: named.span,
        context: -1,
      });
    }
    const tagMap =
      parts.tagOffset !== undefined ? image.slice(parts.tagOffset, parts.tagOffset + parts.tag!.length) : undefined;
    const tagSpan = tagMap?.origin(0, tagMap.length);
    this.sink.containers.push({
      span,
      workload: this.serving ? `${workload} (for ${this.serving.label})` : workload,
      name,
      image: {
        span,
        stage: this.sink.containers.length,
        reference,
        ...parts,
        ...(tagSpan ? { tagSpan, tagMap: tagMap! } : {}),
        ...(templated ? { unresolved: `"${reference}" is a template or a variable, not an image reference` } : {}),
        ...(invalid ? { unresolved: `"${reference}" is a placeholder, not an image reference` } : {}),
      },
      gpu:
        this.serving !== undefined ||
        runtimeGpu ||
        givenGpus ||
        this.requestsGpu(container, shape === 'trainer' ? 'resourcesPerNode' : 'resources') ||
        this.claimsGpu(container, spec),
      placement,
      ...(dockerfile ? { dockerfile } : {}),
    });
  }

  /** A container that uses a pod resource claim of one of the file's GPU claim templates (DRA). */
  private claimsGpu(container: YAMLMap, spec: YAMLMap): boolean {
    if (this.claims.size === 0) return false;
    const gpuClaims = new Set<string>();
    const podClaims = this.resolve(spec.get('resourceClaims', true) as Node | undefined);
    if (podClaims && isSeq(podClaims))
      for (const item of podClaims.items) {
        const claim = this.resolve(item as Node);
        if (!claim || !isMap(claim)) continue;
        const template =
          this.text(claim.get('resourceClaimTemplateName', true) as Node | undefined) ??
          this.text(claim.get('resourceClaimName', true) as Node | undefined);
        const name = this.text(claim.get('name', true) as Node | undefined);
        if (name && template && this.claims.has(template)) gpuClaims.add(name);
      }
    const resources = this.map(container, 'resources');
    const used = resources ? this.resolve(resources.get('claims', true) as Node | undefined) : undefined;
    return (
      !!used &&
      isSeq(used) &&
      used.items.some((item) => {
        const entry = this.resolve(item as Node);
        const name = entry && isMap(entry) ? this.text(entry.get('name', true) as Node | undefined) : undefined;
        return name !== undefined && gpuClaims.has(name);
      })
    );
  }

  /**
   * A container's image as written: `image: ref`, or an image map joined: NIMService's `{ repository, tag }`,
   * VLLMRuntime's `{ registry, name }` (its name may carry the tag).
   */
  private imageText(container: YAMLMap, shape: string | undefined): ReturnType<typeof scalarText> {
    const node = this.resolve(container.get('image', true) as Node | undefined);
    if (shape !== 'image' || !node || !isMap(node)) {
      const text = scalarText(node, this.source);
      return text && this.workflowParameters ? withParameters(text, this.workflowParameters) : text;
    }
    const repository =
      scalarText(this.resolve(node.get('repository', true) as Node | undefined), this.source) ??
      scalarText(this.resolve(node.get('name', true) as Node | undefined), this.source);
    const tag = this.text(node.get('tag', true) as Node | undefined);
    const registry = this.text(node.get('registry', true) as Node | undefined)?.replace(/\/+$/, '');
    if (!repository) return undefined;
    // The repository is where the image is written; the registry and the tag beside it are added to the reference.
    const joined = tag === undefined ? repository : withTag(repository, tag);
    return registry && !repository.text.startsWith(`${registry}/`) ? withRegistry(registry, joined) : joined;
  }

  /**
   * A count of GPUs its kind writes as `resources.gpu` (production-stack's VLLMRuntime; its `gpuType`, where given,
   * says whose), or `resources.limits.gpu` (Dynamo): more than zero, of NVIDIA's or of no stated type.
   */
  private gpuCount(node: YAMLMap): boolean {
    // NIM operator's NIMService asks for its GPUs by DRA claims in `draResources` where it names no resource
    // (github.com/NVIDIA/k8s-nim-operator, api/apps/v1alpha1: "DRAResources ... to be used for the NIMService").
    const dra = this.resolve(node.get('draResources', true) as Node | undefined);
    if ((dra && isSeq(dra) && dra.items.length > 0) || this.countsGpus(node)) return true;
    const resources = this.map(node, 'resources');
    const count = resources ? Number(this.text(resources.get('gpu', true) as Node | undefined)) : Number.NaN;
    const type = resources ? this.text(resources.get('gpuType', true) as Node | undefined) : undefined;
    return Number.isFinite(count) && count > 0 && (type === undefined || /^nvidia\.com\//.test(type));
  }

  /**
   * `nvidia.com/gpu` or a MIG profile in its requests or limits (or their `.shared` names, which the device plugin
   * advertises for time-sliced or MPS-shared GPUs with `renameByDefault: true`: docs.nvidia.com/datacenter/
   * cloud-native/gpu-operator/latest/gpu-sharing.html), or NVIDIA_VISIBLE_DEVICES set to devices.
   */
  private requestsGpu(container: YAMLMap, field = 'resources'): boolean {
    const resources = this.map(container, field);
    for (const field of ['limits', 'requests']) {
      const map = resources ? this.map(resources, field) : undefined;
      for (const pair of map?.items ?? []) {
        const key = isScalar(pair.key) ? String(pair.key.value) : '';
        if (GPU_RESOURCE_NAME.test(key) && this.text(pair.value as Node) !== '0') return true;
      }
    }
    const env = this.resolve(container.get('env', true) as Node | undefined);
    if (env && isSeq(env))
      for (const item of env.items) {
        const entry = this.resolve(item as Node);
        if (
          !entry ||
          !isMap(entry) ||
          this.text(entry.get('name', true) as Node | undefined) !== 'NVIDIA_VISIBLE_DEVICES'
        )
          continue;
        const value = this.text(entry.get('value', true) as Node | undefined)
          ?.trim()
          .toLowerCase();
        if (value && value !== 'void' && value !== 'none') return true;
      }
    return false;
  }

  /** A nodeSelector's labels, each a requirement that the node carries that value. */
  private selectorOf(nodeSelector: YAMLMap): LabelRequirement[] {
    const selector: LabelRequirement[] = [];
    for (const pair of nodeSelector.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
      const valueNode = this.resolve(pair.value as Node | null);
      const value = this.text(valueNode);
      if (key === undefined || value === undefined) continue;
      const keyRange = (pair.key as Node).range ?? [0, 0];
      selector.push({
        key,
        operator: 'In',
        values: [value],
        span: { start: keyRange[0], end: Math.min(valueNode?.range?.[1] ?? keyRange[1], this.source.text.length) },
      });
    }
    return selector;
  }

  private placement(spec: YAMLMap): Placement {
    const nodeSelector = this.map(spec, 'nodeSelector');
    const selector = nodeSelector ? this.selectorOf(nodeSelector) : [];
    const terms: LabelRequirement[][] = [];
    const affinity = this.map(spec, 'affinity');
    const nodeAffinity = affinity ? this.map(affinity, 'nodeAffinity') : undefined;
    const required = nodeAffinity
      ? this.map(nodeAffinity, 'requiredDuringSchedulingIgnoredDuringExecution')
      : undefined;
    const termList = required ? this.resolve(required.get('nodeSelectorTerms', true) as Node | undefined) : undefined;
    if (termList && isSeq(termList))
      for (const item of termList.items) {
        const term = this.resolve(item as Node);
        if (!term || !isMap(term)) continue;
        const expressions = this.resolve(term.get('matchExpressions', true) as Node | undefined);
        const requirements: LabelRequirement[] = [];
        let readable = true;
        if (expressions && isSeq(expressions))
          for (const entry of expressions.items) {
            const expression = this.resolve(entry as Node);
            if (!expression || !isMap(expression)) continue;
            const key = this.text(expression.get('key', true) as Node | undefined);
            const operator = this.text(expression.get('operator', true) as Node | undefined);
            const valuesNode = this.resolve(expression.get('values', true) as Node | undefined);
            const values =
              valuesNode && isSeq(valuesNode)
                ? valuesNode.items.map((value) => this.text(this.resolve(value as Node))).filter((v) => v !== undefined)
                : [];
            if (key === undefined || !operator || !OPERATORS.has(operator)) {
              // An expression we cannot read: the term may or may not match, so it is not used to narrow.
              readable = false;
              continue;
            }
            const range = expression.range ?? [0, 0];
            requirements.push({
              key,
              operator: operator as LabelRequirement['operator'],
              values,
              span: { start: range[0], end: range[1] },
            });
          }
        // A term without expressions (only matchFields) or with one we cannot read narrows nothing.
        terms.push(readable ? requirements : []);
      }
    return { selector, terms };
  }

  private annotation(metadata: YAMLMap | undefined): Annotated | undefined {
    const annotations = metadata ? this.map(metadata, 'annotations') : undefined;
    const value = annotations
      ? scalarText(this.resolve(annotations.get(DOCKERFILE_ANNOTATION, true) as Node | undefined), this.source)
      : undefined;
    if (!value?.text.trim()) return undefined;
    return {
      path: value.text.trim().replace(/^\.\//, ''),
      span: value.origin(0, value.length) ?? value.site(0, value.length),
    };
  }

  private map(node: YAMLMap, key: string): YAMLMap | undefined {
    const value = this.resolve(node.get(key, true) as Node | undefined);
    return value && isMap(value) ? value : undefined;
  }

  private text(node: Node | null | undefined): string | undefined {
    const resolved = this.resolve(node);
    if (!resolved || !isScalar(resolved) || resolved.value === null || typeof resolved.value === 'object')
      return undefined;
    return String(resolved.value);
  }

  private resolve(node: Node | null | undefined): Node | undefined {
    if (!node || !isAlias(node)) return node ?? undefined;
    if (++this.aliases > MAX_ALIASES) {
      if (this.aliases === MAX_ALIASES + 1) {
        const [start, end] = node.range ?? [0, 0];
        this.sink.problems.push({
          span: { start, end },
          message: `YAML: more than ${MAX_ALIASES} aliases; the rest are not read`,
        });
      }
      return undefined;
    }
    return (node.resolve(this.doc) as Node | undefined) ?? undefined;
  }
}
