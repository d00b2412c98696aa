/**
 * The CLI as its users expect from ESLint, ruff and hadolint: help per command, --quiet, --fail-on,
 * --max-warnings, standard input, --output, colour only on a terminal, and a baseline that names things that do
 * not exist refused with exit 2. The bin is run as a process where the terminal or standard input matter.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/harness.js';
import { binProcess, CLI_BIN, runCli as cli } from '../support/cli.js';
import { codeBlock } from '../support/code-block.js';

function repo(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'cgk-flags-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const WARNING_ONLY = { 'requirements.txt': 'torch>=2.0\n' };
const MISMATCH = codeBlock`
  FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
  RUN pip install torch==2.3.0+cu118 --index-url https://download.pytorch.org/whl/cu118
`;

describe('help', () => {
  it.each([
    ['check', '--format FORMAT'],
    ['plan', '--cuda X.Y'],
    ['rules', 'default severity'],
  ])('%s --help describes the command and exits 0', (command, text) => {
    for (const flag of ['--help', '-h']) {
      const result = cli(ROOT, [command, flag]);
      expect(result.code).toBe(0);
      expect(result.out).toContain(`Usage: cuda-gatekeeper ${command}`);
      expect(result.out).toContain(text);
    }
  });

  it('every option check accepts is in its help', () => {
    const help = cli(ROOT, ['check', '--help']).out;
    const source = readFileSync(join(ROOT, 'src', 'cli', 'main.ts'), 'utf8');
    const block = source.slice(
      source.indexOf('function checkFlags('),
      source.indexOf('const format', source.indexOf('function checkFlags(')),
    );
    const options = [...block.matchAll(/^\s+'?([a-z-]+)'?: \{ type:/gm)].map((match) => match[1]!);
    expect(options.length).toBeGreaterThan(10);
    for (const option of options) expect(help).toContain(`--${option}`);
  });

  it('the last line counts the findings by rule, the most frequent first, when there are several rules', () => {
    const last = cli(join(ROOT, 'fixtures', 'repos', 'demo'), ['check', '.'])
      .out.trim()
      .split('\n')
      .at(-1)!;
    expect(last).toMatch(
      /^3 files checked: \d+ errors?, \d+ warnings?, \d+ notices?; by rule: [a-z-]+ \d+(, [a-z-]+ \d+)+/,
    );
    const counts = [...last.matchAll(/([a-z-]+) (\d+)(?=,| \()/g)].map((match) => Number(match[2]));
    expect(counts).toEqual([...counts].sort((a, b) => b - a));
  });

  it('--fail-on lists every level it accepts', () => {
    const help = cli(ROOT, ['check', '--help']).out;
    const line = help.split('\n').find((text) => text.includes('--fail-on LEVEL'))!;
    for (const level of ['error', 'warning', 'notice', 'never']) {
      expect(line).toContain(level);
      expect(cli(ROOT, ['check', '--fail-on', level, 'fixtures/repos/demo']).code).not.toBe(2);
    }
  });
});

describe('exit status thresholds', () => {
  it('--fail-on: error (default) passes warnings, warning fails on them, never always passes', () => {
    const dir = repo(WARNING_ONLY);
    expect(cli(dir, ['check', '.']).code).toBe(0);
    expect(cli(dir, ['check', '.', '--fail-on', 'warning']).code).toBe(1);
    expect(cli(dir, ['check', '.', '--fail-on', 'notice']).code).toBe(1);
    const errors = repo({ Dockerfile: MISMATCH });
    expect(cli(errors, ['check', '.']).code).toBe(1);
    expect(cli(errors, ['check', '.', '--fail-on', 'never']).code).toBe(0);
  });

  it('--max-warnings N fails when there are more than N warnings (ESLint semantics)', () => {
    const dir = repo(WARNING_ONLY);
    expect(cli(dir, ['check', '.', '--max-warnings', '0']).code).toBe(1);
    expect(cli(dir, ['check', '.', '--max-warnings', '1']).code).toBe(0);
    expect(cli(dir, ['check', '.', '--max-warnings', '1', '--fail-on', 'never']).code).toBe(0);
  });

  it.each([
    [['--fail-on', 'warnings'], 'unknown --fail-on "warnings"'],
    [['--max-warnings=-1'], '--max-warnings needs a whole number'],
    [['--max-warnings', 'ten'], '--max-warnings needs a whole number'],
  ])('bad values are usage errors: %j', (flags, message) => {
    const result = cli(repo(WARNING_ONLY), ['check', '.', ...flags]);
    expect(result.code).toBe(2);
    expect(result.err).toContain(message);
  });
});

describe('--quiet', () => {
  it('shows error-level findings only, in every format; the summary still counts everything', () => {
    const dir = repo({ Dockerfile: MISMATCH, 'requirements.txt': 'torch>=2.0\n' });
    const loud = cli(dir, ['check', '.']);
    const quiet = cli(dir, ['check', '.', '--quiet']);
    expect(loud.out).toContain('warning:');
    expect(quiet.out).not.toContain('warning:');
    expect(quiet.out).toContain('error:');
    expect(quiet.out).toContain('1 warning');
    const json = JSON.parse(cli(dir, ['check', '.', '--quiet', '--format', 'json']).out) as {
      findings: { severity: string }[];
    };
    expect(json.findings.length).toBeGreaterThan(0);
    expect(json.findings.every((finding) => finding.severity === 'error')).toBe(true);
    expect(quiet.code).toBe(1);
  });
});

describe('standard input', () => {
  it('check - --type reads one file from standard input', () => {
    const result = cli(repo({}), ['check', '-', '--type', 'dockerfile'], MISMATCH);
    expect(result.code).toBe(1);
    expect(result.out).toMatch(/^<stdin>:2:\d+: error: .*\[cuda-mismatch\]$/m);
  });

  it('--stdin-filename gives the kind and the path; includes are read from the disk relative to it', () => {
    const dir = repo({ 'svc/base.txt': '--index-url https://download.pytorch.org/whl/cu118\n' });
    const result = cli(
      dir,
      ['check', '-', '--stdin-filename', 'svc/requirements.txt'],
      codeBlock`
        -r base.txt
        torch==2.3.0+cu121
      `,
    );
    expect(result.out).toContain('svc/requirements.txt:2:1');
    expect(result.out).toContain('[cuda-mismatch]');
    expect(result.code).toBe(1);
  });

  it('an install of a file the checkout does not have is a notice: for a folder, a file named, standard input', () => {
    const dockerfile = codeBlock`
      FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
      RUN pip install -r serving/requirements.txt
    `;
    const dir = repo({ 'svc/Dockerfile': dockerfile });
    const notice =
      /^svc\/Dockerfile:2:\d+: notice: serving\/requirements.txt is installed here, but no file of the repository is there \(looked for svc\/serving\/requirements.txt, serving\/requirements.txt\): what it installs is not checked \[missing-include\]$/m;
    for (const args of [
      ['check', '.'],
      ['check', 'svc/Dockerfile'],
    ]) {
      const result = cli(dir, [...args, '--baseline', 'none']);
      expect(result.out, args.join(' ')).toMatch(notice);
      expect(result.code).toBe(0);
    }
    const piped = cli(dir, ['check', '-', '--stdin-filename', 'svc/Dockerfile', '--baseline', 'none'], dockerfile);
    expect(piped.out).toMatch(notice);
    // Once the file is there, it is what the line installs, and it is checked.
    mkdirSync(join(dir, 'svc', 'serving'));
    writeFileSync(join(dir, 'svc', 'serving', 'requirements.txt'), 'torch==2.3.0+cu118\n');
    const present = cli(dir, ['check', '.', '--baseline', 'none']);
    expect(present.out).not.toContain('[missing-include]');
    expect(present.out).toContain('svc/serving/requirements.txt:1:1');
  });

  it.each([
    [['-'], 'standard input needs --type'],
    [['-', 'Dockerfile'], 'checked alone'],
    [['-', '--type', 'requirements', '--fix'], '--fix and --changed-since need files'],
    [['.', '--stdin-filename', 'x.txt'], '--stdin-filename goes with "-"'],
    [['-', '--stdin-filename', '../outside/requirements.txt'], 'is outside'],
  ])('mistakes are one line and exit 2: %j', (args, message) => {
    const result = cli(repo({}), ['check', ...args], 'torch==2.6.0\n');
    expect(result.code).toBe(2);
    expect(result.err).toContain(message);
  });

  it('the bin reads file descriptor 0', () => {
    const result = binProcess(['check', '-', '--type', 'dockerfile'], { cwd: repo({}), input: MISMATCH });
    expect(result.code).toBe(1);
    expect(result.out).toContain('[cuda-mismatch]');
  });
});

describe('--output', () => {
  it('writes the report to the file and nothing to standard output', () => {
    const dir = repo({ Dockerfile: MISMATCH });
    const result = cli(dir, ['check', '.', '--format', 'sarif', '--output', 'report.sarif']);
    expect(result.code).toBe(1);
    expect(result.out).toBe('');
    expect((JSON.parse(readFileSync(join(dir, 'report.sarif'), 'utf8')) as { version: string }).version).toBe('2.1.0');
  });

  it('writes nothing when the baseline is invalid (no 0-byte SARIF for the upload step)', () => {
    const dir = repo({
      Dockerfile: MISMATCH,
      'b.yaml': codeBlock`
        cuda:
          allowed: ["12.7"]
      `,
    });
    const result = cli(dir, ['check', '.', '--baseline', 'b.yaml', '--format', 'sarif', '--output', 'report.sarif']);
    expect(result.code).toBe(2);
    expect(existsSync(join(dir, 'report.sarif'))).toBe(false);
  });

  it('a file it cannot write is one line and exit 2', () => {
    const result = cli(repo({ Dockerfile: MISMATCH }), ['check', '.', '--output', 'no/such/dir/report.txt']);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/^cuda-gatekeeper: cannot write no\/such\/dir\/report.txt: ENOENT\n$/);
  });
});

describe('colour', () => {
  const bin = CLI_BIN;
  it('is off when standard output is not a terminal', () => {
    const env = { ...process.env, FORCE_COLOR: undefined, NO_COLOR: undefined };
    const piped = binProcess(['check', '.'], { cwd: repo({ Dockerfile: MISMATCH }), env });
    expect(piped.out).toContain('error:');
    expect(piped.out).not.toContain('\x1b[');
  });

  it('FORCE_COLOR turns it on into a pipe and 0/false off, over NO_COLOR (as Node and chalk read it)', () => {
    const dir = repo({ Dockerfile: MISMATCH });
    const piped = (env: Record<string, string | undefined>) =>
      binProcess(['check', '.'], { cwd: dir, env: { ...process.env, NO_COLOR: undefined, ...env } }).out;
    expect(piped({ FORCE_COLOR: '1' })).toContain('\x1b[31merror');
    expect(piped({ FORCE_COLOR: '', NO_COLOR: '1' })).toContain('\x1b[');
    expect(piped({ FORCE_COLOR: '0' })).not.toContain('\x1b[');
    expect(piped({ FORCE_COLOR: 'false' })).not.toContain('\x1b[');
  });

  // A terminal through script(1) (util-linux; CI installs bsdutils for it).
  const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;
  it.runIf(hasScript)('is on on a terminal, and off there with NO_COLOR', () => {
    const dir = repo({ Dockerfile: MISMATCH });
    const onTerminal = (env: Record<string, string | undefined>): string =>
      spawnSync('script', ['-qec', `${process.execPath} ${bin} check .`, '/dev/null'], {
        cwd: dir,
        encoding: 'utf8',
        env,
      }).stdout;
    const withoutNoColor = { ...process.env, NO_COLOR: undefined };
    expect(onTerminal(withoutNoColor)).toContain('\x1b[');
    const plain = onTerminal({ ...withoutNoColor, NO_COLOR: '1' });
    expect(plain).toContain('error:');
    expect(plain).not.toContain('\x1b[');
  });

  it.runIf(hasScript)(
    'a long check shows its progress on a terminal, rewritten in place and cleared; never in a pipe or with --quiet',
    () => {
      const files: Record<string, string> = {};
      for (let i = 0; i < 400; i++) files[`svc${i}/requirements.txt`] = 'torch==2.5.1\n';
      const dir = repo(files);
      // The line starts after CUDA_GATEKEEPER_PROGRESS_AFTER_MS (a second by default): at once here.
      const env = { ...process.env, CUDA_GATEKEEPER_PROGRESS_AFTER_MS: '0', CUDA_GATEKEEPER_THREADS: '1' };
      const onTerminal = (args: string): string =>
        spawnSync('script', ['-qec', `${process.execPath} ${bin} check . --baseline none ${args}`, '/dev/null'], {
          cwd: dir,
          encoding: 'utf8',
          env,
        }).stdout;
      const shown = onTerminal('');
      const clear = '\r\x1b[K';
      expect(shown).toContain(`${clear}cuda-gatekeeper: `);
      expect(shown).toMatch(/cuda-gatekeeper: [\d,]+ of 400 files read…/);
      expect(shown).toContain(`${clear}400 files checked: 0 errors`); // cleared before the result
      expect(onTerminal('--quiet')).not.toContain('files read…');
      const piped = binProcess(['check', '.', '--baseline', 'none'], { cwd: dir, env });
      expect(piped.err).not.toContain('files read…');
    },
  );
});

describe('small things a user meets first (issue 30)', () => {
  const bin = CLI_BIN;
  it('a reader that stops early (rules | head -1) ends the command quietly, without a stack trace', () => {
    const result = spawnSync('sh', ['-c', `${process.execPath} ${bin} rules | head -1`], { encoding: 'utf8' });
    expect(result.stdout.split('\n').filter(Boolean)).toHaveLength(1);
    expect(result.stderr).toBe('');
  });

  it('a check on the heap-sized worker thread says what the main thread says, in the same order, with its status', () => {
    const dir = repo({ Dockerfile: MISMATCH, 'svc/requirements.txt': 'torch==2.5.1+cu118\n' });
    for (const format of ['text', 'json', 'sarif']) {
      const args = ['check', '.', '--baseline', 'none', '--format', format];
      const worker = binProcess(args, { cwd: dir });
      const main = binProcess(args, { cwd: dir, env: { ...process.env, CUDA_GATEKEEPER_MAIN_THREAD: '1' } });
      expect(worker.code).toBe(1);
      expect(worker).toEqual(main);
    }
    // Standard input is read on the main thread (the pre-commit hook's small checks start sooner there): the same.
    const stdin = binProcess(['check', '-', '--type', 'requirements', '--baseline', 'none'], {
      cwd: dir,
      input: 'torch==2.5.1+cu118\n',
    });
    expect(stdin.code).toBe(1);
    expect(stdin.out).toContain('<stdin>:1:1: error: torch==2.5.1 is a cu118 build');
  });

  it('a check that runs out of memory says so in one line with status 2, not a V8 abort and its stack', () => {
    // 8 MB of heap cannot even hold the CLI's code.
    const result = spawnSync(process.execPath, ['--max-old-space-size=8', CLI_BIN, 'check', '.'], {
      cwd: repo({ Dockerfile: MISMATCH }),
      encoding: 'utf8',
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^cuda-gatekeeper: stopped: .*out of memory\n$/);
  });

  it('an unknown option or command gets the nearest known one', () => {
    expect(cli(ROOT, ['check', '--fial-on', 'x']).err).toContain('unknown option --fial-on (did you mean --fail-on?)');
    expect(cli(ROOT, ['plan', '--cdua', '12.8']).err).toContain('(did you mean --cuda?)');
    expect(cli(ROOT, ['chek']).err).toContain('unknown command "chek" (did you mean check?)');
    expect(cli(ROOT, ['check', '--zzz']).err).toMatch(/unknown option --zzz\n/);
  });

  it('a file outside the working directory is said to be outside, not missing', () => {
    const outside = repo({ Dockerfile: MISMATCH });
    const result = cli(repo({}), ['check', join(outside, 'Dockerfile')]);
    expect(result.code).toBe(2);
    expect(result.err).toContain('is outside');
    expect(result.err).not.toContain('no such file');
  });

  it('an unquoted 12.10 in a baseline is refused at its position: YAML reads it as 12.1', () => {
    const dir = repo({
      '.github/cuda-gatekeeper.yml': codeBlock`
        cuda:
          allowed: ["12.4", 12.10]
      `,
      Dockerfile: MISMATCH,
    });
    const result = cli(dir, ['check', '.']);
    expect(result.code).toBe(2);
    expect(result.err).toContain(
      '.github/cuda-gatekeeper.yml:2:21: error: 12.10 is read by YAML as the number 12.1; write "12.10" in quotes',
    );
  });

  it('a named file is checked with the files that install it (pre-commit passes only the changed one)', () => {
    const dir = repo({
      Dockerfile: codeBlock`
        FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04
        COPY requirements.txt .
        RUN pip install -r requirements.txt
      `,
      'requirements.txt': codeBlock`
        --extra-index-url https://download.pytorch.org/whl/cu118
        torch==2.3.0+cu118
      `,
      'other/requirements.txt': 'numpy==1.26.4\n',
    });
    const result = cli(dir, ['check', 'requirements.txt']);
    expect(result.code).toBe(1);
    expect(result.out).toContain(
      'requirements.txt:2:1: error: torch==2.3.0+cu118 is built for CUDA 11.8, but nvidia/cuda:12.1.1-runtime-ubuntu22.04 sets CUDA 12.1',
    );
    expect(cli(dir, ['check', 'other/requirements.txt'])).toMatchObject({ code: 0 });
  });
});

describe('plan says what a move costs (issue 30)', () => {
  const image = codeBlock`
    FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04
    COPY requirements.txt .
    RUN pip install -r requirements.txt
  `;
  it('a jump past several torch releases says so, and why this one', () => {
    const dir = repo({
      Dockerfile: image,
      'requirements.txt': codeBlock`
        --extra-index-url https://download.pytorch.org/whl/cu121
        torch==2.1.2+cu121
      `,
    });
    const { code, out } = cli(dir, ['plan', '--cuda', '12.8', '--baseline', 'none']);
    expect(code).toBe(0);
    expect(out).toContain(
      'torch==2.1.2+cu121 -> torch==2.7.1+cu128  (a jump of 6 releases, 2.1 to 2.7: torch 2.2, 2.3, 2.4, 2.5, 2.6 have no cu128 build',
    );
  });

  it('a package built for the old torch blocks the move: nothing is written that pip cannot install', () => {
    const requirements = codeBlock`
      --extra-index-url https://download.pytorch.org/whl/cu121
      torch==2.3.1+cu121
      vllm-flash-attn==2.5.9.post1
    `;
    const dir = repo({ Dockerfile: image, 'requirements.txt': requirements });
    const planned = cli(dir, ['plan', '--cuda', '12.4', '--baseline', 'none']);
    expect(planned.out).toContain(
      'not moved (Dockerfile stage 1): vllm-flash-attn==2.5.9.post1 has no release for torch 2.4.1 in the knowledge base',
    );
    cli(dir, ['plan', '--cuda', '12.4', '--write', '--baseline', 'none']);
    expect(readFileSync(join(dir, 'requirements.txt'), 'utf8')).toBe(requirements);
  });
});

describe('a baseline that names what does not exist', () => {
  it.each([
    [
      codeBlock`
        cuda:
          allowed: ["12.4", "12.7"]
      `,
      'b.yaml:2:21: error: cuda.allowed lists CUDA 12.7, which NVIDIA never released [policy-error]',
    ],
    [
      codeBlock`
        packages:
          torch: ["2.6.0", "not a version"]
      `,
      'b.yaml:2:20: error: packages.torch.1: "not a version" is neither a PEP 440 version',
    ],
  ])('is refused with its position and exit 2, for check and plan: %j', (text, message) => {
    const dir = repo({ Dockerfile: MISMATCH, 'b.yaml': text });
    for (const argv of [
      ['check', '.', '--baseline', 'b.yaml'],
      ['plan', '--cuda', '12.8', '--baseline', 'b.yaml'],
    ]) {
      const result = cli(dir, argv);
      expect(result.code).toBe(2);
      expect(result.out).toBe('');
      expect(result.err).toContain(message);
      expect(result.err).toContain('the baseline is invalid; nothing was checked');
    }
  });

  it('an unknown GPU is a warning at its line, and the rest of the baseline applies (issue 47)', () => {
    const dir = repo({ Dockerfile: MISMATCH, 'b.yaml': 'gpus: ["A100", "H900"]\n' });
    const result = cli(dir, ['check', '.', '--baseline', 'b.yaml']);
    expect(result.out).toContain(
      'b.yaml:1:16: warning: gpus lists "H900", which the knowledge base does not know: the GPU checks leave it out',
    );
    expect(result.err).not.toContain('the baseline is invalid');
    expect(result.out).toMatch(/\[cuda-mismatch\]/);
  });

  it('PEP 440 specifiers in packages are accepted', () => {
    const dir = repo({
      'requirements.txt': 'torch==2.6.0\n',
      'b.yaml': codeBlock`
        packages:
          torch: [">=2.6,<2.8", "2.5.1", 2.4]
      `,
    });
    expect(cli(dir, ['check', '.', '--baseline', 'b.yaml']).code).toBe(0);
  });
});
