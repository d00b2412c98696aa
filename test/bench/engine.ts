/**
 * Engine benchmark: parse + gate throughput and memory on a synthetic 10,000-file monorepo, and the parse cost
 * per format. Prints a table and writes bench-results/engine.json. Run with `npm run bench`.
 *
 * The monorepo has 2,000 projects of five files each (a Dockerfile, two requirements files linked by -r, a
 * conda environment, a constraints file), with realistic sizes and a mix of consistent and broken pins.
 *
 * Two ways of running the engine are measured:
 * - whole repository: what the CLI does on a checkout (gateRepository over the walked paths): every file read
 *   and parsed once, its includes followed, and checked a linked group at a time;
 * - project by project: parse and gate one project at a time (what the App does per pull request, and how a
 *   monorepo job can stream).
 * Each mode runs in a child process of its own, with V8 limited to one thread (`--single-threaded`), and is measured
 * cold (its first pass, JIT compilation included) and warm (after that and two passes over a different synthetic
 * repository: median and range of seven passes). The throughput target is judged on the warm figures; the cold ones are
 * printed beside them. Each child also times a fixed reference workload around its warm passes, so a run on a slow
 * stretch of the machine shows as one.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { loadBaseline } from '../../src/baseline/load.js';
import type { Baseline } from '../../src/baseline/schema.js';
import { gate } from '../../src/gate.js';
import { defaultKnowledgeBase, type KnowledgeBase } from '../../src/knowledge/index.js';
import { classifyPath, parseFile } from '../../src/parsers/index.js';
import { sourceReader, type Listed, type RepositoryReader, type SourceFile } from '../../src/reader.js';
import { gateRepository } from '../../src/stream.js';
import { RULE_IDS } from '../../rules/index.js';
import { packageRoot } from '../../src/util/package-root.js';
import { scanPlainDockerfile } from '../../src/parsers/dockerfile/instructions.js';
import { realProjects, realSources } from './real.js';
import { parseProject, project } from './synthetic.js';

const PROJECTS = 2000;
const PASSES = 7;
/** Untimed passes over the warm-up repository before the warm passes. */
const WARM_UP_PASSES = 2;
const TARGET = 20_000;
const ROOT = packageRoot();
/** The warm-up repository: same shape, different projects (no text is shared with the measured one). */
const WARM_UP_OFFSET = 1_000_000;

type Project = Record<string, string>;
type Mode = 'whole' | 'project';

interface Pass {
  readonly ms: number;
  /** Time spent in parseFile (project by project only: gateRepository parses as it reads). */
  readonly parseMs: number;
  readonly findings: number;
  /** Files gateRepository parsed a second time (whole repository only). */
  readonly parsedAgain: number;
  /** The process's peak resident set size so far (getrusage's high-water mark). */
  readonly peakRssMb: number;
}

type Workload = 'real' | 'synthetic';
const workloadFlag = process.argv.indexOf('--workload');
/** Which files the child measures: the real corpus files (the headline figures) or the synthetic projects. */
const WORKLOAD: Workload = workloadFlag >= 0 && process.argv[workloadFlag + 1] === 'synthetic' ? 'synthetic' : 'real';
/** 10,000 files either way: 2,000 synthetic projects of five files, or real files three to a service directory. */
const FILES = PROJECTS * 5;

function repository(offset: number): Project[] {
  if (WORKLOAD === 'real') {
    // The real files are few (fixtures/corpus): the warm-up repository has the same texts in other directories.
    return realProjects(realSources(join(ROOT, 'fixtures', 'corpus')), FILES).map((service) => service.files);
  }
  return Array.from({ length: PROJECTS }, (_, i) => project(offset + i));
}

