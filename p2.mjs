import { readFileSync } from 'node:fs';
import { parseFile } from '/work/main/dist/src/parsers/index.js';
import { scanToml } from '/work/main/dist/src/parsers/toml-scan.js';
const text = readFileSync(process.argv[2], 'utf8');
for (let i=0;i<3;i++) scanToml(text);
let s=performance.now(); for (let i=0;i<5;i++) scanToml(text); console.log('scan', ((performance.now()-s)/5).toFixed(1));
for (let i=0;i<2;i++) parseFile('uv.lock', text, 'uv-lock');
s=performance.now(); for (let i=0;i<5;i++) parseFile('uv.lock', text, 'uv-lock'); console.log('parse', ((performance.now()-s)/5).toFixed(1));
const r = parseFile('uv.lock', text, 'uv-lock'); console.log(r.packages.length, r.contexts.length, r.problems);
