// Ad-hoc profiling helper (not part of npm run bench): parse once, gate three times.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadBaseline } from '../../src/baseline/load.js';
import { gate } from '../../src/gate.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import { packageRoot } from '../../src/util/package-root.js';
import { parseProject, project } from './synthetic.js';

const kb = defaultKnowledgeBase();
const policy = process.env.EMPTY
  ? loadBaseline('b', '')
  : loadBaseline('baseline.yaml', readFileSync(join(packageRoot(), 'baseline.yaml'), 'utf8'));
const files = Array.from({ length: 2000 }, (_, i) => parseProject(`p${i}`, project(i))).flat();
for (let round = 0; round < 3; round++) {
  const t0 = performance.now();
  const report = gate(files, policy.baseline, kb);
  console.log(`gate: ${(performance.now() - t0).toFixed(0)} ms, ${report.findings.length} findings`);
}
