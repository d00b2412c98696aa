import { existsSync, readFileSync, readSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';
import { applyEdits } from '../analysis/edits.js';
import { safeFixContents } from '../analysis/safe-fixes.js';
import { loadBaseline, type LoadedBaseline } from '../baseline/load.js';
import { extendsProblem, MISNAMED_CONFIG_PATH } from '../baseline/layers.js';
import { EMPTY_BASELINE } from '../baseline/schema.js';
import { severityRank, type Report, type Severity } from '../finding.js';
import { defaultKnowledgeBase } from '../knowledge/index.js';
import { plan, PlanError, renderPlanText } from '../plan/plan.js';
import { renderGithubAnnotations } from '../render/github.js';
import { renderJson } from '../render/json.js';
import { renderSarif } from '../render/sarif.js';
import { withoutExamples } from '../rule.js';
import { escapeControl, renderText } from '../render/text.js';
import { SourceText } from '../parsers/source.js';
import {
  affectedIndices,
  MAX_LOCK_BYTES,
  maxBytes,
  outlineOf,
  readRepository,
  servingOf,
  servingPartners,
  sourceOf,
  UNKNOWN_KIND,
  type FileOutline,
  type Listed,
  type RepositoryReader,
  type SourceFile,
} from '../reader.js';
import type { FileKind } from '../parsers/facts.js';
import type { ServingIndex } from '../parsers/kubernetes/parse.js';
import { FILE_KIND_NAMES, isFileKind } from '../parsers/formats.js';
import { gateRepository, type RepositoryCheck } from '../stream.js';
import { gate, type GateOptions } from '../gate.js';
import { classifyPath, kindByContent, parseFile, yamlByContent } from '../parsers/index.js';
import type { Baseline } from '../baseline/schema.js';
import type { KnowledgeBase } from '../knowledge/index.js';
import { RULE_IDS, RULES } from '../../rules/index.js';
import {
  diskReader,
  joinListings,
  listingData,
  loadFiles,
  NO_LISTING,
  readRegularInside,
  toRepoPath,
  walk,
  type Loaded,
  type Skipped,
  type Walked,
} from './discover.js';
import { utf16Encoding } from '../util/utf16.js';
import { changedSince, fileAtRef, GitError, stagedDeletions, type Changes } from './git.js';
import { FLEET_HELP, fleetCommand } from './fleet.js';
import { withVerifiedFixes } from './check-tree.js';
import { checkOnThreads, threadsFor } from './threads.js';
import { lookUpForCli } from './lookup.js';
import { bundledBaseline, packageRoot, packageVersion } from '../util/package-root.js';
import { ownValue } from '../util/collections.js';

export class UsageError extends Error {}

/**
 * Colour, as Node, chalk and ESLint decide it: FORCE_COLOR set to anything but `0` or `false` turns it on (even
 * into a pipe) and `0`/`false` off, and it wins over NO_COLOR (Node's docs, "FORCE_COLOR"); else on a terminal
 * unless NO_COLOR is set to a non-empty value (no-color.org).
 */
export function colorWanted(env: Readonly<Record<string, string | undefined>>, terminal: boolean): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force.toLowerCase() !== 'false';
  return terminal && !env.NO_COLOR;
}

const USAGE = `Usage:
  cuda-gatekeeper check [PATH...] [options]     check Dockerfiles, requirements and conda files
  cuda-gatekeeper plan --cuda X.Y [PATH...]     the edits that move a checkout to another CUDA
  cuda-gatekeeper rules                         the rules, their default severity and what they check
  cuda-gatekeeper fleet import|scan             the baseline's GPU pools from nvidia-smi or kubectl output
  cuda-gatekeeper --version

cuda-gatekeeper COMMAND --help describes a command and its options.

Exit status: 0 no error-level findings, 1 error-level findings, 2 bad usage or an invalid baseline.`;

const CHECK_HELP = `Usage: cuda-gatekeeper check [PATH...] [options]

Checks the Dockerfiles, requirements and conda environment files under PATH (default: the whole working
directory) and the files they pull in. "-" reads one file from standard input (give --type or --stdin-filename).

Options:
  --baseline FILE|none     the baseline (default: .github/cuda-gatekeeper.yml, else the bundled baseline.yaml;
                           none: only the built-in consistency rules)
  --baseline-ref REF       read the baseline as it is at git ref REF (in CI: the pull request's base branch)
  --changed-since REF      check only the files changed since REF, with the files joined to them
  --format FORMAT          text (default), json, sarif or github (workflow annotations)
  --output FILE            write the report to FILE instead of standard output
  --quiet                  report error-level findings only
  --fail-on LEVEL          exit 1 on findings at or above LEVEL: error (default), warning, notice, or never
  --max-warnings N         also exit 1 when there are more than N warnings
  --fix                    apply the safe fixes (each verified by checking the result again)
  --verbose                show each finding's explanation, sources and fix
  --online                 look images up in their registries (their configs' CUDA_VERSION and NVIDIA_REQUIRE_*):
                           only image references leave the machine (README "Images"); registries.lookup: true in
                           the baseline does the same, --offline turns it off
  --offline                never ask a registry (the knowledge snapshot only; the default)
  --repository OWNER/NAME  the repository waivers are matched against (default: $GITHUB_REPOSITORY, else the
                           folder's name)
  --type KIND              read the named files (or standard input) as one of ${FILE_KIND_NAMES.join(', ')}
  --stdin-filename PATH    the repository path standard input stands for (its includes are read relative to it)
  --ignore-unknown         named files whose kind cannot be told are passed over, not an error (pre-commit)
  --staged                 also the files the git index deletes: the files that install them are checked (pre-commit)
  -h, --help               this text

Colour: on when standard output is a terminal and NO_COLOR is not set; FORCE_COLOR=1 forces it, FORCE_COLOR=0 turns it off.
Exit status: 0 no finding at the --fail-on level (and at most --max-warnings warnings), 1 otherwise, 2 bad
usage or an invalid baseline (nothing is checked then).`;

