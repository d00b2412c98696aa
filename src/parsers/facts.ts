/**
 * Facts are what parsers read from a file, each with the exact span it came from. Rules only ever see facts,
 * never raw text, so every finding can point at (and edit) the characters it is about.
 */
import { evaluateMarker } from './markers.js';
import type { SourceText, Span } from './source.js';

/** Every kind of file the checker reads; each is described and registered in src/parsers/formats.ts. */
export type FileKind =
  | 'dockerfile'
  | 'requirements'
  | 'conda'
  | 'pyproject'
  | 'uv-lock'
  | 'pixi'
  | 'pixi-lock'
  | 'poetry-lock'
  | 'conda-lock'
  | 'pipfile'
  | 'pipfile-lock'
  | 'pdm-lock'
  | 'kubernetes'
  | 'compose'
  | 'cog'
  | 'skypilot';

export type Ecosystem = 'pip' | 'conda' | 'apt';

/** Where a substituted value came from: `FROM nvidia/cuda:${CUDA}` edits the ARG default, not the FROM line. */
export interface ArgOrigin {
  readonly name: string;
  /** The `${NAME}` reference in the instruction. */
  readonly reference: Span;
}

export interface Spanned {
  /** The characters the fact covers in the file (what an annotation points at). */
  readonly span: Span;
  /** Set when part of the fact's text was substituted from an ARG or ENV default. */
  readonly via?: ArgOrigin;
}

/** The project tools that install some dependency groups unless told otherwise (InstallContext.defaultFor). */
export type DefaultGroupTool = 'poetry' | 'uv' | 'pdm';

/** One `pip install`, one requirements file, one conda environment or one `apt-get install`. */
export interface InstallContext extends Spanned {
  readonly id: number;
  readonly tool: 'pip' | 'uv' | 'conda' | 'apt' | 'requirements' | 'conda-env' | 'conda-env-pip';
  /** Dockerfile stage index, if the context is a RUN instruction. */
  readonly stage?: number;
  readonly indexes: readonly IndexFact[];
  readonly includes: readonly IncludeFact[];
  /** conda channels in effect (`-c` flags or the environment's `channels:`). */
  readonly channels: readonly string[];
  /**
   * Why pip may read indexes this file does not show (a pip.conf copied into the image, PIP_CONFIG_FILE): then
   * nothing is said about which index serves what.
   */
  readonly hiddenIndexes?: string;
  /**
   * The selection this context belongs to, in files with selections ("the project", "extra cu124", "group dev",
   * "environment cuda", "platform linux-64").
   */
  readonly variant?: string;
  /** Where the selection's extra, group or environment is named (its key), for claims its name makes. */
  readonly variantSpan?: Span;
  /**
   * The tools whose install of the project takes this group by default (a selection "group G"): Poetry every group
   * not marked optional, uv the groups of `[tool.uv] default-groups` (`dev` when it is not set), PDM every development
   * group. A command's "*default-groups TOOL" selects them (selectedContexts).
   */
  readonly defaultFor?: readonly DefaultGroupTool[];
  /**
   * pixi's `system-requirements.cuda` for this selection: the CUDA version the machines' driver supports, which
   * pixi solves against (the `__cuda` virtual package).
   */
  readonly systemCuda?: { readonly value: string; readonly span: Span };
  /**
   * Which values of conditionally set variables this command was read with (`when $X is 'torch'`): a RUN whose
   * variable is set on every path of an `if` is read once per value (shell.ts), and each reading is a context.
   */
  readonly alternative?: string;
  /**
   * An installer that takes a `torch==X` requirement (torchvision's, torchaudio's) from the PyTorch index of X's
   * newest build whose CUDA is at most `cuda` (every build where `cuda` is not given), and from plain PyPI where there
   * is none: Cog on a GPU (compatibility.go torchGPUPackage), which adds that index itself. At `span`, the `cuda`;
   * `by`, the installer, for messages.
   */
  readonly pytorchUpTo?: { readonly cuda?: string; readonly span: Span; readonly by: string };
  /**
   * A pip or uv install that replaces what is installed already (`-U`, `--upgrade`, `--force-reinstall`, `-I`; uv's
   * `--reinstall`, `--upgrade-package`): without one, a requirement that the installed version satisfies is kept as
   * it is ("Requirement already satisfied").
   */
  readonly replacesInstalled?: boolean;
  /**
   * A pip or uv install with `--no-deps` (pip's `--no-dependencies`): the packages named alone, none of their
   * dependencies ("Don't install package dependencies"), so a vllm or torchvision it installs brings no torch.
   */
  readonly noDependencies?: boolean;
  /**
   * The Python environment it installs into where the command names one apart from the image's default: a conda
   * environment by name (`conda install -n serve`, `conda run -n serve pip install`, `/opt/conda/envs/serve/bin/pip`:
   * `conda:serve`) or a prefix (`conda create -p /opt/env`, `/opt/venv/bin/pip`: `prefix:/opt/venv`).
   */
  readonly environment?: string;
  /** A Dockerfile command inside an `if`, `case` or loop of its RUN: on some of the script's paths only. */
  readonly mayNotRun?: boolean;
  /**
   * The Python a pip or uv command installs for, where the command says: the minor version it names (`python3.11 -m
   * pip`, `pip3.11`, `uv pip install --python 3.11`), or `other` where it installs for a Python the stage's own
   * may not be (`--python-version`, `--platform`, `--target`, an interpreter by path or variable, a conda `pip`).
   */
  readonly python?: string;
  /**
   * A Dockerfile command inside `if`s that the Dockerfile's own values make true (`if [ "$FLAG" = true ]` after
   * `ARG FLAG=true`): their conditions, as written. It runs unless a build argument changes them.
   */
  readonly holds?: string;
  /** Those conditions, one by one. */
  readonly held?: readonly string[];
  /**
   * A Dockerfile command on a branch that runs only where a build argument changes what the Dockerfile's own values
   * pick (`then` of `if [ "$USE_CUDA" = true ]` after `ARG USE_CUDA=false`): the conditions, as `held` writes them,
   * of the branches that run instead. A command that holds one of them never runs in the same build as this one.
   */
  readonly otherBuild?: readonly string[];
}

