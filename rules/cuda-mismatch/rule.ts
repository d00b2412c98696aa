import {
  claimCuda,
  compareClaims,
  CONDA_CUDA_RELEASE_PACKAGES,
  majorsUnverified,
  pickSubject,
  withAlternative,
  type CudaClaim,
} from '../../src/analysis/claims.js';
import { claimContext, neverInOneBuild, readsUnread, type Unit } from '../../src/analysis/units.js';
import { nearestCudaBuild, nearestReleaseWithCuda } from '../../src/analysis/nearest.js';
import { releaseFor } from '../../src/analysis/torch-build.js';
import { BUILT_AGAINST_CUDA, TORCH_FAMILY } from '../../src/parsers/python-requirement.js';
import type { IndexFact, PackageFact, ParsedFile } from '../../src/parsers/facts.js';
import { cudaFromPythonName, cudaFromUrl, isPypiIndex, isPytorchIndex } from '../../src/analysis/cuda-labels.js';
import { mayHoldTogether } from '../../src/parsers/markers.js';
import type { Fix, TextEdit } from '../../src/finding.js';
import { cite, isUnverified, type KnowledgeBase, type TorchRelease } from '../../src/knowledge/index.js';
import { cudaFromTag, publicVersion, tagFromCuda } from '../../src/knowledge/versions.js';
import { defineRule, formatMessage, type RelatedDraft, type Reporter } from '../../src/rule.js';
import { checkTensorflow, TENSORFLOW_HELPS, TENSORFLOW_MESSAGES } from './tensorflow.js';

const MVC = 'https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html';
const PIP_INDEXES = 'https://pip.pypa.io/en/stable/cli/pip_install/#finding-packages';
const PIXI_SYSTEM = 'https://pixi.sh/latest/workspace/system_requirements/';
const CUDA_FEEDSTOCK =
  'conda-forge/cuda-cccl-feedstock recipe/meta.yaml (run: pin_compatible("cuda-version", max_pin="x.x"))';

const COMPATIBILITY = 'https://docs.nvidia.com/deploy/cuda-compatibility/';

/** Why builds of two CUDA versions in one install break it, by how far apart they are. */
const WHY: Readonly<Record<'major' | 'minor' | 'olderMinor', string>> = {
  major:
    'Libraries built for different CUDA majors need different runtime libraries (libcudart.so.{{foundMajor}} vs .so.{{expectedMajor}}) and cannot share one process reliably.',
  minor: `Within one CUDA major, builds for a newer minor than the CUDA they run with work only under minor-version compatibility, which has a limited feature set (no PTX JIT of newer PTX); keep them in step. Source: ${MVC}`,
  olderMinor: `A build for an older minor of the same major runs with CUDA {{expected}} (CUDA's backward compatibility), but beside what the image builds and loads from its own CUDA {{expected}} (extensions compiled with its nvcc, its libraries) it is a second CUDA in one process; keep them in step. Source: ${COMPATIBILITY}`,
};
const PIN_BUILD =
  ' Pin the build you want with a local version label (e.g. ==X.Y.Z+cu121) and an index that serves it.';

/**
 * An unpinned torch whose build depends on a Python the unit does not say (Unit.alternatives), beside a target of
 * another CUDA major than some of its builds (torch, CUDA 13.0 on Python 3.10 and later, beside `cugraph-cu12`): an
 * error where every build misses the target's major, a warning naming the Pythons where only some do.
 */
function checkAlternatives(unit: Unit, kb: KnowledgeBase, report: Reporter<MessageId>): void {
  const target = unit.target;
  if (!target || !unit.alternatives) return;
  const major = (claim: CudaClaim) => claimCuda(claim).split('.')[0];
  for (const either of unit.alternatives) {
    if (either.claims.includes(target)) continue;
    const missing = either.claims.filter((claim) => major(claim) !== major(target));
    if (missing.length === 0) continue;
    const first = either.claims[0]!;
    const builds = either.claims
      .map((claim) => `torch ${claim.newest!.replace(' on ', ` (CUDA ${claimCuda(claim)}) on `)}`)
      .join(' or ');
    const all = missing.length === either.claims.length;
    report({
      messageId: 'byPython',
      data: {
        subject: first.subject,
        builds,
        unknown: either.unknown,
        mismatch: all
          ? `whichever it is, its CUDA ${[...new Set(missing.map(claimCuda))].join(' or ')} build is of another major than`
          : `on ${missing.map((claim) => claim.newest!.split(' on ')[1]).join(', ')} its CUDA ${[...new Set(missing.map(claimCuda))].join(' or ')} build is of another major than`,
        target: target.subject,
        expected: claimCuda(target),
        expectedMajor: major(target)!,
        foundMajor: major(missing[0]!)!,
        sources: [...new Set(either.claims.flatMap((claim) => (claim.record ? [cite(claim.record)] : [])))].join('; '),
      },
      file: first.file,
      span: first.span,
      severity: all ? 'error' : 'warning',
      unverified: majorsUnverified(missing[0]!, target, kb),
      related: [
        { file: target.file, span: target.span, message: `CUDA ${claimCuda(target)} is set here (${unit.label})` },
      ],
    });
  }
}

/** The rule's messages, by id: `MessageId` types the helpers' reporter, so a misspelt id does not compile. */
const MESSAGES = {
  major: '{{subject}} is built for CUDA {{found}}, but {{target}} sets CUDA {{expected}}',
  minor: '{{subject}} is built for CUDA {{found}}, but {{target}} sets CUDA {{expected}} (same major, different minor)',
  implied: '{{subject}} installs the CUDA {{found}} build {{how}}, but {{target}} sets CUDA {{expected}}',
  impliedRange:
    'every torch release {{subject}} admits has a CUDA {{found}} build on plain PyPI, but {{target}} sets CUDA {{expected}}',
  index: '{{subject}} serves CUDA {{found}} builds, but {{target}} sets CUDA {{expected}}',
  name: '{{subject}} is named for CUDA {{found}}, but {{target}} sets CUDA {{expected}}',
  otherBuild:
    '{{subject}} is a CUDA {{found}} build on PyPI, but {{index}} may serve another build of it, so which is installed beside {{target}} (CUDA {{expected}}) is not determined',
  system:
    '{{target}} is built for CUDA {{expected}}, but {{subject}} says the machines support only CUDA {{found}}: pixi cannot solve it',
  systemDriver:
    '{{target}} is built for CUDA {{expected}}, but {{subject}} says the machines support only CUDA {{found}}: pixi installs it, and CUDA fails to start there',
  bundledRuntime:
    "{{subject}} is built for CUDA {{found}} and brings its own CUDA runtime, so the environment's {{target}} (CUDA {{expected}}) is not what it runs on",
  metaPackage:
    '{{meta}} installs builds for CUDA {{found}} ({{others}}) beside those for CUDA {{expected}} ({{matching}}), which {{target}} sets',
  condaSolve:
    '{{subject}} is a package of CUDA {{found}}, but {{target}} is one of CUDA {{expected}}: conda cannot solve the environment',
  newestTorch:
    '{{subject}} installs the newest torch it admits, today {{newest}}, a CUDA {{found}} build on plain PyPI, but {{target}} sets CUDA {{expected}}',
  newestToolkit:
    "{{subject}} installs the newest CUDA in NVIDIA's repository, today {{newest}}, but {{target}} sets CUDA {{expected}}",
  pypiOtherMachine:
    "{{subject}} installs PyPI's build for {{machine}}, whose CUDA is not known here, so it is not compared with {{target}} (CUDA {{expected}})",
  unknownIndex:
    '{{subject}} comes from {{index}}, an index whose builds are not known here, so it is not compared with {{target}} (CUDA {{expected}})',
  condaBuildUnnamed:
    '{{subject}} names no build: conda picks a CUDA or CPU build of it, which is not known here, so it is not compared with {{target}} (CUDA {{expected}})',
  ...TENSORFLOW_MESSAGES,
  byPython: '{{subject}} installs {{builds}}; {{unknown}}, and {{mismatch}} {{target}} (CUDA {{expected}})',
};
type MessageId = keyof typeof MESSAGES;

