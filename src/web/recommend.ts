/**
 * Self-service recommendations: for a GPU, framework version, Python, OS and fleet driver, which CUDA builds
 * work, which driver they need, an exact nvidia/cuda base image, and copyable install commands, each backed by
 * the knowledge base's sources. Pure; the web page and its JSON API render it.
 */
import { satisfies } from '@renovatebot/pep440';
import type { Baseline, Pool } from '../baseline/schema.js';
import { readPastedFleet } from '../fleet/paste.js';

import {
  cite,
  latestImagePatch,
  runsOn,
  torchBuildTags,
  type GpuInfo,
  type KnowledgeBase,
  type TorchRelease,
} from '../knowledge/index.js';
import { cudaFromTag, cudaMajor, minorOf } from '../knowledge/versions.js';
import { compareDotted } from '../util/dotted.js';
import { ownValue } from '../util/collections.js';

export interface RecommendInput {
  readonly gpu?: string;
  readonly framework: 'pytorch' | 'tensorflow';
  readonly version?: string;
  readonly python?: string;
  readonly os?: string;
  readonly driver?: string;
  /** Pools or a node as pasted (readPastedFleet): the answer says which of them its install runs on. */
  readonly fleet?: string;
}

/** Whether one pool runs the recommended install, and why not. */
export interface PoolAnswer {
  readonly name: string;
  readonly driver: string;
  readonly verdict: 'runs' | 'minor' | 'fails';
  readonly reason?: string;
}

export interface CudaOption {
  readonly cuda: string;
  readonly tag?: string;
  readonly works: boolean;
  readonly reasons: readonly string[];
  readonly driverFull?: string;
  readonly driverFloor?: string;
  readonly pypi?: boolean;
}

export interface Install {
  readonly cuda: string;
  readonly image: string;
  readonly pip: string;
  /** The same install as a requirements file (`pip install -r requirements.txt`). */
  readonly requirements: string;
  readonly conda?: string;
  readonly condaNote?: string;
  readonly dockerfile: string;
  readonly driverFull: string;
  readonly driverFloor: string;
}

export interface Recommendation {
  readonly input: RecommendInput;
  readonly problems: readonly string[];
  readonly notes: readonly string[];
  readonly gpu?: { readonly name: string; readonly cc: string; readonly minCuda: string };
  readonly version?: string;
  readonly options: readonly CudaOption[];
  readonly install?: Install;
  readonly sources: readonly string[];
  /** With pools (pasted, or the baseline's fleet): which of them run the install. */
  readonly pools?: readonly PoolAnswer[];
}

export const OS_CHOICES = ['ubuntu22.04', 'ubuntu24.04', 'ubuntu20.04', 'rockylinux9', 'ubi9'] as const;
export const PYTHON_CHOICES = ['3.9', '3.10', '3.11', '3.12', '3.13', '3.14'] as const;

/**
 * What to install. With a baseline, the answer keeps to it: only the CUDA versions and torch releases it allows,
 * and its fleet driver where the input names none, so the Dockerfile and requirements it gives pass `check` with it.
 */
export function recommend(kb: KnowledgeBase, input: RecommendInput, baseline?: Baseline): Recommendation {
  const pasted = input.fleet ? readPastedFleet(input.fleet, kb) : undefined;
  const pools = pasted?.pools.length ? pasted.pools : (baseline?.pools ?? []);
  let policy = baseline
    ? {
        ...input,
        ...(input.driver === undefined && baseline.driver.minimum ? { driver: baseline.driver.minimum } : {}),
      }
    : input;
  if (pools.length > 0 && policy.driver === undefined) {
    // An install for the whole fleet: judged on its oldest driver (and, without a GPU named, a GPU of its pools).
    const oldest = [...pools].sort((a, b) => compareDotted(a.driver, b.driver))[0]!;
    const gpu = pools.flatMap((pool) => pool.gpus).find((name) => kb.gpu(name));
    policy = { ...policy, driver: oldest.driver, ...(policy.gpu === undefined && gpu ? { gpu } : {}) };
  }
  const result =
    input.framework === 'tensorflow'
      ? recommendTensorflow(kb, policy, baseline)
      : recommendPytorch(kb, policy, baseline);
  const sources = new Set(result.sources);
  return {
    ...result,
    input,
    problems: [...(pasted?.problems ?? []), ...result.problems],
    ...(pools.length > 0 && result.install ? { pools: poolAnswers(kb, result.install.cuda, pools, sources) } : {}),
    sources: [...sources],
  };
}

