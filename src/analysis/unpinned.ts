/**
 * What an install that pins nothing exact really gets: the newest release it admits, from the indexes it uses. Two
 * installs people write every day:
 *
 * - `pip install torch` (or a range such as `torch>=2.1`) from plain PyPI takes the newest torch the range admits
 *   that supports the Python at hand (pip skips releases whose Requires-Python excludes it), and that release's PyPI
 *   build is for one CUDA: today a CUDA 13 build. Judged when every Python the image may run picks a build of the
 *   same CUDA major; the pick moves as releases appear, and the message says so.
 * - `apt-get install cuda-toolkit` (or `cuda`) installs NVIDIA's meta-package, which "handles upgrading to the latest
 *   version of CUDA when it's released" (CUDA 12.1 release notes, "New meta-packages for Linux installation"), so it
 *   installs the newest CUDA NVIDIA's repository has for the image's distribution; `cuda-toolkit-12` the newest 12.x.
 */
import { imageFullName } from '../parsers/image-ref.js';
import type { ImageFact, IndexFact, PackageFact, ParsedFile, PythonFact } from '../parsers/facts.js';
import type { KnowledgeBase, TorchRelease } from '../knowledge/index.js';
import { cudaFromTag, minorOf, tagFromCuda } from '../knowledge/versions.js';
import { compareDotted } from '../util/dotted.js';
import { satisfiesPep440 } from '../util/pep440.js';
import { evaluateMarker } from '../parsers/markers.js';
import { condaAdmits, parseCondaVersionSpec } from './conda-versions.js';
import { cudaClaim, type CudaClaim } from './claims.js';
import { cudaFromUrl, isPypiIndex, isPytorchIndex } from './cuda-labels.js';
import { servedVariant } from './torch-build.js';
import { torchPage } from './torch-pages.js';

/** NVIDIA's apt meta-packages that follow the newest CUDA (of every major, or of one). */
const LATEST_CUDA = /^cuda(?:-toolkit)?(?:-(\d{1,2}))?$/;

/** The images and Pythons an install runs with, where its unit says. */
export interface Surroundings {
  /** The images of the unit's CUDA claims. */
  readonly images: readonly ImageFact[];
  /** A Dockerfile stage's base image, which names the Python where it is a Python image (it makes no CUDA claim). */
  readonly base?: ImageFact;
  /** The `requires-python` of the projects the unit installs (pyproject.toml): no other Python installs them. */
  readonly requiresPython?: readonly string[];
  /** Pythons the unit installs explicitly (apt `python3.11`, conda `python=3.11`, `uv python install 3.11`). */
  readonly pythons: readonly string[];
  /** Of them, the ones a conda `python` spec names: an environment's own Python, which its `pip:` list runs with. */
  readonly condaPythons?: readonly string[];
  /**
   * What installs a Python whose version the unit does not say (`Miniconda3-latest-…sh`, `uv python install`
   * without a version), where one does and no conda `python` spec names the version it runs.
   */
  readonly unknownPython?: string;
  /** What installs each of `pythons` that a stage's script installs (`uv python install`), for messages. */
  readonly installedBy?: ReadonlyMap<string, string>;
  /**
   * Whether a stage's script installs a Python: then that Python, not the distribution's python3, is the one pip
   * runs with (a conda installer's bin or a venv put first on PATH, `pyenv global`; nvidia/cuda images have no
   * python3 of their own).
   */
  readonly scripted?: boolean;
}