export default defineRule({
  id: 'cuda-mismatch',
  description: 'Every CUDA build in an image, environment or requirements set targets the same CUDA version',
  defaultSeverity: 'error',
  fix: 'safe',
  messages: MESSAGES,
  // `evidence` cites the record a claim rests on; `copied` says a build comes from another stage; `why` is WHY's.
  helps: {
    major: `${WHY.major}{{evidence}}{{copied}}`,
    minor: '{{why}}{{evidence}}{{copied}}',
    implied: `{{why}}{{evidence}}{{pinBuild}}{{copied}}`,
    impliedRange: `{{why}}{{evidence}}${PIN_BUILD}{{copied}}`,
    index: '{{why}}{{evidence}}{{copied}}',
    name: 'Whoever installs {{named}} expects CUDA {{found}} builds and gets CUDA {{expected}} ones. Route it to the index of the CUDA it names, or rename it.{{evidence}}{{copied}}',
    otherBuild: `PyPI's build is for CUDA {{found}}, but {{index}} is another index of this install and may serve a build of the same version for another CUDA; pip treats all indexes alike ("no priority"), so either may be installed. Install it from one index only (--index-url for that package, or a pinned wheel URL) so the build is certain.{{evidence}} Source: ${PIP_INDEXES}`,
    system: `pixi solves each environment for the virtual package __cuda that system-requirements declares, and CUDA {{expectedMajor}} builds need __cuda >= {{expectedMajor}}. Either pin builds for CUDA {{foundMajor}} (cuda-version = "{{foundMajor}}.*"), or raise the requirement if every machine's driver supports CUDA {{expected}}. Source: ${PIXI_SYSTEM}`,
    systemDriver: `system-requirements' cuda is "the maximum CUDA version supported by the installed NVIDIA driver" of the machines; PyPI packages are not solved against it, so pixi installs this build, and a CUDA {{expectedMajor}} build needs a driver of CUDA {{expectedMajor}} (no minor-version compatibility across majors: "CUDA driver version is insufficient for CUDA runtime version"). Install the build for CUDA {{foundMajor}} (its index), or raise the requirement if every machine's driver supports CUDA {{expected}}. Sources: ${PIXI_SYSTEM}; ${MVC}`,
    condaSolve: `Each package of NVIDIA's CUDA packaging (cuda, cuda-toolkit, cuda-nvcc, cuda-cccl, …) depends on the cuda-version of its own CUDA release, so packages of CUDA {{found}} and CUDA {{expected}} exclude each other and the solver fails. Pin every CUDA package to one release (or pin only cuda-version={{expected}} and leave the others unpinned).{{evidence}} Source: ${CUDA_FEEDSTOCK}`,
    newestTorch:
      "pip takes the newest release a requirement admits that supports the Python at hand, and the PyPI build of today's is for CUDA {{found}}; the pick moves as releases appear, so the build changes with the day of the build. {{pin}}{{evidence}}",
    newestToolkit:
      'NVIDIA\'s cuda-toolkit (and cuda) meta-package "handles upgrading to the latest version of CUDA when it\'s released" (CUDA 12.1 release notes, "New meta-packages for Linux installation"): it installs the newest CUDA the repository has, not the image\'s, and the pick moves as releases appear. Install the toolkit of the image\'s CUDA by its versioned name (cuda-toolkit-X-Y).{{evidence}}',
    condaBuildUnnamed:
      "The pytorch channel publishes a CPU build and CUDA builds of each pytorch release; which one conda installs is its solver's choice, told by a pytorch-cuda=X.Y (or cpuonly) beside it. Add pytorch-cuda={{expected}} (a release the channel built for it), or cpuonly. Source: https://pytorch.org/get-started/previous-versions/ (conda install pytorch==… pytorch-cuda=… -c pytorch -c nvidia)",
    unknownIndex:
      "Only PyTorch's own indexes, PyPI and PyPI's public mirrors say which CUDA a torch build is for; another index (a private one, a proxy) may serve any build under this version. Name the build (torch==X+cuYYY with PyTorch's index for that CUDA) to have it checked, or check the index's files by hand.",
    pypiOtherMachine:
      "The knowledge base records which CUDA PyPI's torch wheels are built for on Linux x86_64 only. Pin the build from a PyTorch index (torch==X+cuYYY with --index-url https://download.pytorch.org/whl/cuYYY, which serves aarch64 wheels too) to have it checked.{{evidence}}",
    ...TENSORFLOW_HELPS,
    byPython: `pip installs the newest torch release that has wheels for the Python it runs with, and PyPI's torch wheels of a release are built for one CUDA ({{sources}}): which CUDA this install gets depends on the Python. ${WHY.major} Pin torch to a release built for CUDA {{expected}} (from the PyTorch index of that CUDA), or build on an image whose Python is known.`,
    bundledRuntime:
      "pip's CUDA wheels (torch from PyPI or a PyTorch index, the nvidia-*-cu{{foundMajor}} libraries) carry their CUDA libraries and load those, not a conda environment's cudatoolkit, whose CUDA {{expectedMajor}} libraries have other file names: the environment runs where the driver supports CUDA {{found}}, and cudatoolkit is unused by them (PyTorch's maintainers: discuss.pytorch.org/t/103552). A conda package built against cudatoolkit {{expected}} would meet CUDA {{found}} in one process. Remove cudatoolkit, or install the builds for CUDA {{expected}}.{{evidence}}",
    metaPackage:
      "{{meta}} depends on a build for each CUDA major, so all of them are installed; the one for CUDA {{expected}} matches, and the others ({{others}}) are installed beside it without being loaded for this CUDA (NIXL's meta package, for one, imports the backend of the CUDA major torch reports: ai-dynamo/nixl, src/bindings/python/nixl-meta/README.md). Nothing to fix; where their size matters, exclude {{others}} (e.g. with uv's override-dependencies), keeping {{meta}}, which is what its users import. Source: the dependencies the lock records for {{meta}}.",
  },
  check({ units, kb, report }) {
    for (const unit of units) {
      const target = unit.target;
      if (!target) continue;
      // pixi's system requirement is a floor, compared with the builds alone (checkFloors).
      const mismatches = unit.claims.flatMap((claim) => {
        // A build an index decides is said at the index's own claim, unless no file writes the index (Cog's).
        if (claim === target || (claim.kind === 'implied' && claim.index && !claim.index.addedBy)) return [];
        if (claim.kind === 'system') return [];
        // Alternatives by marker (`torch==2.0.1 ; python_version < "3.9"` beside `torch==2.5.1 ; python_version >=
        // "3.9"`) are never installed together.
        if (!mayHoldTogether(claim.package?.markers, target.package?.markers)) return [];
        // An index a pyproject routes to on some machines only (`marker = "platform_machine == 'aarch64'"` on its
        // [tool.uv.sources] entry) is never installed from beside a pin of another machine (Kokoro-FastAPI).
        if (!mayHoldTogether(claim.index?.machines, target.package?.markers)) return [];
        if (!mayHoldTogether(claim.package?.markers, target.index?.machines)) return [];
        const relation = compareClaims(claim, target);
        if (relation === 'same') return [];
        // The two branches of an `if` a build argument decides are never installed in one build.
        if (neverInOneBuild(unit, claimContext(claim), claimContext(target))) return [];
        // NVIDIA's component wheels of one major at different minors (levanter's lock: nvcc 12.9.86 beside cupti
        // 12.8.90, as jax-cuda12-plugin's independent floors resolve) are separate libraries, each loaded on its own;
        // neither is the CUDA the other runs on, so the first one listed is no target to hold the rest to.
        if (relation === 'minor' && claim.kind === 'nvidia-wheel' && target.kind === 'nvidia-wheel') return [];
        // A range whose every release is of another major says so, whatever release pip takes today.
        if (relation === 'major' && claim.certainMajor) return [{ claim: claim.certainMajor, relation }];
        return [{ claim, relation }];
      });
      // Builds a meta-package pulls in for every CUDA major (nixl on nixl-cu12 and nixl-cu13), whose sibling for the
      // target's CUDA is there too: one notice for the meta-package, not an error for each build.
      const meta = byMetaPackage(unit, mismatches, target);
      for (const group of meta.values()) reportMetaPackage(unit, group, target, report);
      const own = mismatches.filter(({ claim }) => ![...meta.values()].some((group) => group.claims.includes(claim)));
      // One fix moves every mismatching build of the unit at once (torch labels and their index together): a
      // label moved without its index, or the other way round, gives a build no index serves.
      const edits = unitEdits(
        unit,
        own.map(({ claim }) => claim),
        target,
        kb,
      );
      // Only beside a torch whose own finding is of the same kind: one softened to a warning (another index may serve
      // another build, a pip wheel beside conda's cudatoolkit) must not take the wheels' errors with it. Beside a conda
      // cudatoolkit every pip wheel is the same warning, with no fix: those torch loads are said at torch's, in any
      // file (a `conda env export` lists torch's dependencies as a lock does).
      const dependencies = torchDependencies([
        ...own.filter(({ claim }) => !otherSource(unit, claim) && !bundlesRuntime(unit, claim, target)),
        ...own.filter(({ claim }) => bundlesRuntime(unit, claim, target)).map((entry) => ({ ...entry, bundled: true })),
      ]);
      for (const { claim, relation } of own)
        if (!dependencies.folded.has(claim))
          reportMismatch(
            { unit, claim, target, relation, unitFix: edits, dependencies: dependencies.of.get(claim) },
            kb,
            report,
          );
    }
    for (const unit of units) checkAlternatives(unit, kb, report);
    for (const unit of units) checkFloors(unit, report);
    for (const unit of units) checkTensorflow(unit, kb, report);
    for (const unit of units) if (unit.target) reportUnknownBuilds(unit, unit.target, report);
  },
});

