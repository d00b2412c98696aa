import { z } from 'zod';

/** Every record says where it comes from and when that source was read. */
const sourced = {
  source: z.array(z.string().min(1)).min(1),
  retrieved: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  confidence: z.literal('unverified').optional(),
  note: z.string().optional(),
};
const dotted = z.string().regex(/^\d+(\.\d+)*$/);
/** Whether a pattern of the data is a regular expression (the knowledge base compiles it when asked). */
function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}
const cudaTag = z.string().regex(/^cu\d{2,3}$/);
/** A wheel's platform as the checks tell them apart (PEP 425 platform tags, manylinux folded into Linux). */
export const wheelPlatform = z.enum(['linux_x86_64', 'linux_aarch64', 'win_amd64']);
export type WheelPlatform = z.infer<typeof wheelPlatform>;

export const DriverFloor = z.strictObject({
  major: z.number().int(),
  linux: dotted,
  windows: dotted.optional(),
  ...sourced,
});
export type DriverFloor = z.infer<typeof DriverFloor>;

export const CudaRelease = z.strictObject({
  version: dotted,
  label: z.string(),
  linux: dotted.optional(),
  windows: dotted.optional(),
  ...sourced,
});
export type CudaRelease = z.infer<typeof CudaRelease>;

/** A cuda-compat-X-Y package and the driver branches NVIDIA supports it on (forward compatibility). */
export const CompatPackage = z.strictObject({
  package: z.string(),
  cuda: dotted,
  builtFromBranch: z.number().int(),
  compatibleBranches: z.array(z.number().int()),
  ...sourced,
});
export type CompatPackage = z.infer<typeof CompatPackage>;

export const CudaDrivers = z.strictObject({
  description: z.string(),
  noRelease: z.array(z.strictObject({ version: dotted, ...sourced })),
  floors: z.array(DriverFloor),
  releases: z.array(CudaRelease),
  forwardCompat: z.strictObject({ gpus: z.string(), packages: z.array(CompatPackage) }),
});
export type CudaDrivers = z.infer<typeof CudaDrivers>;

export const TorchRelease = z.strictObject({
  version: z.string(),
  variants: z.array(cudaTag),
  pypiDefault: cudaTag.nullable(),
  torchvision: z.array(z.string()),
  torchaudio: z.array(z.string()),
  python: z.string().optional(),
  condaPytorchCuda: z.array(dotted).optional(),
  condaCudatoolkit: z.array(dotted).optional(),
  cudnn: z.record(cudaTag, z.string()).optional(),
  nccl: z.record(cudaTag, z.string()).optional(),
  variantsComplete: z.boolean().optional(),
  /**
   * The platforms a variant's wheels are published for, where the index was read for it (kb:refresh); a variant
   * not listed here is known for Linux x86_64 only, which is what `variants` records.
   */
  platforms: z.record(cudaTag, z.array(wheelPlatform)).optional(),
  /** false: this release's torchaudio has no CUDA builds (before 0.10 it was one build for every CUDA). */
  torchaudioCuda: z.boolean().optional(),
  ...sourced,
});
export type TorchRelease = z.infer<typeof TorchRelease>;

export const PyTorch = z.strictObject({
  description: z.string(),
  index: z.strictObject({ base: z.string().url(), nightly: z.string().url(), test: z.string().url(), ...sourced }),
  releases: z.array(TorchRelease),
});
export type PyTorchData = z.infer<typeof PyTorch>;

export const ArchBuild = z.strictObject({
  torch: z.string(),
  variants: z.array(cudaTag),
  sass: z.array(z.string().regex(/^\d+\.\d+a?$/)),
  ptx: z.array(z.string()).optional(),
  ...sourced,
});
export type ArchBuild = z.infer<typeof ArchBuild>;
export const PyTorchArchs = z.strictObject({ description: z.string(), builds: z.array(ArchBuild) });

