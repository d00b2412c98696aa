/**
 * The plain-Dockerfile scan (src/parsers/dockerfile/instructions.ts) is a fast path: for every file it accepts it
 * must read exactly what dockerfile-ast reads. These properties compare the two on the fixtures, generated
 * Dockerfiles and mutated real ones (FUZZ_RUNS per property, as in fuzz.test.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  readWithDockerfileAst,
  scanPlainDockerfile,
  type InstructionView,
} from '../../src/parsers/dockerfile/instructions.js';
import { parseDockerfile } from '../../src/parsers/dockerfile/parse.js';
import { SourceText } from '../../src/parsers/source.js';
import { fastPathProperties } from '../support/fast-path.js';
import { codeBlock } from '../support/code-block.js';

const READ = new Set(['FROM', 'COPY', 'ADD', 'ARG', 'ENV']);

/** Everything parse.ts reads from an instruction (arguments only where it reads them). */
function describeView(text: string, view: InstructionView): unknown {
  const keyword = view.keyword.toUpperCase();
  const base = { keyword, span: view.span, lines: [view.fromLine, view.toLine] };
  if (!READ.has(keyword)) return base;
  const flagNames = new Set(['platform', 'from', 'chown', 'link']);
  for (const match of text.slice(view.span.start, view.span.end).matchAll(/--([A-Za-z-]*)/g)) flagNames.add(match[1]!);
  return {
    ...base,
    args: view.args(),
    flags: [...flagNames].sort().map((name) => [name, view.flag(name)]),
    properties: keyword === 'ARG' || keyword === 'ENV' ? view.properties() : [],
    json: view.jsonStrings(),
  };
}

/** The scan either declines or agrees with dockerfile-ast on every instruction. */
function agrees(text: string): boolean {
  const scanned = scanPlainDockerfile(text);
  if (!scanned) return false;
  const reference = readWithDockerfileAst(text, new SourceText('Dockerfile', text));
  expect(reference.escape).toBe('\\');
  expect(scanned.map((view) => describeView(text, view))).toEqual(
    reference.instructions.map((view) => describeView(text, view)),
  );
  return true;
}

const WORDS = [
  'nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04',
  'python:3.11-slim',
  'AS',
  'as',
  'build',
  '--platform=linux/amd64',
  '--platform=$BUILDPLATFORM',
  '--from=build',
  '--chown=1000:1000',
  '--link',
  '--mount=type=cache,target=/root/.cache',
  'pip',
  'install',
  '-r',
  'requirements.txt',
  'torch==2.3.1+cu121',
  '--extra-index-url',
  'https://download.pytorch.org/whl/cu121',
  '&&',
  'A=1',
  'CUDA=12.1',
  'PATH=/usr/local/cuda/bin:$PATH',
  '${CUDA}',
  '$CUDA',
  'X',
  'a',
  '.',
  './',
  '/app/',
  '#',
  'x=',
  '=y',
  '--',
  'a--b',
  '--x--',
  'é',
  '[',
  '"a"',
  'LIST="8.0;8.6;9.0"',
  "V='12.1'",
  'Q=""',
  'R="a b"',
  'S="a"b',
  "T='a\"'",
  '"',
];
const KEYWORDS = [
  'FROM',
  'RUN',
  'ARG',
  'ENV',
  'COPY',
  'ADD',
  'CMD',
  'WORKDIR',
  'LABEL',
  'run',
  'From',
  'ONBUILD',
  'EXPOSE',
  'HEALTHCHECK',
];
const blank = fc.constantFrom(' ', '  ', '\t', ' \t');
const line = fc
  .tuple(
    fc.constantFrom('', ' ', '\t'),
    fc.constantFrom(...KEYWORDS),
    fc.array(fc.tuple(blank, fc.constantFrom(...WORDS)), { maxLength: 6 }),
    fc.constantFrom('', ' ', '  '),
  )
  .map(
    ([indent, keyword, words, trailing]) =>
      `${indent}${keyword}${words.map(([space, word]) => `${space}${word}`).join('')}${trailing}`,
  );
const continuation = fc.constantFrom(
  ' \\\n',
  '\\\n',
  ' \\  \n',
  ' \\\n# a comment\n',
  ' \\\n\n',
  ' \\\n   # indented comment\n',
);
const instruction = fc
  .tuple(
    line,
    fc.array(
      fc.tuple(continuation, fc.array(fc.tuple(blank, fc.constantFrom(...WORDS)), { minLength: 1, maxLength: 4 })),
      { maxLength: 3 },
    ),
  )
  .map(
    ([first, rest]) =>
      first + rest.map(([cont, words]) => cont + words.map(([space, word]) => `${space}${word}`).join('')).join(''),
  );
const dockerfile = fc
  .array(
    fc.oneof(
      instruction,
      fc.constantFrom('# comment', '', '   ', '# syntax=docker/dockerfile:1'),
      // Heredocs and their terminators, in any order: opened, closed, indented, never closed.
      fc.constantFrom('RUN <<EOF', 'RUN <<-EOF bash', 'COPY <<"X" /y', 'RUN a <<EOF <<X', 'EOF', '\tEOF', ' EOF', 'X'),
    ),
    {
      minLength: 1,
      maxLength: 12,
    },
  )
  .map((lines) => `${lines.join('\n')}\n`);