/**
 * Each pool on a CUDA version: its driver at or above the release's own row runs it, at or above the major's
 * minor-version floor only under minor-version compatibility, below it not at all; a GPU the release cannot
 * build for (too new for it, or dropped by its major) fails too.
 */
function poolAnswers(kb: KnowledgeBase, cuda: string, pools: readonly Pool[], sources: Set<string>): PoolAnswer[] {
  return pools.map((pool): PoolAnswer => {
    const base = { name: pool.name, driver: pool.driver };
    for (const name of pool.gpus) {
      const gpu = kb.gpu(name);
      if (gpu && compareDotted(cuda, gpu.runsFrom) < 0)
        return { ...base, verdict: 'fails', reason: `${gpu.name} needs CUDA >= ${gpu.runsFrom}` };
      if (gpu?.lastCudaMajor !== undefined && cudaMajor(cuda) > gpu.lastCudaMajor)
        return { ...base, verdict: 'fails', reason: `CUDA ${cudaMajor(cuda)} no longer supports ${gpu.name}` };
    }
    // The same driver reading as the options table (driverChecks).
    const reasons: string[] = [];
    const { blocks } = driverChecks(kb, cuda, pool.driver, reasons, sources);
    return reasons.length
      ? { ...base, verdict: blocks ? 'fails' : 'minor', reason: reasons[0]! }
      : { ...base, verdict: 'runs' };
  });
}

/** Whether the baseline allows a version of a package (no list: any version). */
function allowedBy(baseline: Baseline | undefined, name: string, version: string): boolean {
  const allowed = baseline?.packages[name];
  return !allowed || allowed.some((spec) => spec === version || allowedByLooseSpec(version, spec));
}

/** Marks options whose CUDA the baseline does not allow as not working, with the reason. */
function keepToBaseline(options: CudaOption[], baseline: Baseline | undefined): CudaOption[] {
  const allowed = baseline?.cuda.allowed;
  if (!allowed) return options;
  return options.map((option) =>
    allowed.includes(option.cuda)
      ? option
      : {
          ...option,
          works: false,
          reasons: [
            ...option.reasons,
            `the baseline does not allow CUDA ${option.cuda} (allowed: ${allowed.join(', ')})`,
          ],
        },
  );
}

function gpuInfo(kb: KnowledgeBase, input: RecommendInput, problems: string[], sources: Set<string>) {
  if (!input.gpu) return undefined;
  const gpu = kb.gpu(input.gpu);
  if (!gpu) {
    problems.push(`Unknown GPU "${input.gpu}": choose a listed model or enter a compute capability such as 8.9.`);
    return undefined;
  }
  sources.add(cite(gpu.record));
  return gpu;
}

function driverChecks(
  kb: KnowledgeBase,
  cuda: string,
  driver: string | undefined,
  reasons: string[],
  sources: Set<string>,
): { full?: string; floor?: string; blocks: boolean } {
  const need = kb.minDriver(cuda);
  const floor = kb.driverFloor(cudaMajor(cuda));
  if (need) sources.add(cite(need.row));
  if (!driver)
    return { ...(need ? { full: need.linux } : {}), ...(floor ? { floor: floor.linux } : {}), blocks: false };
  let blocks = false;
  if (floor && compareDotted(driver, floor.linux) < 0) {
    reasons.push(`driver ${driver} cannot run CUDA ${cudaMajor(cuda)}.x (needs >= ${floor.linux})`);
    blocks = true;
  } else if (need && compareDotted(driver, need.linux) < 0) {
    reasons.push(
      `driver ${driver} runs CUDA ${cuda} only under minor-version compatibility (full support from ${need.linux})`,
    );
  }
  return { ...(need ? { full: need.linux } : {}), ...(floor ? { floor: floor.linux } : {}), blocks };
}

