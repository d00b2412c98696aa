/**
 * The knowledge base: sourced CUDA, driver, PyTorch, GPU and image facts behind typed queries. Data lives in
 * ./data/*.json and is validated by ./schema.ts when this module loads; nothing else reads those files.
 */
import { Answers } from '../util/memo.js';
import { cudaFromTag, minorOf, parseCuda, publicVersion, tagFromCuda } from './versions.js';
import { compareDotted } from '../util/dotted.js';
import { groupBy } from '../util/collections.js';
import companionsData from './data/companions.json' with { type: 'json' };
import condaData from './data/conda.json' with { type: 'json' };
import cudaDriversData from './data/cuda-drivers.json' with { type: 'json' };
import cudnnData from './data/cudnn.json' with { type: 'json' };
import gpusData from './data/gpus.json' with { type: 'json' };
import imagesData from './data/images.json' with { type: 'json' };
import nvidiaWheelsData from './data/nvidia-wheels.json' with { type: 'json' };
import archsData from './data/pytorch-archs.json' with { type: 'json' };
import pytorchData from './data/pytorch.json' with { type: 'json' };
import tensorflowData from './data/tensorflow.json' with { type: 'json' };
import gpuStacksData from './data/gpu-stacks.json' with { type: 'json' };
import pythonData from './data/python.json' with { type: 'json' };
import * as schema from './schema.js';
import type { ImageLookup, ImageLookups } from '../images/lookup.js';
import { imageKey, type ImageRef } from '../images/reference.js';
import type {
  ArchBuild,
  CompanionPin,
  CompatPackage,
  ComputeCapability,
  Conda,
  CudaRelease,
  DriverFloor,
  Gpu,
  GpuClass,
  GpuStackBuild,
  Images,
  NgcImage,
  NgcPytorch,
  OsSuffix,
  PyTorchData,
  VendorImage,
  Sourced,
  TensorflowRelease,
  TorchRelease,
} from './schema.js';
import { satisfiesPep440 } from '../util/pep440.js';

export type {
  ArchBuild,
  CompanionPin,
  CompatPackage,
  ComputeCapability,
  CudaRelease,
  DriverFloor,
  Gpu,
  GpuClass,
  GpuStackBuild,
  NgcImage,
  NgcPytorch,
  Sourced,
  VendorImage,
  TensorflowRelease,
  TorchRelease,
};

/** Validate every data file; throws (at load, and in tests) when a file does not match its schema. */
/** The bundled knowledge base, each file checked against its schema (the tests; bundledData is what a check reads). */
export function loadData() {
  return {
    drivers: schema.CudaDrivers.parse(cudaDriversData),
    pytorch: schema.PyTorch.parse(pytorchData),
    archs: schema.PyTorchArchs.parse(archsData),
    companions: schema.Companions.parse(companionsData),
    gpus: schema.Gpus.parse(gpusData),
    images: schema.Images.parse(imagesData),
    conda: schema.Conda.parse(condaData),
    tensorflow: schema.Tensorflow.parse(tensorflowData),
    cudnn: schema.Cudnn.parse(cudnnData),
    nvidiaWheels: schema.NvidiaWheels.parse(nvidiaWheelsData),
    gpuStacks: schema.GpuStacks.parse(gpuStacksData),
    python: schema.Python.parse(pythonData),
  };
}

export type KnowledgeData = ReturnType<typeof loadData>;

/**
 * The bundled knowledge base as a check reads it: the JSON files as they are, without checking them against their
 * schemas again on every run (that took 40–50 ms of each process's start, more than the rest of a small check's
 * set-up). The files are part of the bundle, so what a run reads is what the tests checked: test/knowledge's
 * "the bundled data is what its schemas read" holds that loadData() gives these very values (no schema adds a
 * default or changes a value), so trusting them here is the same as checking them.
 */
export function bundledData(): KnowledgeData {
  return {
    drivers: cudaDriversData,
    pytorch: pytorchData,
    archs: archsData,
    companions: companionsData,
    gpus: gpusData,
    images: imagesData,
    conda: condaData,
    tensorflow: tensorflowData,
    cudnn: cudnnData,
    nvidiaWheels: nvidiaWheelsData,
    gpuStacks: gpuStacksData,
    python: pythonData,
  } as unknown as KnowledgeData;
}

export interface DriverNeed {
  /** The CUDA version asked about. */
  readonly cuda: string;
  /** The Table 3 row used (may be an earlier update of the same minor when the exact one has no row). */
  readonly row: CudaRelease;
  readonly linux: string;
  readonly exactRow: boolean;
}

export interface GpuInfo {
  readonly name: string;
  readonly cc: string;
  /** The first CUDA that compiles native code for it. */
  readonly minCuda: string;
  /**
   * The first CUDA whose code runs on it: a cubin for compute capability X.y runs on X.z for every z >= y (NVIDIA's
   * binary compatibility), so a CUDA that compiles for an earlier minor of its major (8.6 for an 8.9 GPU) does.
   */
  readonly runsFrom: string;
  /** Oldest Linux driver that supports the GPU at all, where published. */
  readonly minDriver?: string;
  readonly lastCudaMajor?: number;
  /** NVIDIA's product line for the matched name, where the knowledge base has it. */
  readonly class?: GpuClass;
  readonly record: Sourced;
}

export interface NvidiaCudaTag {
  readonly version: string;
  readonly cudnn?: string;
  readonly flavour?: string;
  readonly os?: string;
  readonly osVersion?: string;
  /** Character offsets of the version inside the tag. */
  readonly versionRange: readonly [number, number];
}

export interface PytorchImageTag {
  readonly torch: string;
  readonly cuda: string;
  readonly cudnn: string;
  readonly flavour: string;
  readonly cudaRange: readonly [number, number];
}

/** The known versions of one package of the torch family (see `releaseLine`). */
export interface ReleaseLine {
  readonly versions: ReadonlySet<string>;
  readonly newest: string | undefined;
  /** `2.5` → `2.5.1`: the newest known version of each minor. */
  readonly newestOfMinor: ReadonlyMap<string, string>;
}

/** The month of an NGC container's tag (`24.01` of `24.01-py3`), or undefined for a tag without one. */
function ngcMonth(tag: string): string | undefined {
  return /^\d{2}\.\d{2}(?=-|$)/.exec(tag)?.[0];
}

/** The minimum an NGC row's release notes state for a driver branch on data-center GPUs ("R470 (>=470.57)"). */
function statedBranch(row: NgcImage, branch: number): { readonly minimum: string; readonly row: NgcImage } | undefined {
  for (const [, stated, minimum] of (row.dataCenterDrivers ?? '').matchAll(/\bR(\d+) \(>=(\d+(?:\.\d+)*)\)/g))
    if (Number(stated) === branch) return { minimum: minimum!, row };
  return undefined;
}

export class KnowledgeBase {
  /** The records; read them through the queries below (rules, renderers and the web page alike). */
  private readonly data: KnowledgeData;
  /** The newest `retrieved` date of any record: how fresh the knowledge is. */
  readonly retrieved: string;
  private readonly releasesByVersion: ReadonlyMap<string, CudaRelease>;
  private readonly torchByVersion: ReadonlyMap<string, TorchRelease>;
  /**
   * Query results are pure functions of the data: cache them (rules ask the same questions per unit), one table
   * per question keyed by its argument, so asking builds no key. Each table is bounded (see Answers): arguments
   * come from user files, and an App process lives long.
   */
  private readonly answers = new Map<string, Answers<unknown>>();

  /** Answers held by the query cache, over all questions. */
  get cachedAnswers(): number {
    let count = 0;
    for (const table of this.answers.values()) count += table.size;
    return count;
  }

  /**
   * Memoise a pure query over this knowledge base (for helpers outside the class): `key` names question and arguments.
   */
  memoized<T>(key: string, compute: () => T): T {
    return this.cached('memoized', key, compute);
  }