/**
 * How a package or a finding that rests on a command inside an `if`, `case` or loop of a RUN is named
 * (`torch==2.6.0 (in …)`): that command runs on some of the script's paths only.
 */
export const MAY_NOT_RUN = 'in an if, case or loop of its RUN, which may not run';

export type IndexKind = 'index-url' | 'extra-index-url' | 'find-links' | 'no-index' | 'conda-channel';

export interface IndexFact extends Spanned {
  readonly kind: IndexKind;
  readonly url: string;
  /** Span of the URL alone, for edits. */
  readonly urlSpan: Span;
  readonly context: number;
  /** Why pip will not use this option, e.g. it was written on a requirement line. */
  readonly ignoredReason?: string;
  /**
   * An index the installer adds by itself, which no file writes (Cog's PyTorch index for a torch pin): it makes no
   * claim of its own, so what it serves is said at the requirements it serves.
   */
  readonly addedBy?: string;
  /** A pyproject.toml `[[tool.uv.index]]` entry: its name and whether it is `explicit`. */
  readonly uvIndex?: { readonly name: string; readonly explicit: boolean };
  /**
   * The machines a selection uses this index on, where `[tool.uv.sources]` routes to it by a `platform_machine`
   * marker (InvokeAI's `marker = "sys_platform != 'linux' or platform_machine != 'aarch64'"`): those markers, joined
   * by `or`. On another machine the packages come from elsewhere.
   */
  readonly machines?: string;
  /**
   * How the install names the index where it writes no URL: uv's `--torch-backend=cu129`, `UV_TORCH_BACKEND=cu130`
   * (the PyTorch index of that build, docs.astral.sh/uv/guides/integration/pytorch): messages name it so.
   */
  readonly written?: string;
}

