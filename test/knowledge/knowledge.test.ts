/** Table tests for the knowledge base: the important rows, written as in their sources. */
import { describe, expect, it } from 'vitest';
import {
  bundledData,
  cite,
  defaultKnowledgeBase,
  KnowledgeBase,
  latestCudaPatch,
  loadData,
} from '../../src/knowledge/index.js';

const kb = defaultKnowledgeBase();

describe('data files', () => {
  it('validate against their schemas', () => {
    expect(() => loadData()).not.toThrow();
  });

  it('the bundled data is what its schemas read, so a check may read it unchecked (bundledData)', () => {
    // A schema that added a default or changed a value would make the two differ: then bundledData must parse.
    expect(bundledData()).toStrictEqual(loadData());
  });

  it('carry a source and a retrieval date on every record', () => {
    const data = loadData();
    const records = [
      ...data.drivers.floors,
      ...data.drivers.releases,
      ...data.drivers.noRelease,
      ...data.pytorch.releases,
      ...data.archs.builds,
      ...data.companions.pins,
      ...data.gpus.gpus,
      ...data.gpus.computeCapabilities,
      ...data.images.ngcPytorch,
      ...data.images.ngc,
      ...data.tensorflow.releases,
      ...data.cudnn.releases,
    ];
    for (const record of records) {
      expect(record.source.length).toBeGreaterThan(0);
      expect(record.retrieved).toMatch(/^2026-\d\d-\d\d$/);
    }
  });

  it('marks what is still unverified, and no longer what the audit verified (kb-audit-2026-12 §2)', () => {
    const data = loadData();
    const confidence = (version: string) => data.drivers.releases.find((row) => row.version === version)?.confidence;
    expect(['13.4.0', '13.4.1', '13.4.2', '13.5.0', '12.8.2', '13.0.3'].map(confidence)).toEqual(
      Array(6).fill('unverified'),
    );
    // 13.3.x: installer names and NVIDIA's Triton matrix agree on 610.43.02.
    expect(['13.3.0', '13.3.1'].map(confidence)).toEqual([undefined, undefined]);
    expect(kb.torchRelease('2.15.0')?.confidence).toBe('unverified');
    expect(kb.torchRelease('2.14.1')?.confidence).toBe('unverified');
    // CUDA 12.9 features archive: "adds compiler target support for SM architecture 10.3 … and 12.1".
    expect(kb.gpu('B300')?.record.confidence).toBeUndefined();
    expect(kb.gpu('GB10')?.record.confidence).toBeUndefined();
    // NGC 25.06: CUDA 12.9.1, torch 2.8.0a0+5228986c39 (NVIDIA's Triton matrix and runtime logs).
    expect(kb.ngcPytorch('25.06-py3')).toMatchObject({ cuda: '12.9.1', torch: '2.8.0a0+5228986c39' });
    expect(kb.ngcPytorch('25.06-py3')?.confidence).toBeUndefined();
  });
});

describe('minimum driver per CUDA release (NVIDIA Table 3, Linux x86_64)', () => {
  it.each([
    ['11.0.2', '450.51.05'],
    ['11.8', '520.61.05'],
    ['11.8.0', '520.61.05'],
    ['12.0.0', '525.60.13'],
    ['12.1', '530.30.02'],
    ['12.2.2', '535.104.05'],
    ['12.3.1', '545.23.08'],
    ['12.4', '550.54.14'],
    ['12.4.1', '550.54.15'],
    ['12.6.3', '560.35.05'],
    ['12.8', '570.26'],
    ['12.8.1', '570.124.06'],
    ['12.9.1', '575.57.08'],
    ['13.0', '580.65.06'],
    ['13.0.2', '580.95.05'],
    ['13.1', '590.44.01'],
    ['13.2.2', '595.71.05'],
  ])('CUDA %s needs >= %s', (cuda, driver) => {
    expect(kb.minDriver(cuda)?.linux).toBe(driver);
  });

  it('has a Windows column where NVIDIA publishes one', () => {
    expect(kb.minDriver('12.4.1')?.row.windows).toBe('551.78');
    expect(kb.minDriver('13.0.0')?.row.windows).toBeUndefined();
  });

  it('knows there is no CUDA 12.7 and no driver row for it', () => {
    expect(kb.cudaExists('12.7')).toBe('no');
    expect(kb.cudaExists('12.7.0')).toBe('no');
    expect(kb.minDriver('12.7')).toBeUndefined();
  });

  it('covers every release and update from 11.0 to 13.5', () => {
    const versions = loadData().drivers.releases.map((row) => row.version);
    for (const minor of [
      '11.0',
      '11.1',
      '11.2',
      '11.3',
      '11.4',
      '11.5',
      '11.6',
      '11.7',
      '11.8',
      '12.0',
      '12.1',
      '12.2',
      '12.3',
      '12.4',
      '12.5',
      '12.6',
      '12.8',
      '12.9',
      '13.0',
      '13.1',
      '13.2',
      '13.3',
      '13.4',
      '13.5',
    ]) {
      expect(
        versions.some((version) => version.startsWith(`${minor}.`)),
        minor,
      ).toBe(true);
    }
  });

  it.each([
    [11, '450.80.02', '452.39'],
    [12, '525.60.13', '527.41'],
    [13, '580', undefined],
  ])('minor-version compatibility floor of CUDA %i.x is %s (Windows %s)', (major, linux, windows) => {
    expect(kb.driverFloor(major)?.linux).toBe(linux);
    expect(kb.driverFloor(major)?.windows).toBe(windows);
  });

  it('uses the newest verified patch for image rewrites', () => {
    expect(latestCudaPatch(kb, '12.4')).toBe('12.4.1');
    expect(latestCudaPatch(kb, '12.8')).toBe('12.8.1');
    expect(latestCudaPatch(kb, '13.0')).toBe('13.0.2');
  });
});

