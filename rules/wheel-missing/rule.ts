import { CUDA_SELECTOR, describePackage } from '../../src/analysis/claims.js';
import { nearestCudaBuild, nearestReleaseWithCuda } from '../../src/analysis/nearest.js';
import { stableCudaIndex, type TorchBuild } from '../../src/analysis/torch-build.js';
import type { Unit, UnitPackage } from '../../src/analysis/units.js';
import type { PackageFact, ParsedFile } from '../../src/parsers/facts.js';
import type { Fix, TextEdit } from '../../src/finding.js';
import { cite, isUnverified, type KnowledgeBase, type TorchRelease } from '../../src/knowledge/index.js';
import { defineRule, type Reporter } from '../../src/rule.js';
import { TORCH_FAMILY } from '../../src/parsers/python-requirement.js';
import {
  cudaFromTag,
  cudaMajorMinor,
  cudaOfVersion,
  minorOf,
  publicVersion,
  tagFromCuda,
} from '../../src/knowledge/versions.js';
import { compareDotted } from '../../src/util/dotted.js';
import { cudaFromLabel } from '../../src/analysis/cuda-labels.js';
import { satisfiesPep440 } from '../../src/util/pep440.js';
import { condaAdmits, parseCondaVersionSpec } from '../../src/analysis/conda-versions.js';

/** The builds a release has, for a pin asking for one it lacks (with the builds nearest to it). */
const PUBLISHED = '{{owner}} is published for {{published}}{{pypiNote}}.{{builds}} Source: {{source}}';
/** A conda spec no build of the pytorch channel satisfies. */
const UNSOLVABLE =
  'conda cannot solve {{spec}} with {{what}} {{cuda}}: the pytorch channel has builds for {{published}} only. Source: {{source}}';

/** Why each finding matters and how to fix it, filled from its data (src/rule.ts, `helps`). */
const HELPS = {
  noVariant: PUBLISHED,
  fallback: PUBLISHED,
  rangeNoVariant:
    '--index-url replaces PyPI, so pip looks for torch on that index only, and none of the releases the requirement admits was built for {{tag}}.{{builds}} Source: {{source}}',
  newerVersion:
    'The knowledge base (PyTorch data retrieved {{retrieved}}) ends at {{name}} {{newest}}, so the builds, CUDA and companions of {{version}} are not checked; update cuda-gatekeeper, or check the version. Source: {{source}}',
  unknownVersion:
    'The knowledge base (PyTorch data retrieved {{retrieved}}) lists {{listed}}; check the version. Source: {{source}}',
  olderVersion:
    'The knowledge base starts at {{name}} {{oldest}} (PyTorch data retrieved {{retrieved}}), so the builds, CUDA and companions of {{version}} are not checked. Source: {{source}}',
  noPytorchCuda:
    'The pytorch-cuda metapackage exists only for {{published}}; from torch 2.6 PyTorch publishes no conda packages (use pip wheels). Source: {{source}}',
  condaLabel:
    '+{{label}} is how PyPI-style wheels name a CUDA build; conda names it in the build string or with pytorch-cuda. Write pytorch={{public}} with {{instead}}. Source: {{source}}',
  channelEnded:
    'The pytorch channel is deprecated; install torch {{version}} with pip, or take pytorch from conda-forge. Source: {{source}}',
  toolkitIgnored:
    "The pytorch channel's builds of {{version}} depend on pytorch-cuda ({{pytorchCuda}}), not on cudatoolkit, so the solver may pick a CPU build or another CUDA. Replace cudatoolkit with pytorch-cuda=X.Y from the nvidia channel. Source: {{source}}",
  selectorIgnored:
    '{{name}} only tracks a conda feature that the pytorch channel\'s 0.3–1.0.0 builds carried; from 1.0.1 the CUDA build is chosen with cudatoolkit=X.Y (from 1.13 with pytorch-cuda=X.Y), so {{name}} picks nothing and the solver takes any CUDA build. Source: {{source}} (v1.0.0: "cuda100 -c pytorch"; v1.0.1: "cudatoolkit=10.0 -c pytorch")',
  condaCombination: UNSOLVABLE,
  condaRangeCombination: UNSOLVABLE,
  condaRangeSome:
    'Of the pytorch releases {{spec}} allows, only {{some}} {{have}} {{what}} {{cuda}} builds, so the solver takes {{which}}; pin it if that is what you mean. Source: {{source}}',
  noCuda: '{{note}}. Source: {{source}}',
  noPython:
    "torch {{version}}'s wheels are for Python {{range}} only, so pip finds no matching distribution. Install a Python it supports, or pin a release that has wheels for yours{{instead}}. Source: {{source}}",
  noPythonRange:
    'The releases it admits ({{releases}}) have wheels for Python {{ranges}} only, so pip finds no matching distribution. Install a Python they support, or widen the range{{instead}}. Source: {{source}}',
};

