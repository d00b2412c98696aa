import { readFileSync } from 'node:fs';
import { scanBlockYaml } from '/work/main/dist/src/parsers/yaml-block-scan.js';
import { parseFile } from '/work/main/dist/src/parsers/index.js';
const text = readFileSync(process.argv[2], 'utf8');
for (let i=0;i<5;i++) scanBlockYaml(text);
let s=performance.now(); for (let i=0;i<10;i++) scanBlockYaml(text); console.log('scan', ((performance.now()-s)/10).toFixed(1));
for (let i=0;i<3;i++) parseFile('pixi.lock', text, 'pixi-lock');
s=performance.now(); for (let i=0;i<10;i++) parseFile('pixi.lock', text, 'pixi-lock'); console.log('parse', ((performance.now()-s)/10).toFixed(1));
const r = parseFile('pixi.lock', text, 'pixi-lock'); console.log(r.packages.length, r.contexts.length);