export interface IncludeFact extends Spanned {
  /** `dockerfile`: the Dockerfile that builds a Kubernetes container's image (a path from the repository root). */
  readonly kind: 'requirement' | 'constraint' | 'dockerfile';
  /** The path as written. */
  readonly target: string;
  readonly targetSpan: Span;
  readonly context: number;
  /**
   * The selections the include installs (`uv sync --extra cu124` → "extra cu124", `pixi install -e cuda` →
   * "environment cuda"; "*extras", "*environments", "*": all of them).
   */
  readonly selects?: readonly string[];
  /** Read where it exists, and no problem where it does not (pixi.toml or pyproject.toml; a lock the tool writes). */
  readonly optional?: boolean;
  /**
   * A Dockerfile's include that is only followed where one of the stage's COPY instructions brings the file (a
   * local project's pyproject.toml: a setup.py project copies none, and the build context's is not in the image).
   */
  readonly copiedOnly?: boolean;
  /** Packages the command leaves out of what it installs (`uv sync --no-install-package torch`), by normalized name. */
  readonly skips?: readonly string[];
  /**
   * The file is a lock's export the build makes (`poetry export -o requirements.txt`, then `pip install -r
   * requirements.txt`): what it installs is read through the includes of the exported project (installExport).
   */
  readonly exported?: boolean;
  /**
   * The repository a RUN of the Dockerfile's stage clones the file's folder from, and the file's path inside the clone
   * (`git clone URL tool && pip install -r tool/requirements.txt`: `requirements.txt`). The file is the clone's,
   * never one a COPY of the build context brought.
   */
  readonly cloned?: { readonly url: string; readonly path: string };
  /**
   * A Dockerfile's relative path: the stage's working directory at the RUN, where the file says it (WORKDIR) and the
   * RUN changes none. `target` is then that folder's file in the image.
   */
  readonly workdir?: string;
  /**
   * A Dockerfile's path that a RUN of the stage wrote by copying another file of the image over it (`cp
   * docker/pyproject.amd.toml pyproject.toml`): that file, as written. `target` keeps the name it is installed by.
   */
  readonly copiedFrom?: string;
}

export interface VersionClause {
  readonly operator: string;
  readonly version: string;
  /** Span of the version text alone. */
  readonly versionSpan: Span;
}

export interface PackageFact extends Spanned {
  readonly ecosystem: Ecosystem;
  /** Normalised name: lower case, runs of `-_.` as `-` (PEP 503); conda and apt names lower-cased. */
  readonly name: string;
  readonly rawName: string;
  readonly nameSpan: Span;
  readonly extras: readonly string[];
  /** The whole version constraint as written (`>=2.0,<3`, `==2.3.0+cu121`, conda `2.1.0`), or '' when bare. */
  readonly specifier: string;
  /** Span of the specifier, or an empty span just after the name (extras) where a pin can be inserted. */
  readonly specifierSpan: Span;
  readonly clauses: readonly VersionClause[];
  /** The one version this requirement allows, if it is pinned exactly (wildcards excluded). */
  readonly exact?: string;
  /** PEP 440 local label or conda/apt CUDA marker, e.g. `cu121`, `cpu`. */
  readonly localLabel?: string;
  readonly url?: string;
  readonly urlSpan?: Span;
  readonly markers?: string;
  readonly channel?: string;
  readonly build?: string;
  readonly buildSpan?: Span;
  /**
   * What a lock records this package's build to require of pytorch (conda-lock's `dependencies`, pixi.lock's
   * `depends`: `>=2.0.0,<2.1.0a0`): for a conda build that, not PyPI's pairing, says which torch it works with.
   */
  readonly torchRequirement?: string;
  /**
   * The direct dependencies of the selection through which a lock reaches this package (normalized names), when it is
   * not itself one: `nixl-cu12` is pulled in by `nixl` alone. Undefined for a direct dependency, or where the file
   * does not say.
   */
  readonly pulledInBy?: readonly string[];
  readonly context: number;
  /** Index options written on this requirement line (pip ignores them). */
  readonly hashes: number;
}

/** What a parser knows about a package; `context` and `hashes` are set by the file parser that records it. */
export type PackageFields = Omit<PackageFact, 'context' | 'hashes'> & {
  readonly context?: number;
  readonly hashes?: number;
};

/**
 * A PackageFact with every field present, in one order: the rules read these objects millions of times in a
 * large repository, and one shape keeps those reads monomorphic (docs/performance.md, "One shape per fact").
 */
