import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { basename, dirname, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';
import { applyEdits } from '../analysis/edits.js';
import { loadBaseline, type LoadedBaseline } from '../baseline/load.js';
import { EMPTY_BASELINE } from '../baseline/schema.js';
import type { Report } from '../finding.js';
import { defaultKnowledgeBase } from '../knowledge/index.js';
import { plan, PlanError, renderPlanText } from '../plan/plan.js';
import { renderGithubAnnotations } from '../render/github.js';
import { renderJson } from '../render/json.js';
import { renderSarif } from '../render/sarif.js';
import { escapeControl, renderText } from '../render/text.js';
import { SourceText } from '../parsers/source.js';
import { affectedFiles, readRepository, UNKNOWN_KIND, type Listed, type RepositoryReader, type SourceFile } from '../reader.js';
import type { FileKind } from '../parsers/facts.js';
import { gateRepository, type RepositoryCheck } from '../stream.js';
import { gate, type GateOptions } from '../gate.js';
import { linkedWithin, verifyFixes } from '../verify.js';
import { parseFile } from '../parsers/index.js';
import type { Baseline } from '../baseline/schema.js';
import type { KnowledgeBase } from '../knowledge/index.js';
import { RULE_IDS, RULES } from '../../rules/index.js';
import { diskReader, loadFiles, readRegularInside, toRepoPath, walk, type Loaded, type Skipped, type Walked } from './discover.js';
import { changedSince, fileAtRef, GitError, type Changes } from './git.js';
import { bundledBaselinePath, packageVersion } from '../util/package-root.js';

export class UsageError extends Error {}

const USAGE = `Usage:
  cuda-gatekeeper check [PATH...] [--baseline FILE|none] [--baseline-ref REF] [--format text|json|sarif|github] [--changed-since REF] [--fix] [--verbose] [--repository OWNER/NAME] [--type dockerfile|requirements|conda]
  cuda-gatekeeper plan --cuda X.Y [PATH...] [--baseline FILE|none] [--baseline-ref REF] [--format text|json] [--write]
  cuda-gatekeeper rules
  cuda-gatekeeper --version

Exit status: 0 no error-level findings, 1 error-level findings, 2 bad usage or unreadable baseline.`;

export interface Io {
  readonly cwd: string;
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly color?: boolean;
}

/** Run the CLI; returns the exit status. Never throws for user mistakes. */
export function run(argv: readonly string[], io: Io): number {
  try {
    return dispatch(argv, io);
  } catch (error) {
    if (error instanceof UsageError || error instanceof GitError || error instanceof PlanError) {
      io.err(`cuda-gatekeeper: ${error.message}\n`);
      return 2;
    }
    if (
      error instanceof TypeError &&
      (String((error as NodeJS.ErrnoException).code ?? '').startsWith('ERR_PARSE_ARGS') ||
        /Unknown option|unexpected argument|argument missing|requires a value/i.test(error.message))
    ) {
      io.err(`cuda-gatekeeper: ${error.message.split('\n')[0]}\n${USAGE}\n`);
      return 2;
    }
    // Anything else is our bug: one line, exit 2 (never 1, which means "findings"); the stack with CUDA_GATEKEEPER_DEBUG=1.
    const message = error instanceof Error ? error.message : String(error);
    io.err(`cuda-gatekeeper: internal error: ${escapeControl(message.split('\n')[0] ?? '')} (please report it; CUDA_GATEKEEPER_DEBUG=1 shows where)\n`);
    if (process.env.CUDA_GATEKEEPER_DEBUG === '1' && error instanceof Error && error.stack) io.err(`${error.stack}\n`);
    return 2;
  }
}

function dispatch(argv: readonly string[], io: Io): number {
  const [command, ...rest] = argv;
  if (command === '--version' || command === '-v') {
    io.out(`${packageVersion()}\n`);
    return 0;
  }
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    io.out(`${USAGE}\n`);
    return command === undefined ? 2 : 0;
  }
  if (command === 'check') return check(rest, io);
  if (command === 'plan') return planCommand(rest, io);
  if (command === 'rules') {
    for (const rule of RULES) io.out(`${rule.id.padEnd(22)} ${rule.defaultSeverity.padEnd(8)} ${rule.description}\n`);
    return 0;
  }
  throw new UsageError(`unknown command "${command}"\n${USAGE}`);
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
      return loadBaseline('baseline.yaml (bundled default)', readFileSync(bundledBaselinePath(), 'utf8'), RULE_IDS);
    }
    return loadBaseline(`${path}@${ref}`, text, RULE_IDS);
  }
  if (option) return loadBaseline(option, readBaselineFile(io.cwd, option), RULE_IDS);
  if (existsSync(resolve(io.cwd, repoConfig))) return loadBaseline(repoConfig, readBaselineFile(io.cwd, repoConfig), RULE_IDS);
  return loadBaseline('baseline.yaml (bundled default)', readFileSync(bundledBaselinePath(), 'utf8'), RULE_IDS);
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