const PLAN_HELP = `Usage: cuda-gatekeeper plan --cuda X.Y [PATH...] [options]

Plans the move of the checkout to CUDA X.Y: base images, wheel indexes and pins, conda packages, each edit
checked by the gate before it is proposed.

Options:
  --cuda X.Y               the CUDA release to move to (required)
  --baseline FILE|none     the baseline (as for check)
  --baseline-ref REF       read the baseline as it is at git ref REF
  --format text|json       the plan's format (default: text)
  --write                  apply the plan's edits to the files
  -h, --help               this text

Exit status: 0 planned, 2 bad usage, an invalid baseline or a CUDA release that does not exist.`;

const RULES_HELP = `Usage: cuda-gatekeeper rules

Lists every rule: its id, default severity and what it checks. Each rule's README (rules/<id>/README.md) says
why and how to fix.`;

export interface Io {
  readonly cwd: string;
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly color?: boolean;
  /** Standard input's text, for `check -` (default: file descriptor 0). */
  readonly stdin?: () => string;
  /** Called with the finished check (the GitHub Action renders its check run, summary and SARIF from it). */
  readonly onReport?: (checked: Checked) => void;
  /** Called with each problem of a baseline that is refused (the Action annotates the baseline file with them). */
  readonly onInvalidBaseline?: (problems: readonly BaselineProblem[]) => void;
  /**
   * Standard error is a terminal: a check that runs longer than `afterMs` (default a second) shows its progress there
   * (a line rewritten in place).
   */
  readonly progress?: { readonly afterMs?: number };
  /** The CLI's script, to start worker threads from for a large tree (threads.ts); without it, one thread. */
  readonly threadScript?: string;
  /** The environment (registry credentials' variables, the cache folder; default: this process's). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** How registries are reached with --online (default: global fetch; tests pass a fake registry's). */
  readonly fetch?: typeof fetch;
}

/** One positioned problem of a refused baseline. */
export interface BaselineProblem {
  readonly path: string;
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

/** A finished `check`: the report, the files it read, and where the baseline came from. */
export interface Checked {
  readonly report: Report;
  readonly sources: readonly SourceFile[];
  readonly baselineOrigin: string;
  readonly failed: boolean;
  /** CUDA-relevant files that could not be checked (too large, binary, unreadable), with the reason. */
  readonly unchecked: readonly { readonly path: string; readonly reason: string }[];
}

/**
 * Run the CLI; returns the exit status. Never throws for user mistakes. A command that asks registries
 * (`check --online`) finishes later: `runAsync` waits for it; here it is refused as a usage error (tests and
 * in-process callers that need it use runAsync).
 */
export function run(argv: readonly string[], io: Io): number {
  try {
    const status = dispatch(argv, io, false);
    // dispatch refuses (before asking anything) what needs a registry when it may not wait.
    if (typeof status !== 'number') throw new Error('a command that waits ran where it may not');
    return status;
  } catch (error) {
    return failure(error, argv, io);
  }
}

/** Run the CLI to the end, registry lookups included; resolves to the exit status. Never rejects. */
export async function runAsync(argv: readonly string[], io: Io): Promise<number> {
  try {
    return await dispatch(argv, io, true);
  } catch (error) {
    return failure(error, argv, io);
  }
}

/** What a command's failure makes of the exit status: 2, with one line that says why (our bugs say so too). */
function failure(error: unknown, argv: readonly string[], io: Io): number {
  if (error instanceof UsageError || error instanceof GitError || error instanceof PlanError) {
    io.err(`cuda-gatekeeper: ${error.message}\n`);
    return 2;
  }
  if (
    error instanceof TypeError &&
    (String((error as NodeJS.ErrnoException).code ?? '').startsWith('ERR_PARSE_ARGS') ||
      /Unknown option|unexpected argument|argument missing|requires a value/i.test(error.message))
  ) {
    const unknown = /Unknown option '(-{1,2}[^']+)'/.exec(error.message)?.[1];
    const suggestion = unknown ? nearestOption(unknown, argv[0]) : undefined;
    const said = unknown
      ? `unknown option ${unknown}${suggestion ? ` (did you mean ${suggestion}?)` : ''}`
      : error.message.split('\n')[0];
    io.err(`cuda-gatekeeper: ${said}\n${USAGE}\n`);
    return 2;
  }
  // Anything else is our bug: one line, exit 2 (never 1, which means "findings"); the stack with
  // CUDA_GATEKEEPER_DEBUG=1.
  const message = error instanceof Error ? error.message : String(error);
  io.err(
    `cuda-gatekeeper: internal error: ${escapeControl(message.split('\n')[0] ?? '')} (please report it; CUDA_GATEKEEPER_DEBUG=1 shows where)\n`,
  );
  if (process.env.CUDA_GATEKEEPER_DEBUG === '1' && error instanceof Error && error.stack) io.err(`${error.stack}\n`);
  return 2;
}

/** The options each command takes, for "did you mean". */
const OPTIONS: Readonly<Record<string, readonly string[]>> = {
  check: [
    '--baseline',
    '--baseline-ref',
    '--format',
    '--output',
    '--quiet',
    '--fail-on',
    '--max-warnings',
    '--changed-since',
    '--fix',
    '--verbose',
    '--online',
    '--offline',
    '--repository',
    '--type',
    '--stdin-filename',
    '--ignore-unknown',
    '--staged',
    '--help',
  ],
  plan: ['--cuda', '--baseline', '--baseline-ref', '--format', '--write', '--help'],
};

/** The known option nearest to a mistyped one (at most two edits, or one that starts the same), if any. */
export function nearestOption(unknown: string, command: string | undefined): string | undefined {
  const name = unknown.split('=')[0]!;
  let best: { option: string; distance: number } | undefined;
  for (const option of ownValue(OPTIONS, command ?? '') ?? []) {
    const distance = option.startsWith(name) && name.length >= 4 ? 0 : editDistance(name, option);
    if (distance <= 2 && (!best || distance < best.distance)) best = { option, distance };
  }
  return best?.option;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}