/**
 * An nvidia/cuda image for the CUDA minor: its newest update that has tags, on the OS asked for when NVIDIA
 * published that OS for it, else on the nearest OS of the same family that it did (with a note).
 */
function image(
  kb: KnowledgeBase,
  cuda: string,
  os: string,
  flavour: 'runtime' | 'cudnn-runtime',
  notes: string[],
): { reference: string; os: string } {
  const full = latestImagePatch(kb, cuda) ?? `${cuda}.0`;
  const spelling = flavour === 'cudnn-runtime' ? (kb.cudnnSpelling(full)?.spelling ?? 'cudnn') : undefined;
  const published = (candidate: string): boolean => {
    const [, name = '', version = ''] = /^([a-z]+)(\d[\d.]*)$/.exec(candidate) ?? [];
    return kb.nvidiaCudaOs(name, version, full)?.published !== false;
  };
  let chosen = os;
  if (!published(os)) {
    const family = os.replace(/[\d.]+$/, '');
    const other =
      OS_CHOICES.filter((candidate) => candidate.startsWith(family) && published(candidate)).sort((a, b) =>
        compareDotted(b.replace(/^\D+/, ''), a.replace(/^\D+/, '')),
      )[0] ?? OS_CHOICES.find(published);
    if (other) {
      notes.push(`nvidia/cuda publishes no CUDA ${full} images for ${os}; the image below uses ${other}.`);
      chosen = other;
    }
  }
  return { reference: `nvidia/cuda:${full}-${spelling ? `${spelling}-` : ''}runtime-${chosen}`, os: chosen };
}

/** The Python each base OS ships (Ubuntu release notes; RHEL 9 application streams). */
const SYSTEM_PYTHON: Readonly<Record<string, string>> = {
  'ubuntu20.04': '3.8',
  'ubuntu22.04': '3.10',
  'ubuntu24.04': '3.12',
  rockylinux9: '3.9',
  ubi9: '3.9',
};
/** Other Pythons RHEL 9 packages as application streams (python3.11 from 9.2, python3.12 from 9.4). */
const RHEL9_STREAMS = new Set(['3.11', '3.12']);
const DEADSNAKES = 'https://launchpad.net/~deadsnakes/+archive/ubuntu/ppa';

/**
 * The Dockerfile lines that install the Python asked for (the OS's own, else deadsnakes on Ubuntu or an
 * application stream on RHEL 9) into a virtual environment at /opt/venv, which PATH then puts first. A virtual
 * environment also keeps pip off the system Python, which Ubuntu 24.04 marks externally managed (PEP 668).
 */
function pythonLines(os: string, python: string | undefined, notes: string[], problems: string[]): string[] {
  const system = ownValue(SYSTEM_PYTHON, os);
  const wanted = python ?? system;
  const venv = ['RUN python3 -m venv /opt/venv', 'ENV PATH="/opt/venv/bin:$PATH"'];
  if (os.startsWith('ubuntu')) {
    if (!wanted || wanted === system)
      return [
        `RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv && rm -rf /var/lib/apt/lists/*`,
        ...venv,
      ];
    notes.push(
      `Python ${wanted} on ${os} comes from the deadsnakes PPA (${DEADSNAKES}); the OS's own Python is ${system}.`,
    );
    return [
      `RUN apt-get update && apt-get install -y --no-install-recommends software-properties-common && add-apt-repository -y ppa:deadsnakes/ppa && apt-get update && apt-get install -y --no-install-recommends python${wanted} python${wanted}-venv && rm -rf /var/lib/apt/lists/*`,
      `RUN python${wanted} -m venv /opt/venv`,
      'ENV PATH="/opt/venv/bin:$PATH"',
    ];
  }
  if (!wanted || wanted === system) return ['RUN dnf install -y python3 python3-pip && dnf clean all', ...venv];
  if (!RHEL9_STREAMS.has(wanted)) {
    problems.push(
      `${os} packages Python ${system}, 3.11 and 3.12, not ${wanted}: choose one of those or an Ubuntu image.`,
    );
    return ['RUN dnf install -y python3 python3-pip && dnf clean all', ...venv];
  }
  return [
    `RUN dnf install -y python${wanted} && dnf clean all`,
    `RUN python${wanted} -m venv /opt/venv`,
    'ENV PATH="/opt/venv/bin:$PATH"',
  ];
}