/** The images of a unit's claims, and the Pythons its packages and its stages' scripts install. */
export function surroundingsOf(
  claims: readonly CudaClaim[],
  packages: readonly PackageFact[],
  scripted: readonly PythonFact[] = [],
  base?: ImageFact,
  requiresPython: readonly string[] = [],
): Surroundings {
  const images = claims.flatMap((claim) => (claim.kind === 'image' && claim.image ? [claim.image] : []));
  const pythons = new Set<string>();
  const condaPythons = new Set<string>();
  let condaPython = false;
  for (const pkg of packages) {
    const apt = pkg.ecosystem === 'apt' ? /^python(3\.\d+)$/.exec(pkg.name) : null;
    if (apt) pythons.add(apt[1]!);
    if (pkg.ecosystem !== 'conda' || pkg.name !== 'python') continue;
    condaPython = true;
    const named = pkg.exact
      ? minorOf(pkg.exact)
      : /^=?=?3\.\d+(\.\*)?$/.test(pkg.specifier)
        ? minorOf(pkg.specifier.replace(/^=+/, '').replace(/\.\*$/, ''))
        : undefined;
    if (named) {
      pythons.add(named);
      condaPythons.add(named);
    } else if (pkg.specifier) {
      // A range (`python>=3.8,<3.10`): the environment runs one of the Pythons it admits.
      const spec = parseCondaVersionSpec(pkg.specifier);
      for (const python of CONDA_PYTHONS) if (spec && condaAdmits(spec, python)) condaPythons.add(python);
    }
  }
  let unknownPython: string | undefined;
  const installedBy = new Map<string, string>();
  for (const python of scripted)
    if (!python.version) unknownPython ??= python.by;
    else if (!pythons.has(python.version)) {
      pythons.add(python.version);
      installedBy.set(python.version, python.by);
    }
  // The environment a conda installer sets up runs the Python a conda spec names (`conda install python=3.10`).
  if (condaPython && unknownPython && scripted.every((python) => python.version || python.condaInstaller))
    unknownPython = undefined;
  return {
    images,
    ...(base ? { base } : {}),
    ...(requiresPython.length ? { requiresPython } : {}),
    pythons: [...pythons],
    ...(condaPythons.size ? { condaPythons: [...condaPythons] } : {}),
    ...(unknownPython ? { unknownPython } : {}),
    ...(installedBy.size ? { installedBy } : {}),
    ...(scripted.some((python) => !python.beside) ? { scripted: true } : {}),
  };
}

/** The CPython minors a conda `python` range is matched against (3.6 to the newest torch publishes wheels for). */
const CONDA_PYTHONS = ['3.6', '3.7', '3.8', '3.9', '3.10', '3.11', '3.12', '3.13', '3.14'];

/** The distribution an image names (`nvidia/cuda:12.4.1-devel-ubuntu22.04` → ubuntu 22.04), where it does. */
function distributionOf(images: readonly ImageFact[], kb: KnowledgeBase): { os?: string; osVersion?: string } {
  for (const image of images) {
    if (!image.tag || !kb.isNvidiaCuda(image.registry, image.repository)) continue;
    const tag = kb.nvidiaCudaTag(image.tag);
    if (tag?.os) return { os: tag.os, osVersion: tag.osVersion };
  }
  return {};
}

const NO_PYTHONS = { versions: [] as readonly string[] };

/**
 * The Python an image runs, where the image says: the official `python:3.X` image's, an NGC container's (its release
 * notes' Python), a known vendor image's whose tag names it (`-py39`), and apt's python3 of the release of an official
 * ubuntu image or an nvidia/cuda image's distribution (neither has a Python of its own).
 */