  /** The answer to `question` about `arg`; `compute` is called with this knowledge base as `this`. */
  private cached<T>(question: string, arg: string, compute: (this: KnowledgeBase, arg: string) => T): T {
    let table = this.answers.get(question);
    if (table === undefined) this.answers.set(question, (table = new Answers()));
    return (table as Answers<T>).of(arg, compute, this);
  }

  /** Compiled patterns of the data, by source. */
  private readonly patterns = new Map<string, RegExp>();

  /** The groups that matched where `pattern` (a pattern of the data) matches `text`, else undefined. */
  private match(pattern: string, text: string): string[] | undefined {
    let compiled = this.patterns.get(pattern);
    if (!compiled) this.patterns.set(pattern, (compiled = new RegExp(pattern)));
    return compiled
      .exec(text)
      ?.slice(1)
      .filter((group) => group !== undefined);
  }

  /** What this check read of its images from their registries (src/images), by image key. */
  private readonly images: ImageLookups;

  constructor(data: KnowledgeData = bundledData(), images: ImageLookups = {}) {
    this.data = data;
    this.images = images;
    this.releasesByVersion = new Map(data.drivers.releases.map((row) => [row.version, row]));
    this.torchByVersion = new Map(data.pytorch.releases.map((row) => [row.version, row]));
    this.retrieved =
      [
        ...data.drivers.releases,
        ...data.pytorch.releases,
        ...data.gpus.gpus,
        ...data.images.vendor,
        ...data.images.cudaTagSuffix,
      ]
        .map((row) => row.retrieved)
        .sort()
        .at(-1) ?? 'unknown';
  }

  // ------------------------------------------------------------------ CUDA and drivers

  /** Minor-version-compatibility floor of a CUDA major (e.g. 12 → 525.60.13). */
  driverFloor(major: number): DriverFloor | undefined {
    return this.data.drivers.floors.find((floor) => floor.major === major);
  }

  /** The driver a CUDA version needs for its full feature set (NVIDIA Table 3). `12.4` means 12.4 GA. */
  minDriver(cuda: string): DriverNeed | undefined {
    return this.cached('minDriver', cuda, this.computeMinDriver);
  }

  private computeMinDriver(cuda: string): DriverNeed | undefined {
    const parsed = parseCuda(cuda);
    if (!parsed) return undefined;
    if (parsed.patch === undefined) {
      // `12.4`, `11.0` (a +cu110 wheel, cudatoolkit=11.0) mean the release's GA row: NVIDIA names 11.0.2 "11.0 GA"
      // and 13.4.1 "13.4 GA"; without a GA row, the minor's first release that is not an RC or a preview.
      const rows = this.data.drivers.releases.filter(
        (row) => row.linux && row.version.startsWith(`${parsed.major}.${parsed.minor}.`),
      );
      const ga =
        rows.find((row) => /\bGA\b/.test(row.label)) ??
        rows.find((row) => !/\b(?:RC|Preview)\b/i.test(row.label)) ??
        rows[0];
      if (ga?.linux) return { cuda, row: ga, linux: ga.linux, exactRow: true };
    }
    const wanted = `${parsed.major}.${parsed.minor}.${parsed.patch ?? 0}`;
    const exact = this.releasesByVersion.get(wanted);
    if (exact?.linux) return { cuda, row: exact, linux: exact.linux, exactRow: true };
    const sameMinor = this.data.drivers.releases
      .filter(
        (row) =>
          row.linux &&
          row.version.startsWith(`${parsed.major}.${parsed.minor}.`) &&
          compareDotted(row.version, wanted) <= 0,
      )
      .at(-1);
    return sameMinor?.linux ? { cuda, row: sameMinor, linux: sameMinor.linux, exactRow: false } : undefined;
  }

  /** The oldest driver any release of a CUDA major runs on natively (11.x: 450.36.06, 11.0.1 RC). */
  lowestDriver(major: number): CudaRelease | undefined {
    return this.data.drivers.releases
      .filter((row) => row.linux && cudaMajorOf(row.version) === major)
      .sort((a, b) => compareDotted(a.linux!, b.linux!))[0];
  }

  /**
   * The forward-compatibility package for a CUDA major.minor (`cuda-compat-13-0`) and the driver branches NVIDIA
   * supports it on (forward-compatibility.html, "Use the Right CUDA Forward Compatibility Package").
   */
  forwardCompat(cuda: string): CompatPackage | undefined {
    const minor = parseCuda(cuda);
    return minor
      ? this.data.drivers.forwardCompat.packages.find((row) => row.cuda === `${minor.major}.${minor.minor}`)
      : undefined;
  }

  /**
   * Whether NVIDIA released this CUDA (`12.4`, `12.4.1`). The list of releases is closed below the newest one:
   * a major.minor that is not in it was never released ('no'); one newer than the newest is 'unknown' (newer than
   * the knowledge base). A patch of a finished minor (one a later minor followed) that is not listed is 'no' too
   * (its updates all came before the next minor); a patch of the newest minor may be a later update ('unknown').
   */
  cudaExists(cuda: string): 'yes' | 'no' | 'unknown' {
    return this.cached('cudaExists', cuda, this.computeCudaExists);
  }

  private computeCudaExists(cuda: string): 'yes' | 'no' | 'unknown' {
    const parsed = parseCuda(cuda);
    if (!parsed) return 'unknown';
    const minor = `${parsed.major}.${parsed.minor}`;
    if (this.data.drivers.noRelease.some((row) => row.version === minor)) return 'no';
    const releases = this.cudaReleasesOf(minor);
    if (releases.length === 0) return compareDotted(minor, this.newestCuda()) < 0 ? 'no' : 'unknown';
    if (parsed.patch === undefined || releases.includes(`${minor}.${parsed.patch}`)) return 'yes';
    // Earlier releases are listed by their first build only (10.1.105 "and updates").
    if (compareDotted(minor, '11.0') < 0) return 'unknown';
    return this.cudaMinorFinished(minor) ? 'no' : 'unknown';
  }

  /** The releases of one CUDA minor NVIDIA's table lists (`12.1` → 12.1.0, 12.1.1), oldest first. */
  cudaReleasesOf(minor: string): readonly string[] {
    return this.cached('cudaReleasesOf', minor, (wanted) =>
      this.data.drivers.releases
        .map((row) => row.version)
        .filter((version) => minorOf(version) === wanted)
        .sort(compareDotted),
    );
  }

  /** Whether a later CUDA minor followed this one: then it gets no more updates. */
  cudaMinorFinished(minor: string): boolean {
    return compareDotted(minor, this.newestCuda()) < 0;
  }

  /** The record that says a CUDA was never released: NVIDIA's note for a gap it names, or the closed release list. */
  noReleaseRecord(cuda: string): Sourced | undefined {
    const parsed = parseCuda(cuda);
    if (!parsed) return undefined;
    const minor = `${parsed.major}.${parsed.minor}`;
    const named = this.data.drivers.noRelease.find((row) => row.version === minor);
    if (named) return named;
    if (this.cudaExists(cuda) !== 'no') return undefined;
    const newest = this.data.drivers.releases.at(-1)!;
    const known = this.cudaReleasesOf(minor);
    return {
      // Table 3 of the newest release notes lists every release down to 7.0 (the oldest row cites that edition).
      source: [...new Set([...newest.source, ...this.data.drivers.releases[0]!.source])],
      retrieved: newest.retrieved,
      note:
        known.length > 0
          ? `NVIDIA's release table lists every update of CUDA ${minor}: ${known.join(', ')}`
          : `NVIDIA's release table lists every CUDA release up to ${minorOf(newest.version)}, and ${minor} is not one of them`,
    };
  }

  /** The newest CUDA release in the driver table (its row: version, drivers, source). */
  newestCudaRelease(): CudaRelease {
    return this.data.drivers.releases.at(-1)!;
  }

  /** The newest CUDA major.minor in the driver table. */
  newestCuda(): string {
    return minorOf(this.data.drivers.releases.at(-1)!.version);
  }

  // ------------------------------------------------------------------ PyTorch

  torchRelease(version: string): TorchRelease | undefined {
    return this.torchByVersion.get(publicVersion(version));
  }

