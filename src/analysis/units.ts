import { imageFullName } from '../parsers/image-ref.js';
import { satisfiesPep440 } from '../util/pep440.js';
import { formatOf, hasSelections, isLockKind } from '../parsers/formats.js';
import {
  packageFact,
  type ContainerFact,
  type ImageFact,
  type IndexFact,
  type InstallContext,
  type PackageFact,
  type ParsedFile,
  type PythonFact,
} from '../parsers/facts.js';
import type { KnowledgeBase } from '../knowledge/index.js';
import type { CompanionPin } from '../knowledge/schema.js';
import { cudaFromTag, cudaMajor, cudaMajorMinor, publicVersion, tagFromCuda } from '../knowledge/versions.js';
import { compareDotted } from '../util/dotted.js';
import {
  CLAIM_PRECEDENCE,
  containerImageClaim,
  cudaClaim,
  fileClaims,
  withAlternative,
  type ClaimKind,
  type CudaClaim,
} from './claims.js';
import type { Link } from './links.js';
import { baseImage, StageTree } from './stages.js';
import { lockCompanions } from '../parsers/index.js';
import { dirname } from './paths.js';
import { DockerfileIndex } from './dockerfile-index.js';
import { groupBy } from '../util/collections.js';
import { isPypiIndex, isPytorchIndex } from './cuda-labels.js';
import { resolveTorchBuild, stableCudaIndex, type TorchBuild } from './torch-build.js';
import {
  newestToolkitClaim,
  newestTorchAlternatives,
  newestTorchClaim,
  PICKS_TORCH,
  stagePythons,
  surroundingsOf,
  type Alternatives,
  type TorchInstall,
  unitPythons,
  type StagePythons,
  type Surroundings,
} from './unpinned.js';
import { evaluateMarker, MACHINES, mayHoldTogether, type Machine } from '../parsers/markers.js';
import { TORCH_FAMILY } from '../parsers/python-requirement.js';
import { stronglyConnected } from '../util/graph.js';

/** One pip/conda run: a command or file plus the files it pulls in, sharing index options. */
export interface Invocation {
  readonly members: readonly { readonly file: ParsedFile; readonly context: InstallContext }[];
  readonly indexes: readonly IndexFact[];
  /**
   * A project or lock a uv command installs, which routes its packages to their own indexes: whether the command picks
   * the PyTorch index by the build machine's driver (`--torch-backend=auto`, UV_TORCH_BACKEND=auto) all the same.
   */
  readonly autoBackend?: boolean;
  /**
   * The Dockerfile command that installs it where that command is not one of its members: a project or lock a uv
   * command installs, whose contexts are an invocation of their own (routed to their own indexes).
   */
  readonly command?: InstallContext;
}

export interface UnitPackage {
  readonly file: ParsedFile;
  readonly pkg: PackageFact;
  readonly invocation?: Invocation;
  readonly build?: TorchBuild;
  /**
   * A requirement that what is installed before meets, which pip keeps ("Requirement already satisfied"): the torch
   * (or companion, or vLLM) the image ships, or an earlier command installed (keptTorch). It installs nothing.
   */
  readonly kept?: boolean;
}

/**
 * A consistency unit: what ends up installed together — one Dockerfile stage and the files it installs,
 * one requirements file and its includes, or one conda environment. Its CUDA target is inferred from its
 * strongest declarations, and every other declaration is compared against it.
 */
export interface Unit {
  readonly label: string;
  readonly root: ParsedFile;
  readonly stage?: number;
  readonly files: readonly ParsedFile[];
  readonly claims: readonly CudaClaim[];
  readonly target?: CudaClaim;
  readonly packages: readonly UnitPackage[];
  /**
   * A Dockerfile stage built FROM another: what the stages above it installed, which it runs with (its own
   * torchvision is loaded beside its parent's torch). Compared with, never reported as the stage's own.
   */
  readonly inherited?: Inherited;
  readonly invocations: readonly Invocation[];
  /** A Kubernetes container: where it may be scheduled and the CUDA it runs (see ContainerUnit). */
  readonly container?: ContainerUnit;
  /** A Dockerfile stage's: every Python its pip may run with, where the stage says them all (stagePythons). */
  readonly pythonsRun?: () => StagePythons | undefined;
  /** Installs whose CUDA depends on what the unit does not say: each build they may be (not among `claims`). */
  readonly alternatives?: readonly Alternatives[];
  /** Its torch ranges from plain PyPI that nothing else in the unit decides (a pin, a kept torch, a lock). */
  readonly torchRanges?: readonly TorchRange[];
  /** The machine its installs run on, where it names one (`FROM --platform=linux/arm64`, a lock's `… on aarch64`). */
  readonly machine?: Machine;
}

/**
 * A torch requirement of a range (or of no version) whose release is pip's pick from plain PyPI: its specifier combined
 * with the other requirements of torch its install reads.
 */
export interface TorchRange {
  readonly file: ParsedFile;
  readonly pkg: PackageFact;
  readonly specifier: string;
}

/**
 * A container of a Kubernetes workload that gets NVIDIA GPUs. What it runs is its image's CUDA: said by the image's
 * name (`nvidia/cuda:12.4.1-runtime-ubuntu22.04`), or, for an image the repository builds, every CUDA claim of the
 * Dockerfile's last stage (what `docker build` builds), carried to the manifest's `image:` line.
 */
export interface ContainerUnit {
  readonly fact: ContainerFact;
  readonly claims: readonly CudaClaim[];
  /** The Dockerfile's alternatives (Unit.alternatives), carried as its claims are. */
  readonly alternatives?: readonly Alternatives[];
  /** The Dockerfile named for it that is not in the repository (or not read). */
  readonly missing?: string;
  /** The base image of the stage of the repository's Dockerfile that builds its image, where one does. */
  readonly builtOn?: ImageFact;
}

/**
 * What the stages above a stage installed, nearest last: each stage's own packages and a link to what its parent
 * inherited, shared along the chain instead of copied into every stage (a chain of n installing stages would hold
 * n²/2 entries). An answer about a chain is worked out once per stage.
 */
export class Inherited {
  /** Answers of findLast, by test (null: nothing above passes it). */
  readonly found = new WeakMap<(entry: UnitPackage) => boolean, UnitPackage | null>();

  constructor(
    /** What the nearest stage above installed. */
    readonly packages: readonly UnitPackage[],
    /** What that stage inherited in turn. */
    readonly above: Inherited | undefined,
  ) {}

  /** The nearest package installed above that passes `test` (give the same function each time: it is remembered). */
  findLast(test: (entry: UnitPackage) => boolean): UnitPackage | undefined {
    return nearestAbove(this, test);
  }
}

/** Up the chain to a stage that installed one, or whose answer is known; then every stage passed remembers it. */
function nearestAbove(start: Inherited, test: (entry: UnitPackage) => boolean): UnitPackage | undefined {
  const passed: Inherited[] = [];
  let answer: UnitPackage | null = null;
  for (let at: Inherited | undefined = start; at; at = at.above) {
    const known = at.found.get(test);
    if (known !== undefined) {
      answer = known;
      break;
    }
    passed.push(at);
    for (let i = at.packages.length - 1; i >= 0 && !answer; i--) if (test(at.packages[i]!)) answer = at.packages[i]!;
    if (answer) break;
  }
  for (const at of passed) at.found.set(test, answer);
  return answer ?? undefined;
}

const NO_INDEXES: readonly IndexFact[] = [];

/**
 * Which claims may set the target, strongest tier first; index URLs only get compared, but for the one index a torch
 * range is installed from (torchIndexes), which sets torch's CUDA as a pin's build would.
 */
const BUILDS_TIER: readonly ClaimKind[] = ['wheel-tag', 'wheel-url', 'implied'];
const TIERS: readonly (readonly ClaimKind[])[] = [
  ['image', 'env'],
  ['conda', 'conda-build', 'conda-channel', 'apt'],
  BUILDS_TIER,
  ['nvidia-wheel', 'cupy', 'jax', 'tensorflow', 'library'],
];

/**
 * The index claims of a unit that decide its torch's build: a stable PyTorch index of one CUDA that is the only index
 * (`--index-url`, a uv source's index) of an install of a torch range or of torch by name alone. The install takes
 * that CUDA's build whatever release it resolves (`torch>=2.9.0` from `/whl/cu128`: CUDA 12.8), and torch's build
 * brings the CUDA runtime the other builds of the environment load, so another package's wheel (`vllm-…+cu129`) is
 * held to it rather than it to the wheel. A pinned torch has a claim of its own (its build, `implied`).
 */
function torchIndexes(
  claims: readonly CudaClaim[],
  packages: readonly { readonly pkg: PackageFact; readonly invocation?: Invocation; readonly build?: TorchBuild }[],
): ReadonlySet<CudaClaim> | undefined {
  // The only index of each install of torch by name or range (one pass over the packages, then one over the claims).
  let only: Set<IndexFact> | undefined;
  for (const { pkg, invocation, build } of packages)
    if (
      pkg.name === 'torch' &&
      pkg.ecosystem === 'pip' &&
      !build &&
      !pkg.url &&
      !pkg.localLabel &&
      invocation?.indexes.length === 1
    )
      (only ??= new Set()).add(invocation.indexes[0]!);
  if (!only) return undefined;
  let deciding: Set<CudaClaim> | undefined;
  for (const claim of claims) {
    const index = claim.kind === 'index' ? claim.index : undefined;
    if (index && index.kind === 'index-url' && only.has(index) && stableCudaIndex(index.url))
      (deciding ??= new Set()).add(claim);
  }
  return deciding;
}

/** Units of `files`, which must include every file linked to or from one of them. */
export function buildUnits(
  files: readonly ParsedFile[],
  links: ReadonlyMap<ParsedFile, readonly Link[]>,
  kb: KnowledgeBase,
): Unit[] {
  const claimCache = new Map<ParsedFile, CudaClaim[]>();
  const claimsOf = (file: ParsedFile): CudaClaim[] => {
    let claims = claimCache.get(file);
    if (!claims) claimCache.set(file, (claims = fileClaims(file, kb)));
    return claims;
  };
  const units: Unit[] = [];
  let component: Map<ParsedFile, number> | undefined;
  let paths: ReadonlySet<string> | undefined;
  // `files` is closed under links (every file a link touches is in it), so its own links are all there are.
  const includers = new Map<ParsedFile, ParsedFile[]>();
  for (const from of files) {
    for (const link of links.get(from) ?? []) {
      const list = includers.get(link.to);
      if (list) list.push(from);
      else includers.set(link.to, [from]);
    }
  }
  for (const file of files) {
    const format = formatOf(file.kind);
    if (format.units === 'stages') {
      const stages = new DockerfileIndex(file, links.get(file) ?? [], claimsOf(file));
      const tree = StageTree.of(file);
      const byStage = new Map<number, Unit>();
      for (const stage of file.stages) {
        const environments = stageEnvironments(stages, stage.index);
        let unit = dockerStageUnit(stages, stage.index, links, claimsOf, kb, environments?.default);
        // The other Python environments the stage installs into, each a unit of its own with the stage's image and
        // system packages: what one installs is not loaded with another's (a conda environment's CUDA runtime and
        // another's NCCL wheel).
        for (const other of environments?.others ?? [])
          units.push(dockerStageUnit(stages, stage.index, links, claimsOf, kb, other));
        const parent = tree.parent(stage.index);
        const above = parent === undefined ? undefined : byStage.get(parent);
        // A stage that installs nothing shares what is above it.
        const inherited = !above
          ? undefined
          : above.packages.length === 0
            ? above.inherited
            : new Inherited(above.packages, above.inherited);
        if (inherited) unit = { ...unit, inherited };
        byStage.set(stage.index, unit);
        units.push(unit);
      }
    } else if (format.units === 'selections') {
      // The selections a Dockerfile installs (`uv sync --extra X`, `pixi install -e E`) are checked with its stage;
      // the others on their own.
      const via = (includers.get(file) ?? []).flatMap((includer) =>
        (links.get(includer) ?? []).filter((link) => link.to === file),
      );
      const covered = new Set(
        selectedContexts(file, via, undefined, projectBeside(file, files)).map((context) => context.variant),
      );
      const locked = lockCompanions(file.path, file.kind).some((lock) => (paths ??= pathsOf(files)).has(lock));
      units.push(...selectionUnits(file, claimsOf, kb, via.length ? covered : new Set(), locked));
    } else if (
      format.units === 'file' &&
      !includedElsewhere(file, includers.get(file) ?? [], (component ??= components(files, links)))
    ) {
      units.push(fileUnit(file, links, claimsOf, kb));
    }
  }
  // Manifests last: a container whose image is built here takes the claims of its Dockerfile's unit.
  for (const file of files)
    if (formatOf(file.kind).units === 'containers')
      units.push(...containerUnits(file, links.get(file) ?? [], units, kb));
  return units;
}

