/**
 * The parsers alone (not part of `npm run bench`): every file of a folder parsed RUNS times (default 30) in one
 * process, kind by kind, and the best time of each kind printed with its throughput. A file's kind is what its name
 * says, else what its content says (fixtures/bench-corpus names its files `NNN__owner__repo__path`). Compare two
 * checkouts' parsers on the same files, alternating: `node <checkout>/dist/test/bench/parse.js fixtures/bench-corpus`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FileKind } from '../../src/parsers/facts.js';
import { classifyPath, parseFile, sniffKind } from '../../src/parsers/index.js';

const folder = process.argv[2] ?? 'fixtures/bench-corpus';
const runs = Number(process.env.RUNS ?? 30);
const byKind = new Map<FileKind, { path: string; text: string }[]>();
for (const name of readdirSync(folder).sort()) {
  const text = readFileSync(join(folder, name), 'utf8');
  const path = name.split('__').slice(3).join('/') || name;
  const kind = classifyPath(name) ?? classifyPath(path) ?? sniffKind(text);
  if (!kind) continue;
  const list = byKind.get(kind) ?? [];
  list.push({ path, text });
  byKind.set(kind, list);
}
for (const [kind, files] of byKind) {
  const bytes = files.reduce((sum, file) => sum + file.text.length, 0);
  let best = Number.POSITIVE_INFINITY;
  for (let run = 0; run < runs; run++) {
    const start = performance.now();
    for (const file of files) parseFile(file.path, file.text, kind);
    best = Math.min(best, performance.now() - start);
  }
  process.stdout.write(
    `${kind}: ${files.length} files, ${(bytes / 1e3).toFixed(0)} KB, best ${best.toFixed(1)} ms (${(bytes / 1e3 / best).toFixed(1)} MB/s)\n`,
  );
}
