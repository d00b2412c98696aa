import type { Suppression } from './facts.js';
import type { SourceText } from './source.js';

const DIRECTIVE = /#\s*cuda-gatekeeper:\s*ignore(?:\[([^\]]*)\])?[ \t]*(.*)$/;

/**
 * Find `# cuda-gatekeeper: ignore[rule-id] reason` comments. A comment alone on its line silences the next
 * statement; a trailing comment silences its own line. `statementEnd` widens a line to its whole statement.
 */
export function findSuppressions(
  source: SourceText,
  statementEnd: (line: number) => number = (line) => line,
): Suppression[] {
  const found: Suppression[] = [];
  const text = source.text;
  if (!text.includes('cuda-gatekeeper:')) return found;
  // The statement the last own-line comment pointed at: every line before it is blank or a comment, so a later
  // comment above it points at it too (a block of directive comments is read once, not once per comment).
  let lastTarget = 0;
  for (let line = 1; line <= source.lineCount; line++) {
    const start = source.lineStart(line);
    const end = source.lineEnd(line);
    const lineText = text.slice(start, end);
    const match = DIRECTIVE.exec(lineText);
    if (!match) continue;
    const hashAt = start + match.index;
    const ownLine = lineText.slice(0, match.index).trim() === '';
    let target = line;
    if (ownLine) {
      target = Math.max(line + 1, lastTarget);
      while (
        target <= source.lineCount &&
        isBlankOrComment(text.slice(source.lineStart(target), source.lineEnd(target)))
      )
        target++;
      lastTarget = target;
    }
    const rules = (match[1] ?? '')
      .split(',')
      .map((rule) => rule.trim())
      .filter(Boolean);
    found.push({
      span: { start: hashAt, end },
      fromLine: target,
      toLine: statementEnd(target),
      rules,
      reason: (match[2] ?? '').trim(),
    });
  }
  return found;
}

function isBlankOrComment(line: string): boolean {
  const trimmed = line.trim();
  return trimmed === '' || trimmed.startsWith('#');
}