/** What a Dockerfile installs: the base image and its OS, the Python asked for, and the `pip install` line. */
interface DockerfileInstall {
  readonly base: string;
  readonly os: string;
  readonly python: string | undefined;
  readonly pip: string;
}

/**
 * A Dockerfile for the install: the image, the Python asked for in a virtual environment, then the packages. What
 * it had to choose or could not do is added to the answer's notes and problems.
 */
function dockerfileFor(
  { base, os, python, pip }: DockerfileInstall,
  { notes, problems }: { readonly notes: string[]; readonly problems: string[] },
): string {
  return [
    `FROM ${base}`,
    ...pythonLines(os, python, notes, problems),
    `RUN ${pip.replace(/^pip install/, 'python -m pip install --no-cache-dir')}`,
  ].join('\n');
}

/** An answer: what was worked out for every answer, and the version, options and install when there are some. */
function answer(
  work: {
    input: RecommendInput;
    problems: string[];
    notes: string[];
    sources: ReadonlySet<string>;
    gpu: ReturnType<typeof gpuInfo>;
  },
  rest: Pick<Recommendation, 'version' | 'options' | 'install'>,
): Recommendation {
  const { input, problems, notes, sources, gpu } = work;
  return {
    input,
    problems,
    notes,
    ...(gpu ? { gpu: { name: gpu.name, cc: gpu.cc, minCuda: gpu.minCuda } } : {}),
    ...rest,
    sources: [...sources],
  };
}

