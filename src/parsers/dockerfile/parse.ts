import {
  FactSink,
  isStandardInput,
  MAY_NOT_RUN,
  type CopyFact,
  type ImageFact,
  type IncludeFact,
  type ParsedFile,
} from '../facts.js';
import { posix } from 'node:path';
import { SourceText, type Span } from '../source.js';
import { parseImageRef } from '../image-ref.js';
import {
  installExport,
  lockExport,
  mayInstall,
  recordInstallCommand,
  RESERVED,
  stripPrefixes,
  unreadInstall,
  type LockExport,
} from '../installers.js';
import { PipEnv } from './pip-env.js';
import { cloneOf, Clones } from './clones.js';
import { Mapped, MappedBuilder } from '../mapped.js';
import {
  expandValue,
  readCommands,
  splitCommands,
  withCommandStrings,
  type Resolver,
  type Variable,
  type Word,
} from '../shell.js';
import { findSuppressions } from '../suppressions.js';
import { readDockerfile, type InstructionProperty, type InstructionView } from './instructions.js';
import { logicalLines, parseRequirementLine } from '../requirements/parse.js';

type Scope = Map<string, Variable | { readonly unresolved: string }>;

/** Parse a Dockerfile/Containerfile. Never throws on user input. */
/** What every instruction's reader shares: where facts go, the file, and its escape character. */
interface Reading {
  readonly sink: FactSink;
  readonly source: SourceText;
  readonly escape: string;
  /** Locks each stage exported to requirements files (`poetry export -o requirements.txt`), for a later `-r`. */
  readonly exports: Map<number, LockExport[]>;
  /** Files here-documents of this Dockerfile write, which a later `pip install -r` of the path reads (InlineFiles). */
  readonly inline: InlineFiles;
  /** Folders the stages clone repositories into, whose files an install may name (Clones). */
  readonly clones: Clones;
  /**
   * A Python-format template (`FROM {base_image}`, filled in by str.format or str.replace before the build, as
   * modelscope's docker/build_image.py does): a RUN with `{name}` placeholders is said not checked, not misread.
   */
  formatTemplate?: boolean;
}

/** Lines of here-documents one Dockerfile's installs read in all (each install reads its file's lines again). */
const MAX_INLINE_LINES = 50_000;

/** Lines of the Dockerfile (1-based, inclusive): a here-document's body. */
interface LineRange {
  readonly first: number;
  readonly last: number;
}

/**
 * The files each stage writes from a here-document (`COPY <<EOF /app/requirements.txt`, `RUN cat > /tmp/r.txt
 * <<EOF`), by path as written, seen by the stage and the stages built on it. A later COPY that may put another file
 * at such a path hides it (null): the install then reads whatever file its include leads to, as any other.
 */
class InlineFiles {
  private readonly byStage = new Map<number, Map<string, LineRange | null>>();
  private readonly parents = new Map<number, number>();
  /** Lines read so far by installs (MAX_INLINE_LINES). */
  used = 0;

  stageBuiltOn(stage: number, parent: number | undefined): void {
    if (parent !== undefined) this.parents.set(stage, parent);
  }

