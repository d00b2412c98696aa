/**
 * Kubernetes manifests: every container of every workload in a (multi-document) YAML file, with its image and where
 * its pod may be scheduled. Plain manifests and the output of `kustomize build` / `helm template` saved as files are
 * read; templates themselves (`{{ .Values.image }}`) are not manifests (looksLikeManifest).
 *
 * A pod spec is any mapping with a `containers` list, wherever the workload keeps it: a Pod's `spec`, the
 * `spec.template.spec` of a Deployment, StatefulSet, DaemonSet, ReplicaSet or Job, a CronJob's
 * `spec.jobTemplate.spec.template.spec`, and the replica templates of operators' kinds (PyTorchJob, RayCluster,
 * JobSet). Scheduling follows "Assigning Pods to Nodes" (kubernetes.io/docs/concepts/scheduling-eviction/
 * assign-pod-node/): every `nodeSelector` label must match, and with
 * `affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution` one of its `nodeSelectorTerms` must,
 * each term's `matchExpressions` all holding.
 */
import { isAlias, isMap, isScalar, isSeq, parseAllDocuments, type Document, type Node, type YAMLMap } from 'yaml';
import { FactSink, type ContainerFact, type LabelRequirement, type ParsedFile, type Placement } from '../facts.js';
import { imageName, parseImageRef } from '../image-ref.js';
import { SourceText, type Span } from '../source.js';
import { findSuppressions } from '../suppressions.js';
import { scalarText, yamlProblem } from '../yaml-text.js';

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
}

export function parseKubernetesManifest(path: string, text: string, options: ManifestOptions = {}): ParsedFile {
  const source = new SourceText(path, text);
  const sink = new FactSink();
  sink.suppressions.push(...findSuppressions(source));
  const docs = parseAllDocuments(text, { uniqueKeys: false, prettyErrors: false, strict: false });
  const list = Array.isArray(docs) ? docs : [docs];
  for (const doc of list) {
    // A document YAML cannot read is a positioned problem (parse-error), and none of its containers is guessed at.
    for (const error of doc.errors) sink.problems.push(yamlProblem(error, text));
    if (doc.errors.length > 0) continue;
    new Reader(doc as Document, source, sink, options.images ?? {}).document(doc.contents as Node | null);
  }
  return sink.finish(path, 'kubernetes', source);
}

class Reader {
  private aliases = 0;
  constructor(
    private readonly doc: Document,
    private readonly source: SourceText,
    private readonly sink: FactSink,
    private readonly images: Readonly<Record<string, string>>,
  ) {}

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
    this.search(root, workload, '', this.annotation(metadata), 0);
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
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
      if (key === undefined || key === 'metadata' || key === 'status') continue;
      const value = this.resolve(pair.value as Node | null);
      // A pod template carries its own metadata: its annotation names the Dockerfile as well as the workload's.
      const own =
        key === 'template' && value && isMap(value)
          ? (this.annotation(this.map(value, 'metadata')) ?? dockerfile)
          : dockerfile;
      if (value && isMap(value) && /ReplicaSpecs$/.test(key)) {
        // PyTorchJob's pytorchReplicaSpecs, TFJob's tfReplicaSpecs: a map from replica type to its template.
        for (const inner of value.items) {
          const template = this.resolve(inner.value as Node | null);
          if (template && isMap(template))
            this.search(template, workload, isScalar(inner.key) ? String(inner.key.value) : '', own, depth + 1);
        }
      } else if (value && isMap(value)) {
        // RayCluster's headGroupSpec is the "head" replica.
        this.search(
          value,
          workload,
          replica || (key.endsWith('GroupSpec') ? key.slice(0, -'GroupSpec'.length) : ''),
          own,
          depth + 1,
        );
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
    const placement = this.placement(spec);
    const runtimeGpu = this.text(spec.get('runtimeClassName', true) as Node | undefined)?.toLowerCase() === 'nvidia';
    for (const list of ['initContainers', 'containers']) {
      const containers = this.resolve(spec.get(list, true) as Node | undefined);
      if (!containers || !isSeq(containers)) continue;
      for (const item of containers.items) {
        const container = this.resolve(item as Node);
        if (!container || !isMap(container)) continue;
        const image = scalarText(this.resolve(container.get('image', true) as Node | undefined), this.source);
        if (!image) continue;
        const reference = image.text;
        const span = image.origin(0, image.length) ?? image.site(0, image.length);
        const name = this.text(container.get('name', true) as Node | undefined) ?? reference;
        const parts = parseImageRef(reference);
        const templated = /[{}$]/.test(reference);
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
        const tagSpan =
          parts.tagOffset !== undefined
            ? image.origin(parts.tagOffset, parts.tagOffset + parts.tag!.length)
            : undefined;
        this.sink.containers.push({
          span,
          workload,
          name,
          image: {
            span,
            stage: this.sink.containers.length,
            reference,
            ...parts,
            ...(tagSpan ? { tagSpan } : {}),
            ...(templated ? { unresolved: 'the image is a template or a variable, not a reference' } : {}),
          },
          gpu: runtimeGpu || this.requestsGpu(container),
          placement,
          ...(dockerfile ? { dockerfile } : {}),
        });
      }
    }
  }

  /** `nvidia.com/gpu` or a MIG profile in its requests or limits, or NVIDIA_VISIBLE_DEVICES set to devices. */
  private requestsGpu(container: YAMLMap): boolean {
    const resources = this.map(container, 'resources');
    for (const field of ['limits', 'requests']) {
      const map = resources ? this.map(resources, field) : undefined;
      for (const pair of map?.items ?? []) {
        const key = isScalar(pair.key) ? String(pair.key.value) : '';
        if (/^nvidia\.com\/(?:gpu|mig-[\w.-]+)$/.test(key) && this.text(pair.value as Node) !== '0') return true;
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

  private placement(spec: YAMLMap): Placement {
    const selector: LabelRequirement[] = [];
    const nodeSelector = this.map(spec, 'nodeSelector');
    for (const pair of nodeSelector?.items ?? []) {
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
