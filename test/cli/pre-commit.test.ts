/**
 * The pre-commit hook as pre-commit runs it: Debian's `pre-commit` installs this repository's hook (it packs the
 * repository and installs the tarball with npm, with no build step) into a scratch repository, and a commit of a
 * broken Dockerfile is refused. The hook's `files` pattern is read by Python's `re`, as pre-commit reads it, and
 * must select exactly the paths the CLI classifies.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { classifyPath, HOOK_FILES, yamlByContent } from '../../src/parsers/index.js';
import { ROOT } from '../support/harness.js';
import { codeBlock } from '../support/code-block.js';

const hooks = parse(readFileSync(join(ROOT, '.pre-commit-hooks.yaml'), 'utf8')) as {
  id: string;
  entry: string;
  files: string;
  language: string;
}[];
const hook = hooks.find((candidate) => candidate.id === 'cuda-gatekeeper')!;

/** Paths people have: the real files' repository paths, the fixtures, and names around each rule of classifyPath. */
function paths(): string[] {
  const corpus = JSON.parse(readFileSync(join(ROOT, 'fixtures', 'corpus', 'expect.json'), 'utf8')) as Record<
    string,
    { path: string }
  >;
  const real = Object.values(corpus).map((entry) => entry.path);
  const fixtures = execFileSync('git', ['ls-files', 'fixtures'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
  const names = [
    'Dockerfile',
    'dockerfile',
    'Dockerfile.gpu',
    'Dockerfile-cuda',
    'Dockerfile_dev',
    'Dockerfile.md',
    'Dockerfile.txt',
    'Dockerfile.j2',
    'Dockerfile.cuda.yaml',
    'Dockerfile.python.dockerignore',
    'cuda.Dockerfile',
    'docker/InternVL_Dockerfile',
    'Qwen2VL-Dockerfile',
    'MyDockerfile',
    'backend.dockerfile',
    'Containerfile',
    'Containerfile.rocm',
    'x.Containerfile',
    'Dockerfiles',
    'NotADockerfile',
    'requirements.txt',
    'requirements-dev.in',
    'requirement.txt',
    'dev-requirements.txt',
    'test_requirements_lnx_cu12.txt',
    'requirements.md',
    'requirements.txt.bak',
    'constraints.txt',
    'constraints-cuda.in',
    'my-constraints.txt',
    'environment.yml',
    'environment.yaml',
    'environment-gpu.yml',
    'conda.yml',
    'conda-recipe.yaml',
    'gpu-environment.yml',
    'x.conda.yml',
    'environments.yml',
    'condarc.yml',
    'env.yml',
    'env.gpu.yml',
    'pytorch-env.yml',
    'envs.yaml',
    'environ.yml',
    'docker-compose.yml',
    'mkdocs.yml',
    'config.yaml',
    'main.py',
    'README.md',
    'notes.txt',
    'pyproject.toml',
    'pyproject.toml.bak',
    'my-pyproject.toml',
    'uv.lock',
    'uv.lock.bak',
    'pixi.toml',
    'envs/gpu/pixi.toml',
    'pixi.toml.orig',
    'pixi.lock',
    'poetry.lock',
    'services/api/poetry.lock',
    'conda-lock.yml',
    'ci/linux.conda-lock.yml',
    'conda-linux-64.lock.yml',
    'conda-lock.yaml',
    'my-conda-lock.yml.bak',
    'poetry.lock',
  ];
  const folders = [
    '',
    'docker/',
    'requirements/',
    'requirements/cuda/',
    'conda/',
    '.conda/',
    'envs/',
    'environments/',
    'conda-envs/',
    'ci/conda/recipes/',
    'src/',
    'Requirements/',
    'CONDA/',
  ];
  const generated = folders.flatMap((folder) =>
    names.flatMap((name) => [`${folder}${name}`, `${folder}${name.toUpperCase()}`]),
  );
  return [...new Set([...real, ...fixtures, ...generated])];
}

describe('pre-commit hook', () => {
  it('is generated from the classification and runs the check on candidates only', () => {
    expect(hook).toMatchObject({
      entry: 'bin/cuda-gatekeeper.js check --ignore-unknown --staged',
      language: 'script',
      files: HOOK_FILES,
      // A commit that only deletes a file passes the hook no file name: it runs anyway (--staged finds it).
      always_run: true,
    });
  });

  it("its files pattern, read by Python's re as pre-commit reads it, selects exactly the paths the CLI checks", () => {
    const list = paths();
    expect(list.length).toBeGreaterThan(1000);
    const script =
      'import json, re, sys\npattern = re.compile(sys.argv[1])\nprint(json.dumps([bool(pattern.search(p)) for p in json.load(sys.stdin)]))';
    const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
    const selected = JSON.parse(
      execFileSync(python, ['-c', script, hook.files], { input: JSON.stringify(list), encoding: 'utf8' }),
    ) as boolean[];
    const disagreements = list.filter(
      (path, i) => selected[i] !== (classifyPath(path) !== undefined || yamlByContent(path)),
    );
    expect(disagreements).toEqual([]);
    expect(selected.filter(Boolean).length).toBeGreaterThan(200);
    expect(selected.filter((value) => !value).length).toBeGreaterThan(200);
  });

  const preCommit = existsSync('/usr/bin/pre-commit') || spawnSync('pre-commit', ['--version']).status === 0;
  const inGit = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT }).status === 0;
  // CI installs Debian's pre-commit (.ci/run); a machine without it skips the two tests below, and says so here.
  it(
    preCommit
      ? 'pre-commit is installed: the hook is run by pre-commit itself below'
      : 'pre-commit is NOT installed: the two tests below are skipped (apt install pre-commit, or run .ci/run)',
    () => {
      if (process.env.CI) expect(preCommit, 'CI must run the hook with pre-commit (.ci/run installs it)').toBe(true);
    },
  );
  it.runIf(preCommit)(
    "the README's .pre-commit-config.yaml snippet and the hook file pass pre-commit's own validation",
    () => {
      const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
      const snippets = [...readme.matchAll(/```yaml\n(# \.pre-commit-config\.yaml\n[\s\S]*?)```/g)].map(
        (match) => match[1]!,
      );
      expect(snippets.length).toBeGreaterThan(0);
      const dir = mkdtempSync(join(tmpdir(), 'cgk-pre-commit-config-'));
      for (const snippet of snippets) {
        writeFileSync(join(dir, '.pre-commit-config.yaml'), snippet);
        const result = spawnSync('pre-commit', ['validate-config', '.pre-commit-config.yaml'], {
          cwd: dir,
          encoding: 'utf8',
        });
        expect(result.status, result.stdout + result.stderr).toBe(0);
      }
      const header = readFileSync(join(ROOT, '.pre-commit-hooks.yaml'), 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('#   '))
        .map((line) => line.slice(4))
        .join('\n');
      writeFileSync(join(dir, '.pre-commit-config.yaml'), `${header}\n`);
      expect(
        spawnSync('pre-commit', ['validate-config', '.pre-commit-config.yaml'], { cwd: dir, encoding: 'utf8' }).status,
      ).toBe(0);
      const manifest = spawnSync('pre-commit', ['validate-manifest', join(ROOT, '.pre-commit-hooks.yaml')], {
        encoding: 'utf8',
      });
      expect(manifest.status, manifest.stdout + manifest.stderr).toBe(0);
    },
  );

  it.runIf(preCommit && inGit)(
    'installs with pre-commit and refuses a commit of a broken Dockerfile, then accepts the fix',
    () => {
      const repo = mkdtempSync(join(tmpdir(), 'cgk-pre-commit-'));
      const env = {
        ...process.env,
        PRE_COMMIT_HOME: join(repo, '.cache'),
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
      };
      const git = (...args: string[]) => spawnSync('git', args, { cwd: repo, env, encoding: 'utf8' });
      git('init', '-q');
      const rev = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
      writeFileSync(
        join(repo, '.pre-commit-config.yaml'),
        `repos:\n  - repo: ${ROOT}\n    rev: ${rev}\n    hooks: [{ id: cuda-gatekeeper }]\n`,
      );
      writeFileSync(join(repo, '.gitignore'), '.cache/\n');
      expect(spawnSync('pre-commit', ['install'], { cwd: repo, env, encoding: 'utf8' }).status).toBe(0);

      writeFileSync(
        join(repo, 'Dockerfile'),
        codeBlock`
          FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
          RUN pip install torch==2.3.0+cu118 --index-url https://download.pytorch.org/whl/cu118
        `,
      );
      // A YAML file that may be a conda environment and is not one is passed over, not an error.
      writeFileSync(join(repo, 'env.yml'), 'version: 1\n');
      git('add', '-A');
      const refused = git('commit', '-qm', 'broken');
      expect(refused.status, refused.stderr).not.toBe(0);
      expect(refused.stdout + refused.stderr).toMatch(/Dockerfile:2:\d+: error: .*\[cuda-mismatch\]/);
      expect(git('rev-parse', '--verify', 'HEAD').status).not.toBe(0); // nothing was committed

      writeFileSync(
        join(repo, 'Dockerfile'),
        codeBlock`
          FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
          RUN pip install torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124
        `,
      );
      git('add', '-A');
      const accepted = git('commit', '-qm', 'fixed');
      expect(accepted.status, accepted.stdout + accepted.stderr).toBe(0);
      expect(accepted.stdout + accepted.stderr).toContain('cuda-gatekeeper');

      // Issue 30: a commit that changes only the requirements file a committed Dockerfile installs is checked
      // with that Dockerfile (pre-commit passes only requirements.txt), as check and the App check it.
      writeFileSync(
        join(repo, 'Dockerfile'),
        codeBlock`
          FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04
          COPY requirements.txt .
          RUN pip install -r requirements.txt
        `,
      );
      writeFileSync(
        join(repo, 'requirements.txt'),
        codeBlock`
          --extra-index-url https://download.pytorch.org/whl/cu121
          torch==2.3.0+cu121
        `,
      );
      git('add', '-A');
      expect(git('commit', '-qm', 'installs requirements.txt').status).toBe(0);
      writeFileSync(
        join(repo, 'requirements.txt'),
        codeBlock`
          --extra-index-url https://download.pytorch.org/whl/cu118
          torch==2.3.0+cu118
        `,
      );
      git('add', 'requirements.txt');
      const alone = git('commit', '-qm', 'cu118 requirements only');
      expect(alone.status, alone.stdout + alone.stderr).not.toBe(0);
      expect(alone.stdout + alone.stderr).toMatch(
        /requirements\.txt:2:1: error: torch==2\.3\.0\+cu118 is built for CUDA 11\.8, but nvidia\/cuda:12\.1\.1/,
      );

      // Issue 43: a commit that only deletes the requirements file the Dockerfile installs (pre-commit passes no
      // file for a deletion) is refused: the hook runs always and checks what installs the deleted file.
      git('reset', '-q', 'HEAD', '--', 'requirements.txt');
      git('checkout', '-q', '--', 'requirements.txt');
      expect(git('rm', '-q', 'requirements.txt').status).toBe(0);
      const deleted = git('commit', '-qm', 'drop requirements.txt');
      expect(deleted.status, deleted.stdout + deleted.stderr).not.toBe(0);
      expect(deleted.stdout + deleted.stderr).toMatch(
        /Dockerfile:3:\d+: error: requirements\.txt is deleted by this change, but this line still installs it/,
      );
    },
    600_000,
  );
});
