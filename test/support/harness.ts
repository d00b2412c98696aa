/** Shared helpers for the fixture suites: load a case folder, run the gate, render goldens. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadBaseline, type LoadedBaseline } from '../../src/baseline/load.js';
import { EMPTY_BASELINE } from '../../src/baseline/schema.js';
import { loadFiles } from '../../src/cli/discover.js';
import { classifyPath, kindByContent, yamlByContent } from '../../src/parsers/index.js';
import type { ParsedFile } from '../../src/parsers/facts.js';
import type { Report } from '../../src/finding.js';
import { gate } from '../../src/gate.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import { RULE_IDS } from '../../rules/index.js';

export const ROOT = join(import.meta.dirname, '..', '..');
export const CORPUS = join(ROOT, 'fixtures', 'corpus');

/** Not inputs: goldens, the baseline, and `removed.txt` (paths the change deletes, one per line). */
const NOT_INPUT = /^(expected\.out|baseline\.yaml|README\.md|removed\.txt)$|\.fixed$/;

export interface Case {
  readonly dir: string;
  readonly files: ParsedFile[];
  readonly policy?: LoadedBaseline;
  readonly report: Report;
}

export function inputPaths(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const entry of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(path);
      else if (!NOT_INPUT.test(entry.name)) out.push(path);
    }
  };
  walk('');
  return out.sort();
}

export function runCase(dir: string, files?: ParsedFile[]): Case {
  const baselinePath = join(dir, 'baseline.yaml');
  const policy = existsSync(baselinePath)
    ? loadBaseline('baseline.yaml', readFileSync(baselinePath, 'utf8'), RULE_IDS)
    : undefined;
  // Kinds as the CLI's walk decides them: by name, else a YAML file's content (a Kubernetes manifest).
  const paths = inputPaths(dir);
  const kinds = new Map(
    paths.flatMap((path) => {
      const kind =
        classifyPath(path) ??
        (yamlByContent(path) ? kindByContent(path, readFileSync(join(dir, path), 'utf8')) : undefined);
      return kind ? [[path, kind] as const] : [];
    }),
  );
  // Read as the CLI reads a checkout: includes followed to files whatever their names (a pyproject a RUN copies over
  // another, docker/pyproject.gpu.toml).
  const parsed =
    files ??
    loadFiles(dir, paths, true, { paths, plain: new Set(paths), kinds }, { images: policy?.baseline.images ?? {} })
      .files;
  const removedPath = join(dir, 'removed.txt');
  const removed = existsSync(removedPath) ? readFileSync(removedPath, 'utf8').split('\n').filter(Boolean) : [];
  // The fixture's folder is the repository, as for `cuda-gatekeeper check .` in it.
  const present = new Set(paths);
  const report = gate(parsed, policy?.baseline ?? EMPTY_BASELINE, defaultKnowledgeBase(), {
    ...(policy ? { policy } : {}),
    removed,
    fileExists: (path) => present.has(path),
  });
  return { dir, files: parsed, ...(policy ? { policy } : {}), report };
}

/** `# ERROR` / `# OK` markers: trailing on a line, or alone on a line for the next statement. */
export function markers(file: ParsedFile): { line: number; kind: 'ERROR' | 'OK' }[] {
  const lines = file.source.text.split(/\r?\n/);
  const found: { line: number; kind: 'ERROR' | 'OK' }[] = [];
  lines.forEach((text, index) => {
    const match = /#\s*(ERROR|OK)\b/.exec(text);
    if (!match) return;
    const alone = text.slice(0, match.index).trim() === '' || /^\s*-\s*$/.test(text.slice(0, match.index));
    let line = index + 1;
    if (alone) {
      line = index + 2;
      while (line <= lines.length && /^\s*(#.*)?$/.test(lines[line - 1] ?? '')) line++;
    }
    found.push({ line, kind: match[1] as 'ERROR' | 'OK' });
  });
  return found;
}