/** The rule's messages, by id: `MessageId` types the helpers' reporter, so a misspelt id does not compile. */
const MESSAGES = {
  noVariant: '{{name}} {{version}} has no {{tag}} build{{via}}',
  rangeNoVariant:
    'no release that {{spec}} admits has a {{tag}} build ({{releases}}), so pip finds no matching distribution on {{url}}',
  fallback: "{{name}} {{version}} has no {{tag}} build, so pip ignores {{url}} and installs PyPI's {{pypi}} build",
  unknownVersion: '{{name}} {{version}} is not a known release',
  newerVersion: '{{name}} {{version}} is newer than the knowledge base knows (newest: {{newest}})',
  olderVersion:
    '{{name}} {{version}} is older than the knowledge base knows (oldest: {{oldest}}), so its builds are not checked',
  noPytorchCuda: 'pytorch-cuda={{version}} does not exist (published: {{published}})',
  condaCombination: 'pytorch {{version}} was not published for {{what}} {{cuda}} (published: {{published}})',
  condaRangeCombination:
    'no pytorch release that {{version}} allows was published for {{what}} {{cuda}} ({{published}})',
  condaRangeSome: 'of the pytorch releases {{version}} allows, only {{some}} was published for {{what}} {{cuda}}',
  channelEnded: 'pytorch {{version}} is not on the pytorch conda channel: its last release there was {{last}}',
  condaLabel: '{{subject}} names a pip build: conda packages carry no +{{label}} label, so no such version exists',
  selectorIgnored:
    '{{name}} does not select the CUDA build of pytorch {{version}}: from 1.0.1 the pytorch channel selects it with cudatoolkit',
  toolkitIgnored:
    'cudatoolkit does not select the CUDA build of pytorch {{version}}: from 1.13 the pytorch channel selects it with pytorch-cuda',
  noCuda: '{{subject}} names CUDA {{cuda}}, which NVIDIA never released',
  noPython: '{{name}} {{version}} has no wheel for {{pythons}}{{which}}',
  noPythonRange: '{{name}}{{specifier}} admits no release with a wheel for {{pythons}}{{which}}',
};
type MessageId = keyof typeof MESSAGES;

export default defineRule({
  id: 'wheel-missing',
  description:
    'The requested build exists (torch/torchvision/torchaudio CUDA variants and the Pythons a release has wheels for, conda pytorch-cuda/cudatoolkit builds)',
  defaultSeverity: 'error',
  fix: 'unsafe',
  messages: MESSAGES,
  helps: HELPS,
  check({ units, kb, report }) {
    for (const unit of units) {
      for (const { file, pkg, build } of unit.packages) {
        if (build) checkBuild(unit, { file, pkg, build }, kb, report);
        else if (pkg.ecosystem === 'pip' && pkg.exact && TORCH_FAMILY.has(pkg.name))
          checkUnknown(file, pkg, kb, report);
      }
      for (const entry of unit.packages) checkRangeOnIndex(entry, kb, report);
      checkConda(unit, kb, report);
      checkNeverReleased(unit, kb, report);
      if (unit.pythonsRun) {
        checkPython(unit, unit.pythonsRun, kb, report);
        checkPythonRange(unit, unit.pythonsRun, kb, report);
      }
    }
  },
});

/**
 * A torch range installed from one PyTorch index alone (`pip install "torch~=2.2.1" --index-url …/whl/cu124`) where no
 * release the range admits was built for that index's CUDA (torch 2.2: cu118 and cu121): pip finds no matching
 * distribution. Certain only where the knowledge base has every admitted release's builds and no later release can
 * join them: the range has an upper bound (`~=`, `==2.2.*`, `<2.3`). Not where pip may read an index the file does
 * not show, nor where a torch installed before meets the range (pip keeps it and asks no index).
 */
function checkRangeOnIndex(
  { file, pkg, invocation, kept }: UnitPackage,
  kb: KnowledgeBase,
  report: Reporter<MessageId>,
): void {
  // A torch installed before that the range admits is kept: pip asks no index.
  if (kept) return;
  if (pkg.ecosystem !== 'pip' || pkg.name !== 'torch' || pkg.exact || pkg.url || !pkg.specifier || !invocation) return;
  if (invocation.members.some((member) => member.context.hiddenIndexes)) return;
  const indexes = invocation.indexes.filter((index) => index.kind !== 'conda-channel');
  const primary = [...indexes].reverse().find((index) => index.kind === 'index-url');
  if (!primary || primary.addedBy || indexes.some((index) => index.kind !== 'index-url')) return;
  const served = stableCudaIndex(primary.url);
  // An index no release was built for is said at the index (index-url).
  if (!served || !kb.publishesTorchBuild(served.tag)) return;
  const releases = kb.torchReleases().filter((release) => satisfiesPep440(release.version, pkg.specifier!) === true);
  if (releases.length === 0 || releases.some((release) => kb.torchBuilds(release).has(served.tag))) return;
  if (releases.some((release) => isUnverified(release) || release.variantsComplete === false)) return;
  if (satisfiesPep440(FAR_FUTURE, pkg.specifier) !== false) return;
  const suggestions = nearestOnIndex(releases, served.cuda, kb);
  report({
    messageId: 'rangeNoVariant',
    data: {
      spec: describePackage(pkg),
      tag: served.tag,
      url: primary.url,
      releases: listed(releases.map((release) => `${release.version}: ${release.variants.join(', ')}`)),
      builds: suggestions,
      source: cite(releases.at(-1)!),
    },
    file,
    span: pkg.span,
  });
}