export const GpuStackBuild = z.strictObject({
  package: z.string(),
  /** The extra that brings the CUDA build (`tensorflow[and-cuda]`), when it is the extra that decides. */
  extra: z.string().optional(),
  /** PEP 440 specifier of the versions the row covers. */
  versions: z.string(),
  cudaMajor: z.number().int(),
  /**
   * The requirement of the package that brings the CUDA build, where the package itself is pure Python
   * (faster-whisper through `ctranslate2<4`): every version of it the package admits is of that major.
   */
  through: z.string().optional(),
  /** The machines whose PyPI wheels are the CUDA build, where the others' are CPU-only (ctranslate2: x86_64). */
  machines: z.array(z.enum(['x86_64', 'aarch64'])).optional(),
  ...sourced,
});
export type GpuStackBuild = z.infer<typeof GpuStackBuild>;
export const GpuStacks = z.strictObject({ description: z.string(), builds: z.array(GpuStackBuild) });

export const CompanionPin = z.strictObject({
  package: z.string(),
  version: z.string(),
  torch: z.string(),
  /** The environment marker of torch's Requires-Dist on this pin (triton): outside it, torch requires nothing. */
  marker: z.string().optional(),
  /**
   * `minor`: the wheel requires only torch>=`torch`, but its C++ extension is compiled against that torch minor, so
   * any torch of the minor works and any other fails at import (torchtext 0.18.0).
   */
  abi: z.literal('minor').optional(),
  /**
   * The torch its wheel requires (Requires-Dist), where it is a range: `>=2.5.0,<2.6.0` (torch-tensorrt 2.5.0, built
   * against torch 2.5.0). A torch outside it is refused by pip or replaced; one inside it is what the wheel accepts.
   */
  requires: z.string().optional(),
  /**
   * The extras that bring the torch requirement (`sglang[srt]`, `sglang[all]` up to 0.5.2): without one of them the
   * package requires no torch. Absent: its base dependencies do.
   */
  extras: z.array(z.string()).optional(),
  ...sourced,
});
export type CompanionPin = z.infer<typeof CompanionPin>;
/** The CUDA majors a package ships libraries for, by release range (bitsandbytes loads the one of torch's CUDA). */
export const CudaLibraries = z.strictObject({
  package: z.string(),
  /** PEP 440 specifier of the releases the row covers. */
  versions: z.string(),
  cudaMajors: z.array(z.number().int()),
  /** The CUDA minors of its libraries (`12.8`), where the release loads the library of torch's minor. */
  cudaMinors: z.array(z.string().regex(/^\d+\.\d+$/)).optional(),
  /**
   * What a release does when torch's minor has no library: the import or the first GPU call fails (`error`), it loads
   * its CPU library (`cpu`), or it loads the nearest minor of the same major (`nearest`).
   */
  missingMinor: z.enum(['error', 'cpu', 'nearest']).optional(),
  ...sourced,
});
export type CudaLibraries = z.infer<typeof CudaLibraries>;
export const Companions = z.strictObject({
  description: z.string(),
  pins: z.array(CompanionPin),
  cudaLibraries: z.array(CudaLibraries),
});

/** NVIDIA's product lines, as the cuda-gpus page sections them; forward compatibility depends on it. */
export const GpuClass = z.enum(['data-center', 'workstation', 'geforce', 'jetson']);
export type GpuClass = z.infer<typeof GpuClass>;
export const Gpu = z
  .strictObject({
    names: z.array(z.string()).min(1),
    cc: z.string(),
    minCuda: dotted,
    minDriver: dotted.optional(),
    lastCudaMajor: z.number().int().optional(),
    /** The product line of each name (a name left out is of a line the sources do not say). */
    classes: z.record(z.string(), GpuClass).optional(),
    ...sourced,
  })
  .refine((gpu) => Object.keys(gpu.classes ?? {}).every((name) => gpu.names.includes(name)), {
    message: 'classes names a GPU the record does not list',
  });
export type Gpu = z.infer<typeof Gpu>;
export const ComputeCapability = z.strictObject({
  cc: z.string(),
  minCuda: dotted,
  lastCudaMajor: z.number().int().optional(),
  ...sourced,
});
export type ComputeCapability = z.infer<typeof ComputeCapability>;
export const Gpus = z.strictObject({
  description: z.string(),
  gpus: z.array(Gpu),
  computeCapabilities: z.array(ComputeCapability),
});

