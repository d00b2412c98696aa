import { resolveLinks, type Link } from './analysis/links.js';
import { groupBy, positions } from './util/collections.js';
import { fileBatches } from './analysis/batches.js';
import { buildUnits, projectBeside, selectedContexts, type Unit } from './analysis/units.js';
import type { ImageLookups } from './images/lookup.js';
import type { LoadedBaseline } from './baseline/load.js';
import type { Baseline } from './baseline/schema.js';
import { MAY_NOT_RUN, type FileKind, type InstallContext, type ParsedFile, type Suppression } from './parsers/facts.js';
import { formatOf, isLockKind } from './parsers/formats.js';
import {
  severityRank,
  TIER_RANK,
  type FleetTable,
  type Finding,
  type PoolCell,
  type PoolVerdict,
  type Report,
  type Severity,
} from './finding.js';
import type { KnowledgeBase } from './knowledge/index.js';
import {
  docsUrl,
  formatMessage,
  helpText,
  type AnyRule,
  type Draft,
  type RuleContext,
  type TextFile,
  type UnitVerdict,
} from './rule.js';
import { RULES } from '../rules/index.js';
import { TextPool } from './util/text-pool.js';

export interface GateOptions {
  /** The loaded baseline file, so its own problems become policy-error findings. */
  readonly policy?: LoadedBaseline;
  /** Problems found while layering baselines, reported as policy-error. */
  readonly policyProblems?: RuleContext['policyProblems'];
  /** Every baseline file layered into the baseline (the organisation's too), to position what is said about them. */
  readonly policyFiles?: readonly LoadedBaseline[];
  /** The repository being checked (`owner/name`), for baseline waivers. */
  readonly repository?: string;
  /** Today's date (YYYY-MM-DD) for waiver expiry; the gate never reads the clock itself. */
  readonly today?: string;
  /**
   * Paths the change deletes (a pull request, `--changed-since`): an include that leads to one of them is a finding.
   */
  readonly removed?: readonly string[];
  /** Override the rule set (tests). */
  readonly rules?: readonly AnyRule[];
  /** Files per batch of linked files the rules run over (default 256; tests compare other sizes). */
  readonly batchFiles?: number;
  /** What this check read of its images from their registries (src/images), by image key. */
  readonly images?: ImageLookups;
  /**
   * Whether the repository has a file at a path, where the caller knows it (a checkout on disk, a commit's tree or
   * the blobs read of it); undefined where it does not. With it, an install of a file that is in no file of the
   * repository says that what it installs is not checked (missing-include).
   */
  readonly fileExists?: (path: string) => boolean | undefined;
}

export const SUPPRESSION_RULE_ID = 'invalid-suppression';

/**
 * Check parsed files against a baseline. Pure and synchronous: no I/O, no clock, no environment.
 * Findings are de-duplicated (a file reached from two units is reported once), suppressed where a
 * justified `# cuda-gatekeeper: ignore[rule]` comment says so, and sorted by file and position.
 */
export function gate(
  files: readonly ParsedFile[],
  baseline: Baseline,
  kb: KnowledgeBase,
  options: GateOptions = {},
): Report {
  const checker = new Checker(baseline, options.images ? kb.withImages(options.images) : kb, options);
  return checker.report(files.length, [checker.checkPolicy(), checker.checkFiles(files)]);
}

/**
 * gate() over sets of files again and again (fix verification, src/verify.ts): one checker for every call, and the
 * files' findings only. The baseline's own findings are about the baseline file, never about the files checked, so
 * they are not worked out again for each set.
 */
export function regateFiles(
  baseline: Baseline,
  kb: KnowledgeBase,
  options: GateOptions = {},
): (files: readonly ParsedFile[]) => Report {
  const checker = new Checker(baseline, options.images ? kb.withImages(options.images) : kb, options);
  return (files) => checker.report(files.length, [checker.checkFiles(files)]);
}

/** Findings about some files (or the baseline), after waivers and suppressions, and those waivers silenced. */
export interface PartialReport {
  readonly findings: Finding[];
  readonly waived: readonly Finding[];
  /** What the rules said of each unit on each pool (fleets of pools only). */
  readonly verdicts?: readonly PoolVerdict[];
}