describe('PyTorch wheel variants on download.pytorch.org and the PyPI build', () => {
  it.each([
    ['1.13.1', ['cu116', 'cu117'], 'cu117'],
    ['2.0.0', ['cu117', 'cu118'], 'cu117'],
    ['2.1.0', ['cu118', 'cu121'], 'cu121'],
    ['2.3.0', ['cu118', 'cu121'], 'cu121'],
    ['2.4.1', ['cu118', 'cu121', 'cu124'], 'cu121'],
    ['2.5.1', ['cu118', 'cu121', 'cu124'], 'cu124'],
    ['2.6.0', ['cu118', 'cu124', 'cu126'], 'cu124'],
    ['2.7.1', ['cu118', 'cu126', 'cu128'], 'cu126'],
    ['2.8.0', ['cu126', 'cu128', 'cu129'], 'cu128'],
    // The cu129 builds of 2.9–2.13 are on the index though the install selector omits them (round-4 audit, row 1);
    // 2.12.0 and 2.14.0 have none.
    ['2.9.1', ['cu126', 'cu128', 'cu129', 'cu130'], 'cu128'],
    ['2.10.0', ['cu126', 'cu128', 'cu129', 'cu130'], 'cu128'],
    ['2.11.0', ['cu126', 'cu128', 'cu129', 'cu130'], 'cu130'],
    ['2.12.0', ['cu126', 'cu130', 'cu132'], 'cu130'],
    ['2.12.1', ['cu126', 'cu129', 'cu130', 'cu132'], 'cu130'],
    ['2.13.0', ['cu126', 'cu129', 'cu130', 'cu132'], 'cu130'],
    ['2.14.0', ['cu126', 'cu130', 'cu132'], 'cu130'],
  ])('torch %s: %j, PyPI %s', (version, variants, pypi) => {
    expect(kb.torchVariants(version)).toEqual(variants);
    expect(kb.torchRelease(version)?.pypiDefault).toBe(pypi);
  });

  it.each([
    ['2.1.0', '12.1'],
    ['2.0.1', '11.7'],
    ['2.6.0', '12.4'],
    ['2.11.0', '13.0'],
  ])('pypiDefaultCuda(%s) = %s', (version, cuda) => {
    expect(kb.pypiDefaultCuda(version)).toBe(cuda);
  });

  it('has no cu121 build of 2.6.0 and no cu118 build of 2.8.0', () => {
    expect(kb.torchVariants('2.6.0')).not.toContain('cu121');
    expect(kb.torchVariants('2.8.0')).not.toContain('cu118');
    expect(kb.torchVariants('2.12.0')).not.toContain('cu128');
  });

  it.each([
    ['2.0.0', ['0.15.1', '0.15.0'], ['2.0.1', '2.0.0']],
    ['2.0.1', ['0.15.2'], ['2.0.2']],
    ['2.1.2', ['0.16.2'], ['2.1.2']],
    ['2.3.1', ['0.18.1'], ['2.3.1']],
    ['2.6.0', ['0.21.0'], ['2.6.0']],
    ['2.9.1', ['0.24.1'], ['2.9.1']],
    ['2.11.0', ['0.26.0'], ['2.11.0']],
    // torchaudio 2.11.0 requires torch>=2.11 and is ABI-stable (pytorch/audio#4212, #4225): the one for 2.12-2.14.
    ['2.12.1', ['0.27.1'], ['2.11.0']],
    ['2.14.1', ['0.29.1'], ['2.11.0']],
    ['1.10.0', ['0.11.0', '0.11.1'], ['0.10.0']],
    // torch 1.7.0 was announced with torchvision 0.8.1 (googlecolab/colabtools#1676); 0.8.0 pairs too.
    ['1.7.0', ['0.8.1', '0.8.0'], ['0.7.0']],
    // The 1.8.2 LTS release (previous-versions.md, "v1.8.2 with LTS support").
    ['1.8.2', ['0.9.2'], ['0.8.2']],
  ])('companions(%s): torchvision %j, torchaudio %j', (torch, vision, audio) => {
    expect(kb.companions(torch)).toEqual({ torchvision: vision, torchaudio: audio });
  });

  it('holds the conda pytorch-cuda and cudatoolkit builds per release', () => {
    expect(kb.condaPytorchCudaVersions()).toEqual(['11.6', '11.7', '11.8', '12.1', '12.4']);
    expect(kb.torchRelease('2.4.1')?.condaPytorchCuda).toEqual(['11.8', '12.1', '12.4']);
    // Measured builds of the pytorch channel (moi90/pytorch_compute_capabilities table.md @2431f17; audit §1 row 3).
    expect(kb.torchRelease('1.11.0')?.condaCudatoolkit).toEqual(['10.2', '11.1', '11.3', '11.5']);
    expect(kb.torchRelease('1.10.1')?.condaCudatoolkit).toEqual(['10.2', '11.1', '11.3']);
    expect(kb.torchRelease('1.9.0')?.condaCudatoolkit).toEqual(['10.2', '11.1']);
    expect(kb.torchRelease('1.8.0')?.condaCudatoolkit).toEqual(['10.1', '10.2', '11.1']);
    expect(kb.pytorchChannel().lastVersion).toBe('2.5.1');
  });
});