/** A command's status; with `canWait`, a command that asks registries returns the promise of it. */
function dispatch(argv: readonly string[], io: Io, canWait: boolean): number | Promise<number> {
  const [command, ...rest] = argv;
  if (command === '--version' || command === '-v') {
    io.out(`${packageVersion()}\n`);
    return 0;
  }
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    io.out(`${USAGE}\n`);
    return command === undefined ? 2 : 0;
  }
  const help = rest.includes('--help') || rest.includes('-h');
  if (command === 'check') return help ? helpText(CHECK_HELP, io) : check(rest, io, canWait);
  if (command === 'plan') return help ? helpText(PLAN_HELP, io) : planCommand(rest, io);
  if (command === 'fleet')
    return help ? helpText(FLEET_HELP, io) : fleetCommand(rest, io, (message) => new UsageError(message));
  if (command === 'rules') {
    if (help) return helpText(RULES_HELP, io);
    for (const rule of RULES) io.out(`${rule.id.padEnd(22)} ${rule.defaultSeverity.padEnd(8)} ${rule.description}\n`);
    return 0;
  }
  const near = ['check', 'plan', 'rules', 'fleet'].find((known) => editDistance(command, known) <= 2);
  throw new UsageError(`unknown command "${command}"${near ? ` (did you mean ${near}?)` : ''}\n${USAGE}`);
}

function helpText(text: string, io: Io): number {
  io.out(`${text}\n`);
  return 0;
}

/**
 * The baseline: `--baseline FILE`, else `.github/cuda-gatekeeper.yml`, else the bundled default. With `--baseline-ref
 * REF` the file is read as it is at that git ref (the pull request's base branch in CI), so a change cannot switch
 * rules off for itself; a ref without the repository file falls back to the bundled default and says so. The file
 * is read like every other file: a regular file inside the working directory, at most 256 KiB.
 */
function readBaseline(option: string | undefined, io: Io, ref?: string): LoadedBaseline | undefined {
  if (option === 'none') return undefined;
  const repoConfig = '.github/cuda-gatekeeper.yml';
  if (ref !== undefined) {
    const path = option ?? repoConfig;
    const text = fileAtRef(io.cwd, ref, path);
    if (text === undefined) {
      if (option) throw new UsageError(`cannot read baseline ${option} at ${ref}`);
      io.err(`cuda-gatekeeper: no ${repoConfig} at ${ref}; using the bundled baseline.yaml\n`);
      return loadBaseline('baseline.yaml (bundled default)', bundledBaseline().text, RULE_IDS);
    }
    return loadBaseline(`${path}@${ref}`, text, RULE_IDS);
  }
  if (option) return loadBaseline(option, readBaselineFile(io.cwd, option), RULE_IDS);
  if (existsSync(resolve(io.cwd, repoConfig)))
    return loadBaseline(repoConfig, readBaselineFile(io.cwd, repoConfig), RULE_IDS);
  if (existsSync(resolve(io.cwd, MISNAMED_CONFIG_PATH)))
    io.err(
      `cuda-gatekeeper: ${MISNAMED_CONFIG_PATH} is not read (the baseline file is ${repoConfig}): rename it; using the bundled baseline.yaml\n`,
    );
  return loadBaseline('baseline.yaml (bundled default)', bundledBaseline().text, RULE_IDS);
}

/**
 * The baseline file: a regular file (never a FIFO or device), at most 256 KiB. Found in the working directory or
 * named by a path inside it, it must stay inside it (no link out); a path outside it the user named is read as named.
 */
function readBaselineFile(cwd: string, path: string): string {
  const absolute = resolve(cwd, path);
  const inside = absolute === cwd || absolute.startsWith(cwd.endsWith(sep) ? cwd : cwd + sep);
  let read: string | { readonly reason: string };
  try {
    read = inside
      ? readRegularInside(realpathSync.native(cwd), cwd, toRepoPath(cwd, absolute) ?? path, 256 * 1024)
      : readRegularInside(realpathSync.native(dirname(absolute)), dirname(absolute), basename(absolute), 256 * 1024);
  } catch {
    read = { reason: 'cannot be read' };
  }
  if (typeof read !== 'string') throw new UsageError(`cannot read baseline ${escapeControl(path)}: it ${read.reason}`);
  return read;
}

/**
 * A baseline the CLI will not apply: one that does not read (unknown keys, wrong types), or one that names things
 * that do not exist (CUDA 12.7) — the policy-error rule's error findings on the baseline file (an unknown GPU is a
 * warning: the baseline applies without it). Each
 * problem is printed with its position; nothing is checked, exit 2.
 */
function policyFailure(policy: LoadedBaseline, kb: KnowledgeBase, io: Io): number | undefined {
  const path = policy.source.path;
  // `_extends` names nothing but an organisation's config repository, in the App and here alike.
  const wrong = extendsProblem(policy);
  let refused: BaselineProblem[] = [...policy.problems, ...(wrong ? [wrong] : [])].map((problem) => ({
    path,
    ...policy.source.position(problem.span.start),
    message: problem.message,
  }));
  if (refused.length === 0)
    refused = gate([], policy.baseline, kb, { policy })
      .findings.filter(
        (finding) =>
          finding.ruleId === 'policy-error' && finding.severity === 'error' && finding.location.path === path,
      )
      .map((finding) => ({
        path,
        line: finding.location.start.line,
        column: finding.location.start.column,
        message: finding.message,
      }));
  if (refused.length === 0) return undefined;
  for (const problem of refused)
    io.err(`${path}:${problem.line}:${problem.column}: error: ${escapeControl(problem.message)} [policy-error]\n`);
  io.err('cuda-gatekeeper: the baseline is invalid; nothing was checked\n');
  io.onInvalidBaseline?.(refused);
  return 2;
}

/**
 * The whole checkout's walk with the named files in it (a named file the walk would not find, e.g. one read by
 * --type, is kept with its kind): the files that may include or install the named ones.
 */