function recommendPytorch(kb: KnowledgeBase, input: RecommendInput, baseline?: Baseline): Recommendation {
  const problems: string[] = [];
  const notes: string[] = [];
  const sources = new Set<string>();
  const gpu = gpuInfo(kb, input, problems, sources);
  const stable = kb
    .torchReleases()
    .filter((row) => row.confidence !== 'unverified' && allowedBy(baseline, 'torch', row.version));
  let release: TorchRelease | undefined = input.version ? kb.torchRelease(input.version) : stable.at(-1);
  if (release && !allowedBy(baseline, 'torch', release.version))
    problems.push(
      `The baseline does not allow torch ${release.version} (allowed: ${baseline!.packages.torch!.join(', ')}).`,
    );
  if (input.version && !release) {
    const near = stable.filter((row) => minorOf(row.version) === minorOf(input.version!)).at(-1) ?? stable.at(-1)!;
    problems.push(`torch ${input.version} is not a known release; nearest: ${near.version}.`);
    release = near;
  }
  if (!release) return { input, problems, notes, options: [], sources: [...sources] };
  sources.add(cite(release));
  if (release.confidence === 'unverified')
    notes.push(`The data for torch ${release.version} is unverified: ${release.note ?? ''}`);
  if (input.python && release.python && !allowedByLooseSpec(input.python, release.python))
    problems.push(`torch ${release.version} supports Python ${release.python}, not ${input.python}.`);

  const options = keepToBaseline(torchOptions(kb, release, gpu, input.driver, sources), baseline);

  const working = options.filter((option) => option.works);
  if (working.length === 0) {
    const alternative = nearestWorkingRelease(kb, release.version, gpu, input.driver);
    problems.push(
      `No CUDA build of torch ${release.version} works here${gpu ? ` for ${gpu.name}` : ''}${input.driver ? ` on driver ${input.driver}` : ''}.${alternative ? ` Nearest release that does: torch ${alternative.version}.` : ''}`,
    );
    return answer(
      { input, problems, notes, sources, gpu },
      {
        version: release.version,
        options,
      },
    );
  }
  const fullSupport = working.filter((option) => !input.driver || !option.reasons.length);
  const pick = fullSupport.find((option) => option.pypi) ?? fullSupport[0] ?? working[0]!;
  const tag = pick.tag!;
  const { reference: base, os } = image(kb, pick.cuda, input.os ?? 'ubuntu22.04', 'runtime', notes);
  // The Python the Dockerfile would run (the one asked for, else the image's own): a release without wheels for it
  // cannot install, so nothing is offered to install (the options above still say which builds exist).
  const python = input.python ?? ownValue(SYSTEM_PYTHON, os);
  if (python && release.python && !allowedByLooseSpec(python, release.python)) {
    if (!input.python)
      problems.push(
        `torch ${release.version} supports Python ${release.python}, not ${python} (the Python of ${os}): choose a Python it supports.`,
      );
    return answer({ input, problems, notes, sources, gpu }, { version: release.version, options });
  }
  const vision = release.torchvision[0];
  const audio = release.torchaudio[0];
  const pins = pick.pypi
    ? [
        `torch==${release.version}`,
        ...(vision ? [`torchvision==${vision}`] : []),
        ...(audio ? [`torchaudio==${audio}`] : []),
      ]
    : [
        `torch==${release.version}+${tag}`,
        ...(vision ? [`torchvision==${vision}+${tag}`] : []),
        ...(audio ? [`torchaudio==${audio}+${tag}`] : []),
      ];
  const index = pick.pypi ? '' : ` --index-url https://download.pytorch.org/whl/${tag}`;
  const pip = `pip install ${pins.join(' ')}${index}`;
  if (pick.pypi)
    notes.push(
      `PyPI's torch ${release.version} is the ${tag} build on Linux x86_64, so no index URL is needed there (on Windows PyPI serves CPU builds; add --index-url https://download.pytorch.org/whl/${tag}).`,
    );
  const condaOk = release.condaPytorchCuda?.includes(pick.cuda);
  const conda = condaOk
    ? `conda install pytorch==${release.version}${vision ? ` torchvision==${vision}` : ''}${audio ? ` torchaudio==${audio}` : ''} pytorch-cuda=${pick.cuda} -c pytorch -c nvidia`
    : undefined;
  const condaNote = condaOk
    ? undefined
    : `The pytorch conda channel has no torch ${release.version} with pytorch-cuda ${pick.cuda} (it ended with 2.5.1); install with pip inside the conda environment.`;
  if (!condaOk) sources.add(cite(kb.pytorchChannel()));
  const dockerfile = dockerfileFor({ base, os, python: input.python, pip }, { notes, problems });
  return answer(
    { input, problems, notes, sources, gpu },
    {
      version: release.version,
      options,
      install: {
        cuda: pick.cuda,
        image: base,
        pip,
        requirements: `${pick.pypi ? '' : `--index-url https://download.pytorch.org/whl/${tag}\n`}${pins.join('\n')}\n`,
        ...(conda ? { conda } : {}),
        ...(condaNote ? { condaNote } : {}),
        dockerfile,
        driverFull: pick.driverFull ?? '',
        driverFloor: pick.driverFloor ?? '',
      },
    },
  );
}

