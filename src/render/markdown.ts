/** Markdown for the bot's pull-request comment (pure). */
import type { Baseline } from '../baseline/schema.js';
import type { Plan } from '../plan/plan.js';

export function baselineMarkdown(
  baseline: Baseline,
  provenance: Readonly<Record<string, string>>,
  origin: string,
  problems: readonly string[],
  notes: readonly string[] = [],
): string {
  const row = (key: string, value: unknown): string =>
    `| \`${key}\` | ${format(value)} | ${provenance[key] ?? (key.startsWith('rules.') ? provenance[key] : undefined) ?? 'default'} |`;
  const rows = [
    row('cuda.allowed', baseline.cuda.allowed),
    row('driver.minimum', baseline.driver.minimum),
    row('gpus', baseline.gpus.length ? baseline.gpus : undefined),
    ...Object.entries(baseline.packages).map(([name, versions]) => row(`packages.${name}`, versions)),
    row('pinning.python', baseline.pinning.python),
    row('pinning.images', baseline.pinning.images),
    row('prerelease', baseline.prerelease),
    row('unchecked', baseline.unchecked),
    ...Object.entries(baseline.rules).map(([id, severity]) => row(`rules.${id}`, severity)),
  ];
  const locked = baseline.locked.length
    ? `\n\nLocked by the organisation: ${baseline.locked.map((key) => `\`${key}\``).join(', ')}.`
    : '';
  const issues = problems.length ? `\n\n**Problems:**\n${problems.map((problem) => `- ${problem}`).join('\n')}` : '';
  const said = notes.length ? `\n\n${notes.join('\n\n')}` : '';
  return `### Effective CUDA baseline\n\nFrom ${origin}.${said}\n\n| key | value | from |\n|---|---|---|\n${rows.join('\n')}${locked}${issues}`;
}

function format(value: unknown): string {
  if (value === undefined) return '_not set_';
  if (Array.isArray(value)) return value.map((item) => `\`${String(item)}\``).join(', ');
  return `\`${String(value)}\``;
}

/**
 * A plan as Markdown: the reply to `/cuda-check plan` (`for: 'reply'`) or the body of the pull request
 * `/cuda-check upgrade` opens (`for: 'pull'`): the moves, the pools, the lock commands and what could not move.
 */
export function planMarkdown(result: Plan, options: { readonly for?: 'reply' | 'pull' } = {}): string {
  const head = [`### Plan: move to CUDA ${result.cuda}`, ''];
  if (result.torch)
    head.push(
      `- torch **${result.torch.version}+${result.torch.variant}**${result.torch.torchvision ? `, torchvision ${result.torch.torchvision}` : ''}${result.torch.torchaudio ? `, torchaudio ${result.torch.torchaudio}` : ''} ([source](${firstUrl(result.torch.source)}))`,
    );
  if (result.driver)
    head.push(
      `- driver: >= ${result.driver.minimum} for the full feature set, >= ${result.driver.floor} for any CUDA ${result.cuda.split('.')[0]}.x${result.driver.fleet ? ` (fleet: ${result.driver.fleet})` : ''} ([source](${firstUrl(result.driver.source)}))`,
    );
  const steps = result.steps.length
    ? [
        '',
        '| file | what | from | to |',
        '|---|---|---|---|',
        ...result.steps.map(
          (step) =>
            `| ${code(`${step.location.path}:${step.location.start.line}`)} | ${cell(step.what)} | ${code(step.from)} | ${code(step.to)}${step.note ? ` (${cell(step.note)})` : ''} |`,
        ),
      ]
    : [
        '',
        `No file ${options.for === 'pull' ? 'of the default branch' : 'in this pull request'} declares a CUDA version to change.`,
      ];
  const pools = result.pools.length
    ? [
        '',
        `| pool | driver | runs CUDA ${result.driver?.cuda ?? result.cuda} |`,
        '|---|---|---|',
        ...result.pools.map(
          (pool) =>
            `| ${cell(pool.name)} | ${pool.driver} | ${pool.runs === 'yes' ? 'yes' : pool.runs === 'compat' ? `under minor-version compatibility (>= ${pool.needs} for all features)` : `**no**: needs driver >= ${pool.needs} first`} |`,
        ),
      ]
    : [];
  const locks = result.locks.length
    ? [
        '',
        '**Lock files** are not edited; regenerate each after these edits and commit it:',
        ...result.locks.map((lock) => `- ${code(lock.path)}: ${code(lock.command)}`),
      ]
    : [];
  const held = result.held.length
    ? [
        '',
        '**Not moved:**',
        ...result.held.map(
          (hold) => `- ${code(hold.location.path)} (${cell(hold.unit)}): ${cell(hold.reasons.join('; '))}`,
        ),
      ]
    : [];
  const notes = result.notes.map((note) => `> ${note}`);
  return [
    ...head,
    ...steps,
    ...pools,
    ...locks,
    ...held,
    ...(notes.length ? ['', ...notes] : []),
    '',
    options.for === 'pull'
      ? 'Each move was checked by running the gate on the moved files under the same baseline and fleet: it adds no error.'
      : 'Run `cuda-gatekeeper plan --cuda ' +
        result.cuda +
        ' --write` locally to apply these edits, or `/cuda-check upgrade ' +
        result.cuda +
        '` to get them as a pull request.',
  ].join('\n');
}

/** Text in a table cell: pipes escaped, one line. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
}

/** Text as inline code in a table cell: a fence longer than any backtick run inside. */
function code(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((run) => run[0].length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${cell(text)}${pad}${fence}`;
}

function firstUrl(source: string): string {
  return /https?:\/\/\S+/.exec(source)?.[0] ?? source;
}
