import { isNode, parseDocument, visit, type Document } from 'yaml';
import type { Span } from '../parsers/source.js';
import { SourceText } from '../parsers/source.js';
import { BaselineFile, EMPTY_BASELINE, resolveBaseline, type Baseline } from './schema.js';

export interface PolicyProblem {
  readonly message: string;
  readonly span: Span;
}

export interface LoadedBaseline {
  readonly baseline: Baseline;
  /** The file as written (for `_extends` merging and locked-key checks). */
  readonly file?: BaselineFile;
  readonly source: SourceText;
  readonly problems: readonly PolicyProblem[];
  /** The span of a key path in the file (e.g. ['gpus', 1]), for findings about values. */
  locate(path: readonly (string | number)[]): Span;
}

const MAX_BASELINE_BYTES = 256 * 1024;

/**
 * Read a baseline from YAML text. Never throws: syntax and schema errors come back as problems with the
 * position of the offending key or value, and the baseline falls back to the empty one.
 */
export function loadBaseline(path: string, text: string, ruleIds?: ReadonlySet<string>): LoadedBaseline {
  const source = new SourceText(path, text);
  const nowhere = (): Span => ({ start: 0, end: 0 });
  if (text.length > MAX_BASELINE_BYTES)
    return {
      baseline: EMPTY_BASELINE,
      source,
      locate: nowhere,
      problems: [{ message: `the baseline is larger than ${MAX_BASELINE_BYTES / 1024} KiB`, span: nowhere() }],
    };
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true, strict: true });
  const locate = (path: readonly (string | number)[]): Span => spanOf(doc, path);
  const fail = (problems: PolicyProblem[]): LoadedBaseline => ({ baseline: EMPTY_BASELINE, source, problems, locate });
  if (doc.errors.length > 0)
    return fail(
      doc.errors.map((error) => ({
        message: `YAML: ${error.message.split('\n')[0]}`,
        span: { start: Math.min(error.pos[0], text.length), end: Math.min(error.pos[1], text.length) },
      })),
    );
  // `12.10` unquoted is the number 12.1 to YAML: a version written that way would silently mean another one.
  const misread = numbersReadOtherwise(doc, text);
  if (misread.length > 0) return fail(misread);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 50 }) ?? {};
  } catch (error) {
    return fail([{ message: `YAML: ${(error as Error).message}`, span: { start: 0, end: 0 } }]);
  }
  const parsed = BaselineFile.safeParse(value);
  if (!parsed.success) {
    return fail(
      parsed.error.issues.map((issue) => ({
        message: describeIssue(
          issue,
          valueAt(value, issue.path as (string | number)[]) === undefined && issue.code !== 'unrecognized_keys',
        ),
        span: spanOf(
          doc,
          issue.path as (string | number)[],
          issue.code === 'unrecognized_keys' ? (issue as { keys?: string[] }).keys?.[0] : undefined,
        ),
      })),
    );
  }
  const problems: PolicyProblem[] = [];
  if (ruleIds) {
    for (const id of Object.keys(parsed.data.rules ?? {})) {
      if (!ruleIds.has(id))
        problems.push({
          message: `unknown rule "${id}" in rules (known: ${[...ruleIds].sort().join(', ')})`,
          span: spanOf(doc, ['rules'], id),
        });
    }
  }
  return { baseline: resolveBaseline(parsed.data), file: parsed.data, source, problems, locate };
}

/**
 * Plain scalars that YAML reads as a number spelled differently from the text (`12.10` → 12.1, `550.100` → 550.1,
 * `1e3`): every version-like value in a baseline is text, so each is a positioned problem asking for quotes.
 */
function numbersReadOtherwise(doc: Document, text: string): PolicyProblem[] {
  const problems: PolicyProblem[] = [];
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value !== 'number' || node.type !== 'PLAIN' || !node.range) return;
      const written = text.slice(node.range[0], node.range[1]).trim();
      if (written === String(node.value)) return;
      problems.push({
        message: `${written} is read by YAML as the number ${String(node.value)}; write "${written}" in quotes to mean ${written}`,
        span: { start: node.range[0], end: node.range[0] + written.length },
      });
    },
  });
  return problems;
}

function valueAt(root: unknown, path: readonly (string | number)[]): unknown {
  let current = root;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

function describeIssue(
  issue: { path: PropertyKey[]; message: string; code: string; keys?: string[] },
  missing = false,
): string {
  const where = issue.path.length > 0 ? issue.path.map(String).join('.') : 'the baseline';
  if (missing && issue.path.length > 0) return `${where} is required`;
  if (issue.code === 'unrecognized_keys')
    return `unknown key${issue.keys && issue.keys.length > 1 ? 's' : ''} ${issue.keys?.map((key) => `"${key}"`).join(', ')} in ${where}`;
  return `${where}: ${issue.message}`;
}

/** The span of the node at `path` (or of key `key` inside it), falling back to the nearest existing parent. */
function spanOf(doc: Document, path: readonly (string | number)[], key?: string): Span {
  for (let length = path.length; length >= 0; length--) {
    const node = length === 0 ? doc.contents : doc.getIn(path.slice(0, length), true);
    if (!isNode(node)) continue;
    if (key !== undefined && length === path.length && 'items' in node) {
      const pair = (node.items as { key: unknown }[]).find(
        (item) => isNode(item.key) && (item.key as { value?: unknown }).value === key,
      );
      if (pair && isNode(pair.key) && pair.key.range) return { start: pair.key.range[0], end: pair.key.range[1] };
    }
    if (node.range) return { start: node.range[0], end: node.range[1] };
  }
  return { start: 0, end: 0 };
}