/**
 * The steps of gate(), for callers that check a repository in parts (see gateRepository): the baseline's own
 * problems once, then any number of calls on sets of files that are closed under links (every file a link
 * touches is in the set), then one report. Findings of different calls never overlap: each is about a file
 * of its own call, and suppressions and waivers apply finding by finding.
 */
export class Checker {
  private readonly rules: readonly AnyRule[];
  private readonly ruleIds: ReadonlySet<string>;
  private readonly active: readonly AnyRule[];
  private readonly removed: ReadonlySet<string>;
  /** One copy of each message and help text for the whole report (src/util/text-pool.ts). */
  private readonly share = new TextPool().share;

  constructor(
    private readonly baseline: Baseline,
    private readonly kb: KnowledgeBase,
    private readonly options: GateOptions,
  ) {
    this.rules = options.rules ?? RULES;
    this.ruleIds = new Set(this.rules.map((rule) => rule.id));
    this.active = this.rules.filter((rule) => baseline.rules[rule.id] !== 'off');
    this.removed = new Set(options.removed ?? []);
  }

  /** The baseline's own problems (one pass with no repository files) and notes on expired waivers. */
  checkPolicy(): PartialReport {
    const { findings } = this.run((run) =>
      run([], [], { policy: this.options.policy, policyProblems: this.options.policyProblems }),
    );
    const unwaived = applyWaivers(findings, this.baseline, this.options);
    // No suppression comment can reach them: those live in repository files.
    return {
      findings: [...unwaived.kept, ...expiredWaiverNotes(this.baseline, this.options)],
      waived: unwaived.waived,
    };
  }

  /**
   * Findings about `files`, which must be closed under links. `links` are the files' links when the caller has
   * resolved them already (exactly as resolveLinks would).
   */
  checkFiles(
    files: readonly ParsedFile[],
    links: ReadonlyMap<ParsedFile, readonly Link[]> = resolveLinks(files),
  ): PartialReport {
    // Files that no include connects are independent: every rule looks at one file, unit or install at a time, so
    // the rules run batch by batch (src/analysis/batches.ts).
    const { findings, verdicts } = this.run((run) => {
      for (const group of fileBatches(files, links, this.options.batchFiles))
        run(group, buildUnits(group, links, this.kb), {}, uncertainFiles(group, links));
    });
    const unwaived = applyWaivers(findings, this.baseline, this.options);
    return {
      findings: applySuppressions(
        files,
        unwaived.kept,
        this.ruleIds,
        this.baseline.rules[SUPPRESSION_RULE_ID] === 'off',
      ),
      waived: unwaived.waived,
      ...(verdicts.length ? { verdicts } : {}),
    };
  }

  /** One report from the parts: sorted findings, each mistake once, and their counts. */
  report(filesChecked: number, parts: readonly PartialReport[]): Report {
    const findings = sameMistakeOnce(parts.flatMap((part) => part.findings).sort(compareFindings));
    const waived = parts.reduce((sum, part) => sum + part.waived.length, 0);
    const counts: Record<Severity, number> = { error: 0, warning: 0, notice: 0 };
    for (const finding of findings) counts[finding.severity]++;
    const fleet = fleetTable(this.baseline, parts);
    return { findings, filesChecked, counts, ...(waived ? { waived } : {}), ...(fleet ? { fleet } : {}) };
  }

