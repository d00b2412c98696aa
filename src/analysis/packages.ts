import type { PackageFact, ParsedFile } from '../parsers/facts.js';
import { isPypiIndex } from './cuda-labels.js';
import type { UnitPackage } from './units.js';

/**
 * conda package names that are the same project as a pip name. A Map, not an object: conda's own `constructor`
 * package must not find Object.prototype.constructor.
 */
const CONDA_TO_PIP: ReadonlyMap<string, string> = new Map([
  ['pytorch', 'torch'],
  ['pytorch-gpu', 'torch'],
  ['torchtriton', 'triton'],
  ['pytorch-triton', 'triton'],
]);

/** The pip-style project name of a package, so conda `pytorch` and pip `torch` compare equal. */
export function projectName(pkg: PackageFact): string {
  if (pkg.ecosystem === 'conda') return CONDA_TO_PIP.get(pkg.name) ?? pkg.name;
  return pkg.name;
}

const CUDA_RELEVANT = new Set([
  'torch',
  'torchvision',
  'torchaudio',
  'triton',
  'pytorch-triton',
  'xformers',
  'flash-attn',
  'tensorflow',
  'tensorflow-gpu',
  'jaxlib',
  'pytorch-cuda',
  'cudatoolkit',
  'cuda-version',
  'cuda-toolkit',
  'cudnn',
  'nccl',
  'cuda-python',
  'tensorrt',
  'onnxruntime-gpu',
  'paddlepaddle-gpu',
  'bitsandbytes',
  'torchao',
  'vllm',
  'deepspeed',
  'apex',
  'mmcv',
  'mmcv-full',
  'torch-scatter',
  'torch-sparse',
  'torch-geometric',
  'torch-cluster',
  'torch-spline-conv',
  'pyg-lib',
  'torchtext',
  'torchdata',
  'detectron2',
  'dgl',
  'cupy',
  'spconv',
  'onnxruntime-training',
  'ctranslate2',
  'faster-whisper',
]);

/**
 * NVIDIA's pure-Python packages with no CUDA build: the index helper, the NVML bindings (which load the driver's
 * libnvidia-ml and work with any driver: pypi.org/project/nvidia-ml-py), the documentation theme (cudf's, cuml's docs).
 */
const NVIDIA_WITHOUT_CUDA: ReadonlySet<string> = new Set([
  'nvidia-pyindex',
  'nvidia-ml-py',
  'nvidia-ml-py3',
  'nvidia-sphinx-theme',
]);

/** Packages whose build or version decides CUDA compatibility (plus whatever the baseline lists). */
export function isCudaRelevant(pkg: PackageFact, extra: ReadonlySet<string>): boolean {
  if (pkg.ecosystem === 'apt') return false;
  if (pkg.name === 'jax') return extra.has('jax') || pkg.extras.some((item) => /^cuda/.test(item));
  // Apart from jax's extras, the answer depends on the ecosystem and name only: remember it per baseline.
  let byName = relevance.get(extra);
  if (!byName) relevance.set(extra, (byName = { pip: new Map(), conda: new Map() }));
  const known = byName[pkg.ecosystem];
  let answer = known.get(pkg.name);
  if (answer === undefined) known.set(pkg.name, (answer = computeRelevance(pkg, extra)));
  return answer;
}

const relevance = new WeakMap<
  ReadonlySet<string>,
  { readonly pip: Map<string, boolean>; readonly conda: Map<string, boolean> }
>();

function computeRelevance(pkg: PackageFact, extra: ReadonlySet<string>): boolean {
  const name = projectName(pkg);
  if (CUDA_RELEVANT.has(name) || extra.has(name) || extra.has(pkg.name)) return true;
  if (/^nvidia-/.test(name) && !NVIDIA_WITHOUT_CUDA.has(name)) return true;
  // Builds named for a CUDA: cupy-cuda12x, dgl-cu113, mxnet-cu112, RAPIDS' cudf-cu12 (and every other -cuNN package).
  if (/^(?:cupy-cuda|dgl-cu|mxnet-cu|spconv-cu|jax-cuda\d+-)/.test(name) || /-cu1\d{1,2}$/.test(name)) return true;
  return false;
}

