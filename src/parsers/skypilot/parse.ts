/**
 * A SkyPilot task (docs.skypilot.co/en/latest/reference/yaml-spec.html), read for what decides its CUDA: the container
 * its commands run in (`resources.image_id: docker:<image>`: "the task's setup and run commands run inside the
 * container", docs.skypilot.co, "Using Docker containers") and what its `setup` and `run` commands install there, as a
 * Dockerfile's stage is read (one stage: the image, then the installs). Its `envs` are the commands' environment;
 * a variable it leaves empty is passed when the task is launched (`--env`, `--secret`), and SkyPilot's own
 * (`SKYPILOT_NODE_RANK`) are set when it runs. A `resources` of several candidates (`any_of`, `ordered`), of which
 * SkyPilot picks one at launch, is said not checked where they name different images.
 */
import { isMap, isScalar, type Node } from 'yaml';
import type { FactSink, ParsedFile } from '../facts.js';
import { parseImageRef } from '../image-ref.js';
import { readScript } from '../installers.js';
import type { Mapped } from '../mapped.js';
import type { Resolver } from '../shell.js';
import type { SourceText } from '../source.js';
import { blockText, listOf, readYamlDocument, scalarText, valueOf } from '../yaml-text.js';

export function parseSkypilot(path: string, text: string): ParsedFile {
  const { source, sink, doc } = readYamlDocument(path, text);
  if (!doc || !isMap(doc.contents)) return sink.finish(path, 'skypilot', source);
  const root = doc.contents as Node;
  sink.stages.push({ index: 0, span: { start: 0, end: text.length } });
  const resources = valueOf(root, 'resources');
  const candidates = [...listOf(valueOf(resources, 'any_of')), ...listOf(valueOf(resources, 'ordered'))];
  const images = [resources, ...candidates]
    .map((node) => scalarText(valueOf(node, 'image_id'), source))
    .filter((image): image is Mapped => image !== undefined);
  const distinct = new Set(images.map((image) => image.text.trim()));
  if (distinct.size > 1) {
    const first = images[0]!;
    sink.unresolved.push({
      span: first.site(0, first.text.length),
      text: `image_id: ${first.text}`,
      reason: `the task's resources name ${distinct.size} images (any_of, ordered), of which SkyPilot picks one when it launches the task, so which one its commands run in is not known`,
    });
  } else if (images[0]) image(sink, images[0]);
  const resolve = environment(valueOf(root, 'envs'), source);
  for (const key of ['setup', 'run'] as const) {
    const script = blockText(valueOf(root, key), source);
    if (script) readScript(sink, script, 0, resolve, `the task's ${key}`);
  }
  const gpus = [resources, ...candidates].flatMap((node) => accelerators(valueOf(node, 'accelerators')));
  const file = sink.finish(path, 'skypilot', source);
  return gpus.length > 0 ? { ...file, gpus: [...new Set(gpus)] } : file;
}

/**
 * The GPU models of `accelerators` (docs.skypilot.co, yaml-spec: `V100:8`, `{A100:1, V100:1}` for any of them, a list
 * for any of them in order), without their counts.
 */
function accelerators(node: Node | undefined): string[] {
  const name = (text: string): string => text.replace(/:\s*\d+(?:\.\d+)?\s*$/, '').trim();
  if (isScalar(node) && typeof node.value === 'string') return node.value.trim() ? [name(node.value)] : [];
  if (isMap(node)) return node.items.flatMap((pair) => (isScalar(pair.key) ? [name(String(pair.key.value))] : []));
  return listOf(node).flatMap((item) => (isScalar(item) && typeof item.value === 'string' ? [name(item.value)] : []));
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
  const { registry, repository, tag } = parseImageRef(reference);
  sink.images.push({
    stage: 0,
    reference,
    ...(registry ? { registry } : {}),
    repository,
    ...(tag ? { tag } : {}),
    span: written.site(0, reference.length),
  });
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