  /**
   * One report from reports of disjoint sets of files (the CLI's worker threads, each over its own directories):
   * what one report over all of them gives, findings in report order and the pool tables' rows merged.
   */
  static merge(reports: readonly Report[]): Report {
    const findings = sameMistakeOnce(reports.flatMap((report) => report.findings).sort(compareFindings));
    const counts: Record<Severity, number> = { error: 0, warning: 0, notice: 0 };
    for (const finding of findings) counts[finding.severity]++;
    const waived = reports.reduce((sum, report) => sum + (report.waived ?? 0), 0);
    const tables = reports.flatMap((report) => (report.fleet ? [report.fleet] : []));
    const fleet: FleetTable | undefined = tables.length
      ? {
          pools: tables[0]!.pools,
          rows: tables
            .flatMap((table) => table.rows)
            .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line)),
        }
      : undefined;
    const filesChecked = reports.reduce((sum, report) => sum + report.filesChecked, 0);
    return { findings, filesChecked, counts, ...(waived ? { waived } : {}), ...(fleet ? { fleet } : {}) };
  }

  /** Run the active rules over what `visit` hands them; findings de-duplicated. */
  private run(
    visit: (
      run: (
        group: readonly ParsedFile[],
        units: readonly Unit[],
        policy: Pick<RuleContext, 'policy' | 'policyProblems'>,
        conditional?: ReadonlyMap<ParsedFile, Uncertain>,
      ) => void,
    ) => void,
  ): {
    findings: Finding[];
    verdicts: PoolVerdict[];
  } {
    const findings: Finding[] = [];
    const verdicts: PoolVerdict[] = [];
    const verdict = (entry: UnitVerdict): void => {
      verdicts.push({
        unit: entry.unit,
        path: entry.file.path,
        line: entry.file.source.position(entry.span.start).line,
        pool: entry.pool,
        tier: entry.tier,
        ...(entry.reason ? { reason: entry.reason } : {}),
      });
    };
    const seen = new Set<string>();
    // The lock files of the groups checked so far, by path: a finding that would edit one loses that edit.
    const locks = new Map<string, FileKind>();
    // The group's files whose findings are not certain, with why (uncertainFiles).
    let conditional: ReadonlyMap<ParsedFile, Uncertain> = NONE;
    const reporters = this.active.map((rule) => {
      const configured = this.baseline.rules[rule.id];
      const ceiling: Severity = configured && configured !== 'off' ? configured : rule.defaultSeverity;
      const url = docsUrl(rule.id); // one string per rule, not one per finding: a large run keeps thousands
      return (draft: Draft): void => {
        const finding = withoutLockEdits(toFinding(rule, draft, ceiling, url, this.share, conditional), locks);
        const key = `${finding.ruleId}\0${finding.location.path}\0${finding.location.start.offset}\0${finding.location.end.offset}\0${finding.message}`;
        if (seen.has(key)) return;
        seen.add(key);
        findings.push(finding);
      };
    });
    visit((group, units, policy, only) => {
      conditional = only ?? NONE;
      for (const file of group) if (isLockKind(file.kind)) locks.set(file.path, file.kind);
      this.active.forEach((rule, i) =>
        rule.check({
          files: group,
          units,
          kb: this.kb,
          baseline: this.baseline,
          ruleIds: this.ruleIds,
          removed: this.removed,
          ...(this.options.fileExists ? { fileExists: this.options.fileExists } : {}),
          policy: policy.policy,
          policyProblems: policy.policyProblems,
          report: reporters[i]!,
          verdict,
        }),
      );
    });
    return { findings, verdicts };
  }
}

/** Image references in a message (`nvidia/cuda:12.1.1-runtime-ubuntu22.04`): the part that names a stage's image. */
const IMAGE_IN_MESSAGE = /\b[a-z0-9][a-z0-9._-]*(?:\/[a-z0-9][a-z0-9._-]*)+:[\w][\w.-]*/g;

/**
 * One finding per mistake: the same rule at the same place, saying the same thing but for another image (a
 * requirements file installed in a build stage and copied into the runtime stage meets both stages' images) is
 * one finding, the other images its related locations. Kept first: the one with a fix. Sorted input, sorted output.
 */
function sameMistakeOnce(findings: readonly Finding[]): Finding[] {
  // Most reports have no two findings of one rule at one place: then there is nothing to merge, and no message needs
  // its images taken out. (The loops are the array's own, not this function's: V8 optimises a long loop of a first,
  // large call on the stack, and that code then left at its next line on every later call, once per fix verified.)
  const places = new Set(findings.map(placeOf));
  if (places.size === findings.length) return [...findings];
  const groups = groupBy(findings, mistakeOf);
  if (groups.size === findings.length) return [...findings];
  // Each finding of a group of several: the group's one finding (at the first's place), or null (dropped).
  const merged = new Map<Finding, Finding | null>();
  for (const group of groups.values()) {
    if (group.length === 1) continue;
    const one = oneOf(group);
    for (const finding of group) merged.set(finding, finding === group[0] ? one : null);
  }
  return findings.flatMap((finding) => {
    const replaced = merged.get(finding);
    return replaced === undefined ? [finding] : replaced === null ? [] : [replaced];
  });
}