/** A version no torch release of the coming years reaches: a range that admits it has no upper bound. */
const FAR_FUTURE = '999.0.0';

/** What to use instead, for a range with no build on an index: the admitted releases' builds of that CUDA major. */
function nearestOnIndex(releases: readonly TorchRelease[], cuda: string, kb: KnowledgeBase): string {
  const major = cuda.split('.')[0];
  const tags = [...new Set(releases.flatMap((release) => [...kb.torchBuilds(release)]))].filter(
    (tag) => cudaFromTag(tag)?.split('.')[0] === major && compareDotted(cudaFromTag(tag)!, cuda) <= 0,
  );
  return tags.length > 0
    ? ` The ${tags.join(' and ')} ${tags.length === 1 ? 'index has' : 'indexes have'} them, which run where CUDA ${cuda} does (minor version compatibility within CUDA ${major}).`
    : '';
}

/** The first two of a list and the last, for a message (`>=3.8; >=3.8,<3.12; …; >=3.10`). */
const listed = (items: readonly string[]): string =>
  items.length > 3 ? `${items.slice(0, 2).join('; ')}; …; ${items.at(-1)}` : items.join('; ');

/**
 * A torch range none of whose releases has a wheel for any Python the stage's (or environment's) pip may run with
 * (`FROM python:3.7`, `pip install "torch>=2.0"`: torch 2.0 needs 3.8): pip finds no matching distribution. Only for
 * the ranges nothing else in the unit decides, from plain PyPI (Unit.torchRanges), and where the knowledge base records
 * every admitted release's Pythons.
 */
function checkPythonRange(
  unit: Unit,
  pythonsRun: NonNullable<Unit['pythonsRun']>,
  kb: KnowledgeBase,
  report: Reporter<MessageId>,
): void {
  for (const { file, pkg, specifier } of unit.torchRanges ?? []) {
    const releases = kb.pypiTorchMajors(specifier).releases;
    if (releases.length === 0 || releases.some((release) => !release.python)) continue;
    const pythons = pythonsRun();
    if (!pythons) continue;
    if (releases.some((release) => pythons.versions.some((python) => kb.torchSupportsPython(release, python))))
      continue;
    const instead = kb.newestTorchFor('', pythons.versions[0]!);
    const versions = releases.map((release) => release.version);
    report({
      messageId: 'noPythonRange',
      data: {
        name: pkg.rawName,
        specifier: pkg.specifier,
        pythons: `${pythons.versions.length > 1 ? 'any of ' : ''}Python ${pythons.described}`,
        which:
          pythons.versions.length > 1
            ? ''
            : `, the only Python this ${unit.stage === undefined ? 'environment' : 'stage'}'s pip runs with`,
        releases: versions.length > 3 ? `${versions[0]} to ${versions.at(-1)}` : versions.join(', '),
        ranges: listed([...new Set(releases.map((release) => release.python!))]),
        instead: instead ? ` (torch ${instead.version} is the newest with wheels for ${pythons.versions[0]})` : '',
        source: cite(releases.at(-1)!),
      },
      file,
      span: pkg.span,
    });
  }
}

/**
 * A torch pin whose release has no wheel for any Python the stage's pip may run with (`torch==2.7.1` on Ubuntu 20.04's
 * python3.8; torch 2.7 supports 3.9–3.13): pip finds no matching distribution. Judged where the command names its
 * Python (`python3.11 -m pip`), or where the stage says every Python it has (stagePythons), and only by the range the
 * knowledge base records for the release.
 */