const CudnnSpelling = z.strictObject({ spelling: z.string(), from: dotted, through: dotted.optional(), ...sourced });
export const OsSuffix = z.strictObject({
  os: z.string(),
  versions: z.array(z.string()),
  from: dotted.optional(),
  through: dotted.optional(),
  ...sourced,
});
export type OsSuffix = z.infer<typeof OsSuffix>;
export const NgcPytorch = z.strictObject({
  tag: z.string(),
  cuda: dotted.optional(),
  cudaMajor: z.number().int().optional(),
  torch: z.string().optional(),
  cudnn: z.string().optional(),
  nccl: z.string().optional(),
  ...sourced,
});
export type NgcPytorch = z.infer<typeof NgcPytorch>;

/** An NGC container tag other than the PyTorch rows: the CUDA inside it, and what its release notes say. */
export const NgcImage = z.strictObject({
  /** `nvidia/tritonserver` (on nvcr.io), or a team's `nvidia/ai-dynamo/vllm-runtime`. */
  repository: z.string().regex(/^nvidia\/[a-z0-9._-]+(?:\/[a-z0-9._-]+)?$/),
  tag: z.string().min(1),
  /** The CUDA inside (X.Y.Z, or X.Y where the source gives no patch); absent where only the tag is known to exist. */
  cuda: dotted.optional(),
  /** The minimum driver the release notes state, as written. */
  driver: z.string().optional(),
  /** The older branches the release notes allow on data-center GPUs, as written. */
  dataCenterDrivers: z.string().optional(),
  frameworks: z.record(z.string(), z.string()).optional(),
  ...sourced,
});
export type NgcImage = z.infer<typeof NgcImage>;
/**
 * Tags of a vendor's image (vLLM, SGLang, text-generation-inference) that one source describes (a release's
 * pipeline or Dockerfile), each with the CUDA of its nvidia/cuda base.
 */
export const VendorImage = z.strictObject({
  /** The image's name as a reference spells it without tag, Docker Hub's without registry (`vllm/vllm-openai`). */
  name: z.string().regex(/^[a-z0-9][a-z0-9._/-]*$/),
  /** Tag → CUDA. */
  tags: z.record(z.string().min(1), dotted),
  ...sourced,
});
export type VendorImage = z.infer<typeof VendorImage>;

