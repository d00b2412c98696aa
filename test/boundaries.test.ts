/**
 * The import boundaries of ARCHITECTURE.md are lint rules (eslint.config.js); these deliberate violations must fail
 * `npm run lint`, and the same imports from a place that may make them must pass.
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/harness.js';
import { codeBlock } from './support/code-block.js';

const eslint = new ESLint({ cwd: ROOT });

async function problems(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages
    .filter((message) => message.severity === 2)
    .map((message) => `${message.ruleId}: ${message.message}`);
}

describe('import boundaries', () => {
  it.each([
    [
      'rules/cuda-mismatch/probe.ts',
      codeBlock`
        import type { GitHub } from '../../src/github/types.js';
        export type X = GitHub;
      `,
      'never imports a host',
    ],
    [
      'src/parsers/probe.ts',
      codeBlock`
        import { run } from '../cli/main.js';
        export const x = run;
      `,
      'Nothing imports src/cli',
    ],
    [
      'src/github/probe.ts',
      codeBlock`
        import { run } from '../cli/main.js';
        export const x = run;
      `,
      'Nothing imports src/cli',
    ],
    [
      'rules/cuda-mismatch/probe.ts',
      codeBlock`
        import pytorch from '../../src/knowledge/data/pytorch.json' with { type: 'json' };
        export const x = pytorch;
      `,
      'through its queries',
    ],
    [
      'rules/cuda-mismatch/probe.ts',
      codeBlock`
        import type { KnowledgeBase } from '../../src/knowledge/index.js';
        export const f = (kb: KnowledgeBase) => kb.data.pytorch;
      `,
      'not kb.data',
    ],
    [
      'src/parsers/probe.ts',
      codeBlock`
        import { gate } from '../gate.js';
        export const x = gate;
      `,
      'Parsers come first',
    ],
    [
      'src/render/probe.ts',
      codeBlock`
        import { webHandler } from '../web/handler.js';
        export const x = webHandler;
      `,
      'never imports a host',
    ],
    [
      'src/parsers/probe.ts',
      codeBlock`
        import { parseCuda } from '../knowledge/versions.js';
        export const x = parseCuda;
      `,
      'Parsers come first',
    ],
    [
      'src/sandbox/probe.ts',
      codeBlock`
        import { OrgConfigCache } from '../github/config.js';
        export const x = OrgConfigCache;
      `,
      "never import the App's GitHub code",
    ],
    [
      'src/web/probe.ts',
      codeBlock`
        import type { GitHub } from '../github/types.js';
        export type X = GitHub;
      `,
      "never import the App's GitHub code",
    ],
    [
      'src/baseline/probe.ts',
      codeBlock`
        import { readFileSync } from 'node:fs';
        export const x = readFileSync;
      `,
      'The engine is pure',
    ],
    [
      'src/baseline/probe.ts',
      codeBlock`
        import { RULES } from '../../rules/index.js';
        export const x = RULES;
      `,
      'know the rules as data',
    ],
    [
      'src/fleet/probe.ts',
      codeBlock`
        import type { GitHub } from '../github/types.js';
        export type X = GitHub;
      `,
      'never imports a host',
    ],
    [
      'src/images/probe.ts',
      codeBlock`
        import { run } from '../cli/main.js';
        export const x = run;
      `,
      'never imports a host',
    ],
    [
      'src/action/probe.ts',
      codeBlock`
        import type { GitHub } from '../github/types.js';
        export type X = GitHub;
      `,
      "never imports the App's or the server's code",
    ],
  ])(
    '%s: %s is refused',
    async (path, code, message) => {
      expect((await problems(path, code)).join('\n')).toContain(message);
    },
    30_000,
  );

  it('the same kinds of import where they are allowed pass', async () => {
    expect(
      await problems(
        'src/baseline/probe.ts',
        codeBlock`
          import { RULE_IDS } from '../../rules/ids.js';
          export const x = RULE_IDS;
        `,
      ),
    ).toEqual([]);
    expect(
      await problems(
        'src/github/probe.ts',
        codeBlock`
          import { gate } from '../gate.js';
          export const x = gate;
        `,
      ),
    ).toEqual([]);
    expect(
      await problems(
        'rules/cuda-mismatch/probe.ts',
        codeBlock`
          import { cite } from '../../src/knowledge/index.js';
          export const x = cite;
        `,
      ),
    ).toEqual([]);
    expect(
      await problems(
        'src/parsers/probe.ts',
        codeBlock`
          import { compareDotted } from '../util/dotted.js';
          export const x = compareDotted;
        `,
      ),
    ).toEqual([]);
    expect(
      await problems(
        'src/sandbox/probe.ts',
        codeBlock`
          import { layerBaselines } from '../baseline/layers.js';
          export const x = layerBaselines;
        `,
      ),
    ).toEqual([]);
  }, 30_000);
});

describe('every folder is inside the boundaries', () => {
  it('each folder of src/ and rules/ is the target of at least one zone (a new folder gets its place)', async () => {
    // @ts-expect-error -- the lint configuration is plain JavaScript, read here as data.
    const imported: { default: { rules?: Record<string, unknown> }[] } = await import('../eslint.config.js');
    const config = imported.default;
    const targets = new Set<string>();
    for (const block of config) {
      const rule = block.rules?.['import-x/no-restricted-paths'] as
        | [string, { zones: { target: string | string[] }[] }]
        | undefined;
      for (const zone of rule?.[1].zones ?? [])
        for (const target of [zone.target].flat()) targets.add(target.replace(/^\.\//, ''));
    }
    const { readdirSync } = await import('node:fs');
    const { join } = await import('node:path');
    const folders = [
      'rules',
      ...readdirSync(join(ROOT, 'src'), { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => `src/${entry.name}`),
    ];
    // src/cli is the one folder only the command imports: its boundary is that nothing else imports it.
    expect(folders.filter((folder) => folder !== 'src/cli' && !targets.has(folder))).toEqual([]);
  });
});

describe('no import cycle, type-only imports included', () => {
  it('the modules of src/ and rules/ form no cycle (import-x/no-cycle does not follow `import type`)', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const { dirname, join, relative, resolve } = await import('node:path');
    const { stronglyConnected } = await import('../src/util/graph.js');
    const modules: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('.ts')) modules.push(path);
      }
    };
    walk(join(ROOT, 'src'));
    walk(join(ROOT, 'rules'));
    const known = new Set(modules);
    const edges = new Map(
      modules.map((module) => {
        const text = readFileSync(module, 'utf8');
        const targets = [...text.matchAll(/^(?:import|export)\b[^;]*?from\s+'(\.[^']+)'/gms)]
          .map((match) => resolve(dirname(module), match[1]!.replace(/\.js$/, '.ts')))
          .filter((target) => known.has(target));
        return [module, targets] as const;
      }),
    );
    const component = stronglyConnected(modules, (module) => edges.get(module) ?? []);
    const sizes = new Map<number, string[]>();
    for (const [module, id] of component) sizes.set(id, [...(sizes.get(id) ?? []), relative(ROOT, module)]);
    expect([...sizes.values()].filter((members) => members.length > 1)).toEqual([]);
  });
});
