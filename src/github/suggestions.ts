/**
 * Safe single-line fixes on lines the pull request touches become GitHub review suggestions. Pure: the
 * caller supplies the file texts and the diff's added lines, and the suggestions already posted.
 */
import { createHash } from 'node:crypto';
import type { Finding, Report } from '../finding.js';

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

export function reviewSuggestions(report: Report, texts: ReadonlyMap<string, string>, added: ReadonlyMap<string, ReadonlySet<number>>, alreadyPosted: ReadonlySet<string>): ReviewComment[] {
  const comments: ReviewComment[] = [];
  const seen = new Set<string>();
  for (const finding of report.findings) {
    const comment = suggestionFor(finding, texts, added);
    if (!comment) continue;
    const key = /<!-- cuda-gatekeeper:suggestion:([0-9a-f]{16}) -->/.exec(comment.body)![1]!;
    if (alreadyPosted.has(key) || seen.has(key)) continue;
    seen.add(key);
    comments.push(comment);
  }
  return comments;
}

function suggestionFor(finding: Finding, texts: ReadonlyMap<string, string>, added: ReadonlyMap<string, ReadonlySet<number>>): ReviewComment | undefined {
  const fix = finding.fix;
  if (fix?.safety !== 'safe' || fix.edits.length === 0) return undefined;
  const path = fix.edits[0]!.path;
  if (fix.edits.some((edit) => edit.path !== path)) return undefined;
  const text = texts.get(path);
  if (text === undefined) return undefined;
  const start = text.lastIndexOf('\n', Math.min(...fix.edits.map((edit) => edit.range[0])) - 1) + 1;
  const endIndex = text.indexOf('\n', Math.max(...fix.edits.map((edit) => edit.range[1])));
  const end = endIndex < 0 ? text.length : endIndex;
  const original = text.slice(start, end);
  if (original.includes('\n')) return undefined; // one line only: a suggestion replaces whole lines
  const line = text.slice(0, start).split('\n').length;
  if (!added.get(path)?.has(line)) return undefined;
  let replacement = original;
  for (const edit of [...fix.edits].sort((a, b) => b.range[0] - a.range[0])) replacement = replacement.slice(0, edit.range[0] - start) + edit.text + replacement.slice(edit.range[1] - start);
  if (replacement.includes('\n') || replacement === original) return undefined;
  const key = suggestionKey(path, line, replacement);
  const body = `**${finding.message}** ([${finding.ruleId}](${finding.docsUrl}))\n\n${fix.title}:\n\n\`\`\`suggestion\n${replacement.replace(/\r$/, '')}\n\`\`\`\n<!-- ${SUGGESTION_MARKER}:${key} -->`;
  return { path, line, side: 'RIGHT', body };
}