  torchReleases(): readonly TorchRelease[] {
    return this.data.pytorch.releases;
  }

  /** Every CUDA release with its driver versions, oldest first (the CUDA × driver table). */
  cudaReleases(): readonly CudaRelease[] {
    return this.data.drivers.releases;
  }

  /** Every GPU model in the table, with its names and compute capability (the web page's GPU menu). */
  gpus(): readonly Gpu[] {
    return this.data.gpus.gpus;
  }

  /** TensorFlow's tested configurations, newest first. */
  tensorflowReleases(): readonly TensorflowRelease[] {
    return this.data.tensorflow.releases;
  }

  /** CUDA wheel variants of a torch release on download.pytorch.org, e.g. ['cu118','cu121','cu124']. */
  torchVariants(version: string): readonly string[] {
    return this.torchRelease(version)?.variants ?? [];
  }

  /** Every CUDA build of a release (index variants plus the PyPI build), as CUDA versions. */
  torchCudaBuilds(version: string): readonly string[] {
    const release = this.torchRelease(version);
    if (!release) return [];
    return torchBuildTags(release)
      .map((tag) => cudaFromTag(tag)!)
      .sort(compareDotted);
  }

  /** PyTorch's wheel indexes (stable, nightly, test) and the source that lists the builds they serve. */
  pytorchIndex(): PyTorchData['index'] {
    return this.data.pytorch.index;
  }

  /** The wheel tags a release ships (`cu121`, `cpu`, …), its PyPI build included, as a set (asked per package). */
  torchBuilds(release: TorchRelease): ReadonlySet<string> {
    return this.cached('torchBuilds', release.version, () => new Set(torchBuildTags(release)));
  }

  /**
   * Whether some torch release has a build of this wheel tag (`cu121`) on PyTorch's index: an index path for a tag no
   * release was built for (`/whl/cu123`) does not exist.
   */
  publishesTorchBuild(tag: string): boolean {
    return this.cached(
      'torchTags',
      '',
      () => new Set(this.torchReleases().flatMap((row) => [...this.torchBuilds(row)])),
    ).has(tag);
  }

  /** The CUDA builds PyTorch's releases were published for (`cu118`: 11.8), oldest CUDA first. */
  publishedCudaBuilds(): readonly { readonly tag: string; readonly cuda: string }[] {
    return this.cached('publishedCudaBuilds', '', () =>
      [...new Set(this.torchReleases().flatMap((row) => [...this.torchBuilds(row)]))]
        .flatMap((tag) => {
          const cuda = cudaFromTag(tag);
          return cuda ? [{ tag, cuda }] : [];
        })
        .sort((a, b) => compareDotted(a.cuda, b.cuda)),
    );
  }

  /**
   * The oldest CUDA of the first torch release whose builds the knowledge base lists completely (1.13: 11.6): before
   * it, PyTorch's indexes served builds of releases it does not list (`/whl/cu100` of torch 1.0–1.4).
   */
  completeBuildsFrom(): string | undefined {
    return this.cached('completeBuildsFrom', '', () => {
      const first = this.torchReleases().find((row) => row.variantsComplete !== false && !isUnverified(row));
      const cudas = first ? [...this.torchBuilds(first)].flatMap((tag) => cudaFromTag(tag) ?? []) : [];
      return cudas.sort(compareDotted)[0];
    });
  }

  /** The CUDA version plain `pip install torch==X` gives on Linux x86_64 (e.g. 2.1.0 → 12.1). */
  pypiDefaultCuda(version: string): string | undefined {
    const tag = this.torchRelease(version)?.pypiDefault;
    return tag ? cudaFromTag(tag) : undefined;
  }

  /**
   * The CUDA majors of PyPI's Linux builds of every known torch release a specifier admits (`>=2.1,<2.11` → 12),
   * with the releases: what `pip install "torch>=2.1"` can get from PyPI alone. CPU-only PyPI releases (no
   * `pypiDefault`) count as a major of their own ('cpu').
   */
  pypiTorchMajors(specifier: string): {
    readonly majors: ReadonlySet<string>;
    readonly releases: readonly TorchRelease[];
  } {
    return this.cached('pypiTorchMajors', specifier, (spec) => {
      const releases = this.data.pytorch.releases.filter(
        (release) => release.confidence !== 'unverified' && safeSatisfies(release.version, spec),
      );
      const majors = new Set(
        releases.map((release) =>
          release.pypiDefault ? String(Number.parseInt(cudaFromTag(release.pypiDefault) ?? '', 10)) : 'cpu',
        ),
      );
      return { majors, releases };
    });
  }

  /** torchvision/torchaudio versions that belong to a torch release. */
  companions(
    version: string,
  ): { readonly torchvision: readonly string[]; readonly torchaudio: readonly string[] } | undefined {
    const release = this.torchRelease(version);
    return release ? { torchvision: release.torchvision, torchaudio: release.torchaudio } : undefined;
  }

  /** The torch releases a torchvision or torchaudio version belongs to. */
  torchForCompanion(pkg: 'torchvision' | 'torchaudio', version: string): readonly TorchRelease[] {
    const wanted = publicVersion(version);
    return this.cached(pkg === 'torchvision' ? 'torchForTorchvision' : 'torchForTorchaudio', wanted, () =>
      this.data.pytorch.releases.filter((release) => release[pkg].includes(wanted)),
    );
  }

  /**
   * Every known version of torch, torchvision or torchaudio, oldest first, with the newest of each minor: what a
   * version the knowledge base does not list is compared with (asked once per package of every unit).
   */
  releaseLine(pkg: 'torch' | 'torchvision' | 'torchaudio'): ReleaseLine {
    return this.cached('releaseLine', pkg, () => {
      const releases = this.data.pytorch.releases;
      const versions = [
        ...new Set(
          pkg === 'torch' ? releases.map((release) => release.version) : releases.flatMap((release) => release[pkg]),
        ),
      ].sort(compareDotted);
      const newestOfMinor = new Map<string, string>();
      for (const version of versions) newestOfMinor.set(minorOf(version), version);
      return { versions: new Set(versions), newest: versions.at(-1), newestOfMinor };
    });
  }

  /** Exact torch a package release was built against (xformers), or the triton a torch release pins. */
  companionPins(pkg: string): readonly CompanionPin[] {
    return this.data.companions.pins.filter((pin) => pin.package === pkg);
  }

  /**
   * The pin of one release of `pkg` (`vllm` 0.6.3 → torch 2.4.0), where the knowledge has it and the requirement's
   * `extras` bring it (`sglang[all]==0.5.2` → torch 2.8.0; `sglang==0.5.2` requires no torch).
   */
  companionPin(pkg: string, version: string, extras: readonly string[] = []): CompanionPin | undefined {
    return this.data.companions.pins.find(
      (pin) =>
        pin.package === pkg &&
        pin.version === version &&
        (pin.extras === undefined || pin.extras.some((extra) => extras.includes(extra))),
    );
  }

  /** The CUDA majors a release of `pkg` ships libraries for, where recorded (bitsandbytes). */
  cudaLibraries(pkg: string, version: string): schema.CudaLibraries | undefined {
    return this.data.companions.cudaLibraries.find(
      (row) => row.package === pkg && safeSatisfies(version, row.versions),
    );
  }

  /**
   * The releases of `pkg` that load a library for CUDA `minor` (`12.8`): `since` a release where every one since has
   * one (or loads the nearest of its major), else the newest range of `versions` that has one; undefined where none
   * has. bitsandbytes 0.45.3 added 12.8; 0.46 dropped 11.7, which 0.50 loads as its nearest, 11.8.
   */
  releasesLoadingLibrary(
    pkg: string,
    minor: string,
  ): { readonly since: string } | { readonly versions: string } | undefined {
    const rows = this.cudaLibraryRows(pkg);
    const major = Number.parseInt(minor, 10);
    const loads = (row: schema.CudaLibraries): boolean =>
      row.cudaMinors?.includes(minor) === true || (row.missingMinor === 'nearest' && row.cudaMajors.includes(major));
    let since = rows.length;
    while (since > 0 && loads(rows[since - 1]!)) since--;
    const from = since < rows.length ? /^>=\s*([^,\s]+)/.exec(rows[since]!.versions)?.[1] : undefined;
    if (from) return { since: from };
    const newest = [...rows].reverse().find(loads);
    return newest ? { versions: newest.versions } : undefined;
  }

