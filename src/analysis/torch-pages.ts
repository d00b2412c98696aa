/**
 * Wheel pages built per torch minor and CUDA: PyG's extension wheels, mmcv's, detectron2's and FlashInfer's. The
 * wheels on such a page are compiled against one torch minor; which (torch, CUDA) pages exist is not in the knowledge
 * base.
 */
export const PYG_DOCS =
  'https://github.com/pyg-team/pytorch_geometric/blob/5c6461b2305ad068a6d61165b3c55852a11aaa41/docs/source/install/installation.rst';

export interface TorchPage {
  /** The page's project. */
  readonly project: 'PyG' | 'mmcv' | 'detectron2' | 'FlashInfer';
  /** The torch minor the page's wheels are built for. */
  readonly torch: string;
  /** The packages the page holds (PEP 503 names): nothing else is installed from it. */
  readonly packages: ReadonlySet<string>;
  /** Whether the page is a package index too (`pip install -i <page>`), not only a find-links page. */
  readonly index?: boolean;
  readonly source: string;
}

const TORCH_PAGES: readonly {
  readonly project: TorchPage['project'];
  readonly pattern: RegExp;
  readonly packages: ReadonlySet<string>;
  readonly index?: boolean;
  readonly source: string;
}[] = [
  {
    project: 'PyG',
    pattern:
      /^https?:\/\/(?:data\.pyg\.org|pytorch-geometric\.com)\/whl\/torch-(\d+\.\d+)\.\d+(?:%2B|\+)(?:cu\d+|cpu)\.html$/i,
    // The install guide's command: `pip install pyg_lib torch_scatter torch_sparse torch_cluster torch_spline_conv -f
    // https://data.pyg.org/whl/torch-${TORCH}+${CUDA}.html`.
    packages: new Set(['pyg-lib', 'torch-scatter', 'torch-sparse', 'torch-cluster', 'torch-spline-conv']),
    source: PYG_DOCS,
  },
  {
    project: 'mmcv',
    pattern:
      /^https?:\/\/download\.openmmlab\.com\/mmcv\/dist\/(?:cu\d+|cpu)\/torch(\d+\.\d+)(?:\.\d+)?\/index\.html$/i,
    packages: new Set(['mmcv', 'mmcv-full']),
    source:
      'https://github.com/open-mmlab/mmcv/blob/a8073c74bf83d62ec36a103f835faa4837fb6585/docs/en/get_started/installation.md',
  },
  {
    project: 'detectron2',
    pattern: /^https?:\/\/dl\.fbaipublicfiles\.com\/detectron2\/wheels\/(?:cu\d+|cpu)\/torch(\d+\.\d+)\/index\.html$/i,
    packages: new Set(['detectron2']),
    source: 'https://github.com/facebookresearch/detectron2/blob/640e061f^/INSTALL.md',
  },
  {
    // FlashInfer's indexes per CUDA and torch minor (`pip install flashinfer -i
    // https://flashinfer.ai/whl/cu121/torch2.4/`, or as find-links, `…/torch2.4/flashinfer/`): wheels named for both
    // (`flashinfer_python-0.2.2.post1+cu124torch2.6`). Its later indexes per CUDA alone (`/whl/cu129`,
    // flashinfer-jit-cache) name no torch.
    project: 'FlashInfer',
    pattern: /^https?:\/\/flashinfer\.ai\/whl\/(?:cu\d+|cpu)\/torch(\d+\.\d+)(?:\/[\w.-]+)*\/?$/i,
    packages: new Set(['flashinfer', 'flashinfer-python']),
    index: true,
    source:
      'https://github.com/flashinfer-ai/flashinfer/blob/adcf701d17d867f299cdf20349c8aab743b96d55/docs/installation.rst (an index per PyTorch minor and CUDA: "pip install flashinfer -i https://flashinfer.ai/whl/cu124/torch2.4/")',
  },
];

/** The torch-minor wheel page a find-links URL names, if it is one. */
export function torchPage(url: string): TorchPage | undefined {
  for (const page of TORCH_PAGES) {
    const torch = page.pattern.exec(url)?.[1];
    if (torch)
      return {
        project: page.project,
        torch,
        packages: page.packages,
        ...(page.index ? { index: true } : {}),
        source: page.source,
      };
  }
  return undefined;
}