/** The mismatching builds one meta-package alone pulls in, and its builds that match the target. */
interface MetaGroup {
  readonly meta: string;
  readonly claims: CudaClaim[];
  readonly matching: CudaClaim[];
}

/**
 * Mismatching builds that have a sibling for the target's CUDA, the same package built for another major (`nixl-cu12`
 * beside `nixl-cu13`, `nvidia-cutlass-dsl-libs-cu12` beside `-cu13`), which a direct dependency the lock names pulls in
 * with them (`pulledInBy`): a meta-package with one build per CUDA major, grouped by that dependency. A build with no
 * such sibling (`cuda-python` 13 beside a CUDA 12 torch, whatever else its puller brings) is a mismatch of its own.
 */
function byMetaPackage(
  unit: Unit,
  mismatches: readonly { claim: CudaClaim }[],
  target: CudaClaim,
): Map<string, MetaGroup> {
  const groups = new Map<string, MetaGroup>();
  for (const { claim } of mismatches) {
    const pkg = claim.package;
    const family = pkg && cudaFamily(pkg.name);
    if (!pkg?.pulledInBy || !family || claim.kind === 'implied') continue;
    // Builds that match the target as precisely as this one misses it: for a miss within the major (12.6 under
    // 12.9), a `-cu12` package whose minor is not known matches nothing (NeMo-RL's uv.lock: torch 2.7.0's cublas
    // 12.6.4.1 is no CUDA 12.9 build).
    const withinMajor = claimCuda(claim).split('.')[0] === claimCuda(target).split('.')[0];
    const siblings = unit.claims.filter(
      (other) =>
        other !== target &&
        other.kind !== 'implied' &&
        other.package !== undefined &&
        other.package.name !== pkg.name &&
        cudaFamily(other.package.name) === family &&
        (!withinMajor || other.precision === 'minor') &&
        compareClaims(other, target) === 'same',
    );
    const meta = pkg.pulledInBy.find((name) => siblings.some((sibling) => sibling.package!.pulledInBy?.includes(name)));
    if (meta === undefined) continue;
    let group = groups.get(meta);
    if (!group) groups.set(meta, (group = { meta, claims: [], matching: [] }));
    group.claims.push(claim);
    for (const sibling of siblings)
      if (sibling.package!.pulledInBy?.includes(meta) && !group.matching.includes(sibling))
        group.matching.push(sibling);
  }
  return groups;
}

/**
 * A package name with the CUDA it names blanked out (`nixl-cu12` and `nixl-cu13` → `nixl-cu*`, `cupy-cuda12x` →
 * `cupy-cuda*x`), or undefined where the name says none (cudaFromPythonName reads where it says it).
 */
function cudaFamily(name: string): string | undefined {
  const range = cudaFromPythonName(name)?.range;
  return range ? `${name.slice(0, range[0])}*${name.slice(range[1])}` : undefined;
}

