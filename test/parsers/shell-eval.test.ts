/**
 * The pure shell subset build files use to compute a CUDA tag (shell-eval.ts), and the variables a RUN sets for the
 * commands after it (shell.ts). Expected outputs are what bash 5 with GNU coreutils 9, GNU sed 4.9 and mawk give.
 */
import { describe, expect, it } from 'vitest';
import { evaluatePipeline } from '../../src/parsers/shell-eval.js';
import { splitCommands, type Resolver } from '../../src/parsers/shell.js';
import { Mapped } from '../../src/parsers/mapped.js';

const run = (...stages: string[][]) => evaluatePipeline(stages.map((words) => ({ words })));

describe('evaluatePipeline', () => {
  it.each([
    [
      [
        ['echo', '12.1.1'],
        ['cut', '-d.', '-f1,2'],
        ['tr', '-d', '.'],
      ],
      '121',
    ],
    [
      [
        ['echo', '12.1.1'],
        ['cut', '-d', '.', '-f', '1-2'],
      ],
      '12.1',
    ],
    [
      [
        ['echo', '11.8.0'],
        ['sed', 's/\\.//g'],
        ['cut', '-c1-3'],
      ],
      '118',
    ],
    [
      [
        ['echo', '11.8.0'],
        ['sed', '-e', 's/\\([0-9]*\\)\\.\\([0-9]*\\).*/cu\\1\\2/'],
      ],
      'cu118',
    ],
    [
      [
        ['echo', '11.8.0'],
        ['sed', '-E', 's/^([0-9]+)\\.([0-9]+).*$/\\1\\2/'],
      ],
      '118',
    ],
    [
      [
        ['echo', '12.4.1'],
        ['awk', '-F.', '{print $1$2}'],
      ],
      '124',
    ],
    [
      [
        ['echo', '12.4.1'],
        ['awk', '-F', '.', '{print "cu"$1$2}'],
      ],
      'cu124',
    ],
    [
      [
        ['echo', '12.4.1'],
        ['awk', '-F.', '{print $1, $2}'],
      ],
      '12 4',
    ],
    [[['printf', 'cu%s%s', '12', '4']], 'cu124'],
    [
      [
        ['printf', '%s\\n', '12.4'],
        ['tr', '.', '_'],
      ],
      '12_4',
    ],
    [
      [
        ['echo', '-n', 'CU124'],
        ['tr', '[:upper:]', '[:lower:]'],
      ],
      'cu124',
    ],
    [
      [
        ['echo', 'CU124'],
        ['tr', 'A-Z', 'a-z'],
      ],
      'cu124',
    ],
    [
      [
        ['echo', '12.4.1'],
        ['cut', '-f1', '-d.'],
      ],
      '12',
    ],
    [
      [
        ['echo', 'abc'],
        ['cut', '-d.', '-f2'],
      ],
      'abc',
    ],
    [
      [
        ['echo', '12.4.1'],
        ['head', '-c', '4'],
      ],
      '12.4',
    ],
  ])('%j gives %s', (stages, expected) => expect(run(...stages)).toEqual({ value: expected }));

  it.each([
    [[['cat', '/etc/cuda']], /cat is not evaluated/],
    [
      [
        ['echo', '1'],
        ['python3', '-c', 'print(1)'],
      ],
      /python3 is not evaluated/,
    ],
    [
      [
        ['echo', '1'],
        ['sed', '-i', 's/a/b/'],
      ],
      /sed -i/,
    ],
    [
      [
        ['echo', '1'],
        ['sed', 's/\\w/x/'],
      ],
      /not a substitution/,
    ],
    [
      [
        ['echo', '1'],
        ['awk', '{ if ($1) print $1 }'],
      ],
      /not a print/,
    ],
    [
      [
        ['echo', '1'],
        ['tr', '-s', ' '],
      ],
      /tr -s/,
    ],
    [
      [
        ['echo', '1'],
        ['cut', '-d', '..', '-f1'],
      ],
      /cut -f 1/,
    ],
    // A class name that only an object's prototype knows (it once threw a TypeError out of the parser).
    [
      [
        ['echo', 'CU124'],
        ['tr', '[:constructor:]', 'a'],
      ],
      /tr '\[:constructor:\]'/,
    ],
  ])('%j is not evaluated, with the reason', (stages, reason) => {
    const result = run(...stages);
    expect(result).toHaveProperty('unsupported');
    expect((result as { unsupported: string }).unsupported).toMatch(reason);
  });
});