/** The one finding of findings that say the same of other images: the first with a fix, the others related. */
function oneOf(group: readonly Finding[]): Finding {
  const primary = group.find((finding) => finding.fix) ?? group[0]!;
  const related = [...primary.related];
  const seen = new Set(related.map((entry) => `${entry.location.path}\0${entry.location.start.offset}`));
  for (const other of group) {
    if (other === primary) continue;
    for (const entry of other.related.length ? other.related : [{ location: other.location, message: other.message }]) {
      const at = `${entry.location.path}\0${entry.location.start.offset}`;
      if (seen.has(at)) continue;
      seen.add(at);
      related.push({ location: entry.location, message: `also: ${entry.message}` });
    }
  }
  return { ...primary, related };
}

/** Where a finding is and what it says, but not what it says it of. */
function placeOf({ ruleId, location, severity, messageId }: Finding): string {
  return `${ruleId}\0${location.path}\0${location.start.offset}\0${location.end.offset}\0${severity}\0${messageId}`;
}

/** A finding's place and its message with the images taken out: findings that say the same of other images. */
function mistakeOf(finding: Finding): string {
  return `${placeOf(finding)}\0${finding.message.replace(IMAGE_IN_MESSAGE, '\u0001')}`;
}

/** A waiver applies to a finding of its rule in its repository (and path, when given) until its expiry date. */
function applyWaivers(
  findings: readonly Finding[],
  baseline: Baseline,
  options: GateOptions,
): { kept: Finding[]; waived: Finding[] } {
  const { active } = repositoryWaivers(baseline, options);
  if (active.length === 0) return { kept: [...findings], waived: [] };
  const waived: Finding[] = [];
  const kept = findings.filter((finding) => {
    const waiver = active.find(
      (candidate) =>
        candidate.rule === finding.ruleId &&
        (!candidate.path ||
          finding.location.path === candidate.path ||
          (candidate.path.endsWith('/') && finding.location.path.startsWith(candidate.path))),
    );
    if (waiver) waived.push(finding);
    return !waiver;
  });
  return { kept, waived };
}

type Waiver = Baseline['waivers'][number];

/** The baseline's waivers for the repository being checked, split by whether they are still in force today. */
function repositoryWaivers(baseline: Baseline, options: GateOptions): { active: Waiver[]; expired: Waiver[] } {
  const repository = options.repository?.toLowerCase();
  if (baseline.waivers.length === 0 || !repository) return { active: [], expired: [] };
  const name = repository.split('/').pop();
  const today = options.today ?? '9999-12-31';
  const mine = baseline.waivers.filter(
    (waiver) => waiver.repo === '*' || waiver.repo.toLowerCase() === repository || waiver.repo.toLowerCase() === name,
  );
  return {
    active: mine.filter((waiver) => waiver.expires >= today),
    expired: mine.filter((waiver) => waiver.expires < today),
  };
}

/** A notice for every waiver of this repository that has expired: its findings are reported again. */
function expiredWaiverNotes(baseline: Baseline, options: GateOptions): Finding[] {
  return repositoryWaivers(baseline, options).expired.map((waiver): Finding => {
    const inPolicy = options.policy && (!waiver.file || waiver.file === options.policy.source.path);
    const file = inPolicy
      ? options.policy
      : options.policyFiles?.find((candidate) => candidate.source.path === waiver.file);
    const location = {
      path: waiver.file ?? options.policy?.source.path ?? 'baseline.yaml',
      start: { line: 1, column: 1, offset: 0 },
      end: { line: 1, column: 1, offset: 0 },
    };
    const at = file?.locate(['waivers', waiver.index]);
    const where = at ? file!.source.location(at.start, at.end) : location;
    return {
      ruleId: 'policy-error',
      severity: 'notice',
      messageId: 'waiverExpired',
      message: `the waiver of ${waiver.rule} for ${waiver.repo}${waiver.path ? `:${waiver.path}` : ''} expired on ${waiver.expires} (owner ${waiver.owner}); its findings are reported again`,
      help: `Renew it with a new expiry date and reason, or fix the findings. Reason given: ${waiver.reason}`,
      location: where,
      related: [],
      docsUrl: docsUrl('policy-error'),
    };
  });
}