function reportMetaPackage(unit: Unit, group: MetaGroup, target: CudaClaim, report: Reporter<MessageId>): void {
  const first = group.claims[0]!;
  const metaPin = unit.packages.find(
    ({ file, pkg }) => file === first.file && pkg.name === group.meta && pkg.context === first.package?.context,
  );
  const names = (claims: readonly CudaClaim[]) =>
    [...new Set(claims.map((claim) => claim.package!.rawName))].join(', ');
  const version = metaPin?.pkg.exact ? ` ${metaPin.pkg.exact}` : '';
  report({
    messageId: 'metaPackage',
    data: {
      meta: `${metaPin?.pkg.rawName ?? group.meta}${version}`,
      found: [...new Set(group.claims.map((claim) => claimCuda(claim)))].join(', '),
      others: names(group.claims),
      expected: claimCuda(target),
      matching: names(group.matching),
      target: target.subject,
    },
    file: metaPin?.file ?? first.file,
    span: metaPin?.pkg.nameSpan ?? first.span,
    // Nothing in it is wrong: the build of the other major is installed, never loaded.
    severity: 'notice',
    related: [
      ...group.claims.map((claim) => ({
        file: claim.file,
        span: claim.span,
        message: `${claim.subject}: CUDA ${claimCuda(claim)}, pulled in by ${group.meta} alone`,
      })),
      { file: target.file, span: target.span, message: `CUDA ${claimCuda(target)} is set here (${unit.label})` },
    ],
  });
}

/**
 * The edits that move every mismatching claim of a unit that can move to the target's CUDA, or undefined when a
 * torch build cannot (no build for that CUDA) or a claim is installed in another stage.
 */
function unitEdits(
  unit: Unit,
  claims: readonly CudaClaim[],
  target: CudaClaim,
  kb: KnowledgeBase,
): TextEdit[] | undefined {
  if (target.precision !== 'minor' || claims.length === 0) return undefined;
  const expected = claimCuda(target);
  const edits: TextEdit[] = [];
  for (const claim of claims) {
    if (claim.kind === 'implied') continue; // a plain pin follows its index (servesAfterMove)
    if (copiedIn(unit, claim)) return undefined;
    // An index that moves takes the pins it serves with it: each must have the build there (torch 2.7.1 from
    // /whl/cu128 has no cu124 build to move to).
    if (claim.kind === 'index' && claim.index && !servesAfterMove(unit, claim.index, tagFromCuda(expected), kb))
      return undefined;
    const own = claim.rewrite?.(expected);
    // A torch build that cannot move blocks the move of its index; another project's wheel (nvidia-cudnn-cu11)
    // stays as it is, with its own finding.
    // So does a conda pin of one build (`cuda-version=11.8=h70ddcb2_3` in a lock, `cuda-cccl=12.2.140=0`): no other
    // version has that build, and the unit moved without it does not solve.
    if (!own && claim.package && (TORCH_FAMILY.has(claim.package.name) || claim.package.build)) return undefined;
    if (own) edits.push(...own);
  }
  return edits.length ? edits : undefined;
}

/** Whether every torch-family pin an index serves in the unit has a build of `tag` (what the index moves to). */
function servesAfterMove(unit: Unit, index: IndexFact, tag: string, kb: KnowledgeBase): boolean {
  return unit.packages.every(
    ({ pkg, build }) =>
      build?.index !== index ||
      !TORCH_FAMILY.has(pkg.name) ||
      !pkg.exact ||
      !build.release ||
      kb.torchBuilds(build.release).has(tag),
  );
}

/** A build installed in another stage and copied into this one (COPY --from=build /opt/conda …). */
function copiedIn(unit: Unit, claim: CudaClaim): boolean {
  return (
    unit.stage !== undefined &&
    claim.file === unit.root &&
    claim.context !== undefined &&
    claim.file.contexts[claim.context]?.stage !== unit.stage
  );
}

/**
 * For a build known only as PyPI's (onnxruntime-gpu, paddlepaddle-gpu versions): another index or find-links page of
 * the same install, which may hold another build of that version. The PyTorch index serves the torch family only.
 */
function otherSource(unit: Unit, claim: CudaClaim): IndexFact | undefined {
  if (claim.kind !== 'library' || !claim.package || claim.package.localLabel || claim.package.url) return undefined;
  const entry = unit.packages.find(({ pkg }) => pkg === claim.package);
  return entry?.invocation?.indexes.find(
    (index) =>
      (index.kind === 'extra-index-url' || index.kind === 'index-url' || index.kind === 'find-links') &&
      !isPytorchIndex(index.url) &&
      !isPypiIndex(index.url),
  );
}

/** The packages the PyTorch index serves in CUDA builds (the rest of it mirrors PyPI's pure-Python wheels). */
const CUDA_ON_PYTORCH_INDEX: ReadonlySet<string> = new Set([
  ...TORCH_FAMILY,
  'xformers',
  'torchrec',
  'fbgemm-gpu',
  'torch-tensorrt',
  'torchao',
  'torchcodec',
]);

/**
 * A PyTorch index that nothing of the install takes a CUDA build from (`--extra-index-url …/cu118` above numpy and
 * requests): it is set up wrong, but no build of the wrong CUDA is installed, so no certain error. Not where the
 * install reads a file the gate could not (it may install torch).
 */
function unusedIndex(unit: Unit, claim: CudaClaim): boolean {
  const index = claim.index;
  if (claim.kind !== 'index' || !index || !isPytorchIndex(index.url)) return false;
  const served = unit.packages.filter(({ invocation }) => invocation?.indexes.includes(index));
  const invocation = unit.invocations.find((candidate) => candidate.indexes.includes(index));
  return !!invocation && !readsUnread(invocation) && !served.some(({ pkg }) => CUDA_ON_PYTORCH_INDEX.has(pkg.name));
}

/** A claim of a unit that disagrees with the unit's target, how far apart they are, and the unit's safe edits. */
interface Mismatch {
  readonly unit: Unit;
  readonly claim: CudaClaim;
  readonly target: CudaClaim;
  readonly relation: 'minor' | 'major';
  /** The edits that move the whole unit to the target, when they can be made. */
  readonly unitFix: readonly TextEdit[] | undefined;
  /** The CUDA library wheels a lock records for this torch build, said with it (torchDependencies). */
  readonly dependencies?: readonly CudaClaim[];
}

/** Lock files, whose pip packages include every dependency resolved, each pinned by what requires it. */
const PIP_LOCKS: ReadonlySet<string> = new Set(['uv-lock', 'poetry-lock', 'pdm-lock', 'pipfile-lock', 'pixi-lock']);

/**
 * The CUDA library wheels of a lock (`nvidia-cuda-runtime-cu12==12.6.77`) beside a torch of the same lock that misses
 * the target with the same CUDA: each torch build pins the ones it loads (torch 2.7.0's metadata requires
 * nvidia-cuda-runtime-cu12==12.6.77), so they are its dependencies, and moving torch moves them. Said as related
 * locations of torch's finding, not as one finding per wheel. A wheel a file names itself (a requirements file, a
 * project's dependencies) keeps its own finding.
 */
