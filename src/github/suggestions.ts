/**
 * Safe fixes on lines the pull request touches become GitHub review suggestions: one suggestion per line, with
 * every safe edit of that line in it. GitHub applies "only one suggestion per line … in a batch" (its pull request
 * page), so two suggestions on one line would each fix half of it. A fix whose edits span lines, or touch a line
 * the pull request did not change, is left to the check run's diff and Apply fixes. Pure: the caller supplies the
 * file texts, the diff's added lines and the suggestions already posted.
 */
import { createHash } from 'node:crypto';
import type { Finding, Report, TextEdit } from '../finding.js';

export const SUGGESTION_MARKER = 'cuda-gatekeeper:suggestion';

export interface ReviewComment {
  readonly path: string;
  readonly line: number;
  readonly side: 'RIGHT';
  readonly body: string;
}

/** Line numbers on the new side of a unified diff (`patch` from pulls.listFiles) that the PR adds or changes. */
export function addedLines(patch: string | undefined): Set<number> {
  const lines = new Set<number>();
  if (!patch) return lines;
  let next = 0;
  for (const line of patch.split('\n')) {
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (hunk) {
      next = Number(hunk[1]);
      continue;
    }
    if (line.startsWith('+')) lines.add(next++);
    else if (line.startsWith('-') || line.startsWith('\\')) continue;
    else next++;
  }
  return lines;
}

export function suggestionKey(path: string, line: number, replacement: string): string {
  return createHash('sha256').update(`${path}\0${line}\0${replacement}`).digest('hex').slice(0, 16);
}

interface LineFix {
  readonly path: string;
  readonly line: number;
  /** Offsets of the line in its file (without the newline). */
  readonly start: number;
  readonly end: number;
  readonly edits: TextEdit[];
  readonly findings: Finding[];
}

/** The line of `text` holding the offsets [from, to], or undefined when they span lines. */
function lineAt(text: string, from: number, to: number): { start: number; end: number; line: number } | undefined {
  const start = text.lastIndexOf('\n', from - 1) + 1;
  const newline = text.indexOf('\n', to);
  const end = newline < 0 ? text.length : newline;
  if (text.slice(start, end).includes('\n')) return undefined;
  let line = 1;
  for (let at = text.indexOf('\n'); at >= 0 && at < start; at = text.indexOf('\n', at + 1)) line++;
  return { start, end, line };
}

/** Where the first of some edits starts and the last ends (a loop: spread into Math.min, a huge fix overflows). */
function extent(edits: readonly TextEdit[]): [number, number] {
  let from = Number.POSITIVE_INFINITY;
  let to = Number.NEGATIVE_INFINITY;
  for (const edit of edits) {
    from = Math.min(from, edit.range[0]);
    to = Math.max(to, edit.range[1]);
  }
  return [from, to];
}

const overlaps = (a: TextEdit, b: TextEdit) => a.range[0] < b.range[1] && b.range[0] < a.range[1];
const same = (a: TextEdit, b: TextEdit) => a.range[0] === b.range[0] && a.range[1] === b.range[1] && a.text === b.text;

export function reviewSuggestions(
  report: Report,
  texts: ReadonlyMap<string, string>,
  added: ReadonlyMap<string, ReadonlySet<number>>,
  alreadyPosted: ReadonlySet<string>,
): ReviewComment[] {
  const lines = new Map<string, LineFix>();
  // The line of each list of edits, found once: findings share lists (a unit's fix, offered by each of its claims).
  const lineOf = new Map<readonly TextEdit[], ReturnType<typeof lineAt>>();
  for (const finding of report.findings) {
    const fix = finding.fix;
    if (fix?.safety !== 'safe' || fix.edits.length === 0) continue;
    const path = fix.edits[0]!.path;
    const text = texts.get(path);
    if (text === undefined) continue;
    let at = lineOf.get(fix.edits);
    if (at === undefined && !lineOf.has(fix.edits)) {
      at = fix.edits.every((edit) => edit.path === path) ? lineAt(text, ...extent(fix.edits)) : undefined;
      lineOf.set(fix.edits, at);
    }
    if (!at || !added.get(path)?.has(at.line)) continue;
    const key = `${path}\0${at.line}`;
    const entry = lines.get(key) ?? { path, ...at, edits: [], findings: [] };
    // Edits of different fixes that clash on the line cannot go in one suggestion: the first fix keeps the line.
    const fresh = fix.edits.filter((edit) => !entry.edits.some((other) => same(edit, other)));
    if (fresh.some((edit) => entry.edits.some((other) => overlaps(edit, other)))) continue;
    entry.edits.push(...fresh);
    entry.findings.push(finding);
    lines.set(key, entry);
  }
  const comments: ReviewComment[] = [];
  for (const entry of lines.values()) {
    const text = texts.get(entry.path)!;
    const original = text.slice(entry.start, entry.end);
    let replacement = original;
    for (const edit of [...entry.edits].sort((a, b) => b.range[0] - a.range[0]))
      replacement =
        replacement.slice(0, edit.range[0] - entry.start) + edit.text + replacement.slice(edit.range[1] - entry.start);
    if (replacement.includes('\n') || replacement === original) continue;
    const key = suggestionKey(entry.path, entry.line, replacement);
    if (alreadyPosted.has(key)) continue;
    const reasons = entry.findings
      .map((finding) => `**${finding.message}** ([${finding.ruleId}](${finding.docsUrl}))\n\n${finding.fix!.title}.`)
      .join('\n\n');
    const body = `${reasons}\n\n\`\`\`suggestion\n${replacement.replace(/\r$/, '')}\n\`\`\`\n<!-- ${SUGGESTION_MARKER}:${key} -->`;
    comments.push({ path: entry.path, line: entry.line, side: 'RIGHT', body });
  }
  return comments;
}