function policyFailure(policy: LoadedBaseline, io: Io): number {
  for (const problem of policy.problems) {
    const at = policy.source.position(problem.span.start);
    io.err(`${policy.source.path}:${at.line}:${at.column}: error: ${problem.message} [policy-error]\n`);
  }
  io.err('cuda-gatekeeper: the baseline is invalid; nothing was checked\n');
  return 2;
}

/** The files to check: the inputs walked (default: the whole checkout), with the baseline's `files` patterns. */
function select(io: Io, paths: readonly string[], baseline: Baseline): Walked {
  return walk(io.cwd, paths.length > 0 ? paths : ['.'], baseline.files);
}

function collect(io: Io, paths: readonly string[], baseline: Baseline): Loaded & { missing: string[] } {
  const selected = select(io, paths, baseline);
  return { ...loadFiles(io.cwd, selected.paths, true, selected), missing: selected.missing };
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
  baseline: Baseline,
  kb: KnowledgeBase,
  options: GateOptions,
): RepositoryCheck {
  const read = [...readRepository(files, reader)];
  const affected = affectedFiles(
    read.map((file) => file.parsed),
    new Set(changes.changed),
    new Set(changes.removed),
  );
  const kept = new Set(affected.map((file) => file.path));
  return {
    report: gate(affected, baseline, kb, { ...options, removed: changes.removed }),
    sources: read.map((file) => file.source).filter((source) => kept.has(source.path)),
    parsedAgain: 0,
  };
}

function check(args: readonly string[], io: Io): number {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      baseline: { type: 'string' },
      'baseline-ref': { type: 'string' },
      format: { type: 'string', default: 'text' },
      'changed-since': { type: 'string' },
      fix: { type: 'boolean', default: false },
      verbose: { type: 'boolean', default: false },
      repository: { type: 'string' },
      type: { type: 'string' },
    },
  });
  const format = values.format ?? 'text';
  if (!['text', 'json', 'sarif', 'github'].includes(format)) throw new UsageError(`unknown format "${format}" (use text, json, sarif or github)`);
  const type = fileType(values.type);
  const policy = readBaseline(values.baseline, io, values['baseline-ref']);
  if (policy && policy.problems.length > 0) return policyFailure(policy, io);
  const baseline = policy?.baseline ?? EMPTY_BASELINE;
  const kb = defaultKnowledgeBase();

  const selected = select(io, positionals, baseline);
  const changes = values['changed-since'] === undefined ? undefined : changedSince(io.cwd, values['changed-since']);
  if (selected.missing.length > 0) throw new UsageError(`no such file or directory inside ${io.cwd}: ${selected.missing.map(escapeControl).join(', ')}`);
  const named = selected.unreadable.filter((entry) => entry.named);
  if (named.length > 0) throw new UsageError(named.map((entry) => `${escapeControl(entry.path)} ${entry.reason}`).join('; '));
  for (const entry of selected.unreadable) io.err(`${escapeControl(toRepoPath(io.cwd, entry.path) ?? entry.path)}: skipped: ${entry.reason}\n`);
  // Waivers name repositories: --repository, else GitHub Actions' GITHUB_REPOSITORY, else the folder's name.
  const gateOptions = {
    ...(policy ? { policy } : {}),
    repository: values.repository ?? process.env.GITHUB_REPOSITORY ?? basename(io.cwd),
    today: new Date().toISOString().slice(0, 10),
  };
  // The walk knows each file's kind by name (or a YAML file's by content); a file named on the command line whose
  // name says nothing is read as --type says, or as its content says.
  const namedPaths = new Set(positionals.map((path) => toRepoPath(io.cwd, resolve(io.cwd, path))));
  const files: Listed[] = selected.paths.map((path) => ({ path, kind: (type && namedPaths.has(path) ? type : undefined) ?? selected.kinds.get(path) }));
  let skipped: Skipped[] = [];
  const run = (list: readonly Listed[]): RepositoryCheck => {
    const reader = diskReader(io.cwd, skipped, selected);
    const checked = changes ? checkChanges(list, reader, changes, baseline, kb, gateOptions) : gateRepository(list, reader, baseline, kb, gateOptions);
    return withVerifiedFixes(checked, baseline, kb, changes ? { ...gateOptions, removed: changes.removed } : gateOptions);
  };
  let checked = run(files);

  if (values.fix) {
    const fixed = applySafeFixes(io.cwd, checked.sources, checked.report);
    if (fixed > 0) {
      io.err(`cuda-gatekeeper: applied ${fixed} safe fix${fixed === 1 ? '' : 'es'}\n`);
      skipped = [];
      checked = run(changes ? files : checked.sources.map((source) => ({ path: source.path, kind: source.kind })));
    }
  }
  const { report, sources } = checked;

  for (const skip of skipped) io.err(`${escapeControl(skip.path)}: skipped: ${skip.reason}\n`);
  io.out(render(report, format, sources, values.verbose ?? false, io.color ?? false));
  // A file named on the command line that could not be read as any kind was not checked: that is a usage error.
  if (skipped.some((skip) => skip.reason === UNKNOWN_KIND && namedPaths.has(skip.path))) return 2;
  return report.counts.error > 0 ? 1 : 0;
}