  /** Every row of the CUDA majors `pkg`'s releases ship libraries for. */
  cudaLibraryRows(pkg: string): readonly schema.CudaLibraries[] {
    return this.data.companions.cudaLibraries.filter((row) => row.package === pkg);
  }

  /** Releases that ship a wheel for a CUDA version (`12.8`), oldest first. */
  torchReleasesWithCuda(cuda: string): readonly TorchRelease[] {
    const tag = tagFromCuda(cuda);
    return this.data.pytorch.releases.filter(
      (release) => release.variants.includes(tag) || release.pypiDefault === tag,
    );
  }

  /** The python3 of a distribution's release (`ubuntu`, `20.04` → `3.8`), where python.json has it. */
  distributionPython(os: string, osVersion: string): string | undefined {
    return this.data.python.osDefaults.find((row) => row.os === os && row.version === osVersion)?.python;
  }

  /** The CPython versions a current image plausibly runs where nothing says which (python.json `current`). */
  currentPythons(): readonly string[] {
    return this.data.python.current.versions;
  }

  /** Pythons past their end of life that images still run (python.json `stillRun`): one of unknown Python may. */
  pythonsStillRun(): readonly string[] {
    return this.data.python.stillRun.versions;
  }

  /**
   * The release `pip install "torch<specifier>"` takes from plain PyPI with Python `python`: the newest verified
   * release the specifier admits that supports that Python (pip skips releases whose Requires-Python excludes it).
   */
  newestTorchFor(specifier: string, python: string): TorchRelease | undefined {
    const supports = this.cached('torchForPython', python, (wanted) => {
      const releases = this.data.pytorch.releases;
      return new Set(releases.filter((release) => !release.python || safeSatisfies(wanted, release.python)));
    });
    const releases = this.pypiTorchMajors(specifier).releases;
    for (let i = releases.length - 1; i >= 0; i--) if (supports.has(releases[i]!)) return releases[i];
    return undefined;
  }

  /**
   * The torch release `pip install "torchvision<specifier>"` (or torchaudio) brings from plain PyPI with Python
   * `python` where nothing else pins torch: the companion's wheels pin their torch exactly, so pip takes the newest
   * companion the specifier admits and the torch it belongs to; the newest verified release that supports the Python
   * and has a companion version the specifier admits.
   */
  newestTorchForCompanion(
    name: 'torchvision' | 'torchaudio',
    specifier: string,
    python: string,
  ): TorchRelease | undefined {
    const releases = this.data.pytorch.releases;
    for (let i = releases.length - 1; i >= 0; i--) {
      const release = releases[i]!;
      if (release.confidence === 'unverified' || (release.python && !safeSatisfies(python, release.python))) continue;
      if (release[name].some((version) => !specifier || safeSatisfies(version, specifier))) return release;
    }
    return undefined;
  }

  /**
   * The torch release `pip install "vllm<specifier>"` (or sglang) brings from plain PyPI with Python `python` where
   * nothing else pins torch: each release pins one torch exactly (companions.json `pins`), so pip takes the newest
   * release the specifier admits whose torch has wheels for the Python, and that torch. Only recorded releases that
   * are verified count, so the newest recorded may be older than PyPI's newest: the pick is "today's" as far as known.
   */
  newestTorchForPinner(name: 'vllm' | 'sglang', specifier: string, python: string): TorchRelease | undefined {
    return this.cached('newestTorchForPinner', `${name}\0${specifier}\0${python}`, () =>
      this.computeNewestTorchForPinner(name, specifier, python),
    );
  }

  private computeNewestTorchForPinner(
    name: 'vllm' | 'sglang',
    specifier: string,
    python: string,
  ): TorchRelease | undefined {
    // Every SGLang release that pins torch requires Python 3.10 or later (python/pyproject.toml's requires-python;
    // those that admit 3.9 name torch only in extras): on 3.9 pip takes one that pins none.
    if (name === 'sglang' && safeSatisfies(python, '<3.10')) return undefined;
    let newest: { readonly version: string; readonly torch: TorchRelease } | undefined;
    for (const pin of this.data.companions.pins) {
      if (pin.package !== name || pin.extras !== undefined || pin.marker !== undefined) continue;
      if (pin.confidence === 'unverified' || (specifier && !safeSatisfies(pin.version, specifier))) continue;
      const torch = this.torchRelease(pin.torch);
      if (!torch || torch.confidence === 'unverified' || (torch.python && !safeSatisfies(python, torch.python)))
        continue;
      if (!newest || satisfiesPep440(pin.version, `>${newest.version}`) === true)
        newest = { version: pin.version, torch };
    }
    return newest?.torch;
  }

  /**
   * Whether a torch release ships wheels for a Python (`3.8`): by its supported-Python range, the Requires-Python of
   * its wheels; undefined where the knowledge base does not record the range.
   */
  torchSupportsPython(release: TorchRelease, python: string): boolean | undefined {
    return release.python ? safeSatisfies(python, release.python) : undefined;
  }

  /**
   * The newest verified torch release that ships a wheel of `tag` (`cu118`, `cpu`; its PyPI build counts) for every
   * one of `pythons`: what a pin that has no wheel for the Python at hand can move to.
   */
  newestTorchForPythons(tag: string, pythons: readonly string[]): TorchRelease | undefined {
    const releases = this.data.pytorch.releases;
    for (let i = releases.length - 1; i >= 0; i--) {
      const release = releases[i]!;
      if (isUnverified(release) || !this.torchBuilds(release).has(tag)) continue;
      if (pythons.every((python) => this.torchSupportsPython(release, python) === true)) return release;
    }
    return undefined;
  }

  /** Compiled GPU architectures of a torch build, where published. */
  compiledArchs(version: string, variant: string): ArchBuild | undefined {
    const release = publicVersion(version);
    return this.cached('compiledArchs', `${release} ${variant}`, () =>
      this.data.archs.builds.find((build) => build.variants.includes(variant) && safeSatisfies(release, build.torch)),
    );
  }

  condaPytorchCudaVersions(): readonly string[] {
    return this.data.conda.pytorchCuda.versions;
  }

  /** The pytorch-cuda metapackage's record (its versions and source). */
  condaPytorchCuda(): Conda['pytorchCuda'] {
    return this.data.conda.pytorchCuda;
  }

  /** The pytorch conda channel: its last release and the source that says it ended. */
  pytorchChannel(): Conda['pytorchChannel'] {
    return this.data.conda.pytorchChannel;
  }

  /** The last CUDA major the conda `cudatoolkit` package exists for. */
  condaCudatoolkit(): Conda['cudatoolkit'] {
    return this.data.conda.cudatoolkit;
  }

  /** NVIDIA's support policy for nvidia/cuda images (end of life, deletion). */
  nvidiaCudaSupportPolicy(): Images['nvidiaCuda']['supportPolicy'] {
    return this.data.images.nvidiaCuda.supportPolicy;
  }

  // ------------------------------------------------------------------ GPUs

  /** Look up a GPU by model name (`H100`, `NVIDIA A100-SXM4-80GB`) or compute capability (`8.0`). */
  gpu(nameOrCc: string): GpuInfo | undefined {
    return this.cached('gpu', nameOrCc, this.computeGpu);
  }

