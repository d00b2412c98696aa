/**
 * A file's text written as it reads: `codeBlock` drops the first line break and the indentation common to every
 * line, and keeps one final line break (as Renovate's tests write their inputs).
 *
 *   codeBlock`
 *     FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
 *     RUN pip install torch==2.6.0
 *   `  // 'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nRUN pip install torch==2.6.0\n'
 */
export function codeBlock(strings: TemplateStringsArray, ...values: unknown[]): string {
  const raw = strings.reduce((text, piece, i) => text + piece + (i < values.length ? String(values[i]) : ''), '');
  const lines = raw
    .replace(/^\n/, '')
    .replace(/\n[ \t]*$/, '')
    .split('\n');
  const indent = Math.min(...lines.filter((line) => line.trim() !== '').map((line) => /^[ \t]*/.exec(line)![0].length));
  return `${lines.map((line) => line.slice(Number.isFinite(indent) ? indent : 0)).join('\n')}\n`;
}
