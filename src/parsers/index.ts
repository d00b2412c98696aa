import {
  GPU_BY_KIND_NAME,
  GPU_CLAIM_KIND,
  GPU_CLASS,
  GPU_REQUEST_KEY,
  TOP_LEVEL_INCLUDE,
  WORKLOAD_SHAPE,
} from './kubernetes/kinds.js';
import { looksLikePipelineSpec } from './kubernetes/parse.js';
import type { FileKind, ParsedFile } from './facts.js';
import { FactSink } from './facts.js';
import { SourceText } from './source.js';
import { formatByName, formatOf, type ParseOptions } from './formats.js';

export type { ParseOptions } from './formats.js';
export { HOOK_FILES } from './formats.js';

/**
 * Which parser reads a path, by its name (each format's `matches`, src/parsers/formats.ts), or undefined when the
 * name does not say. Names that only hint at an environment (`env.gpu.yml`, `pytorch-env.yml`) and YAML files in
 * environment folders are conda environments when their content says so (condaByContent); a file named on the
 * command line is read by content (sniffKind).
 */
export function classifyPath(path: string): FileKind | undefined {
  return formatByName(path)?.kind;
}

/**
 * The lock files that pin a manifest, beside it (its format's `companions`): uv.lock, poetry.lock, pixi.lock for a
 * pyproject.toml; pixi.lock for a pixi.toml.
 */
export function lockCompanions(path: string, kind: FileKind): string[] {
  const directory = path.includes('/') ? path.slice(0, path.lastIndexOf('/') + 1) : '';
  return (formatOf(kind).companions ?? []).map((name) => `${directory}${name}`);
}

/** Folders whose YAML files are conda environments when their content says so (RAPIDS' `conda/environments/`). */
const CONDA_FOLDERS = /(?:^|\/)(?:\.?conda|envs?|environments?|conda-envs?)\//i;

/**
 * Names that hint at an environment without saying so: `env.yml`, `env.gpu.yml`, `pytorch-env.yaml`, and `conda` or
 * `environment` inside a name (`gpu-conda-cu121.yml`; an AzureML deployment is `…-conda-in-dockerfile-deployment.yml`).
 */
const ENV_NAME = /(?:^|[._-])(?:envs?|conda|environment)(?:[._-][^/]*)?\.ya?ml$/i;

/** A YAML path that may be a conda environment: read it and ask `looksLikeConda`. */
export function condaByContent(path: string): boolean {
  if (!/\.ya?ml$/i.test(path) || classifyPath(path)) return false;
  return CONDA_FOLDERS.test(path) || ENV_NAME.test(path.slice(path.lastIndexOf('/') + 1));
}

/**
 * A path the gate reads by its name, or may read by its content (a YAML file no name claims): what a repository's
 * index of CUDA-relevant paths keeps.
 */
export function candidatePath(path: string): boolean {
  return classifyPath(path) !== undefined || yamlByContent(path);
}

/**
 * A YAML file that no name claims: its content decides (kindByContent) whether it is a conda environment or a
 * Kubernetes manifest. So does a YAML file kept as a template that a script fills in before it is applied
 * (`envsubst < vllm-k8s.yaml.template | kubectl apply -f -`, `deployment.yaml.tmpl`, an Ansible `pod.yaml.j2`).
 */
export function yamlByContent(path: string): boolean {
  return YAML_OR_TEMPLATE.test(path) && !classifyPath(path);
}

/**
 * A YAML file, or one kept as a template of one (envsubst, Go or Jinja templates): `.yaml.template` and
 * awsome-distributed-training's `.yaml-template` and `.template`, Terraform's `.tftpl` (the extension its
 * templatefile docs recommend; ai-on-gke keeps its GPU Deployments so).
 */
const YAML_OR_TEMPLATE = /(?:\.ya?ml(?:[.-](?:template|tmpl|tpl|tftpl|j2|jinja2?|in))?|\.tftpl|\.template)$/i;

/**
 * A Kubernetes manifest with workloads, by shape (src/parsers/kubernetes/kinds.ts): a top-level `apiVersion:` and
 * `kind:` (in any of its documents) and a container list, a container, an image or a GPU request somewhere, whatever
 * the kind. A Helm, Go or Jinja template is one too: its documents that parse are read, the others said not checked.
 */