/** The check with every safe fix verified (see verify.ts): the files are parsed again only when there is a safe fix. */
function withVerifiedFixes(checked: RepositoryCheck, baseline: Baseline, kb: KnowledgeBase, options: GateOptions): RepositoryCheck {
  if (!checked.report.findings.some((finding) => finding.fix?.safety === 'safe')) return checked;
  // Only the groups of linked files that a fix touches are parsed again.
  const linked = checked.linked ?? linkedWithin(checked.sources.map((source) => parseFile(source.path, source.text, source.kind)));
  return { ...checked, report: verifyFixes(checked.report, linked, (subset) => gate(subset, baseline, kb, options)) };
}

/** `--type dockerfile|requirements|conda`: the kind of the files named on the command line. */
function fileType(value: string | undefined): FileKind | undefined {
  if (value === undefined) return undefined;
  if (value === 'dockerfile' || value === 'requirements' || value === 'conda') return value;
  throw new UsageError(`unknown --type "${value}" (use dockerfile, requirements or conda)`);
}

function render(report: Report, format: string, sources: readonly SourceFile[], verbose: boolean, color: boolean): string {
  switch (format) {
    case 'json':
      return renderJson(report, { tool: 'cuda-gatekeeper', toolVersion: packageVersion(), knowledgeRetrieved: defaultKnowledgeBase().retrieved });
    case 'sarif':
      return renderSarif(report, {
        rules: RULES,
        version: packageVersion(),
        sources: new Map(sources.map((source) => [source.path, new SourceText(source.path, source.text)])),
      });
    case 'github':
      return renderGithubAnnotations(report);
    default:
      return renderText(report, { verbose, color });
  }
}

/** Apply every safe fix once (non-overlapping per file); returns how many fixes were applied. */
function applySafeFixes(cwd: string, sources: readonly SourceFile[], report: Report): number {
  const byPath = new Map<string, { edits: { range: readonly [number, number]; text: string; path: string }[] }>();
  let count = 0;
  for (const finding of report.findings) {
    if (finding.fix?.safety !== 'safe') continue;
    count++;
    for (const edit of finding.fix.edits) {
      const entry = byPath.get(edit.path) ?? { edits: [] };
      if (!entry.edits.some((other) => other.range[0] === edit.range[0] && other.range[1] === edit.range[1] && other.text === edit.text))
        entry.edits.push(edit);
      byPath.set(edit.path, entry);
    }
  }
  for (const [path, { edits }] of byPath) {
    const source = sources.find((candidate) => candidate.path === path);
    if (!source) continue;
    writeFileSync(resolve(cwd, path), applyEdits(source.text, edits));
  }
  return count;
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
  if (!['text', 'json'].includes(format)) throw new UsageError(`unknown format "${format}" for plan (use text or json)`);
  const policy = readBaseline(values.baseline, io, values['baseline-ref']);
  if (policy && policy.problems.length > 0) return policyFailure(policy, io);
  const loaded = collect(io, positionals, policy?.baseline ?? EMPTY_BASELINE);
  if (loaded.missing.length > 0) throw new UsageError(`no such file or directory inside ${io.cwd}: ${loaded.missing.join(', ')}`);
  const result = plan(loaded.files, values.cuda, defaultKnowledgeBase(), policy?.baseline ?? EMPTY_BASELINE);
  io.out(format === 'json' ? `${JSON.stringify(result, null, 2)}\n` : renderPlanText(result));
  if (values.write) {
    const edits = result.steps.flatMap((step) => step.edits ?? []);
    for (const file of loaded.files) {
      const own = edits.filter((edit) => edit.path === file.path);
      if (own.length > 0) writeFileSync(resolve(io.cwd, file.path), applyEdits(file.source.text, own));
    }
    io.err(`cuda-gatekeeper: applied ${edits.length} edits\n`);
  }
  return 0;
}