/** The default value a Dockerfile gives an ARG (its first declaration with one), if it gives one. */
function argDefault(file: ParsedFile | undefined, name: string): string | undefined {
  return file?.env.find((fact) => fact.instruction === 'ARG' && fact.key === name)?.value;
}

/** One unit per container that gets NVIDIA GPUs (a CPU container's CUDA is never loaded). */
function containerUnits(file: ParsedFile, links: readonly Link[], units: readonly Unit[], kb: KnowledgeBase): Unit[] {
  const out: Unit[] = [];
  for (const fact of file.containers) {
    if (!fact.gpu) continue;
    const include = fact.dockerfile ? file.includes[fact.dockerfile.include] : undefined;
    const built = include ? links.find((link) => link.include === include)?.to : undefined;
    let claims: CudaClaim[];
    let alternatives: Alternatives[] | undefined;
    // The stage a build names (Compose's `build.target`; stage names are case-insensitive) or, as `docker build`
    // builds, the last.
    const wanted = fact.dockerfile?.stage?.toLowerCase();
    const builtStage = wanted
      ? built?.stages.find((stage) => stage.name?.toLowerCase() === wanted)?.index
      : built?.stages.at(-1)?.index;
    if (built && builtStage !== undefined) {
      const stage = units.find((unit) => unit.root === built && unit.stage === builtStage);
      const carried = (claim: CudaClaim): CudaClaim =>
        cudaClaim({
          ...claim,
          file,
          context: undefined,
          stage: fact.image.stage,
          span: fact.span,
          subject: `${fact.image.reference} (built from ${built.path}: ${claim.subject})`,
          rewrite: undefined,
          origin: { file: built, span: claim.span, subject: claim.subject },
        });
      // A claim that rests on an ARG the build overrides (Compose's `build.args`) is not what this build makes.
      // One that gives the value the Dockerfile's ARG has by default (`CUDA_VER: ${CUDA_VER:-12.9.0}` for `ARG
      // CUDA_VER=12.9.0`) builds what the Dockerfile says.
      const given = fact.dockerfile?.argValues ?? {};
      const overridden = new Set(
        (fact.dockerfile?.args ?? []).filter(
          (name) => given[name] === undefined || given[name] !== argDefault(built, name),
        ),
      );
      const kept = (claim: CudaClaim): boolean =>
        overridden.size === 0 ||
        !(
          (claim.image?.via && overridden.has(claim.image.via.name)) ||
          (claim.package?.via && overridden.has(claim.package.via.name))
        );
      claims = (stage?.claims ?? []).filter(kept).map(carried);
      alternatives = stage?.alternatives
        ?.filter((either) => either.claims.every(kept))
        .map((either) => ({ ...either, claims: either.claims.map(carried) }));
    } else {
      const own = containerImageClaim(file, fact, kb);
      claims = own ? [own] : [];
    }
    const builtOn = built && builtStage !== undefined ? baseImage(built, builtStage) : undefined;
    const container: ContainerUnit = {
      fact,
      claims,
      ...(builtOn ? { builtOn } : {}),
      ...(alternatives?.length ? { alternatives } : {}),
      ...(fact.dockerfile && builtStage === undefined
        ? { missing: built ? `${fact.dockerfile.path} (stage ${fact.dockerfile.stage})` : fact.dockerfile.path }
        : {}),
    };
    out.push({
      label: `${file.path} (${fact.workload}, container ${fact.name})`,
      root: file,
      stage: fact.image.stage,
      files: [file],
      // Rules that compare a unit's claims see the image's own; the Dockerfile's claims are judged in the Dockerfile.
      claims: built ? [] : claims,
      ...(built || claims.length === 0 ? {} : { target: claims[0]! }),
      packages: [],
      invocations: [],
      container,
    });
  }
  return out;
}

/**
 * A requirements or conda file that another file installs or includes (a Dockerfile's `pip install -r`,
 * another file's `-r`) is checked only as part of the larger unit: its own, narrower view would infer a
 * different target and propose conflicting fixes. Files that include each other are each kept: an includer
 * reachable back from the file is in the file's strongly connected component.
 */
function includedElsewhere(
  file: ParsedFile,
  includers: readonly ParsedFile[],
  component: ReadonlyMap<ParsedFile, number>,
): boolean {
  return includers.some(
    (includer) =>
      includer !== file &&
      (formatOf(includer.kind).units === 'stages' || component.get(includer) !== component.get(file)),
  );
}

/** The strongly connected component of every file under the include links (src/util/graph.ts). */
function components(
  files: readonly ParsedFile[],
  links: ReadonlyMap<ParsedFile, readonly Link[]>,
): Map<ParsedFile, number> {
  return stronglyConnected(files, (file) => (links.get(file) ?? []).map((link) => link.to));
}

type ClaimsOf = (file: ParsedFile) => CudaClaim[];

/** Files reachable through includes, each with all of its contexts. */
function reachable(
  start: readonly Link[],
  links: ReadonlyMap<ParsedFile, readonly Link[]>,
  seen: Set<ParsedFile>,
): ParsedFile[] {
  const out: ParsedFile[] = [];
  const queue = [...start];
  for (let next = 0; next < queue.length; next++) {
    const link = queue[next]!;
    if (seen.has(link.to)) continue;
    seen.add(link.to);
    out.push(link.to);
    queue.push(...(links.get(link.to) ?? []));
  }
  return out;
}

function fileUnit(
  file: ParsedFile,
  links: ReadonlyMap<ParsedFile, readonly Link[]>,
  claimsOf: ClaimsOf,
  kb: KnowledgeBase,
): Unit {
  const seen = new Set([file]);
  const included = reachable(links.get(file) ?? [], links, seen);
  const files = [file, ...included];
  const invocations: Invocation[] = [];
  const pipContexts = file.contexts.filter((context) => context.tool !== 'conda-env');
  for (const context of pipContexts) {
    const contextLinks = (links.get(file) ?? []).filter((link) => link.include.context === context.id);
    const linked = reachable(contextLinks, links, new Set([file]));
    invocations.push(
      makeInvocation([
        { file, context },
        ...linked.flatMap((member) => member.contexts.map((c) => ({ file: member, context: c }))),
      ]),
    );
  }
  const claims = files.flatMap((member) => claimsOf(member));
  const cog = cogImageClaim(file, files, kb);
  return finishUnit({ label: file.path, root: file, files, claims: cog ? [...claims, cog] : claims, invocations }, kb);
}

/**
 * Cog's CUDA where a GPU cog.yaml names none: its default, 11.8, where no torch or TensorFlow is installed, else the
 * newest CUDA the torch requirement's version has a build for (Cog
 * reads the first version of the line named torch, whatever its operator: `torch>=2.4.0` is 2.4.0, `torch==2.2` any
 * 2.2.x; config.go validateAndCompleteCUDA, requirements.go), which its base image (r8.im/cog-base:cuda<X.Y>-…) is.
 * A range is then installed from PyPI as written, so pip's newest torch may be of another CUDA than the image.
 */
function cogImageClaim(file: ParsedFile, files: readonly ParsedFile[], kb: KnowledgeBase): CudaClaim | undefined {
  const context = file.contexts.find((candidate) => candidate.pytorchUpTo && !candidate.pytorchUpTo.cuda);
  if (!context) return undefined;
  const packages = files.flatMap((member) => member.packages);
  const torch = packages.find((pkg) => pkg.ecosystem === 'pip' && pkg.name === 'torch');
  // With neither torch nor TensorFlow, Cog's CUDA is its default, 11.8 (compatibility.go defaultCUDA, at 6110c91);
  // TensorFlow's own table is not read here, and a torch with no version makes Cog refuse the build.
  if (!torch && !packages.some((pkg) => pkg.ecosystem === 'pip' && /^tensorflow(?:-gpu)?$/.test(pkg.name)))
    return cudaClaim({
      kind: 'image',
      file,
      stage: 0,
      cuda: '11.8',
      precision: 'minor',
      span: context.pytorchUpTo!.span,
      subject: "Cog's default base image (r8.im/cog-base:cuda11.8-…)",
    });
  const written = torch?.clauses[0]?.version;
  if (!torch || !written) return undefined;
  const releases = /^\d+\.\d+$/.test(written)
    ? kb.torchReleases().filter((release) => release.version.startsWith(`${written}.`))
    : [kb.torchRelease(written)].filter((release) => release !== undefined);
  const cudas = releases.flatMap((release) =>
    [...kb.torchBuilds(release)].flatMap((tag) => (/^cu\d+$/.test(tag) ? [cudaFromTag(tag)!] : [])),
  );
  const cuda = cudas.sort((a, b) => compareDotted(b, a))[0];
  if (!cuda) return undefined;
  return cudaClaim({
    kind: 'image',
    file,
    stage: 0,
    cuda,
    precision: 'minor',
    span: context.pytorchUpTo!.span,
    subject: `Cog's base image for torch ${written} (r8.im/cog-base:cuda${cuda}-…)`,
    record: releases.at(-1),
  });
}

/**
 * A file with selections (hasSelections): one unit per selection (a pyproject.toml's project alone, with one extra,
 * with one group; a pixi environment; a lock's selection), so that extras meant to exclude each other (`cpu`,
 * `cu124`) are never compared, while everything one selection installs is.
 */
function selectionUnits(
  file: ParsedFile,
  claimsOf: ClaimsOf,
  kb: KnowledgeBase,
  covered: ReadonlySet<string | undefined>,
  /** A lock beside the manifest pins what it installs (uv.lock beside pyproject.toml): its ranges are not resolved. */
  locked = false,
): Unit[] {
  const claims = claimsOf(file);
  const units: Unit[] = [];
  for (const [variant, contexts] of groupBy(file.contexts, (context) => context.variant)) {
    // What `pip install .` reads of a pyproject.toml, and a group installed without the project (`uv sync
    // --only-group G`), are checked only with the command that installs them.
    if (covered.has(variant) || variant?.startsWith('pip: ') || variant?.startsWith('only group ')) continue;
    const ids = new Set(contexts.map((context) => context.id));
    const own = (context: number | undefined): boolean => context === undefined || ids.has(context);
    units.push(
      finishUnit(
        {
          label: `${file.path} (${variant})`,
          root: file,
          files: [file],
          claims: claims.filter((claim) => own(claim.context)),
          invocations: contexts.map((context) => makeInvocation([{ file, context }])),
          rootPackages: file.packages.filter((pkg) => ids.has(pkg.context)),
          platform: selectionMachine(variant),
          locked,
        },
        kb,
      ),
    );
  }
  return units;
}

/** The Python environments of a stage's installs, where it installs into more than one (StageEnvironment). */
interface StageEnvironments {
  readonly default: StageEnvironment;
  readonly others: readonly StageEnvironment[];
}

/** One Python environment of a stage: which of its install contexts install into it, and what to call it. */
interface StageEnvironment {
  readonly label?: string;
  readonly holds: (context: InstallContext) => boolean;
}

/**
 * The Python environments a stage installs into, where it names more than its default one (InstallContext
 * .environment) and none of them is made the default by the Dockerfile (activated: `conda activate serve`, `source
 * /opt/venv/bin/activate`, an ENV PATH or SHELL that puts it first), which would make a plain `pip` install into it.
 * apt's packages are the image's, in every environment.
 */
