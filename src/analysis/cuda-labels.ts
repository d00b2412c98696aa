/** Reading CUDA versions out of the many places they hide: local labels, URLs, build strings, names. */
import { cudaFromDigits } from '../knowledge/versions.js';
import { memoize } from '../util/memo.js';

export interface LabelCuda {
  readonly cuda: string;
  readonly precision: 'minor' | 'major';
  /** Offsets of the CUDA digits/label inside the text it was read from. */
  readonly range: readonly [number, number];
}

/**
 * `cu121` → 12.1, `cu118` → 11.8, `cu92` → 9.2, `cu12` → CUDA 12 (major only; flash-attn style),
 * `cu128torch2.9.0cxx11abiFALSE` → 12.8, `cuda12.1` → 12.1, `cuda120` → 12.0. Packed digits are read by
 * `cudaFromDigits` (src/knowledge/versions.ts), the one reading of two- and three-digit tags.
 */
export function cudaFromLabel(label: string, offset = 0): LabelCuda | undefined {
  const dotted = /^cuda(\d{1,2})\.(\d)/i.exec(label);
  if (dotted)
    return { cuda: `${dotted[1]}.${dotted[2]}`, precision: 'minor', range: [offset + 4, offset + dotted[0].length] };
  const packed = /^cu(?:da)?(\d{2,3})(?!\d)/i.exec(label);
  if (!packed) return undefined;
  const digits = packed[1]!;
  const start = offset + packed[0].length - digits.length;
  const read = cudaFromDigits(digits)!;
  return { ...read, range: [start, start + digits.length] };
}

/** A CUDA label inside a URL path: `/whl/cu118`, `/cu111/torch_stable.html`, `torch-2.0.1%2Bcu118-…`. */
export const cudaFromUrl: (url: string) => (LabelCuda & { readonly label: string }) | undefined = memoize((url) =>
  computeCudaFromUrl(url),
);

