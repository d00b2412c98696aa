/**
 * The benchmark's real workload: a monorepo built from the real files of fixtures/corpus (the shared corpus,
 * byte for byte), laid out as ../shared/bench/make-corpus.mjs lays it out so the two measure the same tree:
 * services/gNN/svcNNNNN/{Dockerfile,requirements.txt,environment.yml}, the sources taken round robin, at most one
 * file of each kind per service and 100 services per group.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FileKind } from '../../src/parsers/facts.js';
import { formatOf } from '../../src/parsers/formats.js';

/** The kind of a corpus file from its flattened name (as make-corpus.mjs reads it). */
function kindOf(name: string): FileKind | undefined {
  if (/\.md$/i.test(name) || name === 'expect.json') return undefined;
  if (/dockerfile/i.test(name)) return 'dockerfile';
  if (/\.(txt|pip)$/i.test(name)) return 'requirements';
  if (/\.ya?ml$/i.test(name)) return 'conda';
  return undefined;
}

export interface RealSource {
  readonly name: string;
  readonly kind: FileKind;
  readonly text: string;
}

/** The corpus files, sorted by name. */
export function realSources(corpus: string): RealSource[] {
  return readdirSync(corpus)
    .sort()
    .flatMap((name) => {
      const kind = kindOf(name);
      return kind ? [{ name, kind, text: readFileSync(join(corpus, name), 'utf8') }] : [];
    });
}

/** `count` files as projects (one service directory each): path in the project → text. */
export function realProjects(
  sources: readonly RealSource[],
  count: number,
): { dir: string; files: Record<string, string> }[] {
  const services: { dir: string; files: Record<string, string> }[] = [];
  let open: { dir: string; files: Record<string, string> } | undefined;
  for (let i = 0; i < count; i++) {
    const source = sources[i % sources.length]!;
    const name = formatOf(source.kind).fileName;
    if (!open || name in open.files) {
      const n = services.length;
      open = {
        dir: `services/g${String(Math.floor(n / 100)).padStart(3, '0')}/svc${String(n).padStart(5, '0')}`,
        files: {},
      };
      services.push(open);
    }
    open.files[name] = source.text;
  }
  return services;
}