  private computeGpu(nameOrCc: string): GpuInfo | undefined {
    const trimmed = nameOrCc.trim();
    if (/^\d+\.\d+$/.test(trimmed)) {
      const record = this.data.gpus.computeCapabilities.find((row) => row.cc === trimmed);
      return record
        ? {
            name: `compute capability ${trimmed}`,
            cc: trimmed,
            minCuda: record.minCuda,
            runsFrom: this.runsFrom(trimmed, record.minCuda),
            ...(record.lastCudaMajor ? { lastCudaMajor: record.lastCudaMajor } : {}),
            record,
          }
        : undefined;
    }
    const wanted = normalizeGpuName(trimmed);
    let best: { gpu: Gpu; name: string; length: number } | undefined;
    for (const gpu of this.data.gpus.gpus) {
      for (const name of gpu.names) {
        const normalized = normalizeGpuName(name);
        if (gpuNameMatches(wanted, normalized) && (!best || normalized.length > best.length))
          best = { gpu, name, length: normalized.length };
      }
    }
    if (!best) return undefined;
    const { gpu } = best;
    return {
      name: best.name,
      cc: gpu.cc,
      minCuda: gpu.minCuda,
      runsFrom: this.runsFrom(gpu.cc, gpu.minCuda),
      ...(gpu.minDriver ? { minDriver: gpu.minDriver } : {}),
      ...(gpu.lastCudaMajor ? { lastCudaMajor: gpu.lastCudaMajor } : {}),
      ...(gpu.classes?.[best.name] ? { class: gpu.classes[best.name] } : {}),
      record: gpu,
    };
  }

  /**
   * The first CUDA whose code runs on compute capability `cc`: the earliest that compiles for it or for an earlier
   * minor of its major ("a cubin object generated for compute capability X.y will only execute on devices of compute
   * capability X.z where z≥y": CUDA C++ Programming Guide, Binary Compatibility; NVIDIA's Ada compatibility guide: an
   * 8.6 cubin runs on 8.9).
   */
  private runsFrom(cc: string, minCuda: string): string {
    const [major, minor] = cc.split('.').map(Number);
    let first = minCuda;
    for (const row of this.data.gpus.computeCapabilities) {
      const [rowMajor, rowMinor] = row.cc.split('.').map(Number);
      if (rowMajor === major && rowMinor! <= minor! && compareDotted(row.minCuda, first) < 0) first = row.minCuda;
    }
    return first;
  }

  /** Every compute capability of the table, with the CUDA that first compiles it and the last major that does. */
  computeCapabilities(): readonly ComputeCapability[] {
    return this.data.gpus.computeCapabilities;
  }

  minCudaForGpu(nameOrCc: string): string | undefined {
    return this.gpu(nameOrCc)?.minCuda;
  }

  // ------------------------------------------------------------------ images

  isNvidiaCuda(registry: string | undefined, repository: string): boolean {
    const full = registry ? `${registry}/${repository}` : repository;
    return this.data.images.nvidiaCuda.repositories.includes(full);
  }

  /** Parse an nvidia/cuda tag: `12.4.1-cudnn-devel-ubuntu22.04`. */
  nvidiaCudaTag(tag: string): NvidiaCudaTag | undefined {
    return this.cached('nvidiaCudaTag', tag, this.computeNvidiaCudaTag);
  }

  private computeNvidiaCudaTag(tag: string): NvidiaCudaTag | undefined {
    const match = /^(\d+\.\d+(?:\.\d+)?)(?:-(cudnn\d*))?(?:-(base|runtime|devel))?(?:-([a-z]+)(\d+(?:\.\d+)?))?$/.exec(
      tag,
    );
    if (!match) return undefined;
    const version = match[1]!;
    return {
      version,
      ...(match[2] ? { cudnn: match[2] } : {}),
      ...(match[3] ? { flavour: match[3] } : {}),
      ...(match[4] ? { os: match[4], osVersion: match[5]! } : {}),
      versionRange: [0, version.length],
    };
  }

  /** The cuDNN spelling nvidia/cuda uses for a CUDA version (`cudnn8`, `cudnn9`, `cudnn`). */
  cudnnSpelling(cuda: string): { readonly spelling: string; readonly record: Sourced } | undefined {
    return this.cached('cudnnSpelling', cuda, this.computeCudnnSpelling);
  }

  private computeCudnnSpelling(cuda: string): { readonly spelling: string; readonly record: Sourced } | undefined {
    const row = this.data.images.nvidiaCuda.cudnnSpellings.find(
      (era) => compareDotted(cuda, era.from) >= 0 && (!era.through || compareDotted(cuda, era.through) <= 0),
    );
    return row ? { spelling: row.spelling, record: row } : undefined;
  }

  /** Whether a cuDNN devel tag for this version was seen on Docker Hub (positive evidence only). */
  cudnnDevelTagSeen(version: string): boolean {
    return Object.values(this.data.images.nvidiaCuda.cudnnDevelTagsSeen.versions).some((versions) =>
      versions.includes(version),
    );
  }

  /** The CUDA versions whose cuDNN devel tags were seen on Docker Hub, cuDNN generation by generation. */
  cudnnDevelVersionsSeen(): readonly string[] {
    return Object.values(this.data.images.nvidiaCuda.cudnnDevelTagsSeen.versions).flat();
  }

  /** NVIDIA deleted this nvidia/cuda version's tags under its end-of-life policy. */
  /**
   * The OS row of nvidia/cuda for `os` + `osVersion` (ubuntu, 22.04), and whether CUDA `version` (X.Y.Z) is
   * inside the range NVIDIA published that OS for; undefined when no row names the OS.
   */
  nvidiaCudaOs(
    os: string,
    osVersion: string,
    version: string,
  ): { readonly row: OsSuffix; readonly published: boolean } | undefined {
    const row = this.data.images.nvidiaCuda.osSuffixes.find(
      (candidate) => candidate.os === os && (candidate.versions.length === 0 || candidate.versions.includes(osVersion)),
    );
    if (!row) return undefined;
    const published =
      !(row.from && compareDotted(version, row.from) < 0) && !(row.through && compareDotted(version, row.through) > 0);
    return { row, published };
  }

  /**
   * The newest verified CUDA release NVIDIA publishes for a distribution (of one major, where given): what its
   * `cuda-toolkit` meta-package installs from NVIDIA's repository. A distribution's range is the one its nvidia/cuda
   * images have (they install from that repository); an unknown one is not limited.
   */
  newestCudaFor(os: string | undefined, osVersion: string | undefined, major?: string): CudaRelease | undefined {
    const releases = this.data.drivers.releases.filter(
      (release) =>
        release.confidence !== 'unverified' &&
        release.linux !== undefined &&
        (major === undefined || release.version.split('.')[0] === major) &&
        (!os || !osVersion || this.nvidiaCudaOs(os, osVersion, release.version)?.published !== false),
    );
    return releases.at(-1);
  }

  /**
   * The NVIDIA_REQUIRE_CUDA an nvidia/cuda image of `version` carries (amd64), as NVIDIA's Dockerfiles write it;
   * undefined for a version not recorded.
   */
  nvidiaCudaRequire(version: string): { readonly value: string; readonly record: Sourced } | undefined {
    const table = this.data.images.nvidiaCuda.requireCuda;
    const row = table.rows.find((candidate) => candidate.versions.includes(version));
    if (!row) return undefined;
    const terms = row.branches.flatMap((branch) =>
      row.brands.map((brand) => `brand=${brand},driver>=${branch},driver<${branch + 1}`),
    );
    return { value: [`cuda>=${minorOf(version)}`, ...terms].join(' '), record: table };
  }

  /**
   * The CUDA version a driver reports (nvidia-smi's "CUDA Version", NVML's nvmlSystemGetCudaDriverVersion): the newest
   * CUDA whose first release's Table 3 minimum it meets (535.183.01 → 12.2, 550.54.14 → 12.4, 580.65.06 → 13.0).
   */
  driverCuda(driver: string): string | undefined {
    let found: string | undefined;
    for (const release of this.data.drivers.releases)
      if (release.linux && /\.0$/.test(release.version) && compareDotted(driver, release.linux) >= 0)
        found = minorOf(release.version);
    return found;
  }

  /** A CUDA release NVIDIA published no nvidia/cuda image for (11.0.1, 11.4.4). */
  nvidiaCudaWithoutTags(version: string): Sourced | undefined {
    const row = this.data.images.nvidiaCuda.releasesWithoutTags;
    return row.versions.includes(version) ? row : undefined;
  }