function withTree(io: Io, baseline: Baseline, named: Walked): Walked {
  const tree = select(io, [], baseline);
  const namedPaths = new Set(named.paths);
  const paths = [...new Set([...tree.paths, ...named.paths])];
  return {
    paths,
    unreadable: [
      ...named.unreadable,
      ...tree.unreadable.filter((entry) => !named.unreadable.some((other) => other.path === entry.path)),
    ],
    kinds: new Map([...tree.kinds, ...named.kinds]),
    missing: named.missing,
    plain: new Set([...[...tree.plain].filter((path) => !namedPaths.has(path)), ...named.plain]),
    listing: joinListings(tree.listing, named.listing),
  };
}

/** The files to check: the inputs walked (default: the whole checkout), with the baseline's `files` patterns. */
function select(io: Io, paths: readonly string[], baseline: Baseline): Walked {
  return walk(io.cwd, paths.length > 0 ? paths : ['.'], baseline.files);
}

function collect(io: Io, paths: readonly string[], baseline: Baseline): Loaded & { missing: string[] } {
  const selected = select(io, paths, baseline);
  return {
    ...loadFiles(io.cwd, selected.paths, true, selected, { images: baseline.images }),
    missing: selected.missing,
  };
}

/**
 * `--changed-since`: every file is read, and the files joined by includes (either way) to a changed or deleted one
 * are checked, so a changed requirements file is checked with the Dockerfile that installs it, exactly as a check
 * of the whole checkout would check that unit.
 */
function checkChanges(
  files: readonly Listed[],
  reader: RepositoryReader,
  changes: Changes,
  { baseline, kb, gateOptions: options }: Engine,
  serving: ServingIndex | undefined,
): RepositoryCheck {
  // Every file is read to find those that include a changed one, but only its outline is kept: the checkout is never
  // held parsed at once (a monorepo of hundreds of thousands of files ran out of memory). The files the change
  // reaches are read and parsed again.
  const parse = { images: baseline.images, ...(serving ? { serving } : {}) };
  // A changed InferenceService is checked with the runtime another file defines for it, and a changed runtime with
  // the services that name it: each is judged in the other's light.
  const changed = new Set(changes.changed);
  for (const path of changes.changed) for (const partner of servingPartners(serving, path)) changed.add(partner);
  // A manifest includes a Dockerfile only through the baseline's `images`: without them, one that is not changed
  // joins no change, and is not read (a checkout's install bundles run to tens of megabytes of YAML).
  const joining =
    Object.keys(baseline.images).length > 0
      ? files
      : files.filter((file) => file.kind !== 'kubernetes' || changed.has(file.path));
  const outlines: FileOutline[] = [];
  for (const { parsed } of readRepository(joining, reader, true, parse)) outlines.push(outlineOf(parsed));
  const sources = affectedIndices(outlines, changed, new Set(changes.removed)).flatMap((i) => {
    const source = reader.read(outlines[i]!.path, outlines[i]!.kind);
    return source ? [source] : [];
  });
  const affected = sources.map((source) => parseFile(source.path, source.text, source.kind, parse));
  return {
    report: gate(affected, baseline, kb, { ...options, removed: changes.removed, fileExists: reader.isFile }),
    sources,
    parsedAgain: 0,
  };
}

/** What a check runs with: the baseline (and the policy it came from), the knowledge base and the gate's options. */
interface Engine {
  readonly baseline: Baseline;
  readonly kb: KnowledgeBase;
  readonly gateOptions: GateOptions & { repository: string; today: string };
  readonly policy?: LoadedBaseline | undefined;
}

/** `--fail-on`, `--max-warnings`: when findings make the exit status 1. */
interface Threshold {
  readonly failOn: Severity | 'never';
  readonly maxWarnings?: number;
}

function threshold(failOn: string | undefined, maxWarnings: string | undefined): Threshold {
  const level = failOn ?? 'error';
  if (level !== 'error' && level !== 'warning' && level !== 'notice' && level !== 'never')
    throw new UsageError(`unknown --fail-on "${level}" (use error, warning, notice or never)`);
  if (maxWarnings !== undefined && !/^\d{1,9}$/.test(maxWarnings))
    throw new UsageError(`--max-warnings needs a whole number, not "${maxWarnings}"`);
  return { failOn: level, ...(maxWarnings !== undefined ? { maxWarnings: Number(maxWarnings) } : {}) };
}

/** Whether the report fails under the threshold. */
export function fails(report: Report, limit: Threshold): boolean {
  if (limit.maxWarnings !== undefined && report.counts.warning > limit.maxWarnings) return true;
  if (limit.failOn === 'never') return false;
  const floor = severityRank[limit.failOn];
  return (['error', 'warning', 'notice'] as const).some(
    (severity) => severityRank[severity] >= floor && report.counts[severity] > 0,
  );
}

/** `check`'s flags, parsed and checked against each other. */
function checkFlags(args: readonly string[]) {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      baseline: { type: 'string' },
      'baseline-ref': { type: 'string' },
      format: { type: 'string', default: 'text' },
      output: { type: 'string' },
      quiet: { type: 'boolean', default: false },
      'fail-on': { type: 'string' },
      'max-warnings': { type: 'string' },
      'changed-since': { type: 'string' },
      fix: { type: 'boolean', default: false },
      verbose: { type: 'boolean', default: false },
      online: { type: 'boolean', default: false },
      offline: { type: 'boolean', default: false },
      repository: { type: 'string' },
      type: { type: 'string' },
      'stdin-filename': { type: 'string' },
      'ignore-unknown': { type: 'boolean', default: false },
      staged: { type: 'boolean', default: false },
    },
  });
  const format = values.format ?? 'text';
  if (!['text', 'json', 'sarif', 'github'].includes(format))
    throw new UsageError(`unknown format "${format}" (use text, json, sarif or github)`);
  const stdin = positionals.includes('-');
  if (stdin && positionals.length > 1)
    throw new UsageError('"-" (standard input) is checked alone; name no other paths with it');
  if (stdin && (values.fix || values['changed-since'] !== undefined))
    throw new UsageError('--fix and --changed-since need files, not standard input');
  if (values['stdin-filename'] !== undefined && !stdin)
    throw new UsageError('--stdin-filename goes with "-" (standard input)');
  if (values.online && values.offline) throw new UsageError('--online and --offline cannot both be given');
  return {
    values,
    positionals,
    format,
    stdin,
    limit: threshold(values['fail-on'], values['max-warnings']),
    type: fileType(values.type),
  };
}

