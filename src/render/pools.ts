/**
 * The pool table of a report (Report.fleet): what each pool of the fleet makes of each unit, as Markdown and as text.
 */
import type { FleetTable, PoolTier } from '../finding.js';

const MARK: Readonly<Record<PoolTier, string>> = {
  runs: '✅ runs',
  minor: '⚠️ minor-version compatibility',
  forward: '⚠️ forward compatibility',
  unknown: '❔ not known',
  fails: '❌ fails',
  'not-scheduled': '— not scheduled',
};
const WORD: Readonly<Record<PoolTier, string>> = {
  runs: 'runs',
  minor: 'runs (minor-version compat)',
  forward: 'runs (forward compat)',
  unknown: 'NOT KNOWN',
  fails: 'FAILS',
  'not-scheduled': 'not scheduled',
};

/** Rows shown at most; the rest are counted. */
const MAX_ROWS = 50;

function cellText(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/**
 * A Markdown table: a row per unit, a column per pool; the reasons of the cells that do not simply run, numbered below
 * it.
 */
export function poolTableMarkdown(table: FleetTable): string {
  const reasons: string[] = [];
  const header = `| Unit | ${table.pools.map((pool) => `${cellText(pool.name)} (${pool.driver})`).join(' | ')} |`;
  const rule = `|---|${table.pools.map(() => '---').join('|')}|`;
  const rows = table.rows.slice(0, MAX_ROWS).map((row) => {
    const cells = row.cells.map((cell) => {
      if (!cell.reason || cell.tier === 'runs') return MARK[cell.tier];
      reasons.push(cell.reason);
      return `${MARK[cell.tier]} [${reasons.length}]`;
    });
    return `| \`${cellText(row.path)}\`:${row.line} ${cellText(row.unit.startsWith(row.path) ? row.unit.slice(row.path.length).trim() : row.unit)} | ${cells.join(' | ')} |`;
  });
  const more =
    table.rows.length > MAX_ROWS ? [`…and ${table.rows.length - MAX_ROWS} more units (see the findings)`] : [];
  return [
    '**The fleet**: where each image, environment and workload runs',
    '',
    header,
    rule,
    ...rows,
    ...more,
    ...(reasons.length ? ['', ...reasons.map((reason, i) => `${i + 1}. ${cellText(reason)}`)] : []),
  ].join('\n');
}

/** The same table as text lines, for `check --verbose`. */
export function poolTableText(table: FleetTable, escape: (text: string) => string): string[] {
  const lines = [`fleet: ${table.pools.map((pool) => `${pool.name} (driver ${pool.driver})`).join(', ')}`];
  for (const row of table.rows) {
    lines.push(
      `  ${escape(row.path)}:${row.line} ${escape(row.unit.startsWith(row.path) ? row.unit.slice(row.path.length).trim() : row.unit)}`,
    );
    row.cells.forEach((cell, i) => {
      const pool = table.pools[i]!;
      lines.push(
        `    ${pool.name}: ${WORD[cell.tier]}${cell.reason && cell.tier !== 'runs' ? `: ${escape(cell.reason)}` : ''}`,
      );
    });
  }
  return lines;
}