function torchDependencies(
  mismatches: readonly {
    claim: CudaClaim;
    relation: 'minor' | 'major';
    /** A bundled-runtime warning (bundlesRuntime): folded whatever file names it, into torch's of the same kind. */
    bundled?: boolean;
  }[],
): {
  readonly folded: ReadonlySet<CudaClaim>;
  readonly of: ReadonlyMap<CudaClaim, CudaClaim[]>;
} {
  const folded = new Set<CudaClaim>();
  const of = new Map<CudaClaim, CudaClaim[]>();
  for (const { claim, relation, bundled } of mismatches) {
    const name = claim.package?.name;
    if (claim.kind !== 'nvidia-wheel' || !name || !PIP_RUNTIME.test(name)) continue;
    if (!bundled && !PIP_LOCKS.has(claim.file.kind)) continue;
    const torch = mismatches.find(
      (other) =>
        other.relation === relation &&
        other.bundled === bundled &&
        other.claim.file === claim.file &&
        other.claim.package?.name === 'torch' &&
        // `nvidia-cublas-cu12==12.1.3.1` says only its major: torch 2.1.2+cu121 requires it.
        (claim.precision === 'major'
          ? claimCuda(other.claim).split('.')[0] === claim.cuda
          : claimCuda(other.claim) === claimCuda(claim)),
    )?.claim;
    if (!torch) continue;
    folded.add(claim);
    (of.get(torch) ?? of.set(torch, []).get(torch)!).push(claim);
  }
  return { folded, of };
}

/**
 * A pip wheel that carries its own CUDA runtime beside a conda environment whose CUDA is set by `cudatoolkit` alone
 * (a `conda env export` of torch installed by pip, NeMo's voice-agent environment): the wheel loads its own libraries,
 * so the two CUDAs do not meet in one process unless a conda package built for cudatoolkit is there too.
 */
function bundlesRuntime(unit: Unit, claim: CudaClaim, target: CudaClaim): boolean {
  return (
    target.package?.ecosystem === 'conda' &&
    target.package.name === 'cudatoolkit' &&
    claim.package?.ecosystem === 'pip' &&
    (claim.kind === 'implied' || PIP_RUNTIME.test(claim.package.name) || TORCH_FAMILY.has(claim.package.name)) &&
    !unit.claims.some(
      (other) => other !== target && other.package?.ecosystem === 'conda' && compareClaims(other, target) === 'same',
    )
  );
}

/** The CUDA library wheels a torch build requires, as related locations of its finding (torchDependencies). */
function requiredLibraries(dependencies: readonly CudaClaim[] | undefined): RelatedDraft[] {
  return (dependencies ?? []).map((dependency) => ({
    file: dependency.file,
    span: dependency.span,
    message: `${dependency.subject}: CUDA ${claimCuda(dependency)}, a library this torch build requires`,
  }));
}

/** pip's CUDA libraries, which torch's wheels load: nvidia-cublas-cu12, nvidia-cuda-runtime-cu12, … */
const PIP_RUNTIME = /^nvidia-[a-z0-9-]+-cu\d+$/;

function reportMismatch(mismatch: Mismatch, kb: KnowledgeBase, report: Reporter<MessageId>): void {
  const { unit, claim, target, relation, unitFix, dependencies } = mismatch;
  const expected = claimCuda(target);
  const found = claimCuda(claim);
  // A build installed in another stage and copied into this one (COPY --from=build /opt/conda …) is right for its
  // own stage's image: rewriting it would move the mismatch there. A person picks which side changes.
  const copied = copiedIn(unit, claim);
  const edits = !copied && claim.kind !== 'implied' ? unitFix : undefined;
  const fix: Fix | undefined = edits
    ? {
        title: `Build for CUDA ${expected}${edits.length > 1 ? ` (${edits.length} edits in ${unit.label})` : ''}`,
        safety: 'safe',
        edits,
      }
    : undefined;
  // torch 2.6.0+cu124 under a CUDA 12.8 image: 2.6.0 has no cu128 build, so the options are another build of the
  // same version or the nearest release that has one, moved with its companions.
  const options =
    !edits && !copied && target.precision === 'minor'
      ? [...torchOptions(unit, claim, expected, kb), ...olderIndexOption(unit, claim, expected, kb)]
      : [];
  const implied = claim.kind === 'implied';
  const how = implied
    ? claim.package && !claim.index
      ? 'that plain PyPI gives on Linux x86_64'
      : claim.index?.addedBy
        ? `from the index ${claim.index.addedBy} adds for it (${claim.index.url})`
        : 'from its index'
    : '';
  const majors = { foundMajor: found.split('.')[0]!, expectedMajor: expected.split('.')[0]! };
  // A wheel by address of a package not known to load its CUDA into the process with torch's (llama_cpp_binaries
  // runs its llama-server as a process of its own, with the CUDA runtime its wheel carries): whether its CUDA meets the
  // image's is not known, so another major is no certain failure.
  const unknownWheel =
    claim.kind === 'wheel-url' && relation === 'major' && !BUILT_AGAINST_CUDA.has(claim.package?.name ?? '');
  // A library that loads its CUDA's libraries from the machine (onnxruntime-gpu, ctranslate2: cuBLAS by its soname)
  // beside a pip environment's torch, where nothing says the machine's CUDA (no image, no conda toolkit): the
  // machine may hold that major's libraries too, and then each loads its own. Certain only where the unit says them.
  const machineUnknown =
    relation === 'major' &&
    (claim.kind === 'library' || target.kind === 'library') &&
    !unit.claims.some((one) => one.kind === 'image' || one.kind === 'env' || isCondaToolkit(one));
  const evidence =
    (claim.record ? ` Fact: ${cite(claim.record)}.` : '') +
    (unknownWheel
      ? ` Whether this package's wheel carries its CUDA ${majors.foundMajor} runtime, or runs its CUDA code in a process of its own, is not known here; where it does, a driver for CUDA ${expected} runs it.`
      : '') +
    (machineUnknown ? machineNote(claim.kind === 'library' ? claim : target) : '');
  /** A mismatch that is no certain failure: a warning at the claim, the target's line related. */
  const warn = (messageId: 'otherBuild' | 'bundledRuntime', data: Record<string, string>) =>
    report({
      messageId,
      data: { subject: claim.subject, found, target: pickSubject(target), expected, evidence, ...data },
      file: claim.file,
      span: claim.span,
      severity: 'warning',
      unverified: isUnverified(claim.record) || isUnverified(target.record),
      related: [
        { file: target.file, span: target.span, message: `CUDA ${expected} is set here (${unit.label})` },
        ...requiredLibraries(dependencies),
      ],
    });
  const elsewhere = otherSource(unit, claim);
  // onnxruntime-gpu==1.18.0 is a CUDA 11.8 build on PyPI and a CUDA 12 build on ORT's CUDA-12 feed: with both
  // indexes pip takes either (it has no priority between indexes), so the build is not a fact to gate on.
  if (elsewhere) return warn('otherBuild', { index: elsewhere.url });
  if (bundlesRuntime(unit, claim, target)) return warn('bundledRuntime', majors);
  const unsolvable = condaExcludes(claim, target);
  const refusesImport = relation === 'minor' && torchaudioRefuses(unit, claim);
  report({
    messageId: unsolvable ? 'condaSolve' : mismatchMessage(claim, relation),
    data: {
      subject: claim.subject,
      found,
      target: pickSubject(target),
      expected,
      how,
      named: claim.subject.replace(/^the /, ''),
      newest: claim.newest ?? '',
      why: refusesImport
        ? TORCHAUDIO_CHECK
        : formatMessage(WHY[relation === 'minor' && olderMinor(found, expected) ? 'olderMinor' : relation], {
            ...majors,
            expected,
          }),
      pin: claim.newest && claim.kind !== 'apt' ? pinAdvice(expected, kb) : '',
      pinBuild: claim.index?.addedBy
        ? ` ${claim.index.addedBy} installs the newest build of this release whose CUDA is at most its build.cuda, and strips a local version label: set build.cuda to the CUDA of a build this release has, or pin a release that has a CUDA ${expected} build. Source: https://github.com/replicate/cog/blob/6110c912377d4ded0f57165d305821a14a9a4418/pkg/config/compatibility.go (torchGPUPackage)`
        : PIN_BUILD,
      ...majors,
      evidence,
      copied: copied
        ? ` This build is installed in another stage and copied into ${unit.label}: change the build or this stage's image.`
        : '',
    },
    file: claim.file,
    span: claim.span,
    severity:
      ((relation === 'major' || unsolvable) && !unusedIndex(unit, claim) && !unknownWheel && !machineUnknown) ||
      refusesImport
        ? 'error'
        : 'warning',
    // Majors that differ rest only on the two majors: an unverified row whose major is certain does not soften it.
    unverified:
      relation === 'major' && !unsolvable
        ? majorsUnverified(claim, target, kb)
        : isUnverified(claim.record) || isUnverified(target.record),
    related: [
      { file: target.file, span: target.span, message: `CUDA ${expected} is set here (${unit.label})` },
      ...requiredLibraries(dependencies),
    ],
    ...(fix ? { fix } : {}),
    ...(options.length ? { suggestions: options } : {}),
  });
}