/** One pass over the repository. */
function pass(mode: Mode, projects: readonly Project[], baseline: Baseline, kb: KnowledgeBase): Pass {
  let parseMs = 0;
  let findings = 0;
  let parsedAgain = 0;
  const started = performance.now();
  if (mode === 'whole') {
    // What `cuda-gatekeeper check` does on a checkout, minus the disk: the reader hands out texts already read.
    const { paths, reader } = sourcesOf(projects);
    const checked = gateRepository(paths, reader, baseline, kb);
    findings = checked.report.findings.length;
    parsedAgain = checked.parsedAgain;
  } else {
    projects.forEach((files, i) => {
      const t0 = performance.now();
      const parsed = parseProject(`p${i}`, files);
      parseMs += performance.now() - t0;
      findings += gate(parsed, baseline, kb).findings.length;
    });
  }
  const ms = performance.now() - started;
  return { ms, parseMs, findings, parsedAgain, peakRssMb: round(process.resourceUsage().maxRSS / 1024) };
}

const decoder = new TextDecoder();
const sourceCache = new WeakMap<readonly Project[], { paths: Listed[]; reader: RepositoryReader }>();

/**
 * The repository as the CLI finds it: the walked paths, and a reader over texts decoded from bytes (flat
 * strings, as readFileSync gives, rather than the template strings the generator builds). Built once per
 * repository, outside the timing, as the disk would be.
 */
function sourcesOf(projects: readonly Project[]): { paths: Listed[]; reader: RepositoryReader } {
  let cached = sourceCache.get(projects);
  if (!cached) {
    const sources = projects.flatMap((files, i) =>
      Object.entries(files).map(
        ([name, text]): SourceFile => ({
          path: decoder.decode(Buffer.from(`p${i}/${name}`)),
          kind: classifyPath(name)!,
          text: decoder.decode(Buffer.from(text)),
        }),
      ),
    );
    cached = {
      paths: sources.map((source) => ({ path: source.path, kind: source.kind })),
      reader: sourceReader(sources),
    };
    sourceCache.set(projects, cached);
  }
  return cached;
}

function filesPerSecond(ms: number): number {
  return Math.round(FILES / (ms / 1000));
}

function setup(): { baseline: Baseline; kb: KnowledgeBase } {
  const policy = loadBaseline('baseline.yaml', readFileSync(join(ROOT, 'baseline.yaml'), 'utf8'), RULE_IDS);
  return { baseline: policy.baseline, kb: defaultKnowledgeBase() };
}

interface ModeResult {
  readonly cold: Pass;
  readonly warm: readonly Pass[];
  /** Median time of the reference workload around the warm passes (see referenceMs). */
  readonly referenceMs: number;
  readonly rssBeforeMb: number;
  readonly samples?: readonly { files: number; rssMb: number }[];
  readonly perFormat?: readonly {
    format: string;
    files: number;
    usPerFile: number;
    usPerKb: number;
    filesPerSecond: number;
  }[];
}

/**
 * `engine.js --mode <mode>`: everything measured for one mode, in this fresh process, printed as JSON. Each mode
 * gets its own process because V8 adapts to what it runs: where objects tended to live long it allocates them
 * straight into the old generation, so one mode's passes would change how fast the other runs.
 */
function measureMode(mode: Mode): void {
  const { baseline, kb } = setup();
  // Both repositories, and the sources the CLI would read, exist before anything is timed: generating them
  // between passes changed how V8 placed later objects, and a whole-repository run ran up to three times slower.
  const measured = repository(0);
  const warmUp = repository(WARM_UP_OFFSET);
  if (mode === 'whole') {
    sourcesOf(measured);
    sourcesOf(warmUp);
  }
  const cold = pass(mode, measured, baseline, kb);
  for (let i = 0; i < WARM_UP_PASSES; i++) pass(mode, warmUp, baseline, kb);
  const rssBeforeMb = round(process.memoryUsage().rss / 2 ** 20);
  // No forced collection between passes: a full GC shrinks the young generation, and the next per-project pass
  // then ran about twice as slow while it grew back (measured); a long-running process never does that.
  const before = [referenceMs(), referenceMs(), referenceMs()];
  const warm = Array.from({ length: PASSES }, () => pass(mode, measured, baseline, kb));
  const around = [...before, referenceMs(), referenceMs(), referenceMs()].sort((a, b) => a - b);
  const result: ModeResult = {
    cold,
    warm,
    referenceMs: round(around[3]!),
    rssBeforeMb,
    ...(mode === 'project'
      ? { samples: streamingMemory(measured, baseline, kb), perFormat: parseCosts(measured) }
      : {}),
  };
  process.stdout.write(JSON.stringify(result));
}