type CheckFlags = ReturnType<typeof checkFlags>;

/**
 * `check`: 1. flags and baseline, 2. the files to check, 3. the check (on every core for a large tree) and the safe
 * fixes, 4. the report and the exit code.
 */
function check(args: readonly string[], io: Io, canWait: boolean): number | Promise<number> {
  // 1. Flags and the baseline.
  const flags = checkFlags(args);
  const { values } = flags;
  const kb = defaultKnowledgeBase();
  const policy = readBaseline(values.baseline, io, values['baseline-ref']);
  const refused = policy && policyFailure(policy, kb, io);
  if (refused !== undefined) return refused;
  const baseline = policy?.baseline ?? EMPTY_BASELINE;
  // Waivers name repositories: --repository, else GitHub Actions' GITHUB_REPOSITORY, else the folder's name.
  const env = io.env ?? process.env;
  const engine: Engine = {
    baseline,
    kb,
    policy,
    gateOptions: {
      ...(policy ? { policy } : {}),
      repository: values.repository ?? env.GITHUB_REPOSITORY ?? basename(io.cwd),
      today: new Date().toISOString().slice(0, 10),
    },
  };
  const online = values.online || (!values.offline && baseline.registries.lookup === true);
  if (online && !canWait)
    throw new UsageError('looking images up (--online, registries.lookup) needs the command line itself (runAsync)');
  if (flags.stdin) {
    const stdin = readStdin(io, { name: values['stdin-filename'], type: flags.type });
    if (typeof stdin === 'string') throw new UsageError(stdin);
    const finish = (withImages: Engine): number => {
      const checked = checkStdin(io, stdin, withImages);
      reportChecked(io, flags, withImages, checked.report, checked.sources);
      return fails(checked.report, flags.limit) ? 1 : 0;
    };
    if (!online) return finish(engine);
    return lookUp(io, [{ path: stdin.path, kind: stdin.kind }], stdin.reader, flags, engine).then(finish);
  }
  // 2. The files: those named with the files on disk joined to them, or the whole tree.
  const chosen = chooseFiles(io, flags, baseline);
  const finish = (withImages: Engine): number => finishCheck(io, flags, chosen, withImages);
  if (!online) return finish(engine);
  return lookUp(io, chosen.files, diskReader(io.cwd, [], chosen.selected), flags, engine).then(finish);
}

/** `--online`: the checked Dockerfiles' and manifests' images looked up; the engine then carries what was read. */
async function lookUp(
  io: Io,
  list: readonly Listed[],
  reader: RepositoryReader,
  flags: CheckFlags,
  engine: Engine,
): Promise<Engine> {
  const env = io.env ?? process.env;
  const found = await lookUpForCli(list, reader, engine.baseline, engine.kb, {
    env,
    today: engine.gateOptions.today,
    ...(io.fetch ? { fetch: io.fetch } : {}),
  });
  if (flags.values.verbose) io.err(`cuda-gatekeeper: ${found.summary}\n`);
  return { ...engine, gateOptions: { ...engine.gateOptions, images: found.images } };
}

/** Steps 3 and 4 of `check`: the check, the safe fixes, what was skipped, the report and the exit status. */
function finishCheck(io: Io, flags: CheckFlags, chosen: ReturnType<typeof chooseFiles>, engine: Engine): number {
  const { values } = flags;
  const { baseline } = engine;
  // 3. The check, and the safe fixes with --fix.
  const { checked, skipped } = checkChosen(io, flags, chosen, engine);
  // 4. What was skipped and not checked, the report, the exit code.
  for (const skip of skipped) {
    if (values['ignore-unknown'] && skip.reason === UNKNOWN_KIND && chosen.namedPaths.has(skip.path)) continue;
    io.err(`${escapeControl(skip.path)}: skipped: ${skip.reason}\n`);
  }
  const sourcePaths = new Set(checked.sources.map((source) => source.path));
  const unchecked = [
    ...chosen.selected.unreadable.map((entry) => ({
      path: toRepoPath(io.cwd, entry.path) ?? entry.path,
      reason: entry.reason,
    })),
    ...skipped.filter((skip) => skip.reason !== UNKNOWN_KIND && !skip.duplicate),
  ]
    // Checking named files, a file elsewhere in the checkout that could not be read is said (above), not a failure
    // of theirs: only the named files, and the files their units hold, count.
    .filter(({ path }) => !chosen.namesFiles || chosen.namedSet.has(path) || sourcePaths.has(path))
    .map(({ path, reason }) => ({ path, reason }));
  reportChecked(io, flags, engine, checked.report, checked.sources, unchecked);
  // A file named on the command line that could not be read as any kind was not checked: that is a usage error,
  // unless --ignore-unknown says the names are candidates (the pre-commit hook passes every YAML file that may be
  // a conda environment).
  if (
    !values['ignore-unknown'] &&
    skipped.some((skip) => skip.reason === UNKNOWN_KIND && chosen.namedPaths.has(skip.path))
  )
    return 2;
  if (uncheckedFails(flags, baseline, unchecked)) {
    io.err(
      `cuda-gatekeeper: ${unchecked.length} CUDA-relevant file${unchecked.length === 1 ? ' was' : 's were'} not checked (${escapeControl(unchecked[0]!.path)}: ${unchecked[0]!.reason}${unchecked.length > 1 ? `; and ${unchecked.length - 1} more` : ''}), so the check fails; --fail-on never, or unchecked: neutral in the baseline, lets it pass\n`,
    );
    return 1;
  }
  return fails(checked.report, flags.limit) ? 1 : 0;
}