function checkPython(
  unit: Unit,
  pythonsRun: NonNullable<Unit['pythonsRun']>,
  kb: KnowledgeBase,
  report: Reporter<MessageId>,
): void {
  for (const { file, pkg, invocation, build } of unit.packages) {
    if (pkg.ecosystem !== 'pip' || pkg.name !== 'torch' || !pkg.exact || pkg.url || !build?.release || build.missing)
      continue;
    const release = build.release;
    if (!release.python || isUnverified(release)) continue;
    const named = commandPython(file, pkg, invocation);
    if (named === 'other') continue;
    const pythons = named
      ? { versions: [named], described: `${named} (the interpreter its command names)` }
      : pythonsRun();
    if (!pythons || pythons.versions.some((python) => kb.torchSupportsPython(release, python) !== false)) continue;
    const tag = build.cuda ? tagFromCuda(build.cuda) : build.cpu ? 'cpu' : undefined;
    const instead = tag ? kb.newestTorchForPythons(tag, pythons.versions) : undefined;
    const label = pkg.localLabel ? `+${pkg.localLabel}` : '';
    report({
      messageId: 'noPython',
      data: {
        name: pkg.rawName,
        version: build.version,
        pythons: `${pythons.versions.length > 1 ? 'any of ' : ''}Python ${pythons.described}`,
        which:
          pythons.versions.length > 1 || named
            ? ''
            : `, the only Python this ${unit.stage === undefined ? 'environment' : 'stage'}'s pip runs with`,
        range: release.python,
        instead: instead
          ? ` (torch ${instead.version} is the newest with a ${tag} build for ${pythons.versions.join(' and ')})`
          : tag
            ? ` (no torch release has a ${tag} build for ${pythons.versions.join(' and ')})`
            : '',
        // The range is the Release Compatibility Matrix's, where the release's sources name it.
        source: cite({
          ...release,
          source: release.source.filter((source) => source.includes('RELEASE.md')).concat(release.source),
        }),
      },
      file,
      span: pkg.span,
      suggestions: instead
        ? [
            {
              title: `torch ${instead.version}${label} (the newest release with a ${tag} build for Python ${pythons.versions.join(', ')})`,
              safety: 'unsafe',
              edits: versionEdit({ file, pkg }, `${instead.version}${label}`),
            },
          ]
        : [],
    });
  }
}

/** commandPython's answer for an invocation's members (a chain of includes is one invocation of many members). */
const invocationPythons = new WeakMap<object, string | undefined>();

/**
 * The Python the command that installs a pin says it installs for (InstallContext.python): its own, or the command
 * that reads the file it is written in (`python3.11 -m pip install -r requirements.txt`).
 */
function commandPython(
  file: ParsedFile,
  pkg: PackageFact,
  invocation: Unit['packages'][number]['invocation'],
): string | undefined {
  const own = file.contexts[pkg.context]?.python;
  if (own || !invocation) return own;
  if (invocationPythons.has(invocation)) return invocationPythons.get(invocation);
  let named: string | undefined;
  for (const member of invocation.members) {
    const python = member.context.python;
    if (python === 'other') {
      named = python;
      break;
    }
    named ??= python;
  }
  invocationPythons.set(invocation, named);
  return named;
}

/**
 * A CUDA that was never released, wherever a package states it (`cudatoolkit=11.9`, `cuda-version=12.7`, a build
 * string `…cuda10.9…`, a `-cu11x` name): no build of it can exist. Images are image-missing's; the torch family's
 * `+cuXYZ` labels are checked against the builds each release has (checkBuild), which says more.
 */
function checkNeverReleased(unit: Unit, kb: KnowledgeBase, report: Reporter<MessageId>): void {
  for (const claim of unit.claims) {
    if (claim.precision !== 'minor' || claim.kind === 'image' || claim.kind === 'implied' || !claim.package) continue;
    if (claim.kind === 'wheel-tag' && TORCH_FAMILY.has(claim.package.name)) continue;
    const minor = cudaMajorMinor(claim.cuda);
    if (!minor || kb.cudaExists(minor) !== 'no') continue;
    const record = kb.noReleaseRecord(minor)!;
    report({
      messageId: 'noCuda',
      data: { subject: claim.subject, cuda: minor, note: record.note ?? '', source: cite(record) },
      file: claim.file,
      span: claim.span,
    });
  }
}

/** A pin where it is written: the file and the package. */
interface Pin {
  readonly file: ParsedFile;
  readonly pkg: PackageFact;
}

