/**
 * The CLI on odd paths and hostile files (issue 16), as a user's shell runs it: the built CLI in a child process.
 * Each case ends with one clear line and exit 2 (never a stack trace, never exit 1, which means "findings"), or
 * with the files read once; nothing a file contains is echoed as a terminal or workflow command.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_BIN, cliProcess as cli } from '../support/cli.js';
import { codeBlock } from '../support/code-block.js';

function repo(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'cgk-odd-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** One line on stderr, no stack frames. */
function oneLine(err: string): void {
  expect(err.trim().split('\n')).toHaveLength(1);
  expect(err).not.toMatch(/\n\s+at /);
}

describe('paths named on the command line', () => {
  it('a Git LFS pointer in place of a requirements file is skipped as one, not read as requirements', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gk-lfs-'));
    writeFileSync(
      join(dir, 'por_requirements.txt'),
      'version https://git-lfs.github.com/spec/v1\noid sha256:918bff60979a1c43dcc0272149b9a20958a1aa9cb5d2e9e71ff6d6b6e4d8e7c1\nsize 1433\n',
    );
    const result = cli(dir, 'check', '.', '--baseline', 'none');
    expect(result.out).not.toContain('parse-error');
    expect(result.err).toContain('por_requirements.txt: skipped: is a Git LFS pointer');
  });

  it('a symbolic link that loops: exit 2, one line', () => {
    const dir = repo();
    symlinkSync('loop', join(dir, 'loop'));
    const result = cli(dir, 'check', 'loop', '--baseline', 'none');
    expect(result.code).toBe(2);
    oneLine(result.err);
    expect(result.err).toContain('loops');
  });

  it('a dangling symbolic link: exit 2, one line', () => {
    const dir = repo();
    symlinkSync('nowhere.txt', join(dir, 'requirements.txt'));
    const result = cli(dir, 'check', 'requirements.txt', '--baseline', 'none');
    expect(result.code).toBe(2);
    oneLine(result.err);
  });

  it.skipIf(process.getuid?.() === 0)('an unreadable directory: exit 2, one line', () => {
    const dir = repo({ 'locked/requirements.txt': 'torch==2.3.0\n' });
    chmodSync(join(dir, 'locked'), 0o000);
    const result = cli(dir, 'check', 'locked', '--baseline', 'none');
    chmodSync(join(dir, 'locked'), 0o755);
    expect(result.code).toBe(2);
    oneLine(result.err);
  });

  it('--changed-since with an option for a ref: exit 2, one line', () => {
    const dir = repo({ 'requirements.txt': 'torch==2.3.0\n' });
    execFileSync('git', ['init', '-q'], { cwd: dir });
    const result = cli(dir, 'check', '--changed-since=--output=x', '--baseline', 'none');
    expect(result.code).toBe(2);
    oneLine(result.err);
    expect(result.err).toContain('"--output=x" is not a git ref');
    // Without "=", the option has no value: a usage error too.
    const ambiguous = cli(dir, 'check', '--changed-since', '--x', '--baseline', 'none');
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.err).toContain("Option '--changed-since' argument is ambiguous");
  });

  it('two links to "." reached through -r includes: every file read once, and the run ends', () => {
    const dir = repo({
      'requirements.txt': codeBlock`
        -r a/requirements-gpu.txt
        torch==2.3.0
      `,
      'requirements-gpu.txt': '-r a/b/requirements.txt\n',
    });
    symlinkSync('.', join(dir, 'a'));
    symlinkSync('.', join(dir, 'b'));
    const result = cli(dir, 'check', '--baseline', 'none', '--format', 'json');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.out).filesChecked).toBe(2);
  });
});