  nvidiaCudaTagDeleted(version: string): Sourced | undefined {
    const deleted = this.data.images.nvidiaCuda.deletedTags;
    const major = Number.parseInt(version, 10);
    return deleted.versions.includes(version) || deleted.majors.includes(major) ? deleted : undefined;
  }

  /** `2.3.0-cuda12.1-cudnn8-runtime` → torch 2.3.0, CUDA 12.1. */
  pytorchImageTag(tag: string): PytorchImageTag | undefined {
    const match = /^(\d+\.\d+\.\d+)-cuda(\d+\.\d+)-cudnn(\d+)-(runtime|devel)$/.exec(tag);
    if (!match) return undefined;
    const start = match[1]!.length + '-cuda'.length;
    return {
      torch: match[1]!,
      cuda: match[2]!,
      cudnn: match[3]!,
      flavour: match[4]!,
      cudaRange: [start, start + match[2]!.length],
    };
  }

  ngcPytorch(tag: string): NgcPytorch | undefined {
    return this.data.images.ngcPytorch.find((row) => row.tag === tag);
  }

  /**
   * The driver branch an NGC container of CUDA `major` may run on through the cuda-compat package it ships, as its
   * release notes say ("you can use NVIDIA driver release 470.57 (or later R470), … on a data center GPU"), for one
   * branch: from the tag's own row where it states them, else from the rows of the same month's containers of that
   * CUDA major (NVIDIA builds one month's framework containers on one CUDA base, and their notes say the same of
   * drivers), else, for a month no row has, where the nearest months before and after it both state the branch
   * (their notes said "470.57 (or later R470)" from 21.11 to 26.04 without a gap). Never for CUDA 13 and later: those
   * notes repeat the CUDA 12 paragraph (25.10's "based on CUDA 13.0.2 which requires NVIDIA Driver release 575", "not
   * forward-compatible with CUDA 12.6"), so the forward-compatibility table is NVIDIA's word there.
   */
  ngcDataCenterDriver(
    repository: string,
    tag: string,
    major: number,
    branch: number,
  ): { readonly minimum: string; readonly row: NgcImage } | undefined {
    const month = ngcMonth(tag);
    if (!month || major >= 13) return undefined;
    const own = this.ngcImage(repository, tag);
    if (own?.dataCenterDrivers) return statedBranch(own, branch);
    const months = this.cached('ngcMonths', String(major), () =>
      [
        ...groupBy(this.data.images.ngc, (row) =>
          row.dataCenterDrivers && row.cuda && cudaMajorOf(row.cuda) === major ? ngcMonth(row.tag) : undefined,
        ),
      ].sort(([a], [b]) => a.localeCompare(b)),
    );
    const stated = (rows: readonly NgcImage[]) =>
      rows.map((row) => statedBranch(row, branch)).find((found) => found !== undefined);
    const after = months.findIndex(([at]) => at >= month);
    if (after >= 0 && months[after]![0] === month) return stated(months[after]![1]);
    if (after <= 0) return undefined;
    const [before, next] = [stated(months[after - 1]![1]), stated(months[after]![1])];
    if (!before || !next) return undefined;
    return compareDotted(before.minimum, next.minimum) >= 0 ? before : next;
  }

  /** An NGC container tag's row (`nvidia/tritonserver`, `23.05-py3`), for repositories other than PyTorch's rows. */
  ngcImage(repository: string, tag: string): NgcImage | undefined {
    return this.cached('ngcImage', `${repository}:${tag}`, () =>
      this.data.images.ngc.find((row) => row.repository === repository && row.tag === tag),
    );
  }

  /**
   * This knowledge with what a check read of its images from their registries: each image's own config. Answers
   * that do not depend on lookups are computed afresh (the tables are per instance).
   */
  withImages(images: ImageLookups): KnowledgeBase {
    return Object.keys(images).length === 0 ? this : new KnowledgeBase(this.data, images);
  }

  /** What the registry said of an image in this check (undefined: not looked up). */
  imageLookup(image: ImageRef): ImageLookup | undefined {
    return this.images[imageKey(image)];
  }

  /** Every known tag of an NGC repository (its PyTorch rows included), for the nearest tags of one that is not. */
  ngcTags(repository: string): readonly string[] {
    return this.cached('ngcTags', repository, () => [
      ...(repository === 'nvidia/pytorch' ? this.data.images.ngcPytorch.map((row) => row.tag) : []),
      ...this.data.images.ngc.filter((row) => row.repository === repository).map((row) => row.tag),
    ]);
  }

  /**
   * The newest NGC tag of `repository` with the same variant as `tag` (`-py3`, `-trtllm-python-py3`; cuda-dl-base's
   * `-cudaX.Y-devel-ubuntu24.04` with the CUDA in it) whose CUDA is `cuda` (a minor, or a full release): verified
   * rows first. For moving an NGC base to another CUDA.
   */
  /**
   * The tags of an NGC container and variant (`-py3`) nearest to a CUDA release, one below and one above it, for a
   * plan that has no tag of that CUDA to offer: what is nearest, said, never written.
   */
  ngcNearestTags(
    repository: string,
    tag: string,
    cuda: string,
  ): readonly { readonly tag: string; readonly cuda: string }[] {
    const monthly = /^\d{2}\.\d{2}(?=-)/.exec(tag);
    if (!monthly) return [];
    const variant = tag.slice(monthly[0].length);
    const rows = [
      ...(repository === 'nvidia/pytorch' ? this.data.images.ngcPytorch : []),
      ...this.data.images.ngc.filter((row) => row.repository === repository),
    ].filter((row): row is typeof row & { cuda: string } => row.tag.slice(5) === variant && row.cuda !== undefined);
    const below = rows
      .filter((row) => compareDotted(row.cuda, cuda) < 0)
      .sort((a, b) => compareDotted(b.cuda, a.cuda) || b.tag.localeCompare(a.tag))[0];
    const above = rows
      .filter((row) => compareDotted(row.cuda, cuda) > 0)
      .sort((a, b) => compareDotted(a.cuda, b.cuda) || a.tag.localeCompare(b.tag))[0];
    return [below, above].flatMap((row) => (row ? [{ tag: row.tag, cuda: row.cuda }] : []));
  }

  ngcTagFor(
    repository: string,
    tag: string,
    cuda: string,
  ): { readonly tag: string; readonly record: Sourced } | undefined {
    const monthly = /^\d{2}\.\d{2}(?=-)/.exec(tag);
    if (!monthly) return undefined;
    const variant = tag.slice(monthly[0].length);
    const minor = cuda.split('.').slice(0, 2).join('.');
    const wantedVariant = variant.replace(/-cuda\d+\.\d+(?=-|$)/, `-cuda${minor}`);
    const rows: { tag: string; cuda?: string; record: Sourced }[] = [
      ...(repository === 'nvidia/pytorch'
        ? this.data.images.ngcPytorch.map((row) => ({ tag: row.tag, cuda: row.cuda, record: row }))
        : []),
      ...this.data.images.ngc
        .filter((row) => row.repository === repository)
        .map((row) => ({ tag: row.tag, cuda: row.cuda, record: row })),
    ];
    const matching = rows.filter(
      (row) =>
        row.tag.slice(5) === wantedVariant &&
        row.cuda !== undefined &&
        (row.cuda === cuda || row.cuda.startsWith(`${cuda}.`) || (cuda === minor && minorOf(row.cuda) === minor)),
    );
    const best = [...matching].sort(
      (a, b) => Number(isUnverified(a.record)) - Number(isUnverified(b.record)) || b.tag.localeCompare(a.tag),
    )[0];
    return best ? { tag: best.tag, record: best.record } : undefined;
  }