describe('compiled GPU architectures', () => {
  it.each([
    ['2.0.0', 'cu117', false],
    ['2.0.1', 'cu118', true],
    ['2.8.0', 'cu128', true],
    ['2.11.0', 'cu130', true],
  ])('torch %s+%s includes sm_90: %s', (version, variant, has90) => {
    expect(kb.compiledArchs(version, variant)?.sass.includes('9.0')).toBe(has90);
  });

  it('has Blackwell only from torch 2.7 with cu128+, and no Volta in CUDA 13 wheels', () => {
    expect(kb.compiledArchs('2.7.1', 'cu128')?.sass).toContain('12.0');
    expect(kb.compiledArchs('2.9.0', 'cu126')?.sass).not.toContain('10.0');
    expect(kb.compiledArchs('2.10.0', 'cu130')?.sass).not.toContain('7.0');
    expect(kb.compiledArchs('2.11.0', 'cu128')?.sass).not.toContain('7.0');
  });
});

describe('GPUs: compute capability and minimum CUDA (NVIDIA)', () => {
  it.each([
    ['A100', '8.0', '11.0'],
    ['NVIDIA A100-SXM4-80GB', '8.0', '11.0'],
    ['A10G', '8.6', '11.1'],
    ['L4', '8.9', '11.8'],
    ['RTX 4090', '8.9', '11.8'],
    ['H100', '9.0', '11.8'],
    ['H100 80GB HBM3', '9.0', '11.8'],
    ['B200', '10.0', '12.8'],
    ['RTX 5090', '12.0', '12.8'],
    ['GeForce RTX 5090', '12.0', '12.8'],
    ['V100', '7.0', '9.0'],
    ['8.9', '8.9', '11.8'],
  ])('%s → compute capability %s, CUDA >= %s', (name, cc, minCuda) => {
    expect(kb.gpu(name)).toMatchObject({ cc, minCuda });
    expect(kb.minCudaForGpu(name)).toBe(minCuda);
  });

  it('does not confuse A10 with A100', () => {
    expect(kb.gpu('A10')?.cc).toBe('8.6');
    expect(kb.gpu('A100')?.cc).toBe('8.0');
    expect(kb.gpu('Z9000')).toBeUndefined();
  });

  it('knows CUDA 13 dropped sm_50 to sm_70', () => {
    for (const cc of ['5.0', '6.0', '6.1', '7.0']) expect(kb.gpu(cc)?.lastCudaMajor).toBe(12);
    expect(kb.gpu('7.5')?.lastCudaMajor).toBeUndefined();
  });
});