describe('a file the walk finds by its name that is no regular file is not checked, and says so (issue 50, item 7)', () => {
  it('a requirements.txt that is a FIFO, or a link to one or to a device: exit 1, each named, nothing waited on', () => {
    const dir = repo({ 'ok/requirements.txt': 'numpy==1.26.4\n' });
    mkdirSync(join(dir, 'fifo'));
    execFileSync('mkfifo', [join(dir, 'fifo', 'requirements.txt')]);
    mkdirSync(join(dir, 'linked'));
    execFileSync('mkfifo', [join(dir, 'linked', 'pipe')]);
    symlinkSync('pipe', join(dir, 'linked', 'requirements.txt'));
    mkdirSync(join(dir, 'device'));
    symlinkSync('/dev/zero', join(dir, 'device', 'requirements.txt'));
    const result = cli(dir, 'check', '.');
    expect(result.code).toBe(1);
    for (const path of ['fifo/requirements.txt', 'linked/requirements.txt'])
      expect(result.err).toContain(`${path}: skipped: is not a regular file\n`);
    expect(result.err).toContain('device/requirements.txt: skipped: is a link to a file outside the repository\n');
    expect(result.err).toContain('3 CUDA-relevant files were not checked');
    expect(result.out).toContain('1 file checked');
  });

  it('a requirements.txt linked to a file inside the repository is checked; one linked out of it is not', () => {
    const outside = repo({ 'cu118.txt': 'torch==2.3.0+cu118\n' });
    const dir = repo({ 'constraints/cu118.txt': 'torch==2.3.0+cu118\n' });
    mkdirSync(join(dir, 'svc'));
    symlinkSync('../constraints/cu118.txt', join(dir, 'svc', 'requirements.txt'));
    const inside = cli(dir, 'check', '.');
    expect(inside.out).toContain('svc/requirements.txt:1:1: error: torch==2.3.0 is a cu118 build');
    expect(inside.code).toBe(1);
    mkdirSync(join(dir, 'out'));
    symlinkSync(join(outside, 'cu118.txt'), join(dir, 'out', 'requirements.txt'));
    const out = cli(dir, 'check', '.');
    expect(out.err).toContain('out/requirements.txt: skipped: is a link to a file outside the repository');
  });

  it('a FIFO named on the command line: exit 2, one line', () => {
    const dir = repo();
    execFileSync('mkfifo', [join(dir, 'requirements.txt')]);
    const result = cli(dir, 'check', 'requirements.txt');
    expect(result.code).toBe(2);
    oneLine(result.err);
    expect(result.err).toContain('requirements.txt is not a regular file');
  });
});

describe('the baseline file is read like every other file', () => {
  it('a FIFO is refused at once, not waited on', () => {
    const dir = repo({ 'requirements.txt': 'torch==2.3.0\n' });
    execFileSync('mkfifo', [join(dir, 'baseline.yaml')]);
    const result = cli(dir, 'check', '--baseline', 'baseline.yaml');
    expect(result.code).toBe(2);
    expect(result.err).toBe('cuda-gatekeeper: cannot read baseline baseline.yaml: it is not a regular file\n');
  });

  it('a link to /dev/zero is refused', () => {
    const dir = repo();
    symlinkSync('/dev/zero', join(dir, 'baseline.yaml'));
    const result = cli(dir, 'check', '--baseline', 'baseline.yaml');
    expect(result.code).toBe(2);
    oneLine(result.err);
  });

  it('.github/cuda-gatekeeper.yml that links out of the tree is refused, and its content never printed', () => {
    const outside = repo({ 'secret.yml': 'cuda: { allowed: [SECRET-TOKEN-123] }\n' });
    const dir = repo({ 'requirements.txt': 'torch==2.3.0\n' });
    mkdirSync(join(dir, '.github'));
    symlinkSync(join(outside, 'secret.yml'), join(dir, '.github', 'cuda-gatekeeper.yml'));
    const result = cli(dir, 'check');
    expect(result.code).toBe(2);
    expect(result.err).toBe(
      'cuda-gatekeeper: cannot read baseline .github/cuda-gatekeeper.yml: it is a link to a file outside the repository\n',
    );
    expect(result.out + result.err).not.toContain('SECRET');
  });

  it('a baseline over 256 KiB is refused', () => {
    const dir = repo({ 'big.yaml': `# ${'x'.repeat(300 * 1024)}\n` });
    expect(cli(dir, 'check', '--baseline', 'big.yaml')).toMatchObject({
      code: 2,
      err: 'cuda-gatekeeper: cannot read baseline big.yaml: it is larger than 256 KiB\n',
    });
  });
});

describe('text output escapes control characters', () => {
  it('a file name that would start a workflow command or a terminal sequence is printed escaped', () => {
    const name = 'x\n::error file=a::owned\u001b[31m';
    const dir = repo({ [`${name}/requirements.txt`]: 'torch==2.3.0+cu999\n' });
    const result = cli(dir, 'check', '--baseline', 'none');
    expect(result.code).toBe(1);
    expect(result.out).not.toMatch(/^::error/m);
    expect(result.out).not.toContain('\u001b');
    expect(result.out).toContain('x\\n::error file=a::owned\\u001b[31m/requirements.txt');
  });
});

