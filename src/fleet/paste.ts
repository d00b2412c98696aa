/**
 * A fleet as a person pastes it into the self-service page: pools as the baseline writes them (`fleet.pools`, a list
 * of pools, or one pool), or what a node prints (`cuda-gatekeeper fleet scan`, `nvidia-smi --query-gpu=… --format=csv`
 * with or without its header, `nvidia-smi -q -x`, `kubectl get nodes -o json`). Pure; problems are said, never thrown.
 */
import { parse } from 'yaml';
import { BaselineFile, resolveBaseline, type Pool } from '../baseline/schema.js';
import type { KnowledgeBase } from '../knowledge/index.js';
import { groupIntoPools } from './pools.js';
import { DRIVER, readFleet, readSmiCsv } from './read.js';

export interface PastedFleet {
  readonly pools: readonly Pool[];
  readonly problems: readonly string[];
}

export function readPastedFleet(text: string, kb: KnowledgeBase): PastedFleet {
  const trimmed = text.trim();
  if (trimmed === '') return { pools: [], problems: [] };
  const fromYaml = poolsFromYaml(trimmed);
  if (fromYaml) return fromYaml;
  // `fleet scan` prints its summary line before the CSV: the CSV is what is read.
  const csvStart = trimmed.search(/^(?:name|gpu_name)\s*,/im);
  const body = csvStart > 0 ? trimmed.slice(csvStart) : trimmed;
  const read = readFleet('pasted', body);
  if (read.nodes.length > 0)
    return { pools: groupIntoPools(read.nodes, kb).pools, problems: read.problems.map((problem) => problem.message) };
  // A line of --format=csv,noheader: the product, the driver, and perhaps the compute capability.
  const lines = body.split(/\r?\n/).filter((line) => line.trim() !== '');
  const cells = lines[0]?.split(',').map((cell) => cell.trim()) ?? [];
  const driverAt = cells.findIndex((cell) => DRIVER.test(cell));
  if (driverAt > 0) {
    const header = cells.map((_, i) =>
      i === 0
        ? 'name'
        : i === driverAt
          ? 'driver_version'
          : /^\d+\.\d+$/.test(cells[i]!)
            ? 'compute_cap'
            : `column${i}`,
    );
    const noheader = readSmiCsv('pasted', `${header.join(', ')}\n${lines.join('\n')}`);
    if (noheader.nodes.length > 0)
      return {
        pools: groupIntoPools(noheader.nodes, kb).pools,
        problems: noheader.problems.map((problem) => problem.message),
      };
  }
  return {
    pools: [],
    problems: [
      'Paste a pool as the baseline writes it ({ name: a100, driver: "550.127.05", gpus: [A100] }), the fleet.pools list, or a node\'s `nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv` output (or `cuda-gatekeeper fleet scan`).',
    ],
  };
}

/** Pools written as YAML: `fleet: { pools: [...] }`, `pools: [...]`, a list of pools or one pool. */
function poolsFromYaml(text: string): PastedFleet | undefined {
  let value: unknown;
  try {
    value = parse(text, { prettyErrors: false, strict: false });
  } catch {
    return undefined;
  }
  const record = value as Record<string, unknown> | null;
  const list = Array.isArray(value)
    ? value
    : record && typeof record === 'object'
      ? ((record.fleet as Record<string, unknown> | undefined)?.pools ??
        record.pools ??
        ('driver' in record && 'name' in record ? [record] : undefined))
      : undefined;
  if (!Array.isArray(list)) return undefined;
  const checked = BaselineFile.safeParse({ fleet: { pools: list } });
  if (!checked.success)
    return {
      pools: [],
      problems: checked.error.issues
        .slice(0, 3)
        .map((issue) => `${issue.path.slice(2).join('.') || 'pool'}: ${issue.message}`),
    };
  return { pools: resolveBaseline(checked.data).pools, problems: [] };
}