function basePython(
  { images, base }: Surroundings,
  kb: KnowledgeBase,
): { readonly version: string; readonly label: string } | undefined {
  for (const image of base ? [base, ...images] : images) {
    if (!image.tag) continue;
    if (!image.registry && image.repository === 'python') {
      const version = PYTHON_IMAGE_TAG.exec(image.tag)?.[1];
      if (version) return { version, label: `the ${image.reference} image's` };
    }
    if (image.registry === 'nvcr.io') {
      const python = kb.ngcImage(image.repository, image.tag)?.frameworks?.python;
      if (python) return { version: minorOf(python), label: `the ${image.reference} image's` };
    }
    // A vendor image whose tag names its Python as its build does (Ray's `2.46.0-py39-cu121`, runpod's `py3.11`,
    // axolotl's `py3.11`, Cog's base image's `python3.11`): images.json's vendor rows and tag grammars.
    const pyTag = VENDOR_PYTHON_TAG.exec(image.tag);
    if (pyTag) {
      const name = imageFullName(image);
      // Ray's CPU tags name their Python as its GPU tags do (`rayproject/ray:2.46.0-py39`).
      if (kb.vendorImage(name, image.tag) || kb.cpuImage(name, image.tag))
        return { version: `3.${pyTag[1]}`, label: `the ${image.reference} image's, as its tag says` };
    }
    // The official ubuntu image: no Python of its own, apt's python3 is the release's (`ubuntu:20.04`, `focal`).
    if (!image.registry && image.repository === 'ubuntu') {
      const release = UBUNTU_TAG.exec(image.tag);
      const version = release?.[1] ?? UBUNTU_CODENAMES[release?.[2] ?? ''];
      const python = version ? kb.distributionPython('ubuntu', version) : undefined;
      if (python) return { version: python, label: `ubuntu ${version}'s python3` };
    }
  }
  const { os, osVersion } = distributionOf(images, kb);
  const python = os && osVersion ? kb.distributionPython(os, osVersion) : undefined;
  return python ? { version: python, label: `${os} ${osVersion}'s python3` } : undefined;
}

/**
 * The Pythons a unit may run its pip installs with, where it says: its image's distribution's python3 (unless a
 * script installs the Python pip runs), the Pythons it installs explicitly, and every current Python where it installs
 * one of a version it does not say; `described` lists them, naming where each comes from where the unit says.
 */
function pythonsAround(
  around: Surroundings,
  kb: KnowledgeBase,
): { readonly versions: readonly string[]; readonly described: string } {
  // A conda environment file (no image around it) that names its Python: its `pip:` list runs with that one.
  if (around.condaPythons && around.images.length === 0 && !around.base && !around.unknownPython)
    return { versions: around.condaPythons, described: around.condaPythons.join(', ') };
  const own = around.scripted ? undefined : basePython(around, kb);
  // An image whose Python and CUDA are not known may run an older Python than a tool installs today (RHEL 9's 3.9,
  // Ray's CPU images); one the knowledge base knows the CUDA of is a recent build (vLLM, SGLang), or names its Python.
  // A project's `requires-python` says which of them it is for (below).
  const image = around.base !== undefined && around.images.length === 0;
  const base = around.scripted
    ? NO_PYTHONS
    : own
      ? { versions: [own.version] }
      : { versions: [...(image ? kb.pythonsStillRun() : []), ...kb.currentPythons()] };
  const unknown = around.unknownPython ? kb.currentPythons() : [];
  const all = [...new Set([...base.versions, ...around.pythons, ...unknown])];
  // A project's `requires-python` leaves out the others (pip refuses it there); where it admits none of them, the
  // older Pythons images still run are what it is for (`>=3.9,<3.10`); where it admits none at all, it says nothing.
  const requires = around.requiresPython;
  let versions = all;
  if (requires) {
    const admits = (version: string): boolean => requires.every((range) => satisfiesPep440(version, range) !== false);
    const admitted = all.filter(admits);
    const older = admitted.length === 0 && !own ? kb.pythonsStillRun().filter(admits) : [];
    if (admitted.length + older.length > 0) versions = admitted.length > 0 ? admitted : older;
  }
  const label = (version: string): string =>
    version === own?.version
      ? `${version} (${own.label})`
      : around.installedBy?.has(version)
        ? `${version} (${around.installedBy.get(version)})`
        : version;
  const listed = versions.map(label).join(', ');
  return {
    versions,
    described: around.unknownPython
      ? `${listed} (${around.unknownPython} may install any of them: the Dockerfile does not say which)`
      : listed,
  };
}

/** Every Python a stage's pip may run with, and where each comes from, for messages. */
export interface StagePythons {
  readonly versions: readonly string[];
  readonly described: string;
}

