/** `/cuda-check` comment commands, parsed from a comment body (the first line that starts with the command). */

export type Command =
  | { readonly kind: 'rerun' }
  | { readonly kind: 'explain'; readonly ruleId: string }
  | { readonly kind: 'baseline' }
  | { readonly kind: 'fix' }
  | { readonly kind: 'plan'; readonly cuda: string }
  | { readonly kind: 'help'; readonly problem?: string };

export function parseCommand(body: string): Command | undefined {
  const line = body
    .split(/\r?\n/)
    .map((text) => text.trim())
    .find((text) => /^\/cuda-check\b/.test(text));
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
].join('\n');