describe('--baseline-ref: the policy of the base branch, not of the change', () => {
  it("a change that switches a rule off for itself is still checked with the base branch's rules", () => {
    const dir = repo({
      '.github/cuda-gatekeeper.yml': 'cuda: { allowed: ["12.4"] }\n',
      'requirements.txt': codeBlock`
        torch==2.5.1+cu124
        --extra-index-url https://download.pytorch.org/whl/cu124
      `,
    });
    const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
    git('init', '-q', '-b', 'main');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'add', '.');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'base');
    writeFileSync(join(dir, '.github', 'cuda-gatekeeper.yml'), 'rules: { cuda-not-allowed: off }\n');
    writeFileSync(
      join(dir, 'requirements.txt'),
      codeBlock`
        torch==2.5.1+cu121
        --extra-index-url https://download.pytorch.org/whl/cu121
      `,
    );
    expect(cli(dir, 'check', '--format', 'json').out).not.toContain('cuda-not-allowed');
    const fromBase = cli(dir, 'check', '--baseline-ref', 'main', '--format', 'json');
    expect(fromBase.code).toBe(1);
    expect(fromBase.out).toContain('cuda-not-allowed');
    // A ref without the file uses the bundled default and says so; an unknown ref is a usage error.
    const empty = execFileSync(
      'git',
      [
        '-c',
        'user.name=t',
        '-c',
        'user.email=t@t',
        'commit-tree',
        '4b825dc642cb6eb9a060e54bf8d69288fbee4904',
        '-m',
        'empty',
      ],
      {
        cwd: dir,
        encoding: 'utf8',
      },
    ).trim();
    expect(cli(dir, 'check', '--baseline-ref', empty).err).toContain(
      `no .github/cuda-gatekeeper.yml at ${empty}; using the bundled baseline.yaml`,
    );
    expect(cli(dir, 'check', '--baseline-ref', 'nope')).toMatchObject({
      code: 2,
      err: 'cuda-gatekeeper: unknown git ref "nope"\n',
    });
  });
});

describe('edges a hostile input reaches stay bounded (issue 42, item 5)', () => {
  it('`check -` of an endless standard input stops at the size limit: exit 2, one line', () => {
    const zero = openSync('/dev/zero', 'r');
    try {
      const run = spawnSync(process.execPath, [CLI_BIN, 'check', '-', '--type', 'requirements'], {
        stdio: [zero, 'pipe', 'pipe'],
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(run.signal).toBeNull(); // it ended by itself, not killed at the timeout
      expect(run.status).toBe(2);
      oneLine(run.stderr);
      expect(run.stderr).toContain('standard input is larger than 32 MiB: not read');
    } finally {
      closeSync(zero);
    }
  });

  it('`check -` of a requirements file over 1 MiB names the limit: exit 2, one line', () => {
    const run = spawnSync(process.execPath, [CLI_BIN, 'check', '-', '--type', 'requirements'], {
      input: `${'# padding\n'.repeat(150_000)}torch==2.5.1\n`,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(2);
    oneLine(run.stderr);
    expect(run.stderr).toContain('<stdin>: standard input is 1.4 MiB, over the 1 MiB size limit: not checked');
  });

  it('`fleet import` of 40,000 malformed nvidia-smi logs answers each at its line, in seconds', () => {
    const dir = repo({ 'fleet.xml': '<nvidia_smi_log>\n<gpu id="0">\n</gpu>\n</nvidia_smi_log>\n'.repeat(40_000) });
    const run = spawnSync(process.execPath, [CLI_BIN, 'fleet', 'import', 'fleet.xml'], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 30_000, // was past 60 s: each problem's line was counted from the start of the file
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(run.signal).toBeNull();
    expect(run.status).toBe(2);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(40_001);
    expect(lines[39_999]).toBe("fleet.xml:159997:1: error: this log's <driver_version> is missing");
  });

  it('a repository baseline whose _extends names a file is a policy error at its position: exit 2', () => {
    const dir = repo({
      '.github/cuda-gatekeeper.yml': '_extends: shared/base.yaml\ncuda:\n  allowed: ["12.4"]\n',
      'requirements.txt': 'torch==2.5.1\n',
    });
    const run = cli(dir, 'check', '.');
    expect(run.code).toBe(2);
    expect(run.err).toContain(
      '.github/cuda-gatekeeper.yml:1:11: error: _extends can only name the organisation\'s config repository (".github" or "<owner>/.github"), not "shared/base.yaml" [policy-error]',
    );
  });
});
