/**
 * What of a checkout runs on the fleet's GPUs, for the rules that judge units on the fleet (driver-floor, gpu-arch):
 * a Dockerfile the checked manifests run only in containers that get no GPU, and pip-compile's input beside its
 * output, are said as notices; a stage that only builds what another stage copies is judged after the stages that
 * run and held less certain (a warning). Said, never dropped: what the files show may not be every use.
 */
import { imageFullName } from '../parsers/image-ref.js';
import type { CopyFact, ParsedFile } from '../parsers/facts.js';
import { dirname, joinRepo } from './paths.js';
import { baseImage, StageTree } from './stages.js';
import { otherAccelerator } from './claims.js';
import type { KnowledgeBase } from '../knowledge/index.js';
import type { Unit } from './units.js';

export interface FleetScope {
  /**
   * Why the unit's CUDA is not loaded on a GPU node, as far as the checked files say (a Dockerfile the manifests run
   * only without GPUs, pip-compile's input beside its output); undefined where it may be.
   */
  notRun(unit: Unit): string | undefined;
}

export function fleetScope(files: readonly ParsedFile[], kb: KnowledgeBase): FleetScope {
  const cpuOnly = dockerfilesRunWithoutGpus(files);
  const compiled = compiledInputs(files);
  return {
    notRun: (unit) => {
      if (unit.container) return undefined;
      // A stage on another vendor's accelerator image (Ascend's CANN, ROCm): what it installs runs on those.
      const base =
        unit.stage !== undefined && unit.root.kind === 'dockerfile' ? baseImage(unit.root, unit.stage) : undefined;
      // Not where the stage installs NVIDIA's CUDA itself (ollama builds its CUDA backends on ROCm's dev image).
      const vendor =
        base && !unit.claims.some((claim) => claim.kind === 'apt' || claim.kind === 'env')
          ? otherAccelerator(base, kb)
          : undefined;
      if (base && vendor)
        return `This stage is built on ${base.reference}, an image for ${vendor}, which ships no CUDA: what it installs runs there, not on the fleet's NVIDIA GPUs.`;
      // A stage that installs another vendor's PyTorch backend (infinity's Neuron image, built on a mirror of AWS's
      // Neuron container): what it installs runs on that vendor's accelerators.
      const backend = unit.stage !== undefined ? otherBackend(unit) : undefined;
      if (backend)
        return `This stage installs ${backend.name}, which is for ${backend.vendor} (${backend.source}): what it installs runs there, not on the fleet's NVIDIA GPUs.`;
      // A stage on a Jetson image (L4T): what it installs runs on Jetson boards, whose driver is their L4T release's.
      const jetson = base && !base.unresolved ? kb.jetsonImage(imageFullName(base)) : undefined;
      if (base && jetson)
        return `This stage is built on ${base.reference}, an image for NVIDIA Jetson boards (arm64, L4T), whose CUDA driver comes with the board's L4T release: what it installs runs there, not on the fleet's pools (${jetson.source[0]!.split(' ')[0]}).`;
      // A stage that installs from NVIDIA's Jetson apt repository (roboflow/inference's Jetson images on ubuntu:24.04):
      // its CUDA packages are built for the boards.
      if (unit.stage !== undefined && unit.root.kind === 'dockerfile' && jetsonRepository(unit.root, unit.stage))
        return `This stage installs from NVIDIA's Jetson apt repository (${JETSON_REPOSITORY_SOURCE}), whose CUDA packages are built for Jetson boards (arm64, L4T): what it installs runs there, not on the fleet's pools.`;
      const workloads = cpuOnly.get(unit.root.path);
      if (workloads)
        return `The workloads that run this Dockerfile's image here get no GPU (${workloads.join(', ')}), so its CUDA is never loaded on the fleet's GPUs.`;
      // A documentation build's requirements (Read the Docs, Sphinx, MkDocs): installed on a docs builder, which has
      // no GPU (docs.readthedocs.com/platform/stable/builds.html: builds run in a Docker image on CPU builders).
      if (unit.stage === undefined && unit.root.kind === 'requirements' && DOCS_REQUIREMENTS.test(unit.root.path))
        return 'These are the requirements of a documentation build (by their name or folder), which runs on a docs builder without GPUs, not on the fleet.';
      // The requirements of a CI workflow, kept with the workflows (`.github/requirements-test.txt`, installed by a job
      // of .github/workflows on a hosted runner, which has no GPU: docs.github.com, "GitHub-hosted runners").
      if (unit.stage === undefined && unit.root.kind === 'requirements' && /^\.github\//.test(unit.root.path))
        return 'These are the requirements of a CI workflow (kept under .github/), installed on CI runners, not on the fleet.';
      // A requirements file named for another platform (`requirements-mps.txt`, `requirements_rocm.txt`, `-cpu`):
      // installed where that platform runs (LocalAI's mps files, by its darwin build script alone).
      const platform =
        unit.stage === undefined && unit.root.kind === 'requirements' ? otherPlatform(unit.root.path) : undefined;
      if (platform)
        return `These requirements are named for ${platform}, where their torch does not load CUDA on the fleet's NVIDIA GPUs.`;
      // pip-compile's input beside its output (ai-on-gke's requirements.in and requirements.txt): the output is
      // what is installed, and it is judged.
      const output = unit.stage === undefined ? compiled.get(unit.root.path) : undefined;
      if (output)
        return `This is pip-compile's input: ${output} is compiled from it and is what is installed (it is judged on its own).`;
      return undefined;
    },
  };
}

/** NVIDIA's apt repository for Jetson (JetPack's packages for L4T), as a Dockerfile adds it to apt's sources. */
const JETSON_REPOSITORY = /\brepo\.download\.nvidia\.com\/jetson\//;
const JETSON_REPOSITORY_SOURCE =
  'docs.nvidia.com/jetson/archives/r38.2/DeveloperGuide/SD/SoftwarePackagesAndTheUpdateMechanism.html';

/** Whether a Dockerfile stage's own text adds NVIDIA's Jetson apt repository. */
function jetsonRepository(file: ParsedFile, stage: number): boolean {
  const start = file.stages[stage]?.span.start;
  if (start === undefined) return false;
  const end = file.stages[stage + 1]?.span.start ?? file.source.text.length;
  return JETSON_REPOSITORY.test(file.source.text.slice(start, end));
}

/** Other vendors' PyTorch backends and compilers, by package, with the page that says what it runs on. */
const NEURON = 'AWS Trainium and Inferentia (Neuron)';
const NEURON_TORCH = 'awsdocs-neuron.readthedocs-hosted.com/en/latest/frameworks/torch/index.html';
const OTHER_BACKENDS: ReadonlyMap<string, { readonly vendor: string; readonly source: string }> = new Map([
  ['torch-neuronx', { vendor: NEURON, source: NEURON_TORCH }],
  ['torch-neuron', { vendor: NEURON, source: NEURON_TORCH }],
  ['neuronx-cc', { vendor: NEURON, source: 'awsdocs-neuron.readthedocs-hosted.com/en/latest/compiler/index.html' }],
  ['torch-npu', { vendor: 'Huawei Ascend NPUs', source: 'github.com/Ascend/pytorch' }],
  ['habana-torch-plugin', { vendor: 'Intel Gaudi', source: 'docs.habana.ai/en/latest/PyTorch/index.html' }],
]);

/** The first package of a unit that is for another vendor's accelerators (OTHER_BACKENDS), with which. */
function otherBackend(
  unit: Unit,
): { readonly name: string; readonly vendor: string; readonly source: string } | undefined {
  for (const { pkg } of unit.packages) {
    const backend = pkg.ecosystem === 'pip' ? OTHER_BACKENDS.get(pkg.name) : undefined;
    if (backend) return { name: pkg.name, ...backend };
  }
  return undefined;
}

/**
 * A requirements file of a documentation build: in a `docs`/`doc` folder (`docs/requirements.txt`,
 * `docs/sphinx/requirements.txt`), or named for one (`requirements-docs.txt`, `docs-requirements.txt`,
 * `requirements/readthedocs.txt`, `requirements/docs.txt`, `requirements-sphinx.txt`, `mkdocs-requirements.txt`).
 */
const DOCS_REQUIREMENTS =
  /(?:^|\/)docs?\/|(?:^|\/)(?:(?:docs?|readthedocs|rtd|sphinx|mkdocs)(?:[_.-]requirements?)?|requirements?[_.-](?:docs?|readthedocs|rtd|sphinx|mkdocs))\.(?:txt|in)$/i;

/** The platform a requirements file is named for, where it names one other than NVIDIA's GPUs. */
function otherPlatform(path: string): string | undefined {
  const name = path.slice(path.lastIndexOf('/') + 1).toLowerCase();
  const word =
    /(?:^|[_.-])(mps|darwin|macos|osx|coreml|cpu|rocm\d*|xpu|npu|hpu|gaudi|tpu|neuron|intel|ascend|l4t\d*|jetson|windows|win(?:32|64)?)(?:[_.-]|$)/.exec(
      name.replace(/\.(?:txt|in)$/, ''),
    )?.[1] ??
    // Or a folder of one operating system's (TensorRT-Model-Optimizer's examples/windows/…/requirements.txt).
    /(?:^|\/)(windows|macos|darwin|osx)\//i.exec(path)?.[1]?.toLowerCase();
  if (!word || !(/requirements?|^reqs?[_.-]|[_.-]reqs?$/.test(name) || /(?:^|\/)requirements\//.test(path)))
    return undefined;
  // Core ML runs on Apple's devices alone (whisper.cpp's requirements-coreml.txt: coremltools, ane_transformers).
  if (word === 'mps' || word === 'darwin' || word === 'macos' || word === 'osx' || word === 'coreml')
    return 'macOS (Apple silicon)';
  // The fleet's pools are Linux nodes; a Windows install (kohya_ss' requirements_pytorch_windows.txt, which only its
  // Windows installer reads) runs on desktops outside it, whose drivers are numbered differently.
  if (word.startsWith('win')) return 'Windows';
  if (word === 'cpu') return 'CPUs';
  if (word.startsWith('rocm')) return 'AMD GPUs (ROCm)';
  if (word === 'npu' || word === 'ascend') return 'Ascend NPUs';
  if (word === 'hpu' || word === 'gaudi') return 'Intel Gaudi';
  if (word === 'tpu') return 'TPUs';
  if (word === 'neuron') return 'AWS Neuron';
  // Jetson's wheels are for aarch64 boards, whose CUDA driver comes with their L4T release (LocalAI's -l4t12 files).
  if (word.startsWith('l4t') || word === 'jetson') return 'NVIDIA Jetson boards (L4T)';
  return 'Intel GPUs (XPU)';
}

/**
 * Dockerfiles that containers of the checked manifests run (a `cuda-gatekeeper.io/dockerfile` annotation, the
 * baseline's `images`), where none of those containers gets GPUs: katib's CPU trial image, whose torch wheel runs on
 * the CPU with no driver at all.
 */
function dockerfilesRunWithoutGpus(files: readonly ParsedFile[]): ReadonlyMap<string, string[]> {
  const gpu = new Set<string>();
  const cpu = new Map<string, string[]>();
  for (const file of files)
    for (const fact of file.containers) {
      const include = fact.dockerfile && file.includes[fact.dockerfile.include];
      const path = include && joinRepo(include.target);
      if (!path) continue;
      if (fact.gpu) gpu.add(path);
      else cpu.set(path, [...(cpu.get(path) ?? []), `${file.path}: ${fact.workload}`]);
    }
  for (const path of gpu) cpu.delete(path);
  return cpu;
}

/**
 * The COPY that takes files from a unit's stage (or from a stage built on it), where the stage is only built for
 * that: neither it nor a stage built on it is what the file's build makes: the last stage, or a stage no other
 * copies from or builds on (a `--target`). nvidia-container-toolkit's `FROM nvcr.io/nvidia/cuda:12.9.1-base-ubi9 AS
 * build`, which builds Go binaries for a distroless image; TEI's `base-builder`, a devel stage under the `builder`
 * the runtime stage copies its binary from.
 */
export function buildStageCopy(unit: Unit): CopyFact | undefined {
  const { root: file, stage } = unit;
  if (unit.container || stage === undefined || file.kind !== 'dockerfile') return undefined;
  return buildOnlyStages(file).get(stage);
}

/** Each stage only built to be copied from, with a COPY that takes from it or from a stage built on it. */
function buildOnlyStages(file: ParsedFile): ReadonlyMap<number, CopyFact> {
  const known = BUILD_ONLY.get(file);
  if (known) return known;
  const tree = StageTree.of(file);
  const count = tree.stageCount;
  const last = file.stages.at(-1)?.index;
  const copyFrom = new Map<number, CopyFact>();
  for (const copy of file.copies)
    if (copy.fromIndex !== undefined && copy.fromIndex !== copy.stage && !copyFrom.has(copy.fromIndex))
      copyFrom.set(copy.fromIndex, copy);
  const children: number[][] = Array.from({ length: count }, () => []);
  for (let stage = 0; stage < count; stage++) {
    const parent = tree.parent(stage);
    if (parent !== undefined) children[parent]!.push(stage);
  }
  // A stage comes after its parent, so one pass from the end settles each stage after every stage built on it.
  const runs: boolean[] = [];
  const copied: (CopyFact | undefined)[] = [];
  for (let stage = count - 1; stage >= 0; stage--) {
    const kids = children[stage]!;
    runs[stage] =
      stage === last || (kids.length === 0 && !copyFrom.has(stage)) || kids.some((child) => runs[child] === true);
    copied[stage] = copyFrom.get(stage) ?? kids.map((child) => copied[child]).find((copy) => copy !== undefined);
  }
  const only = new Map<number, CopyFact>();
  for (let stage = 0; stage < count; stage++) if (!runs[stage] && copied[stage]) only.set(stage, copied[stage]!);
  BUILD_ONLY.set(file, only);
  return only;
}

const BUILD_ONLY = new WeakMap<ParsedFile, ReadonlyMap<number, CopyFact>>();

/**
 * The input files of pip-compile (and `uv pip compile`) whose compiled output is among `files`, each with that
 * output: a requirements file whose header names the command that wrote it ("This file is autogenerated by
 * pip-compile … by the following command: pip-compile --generate-hashes requirements.in"; uv writes "uv pip compile
 * requirements.in -o …"). The output is what is installed; the input (`requirements.in`, unpinned) is only what it
 * was compiled from. Sources: https://pip-tools.readthedocs.io/en/stable/ ("Example usage for pip-compile"),
 * https://docs.astral.sh/uv/pip/compile/.
 */
export function compiledInputs(files: readonly ParsedFile[]): ReadonlyMap<string, string> {
  // Asked by several rules of one check: worked out once per list of files.
  let inputs = COMPILED.get(files);
  if (!inputs) COMPILED.set(files, (inputs = findCompiledInputs(files)));
  return inputs;
}

const COMPILED = new WeakMap<readonly ParsedFile[], ReadonlyMap<string, string>>();

function findCompiledInputs(files: readonly ParsedFile[]): ReadonlyMap<string, string> {
  const inputs = new Map<string, string>();
  let paths: ReadonlySet<string> | undefined;
  for (const file of files) {
    if (file.kind !== 'requirements') continue;
    // The header is the file's first comment block; nothing else of a large file is read.
    const command = COMPILE_COMMAND.exec(file.source.text.slice(0, 2048))?.[1];
    if (!command) continue;
    const folder = dirname(file.path);
    const words = command.split(/\s+/);
    for (const [k, word] of words.entries()) {
      // A constraints file or the output the command names (`-c requirements/cuda.txt`, `-o …`) is not its input.
      if (word.startsWith('-') || !/\.(in|txt)$/i.test(word) || VALUE_OPTIONS.has(words[k - 1] ?? '')) continue;
      // The command as it was run: from the output's folder, or from the repository's root (`uv pip compile
      // requirements/test.in -o requirements/test.txt`, aphrodite-engine's pre-commit hook), where that file is.
      const beside = joinRepo(folder, word);
      paths ??= new Set(files.map((each) => each.path));
      const fromRoot = folder && !paths.has(beside ?? '') ? joinRepo('', word) : undefined;
      const path = fromRoot && paths.has(fromRoot) ? fromRoot : beside;
      if (path && path !== file.path) inputs.set(path, file.path);
    }
  }
  return inputs;
}

/** The options of pip-compile and `uv pip compile` whose value is a file other than an input. */
const VALUE_OPTIONS: ReadonlySet<string> = new Set([
  '-c',
  '--constraint',
  '--constraints',
  '-o',
  '--output-file',
  '--override',
  '--overrides',
  '-b',
  '--build-constraint',
  '--build-constraints',
]);

/** The command line of a compiled file's header: `#    pip-compile …` or `#    uv pip compile …`. */
const COMPILE_COMMAND = /^#[ \t]+((?:pip-compile|uv pip compile)\b[^\n]*)$/m;
