/**
 * One pasted file checked as on a pull request (pure): the self-service page and its JSON API run it, on the
 * snippet worker thread when the App serves them (src/sandbox/gate-pool.ts), inline otherwise.
 */
import { loadBaseline, type LoadedBaseline } from '../baseline/load.js';
import { EMPTY_BASELINE } from '../baseline/schema.js';
import type { Report } from '../finding.js';
import { gate, regateFiles } from '../gate.js';
import { defaultKnowledgeBase } from '../knowledge/index.js';
import { FILE_KIND_NAMES, formatOf, isFileKind } from '../parsers/formats.js';
import { parseFile } from '../parsers/index.js';
import { bundledBaseline } from '../util/package-root.js';
import { verifyFixes } from '../verify.js';
import { RULE_IDS } from '../../rules/ids.js';

/** A snippet is one file: 64 KiB of text is plenty. */
export const MAX_SNIPPET = 64 * 1024;

export interface SnippetRequest {
  readonly kind: string;
  readonly text: string;
  /** `bundled` (default), `none`, or a baseline's YAML. */
  readonly baseline?: string;
}

export type SnippetResult =
  | { readonly report: Report; readonly policyProblems: readonly string[] }
  | { readonly error: string };

/** Check one pasted file; returns the report or a user-facing error. */
export function checkSnippet(request: SnippetRequest): SnippetResult {
  const { kind, text, baseline: choice } = request;
  if (!isFileKind(kind)) return { error: `kind must be one of ${FILE_KIND_NAMES.join(', ')}, not "${kind}"` };
  if (Buffer.byteLength(text) > MAX_SNIPPET)
    return { error: `the file is larger than ${MAX_SNIPPET / 1024} KiB; check larger files with the command line` };
  let policy: LoadedBaseline | undefined;
  if (!choice || choice === 'bundled') policy = loadBaseline('baseline.yaml', bundledBaseline().text, RULE_IDS);
  else if (choice !== 'none') policy = loadBaseline('baseline.yaml', choice, RULE_IDS);
  const file = parseFile(formatOf(kind).fileName, text, kind);
  const baseline = policy?.baseline ?? EMPTY_BASELINE;
  const options = policy ? { policy } : {};
  // Each safe fix is checked by gating its result, as on a pull request (verify.ts).
  const report = verifyFixes(
    gate([file], baseline, defaultKnowledgeBase(), options),
    [file],
    regateFiles(baseline, defaultKnowledgeBase(), options),
  );
  const where = (offset: number) => policy!.source.position(offset);
  return {
    report,
    policyProblems:
      policy?.problems.map(
        (problem) => `${where(problem.span.start).line}:${where(problem.span.start).column} ${problem.message}`,
      ) ?? [],
  };
}