/** Whether the build a torch, torchvision or torchaudio pin resolves to exists (else the builds that do). */
function checkBuild(
  unit: Unit,
  { file, pkg, build }: Pin & { readonly build: TorchBuild },
  kb: KnowledgeBase,
  report: Reporter<MessageId>,
): void {
  if (!build.release) {
    checkUnknown(file, pkg, kb, report);
    return;
  }
  const missing = build.missing;
  if (!missing) return;
  const release = build.release;
  const lenient = release.variantsComplete === false || isUnverified(release);
  const suggestions = alternatives({ file, pkg }, { version: build.version, release, cuda: missing.cuda ?? '' }, kb);
  const why = {
    owner:
      pkg.rawName === 'torch'
        ? `torch ${release.version}`
        : `torch ${release.version} (which ${pkg.rawName} ${build.version} belongs to)`,
    torch: release.version,
    published: release.variants.join(', '),
    pypiNote: release.pypiDefault ? ` (PyPI: ${release.pypiDefault})` : '',
    builds: suggestionText(suggestions),
    source: cite(release),
  };
  if (missing.via === 'extra-index-url' && missing.index) {
    report({
      messageId: 'fallback',
      data: {
        name: pkg.rawName,
        version: build.version,
        tag: missing.tag,
        url: missing.index.url,
        pypi: build.release.pypiDefault ?? 'default',
        ...why,
      },
      file,
      span: pkg.span,
      unverified: lenient,
      severity: lenient ? 'notice' : 'error',
      related: indexOwner(unit, missing.index).map((owner) => ({
        file: owner,
        span: missing.index!.span,
        message: `this index has no ${pkg.rawName} ${build.version}`,
      })),
      suggestions,
    });
    return;
  }
  report({
    messageId: 'noVariant',
    data: {
      name: pkg.rawName,
      version: build.version,
      tag: missing.tag,
      via: missing.via === 'index-url' ? ` on ${missing.index?.url}, so pip finds no matching distribution` : '',
      ...why,
    },
    file,
    span: pkg.span,
    unverified: lenient,
    suggestions,
  });
}

function indexOwner(unit: Unit, index: NonNullable<TorchBuild['index']>): ParsedFile[] {
  const owner = unit.invocations
    .flatMap((invocation) => invocation.members)
    .find((member) => member.context.indexes.includes(index));
  return owner ? [owner.file] : [];
}

/**
 * The build a pin asks for and does not find: the package's version, its torch release, and the CUDA it wants (or '').
 */
interface MissingBuild {
  readonly version: string;
  readonly release: TorchRelease;
  readonly cuda: string;
}

/** The builds nearest to a missing one: the same version for the nearest CUDA, the nearest release for this CUDA. */
function alternatives(
  { file, pkg }: Pin,
  { version, release, cuda: wantedCuda }: MissingBuild,
  kb: KnowledgeBase,
): Fix[] {
  const fixes: Fix[] = [];
  const nearestTag = wantedCuda ? nearestCudaBuild(release, wantedCuda) : undefined;
  if (nearestTag) {
    const clause = pkg.clauses[0];
    fixes.push({
      title: `${pkg.rawName} ${version}+${nearestTag} (same version, CUDA ${cudaFromTag(nearestTag)})`,
      safety: 'unsafe',
      edits:
        pkg.localLabel && clause ? versionEdit({ file, pkg }, `${publicVersion(clause.version)}+${nearestTag}`) : [],
    });
  }
  const torchVersion = pkg.name === 'torch' ? version : release.version;
  const other = wantedCuda ? nearestReleaseWithCuda(kb, torchVersion, wantedCuda) : undefined;
  if (other) {
    const wanted =
      pkg.name === 'torch' ? other.version : pkg.name === 'torchvision' ? other.torchvision[0] : other.torchaudio[0];
    if (wanted) {
      const label = pkg.localLabel ? `+${pkg.localLabel}` : '';
      fixes.push({
        title: `${pkg.rawName} ${wanted}${label} (nearest release with a ${tagFromCuda(wantedCuda)} build)`,
        safety: 'unsafe',
        edits: versionEdit({ file, pkg }, `${wanted}${label}`),
      });
    }
  }
  return fixes;
}

/** The edit that writes a pin's version anew, where the file spells it as read (else none: the option says it). */
function versionEdit({ file, pkg }: Pin, text: string): TextEdit[] {
  const clause = pkg.clauses[0];
  if (!clause || file.source.text.slice(clause.versionSpan.start, clause.versionSpan.end) !== clause.version) return [];
  return [{ path: file.path, range: [clause.versionSpan.start, clause.versionSpan.end], text }];
}

function suggestionText(fixes: readonly Fix[]): string {
  return fixes.length === 0 ? '' : ` Builds that exist: ${fixes.map((fix) => fix.title).join('; ')}.`;
}