/** The report rendered where --output says, and handed to the Action (io.onReport). */
function reportChecked(
  io: Io,
  flags: CheckFlags,
  { baseline, policy }: Engine,
  report: Report,
  sources: readonly SourceFile[],
  unchecked: Checked['unchecked'] = [],
): void {
  const { values } = flags;
  io.onReport?.({
    report,
    sources,
    baselineOrigin: policy ? policy.source.path : 'none (built-in consistency rules only)',
    failed: fails(report, flags.limit) || uncheckedFails(flags, baseline, unchecked),
    unchecked,
  });
  const shown = values.quiet
    ? { ...report, findings: report.findings.filter((finding) => finding.severity === 'error') }
    : report;
  const text = render(
    shown,
    flags.format,
    sources,
    values.verbose ?? false,
    (io.color ?? false) && values.output === undefined,
  );
  if (values.output === undefined) io.out(text);
  else writeOutput(io.cwd, values.output, text);
}

/**
 * A CUDA-relevant file that could not be checked is not a pass (the App's check fails the same way), unless
 * `--fail-on never` or the baseline's `unchecked: neutral` says so.
 */
function uncheckedFails(flags: CheckFlags, baseline: Baseline, unchecked: readonly unknown[]): boolean {
  return unchecked.length > 0 && flags.limit.failOn !== 'never' && baseline.unchecked !== 'neutral';
}

/**
 * Step 2 of `check`: the files to check. Files named on the command line (pre-commit passes the staged ones) are
 * checked with the files on disk that include or install them, and those they pull in: the units the App and
 * --changed-since check for them, so a requirements file changed alone is still checked against the Dockerfile
 * that installs it. A named path that is missing, outside the working directory or unreadable is a usage error.
 */
function chooseFiles(io: Io, flags: CheckFlags, baseline: Baseline) {
  const { values, positionals } = flags;
  const named = select(io, positionals, baseline);
  const namedSet = new Set(named.paths);
  const namesFiles =
    positionals.length > 0 &&
    positionals.every((path) => namedSet.has(toRepoPath(io.cwd, resolve(io.cwd, path)) ?? ''));
  // --staged (the pre-commit hook): the files the commit deletes count too, so the Dockerfile that installs a
  // deleted requirements file is checked without it; with no file named and none deleted, nothing is checked.
  const removed = values.staged ? stagedDeletions(io.cwd) : [];
  const nothing: Walked = {
    paths: [],
    unreadable: [],
    kinds: new Map(),
    missing: [],
    plain: new Set(),
    listing: NO_LISTING,
  };
  const selected =
    values.staged && positionals.length === 0
      ? removed.length > 0
        ? withTree(io, baseline, nothing)
        : nothing
      : namesFiles && values['changed-since'] === undefined
        ? withTree(io, baseline, named)
        : named;
  const changes =
    values['changed-since'] !== undefined
      ? changedSince(io.cwd, values['changed-since'])
      : namesFiles || values.staged
        ? { changed: namesFiles ? [...named.paths] : [], removed }
        : undefined;
  if (selected.missing.length > 0) {
    // A path that exists but lies outside the working directory is not missing: say so (files are read inside it only).
    const outside = selected.missing.filter((path) => existsSync(resolve(io.cwd, path)));
    const absent = selected.missing.filter((path) => !outside.includes(path));
    throw new UsageError(
      [
        ...(absent.length
          ? [`no such file or directory inside ${io.cwd}: ${absent.map(escapeControl).join(', ')}`]
          : []),
        ...(outside.length
          ? [
              `${outside.map(escapeControl).join(', ')} ${outside.length === 1 ? 'is' : 'are'} outside ${io.cwd}: run cuda-gatekeeper from a folder that holds ${outside.length === 1 ? 'it' : 'them'} (files are read inside the working directory only)`,
            ]
          : []),
      ].join('; '),
    );
  }
  const unreadableNamed = selected.unreadable.filter((entry) => entry.named);
  if (unreadableNamed.length > 0)
    throw new UsageError(unreadableNamed.map((entry) => `${escapeControl(entry.path)} ${entry.reason}`).join('; '));
  for (const entry of selected.unreadable)
    io.err(`${escapeControl(toRepoPath(io.cwd, entry.path) ?? entry.path)}: skipped: ${entry.reason}\n`);
  // The walk knows each file's kind by name (or a YAML file's by content); a file named on the command line whose
  // name says nothing is read as --type says, or as its content says.
  const namedPaths = new Set(positionals.map((path) => toRepoPath(io.cwd, resolve(io.cwd, path))));
  const files: Listed[] = selected.paths.map((path) => ({
    path,
    kind: (flags.type && namedPaths.has(path) ? flags.type : undefined) ?? selected.kinds.get(path),
  }));
  return { selected, changes, files, namesFiles, namedSet, namedPaths };
}

/**
 * Step 3 of `check`: the chosen files checked, with the fixes verified. A large tree is checked on every core
 * (threads.ts), with the same result; --fix and --changed-since on one thread, and so is a tree with files
 * reached through links (one thread reads such a file once, by its real path). With --fix, the safe fixes are
 * written and the files checked again.
 */
