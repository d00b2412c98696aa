/**
 * `cuda-gatekeeper fleet import` and `fleet scan`: the baseline's `fleet.pools` from nvidia-smi and kubectl outputs,
 * and one node's line from its own nvidia-smi.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { isMap, parseDocument } from 'yaml';
import type { Pool } from '../baseline/schema.js';
import { defaultKnowledgeBase } from '../knowledge/index.js';
import { groupIntoPools } from '../fleet/pools.js';
import { readFleet, readSmiCsv, type FleetNode, type FleetProblem } from '../fleet/read.js';
import { escapeControl } from '../render/text.js';

export const FLEET_HELP = `Usage: cuda-gatekeeper fleet import [FILE...|-] [options]
       cuda-gatekeeper fleet scan

import reads what the nodes report and prints the baseline's fleet section (or writes it into a baseline):
  nvidia-smi --query-gpu=name,driver_version,compute_cap,pci.bus_id --format=csv   (one or many nodes)
  nvidia-smi -q -x                                                                  (one or many nodes)
  kubectl get nodes -o json                     (GPU Feature Discovery labels: nvidia.com/gpu.product, …)
Nodes are grouped into pools by --group-by LABEL, else by the GKE, EKS or AKS node-pool label, else by GPU
and driver branch; a pool's driver is its oldest node's.

Options:
  --group-by LABEL   the node label that names a node's pool (kubectl input)
  --write FILE       set fleet.pools in the baseline FILE (other keys and comments are kept)
  -h, --help         this text

scan runs this node's nvidia-smi and prints one line for it (driver, GPUs, product line), and the CSV to
collect from every node (a DaemonSet, an Ansible task). Exit status 2 where there is no nvidia-smi.`;

interface Io {
  readonly cwd: string;
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly stdin?: () => string;
}

export function fleetCommand(args: readonly string[], io: Io, usage: (message: string) => Error): number {
  const [sub, ...rest] = args;
  if (sub === 'scan') return scan(io);
  if (sub !== 'import') throw usage(`fleet needs a subcommand: import or scan${sub ? ` (not "${sub}")` : ''}`);
  const { values, positionals } = parseArgs({
    args: [...rest],
    allowPositionals: true,
    options: { 'group-by': { type: 'string' }, write: { type: 'string' } },
  });
  const inputs = positionals.length ? positionals : ['-'];
  const nodes: FleetNode[] = [];
  const problems: FleetProblem[] = [];
  for (const input of inputs) {
    let text: string;
    try {
      text = input === '-' ? (io.stdin?.() ?? readFileSync(0, 'utf8')) : readFileSync(resolve(io.cwd, input), 'utf8');
    } catch (error) {
      throw usage(
        `cannot read ${escapeControl(input)}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
    const read = readFleet(input === '-' ? '<stdin>' : input, text);
    nodes.push(...read.nodes);
    problems.push(...read.problems);
  }
  for (const problem of problems)
    io.err(
      `${escapeControl(problem.path)}:${problem.line}:${problem.column}: error: ${escapeControl(problem.message)}\n`,
    );
  if (nodes.length === 0) {
    io.err('cuda-gatekeeper: no GPU node found in the input\n');
    return 2;
  }
  const grouped = groupIntoPools(nodes, defaultKnowledgeBase(), values['group-by']);
  for (const line of grouped.explained) io.err(`pool ${line}\n`);
  if (values.write) {
    writePools(resolve(io.cwd, values.write), grouped.pools, usage);
    io.err(
      `cuda-gatekeeper: wrote fleet.pools (${grouped.pools.length} pool${grouped.pools.length === 1 ? '' : 's'}) into ${values.write}\n`,
    );
  } else io.out(renderPools(grouped.pools));
  return problems.length > 0 ? 1 : 0;
}

/** The pools as the baseline's YAML, one flow mapping per pool. */
export function renderPools(pools: readonly Pool[]): string {
  const lines = ['fleet:', '  pools:'];
  for (const pool of pools) {
    const fields = [
      `name: ${JSON.stringify(pool.name)}`,
      `driver: ${JSON.stringify(pool.driver)}`,
      `gpus: [${pool.gpus.map((gpu) => JSON.stringify(gpu)).join(', ')}]`,
      ...(pool.class ? [`class: ${pool.class}`] : []),
      ...(pool.nodes !== undefined ? [`nodes: ${pool.nodes}`] : []),
      ...(Object.keys(pool.labels).length
        ? [
            `labels: { ${Object.entries(pool.labels)
              .map(([key, value]) => `${JSON.stringify(key)}: ${JSON.stringify(value)}`)
              .join(', ')} }`,
          ]
        : []),
    ];
    lines.push(`    - { ${fields.join(', ')} }`);
  }
  return `${lines.join('\n')}\n`;
}

/** Set fleet.pools in a baseline file, keeping its other keys and comments (a new file holds only the fleet). */
function writePools(path: string, pools: readonly Pool[], usage: (message: string) => Error): void {
  const doc = parseDocument(existsSync(path) ? readFileSync(path, 'utf8') : '');
  if (doc.errors.length > 0) throw usage(`${path} is not valid YAML: ${doc.errors[0]!.message.split('\n')[0]}`);
  if (doc.contents !== null && !isMap(doc.contents)) throw usage(`${path} is not a YAML mapping`);
  const fresh = parseDocument(renderPools(pools));
  doc.setIn(['fleet', 'pools'], fresh.getIn(['fleet', 'pools'], true));
  writeFileSync(path, doc.toString());
}

/** This node's nvidia-smi, as one line; the CSV to collect is printed after it. */
function scan(io: Io): number {
  const query = ['--query-gpu=name,driver_version,compute_cap,pci.bus_id', '--format=csv'];
  const result = spawnSync('nvidia-smi', query, { encoding: 'utf8' });
  if (result.error || result.status !== 0) {
    const why =
      (result.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT'
        ? 'there is no nvidia-smi on PATH (not a GPU node, or the driver is not installed)'
        : `nvidia-smi failed (exit ${result.status}): ${(result.stderr || result.stdout).trim().split('\n')[0] ?? ''}`;
    io.err(`cuda-gatekeeper: ${why}\n`);
    return 2;
  }
  const read = readSmiCsv('nvidia-smi', result.stdout);
  for (const problem of read.problems) io.err(`nvidia-smi output line ${problem.line}: ${problem.message}\n`);
  const node = read.nodes[0];
  if (!node) {
    io.err('cuda-gatekeeper: nvidia-smi listed no GPU\n');
    return 2;
  }
  const { explained } = groupIntoPools([node], defaultKnowledgeBase());
  io.out(`${explained[0]}\n${result.stdout.endsWith('\n') ? result.stdout : `${result.stdout}\n`}`);
  return 0;
}