function checkUnknown(file: ParsedFile, pkg: PackageFact, kb: KnowledgeBase, report: Reporter<MessageId>): void {
  const version = publicVersion(pkg.exact ?? '');
  const line = kb.releaseLine(pkg.name as 'torch' | 'torchvision' | 'torchaudio');
  if (line.versions.has(version) || !/^\d+\.\d+\.\d+$/.test(version)) return;
  const minor = minorOf(version);
  const newestOfMinor = line.newestOfMinor.get(minor);
  const newest = kb
    .torchReleases()
    .filter((release) => release.confidence !== 'unverified')
    .at(-1)!;
  // A version newer than every known one is newer than our data: a notice with the data's date, never silence.
  if (compareDotted(version, line.newest ?? '0') > 0) {
    report({
      messageId: 'newerVersion',
      data: {
        name: pkg.rawName,
        version,
        newest: line.newest ?? '',
        retrieved: newest.retrieved,
        source: cite(newest),
      },
      file,
      span: pkg.span,
      severity: 'notice',
    });
    return;
  }
  // Older than every known one: the data does not reach back so far (torch 1.4.0 in a Horovod example), a notice.
  const oldest = [...line.versions].reduce<string | undefined>(
    (low, candidate) => (low === undefined || compareDotted(candidate, low) < 0 ? candidate : low),
    undefined,
  );
  if (oldest !== undefined && compareDotted(version, oldest) < 0) {
    report({
      messageId: 'olderVersion',
      data: { name: pkg.rawName, version, oldest, retrieved: newest.retrieved, source: cite(newest) },
      file,
      span: pkg.span,
      severity: 'notice',
    });
    return;
  }
  const staleMinor =
    newestOfMinor !== undefined &&
    compareDotted(version, newestOfMinor) > 0 &&
    compareDotted(minorOf(line.newest ?? '0'), minor) > 0;
  report({
    messageId: 'unknownVersion',
    data: {
      name: pkg.rawName,
      version,
      retrieved: newest.retrieved,
      listed: newestOfMinor
        ? `${pkg.rawName} ${minor} releases up to ${newestOfMinor}`
        : `no ${pkg.rawName} ${minor} release`,
      source: cite(newest),
    },
    file,
    span: pkg.span,
    severity: staleMinor ? 'warning' : 'notice',
  });
}

const PREVIOUS_VERSIONS =
  'https://github.com/pytorch/pytorch.github.io/blob/04862e376ea686ba351674864400db1d93113979/_get_started/previous-versions.md';

/** The conda pins of a unit that its pytorch builds are judged by. */
interface CondaPins {
  readonly conda: readonly UnitPackage[];
  readonly pytorch: UnitPackage;
  readonly pytorchCuda: UnitPackage | undefined;
  readonly cudatoolkit: UnitPackage | undefined;
  readonly published: readonly string[];
  readonly source: string;
}

/** What a pytorch spec can install from its channel, as conda reads the spec. */
interface PytorchSpec {
  readonly candidates: readonly TorchRelease[];
  readonly versions: readonly string[];
  readonly ranged: boolean;
  /** As "pytorch {{version}}" reads: `1.10`, `>=1.10,<1.11`. */
  readonly version: string;
  readonly spec: string;
  readonly channel: string | undefined;
  readonly last: string;
}

/**
 * A conda environment's pytorch and its CUDA pins, in order: pytorch-cuda versions the channel never published, a
 * pip-style `+cuXYZ` label, a release past the pytorch channel's end, CUDA selectors the release ignores, and
 * combinations of pytorch and a CUDA the channel never built.
 */
function checkConda(unit: Unit, kb: KnowledgeBase, report: Reporter<MessageId>): void {
  const conda = unit.packages.filter(({ pkg }) => pkg.ecosystem === 'conda');
  const pytorch = conda.find(({ pkg }) => pkg.name === 'pytorch' && (pkg.exact || pkg.specifier.trim()));
  const pytorchCuda = conda.find(({ pkg }) => pkg.name === 'pytorch-cuda' && condaCudaOf(pkg));
  const cudatoolkit = conda.find(({ pkg }) => pkg.name === 'cudatoolkit' && condaCudaOf(pkg));
  const published = kb.condaPytorchCudaVersions();
  const source = cite(kb.condaPytorchCuda());
  if (pytorchCuda) {
    const version = condaCudaOf(pytorchCuda.pkg)!;
    if (!published.includes(version)) {
      report({
        messageId: 'noPytorchCuda',
        data: {
          version: pytorchCuda.pkg.exact ?? pytorchCuda.pkg.specifier.trim(),
          published: published.join(', '),
          source,
        },
        file: pytorchCuda.file,
        span: pytorchCuda.pkg.span,
      });
    }
  }
  if (!pytorch) return;
  const pins: CondaPins = { conda, pytorch, pytorchCuda, cudatoolkit, published, source };
  if (checkCondaLabel(pins, report)) return;
  const spec = pytorchSpec(pytorch, kb);
  if (!spec) return;
  if (checkChannelEnded(pins, spec, kb, report)) return;
  const { candidates, channel, last } = spec;
  if (candidates.length === 0 || channel === 'conda-forge' || pytorch.pkg.channel === 'conda-forge') return;
  const onChannel =
    channel === 'pytorch' ? candidates.filter((release) => compareDotted(release.version, last) <= 0) : candidates;
  checkIgnoredSelectors(pins, spec, onChannel, report);
  checkCombinations(pins, spec, onChannel, report);
}