function stageEnvironments(index: DockerfileIndex, stage: number): StageEnvironments | undefined {
  const contexts = index.contextsByStage.get(stage) ?? [];
  const named = new Set<string>();
  for (const context of contexts) if (context.environment) named.add(context.environment);
  if (named.size === 0) return undefined;
  const apart = [...named].filter((key) => !activated(index.file, key));
  if (apart.length === 0) return undefined;
  const keyOf = (context: InstallContext): string | undefined =>
    context.environment && apart.includes(context.environment) ? context.environment : undefined;
  const shared = (context: InstallContext): boolean => context.tool === 'apt';
  return {
    default: { holds: (context) => shared(context) || keyOf(context) === undefined },
    others: apart.map((key) => ({
      label: key.replace(/^conda:/, 'conda environment ').replace(/^prefix:/, 'environment '),
      holds: (context) => shared(context) || keyOf(context) === key,
    })),
  };
}

/** Whether a Dockerfile makes an environment the one a plain `pip` or `python` runs in (once per file and name). */
function activated(file: ParsedFile, key: string): boolean {
  let known = ACTIVATED.get(file);
  if (!known) ACTIVATED.set(file, (known = new Map()));
  let answer = known.get(key);
  if (answer === undefined) known.set(key, (answer = activates(file.source.text, key)));
  return answer;
}

const ACTIVATED = new WeakMap<ParsedFile, Map<string, boolean>>();