describe('images', () => {
  it.each([
    [
      '12.4.1-cudnn-devel-ubuntu22.04',
      { version: '12.4.1', cudnn: 'cudnn', flavour: 'devel', os: 'ubuntu', osVersion: '22.04' },
    ],
    ['11.8.0-cudnn8-runtime-ubuntu22.04', { version: '11.8.0', cudnn: 'cudnn8', flavour: 'runtime' }],
    ['12.6.3-base-ubi9', { version: '12.6.3', flavour: 'base', os: 'ubi', osVersion: '9' }],
  ])('nvidia/cuda:%s', (tag, expected) => {
    expect(kb.nvidiaCudaTag(tag)).toMatchObject(expected);
  });

  it.each([
    ['11.8.0', 'cudnn8'],
    ['12.2.2', 'cudnn8'],
    ['12.3.2', 'cudnn9'],
    ['12.4.1', 'cudnn'],
    ['13.0.2', 'cudnn'],
  ])('cuDNN spelling for %s is -%s-', (cuda, spelling) => {
    expect(kb.cudnnSpelling(cuda)?.spelling).toBe(spelling);
  });

  it('reads pytorch/pytorch and NGC tags', () => {
    expect(kb.pytorchImageTag('2.3.0-cuda12.1-cudnn8-runtime')).toMatchObject({ torch: '2.3.0', cuda: '12.1' });
    expect(kb.ngcPytorch('24.05-py3')).toMatchObject({ cuda: '12.4.1' });
    expect(kb.ngcPytorch('25.12-py3')).toMatchObject({ cuda: '13.1.0' });
    expect(kb.ngcPytorch('23.01-py3')).toBeUndefined();
  });

  it('reads the CUDA of NGC containers other than PyTorch from their release notes', () => {
    // Triton release notes 25.10: "based on CUDA 13.0.2"; TensorRT 24.08 on CUDA 12.6.
    expect(kb.ngcImage('nvidia/tritonserver', '25.10-py3')?.cuda).toBe('13.0.2');
    expect(kb.ngcImage('nvidia/tritonserver', '25.10-vllm-python-py3')?.cuda).toBe('13.0.2');
    expect(kb.ngcImage('nvidia/tritonserver', '99.99-py3')).toBeUndefined();
    expect(kb.ngcTags('nvidia/pytorch')).toContain('24.05-py3');
  });

  it("tells Ray's CPU images by their tags, and vendor tags with the architecture before the CUDA", () => {
    // ray docker/README.md: "Images without a "-cpu" or "-gpu" tag … are just an alias for -cpu".
    for (const tag of ['2.46.0', '2.46.0-py311', '2.46.0-py311-cpu', 'latest', 'nightly-py310-cpu-aarch64'])
      expect(kb.cpuImage('rayproject/ray', tag), tag).toBeDefined();
    for (const tag of ['2.46.0-gpu', '2.46.0-py311-cu124', '2.40.0-py310-cu121-aarch64'])
      expect(kb.cpuImage('rayproject/ray', tag), tag).toBeUndefined();
    // ray-ml's tag without suffix is its GPU image.
    expect(kb.cpuImage('rayproject/ray-ml', '2.9.0')).toBeUndefined();
    expect(kb.vendorImage('vllm/vllm-openai', 'v0.15.0-x86_64-cu130')?.cuda).toBe('13.0.1');
    expect(kb.vendorImage('vllm/vllm-openai', 'v0.15.0-cu130-x86_64')?.cuda).toBe('13.0.1');
  });

  it("reads Ray's -gpu tags (and ray-ml's tags without a platform part) by the release's own build code", () => {
    const cuda = (name: string, tag: string) => kb.vendorImage(name, tag)?.cuda;
    // ML_CUDA_VERSION / GPU_PLATFORM at each release tag: cu112 to 2.1, cu116 from 2.2, cu118 from 2.6, cu121 from
    // 2.34.
    expect(cuda('rayproject/ray', '2.1.0-gpu')).toBe('11.2');
    expect(cuda('rayproject/ray', '2.2.0-py38-gpu')).toBe('11.6');
    expect(cuda('rayproject/ray', '2.5.1-gpu')).toBe('11.6');
    expect(cuda('rayproject/ray', '2.6.0-py310-gpu')).toBe('11.8');
    expect(cuda('rayproject/ray', '2.33.0-py311-gpu')).toBe('11.8');
    expect(cuda('rayproject/ray', '2.34.0-gpu')).toBe('12.1');
    expect(cuda('rayproject/ray', '2.49.2-py312-gpu-aarch64')).toBe('12.1');
    expect(cuda('rayproject/ray-ml', '2.9.0')).toBe('11.8');
    expect(cuda('rayproject/ray-ml', '2.9.0-py310-gpu')).toBe('11.8');
    // A tag's own -cuXY wins; the CPU image has none.
    expect(cuda('rayproject/ray', '2.40.0-py310-cu124')).toBe('12.4');
    expect(cuda('rayproject/ray', '2.40.0-py310')).toBeUndefined();
    expect(cuda('rayproject/ray-ml', '2.9.0-cpu')).toBeUndefined();
    // Not read at a release tag (2.50.0 and later), no release named, and ray-llm (no -gpu alias): not known.
    for (const [name, tag] of [
      ['rayproject/ray', '2.50.0-gpu'],
      ['rayproject/ray', 'latest-gpu'],
      ['rayproject/ray', 'nightly-py311-gpu'],
      ['rayproject/ray-llm', '2.44.0-py311-gpu'],
    ] as const)
      expect(kb.vendorImage(name, tag), `${name}:${tag}`).toBeUndefined();
    expect(kb.vendorImage('rayproject/ray', '2.34.0-gpu')?.record.source[0]).toMatch(
      /^https:\/\/github\.com\/ray-project\/ray\/blob\/ray-2\.34\.0\//,
    );
  });

  it("reads verl's application images by the base their Dockerfiles build FROM, and SGLang's tags as its workflows push them", () => {
    // docker/verl0.5-cu126-torch2.7-fa2.7.4/README.md lists the app tag; its Dockerfile.app.* builds FROM the cu126
    // base.
    expect(kb.vendorImage('verlai/verl', 'app-verl0.5-vllm0.9.1-mcore0.12.2-te2.2')?.cuda).toBe('12.6');
    // The verl0.4 base installs the CUDA 12.4.1 toolkit over NGC 24.08.
    expect(kb.vendorImage('verlai/verl', 'app-verl0.4-vllm0.8.5-mcore0.12.2-te2.2')?.cuda).toBe('12.4.1');
    // Tied to a Dockerfile only through a naming rule: unverified (never more than a notice).
    const weak = kb.vendorImage('verlai/verl', 'app-verl0.6-transformers4.56.1-sglang0.5.2-mcore0.13.0-te2.2');
    expect([weak?.cuda, weak?.record.confidence]).toEqual(['12.8', 'unverified']);
    expect(kb.vendorImage('verlai/verl', 'vllm012.latest')).toBeUndefined();
    // SGLang v0.5.3's workflow pushed -cu129 and -cu129-gb200 (the -amd64/-arm64 scheme came after); from v0.5.11 the
    // tag without a suffix is the CUDA 13 build.
    expect(kb.vendorImage('lmsysorg/sglang', 'v0.5.3-cu129')?.cuda).toBe('12.9.1');
    expect(kb.vendorImage('lmsysorg/sglang', 'v0.5.10')?.cuda).toBe('12.9.1');
    expect(kb.vendorImage('lmsysorg/sglang', 'v0.5.11')?.cuda).toBe('13.0.1');
    expect(kb.vendorImage('lmsysorg/sglang', 'v0.5.11-cu129-runtime')?.cuda).toBe('12.9.1');
  });

  it("reads KServe's Hugging Face serving image by the tag its release workflow pushes", () => {
    const cuda = (tag: string) => kb.vendorImage('kserve/huggingfaceserver', tag)?.cuda;
    // Up to v0.14.1 the CUDA image is the plain tag; from v0.15.0 it is -gpu and the plain tag is a CPU image.
    expect([cuda('v0.13.0'), cuda('v0.14.1'), cuda('v0.15.2-gpu'), cuda('v0.17.1-gpu')]).toEqual([
      '12.1.0',
      '12.4.1',
      '12.4.1',
      '12.9.1',
    ]);
    expect(cuda('v0.15.2')).toBeUndefined();
    expect(cuda('v0.14.1-gpu')).toBeUndefined();
  });

  it("reads text-embeddings-inference's CUDA images by the tags its release workflows push", () => {
    const cuda = (tag: string) => kb.vendorImage('ghcr.io/huggingface/text-embeddings-inference', tag)?.cuda;
    // Dockerfile-cuda's last nvidia/cuda stage: 12.0.0 for v0.4.0–v0.6.0, 12.2.0 for v1.0–v1.8, 12.9.1 from v1.9.0.
    expect([cuda('89-1.5'), cuda('hopper-1.2.3'), cuda('0.5.0'), cuda('cuda-1.9.3'), cuda('120-1.9-grpc')]).toEqual([
      '12.2.0',
      '12.2.0',
      '12.0.0',
      '12.9.1',
      '12.9.1',
    ]);
    // The CPU images have no CUDA; a floating 0.x tag is not known to be pushed.
    expect(cuda('cpu-1.5')).toBeUndefined();
    expect(cuda('0.5')).toBeUndefined();
  });

  it("reads RunPod's tags by the patterns its bake files tag with, and NeMo by NVIDIA's component tables", () => {
    const cuda = (name: string, tag: string) => kb.vendorImage(name, tag)?.cuda;
    // docker-bake.hcl: the tag's cu1281 is the dotless nvidia/cuda base version; older targets spell it cudaX.Y.Z.
    expect(cuda('runpod/pytorch', '1.0.2-cu1281-torch280-ubuntu2404')).toBe('12.8.1');
    expect(cuda('runpod/pytorch', '2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04')).toBe('12.4.1');
    expect(cuda('runpod/base', '0.6.2-cuda1241-ubuntu2204')).toBe('12.4.1');
    // The one legacy target whose tag says 11.7.1 but builds FROM nvidia/cuda:11.8.0.
    expect(cuda('runpod/pytorch', '1.13.0-py3.10-cuda11.7.1-devel-ubuntu22.04')).toBe('11.8.0');
    expect(cuda('runpod/pytorch', 'latest')).toBeUndefined();
    expect(kb.ngcImage('nvidia/nemo', '25.09')?.cuda).toBe('12.9.1');
    expect(kb.ngcImage('nvidia/nemo', '26.06')?.cuda).toBe('13.2.1');
  });

  it('reads the CUDA that cloud images state in their names and tags, by the schemes their builders document', () => {
    const cuda = (image: string) => {
      const at = image.lastIndexOf(':');
      const tagged = at > image.lastIndexOf('/');
      return kb.vendorImage(tagged ? image.slice(0, at) : image, tagged ? image.slice(at + 1) : 'latest')?.cuda;
    };
    const ecr = (region: string, rest: string) => `763104351884.dkr.ecr.${region}.amazonaws.com/${rest}`;
    // AWS Deep Learning Containers: cu + major + one digit of minor, in any region's registry; base's leading X.Y.Z.
    expect(cuda(ecr('us-east-1', 'pytorch-training:2.3.0-gpu-py311-cu121-ubuntu20.04-sagemaker'))).toBe('12.1');
    expect(cuda(ecr('us-west-2', 'djl-inference:0.33.0-lmi15.0.0-cu128'))).toBe('12.8');
    expect(
      cuda('727897471807.dkr.ecr.cn-north-1.amazonaws.com.cn/pytorch-training:2.3.0-gpu-py311-cu121-ubuntu20.04'),
    ).toBe('12.1');
    expect(cuda(ecr('us-east-1', 'base:12.8.1-gpu-py312-cu128-ubuntu24.04-ec2'))).toBe('12.8.1');
    expect(cuda('public.ecr.aws/deep-learning-containers/pytorch:2.12-cu130-amzn2023')).toBe('13.0');
    // No cuXYZ (a floating tag, Neuron), TGI's cu124 tags on a CUDA 12.1 base, another account: not known.
    expect(cuda(ecr('ap-southeast-1', 'pytorch-training:2.6.0-gpu-py312'))).toBeUndefined();
    expect(
      cuda(ecr('us-west-2', 'huggingface-pytorch-tgi-inference:2.4.0-tgi2.3.1-gpu-py311-cu124-ubuntu22.04-v2.0')),
    ).toBeUndefined();
    expect(cuda('123456789012.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.3.0-gpu-py311-cu121')).toBeUndefined();
    // Google's and Azure's name the CUDA in the image's name; MosaicML's in the tag.
    expect(cuda('us-docker.pkg.dev/deeplearning-platform-release/gcr.io/pytorch-cu124.2-4.py310')).toBe('12.4');
    expect(cuda('gcr.io/deeplearning-platform-release/pytorch-gpu.2-2')).toBeUndefined();
    expect(cuda('mcr.microsoft.com/azureml/openmpi4.1.0-cuda11.0.3-cudnn8-ubuntu18.04:20211012.v1')).toBe('11.0.3');
    expect(cuda('mcr.microsoft.com/azureml/curated/acpt-pytorch-2.2-cuda12.1:33')).toBeUndefined();
    expect(cuda('mosaicml/pytorch:2.7.0_cu128-python3.12-ubuntu22.04')).toBe('12.8');
    expect(cuda('mosaicml/pytorch:2.7.0_cpu-python3.12-ubuntu22.04')).toBeUndefined();
    expect(cuda('mosaicml/llm-foundry:2.2.1_cu121_flash2-f044d6c')).toBe('12.1');
  });

  it("reads TensorFlow's GPU images by the Dockerfiles they are built from, not by the CUDA TensorFlow is built for", () => {
    const cuda = (tag: string) => kb.vendorImage('tensorflow/tensorflow', tag)?.cuda;
    // tensorflow/build's runtime Dockerfiles: 11.8.0 to 2.15.0 (built for 12.2), then 12.3.0 (2.18 is built for 12.5).
    expect([cuda('2.12.0-gpu'), cuda('2.15.0-gpu'), cuda('2.16.1-gpu-jupyter'), cuda('2.18.0-gpu')]).toEqual([
      '11.8.0',
      '11.8.0',
      '12.3.0',
      '12.3.0',
    ]);
    expect(cuda('2.4.0-gpu')).toBe('11.0.3');
    // Not confirmed, or moving: not known.
    expect([cuda('2.5.0-gpu'), cuda('latest-gpu'), cuda('2.15.0')]).toEqual([undefined, undefined, undefined]);
  });

  it("reads vLLM's images and pins up to v0.27 by the release pipeline's CUDA and requirements/cuda.txt", () => {
    const cuda = (tag: string) => kb.vendorImage('vllm/vllm-openai', tag)?.cuda;
    // v0.15-v0.19: CUDA 12.9.1 by default, -cu130 13.0.1; from v0.20.0 13.0.2 by default, -cu129 12.9.1.
    expect([cuda('v0.17.1'), cuda('v0.18.0-cu130'), cuda('v0.21.0'), cuda('v0.22.1-cu129-ubuntu2404')]).toEqual([
      '12.9.1',
      '13.0.1',
      '13.0.2',
      '12.9.1',
    ]);
    expect(kb.companionPin('vllm', '0.20.0', [])?.torch).toBe('2.11.0');
    expect(kb.companionPin('vllm', '0.18.1', [])?.torch).toBe('2.10.0');
  });

  it("says which bitsandbytes releases load a library for a CUDA minor, by each release's build matrix", () => {
    // 12.8 from 0.45.3 on (0.50 loads its own 12.8); 11.7 dropped in 0.46, and 0.50 loads 11.8, the nearest of CUDA 11.
    expect(kb.releasesLoadingLibrary('bitsandbytes', '12.8')).toEqual({ since: '0.45.3' });
    expect(kb.releasesLoadingLibrary('bitsandbytes', '11.7')).toEqual({ since: '0.50.0' });
    expect(kb.releasesLoadingLibrary('bitsandbytes', '10.2')).toBeUndefined();
  });

  it('keeps NGC rows that agree with what their tags say', () => {
    const rows = loadData().images.ngc;
    for (const row of rows) {
      // A monthly tag (YY.MM-…) names a month; a release tag (nemo-rl's v0.5.0, Dynamo's 0.8.1) names none. A tag
      // that names its CUDA (cuda-dl-base's cuda12.8, Dynamo's -cuda13) names the row's CUDA.
      const month = /^\d{2}\.(\d{2})/.exec(row.tag)?.[1];
      if (month) expect(Number(month), `${row.repository}:${row.tag}`).toBeGreaterThanOrEqual(1);
      if (month) expect(Number(month), `${row.repository}:${row.tag}`).toBeLessThanOrEqual(12);
      else if (row.repository.startsWith('nvidia/ai-dynamo/'))
        expect(row.tag, `${row.repository}:${row.tag}`).toMatch(/^\d+\.\d+\.\d+(?:\.post\d+)?(?:-[a-z0-9-]+)?$/);
      else expect(row.tag, `${row.repository}:${row.tag}`).toMatch(/^v\d+\.\d+/);
      const named = /-cuda(\d+(?:\.\d+)?)(?![\d.])/.exec(row.tag)?.[1];
      if (named && row.cuda) expect(`${row.cuda}.`.startsWith(`${named}.`), `${row.repository}:${row.tag}`).toBe(true);
    }
    const keys = rows.map((row) => `${row.repository}:${row.tag}`);
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe('query cache', () => {
  it('stays bounded when a long-running process sees endless distinct tags, and keeps answering right', () => {
    const fresh = new KnowledgeBase();
    for (let i = 0; i < 40_000; i++) fresh.nvidiaCudaTag(`12.4.${i}-devel-ubuntu22.04`);
    expect(fresh.cachedAnswers).toBeLessThanOrEqual(4096); // one question asked: one table, emptied when full
    expect(fresh.cachedAnswers).toBeGreaterThan(0);
    expect(fresh.nvidiaCudaTag('12.4.1-cudnn-devel-ubuntu22.04')).toMatchObject({ version: '12.4.1', cudnn: 'cudnn' });
    expect(fresh.cudaExists('12.7')).toBe('no');
    expect(fresh.cudaExists('12.7')).toBe('no');
  });
});

describe('TensorFlow tested configurations', () => {
  it.each([
    ['2.10.1', '11.2', '8.1'],
    ['2.14.0', '11.8', '8.7'],
    ['2.15.0', '12.2', '8.9'],
    ['2.18.0', '12.5', '9.3'],
  ])('TF %s → CUDA %s, cuDNN %s', (tf, cuda, cudnn) => {
    expect(kb.tensorflow(tf)).toMatchObject({ cuda, cudnn });
  });
});

describe('companion pins', () => {
  it('knows which torch an xformers release is built against and which triton a torch wheel requires', () => {
    expect(kb.companionPins('xformers').find((pin) => pin.version === '0.0.29.post2')?.torch).toBe('2.6.0');
    expect(kb.companionPins('triton').find((pin) => pin.torch === '2.6.0')?.version).toBe('3.2.0');
  });
});

describe('citations', () => {
  it('names the source, date and confidence', () => {
    expect(cite(kb.minDriver('12.4.1')!.row)).toMatch(/^https:\/\/docs\.nvidia\.com\/.+\(retrieved 2026-\d\d-\d\d\)$/);
    expect(cite(kb.minDriver('13.4.1')!.row)).toContain('unverified');
  });
});

describe('the driver branches an NGC container allows on data-center GPUs', () => {
  const minimum = (repository: string, tag: string, major: number, branch: number) =>
    kb.ngcDataCenterDriver(repository, tag, major, branch)?.minimum;

  it("are its own release notes' where its row states them", () => {
    expect(minimum('nvidia/tritonserver', '24.01-py3', 12, 470)).toBe('470.57');
    expect(minimum('nvidia/tritonserver', '24.01-py3', 12, 450)).toBeUndefined();
    expect(minimum('nvidia/pytorch', '21.10-py3', 11, 470)).toBeUndefined(); // R418 to R460 only
    expect(minimum('nvidia/pytorch', '21.10-py3', 11, 440)).toBe('440.33');
  });

  it("are the same month's containers' of the CUDA major for a tag without them, or the months around it", () => {
    // PyTorch's 24.01 row has no driver paragraph; the month's other containers' rows have.
    const sibling = kb.ngcDataCenterDriver('nvidia/pytorch', '24.01-py3', 12, 470)?.row;
    expect([sibling?.repository, sibling?.tag.slice(0, 5)]).toEqual([expect.not.stringMatching(/pytorch/), '24.01']);
    // No container of 24.11 is recorded with its notes; 24.10 and 24.12 both allow R470.
    expect(minimum('nvidia/pytorch', '24.11-py3', 12, 470)).toBe('470.57');
    // Past the newest month recorded, or a tag without a month, nothing is said.
    expect(minimum('nvidia/pytorch', '99.01-py3', 12, 470)).toBeUndefined();
    expect(minimum('nvidia/pytorch', 'latest', 12, 470)).toBeUndefined();
  });

  it('are never read for a CUDA 13 container, whose notes repeat the CUDA 12 paragraph', () => {
    expect(kb.ngcImage('nvidia/tritonserver', '25.10-py3')?.dataCenterDrivers).toContain('R470');
    expect(minimum('nvidia/tritonserver', '25.10-py3', 13, 470)).toBeUndefined();
    expect(minimum('nvidia/pytorch', '25.12-py3', 13, 535)).toBeUndefined();
  });
});