/** A Python named in a tag's part (`-py39-`, `-py310`, `py3.11-`, `-python3.11`: Cog's base, MosaicML's). */
const VENDOR_PYTHON_TAG = /(?:^|[-_])py(?:thon)?3\.?(\d{1,2})(?=[-_.]|$)/;

/** An ubuntu image's tag: its release (`22.04`, `22.04-slim`?) or codename (`jammy`, `jammy-20240530`). */
const UBUNTU_TAG = /^(?:(\d{2}\.\d{2})|([a-z]+))(?:-|$)/;

/** Ubuntu's codenames of the releases python.json knows. */
const UBUNTU_CODENAMES: Readonly<Record<string, string>> = {
  bionic: '18.04',
  focal: '20.04',
  jammy: '22.04',
  noble: '24.04',
};

/** The official `python` image's tag names its CPython (`python:3.8-slim` → 3.8; `python:3` does not). */
const PYTHON_IMAGE_TAG = /^(3\.\d{1,2})(?:[.-]|$)/;

/**
 * Every Python a Dockerfile stage's pip may run with, where the stage says them all: the Python of the official
 * `python:3.X` image or the python3 of an nvidia/cuda image's distribution, with every Python the stage installs
 * beside it (apt's `python3.X`, a conda `python=3.X`, `uv python install 3.X`, a CPython built from source).
 * Undefined where one may be missing: the base is another image (its Python is not known here), or a Python is
 * installed whose version is not said, or an environment is copied in (`COPY --from=… /opt/conda`). Only a verdict
 * that holds for every one of them is certain.
 */
export function stagePythons(around: Surroundings, kb: KnowledgeBase): StagePythons | undefined {
  if (around.unknownPython) return undefined;
  const base = basePython(around, kb);
  if (!base) return undefined;
  const versions = [...new Set([base.version, ...around.pythons])];
  const label = (version: string): string =>
    version === base.version
      ? `${version} (${base.label})`
      : `${version} (${around.installedBy?.get(version) ?? 'which the stage installs'})`;
  return { versions, described: versions.map(label).join(', ') };
}

/** The Pythons a unit may run its pip installs with, where it says (pythonsAround); empty when nothing says. */
export function unitPythons(around: Surroundings, kb: KnowledgeBase): readonly string[] {
  return pythonsAround(around, kb).versions;
}

/** What an unpinned torch install may take from plain PyPI: the release pip picks for each Python the unit may run. */
interface PypiPicks {
  readonly pythons: readonly string[];
  readonly picks: readonly TorchRelease[];
  /** The CUDA of each pick's build: PyPI's, or an extra PyTorch index's where it has the release (viaIndex). */
  readonly cudas: readonly string[];
  /** The extra PyTorch index each pick's build comes from, where one has it (a unit that names no image). */
  readonly viaIndex: readonly ({ readonly index: IndexFact; readonly cuda: string } | undefined)[];
  /** The Pythons, naming where each comes from where the unit says (pythonsAround). */
  readonly described: string;
}

/** The install an unpinned torch is judged in: its indexes and how its installer picks among them. */
export interface TorchInstall {
  /** The requirement's specifier combined with the others of the same package the install reads, where there are. */
  readonly specifier?: string;
  readonly indexes: readonly IndexFact[];
  readonly firstIndex?: boolean;
  readonly autoBackend?: boolean;
}

/**
 * The releases `pip install torch` / `torch>=2.1` takes from plain PyPI, one per Python the unit may run. Undefined
 * when the install names another primary index or find-links, or an extra PyTorch index that has the release (their
 * builds decide), or some Python has no release on PyPI the knowledge base knows the build of.
 */
