import type { IndexFact, InstallContext, PackageFact } from '../parsers/facts.js';
import type { KnowledgeBase, TorchRelease } from '../knowledge/index.js';
import { satisfiesPep440 } from '../util/pep440.js';
import { cudaFromTag, publicVersion, tagFromCuda } from '../knowledge/versions.js';
import { compareDotted } from '../util/dotted.js';
import {
  cudaFromLabel,
  cudaFromUrl,
  isCpuUrl,
  isPypiIndex,
  isPytorchIndex,
  pytorchIndexChannel,
} from './cuda-labels.js';
import type { Machine } from '../parsers/markers.js';
import { TORCH_FAMILY } from '../parsers/python-requirement.js';

export type BuildSource = 'local-label' | 'url' | 'index-url' | 'extra-index-url' | 'find-links' | 'pypi';

export interface TorchBuild {
  readonly pkg: PackageFact;
  /** The torch release that decides which builds exist (torch itself, or the release a companion belongs to). */
  readonly release?: TorchRelease;
  readonly version: string;
  /** CUDA of the build pip will install, if known; undefined for CPU builds and unknown cases. */
  readonly cuda?: string;
  readonly cpu: boolean;
  readonly source: BuildSource;
  readonly index?: IndexFact;
  /** The build that was asked for does not exist. */
  readonly missing?: {
    readonly cuda?: string;
    readonly tag: string;
    readonly via: 'label' | 'index-url' | 'extra-index-url';
    readonly index?: IndexFact;
  };
  /** pip will take PyPI's build because the extra index does not have this version. */
  readonly fellBackFrom?: IndexFact;
  /**
   * PyPI's build on aarch64, whose CUDA the knowledge does not record (it records PyPI's Linux x86_64 builds): said,
   * not compared.
   */
  readonly unknownOnMachine?: Machine;
}

const NO_BUILDS: ReadonlySet<string> = new Set();

/** The torch release a torch, torchvision or torchaudio version belongs to. */
export function releaseFor(kb: KnowledgeBase, pkg: PackageFact, version: string): TorchRelease | undefined {
  if (pkg.name === 'torch') return kb.torchRelease(version);
  const owners = kb.torchForCompanion(pkg.name as 'torchvision' | 'torchaudio', version);
  return owners[0];
}

/**
 * Which build of torch/torchvision/torchaudio pip installs for an exactly pinned requirement, given the
 * index options of the pip run. Models pip: `--index-url` replaces PyPI; with `--extra-index-url` pip
 * takes the highest matching version from any index, and `X+cu121` sorts above `X`, so an extra index
 * that has the version wins, and one that does not silently falls back to PyPI's build.
 */