export const Images = z.strictObject({
  description: z.string(),
  nvidiaCuda: z.strictObject({
    repositories: z.array(z.string()),
    grammar: z.string(),
    flavours: z.array(z.string()),
    fullVersionRequiredFrom: dotted,
    cudnnSpellings: z.array(CudnnSpelling),
    osSuffixes: z.array(OsSuffix),
    cudnnDevelTagsSeen: z.strictObject({ versions: z.record(z.string(), z.array(dotted)), ...sourced }),
    deletedTags: z.strictObject({ versions: z.array(dotted), majors: z.array(z.number().int()), ...sourced }),
    releasesWithoutTags: z.strictObject({ versions: z.array(dotted), ...sourced }),
    supportPolicy: z.strictObject({ text: z.string(), ...sourced }),
    requireCuda: z.strictObject({
      description: z.string(),
      rows: z.array(
        z.strictObject({
          versions: z.array(dotted).min(1),
          branches: z.array(z.number().int()),
          brands: z.array(z.string().min(1)),
        }),
      ),
      ...sourced,
    }),
  }),
  pytorchImages: z.strictObject({
    repository: z.string(),
    grammar: z.string(),
    examples: z.array(z.string()),
    ...sourced,
  }),
  ngcPytorch: z.array(NgcPytorch),
  ngc: z.array(NgcImage),
  vendor: z.array(VendorImage),
  /**
   * Images whose tags name their CUDA as a `-cuXY` part (Ray's `2.40.0-py310-cu121`), each grammar with the source
   * that says so for its names.
   */
  cudaTagSuffix: z.array(
    z.strictObject({
      names: z.array(z.string()),
      ...sourced,
      /**
       * Where a `-gpu` tag (and, for `bare` names, a tag with no platform part) aliases one `-cuXY` image per release:
       * that CUDA, by the release at the head of the tag (`2.9.0-py310-gpu` is release 2.9.0), each range with the
       * build code that says so (`versions`: a PEP 440 specifier). A release no range covers is not known.
       */
      gpuAlias: z
        .strictObject({
          names: z.array(z.string()),
          bare: z.array(z.string()),
          releases: z.array(z.strictObject({ versions: z.string(), cuda: dotted, ...sourced })),
        })
        .optional(),
    }),
  ),
  /**
   * Images whose tags spell the CUDA of their nvidia/cuda base in a form of their own (RunPod's
   * `2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04`, `1.0.2-cu1281-torch280-ubuntu2404`): a pattern over the whole tag
   * whose groups, joined by dots, are that CUDA (`cu1281` → 12.8.1), with the build files that make the tag so.
   * Where the name varies too (a registry per region, as AWS's Deep Learning Containers on ECR), or states the CUDA
   * itself (Azure ML's `openmpi4.1.0-cuda11.8-cudnn8-ubuntu22.04`), `namePattern` matches the whole name instead of
   * `name`, and its groups come before the tag's.
   */
  tagPatterns: z.array(
    z
      .strictObject({
        name: z.string().optional(),
        namePattern: z.string().refine(compiles, 'not a regular expression').optional(),
        pattern: z.string().refine(compiles, 'not a regular expression'),
        /**
         * false where NVIDIA's cuda-compat package is not known to be in the images (their base is not nvidia/cuda,
         * or not known): forward compatibility is then not counted on. Absent: built on nvidia/cuda, which has it.
         */
        cudaCompat: z.boolean().optional(),
        ...sourced,
      })
      .refine((row) => (row.name === undefined) !== (row.namePattern === undefined), 'give name or namePattern'),
  ),
  /**
   * Images whose tags without a platform part (`-cpu`, `-gpu`, `-cuXY`) alias the CPU image, on a plain OS with no
   * CUDA (Ray's `2.46.0`, `2.46.0-py311`, which are `-cpu`).
   */
  cpuByDefault: z.array(z.strictObject({ names: z.array(z.string()), ...sourced })),
  /** Red Hat's Python images on UBI and RHEL (a pattern of their names): none ships CUDA. */
  redHatPythonImages: z.strictObject({ pattern: z.string(), ...sourced }),
  /**
   * Images for accelerators other than NVIDIA's (Ascend, Gaudi, Neuron, Intel XPU), by name: none ships CUDA, and what
   * they run does not run on NVIDIA GPUs. AMD's ROCm images are told by name in code (rocmImage).
   */
  acceleratorImages: z.array(
    z.strictObject({
      vendor: z.string(),
      pattern: z.string().refine(compiles, 'not a regular expression'),
      ...sourced,
    }),
  ),
  /**
   * Images for NVIDIA's Jetson boards (NVIDIA's L4T containers, jetson-containers' dustynv images), by name: arm64
   * builds whose CUDA driver comes with the board's L4T release. What they run runs on Jetson boards, not on a fleet's
   * data-center or GeForce GPUs.
   */
  jetsonImages: z.strictObject({ pattern: z.string().refine(compiles, 'not a regular expression'), ...sourced }),
  /** Minimal OS images outside Docker Hub (Red Hat's UBI, Google's distroless): none ships CUDA. */
  osImages: z.strictObject({ pattern: z.string().refine(compiles, 'not a regular expression'), ...sourced }),
  /**
   * NVIDIA's GPU management tools (DCGM's exporter, the device plugin), by name: they read the GPUs through the
   * driver's NVML, and their images turn off the container toolkit's CUDA requirement (NVIDIA_DISABLE_REQUIRE).
   */
  driverToolImages: z.strictObject({ pattern: z.string().refine(compiles, 'not a regular expression'), ...sourced }),
  /** Vendor images that ship torch (and vLLM or SGLang with it) whose version the knowledge does not record. */
  torchImages: z.strictObject({
    description: z.string(),
    images: z.array(
      z.strictObject({
        pattern: z.string().refine(compiles, 'not a regular expression'),
        /** Where only some tags ship a framework (verl's app tags name vllm or sglang; its base tags ship neither). */
        tag: z.string().refine(compiles, 'not a regular expression').optional(),
        /** The Python packages the image ships (torch, vllm, sglang), of versions not recorded. */
        ships: z.array(z.string()),
        /**
         * The version of a shipped package that the tag names, by package: the first group of this expression over
         * the tag (vllm/vllm-openai:v0.10.2 ships vllm 0.10.2). A tag it does not match names none.
         */
        versions: z.record(z.string(), z.string().refine(compiles, 'not a regular expression')).optional(),
        ...sourced,
      }),
    ),
  }),
  /** Docker Official Images (a selection): none ships CUDA. */
  officialImages: z.strictObject({ names: z.array(z.string()), ...sourced }),
  /** Package-manager images on a plain OS: no CUDA, unless the tag names an nvidia/cuda-based variant. */
  toolImages: z.strictObject({
    description: z.string(),
    images: z.array(z.strictObject({ name: z.string(), ...sourced })),
  }),
});
export type Images = z.infer<typeof Images>;