function checkChosen(
  io: Io,
  flags: CheckFlags,
  chosen: ReturnType<typeof chooseFiles>,
  engine: Engine,
): { checked: RepositoryCheck; skipped: Skipped[] } {
  const { selected, changes, files } = chosen;
  const { baseline, kb, gateOptions, policy } = engine;
  let skipped: Skipped[] = [];
  const line = progressLine(io, flags);
  // KServe runtimes that InferenceServices of other files name: every manifest is read once more for it.
  const servingIn = (list: readonly Listed[]) => servingOf(list, diskReader(io.cwd, [], selected));
  const run = (list: readonly Listed[]): RepositoryCheck => {
    const reader = diskReader(io.cwd, skipped, selected);
    const serving = servingIn(list);
    const withServing = { ...gateOptions, ...(serving ? { serving } : {}), fileExists: reader.isFile };
    const checked = changes
      ? checkChanges(list, reader, changes, engine, serving)
      : gateRepository(list, reader, baseline, kb, { ...withServing, ...(line ? { progress: line.show } : {}) });
    line?.clear();
    return withVerifiedFixes(
      checked,
      baseline,
      kb,
      changes ? { ...withServing, removed: changes.removed } : withServing,
    );
  };
  const linked = selected.paths.some((path) => !selected.plain.has(path));
  const threads = io.threadScript && !changes && !flags.values.fix && !linked ? threadsFor(files.length) : 1;
  let checked: RepositoryCheck | undefined;
  if (threads > 1) {
    line?.say(`checking ${files.length.toLocaleString('en-US')} files on ${threads} threads…`);
    try {
      const parallel = checkOnThreads(io.threadScript!, files, threads, {
        cwd: io.cwd,
        ...(policy ? { baseline: { name: policy.source.path, text: policy.source.text } } : {}),
        repository: gateOptions.repository,
        today: gateOptions.today,
        walked: { paths: selected.paths, plain: [...selected.plain], listing: listingData(selected.listing) },
        ...(gateOptions.images ? { images: gateOptions.images } : {}),
        ...((serving) => (serving ? { serving } : {}))(servingIn(files)),
      });
      line?.clear();
      skipped.push(...parallel.skipped);
      checked = { report: parallel.report, sources: parallel.sources, parsedAgain: parallel.parsedAgain };
    } catch (error) {
      // A worker that could not start or failed: the same check on this thread, and a word on why.
      io.err(
        `cuda-gatekeeper: checking on ${threads} threads failed (${escapeControl((error as Error).message.split('\n')[0] ?? '')}); checking on one\n`,
      );
      skipped = [];
    }
  }
  checked ??= run(files);
  if (flags.values.fix) {
    const fixed = applySafeFixes(io.cwd, checked.sources, checked.report);
    if (fixed > 0) {
      io.err(`cuda-gatekeeper: applied ${fixed} safe fix${fixed === 1 ? '' : 'es'}\n`);
      skipped = [];
      checked = run(changes ? files : checked.sources.map((source) => ({ path: source.path, kind: source.kind })));
    }
  }
  return { checked, skipped };
}

/**
 * The progress of a long check on a terminal (standard error, as ESLint and Renovate users expect): nothing for the
 * first second, then `N of M files read…` at most five times a second, rewritten in place and cleared at the end.
 * Never in --quiet, and never when standard error is not a terminal (CI logs, pipes).
 */
function progressLine(
  io: Io,
  flags: CheckFlags,
): { show: (done: number, given: number) => void; say: (text: string) => void; clear: () => void } | undefined {
  if (!io.progress || flags.values.quiet) return undefined;
  const started = Date.now();
  const after = io.progress.afterMs ?? 1000;
  let shownAt = 0;
  let shown = false;
  const say = (text: string): void => {
    io.err(`\r\x1b[Kcuda-gatekeeper: ${text}`);
    shown = true;
  };
  return {
    show: (done, given) => {
      const now = Date.now();
      if (now - started < after || now - shownAt < 200) return;
      shownAt = now;
      say(`${done.toLocaleString('en-US')} of ${Math.max(done, given).toLocaleString('en-US')} files read…`);
    },
    say,
    clear: () => {
      if (shown) io.err('\r\x1b[K');
      shown = false;
    },
  };
}

/** Standard input as a file of the check: its repository path, kind and text, and a reader that serves it. */
interface Stdin {
  readonly path: string;
  readonly kind: FileKind;
  readonly reader: RepositoryReader;
  readonly skipped: Skipped[];
}

/**
 * `check -`: one file from standard input, at the repository path `--stdin-filename` names (default `<stdin>` at
 * the top of the working directory); the files it includes are read from the disk as usual. A string says why not.
 */
/**
 * Standard input, read until its end or until it is longer than `limit` bytes (then undefined: `check -` of
 * /dev/zero stops at the limit instead of filling the memory).
 */
function readBoundedStdin(limit: number): string | undefined {
  const chunks: Buffer[] = [];
  let size = 0;
  const buffer = Buffer.allocUnsafe(1024 * 1024);
  for (;;) {
    let read: number;
    try {
      read = readSync(0, buffer, 0, buffer.length, null);
    } catch (error) {
      // A non-blocking standard input with nothing yet: wait a little and try again.
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN') {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
        continue;
      }
      if ((error as NodeJS.ErrnoException).code === 'EOF') break;
      throw error;
    }
    if (read === 0) break;
    size += read;
    if (size > limit) return undefined;
    chunks.push(Buffer.from(buffer.subarray(0, read)));
  }
  return Buffer.concat(chunks).toString('utf8');
}

function readStdin(
  io: Io,
  { name, type }: { readonly name: string | undefined; readonly type: FileKind | undefined },
): Stdin | string {
  const path = name === undefined ? '<stdin>' : toRepoPath(io.cwd, resolve(io.cwd, name));
  if (path === undefined) return `--stdin-filename ${escapeControl(name ?? '')} is outside ${io.cwd}`;
  let text: string;
  try {
    const read = io.stdin ? io.stdin() : readBoundedStdin(MAX_LOCK_BYTES);
    if (read === undefined) return `standard input is larger than ${MAX_LOCK_BYTES / 1024 / 1024} MiB: not read`;
    text = read;
  } catch {
    return 'standard input cannot be read';
  }
  // Its kind: --type, else the name's, else (a YAML name: `helm template … | check --stdin-filename rendered.yaml -`)
  // the content's.
  const kind =
    type ??
    (name === undefined
      ? undefined
      : (classifyPath(path) ?? (yamlByContent(path) ? kindByContent(path, text) : undefined)));
  if (!kind)
    return `standard input needs --type ${FILE_KIND_NAMES.join('|')} (or a --stdin-filename that says its kind)`;
  const limit = maxBytes(path, kind);
  const size = Buffer.byteLength(text);
  if (size > limit)
    return `${escapeControl(path)}: standard input is ${(size / 1024 / 1024).toFixed(1)} MiB, over the ${limit / 1024 / 1024} MiB size limit: not checked`;
  const skipped: Skipped[] = [];
  const disk = diskReader(io.cwd, skipped);
  const reader: RepositoryReader = {
    read: (at, atKind) => {
      if (at !== path) return disk.read(at, atKind);
      const source = sourceOf(path, text, kind);
      return typeof source === 'string' ? undefined : source;
    },
    isFile: (at) => at === path || disk.isFile(at),
  };
  return { path, kind, reader, skipped };
}

