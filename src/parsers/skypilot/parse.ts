/**
 * A SkyPilot task (docs.skypilot.co/en/latest/reference/yaml-spec.html), read for what decides its CUDA: the container
 * its commands run in (`resources.image_id: docker:<image>`: "the task's setup and run commands run inside the
 * container", docs.skypilot.co, "Using Docker containers") and what its `setup` and `run` commands install there, as a
 * Dockerfile's stage is read (one stage: the image, then the installs). Its `envs` are the commands' environment;
 * a variable it leaves empty is passed when the task is launched (`--env`, `--secret`), and SkyPilot's own
 * (`SKYPILOT_NODE_RANK`) are set when it runs. A `resources` of several candidates (`any_of`, `ordered`), of which
 * SkyPilot picks one at launch, is said not checked where they name different images.
 */
import { isMap, isScalar, parseAllDocuments, type Node } from 'yaml';
import { FactSink, type GpuAsk, type ParsedFile } from '../facts.js';
import { imageFactOf } from '../image-ref.js';
import { readScript } from '../scripts.js';
import type { Mapped } from '../mapped.js';
import type { Resolver } from '../shell.js';
import { SourceText } from '../source.js';
import { findSuppressions } from '../suppressions.js';
import { blockText, firstYamlProblem, listOf, readYamlDocument, scalarText, valueOf } from '../yaml-text.js';

export function parseSkypilot(path: string, text: string): ParsedFile {
  // A pipeline is tasks of one file, as YAML documents (docs.skypilot.co, "Pipelines": a first document that names
  // the pipeline, then one per task, run in turn).
  if (/^---[ \t]*\r?$/m.test(text)) return parsePipeline(path, text);
  const { source, sink, doc } = readYamlDocument(path, text);
  if (!doc || !isMap(doc.contents)) return sink.finish(path, 'skypilot', source);
  sink.stages.push({ index: 0, span: { start: 0, end: text.length } });
  const task = readTask(sink, doc.contents as Node, source);
  return finish(sink.finish(path, 'skypilot', source), task);
}

/** What a task says of where it runs: its GPUs, and why it runs off the fleet. */
interface TaskPlace {
  readonly gpus: readonly GpuAsk[];
  readonly offFleet?: string;
}

function finish(file: ParsedFile, ...tasks: readonly TaskPlace[]): ParsedFile {
  const gpus = [...new Map(tasks.flatMap((task) => task.gpus).map((gpu) => [gpu.name, gpu] as const)).values()];
  const off = tasks.find((task) => task.offFleet)?.offFleet;
  return gpus.length > 0 || off
    ? { ...file, ...(gpus.length > 0 ? { gpus } : {}), ...(off ? { offFleet: off } : {}) }
    : file;
}

/**
 * A pipeline's tasks, read as one stage where they run in the first task's container (or, where it names none, on
 * SkyPilot's machine image as it does): a task of another container is said not checked, its installs not compared
 * with another image.
 */
function parsePipeline(path: string, text: string): ParsedFile {
  const source = new SourceText(path, text);
  const sink = new FactSink();
  sink.suppressions.push(...findSuppressions(source));
  const docs = parseAllDocuments(text, { uniqueKeys: false, prettyErrors: false, strict: false });
  const list = Array.isArray(docs) ? docs : [docs];
  sink.stages.push({ index: 0, span: { start: 0, end: text.length } });
  const tasks: TaskPlace[] = [];
  /** The first task's container, as written ('' for none). */
  let container: string | undefined;
  for (const doc of list) {
    if (doc.errors.length > 0) {
      sink.problems.push(firstYamlProblem(doc.errors, text));
      continue;
    }
    const root = doc.contents as Node | null;
    if (!isMap(root) || !(valueOf(root, 'setup') || valueOf(root, 'run') || valueOf(root, 'resources'))) continue;
    const image = imageOf(valueOf(root, 'resources'), source);
    const own = image?.text.trim() ?? '';
    container ??= own;
    if (own !== container) {
      const at = image ? image.site(0, image.text.length) : { start: root.range![0], end: root.range![0] };
      sink.unresolved.push({
        span: at,
        text: image ? `image_id: ${image.text}` : 'this task',
        reason: `this task of the pipeline runs ${own ? `in another container (${own})` : "on SkyPilot's machine image"}, not where the first task runs (${container || "SkyPilot's machine image"}), and only the first task's is compared with what the tasks install`,
      });
      continue;
    }
    tasks.push(readTask(sink, root, source));
  }
  return finish(sink.finish(path, 'skypilot', source), ...tasks);
}

/** The `image_id` a task's resources name, where one is named. */
function imageOf(resources: Node | undefined, source: SourceText): Mapped | undefined {
  return scalarText(valueOf(resources, 'image_id'), source);
}