/**
 * Whether two conda pins of NVIDIA's split CUDA packages (12.0 on) name different CUDA releases where the environment
 * takes them from conda-forge alone: there each depends on the cuda-version of its own release, so no environment
 * holds both. The nvidia channel's early 12.x packages do not (a real pixi.lock solves cuda 12.1.0 beside cuda-cccl
 * 12.6.77 from it), and a lock records what was solved: neither is certain, so both keep the plain mismatch.
 */
/**
 * torchaudio compares the CUDA it was built with, major and minor, against torch's at import and raises where they
 * differ (pytorch/audio, torchaudio/_extension/utils.py, `_check_cuda_version`): a build of another minor than the
 * unit's torch does not load, which backward compatibility does not change (torchvision checks the major alone).
 */
function torchaudioRefuses(unit: Unit, claim: CudaClaim): boolean {
  if (claim.package?.name !== 'torchaudio' || claim.precision !== 'minor') return false;
  // The torch installed with it: not one of another Python's or machine's alternatives (markers).
  const torch = unit.claims.find(
    (one) =>
      one.precision === 'minor' &&
      (one.package?.name === 'torch' || (one.package?.name === 'pytorch' && one.package.ecosystem === 'conda')) &&
      mayHoldTogether(one.package.markers, claim.package?.markers),
  );
  return torch !== undefined && claimCuda(torch) !== claimCuda(claim);
}

const TORCHAUDIO_CHECK =
  'torchaudio checks the CUDA it was built with against torch\'s at import, to the minor, and stops: "Detected that PyTorch and TorchAudio were compiled with different CUDA versions" (pytorch/audio, torchaudio/_extension/utils.py, _check_cuda_version).';

/** Why a library's other CUDA major is no certain failure where the unit does not say the machine's CUDA. */
function machineNote(library: CudaClaim): string {
  const major = claimCuda(library).split('.')[0]!;
  return ` ${library.subject} loads the CUDA ${major} libraries it needs (cuBLAS, cuDNN) from the machine or from NVIDIA's wheels, and nothing here says which CUDA the machine has: where it has them too, each loads its own.`;
}

/** A conda package of NVIDIA's CUDA (cudatoolkit, cuda-toolkit, cuda-runtime …): the environment's own libraries. */
function isCondaToolkit(claim: CudaClaim): boolean {
  return claim.kind === 'conda' || claim.kind === 'conda-channel';
}

function condaExcludes(claim: CudaClaim, target: CudaClaim): boolean {
  const split = (one: CudaClaim): boolean =>
    one.kind === 'conda' &&
    one.precision === 'minor' &&
    one.package?.ecosystem === 'conda' &&
    one.file.kind === 'conda' &&
    CONDA_CUDA_RELEASE_PACKAGES.has(one.package.name) &&
    Number.parseInt(claimCuda(one), 10) >= 12 &&
    (one.package.channel ?? 'conda-forge') === 'conda-forge' &&
    condaForgeOnly(one.file);
  return split(claim) && split(target) && claimCuda(claim) !== claimCuda(target);
}

/** Whether a conda environment file lists conda-forge and no other channel. */
function condaForgeOnly(file: ParsedFile): boolean {
  const channels = file.indexes.filter((index) => index.kind === 'conda-channel' && !index.ignoredReason);
  return (
    channels.length > 0 &&
    channels.every((index) => /^(conda-forge|https:\/\/conda\.anaconda\.org\/conda-forge\/?)$/.test(index.url))
  );
}

/**
 * Builds whose CUDA is not known, said at their line, never passed: PyPI's on a machine the knowledge does not record
 * (aarch64), and any from an index that is neither PyTorch's nor PyPI (nor a mirror of it).
 */
/** conda packages that decide which build of pytorch the pytorch channel's solver takes. */
const CONDA_BUILD_SELECTORS: ReadonlySet<string> = new Set([
  'pytorch-cuda',
  'cpuonly',
  'cudatoolkit',
  'pytorch-mutex',
  'cuda-version',
]);