export function packageFact(f: PackageFields): PackageFact {
  return {
    ecosystem: f.ecosystem,
    name: f.name,
    rawName: f.rawName,
    nameSpan: f.nameSpan,
    span: f.span,
    via: f.via,
    extras: exactList(f.extras),
    specifier: f.specifier,
    specifierSpan: f.specifierSpan,
    clauses: exactList(f.clauses),
    exact: f.exact,
    localLabel: f.localLabel,
    url: f.url,
    urlSpan: f.urlSpan,
    markers: f.markers,
    channel: f.channel,
    build: f.build,
    buildSpan: f.buildSpan,
    torchRequirement: f.torchRequirement,
    pulledInBy: f.pulledInBy,
    context: f.context ?? 0,
    hashes: f.hashes ?? 0,
  };
}

const EMPTY: readonly never[] = Object.freeze([]);

/**
 * A list as it is kept in a parsed file: empty lists share one frozen array, others are copied to their exact
 * length. Arrays grown by push keep spare capacity (17 slots after the first push), and a repository's facts are
 * held for the whole run: no list a parsed file holds keeps that slack (docs/performance.md).
 */
export function exactList<T>(list: readonly T[]): readonly T[] {
  return list.length === 0 ? EMPTY : list.slice();
}

/**
 * Record the install context (and hash count) of a fact a sub-parser just built; it is changed in place, never copied.
 */
export function inContext(fact: PackageFact, context: number, hashes = fact.hashes): PackageFact {
  const mutable = fact as { context: number; hashes: number };
  mutable.context = context;
  mutable.hashes = hashes;
  return fact;
}

/** Maps characters of a substituted string back to the file (see parsers/mapped.ts). */
export interface TextMap {
  readonly text: string;
  origin(from: number, to: number): Span | undefined;
  site(from: number, to: number): Span;
}

export interface ImageFact extends Spanned {
  readonly stage: number;
  /** Image reference after ARG substitution. */
  readonly reference: string;
  readonly registry?: string;
  readonly repository: string;
  readonly tag?: string;
  readonly tagSpan?: Span;
  /** The tag's characters mapped to the file: edits to part of a tag may land in an ARG default. */
  readonly tagMap?: TextMap;
  readonly digest?: string;
  readonly platform?: string;
  readonly stageName?: string;
  /** Index of the earlier stage this FROM builds on (`FROM build`). */
  readonly fromStage?: number;
  /** Why the reference could not be fully resolved (an ARG without default, …). */
  readonly unresolved?: string;
}

export interface EnvFact extends Spanned {
  readonly stage: number;
  readonly key: string;
  readonly value: string;
  readonly valueSpan: Span;
  readonly instruction: 'ENV' | 'ARG';
}

export interface CopyFact extends Spanned {
  readonly stage: number;
  readonly sources: readonly { readonly path: string; readonly span: Span }[];
  readonly destination: string;
  /** The stage's working directory at the COPY, for a relative destination, where the file says it (WORKDIR). */
  readonly workdir?: string;
  /** `COPY --from=X` as written: a stage's name or index, or an image. */
  readonly fromStage?: string;
  /** The earlier stage of the file `fromStage` names, where it names one (an image's copy has none). */
  readonly fromIndex?: number;
}

/** A pip option that changes resolution without naming a source (`--pre`). */
export interface OptionFact extends Spanned {
  readonly name: string;
  readonly context: number;
}

export interface UnresolvedFact extends Spanned {
  readonly text: string;
  readonly reason: string;
  /**
   * What is not read may hide a finding (a document that asks for NVIDIA GPUs, or a template of one): it counts as
   * a file not checked (the baseline's `unchecked` policy), not as a notice.
   */
  readonly fails?: boolean;
  /**
   * What is not read decides only where the fleet's pools run it (a KServe predictor's nodeSelector, not carried to
   * the serving runtime another file defines): with no pools in the baseline it hides nothing, and is a notice.
   */
  readonly placementOnly?: boolean;
  /** What to do about it, where the reason calls for its own advice (parse-error's notice). */
  readonly help?: string;
}

export interface ParseProblem extends Spanned {
  readonly message: string;
  /** Nothing else of the file could be read (a YAML error in a file of one document: a Compose file, a cog.yaml). */
  readonly whole?: boolean;
}