/** One task: its container, the installs of its commands, where it runs. */
function readTask(sink: FactSink, root: Node, source: SourceText): TaskPlace {
  const resources = valueOf(root, 'resources');
  const candidates = [...listOf(valueOf(resources, 'any_of')), ...listOf(valueOf(resources, 'ordered'))];
  const images = [resources, ...candidates]
    .map((node) => imageOf(node, source))
    .filter((image): image is Mapped => image !== undefined);
  const distinct = new Set(images.map((image) => image.text.trim()));
  if (distinct.size > 1) {
    const first = images[0]!;
    sink.unresolved.push({
      span: first.site(0, first.text.length),
      text: `image_id: ${first.text}`,
      reason: `the task's resources name ${distinct.size} images (any_of, ordered), of which SkyPilot picks one when it launches the task, so which one its commands run in is not known`,
    });
  } else if (images[0] && !sink.images.some((known) => known.stage === 0)) image(sink, images[0]);
  const resolve = environment(valueOf(root, 'envs'), source);
  const before = sink.contexts.length;
  for (const key of ['setup', 'run'] as const) {
    const script = blockText(valueOf(root, key), source);
    if (script) readScript(sink, script, 0, resolve, `the task's ${key}`);
  }
  // A git `workdir` (`{url, ref}`, or its address) is cloned to ~/sky_workdir, where the commands run
  // (docs.skypilot.co, "Syncing code, git, and files"): the files they install are that repository's, not the ones
  // beside the task.
  const given = valueOf(root, 'workdir');
  const workdir = scalarText(isMap(given) ? valueOf(given, 'url') : given, source)?.text.trim();
  const url = workdir && /^(?:https?|ssh|git):\/\/|^git@/.test(workdir) ? workdir : undefined;
  if (url)
    for (const context of sink.contexts.slice(before))
      for (const include of [...context.includes])
        if (!include.cloned) sink.markCloned(context, include, { url, path: include.target });
  const gpus = [resources, ...candidates].flatMap((node) => accelerators(valueOf(node, 'accelerators'), source));
  const off = offFleet(resources, source);
  return { gpus, ...(off ? { offFleet: off } : {}) };
}

/**
 * A task whose `infra` (or the older `cloud`) names a cloud other than Kubernetes (`aws`, `gcp/us-central1`) runs on
 * that cloud's VMs (docs.skypilot.co, yaml-spec: `infra`), not on a Kubernetes cluster's node pools.
 */
function offFleet(resources: Node | undefined, source: SourceText): string | undefined {
  const infra = scalarText(valueOf(resources, 'infra') ?? valueOf(resources, 'cloud'), source)?.text.trim();
  if (!infra || /^(?:k8s|kubernetes)(?:\/|$)/i.test(infra)) return undefined;
  return `the task runs on ${infra.split('/')[0]}'s machines (infra: ${infra}), not on the fleet's node pools`;
}

/**
 * The GPU models of `accelerators` (docs.skypilot.co, yaml-spec: `V100:8`, `{A100:1, V100:1}` for any of them, a list
 * for any of them in order), without their counts, each where it is written.
 */
function accelerators(node: Node | undefined, source: SourceText): GpuAsk[] {
  const ask = (item: Node | null | undefined): GpuAsk[] => {
    const text = scalarText(item, source);
    const name = text?.text.replace(/:\s*\d+(?:\.\d+)?\s*$/, '').trim();
    return text && name ? [{ name, span: text.site(0, text.text.length) }] : [];
  };
  if (isScalar(node)) return ask(node);
  if (isMap(node)) return node.items.flatMap((pair) => ask(pair.key as Node));
  return listOf(node).flatMap(ask);
}

/**
 * `image_id: docker:<image>`: the container the task runs in. Any other value names a cloud's machine image (an AMI, a
 * GCP image), which holds no container the gate can judge; its CUDA is the machine's.
 */
function image(sink: FactSink, value: Mapped): void {
  const at = /^\s*docker:/.exec(value.text);
  if (!at) return;
  const written = value.slice(at[0].length).trim();
  const reference = written.text;
  if (!reference) return;
  sink.images.push(imageFactOf(reference, 0, written.site(0, reference.length)));
}

/** The commands' variables: the task's `envs` (a null value is given at launch), and SkyPilot's own. */
function environment(envs: Node | undefined, source: SourceText): Resolver {
  const values = new Map<string, Mapped | null>();
  if (isMap(envs))
    for (const pair of envs.items)
      if (isScalar(pair.key)) {
        const value = isScalar(pair.value) && pair.value.value !== null ? scalarText(pair.value, source) : undefined;
        values.set(String(pair.key.value), value ?? null);
      }
  return (name) => {
    const value = values.get(name);
    if (value) return { value };
    if (value === null) return { unresolved: `$${name} is given when the task is launched (--env, --secret)` };
    if (name.startsWith('SKYPILOT_')) return { unresolved: `$${name} is set by SkyPilot when the task runs` };
    return { unresolved: `$${name} is set outside the task` };
  };
}