  /**
   * Whether an NGC tag's CUDA major is at least `major` for certain: a verified row of the same container and variant,
   * from the same month or before, is already on that major (NGC's CUDA never goes back a major within a variant
   * across months). Lets a failure below the major's driver floor stand on an unverified row.
   */
  ngcMajorAtLeast(repository: string, tag: string, major: number): boolean {
    const monthly = /^(\d{2})\.(\d{2})(?=-|$)/.exec(tag);
    if (!monthly) return false;
    const variant = tag.slice(monthly[0].length);
    const rows: { tag: string; cuda?: string; record: Sourced }[] = [
      ...(repository === 'nvidia/pytorch'
        ? this.data.images.ngcPytorch.map((row) => ({ tag: row.tag, cuda: row.cuda, record: row }))
        : []),
      ...this.data.images.ngc.filter((row) => row.repository === repository).map((row) => ({ ...row, record: row })),
    ];
    return rows.some(
      (row) =>
        !isUnverified(row.record) &&
        row.cuda !== undefined &&
        row.tag.slice(5) === variant &&
        row.tag.slice(0, 5) <= monthly[0] &&
        Number(row.cuda.split('.')[0]) >= major,
    );
  }

  /**
   * A vendor image's CUDA (vLLM, SGLang, text-generation-inference, Ray): the row for its tag (a per-architecture tag,
   * `v0.10.1-x86_64`, as its multi-architecture tag), else a `-cuXY` part of the tag where the image's tags name
   * their CUDA that way. `precision` says whether the patch is known.
   */
  vendorImage(name: string, tag: string): VendorCuda | undefined {
    return this.cached('vendorImage', `${name}:${tag}`, () => {
      const groups = this.data.images.vendor.filter((group) => group.name === name);
      for (const wanted of [tag, tag.replace(/-(?:x86_64|aarch64|amd64|arm64)(?=-|$)/, '')]) {
        const group = groups.find((candidate) => Object.hasOwn(candidate.tags, wanted));
        if (group) return { cuda: group.tags[wanted]!, record: group };
      }
      for (const record of this.data.images.tagPatterns) {
        const named =
          record.namePattern === undefined
            ? record.name === name
              ? []
              : undefined
            : this.match(record.namePattern, name);
        const tagged = named && this.match(record.pattern, tag);
        if (!tagged) continue;
        // `cu1281` → 12, 8, 1 (a leading zero dropped); `cuda11.8.0` → 11.8.0.
        const parts = [...named, ...tagged].map((group) => (/^\d+$/.test(group) ? String(Number(group)) : group));
        if (parts.length) return { cuda: parts.join('.'), record };
      }
      const grammar = this.data.images.cudaTagSuffix.find((record) => record.names.includes(name));
      if (!grammar) return undefined;
      // cu118 → 11.8, cu121 → 12.1, cu92 → 9.2: the last digit is the minor.
      const digits = /(?:^|-)cu(\d{2,3})(?:-|$)/.exec(tag)?.[1];
      if (digits) return { cuda: `${Number(digits.slice(0, -1))}.${digits.slice(-1)}`, record: grammar };
      return gpuAliasOf(grammar.gpuAlias, name, tag);
    });
  }

  /**
   * The record that says an image's tag is its CPU image, with no CUDA: a tag of a `cpuByDefault` name with `-cpu`, or
   * with no platform part at all (`rayproject/ray:2.46.0`, `2.46.0-py311`; not `-gpu` or `-cu124`).
   */
  cpuImage(name: string, tag: string): Sourced | undefined {
    const record = this.data.images.cpuByDefault.find((row) => row.names.includes(name));
    if (!record) return undefined;
    return tag.split('-').some((part) => part === 'gpu' || /^cu\d+$/.test(part)) ? undefined : record;
  }

  /** The record that says an image is one of Red Hat's Python images on UBI or RHEL (which ship no CUDA), if it is. */
  redHatPythonImage(name: string): Sourced | undefined {
    const record = this.data.images.redHatPythonImages;
    return this.cached('redHatPythonImage', name, () => (new RegExp(record.pattern).test(name) ? record : undefined));
  }

  /** The record that says an image is for another vendor's accelerators (Ascend, Gaudi, Neuron, Intel), if it is. */
  acceleratorImage(name: string): (Sourced & { readonly vendor: string }) | undefined {
    return this.cached('acceleratorImage', name, () =>
      this.data.images.acceleratorImages.find((record) => new RegExp(record.pattern).test(name)),
    );
  }

  /** The record that says an image is for NVIDIA's Jetson boards (L4T), if it is. */
  jetsonImage(name: string): Sourced | undefined {
    const record = this.data.images.jetsonImages;
    return this.cached('jetsonImage', name, () => (new RegExp(record.pattern).test(name) ? record : undefined));
  }

  /** The record that says an image is a minimal OS image outside Docker Hub (UBI, distroless: no CUDA), if it is. */
  osImage(name: string): Sourced | undefined {
    const record = this.data.images.osImages;
    return this.cached('osImage', name, () => (new RegExp(record.pattern).test(name) ? record : undefined));
  }

  /**
   * The record that says an image is one of NVIDIA's GPU management tools, which need only the driver (NVML) and turn
   * off the container toolkit's CUDA requirement, if it is.
   */
  driverToolImage(name: string): Sourced | undefined {
    const record = this.data.images.driverToolImages;
    return this.cached('driverToolImage', name, () => (new RegExp(record.pattern).test(name) ? record : undefined));
  }

  /**
   * The Python packages a vendor's image ships of versions the knowledge does not record (torch; vllm or sglang where
   * the image or its tag has them): pip keeps them for a requirement that admits them.
   */
  shippedPackages(name: string, tag: string): ReadonlySet<string> {
    return this.cached('shippedPackages', `${name}:${tag}`, () => {
      const ships = new Set<string>();
      for (const row of this.data.images.torchImages.images)
        if (new RegExp(row.pattern).test(name) && (row.tag === undefined || new RegExp(row.tag).test(tag)))
          for (const pkg of row.ships) ships.add(pkg);
      return ships;
    });
  }

  /**
   * The version of a package a vendor's image ships that its tag names (vllm/vllm-openai:v0.10.2: vllm 0.10.2), if
   * the knowledge says the tag names it.
   */
  shippedVersion(name: string, tag: string, pkg: string): string | undefined {
    return this.cached('shippedVersion', `${name}:${tag}:${pkg}`, () => {
      for (const row of this.data.images.torchImages.images) {
        const expression = row.versions?.[pkg];
        if (!expression || !new RegExp(row.pattern).test(name)) continue;
        const version = new RegExp(expression).exec(tag)?.[1];
        if (version) return version;
      }
      return undefined;
    });
  }

  /** The record that says a Docker Hub name is a Docker Official Image (which ships no CUDA), if it is one. */
  officialImage(registry: string | undefined, repository: string): Sourced | undefined {
    const official = this.data.images.officialImages;
    return !registry && official.names.includes(repository) ? official : undefined;
  }

  /**
   * A package-manager image (pixi, micromamba, miniforge, miniconda): the CUDA of an nvidia/cuda-based variant, which
   * its tag names (`noble-cuda-12.6.3`), or `none` where the tag names none (the image ships no CUDA).
   */
  toolImage(name: string, tag: string): { readonly cuda: string | 'none'; readonly record: Sourced } | undefined {
    const record = this.data.images.toolImages.images.find((row) => row.name === name);
    if (!record) return undefined;
    const cuda = /(?:^|-)cuda-(\d+\.\d+(?:\.\d+)?)(?:-|$)/.exec(tag)?.[1];
    return { cuda: cuda ?? 'none', record };
  }

  // ------------------------------------------------------------------ other GPU stacks

  /**
   * The CUDA major of a package's build that its name does not say: the row for this exact version (and, for rows
   * about an extra, one of the package's extras). Undefined when no row covers it.
   */
  gpuStackBuild(name: string, version: string, extras: readonly string[]): GpuStackBuild | undefined {
    return this.data.gpuStacks.builds.find(
      (row) =>
        row.package === name &&
        (row.extra === undefined ? true : extras.includes(row.extra)) &&
        safeSatisfies(publicVersion(version), row.versions),
    );
  }