/** Why a file's findings are not certain, and where, when not everywhere in it (an offset's test). */
interface Uncertain {
  readonly reason: string;
  readonly at?: (offset: number) => boolean;
}

const NONE: ReadonlyMap<ParsedFile, Uncertain> = new Map();
const NO_FILES: ReadonlySet<ParsedFile> = new Set();

/** What a finding in a file that only commands which may not run install says of that (conditionalFiles). */
const ONLY_IF = 'this file is installed only by commands in an if, case or loop of a RUN, which may not run';

/** Whether a place in a Dockerfile is in a command that runs on some paths of its RUN only. */
function mayNotRun(file: TextFile, offset: number): boolean {
  if (!('contexts' in file) || (file as ParsedFile).kind !== 'dockerfile') return false;
  return (file as ParsedFile).contexts.some(
    (context) =>
      context.mayNotRun && context.span.start <= offset && offset < Math.max(context.span.end, context.span.start + 1),
  );
}

/**
 * Where a place in a Dockerfile is in a command inside `if`s that the Dockerfile's own values make true: what a
 * finding there says of it (a build argument could change the condition).
 */
function heldIf(file: TextFile, offset: number): string | undefined {
  if (!('contexts' in file) || (file as ParsedFile).kind !== 'dockerfile') return undefined;
  let held = heldContexts.get(file as ParsedFile);
  if (!held) heldContexts.set(file as ParsedFile, (held = (file as ParsedFile).contexts.filter((c) => c.holds)));
  const context = held.find(
    (context) => context.span.start <= offset && offset < Math.max(context.span.end, context.span.start + 1),
  );
  return context && `in an if that the Dockerfile's own values make true: ${context.holds}`;
}

const heldContexts = new WeakMap<ParsedFile, readonly InstallContext[]>();

/**
 * The files of a group whose findings rest on what may not be installed, with why (and where, for a file where only
 * some places do): those only commands which may not run install (conditionalFiles), and the poetry.lock files that do
 * not say which group each package is in where the install leaves a group out (ungroupedLocks).
 */
function uncertainFiles(
  group: readonly ParsedFile[],
  links: ReadonlyMap<ParsedFile, readonly Link[]>,
): ReadonlyMap<ParsedFile, Uncertain> {
  const conditional = conditionalFiles(group, links);
  const ungrouped = ungroupedLocks(group, links);
  if (conditional.size === 0 && ungrouped.size === 0) return NONE;
  const uncertain = new Map<ParsedFile, Uncertain>();
  for (const file of conditional) uncertain.set(file, { reason: ONLY_IF });
  for (const [file, at] of ungrouped) if (!uncertain.has(file)) uncertain.set(file, { reason: UNGROUPED_LOCK, at });
  return uncertain;
}

/** What a finding in a poetry.lock that ungroupedLocks finds says of that. */
const UNGROUPED_LOCK =
  'this poetry.lock, written by Poetry before 2.0, does not say which dependency group each package is in, and this install leaves out a dependency group of pyproject.toml (an optional one, or one --without names)';

/**
 * The poetry.lock files of a group whose packages may belong to a group the install leaves out, with where: a lock of
 * Poetry 1.5 to 1.8 names no group for its packages (no `groups`, no `category`: Poetry 2 writes `groups = [...]`),
 * and the pyproject.toml beside it, as its installs select it (`poetry install` without `--with cuda`, or with
 * `--without cuda`), leaves out a group that needs a package the installed groups do not name. Poetry installs only
 * what the installed groups need, so a locked package that no installed group names (one only that group needs, or
 * what it pulls in) may not be installed: torch 2.0.1+cu118 locked for an optional `cuda` group is no mismatch of a
 * `poetry install` that leaves the group out. A package an installed group names is installed; what an installed
 * package pulls in cannot be told apart from what a left-out one does, so it is not certain either.
 */