export interface Suppression extends Spanned {
  /** The 1-based lines whose findings it silences (one statement: a line, or a whole Dockerfile instruction). */
  readonly fromLine: number;
  readonly toLine: number;
  readonly rules: readonly string[];
  readonly reason: string;
}

/**
 * A node label requirement of a pod: `nodeSelector` (operator `In` with one value) or a required node-affinity
 * expression.
 */
export interface LabelRequirement extends Spanned {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';
  readonly values: readonly string[];
}

/**
 * Where a pod may be scheduled: every `nodeSelector` label, and (when the pod has required node affinity) at least one
 * of its `nodeSelectorTerms`, whose expressions must all hold (Kubernetes' "Assigning Pods to Nodes").
 */
export interface Placement {
  readonly selector: readonly LabelRequirement[];
  /** The required affinity's terms (ORed); empty when there is none. */
  readonly terms: readonly (readonly LabelRequirement[])[];
}

/** One container of a Kubernetes workload (a Deployment's pod template, a Job's, a Pod's own). */
export interface ContainerFact extends Spanned {
  /** `Deployment/trainer`, `CronJob/nightly`, `PyTorchJob/bert (Worker)`. */
  readonly workload: string;
  readonly name: string;
  /** Its image, as a base image is read (`stage` is the container's index in the file). */
  readonly image: ImageFact;
  /**
   * Whether it gets NVIDIA GPUs: an `nvidia.com/gpu` (or MIG) resource, `runtimeClassName: nvidia`,
   * NVIDIA_VISIBLE_DEVICES.
   */
  readonly gpu: boolean;
  readonly placement: Placement;
  /**
   * The Dockerfile that builds its image: named by the workload's `cuda-gatekeeper.io/dockerfile` annotation, by
   * the baseline's `images` mapping, or by a Compose service's `build` (`how`). Its include (a `dockerfile` include)
   * is `include`, an index in `includes`; `stage`, the stage it builds where that is not the last (Compose's
   * `build.target`).
   */
  readonly dockerfile?: {
    readonly path: string;
    readonly span: Span;
    readonly how: 'annotation' | 'baseline' | 'compose';
    readonly stage?: string;
    /** The build arguments a Compose build passes (`build.args`): they override the Dockerfile's ARG defaults. */
    readonly args?: readonly string[];
    /** The values of those the file says (a literal, or an interpolation's default), by name. */
    readonly argValues?: Readonly<Record<string, string>>;
    readonly include: number;
  };
}

export interface StageFact extends Spanned {
  readonly index: number;
  readonly name?: string;
}

/**
 * A Python a Dockerfile RUN installs beside the image's own, by a tool that is no package manager the gate reads: a
 * Miniconda/Miniforge installer, `pyenv install`, `uv python install`, `uv venv --python`. Its minor version where
 * the command says (`Miniconda3-py310_…`, `pyenv install 3.10.12`), else undefined: the newest the tool has.
 */
export interface PythonFact extends Spanned {
  readonly stage: number;
  /** `3.10`, where the command names it. */
  readonly version?: string;
  /** What installs it, for messages (`the Miniconda installer`, `pyenv install`). */
  readonly by: string;
  /** A conda installer's: the environment it sets up runs the Python a conda `python` spec then names. */
  readonly condaInstaller: boolean;
  /**
   * Installed beside the distribution's python3, which stays the one `python3` and `pip3` run (`apt-get install
   * python${V}`): unlike a conda installer's bin or a pyenv global, it does not take its place.
   */
  readonly beside?: boolean;
}

/** A GPU model a workload names as the one it runs on (a SkyPilot task's `accelerators: H100:8`), where written. */
export interface GpuAsk {
  readonly name: string;
  readonly span: Span;
}

