/**
 * The import boundaries of ARCHITECTURE.md are lint rules (eslint.config.js); these deliberate violations must fail
 * `npm run lint`, and the same imports from a place that may make them must pass.
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { ROOT } from './harness.js';

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
      "import type { GitHub } from '../../src/github/types.js';\nexport type X = GitHub;\n",
      'never imports a host',
    ],
    [
      'src/parsers/probe.ts',
      "import { run } from '../cli/main.js';\nexport const x = run;\n",
      'Nothing imports src/cli',
    ],
    [
      'src/github/probe.ts',
      "import { run } from '../cli/main.js';\nexport const x = run;\n",
      'Nothing imports src/cli',
    ],
    [
      'rules/cuda-mismatch/probe.ts',
      "import pytorch from '../../src/knowledge/data/pytorch.json' with { type: 'json' };\nexport const x = pytorch;\n",
      'through its queries',
    ],
    [
      'rules/cuda-mismatch/probe.ts',
      "import type { KnowledgeBase } from '../../src/knowledge/index.js';\nexport const f = (kb: KnowledgeBase) => kb.data.pytorch;\n",
      'not kb.data',
    ],
    ['src/parsers/probe.ts', "import { gate } from '../gate.js';\nexport const x = gate;\n", 'Parsers come first'],
    [
      'src/render/probe.ts',
      "import { webHandler } from '../web/handler.js';\nexport const x = webHandler;\n",
      'never imports a host',
    ],
    [
      'src/parsers/probe.ts',
      "import { parseCuda } from '../knowledge/versions.js';\nexport const x = parseCuda;\n",
      'Parsers come first',
    ],
    [
      'src/sandbox/probe.ts',
      "import { OrgConfigCache } from '../github/config.js';\nexport const x = OrgConfigCache;\n",
      "never import the App's GitHub code",
    ],
    [
      'src/web/probe.ts',
      "import type { GitHub } from '../github/types.js';\nexport type X = GitHub;\n",
      "never import the App's GitHub code",
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
      await problems('src/github/probe.ts', "import { gate } from '../gate.js';\nexport const x = gate;\n"),
    ).toEqual([]);
    expect(
      await problems(
        'rules/cuda-mismatch/probe.ts',
        "import { cite } from '../../src/knowledge/index.js';\nexport const x = cite;\n",
      ),
    ).toEqual([]);
    expect(
      await problems(
        'src/parsers/probe.ts',
        "import { compareDotted } from '../util/dotted.js';\nexport const x = compareDotted;\n",
      ),
    ).toEqual([]);
    expect(
      await problems(
        'src/sandbox/probe.ts',
        "import { layerBaselines } from '../baseline/layers.js';\nexport const x = layerBaselines;\n",
      ),
    ).toEqual([]);
  }, 30_000);
});