function ungroupedLocks(
  group: readonly ParsedFile[],
  links: ReadonlyMap<ParsedFile, readonly Link[]>,
): ReadonlyMap<ParsedFile, (offset: number) => boolean> {
  let found: Map<ParsedFile, (offset: number) => boolean> | undefined;
  for (const lock of group) {
    if (lock.kind !== 'poetry-lock' || GROUPED.test(lock.source.text)) continue;
    const project = projectBeside(lock, group);
    if (!project) continue;
    const via: Link[] = [];
    for (const from of group) for (const link of links.get(from) ?? []) if (link.to === project) via.push(link);
    if (via.length === 0) continue;
    // The selection holds the groups Poetry installs by default (every group not marked optional, less those
    // `--without` names: selectedContexts); an extra's packages the lock already keeps out of the project. What is
    // left out is a group the install does not take: an optional one not asked for, or one `--without` names.
    const selected = new Set(selectedContexts(project, via).map((context) => context.id));
    const leftOut = new Set<number>();
    for (const context of project.contexts)
      if (!selected.has(context.id) && context.variant?.startsWith('group ')) leftOut.add(context.id);
    const named = new Set(project.packages.filter((pkg) => selected.has(pkg.context)).map((pkg) => pkg.name));
    // A group left out that needs a package the installed ones do not name.
    if (!project.packages.some((pkg) => leftOut.has(pkg.context) && !named.has(pkg.name))) continue;
    // Each [[package]] table, from its name to the next one's: the package a place in the lock belongs to.
    const starts = [...new Map(lock.packages.map((pkg) => [pkg.nameSpan.start, pkg.name])).entries()].sort(
      (a, b) => a[0] - b[0],
    );
    (found ??= new Map()).set(lock, (offset: number) => {
      let low = 0;
      let high = starts.length - 1;
      let at = -1;
      while (low <= high) {
        const middle = (low + high) >> 1;
        if (starts[middle]![0] <= offset) {
          at = middle;
          low = middle + 1;
        } else high = middle - 1;
      }
      return at < 0 || !named.has(starts[at]![1]);
    });
  }
  return found ?? NONE_LOCKS;
}

const NONE_LOCKS: ReadonlyMap<ParsedFile, (offset: number) => boolean> = new Map();

/** A lock entry's group list (Poetry 2) or category (Poetry before 1.5). */
const GROUPED = /^(?:groups|category)[ \t]*=/m;

/**
 * The requirements and conda files of a group that only commands which may not run install: every link to one comes
 * from a Dockerfile command inside an `if`, `case` or loop of its RUN (`then pip install -r req-cu118.txt`), or from a
 * file that is itself such a file. Such a file is checked only with the Dockerfile's stages (units.ts,
 * includedElsewhere), so every finding in it rests on an install that may not run.
 */
function conditionalFiles(
  group: readonly ParsedFile[],
  links: ReadonlyMap<ParsedFile, readonly Link[]>,
): ReadonlySet<ParsedFile> {
  const into = new Map<ParsedFile, Link[]>();
  let any = false;
  for (const from of group)
    for (const link of links.get(from) ?? []) {
      if (formatOf(link.to.kind).units !== 'file') continue;
      const list = into.get(link.to);
      if (list) list.push(link);
      else into.set(link.to, [link]);
      if (from.kind === 'dockerfile' && from.contexts[link.include.context]?.mayNotRun) any = true;
    }
  if (!any) return NO_FILES;
  // Surely installed: a file a Dockerfile command outside any block installs, or that a file installed on its own (no
  // link leads to it) includes; then whatever such a file includes, and so on (each file once: a long chain of
  // includes stays linear). The others are conditional.
  const sure = new Set<ParsedFile>();
  const queue: ParsedFile[] = [];
  for (const [file, list] of into)
    if (
      list.some((link) =>
        link.from.kind === 'dockerfile' ? !link.from.contexts[link.include.context]?.mayNotRun : !into.has(link.from),
      )
    ) {
      sure.add(file);
      queue.push(file);
    }
  for (let i = 0; i < queue.length; i++)
    for (const link of links.get(queue[i]!) ?? [])
      if (into.has(link.to) && !sure.has(link.to)) {
        sure.add(link.to);
        queue.push(link.to);
      }
  return new Set([...into.keys()].filter((file) => !sure.has(file)));
}