  /** Whether a package has rows that depend on an extra (so a row without the extra must not apply). */
  gpuStackNeedsExtra(name: string): boolean {
    return this.data.gpuStacks.builds.some((row) => row.package === name && row.extra !== undefined);
  }

  // ------------------------------------------------------------------ TensorFlow

  /** Tested configuration of a TensorFlow release (patch releases share their minor's row). */
  tensorflow(version: string): TensorflowRelease | undefined {
    return this.cached('tensorflow', version, this.computeTensorflow);
  }

  private computeTensorflow(version: string): TensorflowRelease | undefined {
    const wanted = publicVersion(version);
    const exact = this.data.tensorflow.releases.find((row) => row.version === wanted);
    return exact ?? this.data.tensorflow.releases.find((row) => minorOf(row.version) === minorOf(wanted));
  }
}

function cudaMajorOf(version: string): number {
  return Number.parseInt(version, 10);
}

function safeSatisfies(version: string, range: string): boolean {
  return satisfiesPep440(version, range) ?? false;
}

/** Upper case, vendor words dropped, separators collapsed to one space. */
function normalizeGpuName(name: string): string {
  return name
    .toUpperCase()
    .replace(/\b(NVIDIA|TESLA|GEFORCE|QUADRO)\b/g, ' ')
    .replace(/[\s_-]+/g, ' ')
    .trim();
}

/** `H100 80GB HBM3` and `A100-SXM4-80GB` match H100/A100; `A100` does not match `A10`; `RTX4090` matches `RTX 4090`. */
function gpuNameMatches(wanted: string, name: string): boolean {
  if (wanted === name || wanted.startsWith(`${name} `)) return true;
  const compactWanted = wanted.replace(/ /g, '');
  const compactName = name.replace(/ /g, '');
  if (compactWanted === compactName) return true;
  // A longer name of the same GPU (`H100 SXM`, RunPod's `RTXPRO6000-WK`), compared without spaces; not a single
  // letter more, which names another GPU (`V100S`, `A100X`).
  const rest = compactWanted.slice(compactName.length);
  return compactWanted.startsWith(compactName) && /^[A-Z]/.test(rest) && !/^[A-Z](?![A-Za-z])/.test(rest);
}

/** What a vendor image's tag says of its CUDA, and the record that says it. */
export interface VendorCuda {
  /** `12.9.1`, or `12.1` where only the tag's `-cu121` says it. */
  readonly cuda: string;
  readonly record: Sourced;
}

/**
 * The CUDA a `-gpu` tag aliases (`rayproject/ray:2.9.0-py310-gpu` → the release 2.9.0's -cu118), and for a `bare`
 * name a tag with no platform part (`rayproject/ray-ml:2.9.0`); undefined where the tag names no release
 * (`latest-gpu`, `nightly-gpu`) or no range covers it.
 */
function gpuAliasOf(
  alias: Images['cudaTagSuffix'][number]['gpuAlias'],
  name: string,
  tag: string,
): VendorCuda | undefined {
  if (!alias?.names.includes(name)) return undefined;
  const [release, ...platform] = tag.split('-');
  if (!release || !/^\d+\.\d+\.\d+$/.test(release)) return undefined;
  const gpu =
    platform.includes('gpu') ||
    (alias.bare.includes(name) && !platform.some((part) => /^(?:cpu|cu\d+|gpu)$/.test(part)));
  if (!gpu) return undefined;
  const row = alias.releases.find((candidate) => satisfiesPep440(release, candidate.versions) === true);
  return row ? { cuda: row.cuda, record: row } : undefined;
}

/** A one-line citation for help texts: the first source, plus "unverified" where that applies. */
export function cite(record: Sourced): string {
  const first = record.source[0] ?? 'knowledge base';
  return `${first} (retrieved ${record.retrieved}${record.confidence === 'unverified' ? '; unverified' : ''})`;
}

export function isUnverified(record: Sourced | undefined): boolean {
  return record?.confidence === 'unverified';
}

let shared: KnowledgeBase | undefined;
/** The bundled knowledge base, validated once per process. */
export function defaultKnowledgeBase(): KnowledgeBase {
  shared ??= new KnowledgeBase();
  return shared;
}

/**
 * The newest update of a CUDA minor that has nvidia/cuda tags: NVIDIA does not publish images for every toolkit
 * update (11.4.4 has none; 11.4.3 is the last), so the tags seen on Docker Hub come first, then the release table.
 */
export function latestImagePatch(kb: KnowledgeBase, minor: string): string | undefined {
  return kb.memoized(`latestImagePatch:${minor}`, () => {
    const seen = kb
      .cudnnDevelVersionsSeen()
      .filter((version) => minorOf(version) === minor)
      .sort(compareDotted);
    return seen.at(-1) ?? latestCudaPatch(kb, minor);
  });
}

/**
 * The newest nvidia/cuda image update of a CUDA major.minor published for an OS (`12.1` on ubuntu18.04 → 12.1.0, as
 * that OS ends there), or undefined where none is; without an OS, latestImagePatch.
 */
export function imagePatchFor(
  kb: KnowledgeBase,
  minor: string,
  os: string | undefined,
  osVersion: string | undefined,
): string | undefined {
  const newest = latestImagePatch(kb, minor);
  if (!os || !osVersion || !newest || kb.nvidiaCudaOs(os, osVersion, newest)?.published !== false) return newest;
  const updates = [
    ...new Set([
      ...kb.cudnnDevelVersionsSeen().filter((version) => minorOf(version) === minor),
      ...kb
        .cudaReleases()
        .filter((row) => row.linux && minorOf(row.version) === minor)
        .map((row) => row.version),
    ]),
  ].sort((a, b) => compareDotted(b, a));
  return updates.find((version) => kb.nvidiaCudaOs(os, osVersion, version)?.published !== false);
}

/** The newest update of a CUDA major.minor (`12.4` → 12.4.1), verified rows preferred. */
export function latestCudaPatch(kb: KnowledgeBase, minor: string): string | undefined {
  return kb.memoized(`latestPatch:${minor}`, () => computeLatestCudaPatch(kb, minor));
}

function computeLatestCudaPatch(kb: KnowledgeBase, minor: string): string | undefined {
  const rows = kb.cudaReleases().filter((row) => row.linux && minorOf(row.version) === minor);
  const verified = rows.filter((row) => row.confidence !== 'unverified');
  return (verified.at(-1) ?? rows.at(-1))?.version;
}

/**
 * The wheel tags a torch release ships: its download.pytorch.org variants, then the PyPI build if that is another one.
 */
export function torchBuildTags(release: TorchRelease): string[] {
  return [...new Set([...release.variants, ...(release.pypiDefault ? [release.pypiDefault] : [])])];
}

/**
 * Can code compiled for these SASS/PTX targets run on compute capability `cc`? SASS runs on the same major at an
 * equal or higher minor; an architecture-specific target (`9.0a`, sm_90a) only on its own capability, a
 * family-specific one (`10.0f`) on its family's (the same major, an equal or higher minor). PTX runs on any equal or
 * newer GPU, an `a` target's on its own capability only, an `f` target's on its family (PTX ISA, "Target
 * architectures with suffix a … cannot be run on later generation devices"; NVIDIA's blog, "Blackwell and CUDA 12.9
 * introduce family-specific architecture features").
 */
export function runsOn(cc: string, sass: readonly string[], ptx: readonly string[]): boolean {
  const [major, minor] = cc.split('.').map(Number) as [number, number];
  const reaches = (arch: string, forward: boolean): boolean => {
    const match = /^(\d+)\.(\d+)([af]?)$/i.exec(arch);
    if (!match) return false;
    const [m, n, suffix] = [Number(match[1]), Number(match[2]), match[3]!.toLowerCase()];
    if (suffix === 'a') return m === major && n === minor;
    if (suffix === 'f' || !forward) return m === major && n <= minor;
    return m < major || (m === major && n <= minor);
  };
  return sass.some((arch) => reaches(arch, false)) || ptx.some((arch) => reaches(arch, true));
}
