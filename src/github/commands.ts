/**
 * `/cuda-check` comment commands, parsed from a comment body: the first line of a paragraph that starts with the
 * command. The body is read as Markdown (GitHub renders comments as GitHub Flavored Markdown, a superset of
 * CommonMark), so a command inside a code block, inline code, a quote, a list or an HTML comment is text someone
 * wrote about the command, not a command.
 */
import { Lexer, type Token } from 'marked';

export type Command =
  | { readonly kind: 'rerun' }
  | { readonly kind: 'explain'; readonly ruleId: string }
  | { readonly kind: 'baseline' }
  | { readonly kind: 'fix' }
  | { readonly kind: 'plan'; readonly cuda: string }
  | { readonly kind: 'upgrade'; readonly cuda: string }
  | { readonly kind: 'help'; readonly problem?: string };

const COMMAND = /^\/cuda-check\b/;

/** A paragraph's text with its inline code and inline HTML blanked out (a command there is quoted, not given). */
function prose(tokens: readonly Token[]): string {
  return tokens.map((token) => (token.type === 'codespan' || token.type === 'html' ? ' ' : token.raw)).join('');
}

/** The first line of a top-level paragraph that starts with `/cuda-check`. */
function commandLine(body: string): string | undefined {
  if (!body.includes('/cuda-check')) return undefined;
  for (const token of new Lexer({ gfm: true }).lex(body.replace(/\r\n?/g, '\n'))) {
    if (token.type !== 'paragraph') continue;
    const line = prose(token.tokens ?? [])
      .split('\n')
      .map((text) => text.trim())
      .find((text) => COMMAND.test(text));
    if (line) return line;
  }
  return undefined;
}

export function parseCommand(body: string): Command | undefined {
  const line = commandLine(body);
  if (!line) return undefined;
  const [, sub, ...args] = line.split(/\s+/);
  switch (sub?.toLowerCase()) {
    case undefined:
    case '':
    case 'run':
    case 'recheck':
      return { kind: 'rerun' };
    case 'explain':
      return args[0]
        ? { kind: 'explain', ruleId: args[0].toLowerCase() }
        : { kind: 'help', problem: '`explain` needs a rule id, e.g. `/cuda-check explain cuda-mismatch`' };
    case 'baseline':
      return { kind: 'baseline' };
    case 'fix':
      return { kind: 'fix' };
    case 'plan':
      return args[0] && /^\d{1,2}\.\d{1,2}$/.test(args[0])
        ? { kind: 'plan', cuda: args[0] }
        : { kind: 'help', problem: '`plan` needs a CUDA version, e.g. `/cuda-check plan 12.8`' };
    case 'upgrade':
      return args[0] && /^\d{1,2}\.\d{1,2}$/.test(args[0])
        ? { kind: 'upgrade', cuda: args[0] }
        : { kind: 'help', problem: '`upgrade` needs a CUDA version, e.g. `/cuda-check upgrade 12.8`' };
    case 'help':
      return { kind: 'help' };
    default:
      return { kind: 'help', problem: `unknown command \`${(sub ?? '').replace(/`/g, '')}\`` };
  }
}

export const HELP = [
  '| command | what it does |',
  '|---|---|',
  '| `/cuda-check` | re-run the CUDA gatekeeper check |',
  "| `/cuda-check explain <rule-id>` | show a rule's documentation |",
  '| `/cuda-check baseline` | show the effective baseline and where each value comes from |',
  '| `/cuda-check fix` | commit the safe fixes to this branch (needs write access) |',
  '| `/cuda-check plan <cuda>` | the edits that move this pull request to another CUDA version |',
  '| `/cuda-check upgrade <cuda>` | open a pull request that moves the default branch to another CUDA version, verified (needs write access) |',
].join('\n');