/** A pip-style local label on a conda pytorch (`pytorch=2.1.0+cu118`): conda has no such version. */
function checkCondaLabel({ pytorch, source }: CondaPins, report: Reporter<MessageId>): boolean {
  if (pytorch.pkg.exact?.includes('+')) {
    const label = pytorch.pkg.exact.slice(pytorch.pkg.exact.indexOf('+') + 1);
    report({
      messageId: 'condaLabel',
      data: {
        subject: describePackage(pytorch.pkg),
        label,
        public: publicVersion(pytorch.pkg.exact),
        instead: cudaFromLabel(label)
          ? `pytorch-cuda=${cudaFromLabel(label)!.cuda}`
          : 'the CUDA package of your channel',
        source,
      },
      file: pytorch.file,
      span: pytorch.pkg.span,
    });
    return true;
  }
  return false;
}

/** The releases a pytorch spec can match, and the channel it is read from; undefined where it names none. */
function pytorchSpec(pytorch: UnitPackage, kb: KnowledgeBase): PytorchSpec | undefined {
  // The releases the spec can match, as conda reads it: `pytorch=1.9` is 1.9.0 and 1.9.1, `>=1.10,<1.11` 1.10.x.
  const candidates = condaCandidates(pytorch.pkg, kb);
  // An exact version the knowledge base does not list still says whether the pytorch channel can have it.
  const versions =
    candidates.length > 0 ? candidates.map((release) => release.version) : pytorch.pkg.exact ? [pytorch.pkg.exact] : [];
  if (versions.length === 0) return undefined;
  const ranged = versions.length > 1 || versions[0] !== pytorch.pkg.exact;
  // As "pytorch {{version}}" reads: `1.10`, `>=1.10,<1.11`; the range messages name the whole spec.
  const version = ranged ? pytorch.pkg.specifier.trim().replace(/^=(?!=)/, '') : versions[0]!;
  const spec = describePackage(pytorch.pkg);
  // The channel it comes from: the only one of the two listed. With both, the solver's channel priority decides
  // (and may change); with neither, `defaults`.
  const channels = pytorch.file.contexts[pytorch.pkg.context]?.channels ?? [];
  const forge = channels.includes('conda-forge');
  const pytorchChannel = channels.includes('pytorch');
  const channel =
    pytorch.pkg.channel ??
    (forge && !pytorchChannel ? 'conda-forge' : pytorchChannel && !forge ? 'pytorch' : undefined);
  const last = kb.pytorchChannel().lastVersion;
  return { candidates, versions, ranged, version, spec, channel, last };
}

/** A release after the pytorch channel's last (2.5.1): the channel has none. */
function checkChannelEnded(
  { pytorch }: CondaPins,
  { versions, version, channel, last }: PytorchSpec,
  kb: KnowledgeBase,
  report: Reporter<MessageId>,
): boolean {
  if (channel === 'pytorch' && versions.every((candidate) => compareDotted(candidate, last) > 0)) {
    report({
      messageId: 'channelEnded',
      data: { version, last, source: cite(kb.pytorchChannel()) },
      file: pytorch.file,
      span: pytorch.pkg.span,
    });
    return true;
  }
  return false;
}

/** cudatoolkit pins and CUDA selector packages that the releases the spec allows do not read. */
function checkIgnoredSelectors(
  { conda, pytorch, pytorchCuda, cudatoolkit }: CondaPins,
  { version, channel }: PytorchSpec,
  onChannel: readonly TorchRelease[],
  report: Reporter<MessageId>,
): void {
  const lenient = onChannel.some((release) => isUnverified(release));
  if (
    channel === 'pytorch' &&
    cudatoolkit &&
    !pytorchCuda &&
    onChannel.every((release) => release.condaPytorchCuda?.length && !release.condaCudatoolkit?.length)
  ) {
    report({
      messageId: 'toolkitIgnored',
      data: {
        version,
        pytorchCuda: [...new Set(onChannel.flatMap((release) => release.condaPytorchCuda ?? []))].join(', '),
        source: cite(onChannel[0]!),
      },
      file: cudatoolkit.file,
      span: cudatoolkit.pkg.span,
      // The solver may still take a CUDA build of the same version: what it takes is not certain, so a warning.
      severity: 'warning',
      unverified: lenient,
      related: [{ file: pytorch.file, span: pytorch.pkg.span, message: `pytorch ${version} is pinned here` }],
    });
  }
  const selector = conda.find(({ pkg }) => CUDA_SELECTOR.test(pkg.name));
  if (
    selector &&
    channel !== 'conda-forge' &&
    onChannel.length > 0 &&
    onChannel.every((release) => compareDotted(release.version, '1.0.1') >= 0)
  ) {
    report({
      messageId: 'selectorIgnored',
      data: { name: selector.pkg.rawName, version, source: PREVIOUS_VERSIONS },
      file: selector.file,
      span: selector.pkg.span,
      // The solver still takes some CUDA build: which is not certain, so a warning.
      severity: 'warning',
      related: [{ file: pytorch.file, span: pytorch.pkg.span, message: `pytorch ${version} is pinned here` }],
    });
  }
}