describe('variables a RUN script sets', () => {
  const args: Resolver = (name) => (name === 'CUDA_VERSION' ? { value: Mapped.of('11.8.0', 0) } : undefined);
  const words = (script: string) =>
    splitCommands(Mapped.of(script, 0), args).map((command) => command.map((word) => word.unresolved ?? word.text));

  it('are known to the commands after them, computed or literal', () => {
    expect(words('CU=$(echo $CUDA_VERSION | cut -d. -f1,2 | tr -d .) && echo cu$CU')).toEqual([
      ['CU=118'],
      ['echo', 'cu118'],
    ]);
    expect(words('export TAG=cu`echo ${CUDA_VERSION} | sed "s/\\.//g" | cut -c1-3`; echo $TAG')).toEqual([
      ['export', 'TAG=cu118'],
      ['echo', 'cu118'],
    ]);
    expect(words('A=x B=y\necho $A$B')).toEqual([
      ['A=x', 'B=y'],
      ['echo', 'xy'],
    ]);
  });

  it('the word of ${V:-word} and ${V:+word} loses its quotes, as the shell and BuildKit remove them', () => {
    // mosaicml/composer docker/Dockerfile: ARG BASE_IMAGE=${CUDA_VERSION:+"nvidia/cuda:${CUDA_VERSION}-…"}
    expect(words('echo ${CUDA_VERSION:+"nvidia/cuda:${CUDA_VERSION}-devel"} ${NOPE:-\'a$b\'} ${NOPE:-x\\"y}')).toEqual([
      ['echo', 'nvidia/cuda:11.8.0-devel', 'a$b', 'x"y'],
    ]);
  });

  it('set conditionally, by a command we do not run, or only for one command, stay unresolved with the reason', () => {
    expect(words('if [ -f x ]; then CU=cu118; fi; echo $CU').at(-1)![1]).toMatch(/set conditionally/);
    // A branch that always runs sets it for certain; one set earlier in the branch is known later in it.
    expect(words('if true; then CU=cu118; fi; echo $CU').at(-1)![1]).toBe('cu118');
    expect(words('if [ -f x ]; then CU=cu118 && echo $CU; fi').at(-2)![1]).toBe('cu118');
    expect(words('test -f x || CU=cu118; echo $CU').at(-1)![1]).toMatch(/set conditionally/);
    expect(words('CU=$(cat /etc/cu) && echo $CU').at(-1)![1]).toMatch(/cat is not evaluated/);
    expect(words('CU=cu118 pip install x && echo $CU').at(-1)![1]).toMatch(/not defined by an ARG or ENV/);
    expect(words('CU=$(echo $UNKNOWN | tr -d .) && echo $CU').at(-1)![1]).toMatch(/\$UNKNOWN is not defined/);
  });
});