export interface ParsedFile {
  readonly path: string;
  readonly kind: FileKind;
  readonly source: SourceText;
  readonly stages: readonly StageFact[];
  readonly contexts: readonly InstallContext[];
  readonly packages: readonly PackageFact[];
  readonly indexes: readonly IndexFact[];
  readonly includes: readonly IncludeFact[];
  readonly images: readonly ImageFact[];
  readonly env: readonly EnvFact[];
  readonly copies: readonly CopyFact[];
  readonly options: readonly OptionFact[];
  readonly unresolved: readonly UnresolvedFact[];
  readonly problems: readonly ParseProblem[];
  readonly suppressions: readonly Suppression[];
  /** Kubernetes manifests: the containers of its workloads. */
  readonly containers: readonly ContainerFact[];
  /** Dockerfiles: the Pythons RUN instructions install by script. */
  readonly pythons: readonly PythonFact[];
  /**
   * A pyproject.toml that builds a library for others to install: a `[project]` with a `[build-system]`, and no
   * index of its own (no `[[tool.uv.index]]`, `[tool.uv]` index option or Poetry source). Its dependency ranges
   * are what its users' resolvers choose within, by design, not what one deployment installs.
   */
  readonly library?: boolean;
  /** A pyproject.toml's `[project] requires-python` (`>=3.9,<3.10`): the Pythons its project installs on. */
  readonly requiresPython?: string;
  /**
   * A pyproject.toml whose `[project]` leaves its dependencies to the build backend (`dynamic = ["dependencies"]`,
   * PEP 621) and names no file for them (setuptools' `[tool.setuptools.dynamic]`): a setup.py's install_requires, which
   * is only known when it runs.
   */
  readonly dynamicDependencies?: boolean;
  /**
   * The GPU models the file's workload names as the ones it runs on (a SkyPilot task's `accelerators`: `H100:8`,
   * `{L4: 1, A100: 1}`), whichever of them it gets.
   */
  readonly gpus?: readonly GpuAsk[];
  /**
   * Where the file's workload runs off the baseline's fleet, why (a SkyPilot task whose `infra` names a cloud: its
   * machines are that cloud's VMs, not the fleet's node pools).
   */
  readonly offFleet?: string;
}

/**
 * Whether a requirement can be installed on Linux: `torch==2.5.1+cpu ; sys_platform == 'darwin'` beside the
 * `+cu124` pin for Linux never is, and the CUDA checks are about Linux, where the images run (markers.ts).
 */
function installsOnLinux(pkg: PackageFact): boolean {
  return !pkg.markers || evaluateMarker(pkg.markers) !== false;
}

/** An install context while its file is read: its lists still grow (FactSink.addIndex, addInclude). */
export type ContextDraft = Omit<
  InstallContext,
  | 'indexes'
  | 'includes'
  | 'channels'
  | 'alternative'
  | 'replacesInstalled'
  | 'noDependencies'
  | 'environment'
  | 'mayNotRun'
  | 'holds'
  | 'held'
  | 'otherBuild'
  | 'python'
> & {
  indexes: IndexFact[];
  includes: IncludeFact[];
  channels: string[];
  alternative?: string;
  replacesInstalled?: boolean;
  noDependencies?: boolean;
  environment?: string;
  mayNotRun?: boolean;
  holds?: string;
  held?: readonly string[];
  otherBuild?: readonly string[];
  python?: string;
};

/** A requirements or constraints file named by its web address. */
const REMOTE = /^https?:\/\//i;

/** An include that reads standard input: `-r /dev/stdin` (a pipe, a here-document), `/dev/fd/0`, `/proc/self/fd/0`. */
export function isStandardInput(target: string): boolean {
  return /^\/(?:dev\/stdin|dev\/fd\/0|proc\/self\/fd\/0)$/.test(target);
}

/** A mutable builder the parsers fill in; `finish` makes the ParsedFile, whose lists no one changes after. */
export class FactSink {
  readonly stages: StageFact[] = [];
  readonly contexts: ContextDraft[] = [];
  readonly packages: PackageFact[] = [];
  readonly indexes: IndexFact[] = [];
  readonly includes: IncludeFact[] = [];
  readonly images: ImageFact[] = [];
  readonly env: EnvFact[] = [];
  readonly copies: CopyFact[] = [];
  readonly options: OptionFact[] = [];
  readonly unresolved: UnresolvedFact[] = [];
  readonly problems: ParseProblem[] = [];
  readonly suppressions: Suppression[] = [];
  readonly containers: ContainerFact[] = [];
  readonly pythons: PythonFact[] = [];

