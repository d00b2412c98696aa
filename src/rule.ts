import type { Unit } from './analysis/units.js';
import { buildStageCopy, type FleetScope } from './analysis/runs.js';
import type { Baseline } from './baseline/schema.js';
import type { ParsedFile } from './parsers/facts.js';
import type { Fix, PoolTier, Severity } from './finding.js';
import type { KnowledgeBase } from './knowledge/index.js';
import type { SourceText, Span } from './parsers/source.js';
import type { LoadedBaseline } from './baseline/load.js';

export const DOCS_BASE = 'https://github.com/cuda-gatekeeper/cuda-gatekeeper/blob/main/rules';

export function docsUrl(ruleId: string): string {
  return `${DOCS_BASE}/${ruleId}/README.md`;
}

/**
 * A rule's README without its Examples section (generated from the fixtures by `npm run docs`, between the
 * `examples:start` and `examples:end` comments): what SARIF's rule help carries and the CLI package ships, with a link
 * to the examples instead. scripts/pack-cli.mjs strips the same section by the same markers.
 */
export function withoutExamples(readme: string, ruleId: string): string {
  return readme.replace(
    /<!-- examples:start[^>]*-->[\s\S]*?<!-- examples:end -->/,
    `The examples (each fixture of the rule with its findings) are in [the rule's README](${docsUrl(ruleId)}#examples).`,
  );
}

/** Anything with a path and text positions: a parsed file, or the baseline file itself. */
export interface TextFile {
  readonly path: string;
  readonly source: SourceText;
}

export interface RelatedDraft {
  readonly file: TextFile;
  readonly span: Span;
  readonly message: string;
}

/** What a rule reports; the gate turns it into a Finding (severity, suppressions, positions, docs URL). */
export interface Draft<M extends string = string> {
  readonly messageId: M;
  readonly data?: Readonly<Record<string, string | number>>;
  readonly file: TextFile;
  readonly span: Span;
  /**
   * Only for a help no template of the rule's `helps` can say; otherwise the help is `helps[messageId]` filled from
   * `data`.
   */
  readonly help?: string;
  readonly related?: readonly RelatedDraft[];
  readonly fix?: Fix;
  readonly suggestions?: readonly Fix[];
  /** Lower than the rule's severity for this finding (e.g. a minor-version mismatch). */
  readonly severity?: Severity;
  /** The finding rests on a fact the knowledge base marks unverified: it is capped at notice. */
  readonly unverified?: boolean;
}

export interface RuleContext<M extends string = string> {
  readonly files: readonly ParsedFile[];
  readonly units: readonly Unit[];
  readonly kb: KnowledgeBase;
  readonly baseline: Baseline;
  /** The baseline as loaded from YAML, when there is a file (for policy-error). */
  readonly policy?: LoadedBaseline;
  /** Policy problems found while layering baselines (locked keys a repository tried to weaken). */
  readonly policyProblems?: readonly { readonly file: TextFile; readonly span: Span; readonly message: string }[];
  /** Ids of every rule in this run (to validate suppressions and baseline rule keys). */
  readonly ruleIds: ReadonlySet<string>;
  /** Paths the change being checked deletes (empty when it is not known). */
  readonly removed: ReadonlySet<string>;
  /** Whether the repository has a file at a path; absent, or undefined for a path, where that is not known. */
  readonly fileExists?: (path: string) => boolean | undefined;
  report(draft: Draft<M>): void;
  /** A unit's verdict on one pool of the fleet, for the report's pool table (see Report.fleet). */
  verdict(verdict: UnitVerdict): void;
}

/** A rule's word on a unit and a pool: the unit, where it is declared, the pool and the tier, with the reason. */
export interface UnitVerdict {
  readonly unit: string;
  readonly file: TextFile;
  readonly span: Span;
  readonly pool: string;
  readonly tier: PoolTier;
  readonly reason?: string;
}