describe('variables a RUN script sets on every path (issue 50, item 6)', () => {
  const args: Resolver = (name) => (name === 'V' ? { value: Mapped.of('2.3.0', 0) } : undefined);
  /** Each command as its words, and the alternative it was read with. */
  const read = (script: string) =>
    splitCommands(Mapped.of(script, 0), args).map((command) => ({
      words: command.map((word) => word.unresolved ?? word.text),
      when: command[0]?.alternative,
    }));

  it('an if with an else setting it in every branch: the next command is read once per value', () => {
    expect(
      read('if [ "$(uname -m)" = x86_64 ]; then CU=cu118; else CU=cu121; fi && pip install torch /whl/$CU').slice(-2),
    ).toEqual([
      { words: ['pip', 'install', 'torch', '/whl/cu118'], when: "when $CU is 'cu118'" },
      { words: ['pip', 'install', 'torch', '/whl/cu121'], when: "when $CU is 'cu121'" },
    ]);
  });

  it("a for loop over known words: its body read once with each; over a command or a pattern: said to be the loop's", () => {
    // The body's first command keeps its `do`, as every block's first command keeps its keyword here.
    const commands = read('for f in a.txt b.txt; do pip install -r $f; done');
    expect(commands.filter((command) => command.words.includes('pip'))).toEqual([
      { words: ['do', 'pip', 'install', '-r', 'a.txt'], when: "when $f is 'a.txt'" },
      { words: ['do', 'pip', 'install', '-r', 'b.txt'], when: "when $f is 'b.txt'" },
    ]);
    expect(
      read('for f in 1 2 3 4 5 6 7 8 9; do pip install -r $f; done')
        .find((command) => command.words.includes('pip'))!
        .words.at(-1),
    ).toBe('$f is the variable of a for loop of this RUN over 9 values, more than the 8 a command is read with');
    for (const script of [
      'for f in $(ls requirements*.txt); do pip install -r $f; done',
      'for f in requirements/*.txt; do pip install -r $f; done',
      'for f; do pip install -r $f; done',
    ])
      expect(
        read(script)
          .find((command) => command.words.includes('pip'))!
          .words.at(-1),
      ).toMatch(
        /^\$f is the variable of a for loop of this RUN over .*, whose values are only known when the build runs$/,
      );
  });

  it('a variable `read` sets is said to come from its input, not to be undefined', () => {
    for (const [script, name] of [
      ['read -ra PKGS <<< "$V" && pip install $PKGS', 'PKGS'],
      ['read -r -p "name? " PKG && pip install $PKG', 'PKG'],
      ['cat pkgs.txt | while read pkg; do pip install $pkg; done', 'pkg'],
    ] as const)
      expect(
        read(script)
          .find((command) => command.words.includes('install'))!
          .words.at(-1),
      ).toBe(`$${name} is set by read in this RUN, from input only known when the build runs`);
  });

  it('elif branches count when an else closes them; equal values are read once', () => {
    const commands = read('if a; then X=1\nelif b; then X=2\nelse X=1\nfi\necho $X');
    expect(commands.filter((command) => command.words[0] === 'echo')).toEqual([
      { words: ['echo', '1'], when: "when $X is '1'" },
      { words: ['echo', '2'], when: "when $X is '2'" },
    ]);
  });

  it('`cmd && X=a || X=b`: each value where the test is not known', () => {
    expect(read("[ -f /opt/torch ] && X='torch=='$V'.*' || X='torch'; pip install $X").slice(-2)).toEqual([
      { words: ['pip', 'install', 'torch==2.3.0.*'], when: "when $X is 'torch==2.3.0.*'" },
      { words: ['pip', 'install', 'torch'], when: "when $X is 'torch'" },
    ]);
  });

  it('`test && X=a || X=b` where the known values decide the test: the branch it takes (a real Dockerfile)', () => {
    // huggingface/transformers' GPU image: an assignment exits 0, so `||` runs only after a false test.
    expect(read("[ ${#V} -gt 0 ] && X='torch=='$V'.*' || X='torch'; pip install $X").at(-1)).toEqual({
      words: ['pip', 'install', 'torch==2.3.0.*'],
    });
    expect(read("[ ${#V} -eq 0 ] && X='torch=='$V'.*' || X='torch'; pip install $X").at(-1)).toEqual({
      words: ['pip', 'install', 'torch'],
    });
    expect(read('[ ${#V} -lt 3 ] && X=a || X=b; echo $X').at(-1)).toEqual({ words: ['echo', 'b'] });
  });

  it('two such variables: each combination', () => {
    const commands = read('[ -n "$A" ] && X=1 || X=2; [ -n "$B" ] && Y=a || Y=b; echo $X$Y');
    expect(commands.filter((command) => command.words[0] === 'echo').map((command) => command.words[1])).toEqual([
      '1a',
      '1b',
      '2a',
      '2b',
    ]);
  });

  it('a path that may not set it (no else, a case, a loop, `X=1 || X=2`, a value only known at build time) stays unresolved', () => {
    for (const script of [
      'if a; then X=1; fi; echo $X',
      'if a; then X=1; elif b; then X=2; fi; echo $X',
      'case $A in a) X=1;; *) X=2;; esac; echo $X',
      'for a in 1 2; do X=$a; done; echo $X',
      'test -f x || X=1; echo $X',
      'if a; then X=1; else X=$(cat f); fi; echo $X',
      'if a; then X=1; else Y=2; fi; echo $X',
      'if a; then if b; then X=1; fi; else X=2; fi; echo $X',
    ])
      expect(read(script).at(-1)!.words[1], script).toMatch(/set conditionally|only known/);
  });

  it('more than eight combinations are not read one by one', () => {
    const script = ['A', 'B', 'C', 'D'].map((name) => `[ -n "$${name}" ] && ${name}=1 || ${name}=2;`).join(' ');
    expect(read(`${script} echo $A$B$C$D`).at(-1)!.words[1]).toMatch(/set conditionally/);
  });
});