function computeCudaFromUrl(url: string): (LabelCuda & { readonly label: string }) | undefined {
  const re = /(?:\/|%2B|\+)(cu(?:da)?\d{2,3})(?=\/|$|[-_.+%?#]|torch)/gi;
  for (let match = re.exec(url); match; match = re.exec(url)) {
    const start = match.index + match[0].length - match[1]!.length;
    const found = cudaFromLabel(match[1]!, start);
    if (found) return { ...found, label: match[1]! };
  }
  return undefined;
}

export function isCpuUrl(url: string): boolean {
  return /\/whl\/(?:nightly\/|test\/)?cpu(?:\/|$)|(?:%2B|\+)cpu[-.]/i.test(url);
}

/**
 * Is this a PyTorch wheel index (`https://download.pytorch.org/whl/...`, or `download-r2.pytorch.org`, where uv.lock
 * finds its wheels)?
 */
export function isPytorchIndex(url: string): boolean {
  return /^https?:\/\/download(?:-r2)?\.pytorch\.org\/whl\b/i.test(url) || PYTORCH_MIRROR.test(url);
}

/**
 * Public mirrors of download.pytorch.org/whl that keep its per-variant folders and file names (`…/cu121/torch-2.5.1
 * %2Bcu121-…whl`): Alibaba's `mirrors.aliyun.com/pytorch-wheels/`, Nanjing University's `mirrors.nju.edu.cn/pytorch/
 * whl/`, SJTU's `mirror.sjtu.edu.cn/pytorch-wheels/` (each mirror's help page; the file names of their folders).
 */
const PYTORCH_MIRROR =
  /^https?:\/\/(?:mirrors\.aliyun\.com\/pytorch-wheels|mirrors\.nju\.edu\.cn\/pytorch\/whl|mirror\.sjtu\.edu\.cn\/pytorch-wheels)(?:[/?#]|$)/i;

/**
 * PyPI itself, named as an index or a file host (`https://pypi.org/simple`, the legacy `pypi.python.org`,
 * `files.pythonhosted.org`): it never serves a local version such as `+cu121` (Warehouse refuses the upload: "Can't
 * use PEP 440 local versions"), so naming it is no other source for one.
 */
export function isPypiIndex(url: string): boolean {
  return (
    /^https?:\/\/(?:pypi\.org|pypi\.python\.org|files\.pythonhosted\.org)(?:[/:?#]|$)/i.test(url) ||
    PYPI_MIRROR.test(url)
  );
}

/**
 * Public mirrors of PyPI, which serve PyPI's files as they are (a full copy by bandersnatch, synchronised on a
 * schedule: packaging.python.org/en/latest/guides/index-mirrors-and-caches/), named by their own help pages: TUNA
 * (mirrors.tuna.tsinghua.edu.cn/help/pypi/), BFSU (mirrors.bfsu.edu.cn/help/pypi/), USTC (mirrors.ustc.edu.cn/help/
 * pypi.html), SJTU (mirror.sjtu.edu.cn/docs/pypi), SUSTech (mirrors.sustech.edu.cn/help/pypi.html), Alibaba Cloud
 * (developer.aliyun.com/mirror/pypi), Tencent Cloud (mirrors.cloud.tencent.com/help/pypi.html), Huawei Cloud
 * (repo.huaweicloud.com/repository/pypi), NetEase (mirrors.163.com/.help/pypi.html), Douban, Baidu. The CUDA of a
 * build from one of them is that of the same file on PyPI (`pip install -i https://pypi.tuna.tsinghua.edu.cn/simple
 * torch==2.4.1` is PyPI's CUDA 12.1 build).
 */
const PYPI_MIRROR = new RegExp(
  String.raw`^https?:\/\/(?:pypi\.tuna\.tsinghua\.edu\.cn|mirrors\.tuna\.tsinghua\.edu\.cn\/pypi|` +
    String.raw`mirrors\.bfsu\.edu\.cn\/pypi|pypi\.mirrors\.ustc\.edu\.cn|mirrors\.ustc\.edu\.cn\/pypi|mirror\.sjtu\.edu\.cn\/pypi|` +
    String.raw`mirrors\.sustech\.edu\.cn\/pypi|mirrors\.aliyun\.com\/pypi|mirrors\.cloud\.tencent\.com\/pypi|` +
    String.raw`repo\.huaweicloud\.com\/repository\/pypi|mirrors\.163\.com\/pypi|pypi\.douban(?:io)?\.com|` +
    String.raw`mirror\.baidu\.com\/pypi)(?:[/:?#]|$)`,
  'i',
);

/** `https://download.pytorch.org/whl/nightly/cu121` → nightly; `/whl/test/` → test. */
export function pytorchIndexChannel(url: string): 'stable' | 'nightly' | 'test' {
  if (/\/whl\/nightly\b/i.test(url)) return 'nightly';
  if (/\/whl\/test\b/i.test(url)) return 'test';
  return 'stable';
}

/**
 * The CUDA of NVIDIA's per-release conda label: `nvidia/label/cuda-12.1.0`, its channel URL
 * (`https://conda.anaconda.org/nvidia/label/cuda-11.8.0`, with or without a platform folder after it), or a
 * package's channel (`nvidia/label/cuda-12.4.1::cuda-toolkit`) → 12.1, 11.8, 12.4.
 */
export function cudaFromCondaLabel(channel: string): string | undefined {
  return /\/label\/cuda-(\d+\.\d+)(?:\.\d+)?(?=\/|$)/.exec(channel)?.[1];
}

/** apt package names that carry the CUDA version: `cuda-toolkit-12-4`, `libcublas-12-4`, `cuda-12-4`. */
export function cudaFromAptName(name: string): LabelCuda | undefined {
  // cuDNN 9's packages name the CUDA major they are built for (`cudnn9-cuda-12`, `libcudnn9-dev-cuda-13`, the
  // `cudnn-cuda-12` meta package: NVIDIA's cuDNN installation guide, "Debian/Ubuntu: sudo apt-get -y install
  // cudnn-cuda-12").
  const cudnn = /^(?:lib)?cudnn\d*(?:-(?:dev|static|headers|samples))?-cuda-(\d{2})$/.exec(name);
  if (cudnn) return { cuda: cudnn[1]!, precision: 'major', range: [name.length - 2, name.length] };
  const match =
    /^(?:cuda|cuda-[a-z0-9-]+|lib(?:cu[a-z0-9]+|npp[a-z]*|nvjpeg|nvjitlink|nvrtc|nvtoolsext))-(\d{1,2})-(\d)$/.exec(
      name,
    );
  if (!match) return undefined;
  const start = name.length - match[1]!.length - match[2]!.length - 1;
  return { cuda: `${match[1]}.${match[2]}`, precision: 'minor', range: [start, name.length] };
}

/**
 * CUDA in a Python package name: `nvidia-cudnn-cu12`, `cudf-cu12`, `tensorrt-cu12` → 12 (major); `cupy-cuda12x` →
 * 12 (major); `cupy-cuda113`, `mxnet-cu112`, `dgl-cu113`, `bitsandbytes-cuda117` → 11.x (minor);
 * `jax-cuda12-plugin`, `nvidia-dali-cuda120` → 12 (major). `nvidia-*-cu110 … -cu116` are empty placeholder
 * packages (their install fails), not builds: they claim nothing.
 */
export function cudaFromPythonName(
  name: string,
): (LabelCuda & { readonly family: 'nvidia' | 'cupy' | 'other' }) | undefined {
  const nvidia = /^nvidia-[a-z0-9-]+-cu(\d{2})$/.exec(name);
  if (nvidia) return { cuda: nvidia[1]!, precision: 'major', range: [name.length - 2, name.length], family: 'nvidia' };
  const dali = /^nvidia-dali(?:-nightly)?(?:-tf-plugin)?-cuda(1\d)0$/.exec(name);
  if (dali) return { cuda: dali[1]!, precision: 'major', range: [name.length - 3, name.length - 1], family: 'nvidia' };
  if (/^nvidia-/.test(name)) return undefined;
  const cupyMajor = /^cupy-cuda(\d{2})x$/.exec(name);
  if (cupyMajor)
    return { cuda: cupyMajor[1]!, precision: 'major', range: [name.length - 3, name.length - 1], family: 'cupy' };
  const cupy = /^cupy-cuda(\d{2,3})$/.exec(name);
  if (cupy) {
    const digits = cupy[1]!;
    return { ...cudaFromDigits(digits)!, range: [name.length - digits.length, name.length], family: 'cupy' };
  }
  // MLX's CUDA backends: mlx-cuda-12, mlx-cuda-13 (ml-explore/mlx setup.py).
  const mlx = /^mlx-cuda-(1\d)$/.exec(name);
  if (mlx) return { cuda: mlx[1]!, precision: 'major', range: [9, 11], family: 'other' };
  const jax = /^jax-cuda(1\d)-(?:plugin|pjrt)$/.exec(name);
  if (jax) return { cuda: jax[1]!, precision: 'major', range: [8, 10], family: 'other' };
  const packed = /^(?:mxnet(?:-tensorrt)?-cu|dgl-cu|bitsandbytes-cuda)(\d{2,3})(?:mkl)?$/.exec(name);
  if (packed) {
    const digits = packed[1]!;
    const start = name.indexOf(digits, name.indexOf('cu'));
    return { ...cudaFromDigits(digits)!, range: [start, start + digits.length], family: 'other' };
  }
  const suffixed = /-cu(1[0-3])$/.exec(name);
  if (suffixed)
    return { cuda: suffixed[1]!, precision: 'major', range: [name.length - 2, name.length], family: 'other' };
  return undefined;
}