/**
 * Python packages whose name says no CUDA but whose Linux wheels carry CUDA code built against one CUDA release, or
 * which compile CUDA code when installed or first run: a stage that installs one runs CUDA code of its own, so an
 * unknown base under it is said (image-unknown). Each with the page that says so. Not those that build for whatever
 * accelerator they find (deepspeed's ops, bitsandbytes' backends), nor PyPI's `apex`, which is not NVIDIA's.
 */
const BUILT_FOR_CUDA: ReadonlyMap<string, string> = new Map([
  // "vLLM is a Python library that also contains pre-compiled C++ and CUDA (12.1) binaries."
  ['vllm', 'https://docs.vllm.ai/en/v0.6.3/getting_started/installation.html'],
  ['xformers', 'https://github.com/facebookresearch/xformers#installing-xformers'],
  ['flash-attn', 'https://github.com/Dao-AILab/flash-attention#installation-and-features'],
  ['tensorrt', 'https://docs.nvidia.com/deeplearning/tensorrt/latest/installing-tensorrt/installing.html'],
  ['sglang', 'https://docs.sglang.ai/get_started/install.html'],
  ['onnxruntime-gpu', 'https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html'],
  ['paddlepaddle-gpu', 'https://www.paddlepaddle.org.cn/en/install/quick'],
  ['flashinfer-python', 'https://docs.flashinfer.ai/installation.html'],
  ['mamba-ssm', 'https://github.com/state-spaces/mamba#installation'],
  ['causal-conv1d', 'https://github.com/Dao-AILab/causal-conv1d'],
]);

/** Whether a pip package is one of BUILT_FOR_CUDA (conda's builds say their CUDA in their build strings). */
export function builtForCuda(pkg: PackageFact): boolean {
  return pkg.ecosystem === 'pip' && BUILT_FOR_CUDA.has(pkg.name);
}

/** conda packages whose major.minor is the whole meaningful pin (`pytorch-cuda=12.1`). */
export const CONDA_MINOR_PINS = new Set(['pytorch-cuda', 'cuda-version', 'cudatoolkit', 'cuda-toolkit']);

/** Where a file names NVIDIA Apex's own source (a clone or a VCS URL): an `apex` beside it is that build. */
const NVIDIA_APEX_SOURCE = /NVIDIA\/apex\b|\/apex\.git\b/i;

const namesApexSource = new WeakMap<ParsedFile, boolean>();

/**
 * A pip requirement of `apex` that only PyPI can answer: PyPI's `apex` is an unrelated Pyramid toolkit (0.9.x
 * development releases of 2013: pypi.org/project/apex), and NVIDIA Apex is not published there. Not where the
 * install names any other index or find-links page, reads a pip configuration the gate cannot see, or a file of
 * the unit names NVIDIA Apex's repository (a clone built beside it). `alone`: as the requirement's own file says it,
 * without the command that installs the file.
 */
export function apexFromPypi(entry: UnitPackage, files: readonly ParsedFile[], alone = false): boolean {
  const { file, pkg } = entry;
  if (pkg.ecosystem !== 'pip' || pkg.name !== 'apex' || pkg.url || pkg.localLabel) return false;
  // `alone`: what the requirement's own file says, whatever installs it.
  const invocation = alone ? undefined : entry.invocation;
  const contexts = invocation ? invocation.members.map((member) => member.context) : [file.contexts[pkg.context]];
  for (const each of contexts) {
    if (!each || each.hiddenIndexes) return false;
    if (each.indexes.some((index) => !isPypiIndex(index.url))) return false;
  }
  if (invocation?.indexes.some((index) => !isPypiIndex(index.url))) return false;
  return !files.some((each) => {
    let answer = namesApexSource.get(each);
    if (answer === undefined) namesApexSource.set(each, (answer = NVIDIA_APEX_SOURCE.test(each.source.text)));
    return answer;
  });
}