function pypiPicks(
  pkg: PackageFact,
  install: TorchInstall | undefined,
  around: Surroundings,
  kb: KnowledgeBase,
): PypiPicks | undefined {
  if (pkg.ecosystem !== 'pip' || !PICKS_TORCH.has(pkg.name) || pkg.exact || pkg.url || pkg.specifier.includes('+'))
    return undefined;
  const indexes = install?.indexes ?? [];
  // PyPI named as the index, or a mirror of it (`-i https://pypi.tuna.tsinghua.edu.cn/simple`), is PyPI.
  if (indexes.some((index) => (index.kind === 'index-url' && !isPypiIndex(index.url)) || index.kind === 'find-links'))
    return undefined;
  // uv's default strategy (first-index) takes a package from the first index that has it, its extra indexes before
  // the default one (docs.astral.sh/uv/concepts/indexes, "Searching across multiple indexes"): a PyTorch index
  // decides, whatever release PyPI has. (`--index-strategy unsafe-best-match` compares them as pip does.)
  if (install?.firstIndex && indexes.some((index) => isPytorchIndex(index.url))) return undefined;
  // uv's `--torch-backend=auto` (UV_TORCH_BACKEND=auto) takes torch from the PyTorch index the machine's driver picks.
  if (install?.autoBackend) return undefined;
  // Another index named for a CUDA build (Jetson AI Lab's `jp6/cu129`, a mirror's `/whl/cu121`) serves torch builds
  // of versions not known here: under uv its torch is taken first, under pip whichever index has the newest version
  // wins. Which build is installed is not known (index-url says so); the index's own CUDA is still compared.
  if (indexes.some((index) => unknownCudaIndex(index))) return undefined;
  const all = pythonsAround(around, kb);
  // The Pythons its marker admits (`torch; python_version<'3.12'` is not installed on 3.12).
  const markers = pkg.markers?.includes('python_version') ? pkg.markers : undefined;
  const pythons = markers
    ? all.versions.filter((python) => evaluateMarker(markers, { values: { python_version: python } }) !== false)
    : all.versions;
  const described = pythons.length === all.versions.length ? all.described : pythons.join(', ');
  const specifier = (install?.specifier ?? pkg.specifier).replace(/\s+/g, '');
  const picks = pythons.map((python) =>
    pkg.name === 'torch'
      ? kb.newestTorchFor(specifier, python)
      : pkg.name === 'vllm' || pkg.name === 'sglang'
        ? kb.newestTorchForPinner(pkg.name, specifier, python)
        : kb.newestTorchForCompanion(pkg.name as 'torchvision' | 'torchaudio', specifier, python),
  );
  if (picks.length === 0 || picks.some((pick) => !pick?.pypiDefault)) return undefined;
  // An extra PyTorch index that has the release pip picks wins (its `+cu118` sorts above PyPI's plain version; the CPU
  // index has every release); one that does not leaves PyPI's build (what the index-url rule says of such an index),
  // so the claim stands where an image's CUDA is there to compare it with. Without one, the index's builds would be
  // compared with a torch that does not come from it: the index-url rule's warning says all there is.
  // Where the unit names no image, that index's build for the Pythons whose release it has, and PyPI's for the others
  // (`--extra-index-url …/cu129` beside `torch>=2.0.0`: 2.8.0's cu129 build on Python 3.9, PyPI's 2.14.0, a CUDA 13.0
  // build, on 3.10 and later): each is what pip installs there.
  const viaIndex: ({ readonly index: IndexFact; readonly cuda: string } | undefined)[] = picks.map(() => undefined);
  for (const index of indexes) {
    if (!isPytorchIndex(index.url)) continue;
    const served = servedVariant(index.url);
    if (!served || served === 'all' || served.tag === 'cpu' || served.cuda === undefined) return undefined;
    const has = picks.map((pick) => kb.torchBuilds(pick!).has(served.tag));
    // One that has none of them serves torch nothing: PyPI's build is installed (what index-url says of it).
    if (!has.some(Boolean)) continue;
    if (around.images.length > 0 || has.every(Boolean)) return undefined;
    const cuda = served.cuda;
    has.forEach((taken, i) => {
      if (taken) viaIndex[i] ??= { index, cuda };
    });
  }
  const cudas = picks.map((pick, i) => viaIndex[i]?.cuda ?? pypiCuda(pick!));
  return { pythons, picks: picks as TorchRelease[], cudas, viaIndex, described };
}