function torchOptions(
  kb: KnowledgeBase,
  release: TorchRelease,
  gpu: GpuInfo | undefined,
  driverVersion: string | undefined,
  sources: Set<string>,
): CudaOption[] {
  const tags = torchBuildTags(release).sort((a, b) => compareDotted(cudaFromTag(b)!, cudaFromTag(a)!));
  return tags.map((tag) => {
    const cuda = cudaFromTag(tag)!;
    const reasons: string[] = [];
    let works = true;
    if (gpu) {
      const archs = kb.compiledArchs(release.version, tag);
      if (archs) {
        sources.add(cite(archs));
        if (!runsOn(gpu.cc, archs.sass, archs.ptx ?? [])) {
          works = false;
          reasons.push(`no kernels for ${gpu.name} (sm_${gpu.cc.replace('.', '')}) in this build`);
        }
      } else if (compareDotted(cuda, gpu.runsFrom) < 0) {
        works = false;
        reasons.push(`${gpu.name} needs CUDA >= ${gpu.runsFrom}`);
      } else if (gpu.lastCudaMajor !== undefined && cudaMajor(cuda) > gpu.lastCudaMajor) {
        works = false;
        reasons.push(`CUDA ${cudaMajor(cuda)} no longer supports ${gpu.name}`);
      }
    }
    const driver = driverChecks(kb, cuda, driverVersion, reasons, sources);
    if (driver.blocks) works = false;
    if (gpu?.minDriver && driverVersion && compareDotted(driverVersion, gpu.minDriver) < 0) {
      works = false;
      reasons.push(`${gpu.name} needs driver >= ${gpu.minDriver}`);
    }
    return {
      cuda,
      tag,
      works,
      reasons,
      ...(driver.full ? { driverFull: driver.full } : {}),
      ...(driver.floor ? { driverFloor: driver.floor } : {}),
      pypi: tag === release.pypiDefault,
    };
  });
}

/** The release nearest to `version` (then the newer one) with at least one CUDA build that works here. */
function nearestWorkingRelease(
  kb: KnowledgeBase,
  version: string,
  gpu: GpuInfo | undefined,
  driverVersion: string | undefined,
): TorchRelease | undefined {
  const releases = kb.torchReleases().filter((row) => row.confidence !== 'unverified');
  const index = releases.findIndex((row) => compareDotted(row.version, version) >= 0);
  const origin = index < 0 ? releases.length : index;
  const ordered = releases
    .map((row, i) => ({ row, distance: Math.abs(i - origin), newer: i >= origin }))
    .sort((a, b) => a.distance - b.distance || Number(b.newer) - Number(a.newer));
  const works = (row: TorchRelease): boolean =>
    torchOptions(kb, row, gpu, driverVersion, new Set()).some((option) => option.works);
  const nearest = ordered.find(({ row }) => row.version !== version && works(row))?.row;
  // Same minor, newest patch: same features, more fixes.
  return nearest && releases.filter((row) => minorOf(row.version) === minorOf(nearest.version) && works(row)).at(-1);
}