function toFinding(
  rule: AnyRule,
  draft: Draft,
  ceiling: Severity,
  url: string,
  share: (text: string) => string,
  conditional: ReadonlyMap<ParsedFile, Uncertain>,
): Finding {
  let severity: Severity =
    draft.severity && severityRank[draft.severity] < severityRank[ceiling] ? draft.severity : ceiling;
  if (draft.unverified) severity = 'notice';
  // What a command inside an `if`, `case` or loop installs is installed only on some paths of its RUN: a finding that
  // rests on it is not certain, so it is no error. (A policy's finding, or a parse problem, is about what is written.)
  const uncertain = conditional.get(draft.file as ParsedFile);
  const onlyIf = uncertain && (!uncertain.at || uncertain.at(draft.span.start)) ? uncertain.reason : undefined;
  const conditionalPlace =
    severity === 'error' &&
    rule.about !== 'written' &&
    (onlyIf !== undefined || mayNotRun(draft.file, draft.span.start));
  if (conditionalPlace) severity = 'warning';
  const template = rule.messages[draft.messageId] ?? draft.messageId;
  const written = formatMessage(template, draft.data);
  const held = rule.about === 'written' || conditionalPlace ? undefined : heldIf(draft.file, draft.span.start);
  const message = held && !written.includes(held) ? `${written} (${held})` : written;
  const help = helpText(rule.helps, draft);
  return {
    ruleId: rule.id,
    severity,
    messageId: draft.messageId,
    message: share(
      !conditionalPlace || message.includes(MAY_NOT_RUN) || (onlyIf !== undefined && message.includes(onlyIf))
        ? message
        : `${message} (${onlyIf ?? MAY_NOT_RUN})`,
    ),
    ...(help ? { help: share(help) } : {}),
    location: draft.file.source.location(draft.span.start, draft.span.end),
    related: (draft.related ?? []).map((related) => ({
      location: related.file.source.location(related.span.start, related.span.end),
      message: share(related.message),
    })),
    ...(draft.fix && draft.fix.edits.length > 0 ? { fix: draft.fix } : {}),
    ...(draft.suggestions && draft.suggestions.length > 0 ? { suggestions: draft.suggestions } : {}),
    docsUrl: url,
  };
}

function applySuppressions(
  files: readonly ParsedFile[],
  findings: readonly Finding[],
  ruleIds: ReadonlySet<string>,
  reportingOff: boolean,
): Finding[] {
  const byPath = new Map(files.map((file) => [file.path, file]));
  const used = new Set<Suppression>();
  const kept: Finding[] = [];
  const matches = matchSuppressions(byPath, findings, ruleIds);
  for (const [i, finding] of findings.entries()) {
    const suppression = matches[i];
    if (suppression && finding.ruleId !== 'parse-error') {
      used.add(suppression);
      continue;
    }
    kept.push(finding);
  }
  if (reportingOff) return kept;
  const unusedRule = RULES.find((rule) => rule.id === SUPPRESSION_RULE_ID);
  for (const file of files) {
    for (const suppression of file.suppressions) {
      if (
        used.has(suppression) ||
        suppression.reason === '' ||
        suppression.rules.length === 0 ||
        !suppression.rules.every((id) => ruleIds.has(id))
      )
        continue;
      kept.push({
        ruleId: SUPPRESSION_RULE_ID,
        severity: 'notice',
        messageId: 'unused',
        message: formatMessage(unusedRule?.messages['unused'] ?? 'suppression of {{rules}} matches no finding', {
          rules: suppression.rules.join(', '),
        }),
        location: file.source.location(suppression.span.start, suppression.span.end),
        related: [],
        docsUrl: docsUrl(SUPPRESSION_RULE_ID),
      });
    }
  }
  return kept;
}

/**
 * For each finding, the first of its file's suppressions (in file order) that covers its line, names its rule,
 * gives a reason and names only known rules. One sweep per file over findings and suppressions sorted by line,
 * instead of searching every suppression for every finding (quadratic in a file full of both).
 */