function reportUnknownBuilds(unit: Unit, target: CudaClaim, report: Reporter<MessageId>): void {
  // conda's pytorch from the pytorch channel with nothing that names its build (pytorch-cuda, cpuonly, cudatoolkit, a
  // build string): the solver's pick (allenai/OLMo's `conda install -y pytorch::pytorch==2.5.1` on a CUDA 12.1 image).
  const named = unit.packages.some(({ pkg }) => pkg.ecosystem === 'conda' && CONDA_BUILD_SELECTORS.has(pkg.name));
  for (const { pkg, file } of unit.packages) {
    if (named || pkg.ecosystem !== 'conda' || pkg.name !== 'pytorch' || pkg.build || !pkg.exact) continue;
    const channels = file.contexts[pkg.context]?.channels ?? [];
    if (pkg.channel !== 'pytorch' && !(pkg.channel === undefined && channels.includes('pytorch'))) continue;
    if (!mayHoldTogether(pkg.markers, target.package?.markers)) continue;
    report({
      messageId: 'condaBuildUnnamed',
      data: {
        subject: withAlternative(file, pkg.context, `${pkg.rawName}${pkg.specifier}`),
        target: target.subject,
        expected: claimCuda(target),
      },
      file,
      span: pkg.span,
      severity: 'notice',
    });
  }
  for (const { pkg, file, build } of unit.packages) {
    const index =
      build?.source === 'index-url' &&
      !build.cpu &&
      build.cuda === undefined &&
      /^https?:\/\/[^$\s]+$/.test(build.index?.url ?? '')
        ? build.index
        : undefined;
    // An index whose URL names its CUDA (a mirror's `/whl/cu121`) is compared by that claim.
    if (index && !build!.missing && !isPytorchIndex(index.url) && !isPypiIndex(index.url) && !cudaFromUrl(index.url)) {
      report({
        messageId: 'unknownIndex',
        data: {
          subject: withAlternative(file, pkg.context, `${pkg.rawName}${pkg.specifier}`),
          index: index.url,
          target: target.subject,
          expected: claimCuda(target),
        },
        file,
        span: pkg.span,
        severity: 'notice',
      });
      continue;
    }
    if (!build?.unknownOnMachine) continue;
    // A target never installed beside it (an extra's `torch==2.7.1+cu128; platform_machine != 'aarch64'` beside its
    // aarch64 fallback): nothing to say of the pair.
    if (!mayHoldTogether(pkg.markers, target.package?.markers)) continue;
    report({
      messageId: 'pypiOtherMachine',
      data: {
        subject: withAlternative(file, pkg.context, `${pkg.rawName}${pkg.specifier}`),
        machine: build.unknownOnMachine,
        target: target.subject,
        expected: claimCuda(target),
        evidence: build.release ? ` Fact: ${cite(build.release)}.` : '',
      },
      file,
      span: pkg.span,
      severity: 'notice',
    });
  }
}

/** Whether a build's CUDA is an older minor of the same major than the CUDA it is compared with (12.1 beside 12.4). */
function olderMinor(found: string, expected: string): boolean {
  const [fMajor, fMinor] = found.split('.').map(Number);
  const [eMajor, eMinor] = expected.split('.').map(Number);
  return fMajor === eMajor && fMinor !== undefined && eMinor !== undefined && fMinor < eMinor;
}

/**
 * What to pin instead of a range whose newest pick has the wrong CUDA: a release with a build for the image's CUDA
 * where PyTorch publishes one; else the image moved to the nearest CUDA of its major that PyTorch builds for.
 */
function pinAdvice(expected: string, kb: KnowledgeBase): string {
  const tag = tagFromCuda(expected);
  const index = (t: string) => `--index-url https://download.pytorch.org/whl/${t}`;
  if (kb.publishesTorchBuild(tag))
    return `Pin torch to a release with a CUDA ${expected} build, from the index that serves it (torch==X+${tag} with ${index(tag)}).`;
  const major = expected.split('.')[0]!;
  const nearest = [...new Set(kb.torchReleases().flatMap((release) => [...kb.torchBuilds(release)]))]
    .map((t) => cudaFromTag(t))
    .filter((cuda): cuda is string => cuda !== undefined && cuda.split('.')[0] === major)
    .sort((a, b) => Math.abs(minorNumber(a) - minorNumber(expected)) - Math.abs(minorNumber(b) - minorNumber(expected)))
    .slice(0, 2)
    .sort((a, b) => minorNumber(a) - minorNumber(b));
  return `PyTorch publishes no CUDA ${expected} build: move the image to a CUDA it builds for${nearest.length ? ` (the nearest: CUDA ${nearest.join(' or ')})` : ''}, and pin torch to that build from its index (torch==X+cuYYY with ${index('cuYYY')}).`;
}

function minorNumber(cuda: string): number {
  return Number(cuda.split('.')[1] ?? 0);
}

/**
 * Which message says a mismatch: by what the claim is (a plain pin's index, an index, a name), else by the distance.
 */
function mismatchMessage(
  claim: CudaClaim,
  relation: 'major' | 'minor',
): 'major' | 'minor' | 'implied' | 'impliedRange' | 'index' | 'name' | 'newestTorch' | 'newestToolkit' {
  if (claim.newest) return claim.kind === 'apt' ? 'newestToolkit' : 'newestTorch';
  if (claim.kind === 'implied') return claim.precision === 'major' && !claim.index ? 'impliedRange' : 'implied';
  if (claim.kind === 'index' || claim.kind === 'conda-channel') return 'index';
  if (claim.kind === 'name') return 'name';
  return relation;
}

/**
 * A build for a newer CUDA major than pixi's `system-requirements.cuda`: conda-forge's CUDA builds need `__cuda`
 * of their major (cuda-version X.Y constrains `__cuda >=X`), so pixi finds no solution for the machines the
 * manifest describes (pixi.sh/latest/workspace/system_requirements). Raising the requirement is a choice about
 * those machines, never a safe fix.
 */
function checkFloors(unit: Unit, report: Reporter<MessageId>): void {
  const floors = unit.claims.filter((claim) => claim.kind === 'system');
  if (floors.length === 0) return;
  // The conda builds the environment installs, which the solver matches with __cuda: not the image (pixi does
  // not look at it), not PyPI wheels (their resolution ignores __cuda), not names.
  let newest: CudaClaim | undefined;
  for (const claim of unit.claims)
    if (
      (claim.kind === 'conda' || claim.kind === 'conda-build') &&
      claim.package?.ecosystem === 'conda' &&
      (!newest || Number.parseInt(claim.cuda, 10) > Number.parseInt(newest.cuda, 10))
    )
      newest = claim;
  if (newest)
    for (const floor of floors)
      if (Number.parseInt(newest.cuda, 10) > Number.parseInt(floor.cuda, 10)) reportFloor(unit, floor, newest, report);
  // PyPI's builds, which pixi installs whatever __cuda says: one finding per package, at its newest major.
  const pypi = new Map<PackageFact, CudaClaim>();
  for (const claim of unit.claims)
    if (
      claim.package?.ecosystem === 'pip' &&
      claim.kind !== 'system' &&
      Number.parseInt(claim.cuda, 10) > Number.parseInt(pypi.get(claim.package)?.cuda ?? '0', 10)
    )
      pypi.set(claim.package, claim);
  for (const claim of pypi.values())
    for (const floor of floors)
      if (Number.parseInt(claim.cuda, 10) > Number.parseInt(floor.cuda, 10))
        reportFloor(unit, floor, claim, report, 'systemDriver');
}

function reportFloor(
  unit: Unit,
  claim: CudaClaim,
  target: CudaClaim,
  report: Reporter<MessageId>,
  messageId: 'system' | 'systemDriver' = 'system',
): void {
  const expected = claimCuda(target);
  const edits = claim.rewrite?.(expected);
  report({
    messageId,
    data: {
      subject: claim.subject,
      found: claim.cuda,
      target: target.subject,
      expected,
      how: '',
      foundMajor: claim.cuda.split('.')[0]!,
      expectedMajor: expected.split('.')[0]!,
    },
    file: claim.file,
    span: claim.span,
    severity: 'error',
    related: [{ file: target.file, span: target.span, message: `CUDA ${expected} is set here (${unit.label})` }],
    ...(edits
      ? { suggestions: [{ title: `Require CUDA ${expected.split('.')[0]} on the machines`, safety: 'unsafe', edits }] }
      : {}),
  });
}