export function looksLikeManifest(text: string, path = ''): boolean {
  // A compiled Kubeflow pipeline has no apiVersion: its executors' containers are read as a manifest's.
  if (looksLikePipelineSpec(text)) return true;
  if (looksLikeChartTemplate(path, text)) return true;
  // A file of GPU claims alone, or of llmaz models whose flavors ask for GPUs: pods and Playgrounds of other files
  // that name them get GPUs (read into the repository's index).
  if (/^apiVersion:[ \t]*resource\.k8s\.io\//m.test(text) && GPU_CLAIM_KIND.test(text) && GPU_CLASS.test(text))
    return true;
  if (LLMAZ_KIND.test(text) && /^apiVersion:[ \t]*(?:inference\.)?llmaz\.io\//m.test(text)) return true;
  if (!/^apiVersion:[ \t]*\S/m.test(text) || !(WORKLOAD_SHAPE.test(text) || GPU_BY_KIND_NAME.test(text))) return false;
  // A manifest whose `kind:` is mis-indented (YAML cannot read it, nor can kubectl) still says what it is by a GPU
  // request: read, it fails closed on its YAML errors rather than being passed over.
  return /^kind:[ \t]*\S/m.test(text) || GPU_REQUEST_KEY.test(text);
}

/**
 * A Helm chart's template that writes its objects from named templates alone (`{{ include "nim.common.v1.deployment"
 * . }}` as a line of its own, no `apiVersion:` of its own): what it renders is only known from the chart, so it is read
 * as a manifest, to be said not checked rather than passed over. Helm renders the files of a chart's `templates/`
 * folder, those whose names begin with `_` (partials) into no manifest (helm.sh/docs/chart_template_guide/
 * named_templates).
 */
function looksLikeChartTemplate(path: string, text: string): boolean {
  return CHART_TEMPLATE_PATH.test(path) && TOP_LEVEL_INCLUDE.test(text);
}

const CHART_TEMPLATE_PATH = /(?:^|\/)templates\/(?:[^/]+\/)*[^/_][^/]*\.ya?ml$/;

/** llmaz's model and its Playground, which claims a model by name (InftyAI/llmaz api/inference/v1alpha1). */
const LLMAZ_KIND = /^kind:[ \t]*["']?(?:OpenModel|Playground)["']?[ \t]*$/m;

/**
 * What a YAML file that no name claims is, from its content: a conda environment where the path hints at one, else a
 * manifest, else a Compose file.
 */
export function kindByContent(path: string, text: string): FileKind | undefined {
  if (condaByContent(path) && looksLikeConda(text)) return 'conda';
  if (looksLikeManifest(text, path)) return 'kubernetes';
  if (looksLikeCompose(text)) return 'compose';
  return looksLikeSkypilot(text) ? 'skypilot' : undefined;
}

/**
 * A Compose file under a name of its own (`nims.yaml`, `vectordb.yaml`: files a `docker compose -f` names): a top-level
 * `services:` mapping (a CI file's top-level `services:` is a list of images) and a service's `image:` or `build:`.
 */
export function looksLikeCompose(text: string): boolean {
  return COMPOSE_SERVICES.test(text) && /^[ \t]+(?:image|build)[ \t]*:/m.test(text);
}

const COMPOSE_SERVICES =
  /^services[ \t]*:[ \t]*(?:#.*)?\r?\n(?:[ \t]*(?:#.*)?\r?\n)*[ \t]+[\w.-]+[ \t]*:[ \t]*(?:#.*|&\S+)?\r?$/m;

/**
 * A SkyPilot task (docs.skypilot.co/en/latest/reference/yaml-spec.html): a top-level `resources:` mapping that names
 * what the task runs on (`accelerators`, `image_id`, `infra`, `cloud`), and the task's `setup:` or `run:` commands.
 */
export function looksLikeSkypilot(text: string): boolean {
  if (!/^(?:setup|run)[ \t]*:/m.test(text)) return false;
  // A flow mapping on its line (`resources: {accelerators: A100:8}`), or the block of indented lines under it.
  if (/^resources[ \t]*:[ \t]*\{[^\n]*\b(?:accelerators|image_id|infra|cloud)[ \t]*:/m.test(text)) return true;
  // Each task's (a pipeline's documents each have theirs).
  const blocks = /^resources[ \t]*:[ \t]*(?:#.*)?\r?$/gm;
  for (let at = blocks.exec(text); at; at = blocks.exec(text)) {
    let start = text.indexOf('\n', at.index) + 1;
    while (start > 0 && start < text.length) {
      const end = text.indexOf('\n', start);
      const line = text.slice(start, end < 0 ? text.length : end);
      // The block ends at the first line that is not indented, blank or a comment.
      if (!/^(?:[ \t]|[ \t]*(?:#.*)?\r?$)/.test(line)) break;
      if (/^[ \t]+(?:-[ \t]+)?(?:accelerators|image_id|infra|cloud)[ \t]*:/.test(line)) return true;
      start = end + 1;
    }
  }
  return false;
}

/** A conda environment file: a top-level `dependencies:` list, with `name:` or `channels:` beside it. */
export function looksLikeConda(text: string): boolean {
  return DEPENDENCY_LIST.test(text) && /^(?:name|channels|prefix)\s*:/m.test(text);
}

/**
 * A top-level `dependencies:` whose value is a list (`- numpy` on the lines after it, or `[…]`), as a conda
 * environment's is: RAPIDS' dependencies.yaml and Flutter's pubspec.yaml hold a mapping there.
 */
const DEPENDENCY_LIST = /^dependencies[ \t]*:[ \t]*(?:\[|(?:#.*)?\r?\n(?:[ \t]*(?:#.*)?\r?\n)*[ \t]*-(?:[ \t]|$))/m;

/**
 * A Git LFS pointer in place of a file's content (git-lfs.com spec v1: "version https://git-lfs.github.com/spec/v1",
 * then `oid sha256:…` and `size N`): what a checkout without LFS, and GitHub's blob API, give for a file LFS stores.
 */
export function isLfsPointer(text: string): boolean {
  return (
    text.length < 1024 &&
    text.startsWith('version https://git-lfs.github.com/spec/v1') &&
    /^oid sha256:[0-9a-f]{64}$/m.test(text)
  );
}

export const LFS_POINTER =
  'is a Git LFS pointer: its content is stored outside the repository and is not in this checkout';

/**
 * The kind of a file from its content, for files named on the command line whose name does not say: a
 * Dockerfile starts (after comments and parser directives) with FROM or ARG; a conda environment has a top-level
 * `dependencies:`; a requirements file holds only requirements, options and comments.
 */
export function sniffKind(text: string): FileKind | undefined {
  const lines = text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/, 500)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  if (lines.length === 0) return undefined;
  // `from setuptools import setup` is Python's, not a FROM (a Dockerfile's FROM names no `import`).
  if (/^(?:FROM|ARG)\s+\S/i.test(lines[0]!) && !/^from\s+\S+\s+import\s/.test(lines[0]!)) return 'dockerfile';
  // Named, a Kubernetes object of any kind is a manifest (a ConfigMap, a Kueue queue): checked, it asks for nothing.
  // A walk takes only those of a workload's shape (kindByContent), so that not every YAML of a repository is one.
  if (/^apiVersion:[ \t]*\S/m.test(text) && /^kind:[ \t]*\S/m.test(text)) return 'kubernetes';
  if (looksLikeConda(text) || DEPENDENCY_LIST.test(text)) return 'conda';
  const requirement =
    /^(?:-[-a-zA-Z]|[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\])?\s*(?:[<>=!~]=?|===|;|@|$)|(?:git|hg|svn|bzr)\+|https?:\/\/|\.{1,2}\/)/;
  return lines.every((line) => requirement.test(line)) ? 'requirements' : undefined;
}

/**
 * Parse a file of a known kind. A parser bug must not take the whole run down: it becomes a positioned
 * problem on the file (reported as parse-error) and the file contributes no facts.
 */
export function parseFile(path: string, text: string, kind: FileKind, options: ParseOptions = {}): ParsedFile {
  try {
    return formatOf(kind).parse(path, text, options);
  } catch (error) {
    const sink = new FactSink();
    sink.problems.push({
      span: { start: 0, end: 0 },
      message: `internal error while reading this file: ${(error as Error).message}`,
    });
    return sink.finish(path, kind, new SourceText(path, text));
  }
}
