import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { scanToml } from '/work/main/dist/src/parsers/toml-scan.js';
import { parseToml } from '/work/main/dist/src/parsers/toml.js';
for (const f of process.argv.slice(2)) {
  const text = readFileSync(f, 'utf8');
  const s0 = performance.now(); const fast = scanToml(text); const s1 = performance.now();
  const slow = parseToml(text); const s2 = performance.now();
  console.log(f.slice(0,60), fast ? 'scanned' : 'DECLINED', fast ? isDeepStrictEqual(fast, slow.root) : '', (s1-s0).toFixed(1), (s2-s1).toFixed(1));
}