export interface RuleDefinition<M extends string = string> {
  readonly id: string;
  readonly description: string;
  readonly defaultSeverity: Severity;
  readonly fix: 'none' | 'safe' | 'unsafe';
  /**
   * What its findings are about: what a file says (a policy, a parse problem), true whether or not the command that
   * says it runs; or, by default, what gets installed, which a command inside an `if`, `case` or loop of a RUN may
   * not do (its findings there are warnings, not errors: src/gate.ts).
   */
  readonly about?: 'written' | 'installed';
  readonly messages: Readonly<Record<M, string>>;
  /**
   * The why and the how to fix of each message, with the same `{{placeholders}}` filled from the draft's `data`
   * (as typescript-eslint keeps every string in `meta.messages` and `create` only picks an id and data). A draft's
   * own `help` overrides it.
   */
  readonly helps?: Readonly<Partial<Record<M, string>>>;
  check(context: RuleContext<M>): void;
}

export type AnyRule = RuleDefinition<string>;

/**
 * A rule's report function, for the helpers a rule splits its check into: `Reporter<MessageId>` with the rule's own
 * message ids (`keyof typeof MESSAGES`), so a misspelt id does not compile. Declared as a method so that a reporter
 * of one rule's ids can be passed where a reporter of any id is asked for (a wrapper that only forwards drafts).
 */
export type Reporter<M extends string = string> = { report(draft: Draft<M>): void }['report'];

/**
 * Declare a rule. Message ids are checked against `messages` inside the rule; the registry holds rules
 * with their message-id type erased (a rule's `check` only ever receives its own context).
 */
export function defineRule<M extends string>(rule: RuleDefinition<M>): AnyRule {
  return rule as unknown as AnyRule;
}

/** A draft's help: its own, or its message's template in `helps` filled from its data. */
export function helpText(
  helps: Readonly<Partial<Record<string, string>>> | undefined,
  draft: Draft,
): string | undefined {
  if (draft.help !== undefined) return draft.help;
  const template = helps?.[draft.messageId];
  return template === undefined ? undefined : formatMessage(template, draft.data);
}

/** `{{name}}` placeholders filled from data; unknown placeholders are left visible rather than dropped. */
export function formatMessage(template: string, data: Readonly<Record<string, string | number>> = {}): string {
  return template.replace(/\{\{\s*(\w+)\s*\}\}/g, (whole, key: string) => (key in data ? String(data[key]) : whole));
}

/**
 * A reporter for a unit of a fleet rule that the checked files say is not what runs on the fleet
 * (src/analysis/runs.ts): its findings are notices with the reason (a Dockerfile run only without GPUs, pip-compile's
 * input); for a stage only built to be copied from, an error is a warning, since what runs is the stage that copies
 * and it needs what this one needs only where what it copies is CUDA code (nvcc links the CUDA runtime into what it
 * builds by default).
 */
export function heldLess<M extends string>(
  unit: Unit,
  scope: FleetScope,
  helps: Readonly<Partial<Record<string, string>>>,
  report: Reporter<M>,
): Reporter<M> {
  const notRun = scope.notRun(unit);
  // What does not run on the fleet gets no fix for the fleet's GPUs (a Jetson build's arch list keeps its own).
  if (notRun)
    return (draft) => {
      const rest: Draft<M> = { ...draft };
      delete (rest as { fix?: unknown }).fix;
      report({ ...rest, severity: 'notice', help: `${helpText(helps, draft) ?? ''} ${notRun}` });
    };
  const copy = buildStageCopy(unit);
  if (!copy) return report;
  return (draft) =>
    report({
      ...draft,
      severity: draft.severity === undefined || draft.severity === 'error' ? 'warning' : draft.severity,
      help: `${helpText(helps, draft) ?? ''} This stage only builds what another stage copies (COPY --from=${copy.fromStage ?? copy.fromIndex}): that stage is what runs, and it needs what this one needs only where what it copies is CUDA code (nvcc links the CUDA runtime into what it builds by default). Source: https://docs.docker.com/build/building/multi-stage/`,
      related: [
        ...(draft.related ?? []),
        { file: unit.root, span: copy.span, message: 'the stage that runs copies from this one here' },
      ],
    });
}