/**
 * What pip takes torch's release for: torch itself, or a package that pins torch exactly where nothing else pins it
 * (a companion's wheels, vLLM's and SGLang's Requires-Dist: the newest torchvision or vllm brings the torch it pins).
 */
export const PICKS_TORCH: ReadonlySet<string> = new Set(['torch', 'torchvision', 'torchaudio', 'vllm', 'sglang']);

/** What a claim of an install calls it: a companion's names the torch it brings. */
const pickedSubject = (pkg: PackageFact): string =>
  `${pkg.rawName}${pkg.specifier}${pkg.name === 'torch' ? '' : ' (and the torch its newest release requires)'}`;

/** The CUDA of a release's PyPI build (`12.8` for cu128). */
const pypiCuda = (release: TorchRelease): string => cudaFromTag(release.pypiDefault!)!;

/**
 * `pip install torch` / `torch>=2.1` from plain PyPI, when the release it takes is the same CUDA major for every
 * Python the image may run: a claim of that major, naming the release (`newest`). Undefined when the install names
 * another primary index or find-links, or an extra PyTorch index that has the release (their builds decide), or the
 * picks differ (newestTorchAlternatives).
 */
export function newestTorchClaim(
  file: ParsedFile,
  pkg: PackageFact,
  install: TorchInstall | undefined,
  around: Surroundings,
  kb: KnowledgeBase,
): CudaClaim | undefined {
  const found = pypiPicks(pkg, install, around, kb);
  if (!found) return undefined;
  const { picks, described, cudas, viaIndex } = found;
  // Where an extra index serves some Pythons' picks, it decides there (its own claim): one claim for all would hide it.
  if (viaIndex.some(Boolean)) return undefined;
  const builds = new Set(cudas);
  const majors = new Set([...builds].map((cuda) => cuda.split('.')[0]!));
  if (majors.size !== 1) return undefined;
  // One build for every Python: its CUDA, as an exact pin of it says; else the major they share.
  const [only] = builds;
  const newest = [...new Set(picks.map((pick) => pick.version))].sort(compareDotted);
  return cudaClaim({
    kind: 'implied',
    file,
    context: pkg.context,
    cuda: builds.size === 1 ? only! : [...majors][0]!,
    precision: builds.size === 1 ? 'minor' : 'major',
    span: pkg.span,
    subject: pickedSubject(pkg),
    package: pkg,
    record: picks.at(-1)!,
    index: undefined,
    newest: `${newest.join(' or ')} for Python ${described}`,
  });
}

/**
 * An install whose CUDA depends on what the unit does not say: the build of each release it may take, one claim
 * each (their `newest` names the Pythons it is taken for), and what is not known. Judged only where every one of
 * them gives the same verdict (driver-floor: no pool runs any of them), else said as not known.
 */
export interface Alternatives {
  readonly claims: readonly CudaClaim[];
  /** Why the unit does not say which (`the Python of ghcr.io/acme/base:1.0 is not known`). */
  readonly unknown: string;
}

/**
 * `pip install torch` from plain PyPI where the release pip picks is of another CUDA major on some Python the unit
 * may run than on others (torch 2.8.0, CUDA 12.8, is the newest with wheels for Python 3.9; 2.9 and later are CUDA 13
 * builds): each release's build, as Alternatives. Undefined where newestTorchClaim says one major.
 */
