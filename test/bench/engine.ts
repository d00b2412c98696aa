/**
 * Engine benchmark: parse + gate throughput and memory on a synthetic 10,000-file monorepo, and the parse cost
 * per format. Prints a table and writes bench-results/engine.json. Run with `npm run bench`.
 *
 * The monorepo has 2,000 projects of five files each (a Dockerfile, two requirements files linked by -r, a
 * conda environment, a constraints file), with realistic sizes and a mix of consistent and broken pins.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadBaseline } from '../../src/baseline/load.js';
import type { ParsedFile } from '../../src/facts.js';
import { gate } from '../../src/gate.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import { parseFile } from '../../src/parsers/index.js';
import { readFileSync } from 'node:fs';
import { RULE_IDS } from '../../rules/index.js';
import { packageRoot } from '../../src/cli/package-root.js';
import { project } from './synthetic.js';

const PROJECTS = 2000;
const ROOT = packageRoot();

function rss(): number {
  return process.memoryUsage().rss;
}

function main(): void {
  const kb = defaultKnowledgeBase();
  const policy = loadBaseline('baseline.yaml', readFileSync(join(ROOT, 'baseline.yaml'), 'utf8'), RULE_IDS);
  const projects = Array.from({ length: PROJECTS }, (_, i) => project(i));
  const totalFiles = projects.reduce((sum, files) => sum + Object.keys(files).length, 0);
  const totalBytes = projects.reduce((sum, files) => sum + Object.values(files).reduce((s, text) => s + text.length, 0), 0);

  // Warm-up (JIT), then measure one repository-wide run over every file.
  for (let i = 0; i < 50; i++) gate(parseProject(`warm${i}`, projects[i]!), policy.baseline, kb);
  global.gc?.();
  const before = rss();
  let peak = before;
  const started = performance.now();
  const parsed: ParsedFile[] = [];
  const parseStarted = performance.now();
  projects.forEach((files, i) => {
    parsed.push(...parseProject(`p${i}`, files));
    if (i % 200 === 0) peak = Math.max(peak, rss());
  });
  const parseMs = performance.now() - parseStarted;
  const report = gate(parsed, policy.baseline, kb);
  const totalMs = performance.now() - started;
  peak = Math.max(peak, rss());

  // Streaming: one project at a time (what a monorepo job or the App does per pull request): memory must stay flat.
  parsed.length = 0;
  global.gc?.();
  const streamBefore = rss();
  const samples: { files: number; rssMb: number }[] = [];
  const streamStarted = performance.now();
  let findings = 0;
  projects.forEach((files, i) => {
    findings += gate(parseProject(`s${i}`, files), policy.baseline, kb).findings.length;
    if ((i + 1) % 400 === 0) {
      global.gc?.();
      samples.push({ files: (i + 1) * 5, rssMb: round(rss() / 2 ** 20) });
    }
  });
  const streamMs = performance.now() - streamStarted;

  const perFormat = (['dockerfile', 'requirements', 'conda'] as const).map((kind) => {
    const name = kind === 'dockerfile' ? 'Dockerfile' : kind === 'requirements' ? 'requirements.txt' : 'environment.yml';
    const texts = projects.map((files) => files[name]!);
    const t0 = performance.now();
    for (const [i, text] of texts.entries()) parseFile(`${i}/${name}`, text, kind);
    const ms = performance.now() - t0;
    return { format: kind, files: texts.length, usPerFile: round((ms * 1000) / texts.length), filesPerSecond: Math.round(texts.length / (ms / 1000)) };
  });

  const result = {
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version },
    files: totalFiles,
    megabytes: round(totalBytes / 2 ** 20),
    whole: { ms: round(totalMs), parseMs: round(parseMs), filesPerSecond: Math.round(totalFiles / (totalMs / 1000)), findings: report.findings.length, rssBeforeMb: round(before / 2 ** 20), rssPeakMb: round(peak / 2 ** 20) },
    streaming: { ms: round(streamMs), filesPerSecond: Math.round(totalFiles / (streamMs / 1000)), findings, rssStartMb: round(streamBefore / 2 ** 20), samples },
    perFormat,
    target: { filesPerSecond: 20000 },
  };

  const rows = [
    ['measure', 'value'],
    ['files (projects × 5)', `${totalFiles} (${result.megabytes} MiB)`],
    ['parse + gate, whole repo', `${result.whole.filesPerSecond} files/s (${result.whole.ms} ms, ${result.whole.findings} findings)`],
    ['peak RSS, whole repo', `${result.whole.rssPeakMb} MiB (from ${result.whole.rssBeforeMb} MiB)`],
    ['parse + gate, per project', `${result.streaming.filesPerSecond} files/s`],
    ['RSS while streaming', samples.map((sample) => `${sample.files}: ${sample.rssMb}`).join(', ') + ' MiB'],
    ...perFormat.map((row) => [`parse ${row.format}`, `${row.usPerFile} µs/file (${row.filesPerSecond} files/s)`]),
    ['target', `>= ${result.target.filesPerSecond} files/s on one core: ${result.whole.filesPerSecond >= result.target.filesPerSecond ? 'met' : 'NOT met'}`],
  ];
  const width = Math.max(...rows.map((row) => row[0]!.length));
  process.stdout.write(`${rows.map((row) => `${row[0]!.padEnd(width)}  ${row[1]}`).join('\n')}\n`);
  mkdirSync(join(ROOT, 'bench-results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench-results', 'engine.json'), `${JSON.stringify(result, null, 2)}\n`);
}

function parseProject(prefix: string, files: Record<string, string>): ParsedFile[] {
  return Object.entries(files).map(([name, text]) => {
    const kind = name === 'Dockerfile' ? 'dockerfile' : name.endsWith('.yml') ? 'conda' : 'requirements';
    return parseFile(`${prefix}/${name}`, text, kind);
  });
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

main();