const REFERENCE_INPUT = JSON.stringify(
  Array.from({ length: 3000 }, (_, i) => ({
    id: i,
    name: `item-${i}`,
    tags: ['a', 'b', String(i % 7)],
    nested: { x: i * 1.5, y: `v${i}` },
  })),
);

/**
 * A fixed workload that shares no code with cuda-gatekeeper (JSON.parse, string building and a sort of the
 * same input every time), timed beside the passes. This VM now and then runs slower for a while; the reference
 * then takes longer too, so a low throughput beside a high reference time is the machine, not the code.
 */
function referenceMs(): number {
  const started = performance.now();
  let kept = 0;
  for (let round = 0; round < 12; round++) {
    const items = JSON.parse(REFERENCE_INPUT) as { name: string; nested: { y: string } }[];
    kept += items.map((item) => `${item.name}:${item.nested.y}`).sort().length;
  }
  if (kept !== 36_000) throw new Error('reference workload: wrong count');
  return performance.now() - started;
}

/** RSS after every 2,000 files while streaming: it must stay flat. */
function streamingMemory(
  projects: readonly Project[],
  baseline: Baseline,
  kb: KnowledgeBase,
): { files: number; rssMb: number }[] {
  const samples: { files: number; rssMb: number }[] = [];
  let files = 0;
  let next = 2000;
  projects.forEach((project, i) => {
    gate(parseProject(`s${i}`, project), baseline, kb);
    files += Object.keys(project).length;
    if (files >= next) {
      global.gc?.();
      samples.push({ files, rssMb: round(process.memoryUsage().rss / 2 ** 20) });
      next += 2000;
    }
  });
  return samples;
}

function parseCosts(
  projects: readonly Project[],
): { format: string; files: number; usPerFile: number; usPerKb: number; filesPerSecond: number }[] {
  return (['dockerfile', 'requirements', 'conda'] as const).map((kind) => {
    const name =
      kind === 'dockerfile' ? 'Dockerfile' : kind === 'requirements' ? 'requirements.txt' : 'environment.yml';
    const texts = projects.flatMap((files) => (files[name] === undefined ? [] : [files[name]!]));
    const kilobytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0) / 1024;
    // Median of five rounds: the first rounds also warm up code paths this format alone exercises.
    const rounds = Array.from({ length: 5 }, () => {
      const t0 = performance.now();
      for (const [i, text] of texts.entries()) parseFile(`${i}/${name}`, text, kind);
      return performance.now() - t0;
    }).sort((a, b) => a - b);
    const ms = rounds[2]!;
    return {
      format: kind,
      files: texts.length,
      usPerFile: round((ms * 1000) / texts.length),
      usPerKb: round((ms * 1000) / kilobytes),
      filesPerSecond: Math.round(texts.length / (ms / 1000)),
    };
  });
}

function inChild(mode: Mode, workload: Workload): ModeResult {
  // --single-threaded: no V8 helper threads for garbage collection or compilation, so the figures are one core's.
  const out = execFileSync(
    process.execPath,
    ['--expose-gc', '--single-threaded', fileURLToPath(import.meta.url), '--mode', mode, '--workload', workload],
    {
      encoding: 'utf8',
      maxBuffer: 16 * 2 ** 20,
    },
  );
  return JSON.parse(out) as ModeResult;
}