export const Conda = z.strictObject({
  description: z.string(),
  pytorchCuda: z.strictObject({ versions: z.array(dotted), ...sourced }),
  pytorchChannel: z.strictObject({ lastVersion: z.string(), ...sourced }),
  buildString: z.strictObject({ grammar: z.string(), examples: z.array(z.string()), ...sourced }),
  condaForge: z.strictObject({ cudaVersionMetapackage: z.string(), cuda118Dropped: z.boolean(), ...sourced }),
  /** The last CUDA major the `cudatoolkit` package exists for; CUDA 12 on conda is the split cuda-* packages. */
  cudatoolkit: z.strictObject({ lastMajor: z.number().int(), ...sourced }),
});
export type Conda = z.infer<typeof Conda>;

export const TensorflowRelease = z.strictObject({
  version: z.string(),
  python: z.string(),
  cudnn: dotted,
  cuda: dotted,
  ...sourced,
});
export type TensorflowRelease = z.infer<typeof TensorflowRelease>;
export const Tensorflow = z.strictObject({
  description: z.string(),
  releases: z.array(TensorflowRelease),
  notes: z.array(z.strictObject({ text: z.string(), ...sourced })),
});

export const Cudnn = z.strictObject({
  description: z.string(),
  releases: z.array(z.strictObject({ version: dotted, cuda: z.array(z.string()), ...sourced })),
});
export const NvidiaWheels = z.strictObject({
  description: z.string(),
  suffixed: z.strictObject({ pattern: z.string(), majors: z.array(z.number().int()), ...sourced }),
  cuda13Unsuffixed: z.strictObject({
    packages: z.array(z.string()),
    deprecatedStubs: z.string(),
    keepSuffix: z.array(z.string()),
    ...sourced,
  }),
  cupy: z.strictObject({ pattern: z.string(), ...sourced }),
});
export type NvidiaWheels = z.infer<typeof NvidiaWheels>;

/** Anything with a source: what rules cite in their help text. */
export interface Sourced {
  readonly source: readonly string[];
  readonly retrieved: string;
  readonly confidence?: 'unverified';
  readonly note?: string;
}

/** The python3 of a distribution's release, and the CPython versions a current image plausibly runs (python.json). */
export const Python = z.strictObject({
  description: z.string(),
  osDefaults: z.array(z.strictObject({ os: z.string(), version: dotted, python: dotted, ...sourced })),
  current: z.strictObject({ versions: z.array(dotted).min(1), ...sourced }),
  /** Pythons past their end of life that images still run (RHEL 9's 3.9): an image of unknown Python may run one. */
  stillRun: z.strictObject({ versions: z.array(dotted), ...sourced }),
});