/**
 * A PyTorch index for a CUDA that no torch release was built for (`/whl/cu123` does not exist): the index of the newest
 * CUDA of the same major at or below it that PyTorch publishes, whose builds run with the image's CUDA (CUDA's
 * backward compatibility). Unsafe: a person checks the torch releases that index has. Not where a pin's label would
 * have to move with it.
 */
function olderIndexOption(unit: Unit, claim: CudaClaim, cuda: string, kb: KnowledgeBase): Fix[] {
  if (claim.kind !== 'index' || !claim.index || !isPytorchIndex(claim.index.url)) return [];
  if (unit.claims.some((other) => other.kind === 'wheel-tag')) return [];
  const [major, minor] = cuda.split('.').map(Number);
  for (let m = minor! - 1; m >= 0; m--) {
    const tag = tagFromCuda(`${major}.${m}`);
    if (!kb.publishesTorchBuild(tag)) continue;
    const edits = claim.rewrite?.(`${major}.${m}`);
    if (tag === tagFromCuda(claimCuda(claim)) || !edits) return [];
    return [
      {
        title: `Use the ${tag} index (CUDA ${major}.${m}: PyTorch publishes no CUDA ${cuda} builds)`,
        safety: 'unsafe',
        edits,
      },
    ];
  }
  return [];
}

/** Builds of the torch family that exist, for a torch-family pin that has no build for `cuda`. */
function torchOptions(unit: Unit, claim: CudaClaim, cuda: string, kb: KnowledgeBase): Fix[] {
  const pkg = claim.package;
  if (!pkg || pkg.ecosystem !== 'pip' || !pkg.exact || !TORCH_FAMILY.has(pkg.name) || claim.kind !== 'wheel-tag')
    return [];
  const release = releaseFor(kb, pkg, publicVersion(pkg.exact));
  if (!release) return [];
  const options: Fix[] = [];
  const found = claimCuda(claim);
  // Every pin of one release in a unit gets the same two options (each moves the whole family): they are made once
  // per unit, release and CUDA, not once per pin (600 pins of one family were cubic: 27 s).
  const made = optionsMade(unit);
  const option = (key: string, why: string, family: () => TextEdit[], tag: string): Fix => {
    const cacheKey = `${key}|${release.version}|${tag}|${found ?? ''}|${cuda}`;
    const cached = made.get(cacheKey);
    if (cached) return cached;
    const edits = family();
    const indexes = unit.claims
      .filter((other) => other.kind === 'index' && claimCuda(other) === found)
      .flatMap((other) => other.rewrite?.(cudaFromTag(tag)!) ?? []);
    const names = pinNames(unit);
    // Each pin as it will read, once: a family pinned on many lines is named once per spec, with the count of lines.
    const moved = [
      ...new Set(edits.map((edit) => `${names.get(`${edit.path}\0${edit.range[0]}`) ?? 'torch'}==${edit.text}`)),
    ];
    const lines = edits.length > moved.length ? ` on ${edits.length} lines` : '';
    const fix: Fix = {
      title: `${moved.join(', ')}${lines}${indexes.length ? ` and the ${tag} index` : ''} (${why})`,
      safety: 'unsafe',
      edits: [...edits, ...indexes],
    };
    made.set(cacheKey, fix);
    return fix;
  };
  const same = nearestCudaBuild(release, cuda);
  if (same && same !== pkg.localLabel)
    options.push(
      option(
        'relabel',
        `same release, CUDA ${cudaFromTag(same)} build, the nearest to ${cuda}`,
        () => relabel(unit, release, same, kb),
        same,
      ),
    );
  const other = nearestReleaseWithCuda(kb, release.version, cuda);
  if (other && other !== release)
    options.push(
      option(
        `move ${other.version}`,
        `torch ${other.version} is the nearest release with a CUDA ${cuda} build`,
        () => moveTorch(unit, release, other, tagFromCuda(cuda), kb),
        tagFromCuda(cuda),
      ),
    );
  return options;
}

const madeOptions = new WeakMap<Unit, Map<string, Fix>>();

/** The options made so far for a unit (see torchOptions). */
function optionsMade(unit: Unit): Map<string, Fix> {
  let made = madeOptions.get(unit);
  if (!made) madeOptions.set(unit, (made = new Map()));
  return made;
}

const namesOfPins = new WeakMap<Unit, Map<string, string>>();

/** Each pip pin's name as written, by its file and the offset of its first version (one pass per unit). */
function pinNames(unit: Unit): Map<string, string> {
  let names = namesOfPins.get(unit);
  if (!names) {
    names = new Map();
    for (const { file, pkg } of unit.packages) {
      const start = pkg.clauses[0]?.versionSpan.start;
      const key = `${file.path}\0${start}`;
      if (start !== undefined && !names.has(key)) names.set(key, pkg.rawName);
    }
    namesOfPins.set(unit, names);
  }
  return names;
}

interface FamilyPin {
  readonly file: ParsedFile;
  readonly pkg: PackageFact;
  readonly range: readonly [number, number];
}

/**
 * The exact torch, torchvision and torchaudio pins of a unit that belong to `release`, where the version text is
 * editable.
 */
function familyPins(unit: Unit, release: TorchRelease, kb: KnowledgeBase): FamilyPin[] {
  const out: FamilyPin[] = [];
  for (const { file, pkg } of unit.packages) {
    if (pkg.ecosystem !== 'pip' || !pkg.exact || !TORCH_FAMILY.has(pkg.name)) continue;
    const clause = pkg.clauses[0];
    if (!clause || file.source.text.slice(clause.versionSpan.start, clause.versionSpan.end) !== clause.version)
      continue;
    if (releaseFor(kb, pkg, publicVersion(pkg.exact)) !== release) continue;
    out.push({ file, pkg, range: [clause.versionSpan.start, clause.versionSpan.end] });
  }
  return out;
}

/** Every labelled pin of the release's family to another build of the same versions. */
function relabel(unit: Unit, release: TorchRelease, tag: string, kb: KnowledgeBase): TextEdit[] {
  return familyPins(unit, release, kb)
    .filter(
      ({ pkg }) => pkg.localLabel !== undefined && !(pkg.name === 'torchaudio' && release.torchaudioCuda === false),
    )
    .map(({ file, pkg, range }) => ({ path: file.path, range, text: `${publicVersion(pkg.exact!)}+${tag}` }));
}

/** The release's family, moved as a whole to `other` (labelled pins keep a label, now `tag`). */
function moveTorch(unit: Unit, release: TorchRelease, other: TorchRelease, tag: string, kb: KnowledgeBase): TextEdit[] {
  const edits: TextEdit[] = [];
  for (const { file, pkg, range } of familyPins(unit, release, kb)) {
    const version = pkg.name === 'torch' ? other.version : other[pkg.name as 'torchvision' | 'torchaudio'][0];
    if (!version) continue;
    const labelled = pkg.localLabel !== undefined && !(pkg.name === 'torchaudio' && other.torchaudioCuda === false);
    edits.push({ path: file.path, range, text: labelled ? `${version}+${tag}` : version });
  }
  return edits;
}