function activates(text: string, key: string): boolean {
  const value = escapeRegExp(key.slice(key.indexOf(':') + 1));
  // ENV and SHELL instructions: where a PATH or a `conda run -n` makes an environment the default.
  const settings = new RegExp(
    `^\\s*(?:ENV|SHELL)\\b.*(?:${value}/bin|envs/${value}/bin|(?:-n|--name)["',\\s]+${value}\\b)`,
    'im',
  );
  if (settings.test(text)) return true;
  if (key.startsWith('conda:')) return new RegExp(`activate\\s+${value}(?![\\w.-])`).test(text);
  return new RegExp(`${value}/bin/activate|VIRTUAL_ENV[=\\s]+["']?${value}`).test(text);
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function dockerStageUnit(
  index: DockerfileIndex,
  stage: number,
  links: ReadonlyMap<ParsedFile, readonly Link[]>,
  claimsOf: ClaimsOf,
  kb: KnowledgeBase,
  /** Where the stage installs into several Python environments, the one this unit is of. */
  environment?: StageEnvironment,
): Unit {
  const file = index.file;
  const name = file.stages[stage]?.name;
  const label = `${file.path} stage ${name ? `"${name}"` : stage + 1}${environment?.label ? ` (${environment.label})` : ''}`;
  const all = [...(index.contextsByStage.get(stage) ?? []), ...index.copiedContexts(stage)];
  const contexts = environment ? all.filter(environment.holds) : all;
  const invocations: Invocation[] = [];
  const seen = new Set([file]);
  const linkedFiles: ParsedFile[] = [];
  // The context ids of each file with selections (a pyproject.toml, a lock) that this stage installs.
  const selected = new Map<ParsedFile, Set<number>>();
  const platform = stageMachine(index, stage);
  /** The packages a command leaves out of a file it installs (`uv sync --no-install-package torch`), by file. */
  const skipped = new Map<ParsedFile, Set<string>>();
  for (const context of contexts) {
    const contextLinks = index.linksByContext.get(context.id) ?? [];
    for (const link of contextLinks)
      if (link.include.skips?.length)
        for (const name of link.include.skips)
          (skipped.get(link.to) ?? skipped.set(link.to, new Set()).get(link.to)!).add(name);
    const linked = reachable(contextLinks, links, new Set([file]));
    for (const member of linked) {
      if (seen.has(member)) continue;
      seen.add(member);
      linkedFiles.push(member);
    }
    const members = linked.flatMap((member) => {
      const chosen = selectedContexts(member, contextLinks, platform ?? DEFAULT_MACHINE, projectBeside(member, linked));
      if (hasSelections(member.kind)) {
        const ids = selected.get(member) ?? new Set();
        for (const c of chosen) ids.add(c.id);
        selected.set(member, ids);
      }
      return chosen.map((c) => ({ file: member, context: c }));
    });
    if (context.tool === 'apt') continue;
    // A project or lock a uv command installs (`uv sync`) routes each package to its own index ([tool.uv.sources],
    // an explicit index, a lock's registry): its contexts are installed as they are, never with one another's
    // indexes; what pip reads (requirements files, `pip install .`) shares the command's indexes.
    const routed = members.filter((member) => member.context.tool === 'uv');
    invocations.push(makeInvocation([{ file, context }, ...members.filter((member) => !routed.includes(member))]));
    const auto = routed.length > 0 && optionContexts(file, 'torch-backend-auto').has(context.id);
    for (const member of routed)
      invocations.push({ ...makeInvocation([member]), command: context, ...(auto ? { autoBackend: true } : {}) });
  }
  const inStage = (member: ParsedFile, context: number | undefined): boolean =>
    context === undefined || (selected.get(member)?.has(context) ?? true);
  const superseded = routedElsewhere(selected);
  const kept = (member: ParsedFile, pkg: PackageFact | undefined): boolean =>
    !pkg || (!skipped.get(member)?.has(pkg.name) && !superseded?.has(pkg));
  // An index (a uv.lock's registry, a pyproject's [[tool.uv.index]]) whose every package the command leaves out
  // (`uv sync --no-install-package torch --no-install-package torchvision` on an image that ships them) serves nothing.
  const servesNothing = (member: ParsedFile, claim: CudaClaim): boolean => {
    const left = skipped.get(member);
    if (!left || claim.kind !== 'index' || claim.context === undefined) return false;
    const served = member.packages.filter((pkg) => pkg.context === claim.context);
    return served.length > 0 && served.every((pkg) => left.has(pkg.name));
  };
  const claims = [
    ...index.claimsOf(stage, contexts),
    ...linkedFiles.flatMap((member) =>
      claimsOf(member).filter(
        (claim) => inStage(member, claim.context) && kept(member, claim.package) && !servesNothing(member, claim),
      ),
    ),
  ];
  const memberPackages = new Map(
    [...new Set([...selected.keys(), ...skipped.keys()])].map((member) => [
      member,
      member.packages.filter((pkg) => inStage(member, pkg.context) && kept(member, pkg)),
    ]),
  );
  return finishUnit(
    {
      label,
      root: file,
      stage,
      files: [file, ...linkedFiles],
      claims,
      invocations,
      rootPackages: index.packagesOf(contexts),
      memberPackages,
      pythons: index.pythonsOf(stage),
      copiesEnvironment: () => index.copiesEnvironmentInto(stage),
      baseImage: index.baseImageOf(stage),
      platform,
    },
    kb,
  );
}

/**
 * What installing a file selects when the command names no selection (its format's `defaultSelection`): its project,
 * pixi's default environment, a lock's every platform.
 */
function defaultSelection(kind: ParsedFile['kind']): readonly string[] {
  const format = formatOf(kind);
  return format.units === 'selections' ? format.defaultSelection : [];
}

/**
 * The contexts of a file a stage pulls in: all of them, but of a file with selections only those the command
 * names (`uv sync --extra cu124` → "extra cu124"; `pixi install -e cuda` → "environment cuda", on every
 * platform; none named → defaultSelection; `--all-extras` → "*extras"; `--all-groups` → "*groups"), and the groups
 * the tool installs by default ("*default-groups poetry", less those "!group G" names; InstallContext.defaultFor).
 * A lock does not say which groups are default: `project` is the pyproject.toml beside it, which does.
 */
export function selectedContexts(
  member: ParsedFile,
  via: readonly Link[],
  machine?: Machine,
  project?: ParsedFile,
): readonly InstallContext[] {
  if (!hasSelections(member.kind)) return member.contexts;
  const selects = new Set(
    via.filter((link) => link.to === member).flatMap((link) => link.include.selects ?? defaultSelection(member.kind)),
  );
  const tools: string[] = [];
  for (const select of selects) if (select.startsWith(DEFAULT_GROUPS)) tools.push(select.slice(DEFAULT_GROUPS.length));
  let defaults: Map<string, readonly string[]> | undefined;
  const defaultFor = (context: InstallContext, selection: string): readonly string[] | undefined => {
    if (context.defaultFor || member === project || !project) return context.defaultFor;
    defaults ??= new Map(project.contexts.flatMap((c) => (c.defaultFor ? [[c.variant ?? '', c.defaultFor]] : [])));
    return defaults.get(selection);
  };
  return member.contexts.filter((context) => {
    const variant = context.variant ?? '';
    // A selection that installs differently per platform is one selection per platform: a pixi environment's
    // ("… on linux-64"), a uv lock's that resolves per machine ("… on aarch64"). A stage runs on one machine.
    const on = variant.indexOf(' on ');
    if (on > 0 && machine && !onMachine(variant.slice(on + 4), machine)) return false;
    const selection = on > 0 ? variant.slice(0, on) : variant;
    if (
      selects.has('*') ||
      selects.has(selection) ||
      (selects.has('*extras') && variant.startsWith('extra ')) ||
      (selects.has('*groups') && variant.startsWith('group ')) ||
      (selects.has('*environments') && variant.startsWith('environment '))
    )
      return true;
    if (tools.length === 0 || !selection.startsWith('group ') || selects.has(`!${selection}`)) return false;
    const tool = defaultFor(context, selection);
    return tool !== undefined && tools.some((name) => tool.includes(name));
  });
}

/**
 * Of a project's selections that one command installs together (`uv sync --extra torch-cu118 --extra extras`), the
 * requirements that another selected selection routes to an index of its own: uv resolves one environment, in which
 * a source for an active extra routes the package (astral-sh/uv#9160, "Using uv with PyTorch"), so the base
 * dependency's `torch` that the `extras` selection alone would take from PyPI is the cu118 index's torch. Undefined
 * where no command selects several.
 */
function routedElsewhere(selected: ReadonlyMap<ParsedFile, ReadonlySet<number>>): ReadonlySet<PackageFact> | undefined {
  let superseded: Set<PackageFact> | undefined;
  // Routed on every machine to an index of the project's own (not one a marker routes a machine to, nor PyPI named).
  const routed = (member: ParsedFile, pkg: PackageFact): boolean =>
    member.contexts[pkg.context]?.indexes.some(
      (index) => index.uvIndex && !index.machines && !isPypiIndex(index.url),
    ) === true;
  // Routed nowhere: from the default index.
  const unrouted = (member: ParsedFile, pkg: PackageFact): boolean =>
    member.contexts[pkg.context]?.indexes.every((index) => !index.uvIndex) !== false;
  for (const [member, ids] of selected) {
    if (ids.size < 2 || member.kind !== 'pyproject') continue;
    const names = new Set<string>();
    for (const pkg of member.packages) if (ids.has(pkg.context) && routed(member, pkg)) names.add(pkg.name);
    if (names.size === 0) continue;
    for (const pkg of member.packages)
      if (ids.has(pkg.context) && names.has(pkg.name) && unrouted(member, pkg)) (superseded ??= new Set()).add(pkg);
  }
  return superseded;
}

/** The selection that names a tool's default groups (`*default-groups poetry`). */
const DEFAULT_GROUPS = '*default-groups ';

/** The pyproject.toml beside a lock among `files` (a lock does not say which of its groups are default), if any. */
export function projectBeside(member: ParsedFile, files: Iterable<ParsedFile>): ParsedFile | undefined {
  if (!isLockKind(member.kind)) return undefined;
  const folder = dirname(member.path);
  for (const file of files) if (file.kind === 'pyproject' && dirname(file.path) === folder) return file;
  return undefined;
}

/** The machine of a per-machine selection (`extra cpu on aarch64`, `environment cuda on linux-64`), where it is one. */
function selectionMachine(variant: string | undefined): Machine | undefined {
  const on = variant?.lastIndexOf(' on ') ?? -1;
  if (on < 0) return undefined;
  const platform = variant!.slice(on + 4);
  return onMachine(platform, 'aarch64') ? 'aarch64' : onMachine(platform, 'x86_64') ? 'x86_64' : undefined;
}

/** Whether a selection's platform (`linux-64`, `linux-aarch64`, `x86_64`, `aarch64`, `osx-arm64`) is this machine's. */
function onMachine(platform: string, machine: Machine): boolean {
  return machine === 'aarch64'
    ? platform === 'aarch64' || platform === 'linux-aarch64'
    : platform === 'x86_64' || platform === 'linux-64';
}

/** The machine a stage's FROM names (`--platform=linux/arm64`), where it names one. */
function stageMachine(index: DockerfileIndex, stage: number): Machine | undefined {
  const platform = index.platformOf(stage) ?? '';
  return /arm64|aarch64/i.test(platform) ? 'aarch64' : /amd64|x86_64/i.test(platform) ? 'x86_64' : undefined;
}

/**
 * The machine a unit's installs run on where it does not say: x86_64, what a build without `--platform` on an x86_64
 * builder (nearly every CI runner) gives.
 */
const DEFAULT_MACHINE: Machine = 'x86_64';

/**
 * The machine a requirement is installed on where the unit names none: DEFAULT_MACHINE, unless its own
 * `platform_machine` marker leaves that machine out and admits another (a lock's or extra's aarch64 fallback,
 * `torch==2.7.1; platform_machine == 'aarch64'`, is PyPI's aarch64 build, never its x86_64 one).
 */
function machineOf(markers: string | undefined): Machine {
  if (!markers?.includes('platform_machine')) return DEFAULT_MACHINE;
  const holds = (machine: Machine) => evaluateMarker(markers, { values: { platform_machine: machine } }) !== false;
  return holds(DEFAULT_MACHINE) ? DEFAULT_MACHINE : (MACHINES.find(holds) ?? DEFAULT_MACHINE);
}

/**
 * vllm and xformers on PyPI: each release's wheel pins one torch release exactly (its Requires-Dist, the companion
 * pins of the knowledge) and carries CUDA kernels compiled with that torch, so it is a build of the CUDA major of that
 * torch's PyPI wheel ("vLLM ... contains pre-compiled C++ and CUDA (12.1) binaries", docs.vllm.ai; xformers' wheels
 * are built per torch release). Only from PyPI: the PyTorch index serves xformers for each CUDA, vLLM publishes +cu118
 * wheels of its own, and a pip configuration the gate cannot read may name any index.
 */
const CARRIES_TORCH_CUDA: ReadonlySet<string> = new Set(['vllm', 'xformers', 'sglang']);

/**
 * Of those, the ones whose own wheel is pure Python (`sglang-<version>-py3-none-any.whl` on PyPI and on SGLang's wheel
 * index; its CUDA kernels are the separate sgl-kernel package): installed with `--no-deps`, they bring no torch and
 * no CUDA code of their own, so they say no CUDA.
 */
const PURE_PYTHON_CARRIERS: ReadonlySet<string> = new Set(['sglang']);

/** Packages whose exact pin goes with torch releases the knowledge records (companions.json `pins`). */
const TORCH_BOUND: ReadonlySet<string> = new Set([
  'triton',
  'torchdata',
  'torchtext',
  'vllm-flash-attn',
  'torch-tensorrt',
]);

/**
 * The torch releases an exact pin of a TORCH_BOUND package goes with (torchdata 0.6.1 requires torch==2.0.1; torch
 * 2.0.0 and 2.0.1 require triton==2.0.0): a torch range beside it resolves to one of them (generative-models' pt2.txt:
 * torch>=2.0.1 is 2.0.1, a CUDA 11.7 build, not today's newest). None for a pin whose torch is only a floor
 * (torchtext 0.18: abi minor), or a package of no such pins.
 */
export function torchesBoundBy(pkg: PackageFact, kb: KnowledgeBase): string[] {
  if (pkg.ecosystem !== 'pip' || !pkg.exact || pkg.url || !TORCH_BOUND.has(pkg.name)) return [];
  const version = publicVersion(pkg.exact);
  return kb
    .companionPins(pkg.name)
    .filter((pin) => pin.version === version && pin.abi !== 'minor')
    .map((pin) => pin.torch);
}

/** A package's CUDA build carried by the torch it pins (builtWithTorch), with the pin that says so. */
interface Carried {
  readonly claim: CudaClaim;
  readonly pin: CompanionPin;
}

function builtWithTorch(
  file: ParsedFile,
  pkg: PackageFact,
  invocation: Invocation | undefined,
  hidden: boolean,
  kb: KnowledgeBase,
): Carried | undefined {
  if (pkg.ecosystem !== 'pip' || !pkg.exact || pkg.localLabel || pkg.url || !CARRIES_TORCH_CUDA.has(pkg.name))
    return undefined;
  if (hidden || invocation?.indexes.some((index) => !isPypiIndex(index.url))) return undefined;
  const version = publicVersion(pkg.exact);
  const pin = kb.companionPin(pkg.name, version, pkg.extras);
  const tag = pin ? kb.torchRelease(pin.torch)?.pypiDefault : undefined;
  const cuda = tag ? cudaFromTag(tag) : undefined;
  if (!pin || !cuda) return undefined;
  const claim = cudaClaim({
    kind: 'library',
    file,
    context: pkg.context,
    cuda: cuda.split('.')[0]!,
    precision: 'major',
    span: pkg.span,
    subject: withAlternative(file, pkg.context, `${pkg.rawName}${pkg.specifier}`),
    package: pkg,
    record: pin,
  });
  return { claim, pin };
}

/** A carried claim (builtWithTorch) as the claim of the torch its package requires, where PyPI's build is known. */
function withItsTorch({ claim, pin }: Carried, kb: KnowledgeBase): CudaClaim | undefined {
  const release = kb.torchRelease(pin.torch);
  const cuda = release?.pypiDefault ? cudaFromTag(release.pypiDefault) : undefined;
  if (!release || !cuda) return undefined;
  return cudaClaim({
    ...claim,
    kind: 'implied',
    cuda,
    precision: 'minor',
    subject: `${claim.subject} (and the torch ${pin.torch} it requires)`,
    record: release,
  });
}

function makeInvocation(members: { file: ParsedFile; context: InstallContext }[]): Invocation {
  const indexes = members.flatMap((member) => member.context.indexes.filter((index) => !index.ignoredReason));
  return { members, indexes };
}

/** What a unit is made of before its packages are resolved and its target chosen (finishUnit). */
interface UnitParts {
  /**
   * A manifest whose lock is beside it (uv.lock, poetry.lock, pixi.lock): what its ranges install is the lock's pin,
   * judged in the lock's own units, not today's newest release.
   */
  readonly locked?: boolean;
  readonly label: string;
  readonly root: ParsedFile;
  readonly stage?: number;
  readonly files: readonly ParsedFile[];
  /** The claims the files make by themselves (images, labels, names); the packages' implied claims are added. */
  readonly claims: readonly CudaClaim[];
  readonly invocations: readonly Invocation[];
  /** The root's packages that belong to the unit, when not all of them do (a Dockerfile stage's). */
  readonly rootPackages?: readonly PackageFact[];
  /** Other files' packages that belong to the unit, when not all of them do (a pyproject.toml's selection). */
  readonly memberPackages?: ReadonlyMap<ParsedFile, readonly PackageFact[]>;
  /** The Pythons a Dockerfile stage installs by script (a Miniconda installer, `uv python install`). */
  readonly pythons?: readonly PythonFact[];
  /** A Dockerfile stage's base image, which names its Python where it is a Python image (claims hold CUDA images). */
  readonly baseImage?: ImageFact;
  /** Whether a Dockerfile stage copies an environment in (a Python may come with it: DockerfileIndex). */
  readonly copiesEnvironment?: () => boolean;
  /**
   * The machine the unit's installs run on, where it names it (`--platform=linux/arm64`, a lock's `… on aarch64`):
   * markers on `platform_machine` are judged for it. Elsewhere DEFAULT_MACHINE decides what depends on one.
   */
  readonly platform?: Machine;
}

/** The Pythons a conda environment file names for itself (`python=3.7`, `python>=3.8,<3.10`), where it does. */
function condaEnvironmentPythons(around: Surroundings): StagePythons | undefined {
  const pythons = around.condaPythons;
  if (!pythons?.length || around.images.length > 0 || around.base || around.unknownPython) return undefined;
  return { versions: pythons, described: `${pythons.join(', ')} (the environment's python)` };
}

/** How an unpinned torch's install picks among its indexes (newestTorchClaim). */
function torchInstall(
  file: ParsedFile,
  pkg: PackageFact,
  invocation: Invocation | undefined,
  specifier?: string,
): TorchInstall | undefined {
  if (!invocation) return specifier !== undefined ? { indexes: [], specifier } : undefined;
  return {
    ...(specifier !== undefined ? { specifier } : {}),
    indexes: invocation.indexes,
    // uv's first-index strategy, unless the install compares indexes as pip does: the command's (a requirements file
    // `uv pip install -r` reads is resolved by uv).
    firstIndex: firstIndexStrategy(invocation),
    autoBackend: autoBackend(file, pkg, invocation),
  };
}

/**
 * `--torch-backend=auto` (or UV_TORCH_BACKEND=auto): uv picks a PyTorch index by the driver it finds (index-url's),
 * for every requirement the command reads (a pyproject.toml or requirements file it installs as much as its own words).
 */
function autoBackend(file: ParsedFile, pkg: PackageFact, invocation: Invocation | undefined): boolean {
  return (
    optionContexts(file, 'torch-backend-auto').has(pkg.context) ||
    (invocation !== undefined && installerOf(invocation).picksTorch)
  );
}

/**
 * What an invocation's installer decides itself, worked out once per invocation (a chain of includes is one invocation
 * of many members, and each of its packages asks): whether it picks the PyTorch index (`--torch-backend=auto`, or Cog
 * on a GPU, whose base image ships a torch of its own choosing that pip keeps where a range admits it), and Cog's
 * rule for a torch pin's build (InstallContext.pytorchUpTo).
 */
export function installerOf(invocation: Invocation): {
  readonly picksTorch: boolean;
  readonly upTo?: InstallContext['pytorchUpTo'];
} {
  let found = installers.get(invocation);
  if (!found) {
    const upTo = invocation.members.find((member) => member.context.pytorchUpTo)?.context.pytorchUpTo;
    const picksTorch =
      invocation.autoBackend === true ||
      upTo !== undefined ||
      invocation.members.some((member) => optionContexts(member.file, 'torch-backend-auto').has(member.context.id));
    installers.set(invocation, (found = { picksTorch, ...(upTo ? { upTo } : {}) }));
  }
  return found;
}

const installers = new WeakMap<
  Invocation,
  { readonly picksTorch: boolean; readonly upTo?: InstallContext['pytorchUpTo'] }
>();

function finishUnit(parts: UnitParts, kb: KnowledgeBase): Unit {
  const { label, root, stage, files, invocations, rootPackages, memberPackages } = parts;
  // An index a pyproject routes packages to on some machines only says nothing of a unit built for another one: the
  // machine its FROM names, else, for an image's stage, the one a build runs on by default (an aarch64-only route of
  // open-instruct's torch is not what an x86_64 build of its CUDA 12.8 image installs).
  const machine = parts.platform ?? (stage !== undefined ? DEFAULT_MACHINE : undefined);
  // A package whose build is a CUDA build on some machines alone (ctranslate2's aarch64 wheels are CPU-only) claims
  // nothing on the others.
  const staticClaims = machine
    ? parts.claims.filter(
        (claim) =>
          (!claim.machines || claim.machines.includes(machine)) &&
          (!claim.index?.machines ||
            evaluateMarker(claim.index.machines, { values: { platform_machine: machine } }) !== false),
      )
    : parts.claims;
  const invocationOf = new Map<InstallContext, Invocation>();
  for (const invocation of invocations)
    for (const member of invocation.members) invocationOf.set(member.context, invocation);
  const packages: UnitPackage[] = [];
  const implied: CudaClaim[] = [];
  const unitPackages = (file: ParsedFile) =>
    file === root && rootPackages ? rootPackages : (memberPackages?.get(file) ?? file.packages);
  let around: Surroundings | undefined;
  const surroundings = () =>
    (around ??= surroundingsOf(
      staticClaims,
      files.flatMap((file) => unitPackages(file)),
      parts.pythons,
      parts.baseImage,
      files.flatMap((file) => (file.requiresPython ? [file.requiresPython] : [])),
    ));
  const command = rootCommands(root, invocationOf);
  const kept = stage !== undefined ? keptTorch(root, stage, files, unitPackages, invocationOf, command, kb) : undefined;
  // Where in the Dockerfile each install runs: the offset of its command (Infinity where it is no command of the
  // Dockerfile: a requirements file's unit resolves as one).
  const commandAt = (file: ParsedFile, pkg: PackageFact): number =>
    stage !== undefined ? (command(file, pkg)?.span.start ?? Infinity) : Infinity;
  const pinned = exactPins(files, unitPackages, commandAt, kb);
  let pythons: readonly string[] | undefined;
  let notInstalled: Set<PackageFact> | undefined;
  /** Requirements whose label the installer takes off and picks the build itself (Cog): their label claims nothing. */
  let relabelled: Set<PackageFact> | undefined;
  let alternatives: Alternatives[] | undefined;
  let torchRanges: TorchRange[] | undefined;
  // The requirements of each package an install reads, by invocation (pip combines a package's requirements).
  const byInvocation = new Map<Invocation | ParsedFile, Map<string, PackageFact[]>>();
  const samePackage = (
    invocation: Invocation | undefined,
    file: ParsedFile,
    pkg: PackageFact,
  ): readonly PackageFact[] => {
    const key = invocation ?? file;
    let byName = byInvocation.get(key);
    if (!byName) {
      byName = new Map();
      const members = invocation ? invocation.members : file.contexts.map((context) => ({ file, context }));
      for (const member of members)
        for (const other of unitPackages(member.file))
          if (other.ecosystem === 'pip' && member.file.contexts[other.context] === member.context) {
            const list = byName.get(other.name);
            if (list) list.push(other);
            else byName.set(other.name, [other]);
          }
      byInvocation.set(key, byName);
    }
    return byName.get(pkg.name) ?? [];
  };
  // A torchvision, torchaudio, vllm or sglang range with no torch requirement beside it brings the torch its newest
  // release pins: only where nothing else may have put torch there (not a stage built FROM another stage of the file;
  // a base image's own torch pip replaces, as the companion's wheel requires another).
  let torch: UnitTorch | undefined;
  const torchOf = (): UnitTorch => (torch ??= unitTorch(root, stage, files, unitPackages));
  // An earlier command's torch pin or range is no bar: pip replaces the torch a later install's requirement does not
  // admit (`pip install -U "torch==2.6.0.*"`, then `pip install -U torchvision`: the newest torchvision's torch).
  const pinnedBefore = (file: ParsedFile, pkg: PackageFact): boolean => {
    const kind = torchOf();
    if (kind === 'pinned') return pinned.lastTorchPin < commandAt(file, pkg);
    return kind === 'ranges' && pinned.lastTorchRange < commandAt(file, pkg);
  };
  const picksTorch = (file: ParsedFile, pkg: PackageFact, alone: boolean | undefined): boolean =>
    pkg.name === 'torch' || (PICKS_TORCH.has(pkg.name) && !alone && (torchOf() === 'none' || pinnedBefore(file, pkg)));
  // What each invocation's commands say, once per invocation (a chain of includes has a member per file, and a
  // package each): whether pip reads a configuration file the gate cannot, and whether it installs over what is there.
  const flags = new Map(
    invocations.map((invocation) => [
      invocation,
      {
        hidden: invocation.members.some((member) => member.context.hiddenIndexes),
        upgrades: invocation.members.some((member) => member.context.replacesInstalled),
        alone: invocation.members.some((member) => member.context.noDependencies),
      },
    ]),
  );
  for (const file of files) {
    for (const pkg of unitPackages(file)) {
      // A requirement whose marker no Python the unit may run satisfies is not installed (`; python_version ==
      // "3.13"` on Ubuntu 24.04's python3.12): pip skips it. So is one for another machine than the unit's, where the
      // unit says which (`platform_machine == 'aarch64'` in a stage built FROM --platform=linux/amd64).
      const markers = pkg.ecosystem === 'pip' ? pkg.markers : undefined;
      const byMachine = parts.platform && markers?.includes('platform_machine');
      if (markers && (byMachine || markers.includes('python_version'))) {
        const candidates = markers.includes('python_version') ? (pythons ??= unitPythons(surroundings(), kb)) : [];
        const machine: Record<string, string> = byMachine ? { platform_machine: parts.platform! } : {};
        const holds = (python: string | undefined) =>
          evaluateMarker(markers, { values: python ? { ...machine, python_version: python } : machine }) !== false;
        if (candidates.length > 0 ? !candidates.some(holds) : byMachine && !holds(undefined)) {
          (notInstalled ??= new Set()).add(pkg);
          continue;
        }
      }
      const context = file.contexts[pkg.context];
      const invocation = context ? invocationOf.get(context) : undefined;
      // Where pip reads a configuration file the gate cannot (`COPY pip.conf /etc/pip.conf`, PIP_CONFIG_FILE), which
      // index serves a requirement is not known: only a build its own name or URL gives, or a --index-url written
      // on the command (which replaces the file's), is.
      const hidden = (invocation && flags.get(invocation)?.hidden) ?? false;
      const resolved = resolveTorchBuild(
        pkg,
        invocation?.indexes ?? NO_INDEXES,
        kb,
        parts.platform ?? machineOf(markers),
        invocation ? installerOf(invocation).upTo : context?.pytorchUpTo,
      );
      const build = hidden && resolved && !INDEPENDENT.has(resolved.source) ? undefined : resolved;
      packages.push({ file, pkg, invocation, build, ...(kept?.has(pkg) ? { kept: true } : {}) });
      if (pkg.localLabel && build?.index?.addedBy) (relabelled ??= new Set()).add(pkg);
      // What a range (or no version) installs: every release it admits has one CUDA major on PyPI, or else the
      // newest it admits, for each Python the image may run, does; `apt-get install cuda-toolkit`: the newest CUDA.
      // Not where an earlier command of the stage installed a torch that pip may keep (kept).
      // Nor where the unit pins the package to a version the range admits (an extra's `torch==2.7.1` beside the
      // project's `torch>=1.13.1`, a constraints file's pin): pip resolves them to one version, that one.
      const decided =
        hidden ||
        kept?.has(pkg) ||
        (!pkg.exact &&
          pkg.ecosystem === 'pip' &&
          !context?.replacesInstalled &&
          !(invocation && flags.get(invocation)?.upgrades) &&
          pinnedWithin(pinned, pkg, commandAt(file, pkg), invocation?.command?.replacesInstalled));
      // What pip takes for a range of torch (or of a companion that brings it), with the other requirements of the
      // package its install reads.
      // With --no-deps (on the command, or an include's) a companion brings no torch.
      const alone = context?.noDependencies || (invocation !== undefined && flags.get(invocation)?.alone === true);
      const picked = !build && !decided && picksTorch(file, pkg, alone);
      const specifier = picked ? combinedSpecifier(pkg, samePackage(invocation, file, pkg)) : pkg.specifier;
      const unpinned = decided
        ? undefined
        : ((picked ? torchRangeClaim(file, pkg, invocation, surroundings, kb, parts.locked, specifier) : undefined) ??
          (pkg.ecosystem === 'apt' ? newestToolkitClaim(file, pkg, surroundings(), kb) : undefined));
      if (unpinned) implied.push(unpinned);
      // An unpinned torch whose build depends on the Python, which the unit does not say: each build it may be.
      else if (picked && !parts.locked && pkg.ecosystem === 'pip' && !pkg.exact) {
        const either = newestTorchAlternatives(
          file,
          pkg,
          torchInstall(file, pkg, invocation, specifier),
          surroundings(),
          kb,
        );
        if (either) (alternatives ??= []).push(either);
      }
      // A torch range from plain PyPI that nothing else in the unit decides: the rules that know the unit's Pythons
      // work out the release pip takes (gpu-arch its kernels, wheel-missing whether any has a wheel for them).
      if (
        picked &&
        !parts.locked &&
        pkg.name === 'torch' &&
        pkg.ecosystem === 'pip' &&
        !pkg.exact &&
        !pkg.url &&
        specifier &&
        !specifier.includes('+') &&
        (invocation?.indexes ?? NO_INDEXES).every((index) => index.kind === 'index-url' && isPypiIndex(index.url)) &&
        !autoBackend(file, pkg, invocation)
      )
        (torchRanges ??= []).push({ file, pkg, specifier: specifier.replace(/\s+/g, '') });
      const carried = !build ? builtWithTorch(file, pkg, invocation, hidden, kb) : undefined;
      // With no torch requirement in the unit that decides torch (none, ranges only: pip takes the pin's torch for
      // them too, or pins of earlier commands only, which pip replaces), the torch it installs is the one its wheel
      // requires, from PyPI: that release's build, to the minor (`vllm==0.11.0` installs torch 2.8.0, CUDA 12.8).
      // With --no-deps it brings no torch: its own build, to the major its torch's wheel has (none for a pure-Python
      // wheel, whose CUDA is only the torch it requires: that torch's, which pip puts in place of another).
      const pure = carried && PURE_PYTHON_CARRIERS.has(pkg.name);
      // A torch pin of the same or a later command decides torch: the pure-Python wheel then says nothing.
      if (carried && pure && !alone && torchOf() !== 'decided' && (torchOf() !== 'pinned' || pinnedBefore(file, pkg))) {
        const its = withItsTorch(carried, kb);
        if (its) implied.push(its);
      } else if (carried && !pure)
        implied.push(
          (!alone &&
            torchOf() !== 'decided' &&
            (torchOf() !== 'pinned' || pinnedBefore(file, pkg)) &&
            shipsNoTorch(root, stage, kb) &&
            withItsTorch(carried, kb)) ||
            carried.claim,
        );
      if (build?.cuda && (!pkg.localLabel || build.index?.addedBy) && !pkg.url) {
        implied.push(
          cudaClaim({
            kind: 'implied',
            file,
            context: pkg.context,
            cuda: build.cuda,
            precision: 'minor',
            span: pkg.span,
            subject: withAlternative(file, pkg.context, `${pkg.rawName}${pkg.specifier}`),
            package: pkg,
            record: build.release,
            index: build.index,
          }),
        );
      }
    }
  }
  // A PyTorch index an install names, all of whose torch packages the image already has and keeps (an unpinned
  // `pip install torch torchvision --index-url …/cu118` on runpod/pytorch's torch 2.8.0): it serves nothing.
  // So is an extra one beside torch requirements whose release pip takes from PyPI, where the unit names no image
  // (`--extra-index-url …/cu129` beside `torch>=2.0.0`: PyPI's 2.14.0, which the index has no cu129 build of): the
  // torch's build is the unit's CUDA, and index-url says what the index does not serve.
  const pypiPicked = new Set(
    stage === undefined
      ? implied.flatMap((claim) => (claim.newest && !claim.index && claim.package ? [claim.package] : []))
      : [],
  );
  let idle: Set<CudaClaim> | undefined;
  if (kept?.size || pypiPicked.size)
    for (const claim of staticClaims) {
      if (claim.kind !== 'index' || !claim.index || !isPytorchIndex(claim.index.url)) continue;
      if (claim.index.kind !== 'extra-index-url' && !kept?.size) continue;
      const context = claim.context !== undefined ? claim.file.contexts[claim.context] : undefined;
      const invocation = context ? invocationOf.get(context) : undefined;
      const served = packages.filter(
        (entry) =>
          TORCH_FAMILY.has(entry.pkg.name) &&
          (invocation
            ? entry.invocation === invocation
            : entry.file === claim.file && entry.pkg.context === claim.context),
      );
      if (served.length > 0 && served.every((entry) => kept?.has(entry.pkg) || pypiPicked.has(entry.pkg)))
        (idle ??= new Set()).add(claim);
    }
  const claims = [
    ...(notInstalled || relabelled || idle
      ? staticClaims.filter(
          (claim) =>
            !idle?.has(claim) &&
            (!claim.package ||
              (!notInstalled?.has(claim.package) && !(claim.kind === 'wheel-tag' && relabelled?.has(claim.package)))),
        )
      : staticClaims),
    ...implied,
  ];
  const target = chooseTarget(claims, torchIndexes(claims, packages));
  const more = {
    ...(alternatives ? { alternatives } : {}),
    ...(torchRanges ? { torchRanges } : {}),
    ...(parts.platform ? { machine: parts.platform } : {}),
  };
  if (stage === undefined) {
    // A conda environment that names its Python runs its `pip:` list with it (and only with it): wheel-missing judges
    // a torch pin by it, as it does a Dockerfile stage's.
    // A file that names the image it installs onto (a cog.yaml's Cog base image, whose tag says its Python) says its
    // Pythons as a Dockerfile stage does.
    const environment =
      root.kind === 'conda' && root.packages.some((pkg) => pkg.name === 'python' && pkg.ecosystem === 'conda')
        ? condaEnvironmentPythons(surroundings())
        : staticClaims.some((claim) => claim.kind === 'image' && claim.file === root && claim.image)
          ? stagePythons(surroundings(), kb)
          : undefined;
    return {
      label,
      root,
      stage,
      files,
      claims,
      target,
      packages,
      invocations,
      ...more,
      ...(environment ? { pythonsRun: () => environment } : {}),
    };
  }
  let runs: StagePythons | null | undefined;
  const pythonsRun = (): StagePythons | undefined => {
    runs ??= (parts.copiesEnvironment?.() ? undefined : stagePythons(surroundings(), kb)) ?? null;
    return runs ?? undefined;
  };
  return { label, root, stage, files, claims, target, packages, invocations, ...more, pythonsRun };
}

/** A torch requirement whose version the check cannot know (`torch==$(cat version.txt)`, `torch==${V}`). */
const UNRESOLVED_TORCH = /^["']?torch(?![\w.-])/i;

/** Where a file's torch requirements of unknown version are, in order (worked out once per file). */
function unresolvedTorch(root: ParsedFile): readonly number[] {
  let starts = UNRESOLVED_TORCH_STARTS.get(root);
  if (!starts) {
    starts = root.unresolved
      .filter((unread) => UNRESOLVED_TORCH.test(unread.text))
      .map((unread) => unread.span.start)
      .sort((a, b) => a - b);
    UNRESOLVED_TORCH_STARTS.set(root, starts);
  }
  return starts;
}

const UNRESOLVED_TORCH_STARTS = new WeakMap<ParsedFile, readonly number[]>();

/**
 * What a unit's own files say of torch: nothing (`none`: no requirement names it, none is left unread), only ranges
 * (`ranges`: pip's pick may still be decided by another package's pin), only exact pip pins (`pinned`: a later command
 * that installs a companion or vLLM replaces the torch they do not admit), or its build (`decided`: an address or
 * conda's pytorch, pins and ranges, or a requirement whose version only the build knows, `torch==$TORCH_VERSION`). A
 * stage built on another stage of the file runs the torch the stages above installed: `decided`.
 */
type UnitTorch = 'none' | 'ranges' | 'pinned' | 'decided';

function unitTorch(
  root: ParsedFile,
  stage: number | undefined,
  files: readonly ParsedFile[],
  packagesOf: (file: ParsedFile) => readonly PackageFact[],
): UnitTorch {
  if (stage !== undefined && StageTree.of(root).root(stage) !== stage) return 'decided';
  if (stage === undefined ? unresolvedTorch(root).length > 0 : unreadTorchOf(root, stage) !== undefined)
    return 'decided';
  let ranges = false;
  let pins = false;
  for (const file of files)
    for (const pkg of packagesOf(file)) {
      if (pkg.name !== 'torch' && pkg.name !== 'pytorch') continue;
      if (pkg.url !== undefined || pkg.ecosystem !== 'pip') return 'decided';
      if (pkg.exact !== undefined) pins = true;
      else ranges = true;
    }
  return pins ? (ranges ? 'decided' : 'pinned') : ranges ? 'ranges' : 'none';
}

/** Where the first torch requirement of unknown version of a Dockerfile's stage is, if it has one. */
function unreadTorchOf(root: ParsedFile, stage: number): number | undefined {
  const from = root.stages.findIndex((candidate) => candidate.index === stage);
  const start = root.stages[from]?.span.start ?? 0;
  const end = root.stages[from + 1]?.span.start ?? Infinity;
  const unreadTorch = unresolvedTorch(root);
  // The first of them at or after the stage's start (a file of many stages asks once per stage: searched by halving).
  let low = 0;
  for (let high = unreadTorch.length; low < high; ) {
    const middle = (low + high) >> 1;
    if (unreadTorch[middle]! < start) low = middle + 1;
    else high = middle;
  }
  return low < unreadTorch.length && unreadTorch[low]! < end ? unreadTorch[low] : undefined;
}

/**
 * The torch requirements of a Dockerfile stage that pip may answer with the torch an earlier command of the stage
 * installed: a range (or no version) installed after another torch install, by a command that does not replace what
 * is installed (no `-U`, `--force-reinstall`, `-I`). pip and uv keep an installed version that satisfies the
 * requirement ("Requirement already satisfied"; pip's user guide, "Satisfying requirements"), so which torch the stage
 * ends with is the earlier one's, unless that one is an exact version the range excludes. What the range would take
 * from PyPI is then no certain claim.
 */
function keptTorch(
  root: ParsedFile,
  stage: number,
  files: readonly ParsedFile[],
  packagesOf: (file: ParsedFile) => readonly PackageFact[],
  invocationOf: ReadonlyMap<InstallContext, Invocation>,
  command: RootCommand,
  kb: KnowledgeBase,
): ReadonlySet<PackageFact> | undefined {
  const installs: { pkg: PackageFact; at: InstallContext }[] = [];
  const pinners: PackageFact[] = [];
  for (const file of files)
    for (const pkg of packagesOf(file)) {
      if (pkg.ecosystem !== 'pip' || (pkg.name !== 'torch' && !PICKS_TORCH.has(pkg.name))) continue;
      const at = command(file, pkg);
      if (!at || (at.tool !== 'pip' && at.tool !== 'uv')) continue;
      if (pkg.name === 'torch') installs.push({ pkg, at });
      else if (!pkg.exact && !pkg.url && !at.replacesInstalled) pinners.push(pkg);
    }
  // Only a range (or no version) can be kept: most stages pin torch, and nothing more is asked of them.
  const candidates = installs.filter(({ pkg, at }) => !pkg.exact && !pkg.url && !at.replacesInstalled);
  if (candidates.length === 0 && pinners.length === 0) return undefined;
  // A vendor's image that ships torch, and vLLM or SGLang with it, of a version not recorded (vllm/vllm-openai): pip
  // keeps what it ships for a range that admits it, and whether it does is not known here. So may NGC's images other
  // than its PyTorch containers (Triton's vLLM flavour); pytorch/pytorch's and NGC's PyTorch images ship neither.
  const base = baseImages(root).get(StageTree.of(root).root(stage));
  const name = base && !base.unresolved ? imageFullName(base) : '';
  const ships = name !== '' ? kb.shippedPackages(name, base?.tag ?? 'latest') : new Set<string>();
  const vendorTorch = ships.has('torch');
  // NGC's other images whose contents the knowledge does not record (Triton's vLLM flavour): anything may be there.
  const otherNgc = base?.registry === 'nvcr.io' && base.repository !== 'nvidia/pytorch' && ships.size === 0;
  const shipped = shippedTorch(root, stage, kb);
  // torchvision and torchaudio ship with the torch of pytorch/pytorch's images (and NGC's torchvision with its
  // PyTorch's): kept where the range admits the one that belongs to it, or where which one that is is not recorded.
  const companions = shipped !== undefined ? kb.companions(shipped.replace(/\+.*$/, '')) : undefined;
  const keptPinners = pinners.filter((pkg) => {
    if (otherNgc) return true;
    // What the image ships, where its tag names the version (vllm/vllm-openai:v0.10.2), only for a range that admits
    // it: `vllm>=0.11` there installs the newest vllm, and the torch it pins.
    if (ships.has(pkg.name)) {
      const version = kb.shippedVersion(name, base?.tag ?? 'latest', pkg.name);
      return version === undefined || admitsInstalled(pkg.specifier, version);
    }
    if (pkg.name !== 'torchvision' && pkg.name !== 'torchaudio') return false;
    // A vendor's torch comes with its companions, whose versions are not recorded either.
    if (vendorTorch) return true;
    if (shipped === undefined) return false;
    const versions = companions?.[pkg.name];
    return !versions || versions.some((version) => admitsInstalled(pkg.specifier, version));
  });
  // The first command of the stage that installs a requirements file the gate could not read (`pip install -r
  // /tmp/torch.txt`, written by an earlier `grep`): it may install any torch. (An earlier exact pin the range admits
  // is pinnedWithin's, which holds whatever the order.)
  let firstUnread = Infinity;
  for (const context of stageContexts(root, stage)) {
    const invocation = invocationOf.get(context);
    if ((context.tool === 'pip' || context.tool === 'uv') && invocation && readsUnread(invocation))
      firstUnread = Math.min(firstUnread, context.span.start);
  }
  // A torch requirement of the stage whose version is only known when the build runs (`pip install
  // torch==$(cat /tmp/torch_version.txt)`, aibrix's builders): it may install a torch a later range admits.
  firstUnread = Math.min(firstUnread, unreadTorchOf(root, stage) ?? Infinity);
  // The first install that pins no version: pip keeps what it installed for a later range.
  let firstUnpinned = Infinity;
  for (const { pkg, at } of installs)
    if (!pkg.exact && !pkg.url) firstUnpinned = Math.min(firstUnpinned, at.span.start);
  // The torch the base image ships (NGC's PyTorch containers, pytorch/pytorch): pip keeps it where the range admits
  // it ("Requirement already satisfied"; a pre-release already installed counts, PEP 440), and installs none.
  // A torch an earlier command installed from an address (`pip install https://…/torch-2.3.0-…-linux_aarch64.whl`, a
  // local wheel): pip keeps it where the range admits the version its file names, or where the file names none.
  const fromAddresses = installs.filter(({ pkg }) => pkg.url);
  const keptFromAddress = (pkg: PackageFact, at: InstallContext): boolean =>
    fromAddresses.some(
      (earlier) =>
        earlier.at.span.start < at.span.start &&
        (earlier.pkg.exact === undefined || admitsInstalled(pkg.specifier, earlier.pkg.exact)),
    );
  // A virtual environment the stage makes and puts first on PATH before the install (flytesnacks' `python3 -m venv
  // /opt/venv` and `ENV PATH="/opt/venv/bin:$PATH"` on pytorch/pytorch): its pip sees none of the image's packages
  // (docs.python.org/3/library/venv.html: isolated from the base's site-packages unless --system-site-packages).
  const venvAt = freshVenvAt(root, stage);
  const sees = (at: InstallContext): boolean => venvAt === undefined || at.span.start < venvAt;
  const kept = new Set<PackageFact>(keptPinners.filter(() => venvAt === undefined));
  for (const { pkg, at } of candidates)
    if (
      Math.min(firstUnread, firstUnpinned) < at.span.start ||
      keptFromAddress(pkg, at) ||
      (sees(at) && (shipped !== undefined ? admitsInstalled(pkg.specifier, shipped) : vendorTorch))
    )
      kept.add(pkg);
  return kept;
}

/**
 * Where a Dockerfile stage starts installing into a virtual environment of its own, isolated from the image's
 * packages: the end of the first `ENV PATH=…/bin…` (or VIRTUAL_ENV) after a `python -m venv`, `virtualenv` or `uv venv`
 * that does not ask for the system's site-packages. Undefined where it makes none.
 */
function freshVenvAt(root: ParsedFile, stage: number): number | undefined {
  const start = root.stages[stage]?.span.start;
  if (start === undefined) return undefined;
  const end = root.stages[stage + 1]?.span.start ?? root.source.text.length;
  const text = root.source.text.slice(start, end);
  const made = /(?:-m\s+venv|\bvirtualenv|\buv\s+venv)\b([^\n]*)/.exec(text);
  if (!made || /--system-site-packages/.test(made[1]!)) return undefined;
  // Line by line (linear whatever the lines' length): an ENV line that sets PATH to a bin folder, or VIRTUAL_ENV.
  let at = text.indexOf('\n', made.index);
  while (at >= 0) {
    const next = text.indexOf('\n', at + 1);
    const line = text.slice(at + 1, next < 0 ? text.length : next);
    if (/^\s*ENV\s/i.test(line) && ((/\bPATH\b/.test(line) && line.includes('/bin')) || /\bVIRTUAL_ENV\s*=/.test(line)))
      return start + (next < 0 ? text.length : next);
    at = next;
  }
  return undefined;
}

/**
 * The torch a stage's base image ships, where the knowledge records it: an NGC PyTorch container's
 * (`2.4.0a0+07cecf4168` in 24.05-py3), an NGC row's frameworks, pytorch/pytorch's tag (`2.3.0-cuda12.1-…`).
 */
function shippedTorch(root: ParsedFile, stage: number, kb: KnowledgeBase): string | undefined {
  const image = baseImages(root).get(StageTree.of(root).root(stage));
  if (!image?.tag || image.unresolved) return undefined;
  if (image.registry === 'nvcr.io' && image.repository === 'nvidia/pytorch')
    return kb.ngcPytorch(image.tag)?.torch ?? kb.ngcImage(image.repository, image.tag)?.frameworks?.pytorch;
  if (image.registry === 'nvcr.io') return kb.ngcImage(image.repository, image.tag)?.frameworks?.pytorch;
  if (!image.registry && image.repository === 'pytorch/pytorch') return kb.pytorchImageTag(image.tag)?.torch;
  return undefined;
}

/**
 * Whether what a unit installs goes onto no torch of its image: a requirements file's unit (no image), or a stage on
 * an image known to ship none (nvidia/cuda, a plain OS or Docker Official Image, a package-manager image). On any
 * other image (a vendor's, NGC's, pytorch/pytorch, one not known) a torch the image ships may meet an exact
 * requirement, and pip keeps it ("Requirement already satisfied"), whatever its build.
 */
function shipsNoTorch(root: ParsedFile, stage: number | undefined, kb: KnowledgeBase): boolean {
  return stage === undefined || imageShipsNoTorch(root, stage, kb);
}

/** Whether a Dockerfile stage's chain of stages starts from an image known to ship no torch (shipsNoTorch). */
export function imageShipsNoTorch(root: ParsedFile, stage: number, kb: KnowledgeBase): boolean {
  const image = baseImages(root).get(StageTree.of(root).root(stage));
  if (!image || image.unresolved) return false;
  const name = imageFullName(image);
  return (
    kb.isNvidiaCuda(image.registry, image.repository) ||
    kb.officialImage(image.registry, image.repository) !== undefined ||
    kb.osImage(name) !== undefined ||
    kb.redHatPythonImage(name) !== undefined ||
    kb.toolImage(name, image.tag ?? 'latest')?.cuda === 'none'
  );
}

/**
 * The torch a Dockerfile stage runs when neither it nor a stage above it names torch: the one its base image ships,
 * where the image's tag says which (pytorch/pytorch's `2.6.0-cuda12.4-cudnn9-devel`: torch 2.6.0+cu124), as a torch
 * pinned at the FROM line, for companions to be compared with. Not where the stage reads an install the gate could
 * not, or leaves anything of its chain of stages unread (a script it runs, a value only the build knows): that may
 * put another torch there. NGC's images are left out: their torch is a pre-release build of their own
 * (`2.6.0a0+ecf3bae40a`), which PyPI's companions' exact requirements do not admit.
 */
export function imageTorch(
  unit: Unit,
  kb: KnowledgeBase,
): { readonly torch: UnitPackage; readonly image: string } | undefined {
  const { root, stage } = unit;
  if (stage === undefined) return undefined;
  // The image first: most stages are on no pytorch/pytorch image, and the rest is asked only of those that are.
  const tree = StageTree.of(root);
  const image = baseImages(root).get(tree.root(stage));
  if (!image?.tag || image.unresolved || image.registry !== undefined || image.repository !== 'pytorch/pytorch')
    return undefined;
  const tag = kb.pytorchImageTag(image.tag);
  if (!tag) return undefined;
  if (unit.packages.some(namesTorch) || unit.inherited?.findLast(namesTorch)) return undefined;
  if (unit.invocations.some(readsUnread) || unreadInChain(root)[stage]) return undefined;
  const label = tagFromCuda(tag.cuda);
  const pkg = packageFact({
    ecosystem: 'pip',
    name: 'torch',
    rawName: 'torch',
    nameSpan: image.span,
    span: image.span,
    extras: [],
    specifier: `==${tag.torch}+${label}`,
    specifierSpan: image.span,
    clauses: [],
    exact: `${tag.torch}+${label}`,
    localLabel: label,
  });
  const build: TorchBuild = {
    pkg,
    version: tag.torch,
    cuda: tag.cuda,
    cpu: false,
    source: 'local-label',
    ...(kb.torchRelease(tag.torch) ? { release: kb.torchRelease(tag.torch)! } : {}),
  };
  return { torch: { file: root, pkg, build }, image: image.reference };
}

/** A unit's requirement of torch (pip's torch or conda's pytorch), as one function: Inherited remembers its answers. */
const namesTorch = ({ pkg }: UnitPackage): boolean => pkg.name === 'torch' || pkg.name === 'pytorch';

/**
 * Whether each stage of a Dockerfile, or a stage it is built FROM, leaves something unread (a script a RUN runs, a
 * value only the build knows): worked out once per file, each stage from its parent, which comes earlier.
 */
function unreadInChain(root: ParsedFile): readonly boolean[] {
  let answers = unreadChains.get(root);
  if (!answers) {
    const own: boolean[] = [];
    const starts = root.stages.map((stage) => stage.span.start);
    for (const unread of root.unresolved) {
      // The stage the fact is in: the last that starts at or before it (searched by halving).
      let low = 0;
      for (let high = starts.length; low < high; ) {
        const middle = (low + high) >> 1;
        if (starts[middle]! <= unread.span.start) low = middle + 1;
        else high = middle;
      }
      const at = root.stages[low - 1]?.index;
      if (at !== undefined) own[at] = true;
    }
    const tree = StageTree.of(root);
    answers = [];
    for (let stage = 0; stage < tree.stageCount; stage++) {
      const parent = tree.parent(stage);
      answers[stage] = (own[stage] ?? false) || (parent !== undefined && (answers[parent] ?? false));
    }
    unreadChains.set(root, answers);
  }
  return answers;
}

const unreadChains = new WeakMap<ParsedFile, boolean[]>();

/** Each stage's FROM image where it names one (not an earlier stage), worked out once per file. */
function baseImages(root: ParsedFile): ReadonlyMap<number, ImageFact> {
  let images = baseImagesOf.get(root);
  if (!images) {
    images = new Map();
    for (const image of root.images)
      if (image.fromStage === undefined && !images.has(image.stage)) images.set(image.stage, image);
    baseImagesOf.set(root, images);
  }
  return images;
}

const baseImagesOf = new WeakMap<ParsedFile, Map<number, ImageFact>>();

/** Whether a requirement is met by a version already installed: a pre-release installed counts (PEP 440). */
function admitsInstalled(specifier: string, version: string): boolean {
  if (specifier.trim() === '') return true;
  return satisfiesPep440(version.replace(/\+.*$/, ''), specifier.replace(/\s+/g, ''), true) ?? false;
}

/**
 * Whether an invocation's command installs a file the gate could not read (`pip install -r /tmp/torch.txt`, a file
 * written while the image builds): an include no member of the invocation answers. What it installs is not known.
 */
export function readsUnread(invocation: Invocation): boolean {
  let includes = 0;
  for (const member of invocation.members) includes += member.context.includes.length;
  return includes > invocation.members.length - 1;
}

/** The Dockerfile command (its install context) that installs a package of a unit's file; undefined where none does. */
type RootCommand = (file: ParsedFile, pkg: PackageFact) => InstallContext | undefined;

/** A unit's RootCommand: a file the Dockerfile includes is installed by its invocation's command in the Dockerfile. */
function rootCommands(root: ParsedFile, invocationOf: ReadonlyMap<InstallContext, Invocation>): RootCommand {
  const rootContext = new Map<Invocation, InstallContext | undefined>();
  return (file, pkg) => {
    const context = file.contexts[pkg.context];
    if (file === root) return context;
    const invocation = context ? invocationOf.get(context) : undefined;
    if (!invocation) return undefined;
    if (!rootContext.has(invocation))
      rootContext.set(
        invocation,
        invocation.members.find((member) => member.file === root)?.context ?? invocation.command,
      );
    return rootContext.get(invocation);
  };
}

/** Where a build comes from whatever index a hidden pip configuration names. */
const INDEPENDENT: ReadonlySet<string> = new Set(['local-label', 'url', 'index-url', 'find-links']);

/** The exact versions a unit pins each pip package to, and where the last command that pins torch runs. */
interface ExactPins {
  /**
   * Each package's exact versions, with the offset of the Dockerfile command that pins each (Infinity where none
   * does): distinct, a few at most per name in real files.
   */
  readonly versions: ReadonlyMap<string, readonly { readonly version: string; readonly at: number }[]>;
  /** The offset of the last Dockerfile command with an exact torch requirement (-Infinity where none has). */
  readonly lastTorchPin: number;
  /** The same of the last one that fixes torch, by its own pin or another package's (`torchvision==0.20.0`). */
  readonly lastTorchBound: number;
  /** The offset of the last Dockerfile command with a torch range or wildcard (`torch==2.6.0.*`), -Infinity if none. */
  readonly lastTorchRange: number;
}

/** The exact versions a unit pins each pip package to. */
function exactPins(
  files: readonly ParsedFile[],
  packagesOf: (file: ParsedFile) => readonly PackageFact[],
  commandAt: (file: ParsedFile, pkg: PackageFact) => number,
  kb: KnowledgeBase,
): ExactPins {
  const pins = new Map<string, { version: string; at: number }[]>();
  let lastTorchPin = -Infinity;
  let lastTorchBound = -Infinity;
  let lastTorchRange = -Infinity;
  let at = 0;
  const add = (name: string, version: string): void => {
    if (name === 'torch') lastTorchBound = Math.max(lastTorchBound, at);
    const versions = pins.get(name);
    if (!versions) pins.set(name, [{ version, at }]);
    else if (versions.length <= MAX_PINS && !versions.some((pin) => pin.version === version && pin.at === at))
      versions.push({ version, at });
  };
  for (const file of files)
    for (const pkg of packagesOf(file)) {
      at = commandAt(file, pkg);
      // conda's pytorch is pip's torch in the same environment (a conda image's pip sees it): pip keeps one that
      // meets a range (OLMo's Dockerfile.gantry: `conda install pytorch==2.2.2`, then a project's `torch>=2.1`).
      if (pkg.ecosystem === 'conda' && pkg.exact && pkg.name === 'pytorch') add('torch', pkg.exact);
      if (pkg.ecosystem === 'pip' && pkg.name === 'torch' && !pkg.exact && !pkg.url)
        lastTorchRange = Math.max(lastTorchRange, at);
      if (pkg.ecosystem !== 'pip' || !pkg.exact || pkg.url) continue;
      add(pkg.name, pkg.exact);
      if (pkg.name === 'torch') lastTorchPin = Math.max(lastTorchPin, at);
      // vllm==0.10.2 requires torch==2.8.0 (its wheel's Requires-Dist): pip resolves a torch range beside it to that.
      if (CARRIES_TORCH_CUDA.has(pkg.name)) {
        const version = publicVersion(pkg.exact);
        const pin = kb.companionPin(pkg.name, version, pkg.extras);
        if (pin) add('torch', pin.torch);
      } else for (const torch of torchesBoundBy(pkg, kb)) add('torch', torch);
      // So do torchvision and torchaudio: each release requires its one torch release exactly (torchvision 0.20.0
      // requires torch==2.5.0, pytorch/vision's setup.py pins `torch==<version>`; torchaudio likewise), the pairs of
      // the knowledge's compatibility table (pytorch.org/get-started/previous-versions).
      if (pkg.name === 'torchvision' || pkg.name === 'torchaudio') {
        const owners = kb.torchForCompanion(pkg.name, pkg.exact);
        if (owners.length === 1) add('torch', owners[0]!.version);
      }
    }
  return { versions: pins, lastTorchPin, lastTorchBound, lastTorchRange };
}

/** Past this many distinct pins of one package, a range is taken to admit one of them (nothing is claimed). */
const MAX_PINS = 16;

/**
 * Whether a range (or no version) of a package is met by an exact pin of it in the same unit; `at` is where the
 * package's command runs (Dockerfile offset, Infinity where unordered). Where that command installs what it resolves
 * whatever is installed (`uv sync`), only a pin of the same command counts.
 */
function pinnedWithin(pins: ExactPins, pkg: PackageFact, at: number, replaces = false): boolean {
  const all = pins.versions.get(pkg.name);
  const versions = replaces && all ? all.filter((pin) => pin.at === at) : all;
  // torchvision, torchaudio, vllm or sglang with no pin of its own beside a pinned torch (`sglang[all]==0.5.2` requires
  // torch 2.8.0; `torchaudio==2.8.0` does): each release requires one torch exactly, so pip takes the one that goes
  // with that torch, not today's newest. Not a torch an earlier command pinned: pip's resolver takes the newest
  // release and replaces the installed torch its requirement does not admit (an installed version is no constraint).
  if (!versions && pkg.name !== 'torch' && PICKS_TORCH.has(pkg.name))
    return pins.versions.has('torch') && (at === Infinity || pins.lastTorchBound >= at);
  if (!versions?.length) return false;
  if (pkg.specifier === '' || versions.length > MAX_PINS) return true;
  return versions.some((pin) => admits(pkg.specifier, pin.version));
}

/** A Dockerfile's install contexts by stage, worked out once per file (a stage's unit asks for its own). */
const contextsByStage = new WeakMap<ParsedFile, Map<number, InstallContext[]>>();
function stageContexts(root: ParsedFile, stage: number): readonly InstallContext[] {
  let byStage = contextsByStage.get(root);
  if (!byStage) {
    byStage = groupBy(
      root.contexts.filter((context) => context.stage !== undefined),
      (context) => context.stage!,
    );
    contextsByStage.set(root, byStage);
  }
  return byStage.get(stage) ?? [];
}

/** Whether a PEP 440 specifier admits a version (a local label such as +cu126 does not count); true when unreadable. */
function admits(specifier: string, version: string): boolean {
  return satisfiesPep440(version.replace(/\+.*$/, ''), specifier.replace(/\s+/g, '')) ?? true;
}

/**
 * `pip install "torch>=2.1,<2.7"` from PyPI alone: every release the range admits has a PyPI build of one CUDA major
 * (12 here), so whichever pip picks, that is the major installed. A range whose releases span majors (or an
 * unpinned torch) says nothing certain, and neither does one installed with a PyTorch index (its claims decide).
 */
function rangedTorchClaim(
  file: ParsedFile,
  pkg: PackageFact,
  invocation: Invocation | undefined,
  kb: KnowledgeBase,
  specifier = pkg.specifier,
): CudaClaim | undefined {
  if (
    pkg.ecosystem !== 'pip' ||
    pkg.name !== 'torch' ||
    pkg.exact ||
    pkg.url ||
    !specifier.trim() ||
    specifier.includes('+')
  )
    return undefined;
  if (
    (invocation?.indexes ?? NO_INDEXES).some(
      (index) => isPytorchIndex(index.url) || index.kind === 'index-url' || index.kind === 'find-links',
    )
  )
    return undefined;
  const { majors, releases } = kb.pypiTorchMajors(specifier.replace(/\s+/g, ''));
  const [major] = majors;
  if (majors.size !== 1 || !major || major === 'cpu' || releases.length === 0) return undefined;
  // Every release the range admits a build of one CUDA (`torch~=2.8.0`, `==2.9.*`: CUDA 12.8): that CUDA, as a pin
  // of any of them says.
  const builds = new Set(releases.map((release) => cudaFromTag(release.pypiDefault!)));
  const [only] = builds;
  return cudaClaim({
    kind: 'implied',
    file,
    context: pkg.context,
    cuda: builds.size === 1 && only ? only : major,
    precision: builds.size === 1 && only ? 'minor' : 'major',
    span: pkg.span,
    subject: `${pkg.rawName}${pkg.specifier}`,
    package: pkg,
    record: releases.at(-1),
    index: undefined,
  });
}

/**
 * What a torch range (or no version) installs from plain PyPI: the CUDA every release it admits is built for
 * (rangedTorchClaim: certain whatever release pip takes), else the release pip takes for the Pythons the unit may run
 * (newestTorchClaim).
 */
function torchRangeClaim(
  file: ParsedFile,
  pkg: PackageFact,
  invocation: Invocation | undefined,
  surroundings: () => Surroundings,
  kb: KnowledgeBase,
  /** A lock beside the manifest pins the release (UnitParts.locked): only what every release admitted says. */
  locked = false,
  /** The requirement's specifier with the others of its install that pip combines with it (combinedSpecifier). */
  specifier = pkg.specifier,
): CudaClaim | undefined {
  const install = torchInstall(file, pkg, invocation, specifier);
  // An installer that picks torch itself (uv's `--torch-backend=auto`, by the driver of the machine that runs the
  // install; Cog's base image, with a torch of its own choosing): no build of a range is certain.
  if (install?.autoBackend) return undefined;
  const ranged = rangedTorchClaim(file, pkg, invocation, kb, specifier);
  if (locked || ranged?.precision === 'minor') return ranged;
  // Releases of one major but several minors (`torch>=2.1,<2.9`: CUDA 12.1 to 12.8): the major is certain, and the
  // release pip takes today says the minor.
  const newest = newestTorchClaim(file, pkg, install, surroundings(), kb);
  if (!ranged) return newest;
  return newest?.precision === 'minor' && newest.cuda.split('.')[0] === ranged.cuda
    ? cudaClaim({ ...newest, certainMajor: ranged })
    : ranged;
}

/**
 * A requirement's specifier with those of the other requirements of the same package its install reads, which pip
 * combines into one ("a solution that satisfies both", pypa/pip#8036): `torch<=1.12.1` and `torch` on one
 * Python (flytekit's dev-requirements.in), `-c constraints.txt` holding `torch<2.5` beside `torch`. Requirements whose
 * markers cannot hold on one machine are not combined.
 */
function combinedSpecifier(pkg: PackageFact, peers: readonly PackageFact[]): string {
  if (peers.length <= 1) return pkg.specifier;
  // Worked out once per list of peers and marker: a file of many requirements of one package asks for each of them.
  let byMarkers = COMBINED.get(peers);
  if (!byMarkers) COMBINED.set(peers, (byMarkers = new Map()));
  const key = pkg.markers ?? '';
  let combined = byMarkers.get(key);
  if (combined === undefined) {
    const parts = new Set<string>();
    for (const peer of peers)
      if (peer === pkg || mayHoldTogether(peer.markers, pkg.markers)) {
        const part = peer.specifier.replace(/\s+/g, '');
        if (part) parts.add(part);
      }
    // Past a few requirements of one package (real files have two or three), each its own: a generated file of
    // thousands would make a specifier of thousands of clauses, asked about once per requirement.
    byMarkers.set(key, (combined = parts.size > MAX_COMBINED ? '' : [...parts].sort().join(',')));
  }
  return combined || pkg.specifier;
}

/** The most distinct specifiers of one package combined (combinedSpecifier). */
const MAX_COMBINED = 8;

/** combinedSpecifier's answers, by the list of a package's requirements in one install and by marker. */
const COMBINED = new WeakMap<readonly PackageFact[], Map<string, string>>();

/** The paths of a check's files (worked out once, where a manifest asks whether its lock is among them). */
function pathsOf(files: readonly ParsedFile[]): ReadonlySet<string> {
  return new Set(files.map((file) => file.path));
}

/** The strongest tier present decides; within it the most common CUDA version, then the earliest claim. */
export function chooseTarget(
  claims: readonly CudaClaim[],
  /** Index claims that decide the build of the unit's torch, which may set the target (torchIndexes). */
  deciding?: ReadonlySet<CudaClaim>,
): CudaClaim | undefined {
  for (const tier of TIERS) {
    const inTier = claims.filter(
      (claim) => tier.includes(claim.kind) || (tier === BUILDS_TIER && deciding?.has(claim) === true),
    );
    if (inTier.length === 0) continue;
    const precise = inTier.filter((claim) => claim.precision === 'minor');
    const pool = precise.length > 0 ? precise : inTier;
    const key = (claim: CudaClaim): string =>
      claim.precision === 'minor' ? (cudaMajorMinor(claim.cuda) ?? claim.cuda) : String(cudaMajor(claim.cuda));
    const counts = new Map<string, number>();
    for (const claim of pool) counts.set(key(claim), (counts.get(key(claim)) ?? 0) + 1);
    const best = Math.max(...counts.values());
    const sorted = [...pool].sort(
      (a, b) => CLAIM_PRECEDENCE[a.kind] - CLAIM_PRECEDENCE[b.kind] || a.span.start - b.span.start,
    );
    return sorted.find((claim) => counts.get(key(claim)) === best);
  }
  return undefined;
}

/**
 * Whether two install contexts of a unit never run in one build: the Dockerfile command of one is on a branch that runs
 * only where a build argument changes what the Dockerfile's values pick, and the other's on the branch they pick
 * (InstallContext.otherBuild: `then` of `if [ "$USE_CUDA" = true ]` after `ARG USE_CUDA=false`, and its `else`). A
 * context of an included file stands where the command that reads it does.
 */
export function neverInOneBuild(unit: Unit, a: InstallContext | undefined, b: InstallContext | undefined): boolean {
  if (!a || !b || a === b || !hasOtherBuild(unit)) return false;
  const x = commandOf(unit, a);
  const y = commandOf(unit, b);
  return excludes(x, y) || excludes(y, x);
}

/** Whether a command of the unit runs only in another build (asked once per unit: most have none). */
function hasOtherBuild(unit: Unit): boolean {
  let answer = OTHER_BUILD.get(unit);
  if (answer === undefined) {
    answer =
      unit.invocations.some(({ members }) => members.some(({ context }) => context.otherBuild)) ||
      unit.files.some((file) => file.contexts.some((context) => context.otherBuild));
    OTHER_BUILD.set(unit, answer);
  }
  return answer;
}

const OTHER_BUILD = new WeakMap<Unit, boolean>();

function excludes(a: InstallContext, b: InstallContext): boolean {
  return a.otherBuild !== undefined && b.held !== undefined && a.otherBuild.some((held) => b.held!.includes(held));
}

/** The Dockerfile command a context runs by: its own where it says its branch, else its invocation's that does. */
function commandOf(unit: Unit, context: InstallContext): InstallContext {
  if (context.otherBuild || context.held) return context;
  let commands = COMMANDS.get(unit);
  if (!commands) {
    // Once per unit: each member of an invocation stands where its command does.
    commands = new Map();
    for (const invocation of unit.invocations) {
      const command =
        invocation.command ?? invocation.members.find(({ context: c }) => c.otherBuild || c.held)?.context;
      if (command) for (const member of invocation.members) commands.set(member.context, command);
    }
    COMMANDS.set(unit, commands);
  }
  return commands.get(context) ?? context;
}

const COMMANDS = new WeakMap<Unit, Map<InstallContext, InstallContext>>();

/** The install context of a claim that rests on a package or an index (not an image's stage). */
export function claimContext(claim: CudaClaim): InstallContext | undefined {
  const fact = claim.package ?? claim.index;
  return fact ? claim.file.contexts[fact.context] : undefined;
}

/**
 * Whether an install takes each package from the first index that has it: uv's default strategy (first-index), unless
 * the command asks for `--index-strategy unsafe-best-match`, which compares versions across indexes as pip does
 * (docs.astral.sh/uv/concepts/indexes/#searching-across-multiple-indexes). The command decides, not the files it
 * reads: a requirements file that `uv pip install -r` reads is resolved by uv.
 */
export function firstIndexStrategy(invocation: Invocation): boolean {
  const command = invocation.members[0];
  if (!command || command.context.tool !== 'uv') return false;
  return !optionContexts(command.file, 'unsafe-best-match').has(command.context.id);
}

/**
 * The ids of the contexts of a file that have an option (`unsafe-best-match`, `torch-backend-auto`), once per file and
 * option: asked for every command and package of a stage, which a search of the file's options each time made
 * quadratic in a stage of thousands of pip commands.
 */
export function optionContexts(file: ParsedFile, name: string): ReadonlySet<number> {
  let byName = OPTION_CONTEXTS.get(file);
  if (!byName) OPTION_CONTEXTS.set(file, (byName = new Map()));
  let ids = byName.get(name);
  if (!ids) {
    ids = new Set(file.options.filter((option) => option.name === name).map((option) => option.context));
    byName.set(name, ids);
  }
  return ids;
}

const OPTION_CONTEXTS = new WeakMap<ParsedFile, Map<string, ReadonlySet<number>>>();