/** Each CUDA the environment pins (pytorch-cuda, cudatoolkit, a build string) against the builds of the releases. */
function checkCombinations(
  { pytorch, pytorchCuda, cudatoolkit, published }: CondaPins,
  { ranged, version, spec }: PytorchSpec,
  onChannel: readonly TorchRelease[],
  report: Reporter<MessageId>,
): void {
  const lenient = onChannel.some((release) => isUnverified(release));
  const buildCuda = pytorch.pkg.localLabel ? cudaFromLabel(pytorch.pkg.localLabel)?.cuda : undefined;
  const checks: {
    what: string;
    cuda: string | undefined;
    list: (release: TorchRelease) => readonly string[] | undefined;
    at: { file: ParsedFile; pkg: PackageFact };
  }[] = [
    {
      what: 'pytorch-cuda',
      cuda: pytorchCuda ? condaCudaOf(pytorchCuda.pkg) : undefined,
      list: (release) => release.condaPytorchCuda,
      at: pytorchCuda ?? pytorch,
    },
    {
      what: 'cudatoolkit',
      cuda: cudatoolkit ? condaCudaOf(cudatoolkit.pkg) : undefined,
      list: (release) => release.condaCudatoolkit,
      at: cudatoolkit ?? pytorch,
    },
    {
      what: 'CUDA (build string)',
      cuda: buildCuda && buildCuda.includes('.') ? buildCuda : undefined,
      list: (release) => (release.condaPytorchCuda?.length ? release.condaPytorchCuda : release.condaCudatoolkit),
      at: pytorch,
    },
  ];
  for (const check of checks) {
    if (!check.cuda) continue;
    if (check.what === 'pytorch-cuda' && !published.includes(check.cuda)) continue; // already reported above
    const known = onChannel.filter((release) => (check.list(release)?.length ?? 0) > 0);
    if (known.length === 0) continue;
    const built = known.filter((release) => check.list(release)!.includes(check.cuda!));
    if (built.length === known.length) continue;
    // Every version the spec allows (and the knowledge base lists builds of) lacks it: conda cannot solve. Some
    // have it: the solver takes one of those, maybe not the version meant.
    const certain = built.length === 0 && known.length === onChannel.length;
    const lists = known.map((release) => `${release.version}: ${check.list(release)!.join(', ')}`).join('; ');
    report({
      messageId: ranged ? (built.length === 0 ? 'condaRangeCombination' : 'condaRangeSome') : 'condaCombination',
      data: {
        version: ranged ? spec : version,
        what: check.what,
        cuda: check.cuda,
        published: ranged ? lists : check.list(known[0]!)!.join(', '),
        some: built.map((release) => release.version).join(', '),
        spec,
        have: built.length > 1 ? 'have' : 'has',
        which: built.length > 1 ? 'one of those' : 'that one',
        source: cite(known[0]!),
      },
      file: check.at.file,
      span: check.at.pkg.span,
      unverified: lenient,
      ...(certain ? {} : { severity: 'warning' as const }),
      // A range no listed release of which has the build, where the knowledge base does not list every release's
      // builds: not certain, so the help says what is known rather than that conda cannot solve it.
      ...(!certain && built.length === 0
        ? {
            help: `None of the pytorch releases ${spec} allows that the knowledge base lists builds of has ${check.what} ${check.cuda} builds (${lists}). Source: ${cite(known[0]!)}`,
          }
        : {}),
      related:
        check.at.pkg === pytorch.pkg
          ? []
          : [{ file: pytorch.file, span: pytorch.pkg.span, message: `pytorch ${version} is pinned here` }],
    });
  }
}

/** The CUDA major.minor a pytorch-cuda or cudatoolkit spec names: `=11.3`, `11.3.1`, `==11.3.*`, `11.3|11.3.*`. */
function condaCudaOf(pkg: PackageFact): string | undefined {
  const version =
    pkg.exact ??
    (pkg.clauses.length >= 1 && pkg.clauses.every((clause) => clause.operator === '=' || clause.operator === '==')
      ? pkg.clauses[0]!.version
      : undefined);
  if (!version) return undefined;
  const minor = cudaOfVersion(version.replace(/\.?\*$/, ''));
  if (!minor) return undefined;
  // Every alternative must name the same minor (`11.3|11.3.*`).
  return pkg.clauses.every((clause) => cudaOfVersion(clause.version.replace(/\.?\*$/, '')) === minor)
    ? minor
    : undefined;
}

/** The torch releases a conda pytorch spec can install. */
function condaCandidates(pkg: PackageFact, kb: KnowledgeBase): TorchRelease[] {
  const exact = pkg.exact ? kb.torchRelease(pkg.exact) : undefined;
  if (exact && pkg.exact!.split('.').length >= 3) return [exact];
  const spec = parseCondaVersionSpec(pkg.specifier.trim() || (pkg.exact ? `=${pkg.exact}` : ''), 'exact');
  return spec ? kb.torchReleases().filter((release) => condaAdmits(spec, release.version)) : [];
}