  write(stage: number, path: string, lines: LineRange | null): void {
    let files = this.byStage.get(stage);
    if (!files) this.byStage.set(stage, (files = new Map()));
    files.set(path.replace(/^\.\//, ''), lines);
  }

  /** A COPY that may overwrite written files: its destination, or a file of its sources' names under it. */
  copied(stage: number, copy: CopyFact): void {
    const destination = copy.destination.replace(/^\.\//, '');
    const folder = destination.replace(/\/*$/, '/');
    const names = new Set(copy.sources.map((source) => baseName(source.path)));
    for (let at: number | undefined = stage; at !== undefined; at = this.parents.get(at))
      for (const path of this.byStage.get(at)?.keys() ?? [])
        if (path === destination || (path.startsWith(folder) && names.has(baseName(path))))
          this.write(stage, path, null);
  }

  /** Files a command's output was redirected to (`pip freeze > /tmp/constraints.txt`), by stage. */
  private readonly made = new Map<number, Set<string>>();

  make(stage: number, path: string): void {
    let files = this.made.get(stage);
    if (!files) this.made.set(stage, (files = new Set()));
    files.add(path.replace(/^\.\//, ''));
  }

  /** Whether a command of `stage` or of a stage it is built on wrote `path` by a redirect. */
  wasMade(stage: number, path: string): boolean {
    const key = path.replace(/^\.\//, '');
    for (let at: number | undefined = stage; at !== undefined; at = this.parents.get(at))
      if (this.made.get(at)?.has(key)) return true;
    return false;
  }

  /** The lines written at `path` that `stage` sees, if any. */
  read(stage: number, path: string): LineRange | undefined {
    const key = path.replace(/^\.\//, '');
    for (let at: number | undefined = stage; at !== undefined; at = this.parents.get(at)) {
      const files = this.byStage.get(at);
      if (files?.has(key)) return files.get(key) ?? undefined;
    }
    return undefined;
  }
}

export function parseDockerfile(path: string, text: string): ParsedFile {
  const source = new SourceText(path, text);
  const sink = new FactSink();
  const { escape, instructions } = readDockerfile(text, source);
  const reading: Reading = {
    sink,
    source,
    escape,
    exports: new Map(),
    inline: new InlineFiles(),
    clones: new Clones(),
  };

  const globalScope: Scope = new Map();
  let stageScope: Scope = globalScope;
  let stage = -1;
  const stageNames = new Map<string, number>();
  const instructionLines: { from: number; to: number }[] = [];
  /** The ENV each stage's image carries, by stage index. */
  const stageEnvs: StageEnv[] = [];
  /** The index settings pip and uv read from the image (ENV PIP_*, UV_*, pip config), by stage index. */
  const pipEnvs: PipEnv[] = [];
  /** Each stage's working directory where the file says it (WORKDIR), by stage index; undefined: not known. */
  const workdirs: (string | undefined)[] = [];
  /** Files each stage's RUNs copied over another in the image (`cp docker/pyproject.amd.toml pyproject.toml`). */
  const renames: (ReadonlyMap<string, string> | undefined)[] = [];
  /** The build arguments that name each stage's base image (its FROM's, and the FROMs of the stages it is built on). */
  const imageArgs: (ReadonlySet<string> | undefined)[] = [];

  for (const instruction of instructions) {
    const span = instruction.span;
    instructionLines.push({ from: instruction.fromLine, to: instruction.toLine });
    const keyword = instruction.keyword.toUpperCase();
    try {
      switch (keyword) {
        case 'ARG':
          recordProperties(reading, instruction, {
            scope: stage < 0 ? globalScope : stageScope,
            stage: Math.max(stage, 0),
            kind: 'ARG',
            globals: stage < 0 ? undefined : globalScope,
            resolve:
              stage < 0
                ? resolverFor(globalScope, globalScope, undefined)
                : resolverFor(stageScope, globalScope, stageEnvs[stage]?.parent),
          });
          // A stage built FROM this one inherits its build arguments too (Docker's "Build variables": "Arguments
          // and variables are inherited from parent stages"), known or only known at build time.
          if (stage >= 0)
            for (const property of instruction.properties()) {
              const variable = stageScope.get(property.name);
              if (variable) stageEnvs[stage]?.define(property.name, variable);
              // A stage's ARG is in the environment of the RUNs after it, as ENV is ("all RUN instructions following
              // an ARG instruction use the ARG variable implicitly (as an environment variable)",
              // docs.docker.com/reference/dockerfile/#impact-on-build-caching): `ARG PIP_INDEX_URL=…/cu128` is
              // pip's index, with its default value.
              if (variable && 'value' in variable && variable.value) {
                const valueSpan = variable.value.origin(0, variable.value.length) ?? variable.defined ?? span;
                // The ARG's own value, or a global default it re-exposes (said at the name).
                const at =
                  valueSpan.start > property.nameSpan.start
                    ? { start: property.nameSpan.start, end: valueSpan.end }
                    : property.nameSpan;
                pipEnvs[stage]?.setFromEnv(property.name, variable.value.text, valueSpan, at);
              }
            }
          break;
        case 'ENV': {
          const before = sink.env.length;
          recordProperties(reading, instruction, {
            scope: stageScope,
            stage: Math.max(stage, 0),
            kind: 'ENV',
            globals: undefined,
            resolve: resolverFor(stageScope, globalScope, stageEnvs[stage]?.parent),
          });
          for (const fact of sink.env.slice(before)) {
            stageEnvs[stage]?.define(fact.key, {
              value: Mapped.of(fact.value, fact.valueSpan.start),
              defined: fact.valueSpan,
            });
            pipEnvs[stage]?.setFromEnv(fact.key, fact.value, fact.valueSpan, fact.span);
          }
          break;
        }
        case 'FROM': {
          stage++;
          stageScope = new Map();
          recordFrom(reading, instruction, { span, stage, globals: globalScope, stageNames });
          const name = sink.images.at(-1)?.stageName;
          // The first stage of a name is the one `FROM NAME` and `COPY --from=NAME` name (BuildKit refuses a second).
          if (name && !stageNames.has(name.toLowerCase())) stageNames.set(name.toLowerCase(), stage);
          const parent = sink.images.at(-1)?.fromStage;
          reading.inline.stageBuiltOn(stage, parent);
          stageEnvs[stage] = new StageEnv(parent === undefined ? undefined : stageEnvs[parent]);
          // A stage built FROM another starts in its directory; one FROM an image, in the image's (not known here).
          workdirs[stage] = parent === undefined ? undefined : workdirs[parent];
          // Shared with the parent until this stage copies a file of its own (renamedInImage copies it then).
          renames[stage] = parent === undefined ? undefined : renames[parent];
          pipEnvs[stage] = new PipEnv(parent === undefined ? undefined : pipEnvs[parent]);
          imageArgs[stage] = argsOfFrom(
            source.text.slice(span.start, span.end),
            parent === undefined ? undefined : imageArgs[parent],
          );
          const fromImage = parent === undefined ? imageCudaVersion(sink.images.at(-1)) : undefined;
          if (fromImage) {
            stageScope.set('CUDA_VERSION', fromImage);
            stageEnvs[stage]!.define('CUDA_VERSION', fromImage);
          }
          sink.stages.push({ index: stage, span, ...(name ? { name } : {}) });
          break;
        }
        case 'WORKDIR':
          if (stage >= 0) workdirs[stage] = nextWorkdir(workdirs[stage], source.text.slice(span.start, span.end));
          break;
        case 'RUN': {
          const before = sink.includes.length;
          const copiesBefore = sink.copies.length;
          recordRun(
            reading,
            span,
            Math.max(stage, 0),
            tiedToImage(resolverFor(stageScope, globalScope, stageEnvs[stage]?.parent), imageArgs[stage]),
            pipEnvs[stage],
            stage >= 0 ? workdirs[stage] : undefined,
          );
          // A bind mount from a stage (`--mount=type=bind,from=deps,source=/src/r.txt,target=/tmp/r.txt`).
          for (let i = copiesBefore; i < sink.copies.length; i++) {
            const copy = sink.copies[i]!;
            const from = copy.fromStage === undefined ? undefined : stageOf(copy.fromStage, stageNames, stage);
            if (from !== undefined) sink.copies[i] = { ...copy, fromIndex: from };
          }
          if (stage >= 0) renames[stage] = renamedInImage(sink.includes, before, renames[stage], source.text, span);
          if (sink.includes.length > before)
            inWorkdir(sink.includes, before, workdirs[stage], source.text.slice(span.start, span.end));
          break;
        }
        case 'COPY':
        case 'ADD': {
          noteInlineCopy(reading, span, Math.max(stage, 0));
          const before = sink.copies.length;
          recordCopy(sink, instruction, span, Math.max(stage, 0));
          let copy = sink.copies.length > before ? sink.copies.at(-1) : undefined;
          // COPY expands ARG and ENV in its paths (`/usr/local/lib/python${PYTHON_SHORT_VERSION}`, Docker's
          // "Environment replacement"); a path that stays unknown is kept as written.
          if (copy && (copy.destination.includes('$') || copy.sources.some((item) => item.path.includes('$')))) {
            const resolve = resolverFor(stageScope, globalScope, stageEnvs[stage]?.parent);
            const expand = (path: string): string => {
              if (!path.includes('$')) return path;
              const expanded = expandValue(Mapped.of(path, 0), resolve);
              return 'value' in expanded ? expanded.value.text : path;
            };
            sink.copies[sink.copies.length - 1] = copy = {
              ...copy,
              destination: expand(copy.destination),
              sources: copy.sources.map((item) => ({ ...item, path: expand(item.path) })),
            };
          }
          const from = copy?.fromStage === undefined ? undefined : stageOf(copy.fromStage, stageNames, stage);
          if (copy && from !== undefined) {
            sink.copies[sink.copies.length - 1] = copy = { ...copy, fromIndex: from };
            carryExports(reading.exports, copy, Math.max(stage, 0));
          }
          if (copy && workdirs[stage] !== undefined && !copy.destination.startsWith('/'))
            sink.copies[sink.copies.length - 1] = copy = { ...copy, workdir: workdirs[stage] };
          if (copy) reading.inline.copied(Math.max(stage, 0), copy);
          pipEnvs[stage]?.noteCopy(copy);
          break;
        }
        default:
          break;
      }
    } catch (error) {
      sink.problems.push({
        span,
        message: `could not read this ${keyword} instruction (${(error as Error).message}); it was skipped`,
      });
    }
  }
  const frontend = stage < 0 ? FOREIGN_FRONTEND.exec(source.text) : null;
  if (frontend) {
    // `# syntax=ghcr.io/azure/dalec/frontend:0.18`: BuildKit hands the file to that frontend, whose format is its own
    // (docs.docker.com/build/buildkit/frontend/); `docker build` accepts it, and nothing of it is a Dockerfile's.
    const at = frontend.index + frontend[0].indexOf('syntax');
    const gpu = CUDA_WORDS.test(source.text);
    sink.unresolved.push({
      span: { start: at, end: frontend.index + frontend[0].trimEnd().length },
      text: `# syntax=${frontend[1]}`,
      reason: `${frontend[1]} is a BuildKit frontend other than Dockerfile's, so this file is in that frontend's own format and is not read${gpu ? ' (it names CUDA, NVIDIA or torch)' : ''}`,
      ...(gpu ? { fails: true } : {}),
    });
  } else if (stage < 0 && instructions.length > 0) {
    // docker build refuses a file with no FROM; a build may paste it into another Dockerfile (modelscope's
    // Dockerfile.extra_install, filled in by build_image.py): not checked, an error only where it names CUDA.
    const gpu = CUDA_WORDS.test(source.text);
    const first = instructions[0]!.span;
    const lineEnd = source.text.indexOf('\n', first.start);
    sink.unresolved.push({
      span: { start: first.start, end: lineEnd < 0 || lineEnd > first.end ? first.end : lineEnd },
      text: 'this file',
      reason: `it has no FROM instruction, so docker build refuses it as it is (a part that a build pastes into another Dockerfile, or a mistake), and its instructions are not read${gpu ? ' (it names CUDA, NVIDIA or torch)' : ''}`,
      ...(gpu ? { fails: true } : {}),
    });
  }

  // The last line of the instruction a line belongs to; the first instruction holding it wins. Built on the first
  // suppression comment, in one pass over the instructions.
  let lastLineOf: Map<number, number> | undefined;
  const statementEnd = (line: number): number => {
    if (!lastLineOf) {
      lastLineOf = new Map();
      for (const lines of instructionLines)
        for (let at = lines.from; at <= lines.to; at++) if (!lastLineOf.has(at)) lastLineOf.set(at, lines.to);
    }
    return lastLineOf.get(line) ?? line;
  };
  sink.suppressions.push(...findSuppressions(source, statementEnd));
  return sink.finish(path, 'dockerfile', source);
}

/**
 * The working directory after a `WORKDIR` instruction (its whole text): an absolute path, or a relative one joined
 * to the directory before it ("If a relative path is provided, it will be relative to the path of the previous
 * WORKDIR instruction", docs.docker.com/reference/dockerfile/#workdir). Not known where it names a variable.
 */
function nextWorkdir(current: string | undefined, instruction: string): string | undefined {
  let path = instruction.replace(/^\s*\S+\s+/, '').trim();
  const json = /^\[\s*"([^"]*)"\s*\]$/.exec(path);
  if (json) path = json[1]!;
  path = path.replace(/^(["'])(.*)\1$/, '$2');
  if (path === '' || /[$\s\\]/.test(path)) return undefined;
  if (PLAIN_ABSOLUTE.test(path)) return path;
  if (path.startsWith('/')) return posix.normalize(path).replace(/(.)\/+$/, '$1');
  return current === undefined ? undefined : posix.join(current, path).replace(/(.)\/+$/, '$1');
}

/**
 * A RUN that copies one file of the image over another (`cp docker/pyproject.amd.toml pyproject.toml && uv pip
 * install -e .`, SkyRL's AMD image; or `mv`): an install of the destination, later in that RUN or in a later RUN of
 * the stage, reads the source (IncludeFact.copiedFrom), found as any other path is. Only plain file copies with one
 * source; a path is compared as written, without `./`.
 */
function renamedInImage(
  includes: readonly IncludeFact[],
  first: number,
  renames: ReadonlyMap<string, string> | undefined,
  text: string,
  span: Span,
): ReadonlyMap<string, string> | undefined {
  // Most RUNs copy nothing: looked for without taking the RUN's text apart.
  const run = text.slice(span.start, span.end);
  const copies = MAY_COPY.test(run);
  if (!copies && (renames === undefined || includes.length === first)) return renames;
  const runStart = span.start;
  const here: { at: number; from: string; to: string }[] = [];
  for (const match of copies ? run.matchAll(FILE_COPY) : []) {
    const [from, to] = [match[2]!, match[3]!].map((path) => path.replace(/^["']|["']$/g, '').replace(/^(?:\.\/)+/, ''));
    if (!from || !to || /[$*?{}]/.test(from + to) || to.endsWith('/') || to === '.') continue;
    here.push({ at: runStart + match.index, from: from!, to: to! });
  }
  for (let i = first; i < includes.length; i++) {
    const include = includes[i]!;
    if (include.kind === 'dockerfile' || include.cloned) continue;
    const target = include.target.replace(/^(?:\.\/)+/, '');
    // The last copy to the path before the install: in this RUN, else an earlier RUN's.
    const own = here.filter((copy) => copy.at < include.span.start && copy.to === target).at(-1);
    const from = own?.from ?? renames?.get(target);
    if (from !== undefined && from !== target) (include as { copiedFrom?: string }).copiedFrom = from;
  }
  if (here.length === 0) return renames;
  const next = new Map(renames);
  for (const copy of here) next.set(copy.to, copy.from);
  return next;
}

/** A `cp` or `mv` command somewhere in a RUN (the cheap test before FILE_COPY). */
const MAY_COPY = /(?:^|[\s;&|(])(?:cp|mv)\s/;

/** `cp [-f|-v|-p] SRC DST` or `mv SRC DST`: one file over another (no `-r`, no `-t`, no second source). */
const FILE_COPY =
  /(?:^|[\s;&|(])(cp|mv)(?:\s+-[fvpn]+)*\s+("[^"]+"|'[^']+'|[^\s;&|<>]+)\s+("[^"]+"|'[^']+'|[^\s;&|<>-][^\s;&|<>]*)(?=\s*(?:$|[;&|)\n\\]))/g;

/** An absolute path that normalising leaves as it is (`/workspace/app`): most WORKDIRs. */
const PLAIN_ABSOLUTE = /^(?:\/(?!\.\.?(?:\/|$))[^/]+)+$/;

/**
 * The working directory of the includes a RUN recorded (from `first` on), for a relative path: the stage's WORKDIR,
 * where it is known and the RUN changes no directory (a `cd` or `pushd` is followed for clones only).
 */
function inWorkdir(includes: readonly IncludeFact[], first: number, workdir: string | undefined, run: string): void {
  if (workdir === undefined || includes.length === first || /(?:^|[\s;&|(])(?:cd|pushd)\s/.test(run)) return;
  for (let i = first; i < includes.length; i++) {
    const include = includes[i]!;
    if (include.kind !== 'dockerfile' && !include.cloned && !include.target.startsWith('/'))
      (include as { workdir?: string }).workdir = workdir;
  }
}

/**
 * The `CUDA_VERSION` an nvidia/cuda image sets in its environment, which a RUN sees: its tag's version (NVIDIA's
 * image Dockerfiles, gitlab.com/nvidia/container-images/cuda dist/<version>/…/base/Dockerfile: `ENV CUDA_VERSION
 * 12.2.2` for 12.2.2), mapped to where the FROM line writes it.
 */
function imageCudaVersion(image: ImageFact | undefined): Variable | undefined {
  // A tag only partly known (`13.0.3-base-ubuntu${UBUNTU_VERSION}.04`, dstack's) still says its version where that
  // part is written out: the image's CUDA_VERSION does not depend on its OS.
  if (!image?.tag || image.repository !== 'nvidia/cuda') return undefined;
  if (image.registry !== undefined && image.registry !== 'docker.io' && image.registry !== 'nvcr.io') return undefined;
  const version = /^(\d+\.\d+\.\d+)-/.exec(image.tag)?.[1];
  if (!version) return undefined;
  const span = image.tagMap?.origin(0, version.length) ?? image.tagSpan ?? image.span;
  return { value: Mapped.of(version, span.start), defined: span };
}

/**
 * The build arguments a FROM reads (`FROM nvidia/cuda:${CUDA_VERSION}-devel`, `--platform=$BUILDPLATFORM`), with its
 * parent stage's: they choose the stage's image.
 */
function argsOfFrom(from: string, parent: ReadonlySet<string> | undefined): ReadonlySet<string> | undefined {
  if (!from.includes('$')) return parent;
  const names = [...from.matchAll(/\$\{?([A-Za-z_]\w*)/g)].map((match) => match[1]!);
  if (names.length === 0) return parent;
  return new Set([...(parent ?? []), ...names]);
}

/** A resolver whose build arguments that name the stage's base image say so (Variable.choosesImage). */
function tiedToImage(resolve: Resolver, names: ReadonlySet<string> | undefined): Resolver {
  if (!names?.size) return resolve;
  return (name) => {
    const found = resolve(name);
    return found && 'value' in found && found.buildArg && names.has(name) ? { ...found, choosesImage: true } : found;
  };
}

function resolverFor(scope: Scope, globals: Scope, inherited: StageEnv | undefined): Resolver {
  return (name) => {
    const found = scope.get(name) ?? inherited?.lookup(name);
    if (found || scope === globals || !globals.has(name)) return found;
    return {
      unresolved: `ARG ${name} is declared before FROM, which does not make it visible in a stage; re-declare it after FROM (ARG ${name})`,
    };
  };
}

/**
 * The ENV (and ARG) a stage passes on: its own ENV and ARG instructions over everything its parent stage carried (a
 * stage built FROM another inherits its whole environment and its build arguments, grandparents' included). Lookups
 * walk up the chain and remember the answer in every stage they passed, so one creation per FROM and repeated lookups
 * stay cheap. Only finished stages are looked up (the current stage's own ENV and ARG are in its scope).
 */
class StageEnv {
  readonly own = new Map<string, Inherited>();
  /** Answers from the stages above, remembered (null: not defined anywhere up the chain). */
  readonly known = new Map<string, Inherited | null>();

  constructor(readonly parent: StageEnv | undefined) {}

  define(key: string, variable: Inherited): void {
    this.own.set(key, variable);
  }

  lookup(name: string): Inherited | undefined {
    return lookupEnv(this, name);
  }
}

/** What a stage passes on for a name: its value, or why it is only known at build time (an ARG without default). */
type Inherited = Variable | { readonly unresolved: string };

function lookupEnv(start: StageEnv, name: string): Inherited | undefined {
  const passed: StageEnv[] = [];
  let found: Inherited | null = null;
  for (let at: StageEnv | undefined = start; at; at = at.parent) {
    const own = at.own.get(name);
    if (own) {
      found = own;
      break;
    }
    const known = at.known.get(name);
    if (known !== undefined) {
      found = known;
      break;
    }
    passed.push(at);
  }
  for (const stage of passed) stage.known.set(name, found);
  return found ?? undefined;
}

function propertyValue(source: SourceText, property: InstructionProperty): { value: Mapped; span: Span } | undefined {
  const value = property.value;
  const range = property.valueSpan;
  if (value === null || !range) return undefined;
  const { start, end } = range;
  const raw = source.text.slice(start, end);
  if (raw === value) return { value: Mapped.of(value, start), span: { start, end } };
  if (raw.length >= 2 && /^["']/.test(raw) && raw.slice(1, -1) === value)
    return { value: Mapped.of(value, start + 1), span: { start: start + 1, end: end - 1 } };
  const builder = new MappedBuilder();
  builder.pushSegment(value, -1, { start, end });
  return { value: builder.build(), span: { start, end } };
}

/**
 * Where an ARG or ENV instruction's names go: its scope (the global one before the first FROM), the stage, the
 * global ARGs a stage's `ARG NAME` re-exposes, and how `${NAME}` in a value is read.
 */
interface PropertyScope {
  readonly scope: Scope;
  readonly stage: number;
  readonly kind: 'ARG' | 'ENV';
  readonly globals: Scope | undefined;
  readonly resolve: Resolver;
}

function recordProperties(reading: Reading, instruction: InstructionView, where: PropertyScope): void {
  const { sink, source } = reading;
  const { scope, stage, kind, globals, resolve } = where;
  for (const property of instruction.properties()) {
    const key = property.name;
    const found = propertyValue(source, property);
    if (!found && kind === 'ENV') {
      // Every word of `ENV a=1 b=2` is a name=value pair, and the older `ENV NAME value` form needs a value: BuildKit
      // refuses `ENV A=8.7 8.0` ("can't find = in \"8.0\". Must be of the form: name=value").
      sink.problems.push({
        span: property.nameSpan,
        message: `ENV needs a value for ${key}: every word of ENV name=value is a name=value pair, so docker build refuses this line (quote a value with spaces: ENV NAME="a b")`,
      });
      continue;
    }
    if (!found) {
      // `ARG NAME` in a stage re-exposes the global default; without one the value comes from --build-arg.
      const global = globals?.get(key);
      scope.set(
        key,
        global ?? {
          unresolved: `ARG ${key} has no default value, so it is only known at build time (--build-arg ${key}=…)`,
        },
      );
      continue;
    }
    // Docker substitutes the ARGs and ENVs defined before in a value: `ARG BASE=nvidia/cuda:${CUDA}-devel`.
    const expanded = found.value.text.includes('$') ? expandValue(found.value, resolve) : { value: found.value };
    if ('unresolved' in expanded) {
      scope.set(key, {
        unresolved: `${kind} ${key} is built from a value only known at build time: ${expanded.unresolved}`,
      });
      continue;
    }
    const value = expanded.value;
    // `ARG TORCH_VERSION={torch_version}`, `ARG BASE_IMAGE={base_image}`: a Python-format template's placeholder
    // (modelscope's Dockerfile.ubuntu_base, filled in by str.replace before the build), not a value.
    if (FORMAT_PLACEHOLDER_WHOLE.test(value.text)) {
      reading.formatTemplate = true;
      scope.set(key, {
        unresolved: `${kind} ${key} is ${value.text}, a placeholder of a template filled in before the build, so its value is only known then`,
      });
      continue;
    }
    scope.set(key, { value, defined: found.span, ...(kind === 'ARG' ? { buildArg: true } : {}) });
    sink.env.push({
      span: { start: property.nameSpan.start, end: found.span.end },
      stage,
      key,
      value: value.text,
      valueSpan: value.origin(0, value.length) ?? found.span,
      instruction: kind,
    });
  }
}

/** A FROM instruction: where it is, the stage it opens, the global ARGs and the stages named so far. */
interface FromPlace {
  readonly span: Span;
  readonly stage: number;
  readonly globals: Scope;
  readonly stageNames: ReadonlyMap<string, number>;
}

/**
 * A RUN's resolver with the variables its secret mounts set (`--mount=type=secret,id=x,env=NAME`: the secret's value
 * in $NAME for that RUN, docs.docker.com/reference/dockerfile/#run---mounttypesecret) said to be secrets: only known
 * when the build runs, and never to be given a default.
 */
function withSecrets(text: string, span: Span, resolve: Resolver): Resolver {
  // A slice of the file is a view of it (V8 copies nothing), and bounds the search to the RUN: an indexOf from the
  // RUN's start would read on to the end of the file for every RUN that mounts nothing.
  const run = text.slice(span.start, span.end);
  if (!run.includes('--mount=') || !run.includes('secret')) return resolve;
  const secrets = new Set<string>();
  for (const mount of run.matchAll(/--mount=(\S+)/g)) {
    const options = mount[1]!.split(',');
    const env = options.find((option) => option.startsWith('env='))?.slice(4);
    if (env && options.includes('type=secret')) secrets.add(env);
  }
  if (secrets.size === 0) return resolve;
  return (name) =>
    secrets.has(name)
      ? {
          unresolved: `$${name} is a build secret (RUN --mount=type=secret,env=${name}), only known when the build runs`,
        }
      : resolve(name);
}

/**
 * BuildKit's automatic platform ARGs, set in the global scope for FROM without a declaration (`FROM
 * base-${TARGETARCH}`, ollama's Dockerfile: docs.docker.com/build/building/variables/#pre-defined-build-arguments), as
 * a build on the machine the checker assumes where a file names none (x86_64, src/analysis/units.ts DEFAULT_MACHINE)
 * sets them;
 * `--platform` gives them other values (buildArg).
 */
const PLATFORM_ARGS: Readonly<Record<string, string>> = {
  TARGETPLATFORM: 'linux/amd64',
  TARGETOS: 'linux',
  TARGETARCH: 'amd64',
  TARGETVARIANT: '',
  BUILDPLATFORM: 'linux/amd64',
  BUILDOS: 'linux',
  BUILDARCH: 'amd64',
  BUILDVARIANT: '',
};

/** A Python-format placeholder at the start of an image: `{base_image}` (not `${VAR}`, not `{{ … }}`). */
const FORMAT_PLACEHOLDER_START = /^\{[A-Za-z_][A-Za-z0-9_]*\}/;
/** A value that is one Python-format placeholder: `{torch_version}`. */
const FORMAT_PLACEHOLDER_WHOLE = /^\{[A-Za-z_][A-Za-z0-9_]*\}$/;
/** A Python-format placeholder anywhere in a RUN: `{torch_version}`, not the shell's `${VAR}`. */
const FORMAT_PLACEHOLDER = /(?<![$\w{])\{[A-Za-z_][A-Za-z0-9_]*\}(?!\})/;

function recordFrom(reading: Reading, instruction: InstructionView, where: FromPlace): void {
  const { sink, source, escape } = reading;
  const { span, stage, globals, stageNames } = where;
  const args = instruction.args();
  const platform = instruction.flag('platform') ?? undefined;
  const imageArg = args[0];
  if (!imageArg) {
    sink.problems.push({ span, message: 'FROM needs an image' });
    return;
  }
  const formatPlaceholder = FORMAT_PLACEHOLDER_START.test(imageArg.value);
  if (imageArg.value.startsWith('{{') || formatPlaceholder) {
    // `FROM {{ SRC_IMAGE }}`: a Dockerfile template (Jinja, Go), whose image is filled in when it is rendered; `FROM
    // {base_image}`: a Python-format one.
    if (formatPlaceholder) reading.formatTemplate = true;
    const closing = formatPlaceholder ? '}' : '}}';
    const close = source.text.indexOf(closing, imageArg.start);
    const end = close < 0 || close > span.end ? imageArg.end : close + closing.length;
    const reference = source.text.slice(imageArg.start, end);
    const unresolved = `${reference} is a template placeholder, filled in when the Dockerfile is rendered`;
    sink.images.push({ span: { start: imageArg.start, end }, stage, reference, ...parseImageRef(''), unresolved });
    sink.unresolved.push({ span: { start: imageArg.start, end }, text: reference, reason: unresolved });
    return;
  }
  // BuildKit reads `FROM image [AS name]` and refuses any other count ("FROM requires either one or three
  // arguments", moby/buildkit frontend/dockerfile/instructions/parse.go): `FROM Apache Spark 3.4.1`, and a comment
  // after the image, which is no comment there ("Docker treats lines that begin with # as a comment … A # marker
  // anywhere else in a line is treated as an argument", docs.docker.com/reference/dockerfile/#format).
  if (!(args.length === 1 || (args.length === 3 && args[1]!.value.toUpperCase() === 'AS'))) {
    const extra = args.slice(1);
    const comment = extra.find((arg) => arg.value.startsWith('#'));
    sink.problems.push({
      span: { start: extra[0]!.start, end: extra.at(-1)!.end },
      message: comment
        ? `docker build refuses this FROM: a # after the start of a line is not a comment but more arguments, and FROM takes an image and, optionally, AS and a stage name; put the comment on a line of its own`
        : `docker build refuses this FROM ("FROM requires either one or three arguments"): it takes an image and, optionally, AS and a stage name${args.length === 3 ? `, but its second word is "${args[1]!.value}"` : `, not ${args.length} words`}`,
    });
  }
  const fromGlobals = resolverFor(globals, globals, undefined);
  const site = { start: imageArg.start, end: imageArg.end };
  const commands = splitCommands(joinContinuations(source, imageArg.start, imageArg.end, escape), (name) => {
    const found = fromGlobals(name);
    const automatic = found === undefined && Object.hasOwn(PLATFORM_ARGS, name) ? PLATFORM_ARGS[name] : undefined;
    if (automatic === undefined) return found;
    const builder = new MappedBuilder();
    builder.pushSegment(automatic, -1, site);
    return { value: builder.build(), buildArg: true };
  });
  const word = commands[0]?.[0];
  if (!word) return;
  const stageName = args.length >= 3 && args[1]!.value.toUpperCase() === 'AS' ? args[2]!.value : undefined;
  const fromStage = stageNames.get(word.text.toLowerCase());
  const parts = parseImageRef(word.text);
  const tagMap =
    parts.tagOffset !== undefined ? word.mapped.slice(parts.tagOffset, parts.tagOffset + parts.tag!.length) : undefined;
  sink.images.push({
    span: word.span,
    stage,
    reference: word.text,
    ...parts,
    ...(tagMap ? { tagSpan: tagMap.origin(0, tagMap.length) ?? tagMap.site(0, tagMap.length), tagMap } : {}),
    ...(platform ? { platform } : {}),
    ...(stageName ? { stageName } : {}),
    ...(fromStage !== undefined ? { fromStage } : {}),
    ...(word.unresolved ? { unresolved: word.unresolved } : {}),
    ...(word.mapped.via(0, word.text.length) ? { via: word.mapped.via(0, word.text.length)! } : {}),
  });
  if (word.unresolved) sink.unresolved.push({ span: word.span, text: word.text, reason: word.unresolved });
}

function recordCopy(sink: FactSink, instruction: InstructionView, span: Span, stage: number): void {
  const fromStage = instruction.keyword.toUpperCase() === 'COPY' ? (instruction.flag('from') ?? undefined) : undefined;
  const jsonStrings = instruction.jsonStrings();
  const items =
    jsonStrings.length > 0
      ? jsonStrings.map((s) => ({ path: s.value.slice(1, -1), span: { start: s.start + 1, end: s.end - 1 } }))
      : instruction
          .args()
          .filter((arg) => !arg.value.startsWith('<<'))
          .map((arg) => ({ path: arg.value, span: { start: arg.start, end: arg.end } }));
  if (items.length < 2) return;
  sink.copies.push({
    span,
    stage,
    sources: items.slice(0, -1),
    destination: items.at(-1)!.path,
    ...(fromStage ? { fromStage } : {}),
  });
}

/** The instruction text from `start` to `end` with escaped line breaks and interior comment lines removed. */
function joinContinuations(source: SourceText, start: number, end: number, escape: string): Mapped {
  const builder = new MappedBuilder();
  const text = source.text;
  let lineStart = start;
  let first = true;
  while (lineStart < end) {
    let lineEnd = text.indexOf('\n', lineStart);
    if (lineEnd < 0 || lineEnd > end) lineEnd = end;
    let content = text.slice(lineStart, lineEnd);
    if (content.endsWith('\r')) content = content.slice(0, -1);
    const trimmed = content.trimStart();
    const skip = !first && (trimmed === '' || trimmed.startsWith('#'));
    if (!skip) {
      const continued = trailingEscape(content, escape);
      if (continued >= 0 && lineEnd < end) builder.pushSegment(content.slice(0, continued), lineStart);
      else builder.pushSegment(content, lineStart);
    }
    first = false;
    lineStart = lineEnd + 1;
  }
  return builder.build();
}

/**
 * A `# syntax=` parser directive (the file's first lines, before any instruction) that names a frontend other than
 * Docker's Dockerfile frontend (`docker/dockerfile`, `docker/dockerfile-upstream`, on Docker Hub by any spelling).
 */
const FOREIGN_FRONTEND =
  /^(?:[ \t]*#[ \t]*\w+[ \t]*=[^\n]*\n)*?[ \t]*#[ \t]*syntax[ \t]*=[ \t]*(?!(?:docker\.io\/)?docker\/dockerfile(?:-upstream)?(?:[:@\s]|$))(\S+)[ \t]*\r?(?:\n|$)/i;

/** What to do about a script a RUN runs (parse-error's notice). */
/** Words that tie a file to a GPU build. */
const CUDA_WORDS = /cuda|nvidia|torch/i;

const SCRIPT_RUNNERS = new Set(['bash', 'sh', '/bin/bash', '/bin/sh']);

/**
 * Whether the words before a RUN's here-document run it as a script: none (BuildKit runs it with the shell), or a
 * shell with its options (`bash -ex`, `/bin/bash -e -o pipefail`, `/usr/bin/env bash -e`), which reads the script
 * from standard input. Any other command reads the body as its input (`pip install -r /dev/stdin`, `cat > FILE`).
 */
function runsScript(words: readonly string[]): boolean {
  const [first, ...rest] = words;
  if (first === undefined) return true;
  const [shell, ...options] = first === '/usr/bin/env' || first === 'env' ? rest : [first, ...rest];
  return (
    shell !== undefined &&
    SCRIPT_RUNNERS.has(shell) &&
    options.every((word, i) => /^[-+][a-zA-Z]+$/.test(word) || /^-[a-zA-Z]*o$/.test(options[i - 1] ?? ''))
  );
}

function recordRun(
  reading: Reading,
  span: Span,
  stage: number,
  resolve: Resolver,
  pip: PipEnv | undefined,
  workdir: string | undefined,
): void {
  const { sink, source, escape, exports, inline, clones } = reading;
  const text = source.text;
  resolve = withSecrets(text, span, resolve);
  const placeholder = reading.formatTemplate ? FORMAT_PLACEHOLDER.exec(text.slice(span.start, span.end)) : null;
  if (placeholder) {
    const at = span.start + placeholder.index;
    sink.unresolved.push({
      span: { start: at, end: at + placeholder[0].length },
      text: placeholder[0],
      reason:
        'this Dockerfile is a Python-format template (its FROM is a placeholder too), filled in when it is rendered, so the RUN is read only then',
    });
    return;
  }
  const firstLineEnd = Math.min(span.end, (text.indexOf('\n', span.start) + 1 || text.length + 1) - 1);
  const firstLine = text.slice(span.start, firstLineEnd);
  const keywordEnd = span.start + (/^\s*\S+/.exec(firstLine)?.[0].length ?? 3);
  // The instruction's command lines, continuations joined (BuildKit joins them before it looks for here-documents:
  // `RUN --mount=… \` then `--mount=… <<"EOF" bash -ex`), and the here-document each line may open.
  const headEnd = text.slice(span.start, span.end).includes('<<')
    ? commandLinesEnd(text, firstLineEnd, span.end, escape)
    : firstLineEnd;
  const head =
    headEnd === firstLineEnd
      ? Mapped.of(firstLine, span.start)
      : joinContinuations(source, span.start, headEnd, escape);
  const heredoc = /<<(-?)\s*(["']?)([A-Za-z_][A-Za-z0-9_]*)\2/.exec(head.text);
  /** Where the here-document's `<<` is in the file. */
  const markerAt = heredoc ? head.site(heredoc.index, heredoc.index + 1).start : 0;
  let scripts: Mapped[];
  /** A here-document that is a command's standard input (`pip install -r /dev/stdin <<EOF`), not its script. */
  let heredocInput = false;
  /** That here-document's lines, where its terminator was found. */
  let body: LineRange | undefined;
  if (heredoc) {
    const before = joinContinuations(source, keywordEnd, markerAt, escape);
    const beforeHeredoc = before.text
      .trim()
      .split(/\s+/)
      .filter((word) => word && !word.startsWith('--'));
    const isScript = runsScript(beforeHeredoc);
    const bodyStart = headEnd + 1;
    const terminatorAt = heredocEnd(text, bodyStart, span.end, heredoc[1] === '-', heredoc[3]!);
    const bodyEnd = terminatorAt ?? span.end;
    const rest = joinContinuations(source, markerAt + heredoc[0].length, headEnd, escape);
    // `RUN pip install -r /dev/stdin <<EOF`: the here-document is the command's standard input, and the command is
    // the first line's words before it (the body is no script).
    heredocInput = !isScript;
    if (!isScript && terminatorAt !== undefined) {
      body = linesBetween(source, bodyStart, terminatorAt);
      // `cat > /tmp/r.txt <<EOF` (or `cat <<EOF > …`, `tee …`): the body becomes that file of the stage.
      const written = writtenFile(head.text.slice(keywordEnd - span.start));
      if (written) inline.write(stage, written, body);
    }
    scripts = isScript ? [rest] : [before, rest];
    if (isScript) scripts.push(Mapped.of(text.slice(bodyStart, bodyEnd), bodyStart));
  } else {
    scripts = [joinContinuations(source, keywordEnd, span.end, escape)];
  }
  // `--mount=type=bind,source=requirements.txt,target=/tmp/requirements.txt`: the RUN reads the file there.
  const flags = heredoc ? joinContinuations(source, keywordEnd, markerAt, escape) : scripts[0]!;
  if (flags.text.includes('--mount')) for (const copy of bindMounts(flags, stage)) sink.copies.push(copy);
  clones.startRun(workdir);
  for (const written of scripts) {
    // RUN flags (--mount=…, --network=…) precede the first command: left out before it is read, so that its first
    // word is its command's (`RUN --mount=type=secret,id=X X=$(cat /run/secrets/X) && pip install $X` sets $X).
    const flagged = written === scripts[0] && (!heredoc || heredocInput) ? RUN_FLAGS.exec(written.text) : null;
    const script = flagged ? written.slice(flagged[0].length) : written;
    if (script.text.includes('pip.')) pip?.noteScript(script.text);
    const read = readCommands(script, resolve);
    // A flag the expression does not take (one written with quotes) is still not a command.
    const first = read.commands[0];
    if (first?.[0]?.text.startsWith('--') && written === scripts[0] && (!heredoc || heredocInput))
      read.commands[0] = dropRunFlags(first);
    const { commands, inBlock, holding, otherBuild, stdout } = withCommandStrings(read, resolve);
    // An export and the install of its file are often two RUNs of one stage.
    let exported = exports.get(stage);
    if (!exported) exports.set(stage, (exported = []));
    for (const [k, words] of commands.entries()) {
      const redirected = stdout[k];
      if (redirected && !redirected.startsWith('/dev/')) inline.make(stage, redirected);
      // `cd` may follow a reserved word (`if …; then cd pytorch && pip install -r requirements.txt`) or assignments
      // (`TORCH_CUDA_ARCH_LIST=… cd pytorch/ && pip install .`, aws-do-eks' MPI image).
      const first = words[0]?.text ?? '';
      const bare = first === 'cd' ? words : RESERVED.has(first) || first.includes('=') ? stripPrefixes(words) : [];
      if (bare[0]?.text === 'cd') clones.cd(bare.map((word) => word.text));
      // Before the install readers: a clone's address may name pip or conda (`git clone …/conda-forge/…`).
      const clone = words.length > 2 && words.some((word) => word.text === 'clone') ? cloneOf(words) : undefined;
      if (clone) clones.add(stage, clone);
      if (clone) continue;
      if (!mayInstall(words)) {
        const unread = unreadInstall(words);
        if (unread) sink.unresolved.push(unread);
        continue;
      }
      const before = sink.contexts.length;
      if (pip?.configure(words)) continue;
      const lock = lockExport(words);
      if (lock) {
        // `poetry export -f requirements.txt > requirements.txt`: the file standard output goes to is the export's.
        const output = lock.output ?? stdout[k]?.replace(/^\.\//, '');
        exported.push(output === lock.output ? lock : { ...lock, output });
        continue;
      }
      recordInstallCommand(sink, words, stage, resolve);
      // `git clone URL tool && pip install -r tool/requirements.txt`: the clone's file. `cd sub && pip install .`: the
      // project in sub/, not the one at the build context's root (InternEvo's third_party extensions).
      for (const context of sink.contexts.slice(before))
        for (const include of [...context.includes]) {
          const clone = clones.cloneOf(stage, include.target);
          if (clone) {
            sink.markCloned(context, include, clone);
            continue;
          }
          if (!include.copiedOnly) continue;
          const moved = clones.moved(include.target);
          if (moved === null)
            sink.dropUnknownInclude(
              context,
              include,
              "the project installed here is in the folder the RUN's cd chose, which is only known when the build runs",
            );
          else if (moved !== undefined) sink.moveInclude(context, include, moved === '' ? include.target : moved);
        }
      // Constraints an earlier command wrote by a redirect (`pip list --format=freeze | awk … > constraints.txt`): made
      // by the build from what is installed, they limit versions to it and install nothing, so there is nothing to
      // check. (A requirements file made so stays an include no file answers: it may install anything.)
      for (const context of sink.contexts.slice(before))
        for (const include of [...context.includes])
          if (
            include.kind === 'constraint' &&
            inline.wasMade(stage, include.target) &&
            !inline.read(stage, include.target)
          )
            sink.dropInclude(context, include);
      // `-r /dev/stdin <<EOF`, or `-r` of a file a here-document of this stage wrote: its lines are read here.
      for (const context of sink.contexts.slice(before))
        for (const include of [...context.includes]) {
          if (include.kind !== 'requirement' && include.kind !== 'constraint') continue;
          const lines = isStandardInput(include.target) ? body : inline.read(stage, include.target);
          if (!lines || lines.last < lines.first) continue;
          // Each install reads the whole text again: a file of thousands of installs of one long here-document would
          // make their product in facts. Past a budget of lines, the file could not be read completely: a problem, as
          // any other budget of a parser.
          const size = lines.last - lines.first + 1;
          if (inline.used + size > MAX_INLINE_LINES) {
            sink.problems.push({
              span: include.span,
              message: `too many installs of here-document files to read each one (more than ${MAX_INLINE_LINES.toLocaleString('en-US')} lines in all); this one was not checked`,
            });
            continue;
          }
          inline.used += size;
          sink.dropInclude(context, include);
          for (const line of logicalLines(source, lines.first, lines.last)) parseRequirementLine(sink, line, context);
        }
      // `pip install -r requirements.txt` after an export to it (or after an export to standard output, redirected
      // there): it installs what the lock pins, in the selection exported.
      if (exported.length > 0)
        // A `-r FILE` (a project's include names its selection: `pip install .` is not an exported file).
        for (const context of sink.contexts.slice(before))
          for (const include of [...context.includes])
            if (include.kind === 'requirement' && include.selects === undefined) {
              const target = include.target.replace(/^\.\//, '');
              const from =
                exported.find((entry) => entry.output === target) ??
                exported.find((entry) => entry.copied && baseName(entry.output!) === baseName(target)) ??
                exported.find((entry) => !entry.output);
              if (!from) continue;
              installExport(sink, context, from);
              sink.markExported(context, include);
            }
      // A command read once per value of a variable says which; one inside an `if`, `case` or loop says so.
      const alternative = words[0]?.alternative ?? (inBlock[k] ? MAY_NOT_RUN : undefined);
      const held = holding[k];
      const other = otherBuild[k];
      for (const context of sink.contexts.slice(before)) {
        pip?.apply(sink, context, words);
        if (alternative) context.alternative = alternative;
        if (inBlock[k]) context.mayNotRun = true;
        if (held) {
          context.holds = held.join(', ');
          context.held = held;
        }
        if (other) context.otherBuild = other;
      }
    }
  }
}

/** The stage a `COPY --from` names (its name, or its index), if it is an earlier stage of this file. */
function stageOf(from: string, stageNames: ReadonlyMap<string, number>, stage: number): number | undefined {
  const named = stageNames.get(from.toLowerCase());
  if (named !== undefined) return named < stage ? named : undefined;
  return /^\d+$/.test(from) && Number(from) < stage ? Number(from) : undefined;
}

/**
 * A `COPY --from=STAGE` of the file a lock was exported to in that stage (FastAPI's recipe: `poetry export -o
 * requirements.txt` in a first stage, `COPY --from=requirements-stage /tmp/requirements.txt /code/requirements.txt`
 * and `pip install -r /code/requirements.txt` in the last): the export is this stage's too, at the destination. A
 * source is the exported file when it is that path or has its name, as a COPY from the build context is matched
 * (links.ts); a later `-r` matches the destination the same way, since WORKDIR is not followed.
 */
function carryExports(exports: Map<number, LockExport[]>, copy: CopyFact, stage: number): void {
  const exported = copy.fromIndex === undefined ? undefined : exports.get(copy.fromIndex);
  if (!exported?.length) return;
  for (const source of copy.sources) {
    const path = source.path.replace(/^\.\//, '');
    const name = baseName(path);
    // The last export to it: a later one overwrote the file.
    const match = [...exported]
      .reverse()
      .find((entry) => entry.output !== undefined && (entry.output === path || baseName(entry.output) === name));
    if (!match) continue;
    const destination = copy.destination;
    const folder = destination.replace(/\/+$/, '');
    const output =
      destination === '.' || destination.endsWith('/')
        ? folder === '.'
          ? name
          : `${folder}/${name}`
        : destination.replace(/^\.\//, '');
    let own = exports.get(stage);
    if (!own) exports.set(stage, (own = []));
    own.push({ ...match, output, copied: true });
  }
}

/** The file a command writes its standard input to (`cat > FILE`, `cat >FILE`, `cat <<EOF > FILE`, `tee FILE`). */
function writtenFile(command: string): string | undefined {
  const words = command.replace(/<<-?\s*(["']?)[A-Za-z_][A-Za-z0-9_]*\1/, ' ').trim();
  const cat = /^cat\s*>\s*(\S+)$/.exec(words) ?? /^tee\s+(?:-a\s+)?([^\s>|&;-]\S*)$/.exec(words);
  return cat?.[1]?.replace(/^\.\//, '').replace(/^["']|["']$/g, '');
}

/** `COPY <<EOF /app/requirements.txt`: a file of the stage whose text is the here-document's body (BuildKit). */
function noteInlineCopy({ source, inline }: Reading, span: Span, stage: number): void {
  const firstLineEnd = source.text.indexOf('\n', span.start);
  const firstLine = source.text.slice(span.start, firstLineEnd < 0 ? span.end : firstLineEnd);
  const heredoc = /^\s*(?:COPY|ADD)\s+(?:--\S+\s+)*<<(-?)\s*(["']?)([A-Za-z_][A-Za-z0-9_]*)\2\s+(\S+)\s*$/i.exec(
    firstLine,
  );
  if (!heredoc || firstLineEnd < 0) return;
  const bodyStart = firstLineEnd + 1;
  const end = heredocEnd(source.text, bodyStart, span.end, heredoc[1] === '-', heredoc[3]!);
  if (end !== undefined) inline.write(stage, heredoc[4]!, linesBetween(source, bodyStart, end));
}

/**
 * Where an instruction's command lines end (the offset of the last one's line break, or `end`): the first line, and
 * every line after one that ends in the escape character, comment and blank lines between them skipped.
 */
function commandLinesEnd(text: string, firstLineEnd: number, end: number, escape: string): number {
  let lineEnd = firstLineEnd;
  let content = text.slice(text.lastIndexOf('\n', lineEnd - 1) + 1, lineEnd).replace(/\r$/, '');
  while (trailingEscape(content, escape) >= 0 && lineEnd < end) {
    const next = text.indexOf('\n', lineEnd + 1);
    const nextEnd = next < 0 || next > end ? end : next;
    content = text.slice(lineEnd + 1, nextEnd).replace(/\r$/, '');
    lineEnd = nextEnd;
    const trimmed = content.trimStart();
    // A comment or blank line inside a continued instruction continues it (Docker drops them).
    if (trimmed === '' || trimmed.startsWith('#')) content = `${escape}`;
  }
  return lineEnd;
}

/** Where a here-document's terminator line starts (`<<-` allows tabs before it); undefined: none before `end`. */
function heredocEnd(text: string, bodyStart: number, end: number, tabs: boolean, word: string): number | undefined {
  const match = new RegExp(`^${tabs ? '\\t*' : ''}${word}\\r?$`, 'm').exec(text.slice(bodyStart, end));
  return match ? bodyStart + match.index : undefined;
}

/** The lines from the one at `start` to the one before `end` (a here-document's body, its terminator at `end`). */
function linesBetween(source: SourceText, start: number, end: number): LineRange {
  return { first: source.position(start).line, last: source.position(end).line - 1 };
}

function baseName(path: string): string {
  return path.replace(/\/+$/, '').split('/').pop() ?? path;
}

/**
 * The bind mounts of a RUN's flags (at the start of `flags`) from the build context, as copies of their sources to
 * their targets for that RUN (docs.docker.com/reference/dockerfile/#run---mounttypebind: `bind` is the default type;
 * `target`, `dst` or `destination` is the mount path; `source` is the path in `from`, its root by default; `from`
 * is the build context unless a stage or image is named: a stage's files are followed as COPY --from's are, an
 * image's are not). `docker init`'s Python template installs its requirements so, as uv's guide does its lock.
 */
function bindMounts(flags: Mapped, stage: number): CopyFact[] {
  const text = flags.text;
  const copies: CopyFact[] = [];
  let i = 0;
  for (;;) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (!text.startsWith('--', i)) break;
    let end = i;
    while (end < text.length && !/\s/.test(text[end]!)) end++;
    const flag = text.slice(i, end);
    if (flag.startsWith('--mount=')) {
      const options = new Map<string, string>();
      for (const option of flag.slice('--mount='.length).split(',')) {
        const eq = option.indexOf('=');
        const key = (eq < 0 ? option : option.slice(0, eq)).toLowerCase();
        options.set(key, eq < 0 ? '' : option.slice(eq + 1).replace(/^(["'])(.*)\1$/, '$2'));
      }
      const target = options.get('target') ?? options.get('dst') ?? options.get('destination');
      const type = options.get('type') ?? 'bind';
      const from = options.get('from');
      if (type === 'bind' && target && from !== '') {
        const span = flags.site(i, end);
        const source = options.get('source') ?? options.get('src') ?? (from === undefined ? '.' : '/');
        // From a stage, the source is a path in that stage (its root by default), as COPY --from reads one.
        const path = from === undefined ? source.replace(/^\/+/, '') || '.' : source;
        copies.push({
          span,
          stage,
          sources: [{ path, span }],
          destination: target,
          ...(from ? { fromStage: from } : {}),
        });
      }
    }
    i = end;
  }
  return copies;
}

/** The RUN flags at the start of a RUN's text, with the blanks after them. */
const RUN_FLAGS = /^\s*(?:--(?:mount|network|security|device)(?:=[^\s'"\\]*)?\s+)+/;

function dropRunFlags(command: readonly Word[]): Word[] {
  let i = 0;
  while (i < command.length && /^--(mount|network|security|device)(=|$)/.test(command[i]!.text)) i++;
  return command.slice(i);
}

/** Where the escape character that continues this line starts (only spaces and tabs after it), or -1. */
function trailingEscape(content: string, escape: string): number {
  let end = content.length;
  while (end > 0 && (content[end - 1] === ' ' || content[end - 1] === '\t')) end--;
  return escape !== '' && content.endsWith(escape, end) ? end - escape.length : -1;
}