function recommendTensorflow(kb: KnowledgeBase, input: RecommendInput, baseline?: Baseline): Recommendation {
  const problems: string[] = [];
  const notes: string[] = [];
  const sources = new Set<string>();
  const gpu = gpuInfo(kb, input, problems, sources);
  const releases = kb.tensorflowReleases();
  const row = input.version ? kb.tensorflow(input.version) : releases[0];
  if (!row) {
    problems.push(
      `TensorFlow ${input.version} is not in the tested-configuration table; newest: ${releases[0]!.version}.`,
    );
    return { input, problems, notes, options: [], sources: [...sources] };
  }
  sources.add(cite(row));
  const [low, high] = row.python.split('-');
  if (input.python && low && high && (compareDotted(input.python, low) < 0 || compareDotted(input.python, high) > 0))
    problems.push(`TensorFlow ${row.version} supports Python ${row.python}, not ${input.python}.`);
  const reasons: string[] = [];
  let works = true;
  if (gpu && compareDotted(row.cuda, gpu.runsFrom) < 0) {
    works = false;
    reasons.push(
      `${gpu.name} needs CUDA >= ${gpu.runsFrom}; TensorFlow ${row.version} is built and tested with CUDA ${row.cuda}`,
    );
  }
  const driver = driverChecks(kb, row.cuda, input.driver, reasons, sources);
  if (driver.blocks) works = false;
  const options = keepToBaseline(
    [
      {
        cuda: row.cuda,
        works,
        reasons,
        ...(driver.full ? { driverFull: driver.full } : {}),
        ...(driver.floor ? { driverFloor: driver.floor } : {}),
      },
    ],
    baseline,
  );
  works = options[0]!.works;
  if (!works) {
    problems.push(`TensorFlow ${row.version} (CUDA ${row.cuda}) does not work here: ${reasons.join('; ')}.`);
    return answer(
      { input, problems, notes, sources, gpu },
      {
        version: row.version,
        options,
      },
    );
  }
  const { reference: base, os } = image(kb, row.cuda, input.os ?? 'ubuntu22.04', 'cudnn-runtime', notes);
  // TensorFlow's wheels exist for its tested Pythons only (pip refuses every other): no Dockerfile for another.
  const python = input.python ?? ownValue(SYSTEM_PYTHON, os);
  if (python && low && high && (compareDotted(python, low) < 0 || compareDotted(python, high) > 0)) {
    if (!input.python)
      problems.push(
        `TensorFlow ${row.version} supports Python ${row.python}, not ${python} (the Python of ${os}): choose a Python it supports.`,
      );
    return answer({ input, problems, notes, sources, gpu }, { version: row.version, options });
  }
  const andCuda = compareDotted(row.version, '2.14.0') >= 0;
  const pip = andCuda ? `pip install "tensorflow[and-cuda]==${row.version}"` : `pip install tensorflow==${row.version}`;
  notes.push(
    `TensorFlow ${row.version} is tested with CUDA ${row.cuda} and cuDNN ${row.cudnn}.${andCuda ? ' The [and-cuda] extra installs matching NVIDIA libraries from PyPI.' : ' It uses the CUDA and cuDNN of the image.'}`,
  );
  const dockerfile = dockerfileFor({ base, os, python: input.python, pip }, { notes, problems });
  return answer(
    { input, problems, notes, sources, gpu },
    {
      version: row.version,
      options,
      install: {
        cuda: row.cuda,
        image: base,
        pip,
        requirements: `${andCuda ? `tensorflow[and-cuda]==${row.version}` : `tensorflow==${row.version}`}\n`,
        dockerfile,
        driverFull: driver.full ?? '',
        driverFloor: driver.floor ?? '',
      },
    },
  );
}

/**
 * Whether a version as people type it on the page (`3.11`, `2.5`) is allowed by a range: `X.Y` counts as `X.Y.0`
 * too, and a range PEP 440 cannot read allows it (the page advises; the gate's own matching, which refuses what it
 * cannot read, decides). Not the knowledge base's `safeSatisfies`, where an unreadable range allows nothing.
 */
function allowedByLooseSpec(version: string, range: string): boolean {
  try {
    return satisfies(`${version}.0`, range) || satisfies(version, range);
  } catch {
    return true;
  }
}

/** torch × CUDA and CUDA × driver tables for the matrix view. */
export function matrices(kb: KnowledgeBase) {
  const releases = kb.torchReleases().filter((row) => compareDotted(row.version, '2.0.0') >= 0);
  const tags = [...new Set(releases.flatMap(torchBuildTags))].sort((a, b) =>
    compareDotted(cudaFromTag(a)!, cudaFromTag(b)!),
  );
  const torch = {
    columns: tags,
    rows: releases.map((row) => ({
      version: row.version,
      unverified: row.confidence === 'unverified',
      cells: tags.map((tag) => (row.pypiDefault === tag ? 'pypi' : row.variants.includes(tag) ? 'index' : '')),
    })),
  };
  const minors = [...new Set(kb.cudaReleases().map((row) => minorOf(row.version)))];
  const drivers = minors.map((minor) => {
    const rows = kb.cudaReleases().filter((row) => minorOf(row.version) === minor);
    const ga = rows.find((row) => row.linux);
    const floor = kb.driverFloor(cudaMajor(minor));
    return {
      cuda: minor,
      ga: ga?.linux ?? '',
      latest: rows.filter((row) => row.linux).at(-1)?.linux ?? '',
      floor: floor?.linux ?? '',
      unverified: rows.every((row) => row.confidence === 'unverified'),
    };
  });
  return { torch, drivers, retrieved: kb.retrieved };
}