export function resolveTorchBuild(
  pkg: PackageFact,
  indexes: readonly IndexFact[],
  kb: KnowledgeBase,
  machine: Machine = 'x86_64',
  /** An installer that picks the PyTorch index itself (Cog: InstallContext.pytorchUpTo). */
  upTo?: InstallContext['pytorchUpTo'],
): TorchBuild | undefined {
  if (pkg.ecosystem !== 'pip' || !pkg.exact || !TORCH_FAMILY.has(pkg.name)) return undefined;
  const version = publicVersion(pkg.exact);
  const release = releaseFor(kb, pkg, version);
  // torchaudio before 0.10 has one build for every CUDA ("Starting 0.10, torchaudio has CPU-only and CUDA-enabled
  // binary distributions", pytorch/audio installation.rst): it claims no CUDA and no index can serve a wrong one.
  if (!pkg.localLabel && !pkg.url && release?.torchaudioCuda === false && pkg.name === 'torchaudio') return undefined;
  // Every build has every field, in one order (one hidden class; see packageFact in facts.ts).
  const result = (
    f: Pick<TorchBuild, 'cpu' | 'source'> &
      Partial<Pick<TorchBuild, 'cuda' | 'index' | 'missing' | 'fellBackFrom' | 'unknownOnMachine'>>,
  ): TorchBuild => ({
    pkg,
    release,
    version,
    cuda: f.cuda,
    cpu: f.cpu,
    source: f.source,
    index: f.index,
    missing: f.missing,
    fellBackFrom: f.fellBackFrom,
    unknownOnMachine: f.unknownOnMachine,
  });
  const available = release ? kb.torchBuilds(release) : NO_BUILDS;

  if (pkg.url) {
    if (isCpuUrl(pkg.url)) return result({ cpu: true, source: 'url' });
    const fromUrl = cudaFromUrl(pkg.url);
    return result({ cuda: fromUrl?.precision === 'minor' ? fromUrl.cuda : undefined, cpu: false, source: 'url' });
  }
  // An installer that picks the build takes the label off (Cog's config_test.go: "local tag yields to build cuda").
  if (pkg.localLabel && !upTo) {
    if (pkg.localLabel === 'cpu') return result({ cpu: true, source: 'local-label' });
    const found = cudaFromLabel(pkg.localLabel);
    if (!found || found.precision !== 'minor') return result({ cpu: false, source: 'local-label' });
    const tag = tagFromCuda(found.cuda);
    const missing = release && !available.has(tag) ? { cuda: found.cuda, tag, via: 'label' as const } : undefined;
    return result({ cuda: found.cuda, cpu: false, source: 'local-label', missing });
  }
  // The installer's own index: the newest build of the release within its CUDA (none: PyPI's, below), unless the
  // install names a PyTorch index of its own, which then decides as it does for pip.
  if (upTo && !indexes.some((index) => isPytorchIndex(index.url))) {
    const pick = [...available]
      .flatMap((tag) => {
        const cuda = /^cu\d+$/.test(tag) ? cudaFromTag(tag) : undefined;
        return cuda && (upTo.cuda === undefined || compareDotted(cuda, upTo.cuda) <= 0) ? [{ tag, cuda }] : [];
      })
      .sort((a, b) => compareDotted(b.cuda, a.cuda))[0];
    if (pick) {
      const url = `https://download.pytorch.org/whl/${pick.tag}/`;
      const index = {
        kind: 'extra-index-url' as const,
        url,
        urlSpan: upTo.span,
        span: upTo.span,
        context: pkg.context,
        addedBy: upTo.by,
      };
      return result({ cuda: pick.cuda, cpu: false, source: 'extra-index-url', index });
    }
  }

  const torchIndexes = indexes.filter(
    (index) => index.kind !== 'conda-channel' && index.kind !== 'no-index' && isPytorchIndex(index.url),
  );
  // PyPI named as the index (`--index-url https://pypi.org/simple`, a uv index routed to it) is PyPI: its build.
  const named = [...indexes].reverse().find((index) => index.kind === 'index-url');
  const primary = named && !isPypiIndex(named.url) ? named : undefined;
  const extras = torchIndexes.filter((index) => index.kind !== 'index-url');

  const served = (index: IndexFact): { tag: string; cuda?: string; cpu: boolean } | undefined => {
    if (isCpuUrl(index.url)) return { tag: 'cpu', cpu: true };
    const found = cudaFromUrl(index.url);
    if (!found || found.precision !== 'minor') return undefined;
    return { tag: tagFromCuda(found.cuda), cuda: found.cuda, cpu: false };
  };

  // A find-links page of every variant (torch_stable.html) offers all builds of the version; pip takes the one whose
  // local label sorts highest, which this check does not model: the build is not known.
  const everything = extras.find((index) => servedVariant(index.url) === 'all');
  if (everything) return result({ cpu: false, source: 'find-links', index: everything });
  // Extra indexes (and find-links) that have a build of this version win over PyPI.
  for (const index of extras) {
    const build = served(index);
    if (!build) continue;
    if (build.cpu)
      return result({ cpu: true, source: index.kind === 'find-links' ? 'find-links' : 'extra-index-url', index });
    if (!release || available.has(build.tag))
      return result({
        cuda: build.cuda!,
        cpu: false,
        source: index.kind === 'find-links' ? 'find-links' : 'extra-index-url',
        index,
      });
  }

  if (primary) {
    if (!isPytorchIndex(primary.url)) return result({ cpu: false, source: 'index-url', index: primary });
    const build = served(primary);
    if (!build) return result({ cpu: false, source: 'index-url', index: primary });
    if (build.cpu) return result({ cpu: true, source: 'index-url', index: primary });
    if (release && !available.has(build.tag))
      return result({
        cpu: false,
        source: 'index-url',
        index: primary,
        missing: { cuda: build.cuda!, tag: build.tag, via: 'index-url', index: primary },
      });
    return result({ cuda: build.cuda!, cpu: false, source: 'index-url', index: primary });
  }

  // The knowledge records PyPI's build for Linux x86_64; what PyPI gives on aarch64 is not known here.
  const pypi = machine === 'x86_64' && release?.pypiDefault ? cudaFromTag(release.pypiDefault) : undefined;
  const unserved = extras.find((index) => served(index) && !served(index)!.cpu);
  const fellBack = unserved && release ? served(unserved) : undefined;
  return result({
    cuda: pypi,
    cpu: false,
    source: 'pypi',
    unknownOnMachine: machine !== 'x86_64' && release?.pypiDefault ? machine : undefined,
    fellBackFrom: fellBack ? unserved : undefined,
    missing: fellBack
      ? { cuda: fellBack.cuda!, tag: fellBack.tag, via: 'extra-index-url', index: unserved }
      : undefined,
  });
}