export function newestTorchAlternatives(
  file: ParsedFile,
  pkg: PackageFact,
  install: TorchInstall | undefined,
  around: Surroundings,
  kb: KnowledgeBase,
): Alternatives | undefined {
  const found = pypiPicks(pkg, install, around, kb);
  if (!found) return undefined;
  const { pythons, picks, cudas, viaIndex } = found;
  if (new Set(cudas.map((cuda) => cuda.split('.')[0])).size < 2) return undefined;
  // One claim per build: a release and where it comes from (PyPI, or an extra index that has it).
  const byBuild = new Map<string, { release: TorchRelease; cuda: string; index?: IndexFact; on: string[] }>();
  picks.forEach((pick, i) => {
    const key = `${pick.version} ${cudas[i]}`;
    const entry = byBuild.get(key);
    if (entry) entry.on.push(pythons[i]!);
    else byBuild.set(key, { release: pick, cuda: cudas[i]!, index: viaIndex[i]?.index, on: [pythons[i]!] });
  });
  const claims = [...byBuild.values()].map(({ release, cuda, index, on }) =>
    cudaClaim({
      kind: 'implied',
      file,
      context: pkg.context,
      cuda,
      precision: 'minor',
      span: pkg.span,
      subject: pickedSubject(pkg),
      package: pkg,
      record: release,
      index: undefined,
      newest: `${release.version}${index ? ` (its ${tagFromCuda(cuda)} build from ${index.url})` : ''} on Python ${on.join(', ')}`,
    }),
  );
  const image = around.base ?? around.images[0];
  const unknown = around.unknownPython
    ? `${around.unknownPython} may install any of these Pythons, and the Dockerfile does not say which`
    : image
      ? `the Python of ${image.reference} is not known`
      : 'the Python it runs with is not known';
  return { claims, unknown };
}

/**
 * `apt-get install cuda-toolkit` (`cuda`, `cuda-toolkit-12`) without a version: the newest CUDA of NVIDIA's
 * repository for the image's distribution (of one major for `cuda-toolkit-12`), as a claim naming it (`newest`).
 */
export function newestToolkitClaim(
  file: ParsedFile,
  pkg: PackageFact,
  around: Surroundings,
  kb: KnowledgeBase,
): CudaClaim | undefined {
  if (pkg.ecosystem !== 'apt' || pkg.specifier) return undefined;
  const match = LATEST_CUDA.exec(pkg.name);
  if (!match) return undefined;
  const { os, osVersion } = distributionOf(around.images, kb);
  const newest = kb.newestCudaFor(os, osVersion, match[1]);
  if (!newest) return undefined;
  const minor = minorOf(newest.version);
  return cudaClaim({
    kind: 'apt',
    file,
    context: pkg.context,
    cuda: minor,
    precision: 'minor',
    span: pkg.span,
    subject: pkg.rawName,
    package: pkg,
    record: newest,
    newest: `CUDA ${minor}${os ? ` for ${os}${osVersion}` : ''}`,
    rewrite: (target) => {
      const [wantMajor, wantMinor] = target.split('.');
      if (!wantMajor || !wantMinor || (match[1] && match[1] !== wantMajor)) return undefined;
      const name = pkg.name.replace(/-\d+$/, '');
      return [
        { path: file.path, range: [pkg.nameSpan.start, pkg.nameSpan.end], text: `${name}-${wantMajor}-${wantMinor}` },
      ];
    },
  });
}

/**
 * An extra index or find-links page named for a CUDA build that is neither PyTorch's index nor PyPI: it serves torch
 * builds, but which versions is not known here.
 */
export function unknownCudaIndex(index: IndexFact): boolean {
  let known = UNKNOWN_CUDA_INDEX.get(index);
  if (known === undefined) UNKNOWN_CUDA_INDEX.set(index, (known = isUnknownCudaIndex(index)));
  return known;
}

/** Asked per unpinned torch of an install for each of its indexes: answered once per index. */
const UNKNOWN_CUDA_INDEX = new WeakMap<IndexFact, boolean>();

function isUnknownCudaIndex(index: IndexFact): boolean {
  return (
    (index.kind === 'extra-index-url' || index.kind === 'find-links') &&
    !isPytorchIndex(index.url) &&
    !isPypiIndex(index.url) &&
    // A PyG (mmcv, detectron2) wheel page serves its project's wheels, never torch.
    !torchPage(index.url) &&
    cudaFromUrl(index.url) !== undefined
  );
}