function checkStdin(io: Io, stdin: Stdin, { baseline, kb, gateOptions }: Engine): RepositoryCheck {
  const options = { ...gateOptions, fileExists: stdin.reader.isFile };
  const checked = gateRepository([{ path: stdin.path, kind: stdin.kind }], stdin.reader, baseline, kb, options);
  for (const skip of stdin.skipped) io.err(`${escapeControl(skip.path)}: skipped: ${skip.reason}\n`);
  return withVerifiedFixes(checked, baseline, kb, options);
}

/** `--output FILE`: the report written whole (through a temporary file, so a reader never sees half of it). */
function writeOutput(cwd: string, file: string, text: string): void {
  const target = resolve(cwd, file);
  const temporary = `${target}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, text);
    renameSync(temporary, target);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw new UsageError(`cannot write ${escapeControl(file)}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

/** The check with every safe fix verified (see verify.ts): the files are parsed again only when there is a safe fix. */
/** `--type KIND` (src/parsers/formats.ts): the kind of the files named on the command line. */
function fileType(value: string | undefined): FileKind | undefined {
  if (value === undefined) return undefined;
  if (isFileKind(value)) return value;
  throw new UsageError(`unknown --type "${value}" (use ${FILE_KIND_NAMES.join(', ')})`);
}

function render(
  report: Report,
  format: string,
  sources: readonly SourceFile[],
  verbose: boolean,
  color: boolean,
): string {
  switch (format) {
    case 'json':
      return renderJson(report, {
        tool: 'cuda-gatekeeper',
        toolVersion: packageVersion(),
        knowledgeRetrieved: defaultKnowledgeBase().retrieved,
      });
    case 'sarif':
      return renderSarif(report, {
        rules: RULES,
        version: packageVersion(),
        sources: new Map(sources.map((source) => [source.path, new SourceText(source.path, source.text)])),
        docs: ruleDocs(),
      });
    case 'github':
      return renderGithubAnnotations(report);
    default:
      return renderText(report, { verbose, color });
  }
}

/** Each rule's README (rules/<id>/README.md, shipped with the package), for SARIF's rule help. */
export function ruleDocs(): Map<string, string> {
  const docs = new Map<string, string>();
  for (const rule of RULES) {
    try {
      docs.set(
        rule.id,
        withoutExamples(readFileSync(join(packageRoot(), 'rules', rule.id, 'README.md'), 'utf8'), rule.id),
      );
    } catch {
      // An install without the READMEs: the help falls back to the description and the link.
    }
  }
  return docs;
}

/** A file's new text, written in the encoding the file has: UTF-16 where it starts with that byte-order mark. */
function writeLike(path: string, text: string): void {
  let head = new Uint8Array(0);
  try {
    head = readFileSync(path).subarray(0, 2);
  } catch {
    // A file that is not there (yet) is written as UTF-8.
  }
  const encoding = utf16Encoding(head);
  if (!encoding) return writeFileSync(path, text);
  const bytes = Buffer.from(`\uFEFF${text}`, 'utf16le');
  writeFileSync(path, encoding === 'utf-16be' ? bytes.swap16() : bytes);
}

/** Apply every safe fix once (the same contents the App would commit); returns how many fixes were applied. */
function applySafeFixes(cwd: string, sources: readonly SourceFile[], report: Report): number {
  const commit = safeFixContents(report, new Map(sources.map((source) => [source.path, source.text])));
  for (const file of commit.files) writeLike(resolve(cwd, file.path), file.contents);
  return commit.titles.length;
}

function planCommand(args: readonly string[], io: Io): number {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      cuda: { type: 'string' },
      baseline: { type: 'string' },
      'baseline-ref': { type: 'string' },
      format: { type: 'string', default: 'text' },
      write: { type: 'boolean', default: false },
    },
  });
  if (!values.cuda) throw new UsageError('plan needs --cuda X.Y, e.g. --cuda 12.8');
  const format = values.format ?? 'text';
  if (!['text', 'json'].includes(format))
    throw new UsageError(`unknown format "${format}" for plan (use text or json)`);
  const policy = readBaseline(values.baseline, io, values['baseline-ref']);
  const refused = policy && policyFailure(policy, defaultKnowledgeBase(), io);
  if (refused !== undefined) return refused;
  const loaded = collect(io, positionals, policy?.baseline ?? EMPTY_BASELINE);
  if (loaded.missing.length > 0)
    throw new UsageError(`no such file or directory inside ${io.cwd}: ${loaded.missing.join(', ')}`);
  const result = plan(loaded.files, values.cuda, defaultKnowledgeBase(), policy?.baseline ?? EMPTY_BASELINE);
  io.out(format === 'json' ? `${JSON.stringify(result, null, 2)}\n` : renderPlanText(result));
  if (values.write) {
    const edits = result.steps.flatMap((step) => step.edits ?? []);
    for (const file of loaded.files) {
      const own = edits.filter((edit) => edit.path === file.path);
      if (own.length > 0) writeLike(resolve(io.cwd, file.path), applyEdits(file.source.text, own));
    }
    io.err(`cuda-gatekeeper: applied ${edits.length} edits\n`);
  }
  return 0;
}
