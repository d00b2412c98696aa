import { parseFile, classifyPath } from '../src/parsers/index.js';
import { readFileSync, readdirSync } from 'node:fs';
const dir = '/work/shared/corpus/';
for (const f of readdirSync(dir)) {
  const kind = classifyPath(f.replace(/^\d+__/, '').replace(/__/g, '/')) ?? (f.endsWith('.txt') ? 'requirements' : 'conda');
  const p = parseFile(f, readFileSync(dir + f, 'utf8'), kind);
  console.log('==', f, kind, 'pk', p.packages.length, 'idx', p.indexes.map(i => i.kind + ':' + i.url + (i.ignoredReason ? '(ignored)' : '')).join(' '), 'probs', p.problems.map(x => p.source.position(x.span.start).line + ':' + x.message));
  for (const pk of p.packages.slice(0, 200)) if (/torch|cuda|nvidia|cupy|xformers|cudnn|flash|tensorflow/.test(pk.name)) console.log('   ', p.source.position(pk.span.start).line, pk.ecosystem, pk.channel ?? '', pk.name, JSON.stringify(pk.specifier), pk.exact ?? '-', pk.localLabel ?? '', pk.build ?? '', pk.url ? 'url' : '');
}
