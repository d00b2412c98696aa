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

export function planMarkdown(result: Plan): string {
  const head = [`### Plan: move to CUDA ${result.cuda}`, ''];
  if (result.torch)
    head.push(
      `- torch **${result.torch.version}+${result.torch.variant}**${result.torch.torchvision ? `, torchvision ${result.torch.torchvision}` : ''}${result.torch.torchaudio ? `, torchaudio ${result.torch.torchaudio}` : ''} ([source](${firstUrl(result.torch.source)}))`,
    );
  if (result.driver)
    head.push(
      `- driver: >= ${result.driver.minimum} for the full feature set, >= ${result.driver.floor} for any CUDA ${result.cuda.split('.')[0]}.x${result.driver.fleet ? ` (fleet: ${result.driver.fleet})` : ''}`,
    );
  const steps = result.steps.length
    ? [
        '',
        '| file | what | from | to |',
        '|---|---|---|---|',
        ...result.steps.map(
          (step) =>
            `| \`${step.location.path}:${step.location.start.line}\` | ${step.what} | \`${step.from}\` | \`${step.to}\`${step.note ? ` (${step.note})` : ''} |`,
        ),
      ]
    : ['', 'No file in this pull request declares a CUDA version to change.'];
  const notes = result.notes.map((note) => `> ${note}`);
  return [
    ...head,
    ...steps,
    ...(notes.length ? ['', ...notes] : []),
    '',
    'Run `cuda-gatekeeper plan --cuda ' + result.cuda + ' --write` locally to apply these edits.',
  ].join('\n');
}

function firstUrl(source: string): string {
  return /https?:\/\/\S+/.exec(source)?.[0] ?? source;
}
