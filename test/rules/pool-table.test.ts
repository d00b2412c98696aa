/**
 * The pool table of a report says what the findings say: a pool a finding says cannot run a unit is not "runs" there
 * (sweep 18: dinov2's torch 2.0.0+cu117 has no sm_90 kernels, and the table said the H200 pool ran it), and a pool
 * where it depends on what the file does not say is "not known".
 */
import { describe, expect, it } from 'vitest';
import { loadBaseline } from '../../src/baseline/load.js';
import { gate } from '../../src/gate.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import { parseFile } from '../../src/parsers/index.js';
import { RULE_IDS } from '../../rules/index.js';
import type { FileKind } from '../../src/parsers/facts.js';

const kb = defaultKnowledgeBase();
const { baseline } = loadBaseline(
  'baseline.yaml',
  [
    'fleet:',
    '  pools:',
    '    - { name: a100, driver: "550.127.05", gpus: [A100], class: data-center }',
    '    - { name: h200, driver: "580.159.04", gpus: [H200], class: data-center }',
  ].join('\n'),
  RULE_IDS,
);

function cells(path: string, text: string, kind: FileKind): Record<string, string> {
  const report = gate([parseFile(path, text, kind)], baseline, kb);
  const row = report.fleet?.rows[0];
  return Object.fromEntries(report.fleet!.pools.map((pool, i) => [pool.name, row?.cells[i]?.tier ?? 'no row']));
}

describe('the pool table', () => {
  it("fails a pool whose GPUs the torch build has no kernels for, as gpu-arch's finding says", () => {
    const text = '--extra-index-url https://download.pytorch.org/whl/cu117\ntorch==2.0.0\n';
    expect(cells('requirements.txt', text, 'requirements')).toEqual({ a100: 'runs', h200: 'fails' });
  });

  it('says "not known" where the build depends on a Python the Dockerfile does not say', () => {
    const text = 'FROM ghcr.io/acme/base:1.0\nRUN pip install torch\n';
    expect(cells('Dockerfile', text, 'dockerfile')).toEqual({ a100: 'unknown', h200: 'runs' });
  });
});
