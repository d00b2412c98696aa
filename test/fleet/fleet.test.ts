/**
 * The fleet (issue 29): reading nodes from nvidia-smi (CSV and XML) and kubectl (GPU Feature Discovery labels),
 * real outputs of an H200 node and outputs built from NVIDIA's documented formats (fixtures/fleet), grouping them
 * into the baseline's pools, and the CLI's `fleet import` / `fleet scan` as a user runs them.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { assertProperty } from '../support/property.js';
import { describe, expect, it } from 'vitest';
import { loadBaseline } from '../../src/baseline/load.js';
import { binProcess, runCli as cli } from '../support/cli.js';
import { groupIntoPools } from '../../src/fleet/pools.js';
import { readFleet } from '../../src/fleet/read.js';
import { readPastedFleet } from '../../src/fleet/paste.js';
import { recommend } from '../../src/web/recommend.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import { RULE_IDS } from '../../rules/index.js';
import { ROOT } from '../support/harness.js';
import { codeBlock } from '../support/code-block.js';

const FLEET = join(ROOT, 'fixtures', 'fleet');
const fixture = (path: string) => readFileSync(join(FLEET, path), 'utf8');
const kb = defaultKnowledgeBase();

describe('reading the nodes', () => {
  it("the real H200 node's --query-gpu CSV and -q -x XML give the same node", () => {
    for (const file of ['device/nvidia-smi-query-gpu.csv', 'device/nvidia-smi-q.xml']) {
      const read = readFleet(file, fixture(file));
      expect(read.problems, file).toEqual([]);
      expect(read.nodes).toHaveLength(1);
      expect(read.nodes[0]).toMatchObject({ driver: '580.159.04', gpus: [{ product: 'H200' }] });
    }
    expect(readFleet('q.csv', fixture('device/nvidia-smi-query-gpu.csv')).nodes[0]!.gpus[0]!.computeCapability).toBe(
      '9.0',
    );
    expect(readFleet('q.xml', fixture('device/nvidia-smi-q.xml')).nodes[0]!.gpus[0]).toMatchObject({
      brand: 'NVIDIA',
      mig: false,
    });
  });

  it('multi-GPU, GeForce and MIG nodes in the documented XML; several nodes in one CSV', () => {
    const a100 = readFleet('a.xml', fixture('documented/nvidia-smi-q-8xA100.xml'));
    expect(a100.nodes[0]).toMatchObject({ driver: '535.183.01' });
    expect(a100.nodes[0]!.gpus).toHaveLength(8);
    expect(readFleet('g.xml', fixture('documented/nvidia-smi-q-geforce.xml')).nodes[0]!.gpus[0]).toMatchObject({
      product: 'GeForce RTX 4090',
      brand: 'GeForce',
    });
    expect(readFleet('m.xml', fixture('documented/nvidia-smi-q-mig.xml')).nodes[0]!.gpus[0]).toMatchObject({
      mig: true,
    });
    const csv = readFleet('nodes.csv', fixture('documented/query-gpu-nodes.csv'));
    expect(csv.problems).toEqual([]);
    expect(csv.nodes.map((node) => [node.driver, node.gpus.length])).toEqual([
      ['535.183.01', 8],
      ['550.90.07', 1],
      ['550.127.05', 1],
    ]);
  });

  it('kubectl nodes by their GFD labels; a node without GPUs is not a GPU node', () => {
    const read = readFleet('nodes.json', fixture('documented/kubectl-nodes.json'));
    expect(read.problems).toEqual([]);
    expect(read.nodes).toHaveLength(6);
    expect(read.nodes.find((node) => node.name.endsWith('h6mz'))!.gpus[0]).toMatchObject({
      product: 'H100-80GB-HBM3',
      mig: true,
    });
  });

  it('unreadable input is a positioned error, never a crash', () => {
    expect(readFleet('x.txt', 'hello\n').problems[0]).toMatchObject({
      line: 1,
      column: 1,
      message: expect.stringContaining('not an nvidia-smi CSV'),
    });
    const csv = readFleet(
      'x.csv',
      codeBlock`
        name, driver_version, compute_cap
        NVIDIA H200, 580.159.04
        NVIDIA H200, [N/A], 9.0
      `,
    );
    expect(csv.problems.map((problem) => [problem.line, problem.message])).toEqual([
      [2, '2 values for the 3 columns of the header on line 1'],
      [3, '"" is not a Linux driver version such as 580.159.04'],
    ]);
    expect(readFleet('x.json', '{"items": [').problems[0]).toMatchObject({
      line: 1,
      message: expect.stringContaining('not JSON'),
    });
    expect(
      readFleet('x.xml', '<nvidia_smi_log><driver_version>N/A</driver_version></nvidia_smi_log>').problems[0]!.message,
    ).toContain('<driver_version> is missing');
  });
});

describe('no input makes the readers throw', () => {
  it('mutated real outputs and arbitrary JSON', () => {
    const seeds = [
      'device/nvidia-smi-query-gpu.csv',
      'device/nvidia-smi-q.xml',
      'documented/kubectl-nodes.json',
      'documented/query-gpu-nodes.csv',
    ].map(fixture);
    assertProperty(
      fc.property(fc.constantFrom(...seeds), fc.nat(), fc.nat(), fc.string(), (seed, at, length, insert) => {
        const cut = at % (seed.length + 1);
        const text = seed.slice(0, cut) + insert + seed.slice(cut + (length % 40));
        const read = readFleet('x', text);
        groupIntoPools(read.nodes, kb);
      }),
      { numRuns: 300 },
    );
    assertProperty(
      fc.property(fc.jsonValue(), (value) => {
        readFleet(
          'x.json',
          `{"items": [${JSON.stringify(value)}, {"metadata": {"labels": ${JSON.stringify(value)}}}]}`,
        );
      }),
      { numRuns: 300 },
    );
  });
});

describe('grouping into pools', () => {
  it("by the cloud's node-pool label, with each pool's oldest driver, GPUs and product line, and why", () => {
    const grouped = groupIntoPools(readFleet('nodes.json', fixture('documented/kubectl-nodes.json')).nodes, kb);
    expect(grouped.pools.map((pool) => [pool.name, pool.driver, pool.gpus, pool.class, pool.nodes])).toEqual([
      ['a100-pool', '535.183.01', ['A100'], 'data-center', 2],
      ['h100-pool', '550.90.07', ['H100'], 'data-center', 2],
      ['b200-pool', '570.133.20', ['B200'], 'data-center', 2],
    ]);
    expect(grouped.explained[0]).toContain('grouped by label cloud.google.com/gke-nodepool=a100-pool');
  });

  it('by product and driver branch without labels; a GeForce node is its own pool', () => {
    const grouped = groupIntoPools(readFleet('nodes.csv', fixture('documented/query-gpu-nodes.csv')).nodes, kb);
    expect(grouped.pools.map((pool) => [pool.name, pool.class])).toEqual([
      ['a100-535', 'data-center'],
      ['h100-550', 'data-center'],
      ['rtx-4090-550', 'geforce'],
    ]);
  });
});

describe('cuda-gatekeeper fleet', () => {
  it('import prints a fleet section the baseline accepts, and the check judges each pool with it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cgk-fleet-'));
    const imported = cli(dir, [
      'fleet',
      'import',
      join(FLEET, 'documented/query-gpu-nodes.csv'),
      join(FLEET, 'device/nvidia-smi-q.xml'),
    ]);
    expect(imported.code, imported.err).toBe(0);
    expect(imported.err).toContain('pool h200-580: 1 node, 1 GPU (H200, data-center), driver 580.159.04');
    const loaded = loadBaseline('fleet.yml', imported.out, RULE_IDS);
    expect(loaded.problems).toEqual([]);
    expect(loaded.baseline.pools.map((pool) => pool.name)).toEqual([
      'a100-535',
      'h100-550',
      'rtx-4090-550',
      'h200-580',
    ]);
    mkdirSync(join(dir, '.github'));
    writeFileSync(join(dir, '.github', 'cuda-gatekeeper.yml'), imported.out);
    writeFileSync(join(dir, 'Dockerfile'), 'FROM nvidia/cuda:13.0.1-runtime-ubuntu24.04\n');
    const checked = cli(dir, ['check', '.']);
    expect(checked.out).toContain(
      'warning: nvidia/cuda:13.0.1-runtime-ubuntu24.04 needs CUDA 13.0: it runs on a100-535 (forward compatibility), h200-580, not on h100-550 (driver 550.90.07), rtx-4090-550 (driver 550.127.05)',
    );
  });

  it('import --write sets fleet.pools in a baseline and keeps its other keys and comments', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cgk-fleet-write-'));
    writeFileSync(
      join(dir, 'baseline.yaml'),
      codeBlock`
        # the platform team
        cuda:
          allowed: ["12.4", "12.8"] # agreed in Q3
      `,
    );
    const written = cli(
      dir,
      ['fleet', 'import', '--write', 'baseline.yaml', '-'],
      fixture('documented/kubectl-nodes.json'),
    );
    expect(written.code, written.err).toBe(0);
    const text = readFileSync(join(dir, 'baseline.yaml'), 'utf8');
    expect(text).toContain('# the platform team');
    expect(text).toContain('# agreed in Q3');
    expect(loadBaseline('baseline.yaml', text, RULE_IDS).baseline.pools.map((pool) => pool.name)).toEqual([
      'a100-pool',
      'h100-pool',
      'b200-pool',
    ]);
  });

  it('scan prints the node from its nvidia-smi, as the real H200 node printed it; exit 2 without nvidia-smi', () => {
    const bin = mkdtempSync(join(tmpdir(), 'cgk-fake-smi-'));
    const csv = fixture('device/nvidia-smi-query-gpu.csv')
      .split('\n')
      .map((line) =>
        line
          .split(', ')
          .filter((_, i) => [0, 1, 2, 4].includes(i))
          .join(', '),
      )
      .join('\n');
    // A stand-in nvidia-smi printing the real node's answer to the query scan makes (name, driver, compute_cap, bus
    // id).
    writeFileSync(join(bin, 'nvidia-smi'), `#!/bin/sh\ncat <<'CSV'\n${csv.trimEnd()}\nCSV\n`);
    chmodSync(join(bin, 'nvidia-smi'), 0o755);
    const scanned = binProcess(['fleet', 'scan'], { env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } });
    expect(scanned.code, scanned.err).toBe(0);
    expect(scanned.out).toBe(fixture('device/fleet-scan.txt'));
    const none = binProcess(['fleet', 'scan'], { env: { ...process.env, PATH: '/nonexistent' } });
    expect(none.code).toBe(2);
    expect(none.err).toContain('there is no nvidia-smi on PATH');
  });

  it('bad usage is exit 2 with a message', () => {
    expect(cli(ROOT, ['fleet'])).toMatchObject({
      code: 2,
      err: expect.stringContaining('fleet needs a subcommand: import or scan'),
    });
    expect(cli(ROOT, ['fleet', 'import', 'no-such-file.csv'])).toMatchObject({
      code: 2,
      err: expect.stringContaining('cannot read no-such-file.csv: ENOENT'),
    });
  });
});

describe('the self-service page takes pools or a node instead of a driver', () => {
  it('reads a pool as the baseline writes it, the fleet.pools list, a --query-gpu line with or without header, and fleet scan output', () => {
    expect(readPastedFleet('{ name: a100, driver: "550.127.05", gpus: [A100] }', kb).pools).toMatchObject([
      { name: 'a100', driver: '550.127.05', gpus: ['A100'] },
    ]);
    const list = readPastedFleet(
      codeBlock`
        fleet:
          pools:
            - { name: a, driver: "535.183.01", gpus: [A100] }
            - { name: b, driver: "580.159.04", gpus: [H200] }
      `,
      kb,
    );
    expect(list.pools.map((pool) => pool.name)).toEqual(['a', 'b']);
    expect(readPastedFleet('NVIDIA H200, 580.159.04, 9.0', kb).pools).toMatchObject([
      { driver: '580.159.04', gpus: ['H200'] },
    ]);
    expect(readPastedFleet(fixture('device/nvidia-smi-query-gpu.csv'), kb).pools).toMatchObject([
      { driver: '580.159.04', gpus: ['H200'] },
    ]);
    expect(readPastedFleet(fixture('device/fleet-scan.txt'), kb).pools).toMatchObject([
      { driver: '580.159.04', gpus: ['H200'] },
    ]);
    expect(readPastedFleet('{ name: a100, driver: "55" }', kb).problems[0]).toMatch(
      /driver: expected an NVIDIA driver version/,
    );
    expect(readPastedFleet('hello', kb).problems[0]).toMatch(/^Paste a pool/);
  });

  it('answers which pools the recommended install runs on, judged on the oldest driver', () => {
    const fleet = codeBlock`
      - { name: a100-legacy, driver: "550.127.05", gpus: [A100] }
      - { name: h200, driver: "580.159.04", gpus: [H200] }
      - { name: v100, driver: "580.159.04", gpus: [V100] }
    `;
    const answer = recommend(kb, { framework: 'pytorch', version: '2.7.1', fleet });
    // The oldest driver (R550) decides the pick; every pool runs it.
    expect(answer.install?.cuda).toBe('11.8');
    expect(answer.pools?.map((pool) => [pool.name, pool.verdict])).toEqual([
      ['a100-legacy', 'runs'],
      ['h200', 'runs'],
      ['v100', 'runs'],
    ]);
    // A driver named beside the pools decides the pick: CUDA 12.8 then runs on the R550 pool only under minor-version
    // compatibility.
    const named = recommend(kb, {
      framework: 'pytorch',
      version: '2.9.0',
      fleet: '- { name: old, driver: "550.127.05", gpus: [A100] }',
      driver: '580.159.04',
    });
    expect(named.install?.cuda).toBe('12.8');
    expect(named.pools).toEqual([
      {
        name: 'old',
        driver: '550.127.05',
        verdict: 'minor',
        reason: 'driver 550.127.05 runs CUDA 12.8 only under minor-version compatibility (full support from 570.26)',
      },
    ]);
  });
});