  /** Record an index option of `context`: in the file's list and in the context's. */
  addIndex(context: ContextDraft, fact: IndexFact): void {
    this.indexes.push(fact);
    context.indexes.push(fact);
  }

  /**
   * A lock's selection as one context per registry its packages come from (uv.lock, poetry.lock): the registry, where
   * it is not PyPI, is the context's index. Its id.
   */
  addLockContext(
    tool: 'uv' | 'pip',
    variant: string,
    registry: { readonly url: string; readonly urlSpan: Span; readonly span: Span } | undefined,
  ): number {
    const id = this.contexts.length;
    const indexes: IndexFact[] = registry ? [{ kind: 'index-url', ...registry, context: id }] : [];
    this.indexes.push(...indexes);
    this.contexts.push({ id, tool, span: { start: 0, end: 0 }, indexes, includes: [], channels: [], variant });
    return id;
  }

  /** Record an include of `context`: in the file's list and in the context's. */
  addInclude(context: ContextDraft, fact: IncludeFact): void {
    this.includes.push(fact);
    context.includes.push(fact);
    // `-r https://…/requirements.txt`: pip fetches the file when it runs; what it installs is not in the repository.
    if (fact.kind !== 'dockerfile' && REMOTE.test(fact.target))
      this.unresolved.push({
        span: fact.targetSpan,
        text: fact.target,
        reason: `pip fetches this ${fact.kind === 'constraint' ? 'constraints' : 'requirements'} file from the web when it runs, and this check reads only the repository's files`,
      });
  }

  /** An include whose text this file holds (a here-document the install reads): its lines are read instead. */
  dropInclude(context: ContextDraft, fact: IncludeFact): void {
    this.replaceInclude(context, fact, undefined);
  }

  /** An include of `context` found to install a lock's export the build makes (IncludeFact.exported). */
  markExported(context: ContextDraft, fact: IncludeFact): void {
    this.replaceInclude(context, fact, { ...fact, exported: true });
  }

  /** The include names a file in a folder the stage cloned (IncludeFact.cloned). */
  markCloned(context: ContextDraft, fact: IncludeFact, cloned: NonNullable<IncludeFact['cloned']>): void {
    this.replaceInclude(context, fact, { ...fact, cloned });
  }

  /** An include whose path a RUN's `cd` moved (`cd sub && pip install .`: sub/pyproject.toml). */
  moveInclude(context: ContextDraft, fact: IncludeFact, target: string): void {
    this.replaceInclude(context, fact, { ...fact, target });
  }

  /** An include whose folder the RUN chose by a value only known when it runs (`cd "$DIR" && pip install .`). */
  dropUnknownInclude(context: ContextDraft, fact: IncludeFact, reason: string): void {
    this.replaceInclude(context, fact, undefined);
    this.unresolved.push({ span: fact.span, text: fact.target, reason });
  }

  /** An include, in the file's list and in its context's, replaced by another or (undefined) taken out. */
  private replaceInclude(context: ContextDraft, fact: IncludeFact, by: IncludeFact | undefined): void {
    for (const list of [this.includes, context.includes]) {
      const at = list.lastIndexOf(fact);
      if (at >= 0) list.splice(at, 1, ...(by ? [by] : []));
    }
  }

  finish(path: string, kind: FileKind, source: SourceText): ParsedFile {
    const contexts: InstallContext[] = this.contexts.map((context) => ({
      ...context,
      indexes: exactList(context.indexes),
      includes: exactList(context.includes),
      channels: exactList(context.channels),
    }));
    return {
      path,
      kind,
      source,
      stages: exactList(this.stages),
      contexts: exactList(contexts),
      packages: exactList(
        this.packages.some((pkg) => pkg.markers) ? this.packages.filter(installsOnLinux) : this.packages,
      ),
      indexes: exactList(this.indexes),
      includes: exactList(this.includes),
      images: exactList(this.images),
      env: exactList(this.env),
      copies: exactList(this.copies),
      options: exactList(this.options),
      unresolved: exactList(this.unresolved),
      problems: exactList(this.problems),
      suppressions: exactList(this.suppressions),
      containers: exactList(this.containers),
      pythons: exactList(this.pythons),
    };
  }
}