describe('the plain-Dockerfile scan', () => {
  fastPathProperties('dockerfile', 'dockerfile-ast', dockerfile, agrees, { generated: 0.45, mutated: 0.6 });

  it('declines what it does not handle, and the parser then uses dockerfile-ast', () => {
    for (const text of [
      '# escape=`\nFROM a\n',
      '# syntax=docker/dockerfile:1\n# ESCAPE=`\nFROM a\n',
      '\n# escape=\\\nFROM a\n',
      'FROM a\r\nRUN b\r\n',
      'RUN a \\\n',
      '\ufeffFROM a\n',
    ]) {
      expect(scanPlainDockerfile(text), text).toBeUndefined();
    }
  });

  it('reads an escape line after the first instruction as the comment it is to Docker and dockerfile-ast', () => {
    expect(agrees('FROM a\n# escape=`\nRUN pip install torch \\\n  numpy\n')).toBe(true);
  });

  it('reads heredocs as dockerfile-ast does: the body to its terminator belongs to the instruction', () => {
    for (const text of [
      'FROM a\nRUN <<EOF\npip install torch==2.6.0\nEOF\nENV A=1\n',
      'FROM a\nRUN bash -ex <<"EOF"\nFROM b\n  EOF\nEOF\nARG X=1\n',
      'FROM a\nRUN <<-EOT bash\n\tpip install torch\n\tEOT\nCOPY b /c\n',
      "FROM a\nRUN <<A cat > /x && <<'B' cat > /y\na\nA\nb\nB\nENV C=d\n",
      'FROM a\nCOPY <<EOF /etc/pip.conf\n[global]\nEOF\nRUN true\n',
      'FROM a\nRUN --mount=type=cache,target=/root \\\n    python3 - <<PY\nprint(1)\nPY\nFROM b\n',
      'FROM a\nONBUILD RUN <<EOF\necho\nEOF\nENV A=1\n',
      'FROM a\nRUN echo "<<EOF" x<<EOF\nENV A=1\n',
      'FROM a\nRUN <<EOF\nnever ends\n',
    ]) {
      expect(agrees(text), text).toBe(true);
    }
  });

  it('reads instructions outside the plain subset with dockerfile-ast one at a time, as the whole-file parse reads them', () => {
    for (const text of [
      'ENV A="b c"\n',
      'ENV A b "c"\n',
      'FROM "a"\n',
      'COPY a--b -- c\n',
      'COPY ["a", "b"]\n',
      'ENV A=1 \\\n  B=2\n',
      codeBlock`
        FROM a
        ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0+PTX"
        RUN pip install x
      `,
      'FROM a\nENV PATH="/home/user/.local/bin:$PATH" \\\n    HOME=/home/user \\\n    # a comment line\n    PIP_NO_CACHE_DIR=1\nENV http_proxy=\nARG LIST="7.0 7.5"\n',
    ]) {
      expect(agrees(text), text).toBe(true);
    }
    const quoted = parseDockerfile('Dockerfile', 'ARG CUDA="12.1.1"\nFROM nvidia/cuda:${CUDA}-devel-ubuntu22.04\n');
    expect(quoted.images[0]?.reference).toBe('nvidia/cuda:12.1.1-devel-ubuntu22.04');
  });

  it('leaves a quote after a comment line inside ARG/ENV to the whole-file parse (fuzz:ci counterexample, seed -1978343521)', () => {
    const text =
      'ARG \\\n# a comment\n # --mount=type=cache,target=/root/.cache \\\n "a"\trequirements.txt\nFROM nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04\n';
    expect(agrees(text)).toBe(false); // declined, so the reader is dockerfile-ast's whole-file parse
    expect(parseDockerfile('Dockerfile', text).images[0]?.reference).toBe('nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04');
  });

  it('reads parser directives as Docker does, in both readers (issue 26: dockerfile-ast lost the FROM after a directive-like comment)', () => {
    const image = 'FROM nvidia/cuda:11.0.3-cudnn8-devel-ubuntu20.04\n';
    for (const first of [
      '# C=&a #UDA 11.0.3 needs >= 450.51.06 (Table 3); the 11.x floor 450.80.02 is for 11.1+ code.\n',
      '# \u{1F600}=x\n',
      '# \u{1F600} a=b # c=d\n',
      '# syntax=docker/dockerfile:1 # x=y\n',
      '#check=skip=all\n# escape=`\n',
    ]) {
      const text = `${first}${image}`;
      const reference = readWithDockerfileAst(text, new SourceText('Dockerfile', text));
      expect(
        reference.instructions.map((view) => view.keyword),
        JSON.stringify(first),
      ).toEqual(['FROM']);
      expect(parseDockerfile('Dockerfile', text).images[0]?.reference, JSON.stringify(first)).toBe(
        'nvidia/cuda:11.0.3-cudnn8-devel-ubuntu20.04',
      );
    }
    // The escape directive counts only in the directive block at the top; the backtick then continues lines.
    const backtick =
      '# syntax=docker/dockerfile:1\n# escape=`\nFROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nRUN pip install `\n  torch==2.5.1\n';
    expect(readWithDockerfileAst(backtick, new SourceText('Dockerfile', backtick)).escape).toBe('`');
    expect(parseDockerfile('Dockerfile', backtick).packages.map((pkg) => pkg.name)).toEqual(['torch']);
    const late = '# a comment first\n# escape=`\nFROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n';
    expect(readWithDockerfileAst(late, new SourceText('Dockerfile', late)).escape).toBe('\\');
  });
});