function summary(passes: readonly Pass[]): {
  filesPerSecond: number;
  min: number;
  max: number;
  ms: number;
  parseMs: number;
} {
  const sorted = [...passes].sort((a, b) => a.ms - b.ms);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  return {
    filesPerSecond: filesPerSecond(median.ms),
    min: filesPerSecond(sorted.at(-1)!.ms),
    max: filesPerSecond(sorted[0]!.ms),
    ms: round(median.ms),
    parseMs: round(median.parseMs),
  };
}

/** Runs of the CLI on the checkout on disk; the median is reported. */
const CLI_RUNS = 3;

/**
 * `cuda-gatekeeper check` on the measured repository written to disk: one cold process per run, as a user or a CI
 * job runs it (startup, walking the checkout, reading, checking and printing the JSON report included).
 */
function cliOnDisk(
  workload: Workload,
  threads = 1,
): { files: number; findings: number; ms: number; minMs: number; maxMs: number; peakRssMb: number } {
  const dir = mkdtempSync(join(tmpdir(), 'cgk-bench-'));
  try {
    const trees =
      workload === 'real'
        ? realProjects(realSources(join(ROOT, 'fixtures', 'corpus')), FILES)
        : Array.from({ length: PROJECTS }, (_, i) => ({ dir: `p${i}`, files: project(i) }));
    for (const tree of trees) {
      mkdirSync(join(dir, tree.dir), { recursive: true });
      for (const [name, text] of Object.entries(tree.files)) writeFileSync(join(dir, tree.dir, name), text);
    }
    // The child reports its own peak RSS (getrusage) on exit, on stderr.
    const preload = `data:text/javascript,process.on('exit',()=>process.stderr.write('\\nmaxrss '+process.resourceUsage().maxRSS+'\\n'))`;
    const runs = Array.from({ length: CLI_RUNS }, () => {
      const started = performance.now();
      const child = spawnSync(
        process.execPath,
        [
          '--import',
          preload,
          join(ROOT, 'bin', 'cuda-gatekeeper.js'),
          'check',
          '--format',
          'json',
          '--baseline',
          join(ROOT, 'baseline.yaml'),
        ],
        {
          cwd: dir,
          encoding: 'utf8',
          maxBuffer: 256 * 2 ** 20,
          env: { ...process.env, CUDA_GATEKEEPER_THREADS: String(threads) },
        },
      );
      const ms = performance.now() - started;
      const rss = /maxrss (\d+)/.exec(child.stderr)?.[1];
      if (child.status !== 1 || !rss)
        throw new Error(`the CLI exited with ${child.status}: ${child.stderr.slice(0, 500)}`);
      const report = JSON.parse(child.stdout) as { filesChecked: number; findings: unknown[] };
      return { ms, files: report.filesChecked, findings: report.findings.length, rssMb: Number(rss) / 1024 };
    }).sort((a, b) => a.ms - b.ms);
    const median = runs[Math.floor(runs.length / 2)]!;
    return {
      files: median.files,
      findings: median.findings,
      ms: round(median.ms),
      minMs: round(runs[0]!.ms),
      maxMs: round(runs.at(-1)!.ms),
      peakRssMb: round(Math.max(...runs.map((run) => run.rssMb))),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function measureWorkload(workload: Workload): { result: Record<string, unknown>; rows: string[][] } {
  const whole = inChild('whole', workload);
  const byProject = inChild('project', workload);
  const cli = cliOnDisk(workload, 1);
  // The same check on every core (src/cli/threads.ts; the CLI's own default needs four cores and 1,500 files).
  const cores = availableParallelism();
  const cliAll = cores > 1 ? cliOnDisk(workload, cores) : undefined;
  if (cliAll && cliAll.findings !== cli.findings) throw new Error('the CLI on all cores disagrees with one thread');
  const all = [whole.cold, ...whole.warm, byProject.cold, ...byProject.warm];
  if (new Set(all.map((run) => run.findings)).size !== 1) throw new Error('passes disagree on the findings');
  const measured =
    workload === 'real'
      ? realProjects(realSources(join(ROOT, 'fixtures', 'corpus')), FILES).map((service) => service.files)
      : Array.from({ length: PROJECTS }, (_, i) => project(i));
  const files = FILES;
  const megabytes = round(
    measured.reduce((sum, project) => sum + Object.values(project).reduce((s, text) => s + text.length, 0), 0) /
      2 ** 20,
  );
  const warmWhole = summary(whole.warm);
  const warmProject = summary(byProject.warm);
  const samples = byProject.samples ?? [];
  const perFormat = byProject.perFormat ?? [];
  const result = {
    workload,
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version },
    files,
    megabytes,
    findings: whole.cold.findings,
    whole: {
      warm: warmWhole,
      cold: { filesPerSecond: filesPerSecond(whole.cold.ms), ms: round(whole.cold.ms) },
      referenceMs: whole.referenceMs,
      rssBeforeMb: whole.rssBeforeMb,
      rssPeakMb: whole.cold.peakRssMb,
      parsedAgain: whole.cold.parsedAgain,
    },
    project: {
      warm: warmProject,
      cold: { filesPerSecond: filesPerSecond(byProject.cold.ms), ms: round(byProject.cold.ms) },
      referenceMs: byProject.referenceMs,
      rssSamples: samples,
    },
    perFormat,
    cli: { ...cli, filesPerSecond: Math.round(cli.files / (cli.ms / 1000)) },
    ...(cliAll
      ? { cliAllCores: { ...cliAll, threads: cores, filesPerSecond: Math.round(cliAll.files / (cliAll.ms / 1000)) } }
      : {}),
    target: {
      filesPerSecond: TARGET,
      wholeWarm: warmWhole.filesPerSecond >= TARGET,
      projectWarm: warmProject.filesPerSecond >= TARGET,
    },
  };

  const verdict = (ok: boolean): string => (ok ? 'met' : 'NOT met');
  const rows = [
    ['measure', 'value'],
    [
      workload === 'real' ? 'files (real: fixtures/corpus, byte for byte)' : 'files (SYNTHETIC projects × 5)',
      `${files} (${megabytes} MiB, ${result.findings} findings)`,
    ],
    [
      'whole repo, warm (median of 7)',
      `${warmWhole.filesPerSecond} files/s (range ${warmWhole.min}–${warmWhole.max}; ${warmWhole.ms} ms; files parsed twice: ${whole.cold.parsedAgain})`,
    ],
    ['whole repo, cold (first pass)', `${result.whole.cold.filesPerSecond} files/s (${result.whole.cold.ms} ms)`],
    ['peak RSS, whole repo (first pass, as a CLI run)', `${result.whole.rssPeakMb} MiB`],
    [
      'project by project, warm (median of 7)',
      `${warmProject.filesPerSecond} files/s (range ${warmProject.min}–${warmProject.max}; ${warmProject.ms} ms, parse ${warmProject.parseMs} ms)`,
    ],
    [
      'project by project, cold (first pass)',
      `${result.project.cold.filesPerSecond} files/s (${result.project.cold.ms} ms)`,
    ],
    ['RSS while streaming', samples.map((sample) => `${sample.files}: ${sample.rssMb}`).join(', ') + ' MiB'],
    ...perFormat.map((row) => [
      `parse ${row.format} (warm)`,
      `${row.usPerFile} µs/file, ${row.usPerKb} µs/KB (${row.filesPerSecond} files/s)`,
    ]),
    [
      'CLI on the checkout on disk, one thread (cold process, median of 3)',
      `${cli.ms} ms (range ${cli.minMs}–${cli.maxMs}; ${result.cli.filesPerSecond} files/s, ${cli.findings} findings), peak RSS ${cli.peakRssMb} MiB`,
    ],
    [
      `CLI on the checkout on disk, all ${cores} cores (CUDA_GATEKEEPER_THREADS=${cores})`,
      cliAll
        ? `${cliAll.ms} ms (range ${cliAll.minMs}–${cliAll.maxMs}; ${round(cliAll.files / (cliAll.ms / 1000))} files/s, same findings), peak RSS ${cliAll.peakRssMb} MiB`
        : 'one core: not measured',
    ],
    [
      'reference workload beside the warm passes (not our code)',
      `${whole.referenceMs} ms in the whole-repository child, ${byProject.referenceMs} ms in the project child (higher: the machine ran slower)`,
    ],
    [
      'target >= 20,000 files/s, one core',
      `project by project (warm): ${verdict(result.target.projectWarm)}; whole repo (warm): ${verdict(result.target.wholeWarm)}`,
    ],
  ];
  return { result, rows };
}

function main(): void {
  const real = measureWorkload('real');
  // The Dockerfile scanner's share: real Dockerfiles it reads itself, and those left to dockerfile-ast as a whole.
  const dockerfiles = realSources(join(ROOT, 'fixtures', 'corpus')).filter((source) => source.kind === 'dockerfile');
  const fallback = dockerfiles.filter((source) => !scanPlainDockerfile(source.text)).map((source) => source.name);
  real.rows.push([
    'Dockerfiles left to dockerfile-ast whole (real files)',
    `${fallback.length} of ${dockerfiles.length}${fallback.length ? ` (${fallback.join(', ')})` : ''}`,
  ]);
  real.result.dockerfileFallback = { files: dockerfiles.length, fallback };
  // Real lock files of large projects (fixtures/locks, 0.4–2.4 MB each, byte for byte): parse throughput, median of 5.
  const locks: { name: string; bytes: number; ms: number; mbPerS: number }[] = [];
  const lockDir = join(ROOT, 'fixtures', 'locks');
  for (const file of readdirSync(lockDir).filter((name) => name.endsWith('.gz'))) {
    const text = gunzipSync(readFileSync(join(lockDir, file))).toString('utf8');
    const path = file.slice(0, -3).split('__').at(-1)!;
    const kind = classifyPath(path)!;
    parseFile(path, text, kind);
    const times: number[] = [];
    for (let run = 0; run < 5; run++) {
      const started = performance.now();
      parseFile(path, text, kind);
      times.push(performance.now() - started);
    }
    const ms = times.sort((a, b) => a - b)[2]!;
    const bytes = Buffer.byteLength(text);
    locks.push({ name: file.slice(0, -3), bytes, ms: round(ms), mbPerS: round(bytes / 1e6 / (ms / 1000)) });
  }
  for (const lock of locks)
    real.rows.push([`parse real ${lock.name} (${round(lock.bytes / 1e6)} MB)`, `${lock.ms} ms, ${lock.mbPerS} MB/s`]);
  const totalBytes = locks.reduce((sum, lock) => sum + lock.bytes, 0);
  const totalMs = locks.reduce((sum, lock) => sum + lock.ms, 0);
  const slowest = Math.min(...locks.map((lock) => lock.mbPerS));
  real.rows.push([
    'real locks: target >= 20 MB/s',
    `${round(totalBytes / 1e6 / (totalMs / 1000))} MB/s over ${locks.length} locks (${round(totalBytes / 1e6)} MB); slowest ${slowest} MB/s: ${slowest >= 20 ? 'met' : 'missed'}`,
  ]);
  real.result.locks = locks;
  const synthetic = measureWorkload('synthetic');
  const rows = [...real.rows, ['', ''], ...synthetic.rows.map(([name, value]) => [`${name} [synthetic]`, value!])];
  const width = Math.max(...rows.map((row) => row[0]!.length));
  process.stdout.write(`${rows.map((row) => `${row[0]!.padEnd(width)}  ${row[1]}`).join('\n')}\n`);
  mkdirSync(join(ROOT, 'bench-results'), { recursive: true });
  writeFileSync(
    join(ROOT, 'bench-results', 'engine.json'),
    `${JSON.stringify({ real: real.result, synthetic: synthetic.result }, null, 2)}\n`,
  );
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

const modeFlag = process.argv.indexOf('--mode');
if (modeFlag >= 0) measureMode(process.argv[modeFlag + 1] === 'project' ? 'project' : 'whole');
else main();