/**
 * PyTorch's root index, stable or nightly (`https://download.pytorch.org/whl/`), and its project pages, which
 * `--find-links` reads as pages of links (`-f https://download.pytorch.org/whl/torch`, as Qualcomm's AIMET guide and
 * sherpa-onnx's export jobs write it).
 */
const PYTORCH_ROOT_INDEX =
  /^https?:\/\/download\.pytorch\.org\/whl(?:\/nightly)?(?:\/(?:torch|torchvision|torchaudio|torchtext|torchdata))?\/?$/i;

/**
 * What a PyTorch index URL serves: one CUDA variant (`/whl/cu121`), CPU builds, or every variant (`torch_stable.html`,
 * the root index).
 */
export function servedVariant(url: string): { readonly tag: string; readonly cuda?: string } | 'all' | undefined {
  if (/\/whl\/torch_stable\.html$/i.test(url)) return 'all';
  // The root index (and the nightly one): its project pages (download.pytorch.org/whl/torch/) list the wheels of
  // every variant, which the per-variant indexes (/whl/cu121) split up.
  if (PYTORCH_ROOT_INDEX.test(url)) return 'all';
  if (isCpuUrl(url)) return { tag: 'cpu' };
  const found = cudaFromUrl(url);
  if (!found || found.precision !== 'minor') return undefined;
  return { tag: tagFromCuda(found.cuda), cuda: found.cuda };
}

/**
 * A stable PyTorch index of one CUDA build (`https://download.pytorch.org/whl/cu124`, a mirror's folder of it): its
 * tag and CUDA. Undefined for another index, the nightly and test channels, the CPU index and pages of every build.
 */
export function stableCudaIndex(url: string): { readonly tag: string; readonly cuda: string } | undefined {
  if (!isPytorchIndex(url) || pytorchIndexChannel(url) !== 'stable') return undefined;
  const served = servedVariant(url);
  return served === undefined || served === 'all' || served.cuda === undefined
    ? undefined
    : { tag: served.tag, cuda: served.cuda };
}

/**
 * Which torch (torchvision, torchaudio) release pip takes for a requirement that names no build, when an extra
 * index serves `tag` builds beside PyPI. pip gives no index priority: it takes the highest version any index has
 * that the requirement allows ("There is no priority in the locations that are searched",
 * pip.pypa.io/en/stable/cli/pip_install/#finding-packages), and a `+cu121` build sorts above the same version on
 * PyPI (PEP 440: local versions sort after the public version). So the extra index wins only when it has the
 * newest allowed release. Returns the newest allowed release when PyPI's build of it is what pip installs, and
 * undefined when the index's build wins or the knowledge cannot say.
 */