function matchSuppressions(
  byPath: ReadonlyMap<string, ParsedFile>,
  findings: readonly Finding[],
  ruleIds: ReadonlySet<string>,
): (Suppression | undefined)[] {
  const matches: (Suppression | undefined)[] = [];
  const perFile = groupBy(positions(findings.length), (i) => {
    const file = byPath.get(findings[i]!.location.path);
    return file && file.suppressions.length > 0 ? file : undefined;
  });
  for (const [file, indices] of perFile) {
    const all = file.suppressions;
    const starts = positions(all.length)
      .filter((i) => all[i]!.reason !== '' && all[i]!.rules.every((id) => ruleIds.has(id)))
      .sort((a, b) => all[a]!.fromLine - all[b]!.fromLine);
    indices.sort((a, b) => findings[a]!.location.start.line - findings[b]!.location.start.line);
    let next = 0;
    let active: number[] = []; // suppressions that began at or before the current line, in file order
    for (const i of indices) {
      const line = findings[i]!.location.start.line;
      let added = false;
      while (next < starts.length && all[starts[next]!]!.fromLine <= line) {
        active.push(starts[next++]!);
        added = true;
      }
      if (added) active.sort((a, b) => a - b);
      active = active.filter((s) => all[s]!.toLine >= line);
      const hit = active.find((s) => all[s]!.rules.includes(findings[i]!.ruleId));
      matches[i] = hit === undefined ? undefined : all[hit];
    }
  }
  return matches;
}

export function compareFindings(a: Finding, b: Finding): number {
  return (
    a.location.path.localeCompare(b.location.path) ||
    a.location.start.offset - b.location.start.offset ||
    a.ruleId.localeCompare(b.ruleId) ||
    a.message.localeCompare(b.message)
  );
}

export type { Baseline };

/**
 * Lock files are written by their tool, never by hand (uv.lock by `uv lock`, pixi.lock by pixi, …): a finding
 * whose fix or options would edit one (`locks`: path → kind) keeps its message and loses those edits, and a
 * finding on a lock or with such an edit says how the lock is changed instead.
 */
function withoutLockEdits(finding: Finding, locks: ReadonlyMap<string, FileKind>): Finding {
  if (locks.size === 0) return finding;
  const touched = (edits: readonly { readonly path: string }[]) =>
    edits.filter((edit) => locks.has(edit.path)).map((edit) => edit.path);
  const paths = [
    ...(locks.has(finding.location.path) ? [finding.location.path] : []),
    ...touched(finding.fix?.edits ?? []),
    ...(finding.suggestions ?? []).flatMap((suggestion) => touched(suggestion.edits)),
  ];
  if (paths.length === 0) return finding;
  const how = [...new Set(paths.map((path) => locks.get(path)!))].map((kind) => formatOf(kind).lock?.relock).join(' ');
  const { fix, suggestions, ...rest } = finding;
  const kept = suggestions?.filter((suggestion) => touched(suggestion.edits).length === 0) ?? [];
  return {
    ...rest,
    ...(fix && touched(fix.edits).length === 0 ? { fix } : {}),
    ...(kept.length ? { suggestions: kept } : {}),
    help: finding.help ? `${finding.help} ${how}` : how,
  };
}

/**
 * The pool table of a report: a row per unit some rule gave a verdict on, a cell per pool (the worst verdict any
 * rule gave there, with its reason; a pool no rule named runs the unit). Only for a fleet of pools.
 */
function fleetTable(baseline: Baseline, parts: readonly PartialReport[]): FleetTable | undefined {
  if (baseline.pools.length === 0) return undefined;
  const rows = new Map<string, { unit: string; path: string; line: number; cells: Map<string, PoolCell> }>();
  for (const part of parts)
    for (const entry of part.verdicts ?? []) {
      const key = `${entry.path}\0${entry.unit}`;
      let row = rows.get(key);
      if (!row) rows.set(key, (row = { unit: entry.unit, path: entry.path, line: entry.line, cells: new Map() }));
      row.line = Math.min(row.line, entry.line);
      const cell = row.cells.get(entry.pool);
      if (!cell || TIER_RANK[entry.tier] > TIER_RANK[cell.tier])
        row.cells.set(entry.pool, { tier: entry.tier, ...(entry.reason ? { reason: entry.reason } : {}) });
    }
  if (rows.size === 0) return undefined;
  return {
    pools: baseline.pools.map((pool) => ({ name: pool.name, driver: pool.driver })),
    rows: [...rows.values()]
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line))
      .map((row) => ({
        unit: row.unit,
        path: row.path,
        line: row.line,
        cells: baseline.pools.map((pool) => row.cells.get(pool.name) ?? { tier: 'runs' as const }),
      })),
  };
}
