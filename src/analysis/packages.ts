import type { PackageFact } from '../facts.js';

/** conda package names that are the same project as a pip name. */
const CONDA_TO_PIP: Readonly<Record<string, string>> = { pytorch: 'torch', 'pytorch-gpu': 'torch', torchtriton: 'triton', 'pytorch-triton': 'triton' };

/** The pip-style project name of a package, so conda `pytorch` and pip `torch` compare equal. */
export function projectName(pkg: PackageFact): string {
  if (pkg.ecosystem === 'conda') return CONDA_TO_PIP[pkg.name] ?? pkg.name;
  return pkg.name;
}

const CUDA_RELEVANT = new Set([
  'torch', 'torchvision', 'torchaudio', 'triton', 'pytorch-triton', 'xformers', 'flash-attn', 'tensorflow', 'tensorflow-gpu',
  'jaxlib', 'pytorch-cuda', 'cudatoolkit', 'cuda-version', 'cuda-toolkit', 'cudnn', 'nccl', 'cuda-python', 'tensorrt', 'onnxruntime-gpu',
  'paddlepaddle-gpu', 'bitsandbytes', 'torchao', 'vllm', 'deepspeed', 'apex', 'mmcv', 'mmcv-full', 'torch-scatter', 'torch-sparse', 'torch-geometric',
]);

/** Packages whose build or version decides CUDA compatibility (plus whatever the baseline lists). */
export function isCudaRelevant(pkg: PackageFact, extra: ReadonlySet<string>): boolean {
  if (pkg.ecosystem === 'apt') return false;
  let perPackage = relevance.get(extra);
  if (!perPackage) relevance.set(extra, (perPackage = new WeakMap()));
  let known = perPackage.get(pkg);
  if (known === undefined) perPackage.set(pkg, (known = computeRelevance(pkg, extra)));
  return known;
}

/** Answers per extra-name set (one per baseline) and package. */
const relevance = new WeakMap<ReadonlySet<string>, WeakMap<PackageFact, boolean>>();

function computeRelevance(pkg: PackageFact, extra: ReadonlySet<string>): boolean {
  const name = projectName(pkg);
  if (CUDA_RELEVANT.has(name) || extra.has(name) || extra.has(pkg.name)) return true;
  if (name === 'jax') return pkg.extras.some((extra) => /^cuda/.test(extra));
  if (/^nvidia-/.test(name) && name !== 'nvidia-pyindex') return true;
  if (/^cupy-cuda/.test(name)) return true;
  if (pkg.ecosystem === 'conda' && /^cuda-(?!python)/.test(name)) return false;
  return false;
}

/** conda packages whose major.minor is the whole meaningful pin (`pytorch-cuda=12.1`). */
export const CONDA_MINOR_PINS = new Set(['pytorch-cuda', 'cuda-version', 'cudatoolkit', 'cuda-toolkit']);