export function pypiWins(
  pkg: PackageFact,
  tag: string,
  kb: KnowledgeBase,
  /** The Pythons the install may run with, where the unit says them all: pip takes a release with wheels for them. */
  pythons?: readonly string[],
): { readonly newest: string; readonly release: TorchRelease; readonly newestOnIndex?: string } | undefined {
  if (pkg.ecosystem !== 'pip' || pkg.localLabel || pkg.url || !TORCH_FAMILY.has(pkg.name)) return undefined;
  // A question about the knowledge base alone (name, specifier, tag, Pythons), asked for every unpinned torch of a
  // repository.
  const on = pythons?.length ? pythons.join(',') : '';
  return kb.memoized(`pypiWins:${pkg.name}:${pkg.specifier}:${tag}:${on}`, () =>
    computePypiWins(pkg.name, pkg.specifier, tag, kb, pythons),
  );
}

/**
 * The torch-family release pip takes from PyPI for a requirement: the newest one it allows that the knowledge base has
 * verified (that one is certainly on PyPI), with every allowed release newest first. Undefined when none is allowed.
 */
export function newestOnPypi(
  pkg: Pick<PackageFact, 'name' | 'specifier'>,
  kb: KnowledgeBase,
): { readonly version: string; readonly release: TorchRelease; readonly allowed: readonly TorchRelease[] } | undefined {
  const allowed = kb
    .torchReleases()
    .filter((release) => {
      const version = familyVersion(pkg.name, release);
      return (
        version !== undefined &&
        (pkg.specifier === '' || satisfiesSpec(version, pkg.specifier)) &&
        !/[a-z]/i.test(version)
      );
    })
    .sort((a, b) => compareVersions(familyVersion(pkg.name, b)!, familyVersion(pkg.name, a)!));
  if (allowed.length === 0) return undefined;
  const release = allowed.find((row) => row.confidence !== 'unverified') ?? allowed[0]!;
  return { version: familyVersion(pkg.name, release)!, release, allowed };
}

/** The version of a torch-family package (torch, torchvision, torchaudio) that belongs to a torch release. */
function familyVersion(name: string, release: TorchRelease): string | undefined {
  return name === 'torch' ? release.version : name === 'torchvision' ? release.torchvision[0] : release.torchaudio[0];
}

function computePypiWins(
  name: string,
  specifier: string,
  tag: string,
  kb: KnowledgeBase,
  pythons?: readonly string[],
): ReturnType<typeof pypiWins> {
  const pypi = newestOnPypi({ name, specifier }, kb);
  if (!pypi) return undefined;
  // With the Pythons known, only releases with wheels for each of them (torch 2.4.1 is the newest for Python 3.8);
  // where the knowledge does not record a release's Pythons, it stays.
  const allowed = pythons?.length
    ? pypi.allowed.filter((release) => pythons.every((python) => kb.torchSupportsPython(release, python) !== false))
    : pypi.allowed;
  if (allowed.length === 0) return undefined;
  // The CPU index (download.pytorch.org/whl/cpu) holds the CPU build of every release: the previous-versions page
  // (pytorch.org/get-started/previous-versions) gives its `--index-url …/whl/cpu` command for each one, and `X+cpu`
  // sorts above PyPI's `X`. So pip takes the CPU build whatever the range; the knowledge lists CUDA variants only.
  const served = (release: TorchRelease): boolean => tag === 'cpu' || kb.torchBuilds(release).has(tag);
  if (served(allowed[0]!)) return undefined;
  if (name === 'torchaudio' && allowed[0]!.torchaudioCuda === false) return undefined; // one build for every CUDA
  // Name the newest release the knowledge base has verified: that one is certainly on PyPI. PyPI's build certainly
  // wins only if no release above it that the index serves may exist either (an unverified 2.14.1+cu126 above a
  // verified 2.14.0 would win wherever it exists).
  const newest = allowed.find((row) => row.confidence !== 'unverified') ?? allowed[0]!;
  const onIndex = allowed.find(served);
  const versionOf = (release: TorchRelease) => familyVersion(name, release)!;
  if (onIndex && compareVersions(versionOf(onIndex), versionOf(newest)) >= 0) return undefined;
  return { newest: versionOf(newest), release: newest, ...(onIndex ? { newestOnIndex: versionOf(onIndex) } : {}) };
}

function satisfiesSpec(version: string, specifier: string): boolean {
  return satisfiesPep440(version, specifier.replace(/\s+/g, '')) ?? false;
}

function compareVersions(a: string, b: string): number {
  return compareDotted(a, b);
}
