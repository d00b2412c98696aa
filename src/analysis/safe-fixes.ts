/**
 * The safe fixes of a report applied to the files they touch: one list of new contents (pure). The CLI's --fix
 * writes them, the App commits them (Apply fixes, /cuda-check fix, migration pull requests).
 */
import type { Report, TextEdit } from '../finding.js';
import { applyEdits } from './edits.js';

export interface FixCommit {
  readonly files: readonly { readonly path: string; readonly contents: string }[];
  readonly titles: readonly string[];
}

/** The new contents of every file the safe fixes touch; a file the fixes leave as it was is not listed. */
export function safeFixContents(report: Report, texts: ReadonlyMap<string, string>): FixCommit {
  const byPath = new Map<string, TextEdit[]>();
  const titles: string[] = [];
  // Each list of edits once: findings share lists (a unit's fix is offered by each of its claims), and 600 pins
  // sharing one 600-edit fix made 360,000 edits, each copied into a growing list (`--fix` ran for minutes).
  const lists = new Set<readonly TextEdit[]>();
  for (const finding of report.findings) {
    if (finding.fix?.safety !== 'safe') continue;
    titles.push(`${finding.fix.title} (${finding.ruleId}, ${finding.location.path}:${finding.location.start.line})`);
    lists.add(finding.fix.edits);
  }
  for (const edits of lists)
    for (const edit of edits) {
      const own = byPath.get(edit.path);
      if (own) own.push(edit);
      else byPath.set(edit.path, [edit]);
    }
  const files = [...byPath].flatMap(([path, edits]) => {
    const text = texts.get(path);
    if (text === undefined) return [];
    const contents = applyEdits(text, dedupe(edits));
    return contents === text ? [] : [{ path, contents }];
  });
  return { files, titles };
}

function dedupe(edits: readonly TextEdit[]): TextEdit[] {
  const seen = new Set<string>();
  return edits.filter((edit) => {
    const key = `${edit.range[0]}:${edit.range[1]}:${edit.text}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
