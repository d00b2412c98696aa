/** The command line: formats, exit codes, --changed-since, --fix and plan, on temporary copies of fixtures. */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/harness.js';
import { cli } from '../support/cli.js';
import { codeBlock } from '../support/code-block.js';

function demoCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cgk-cli-'));
  cpSync(join(ROOT, 'fixtures', 'repos', 'demo'), dir, { recursive: true });
  return dir;
}

describe('cuda-gatekeeper check', () => {
  it('prints path:line:col: severity: message [rule] lines and a summary, exit 1 on errors', () => {
    const { code, out } = cli(demoCopy(), 'check', '.', '--baseline', 'baseline.yaml');
    expect(code).toBe(1);
    expect(out).toMatch(
      /^Dockerfile:9:20: error: --extra-index-url https:\/\/download\.pytorch\.org\/whl\/cu118 serves CUDA 11\.8 builds, but nvidia\/cuda:12\.1\.1-cudnn8-devel-ubuntu22\.04 sets CUDA 12\.1 \[cuda-mismatch\]$/m,
    );
    expect(out).toMatch(
      /^requirements\.txt:3:1: error: torchvision 0\.17\.0 does not belong to torch 2\.3\.0 .*\[companion-mismatch\]$/m,
    );
    expect(out.trimEnd().split('\n').at(-1)).toMatch(/^3 files checked: \d+ errors, \d+ warnings, \d+ notices/);
  });

  it('a CUDA-relevant file it could not check fails the check (exit 1), unless --fail-on never or unchecked: neutral', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cgk-cli-'));
    writeFileSync(join(dir, 'requirements.txt'), `torch==2.3.0\n${'# padding\n'.repeat(120_000)}`);
    // A lock file may be up to 32 MiB (a large project's are 1–10 MB).
    writeFileSync(join(dir, 'uv.lock'), `version = 1\n${'# padding\n'.repeat(120_000)}`);
    // A manifest up to 8 MiB (an operator's install bundle: CRDs, then its workloads), read whole: the GPU Job after
    // 1.2 MB of CRD is judged.
    writeFileSync(
      join(dir, 'install.yaml'),
      `apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things.example.com\n${'# padding\n'.repeat(120_000)}---\n` +
        'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n      containers:\n' +
        '      - name: t\n        image: registry.example.com/ml/trainer:1.0\n        resources:\n          limits:\n            nvidia.com/gpu: 1\n',
    );
    const failed = cli(dir, 'check', '--baseline', 'none');
    expect(failed.code).toBe(1);
    expect(failed.err).toContain('requirements.txt: skipped: is larger than 1 MiB');
    expect(failed.err).toContain(
      '1 CUDA-relevant file was not checked (requirements.txt: is larger than 1 MiB), so the check fails',
    );
    expect(failed.err).not.toContain('uv.lock');
    expect(failed.err).not.toContain('install.yaml');
    expect(failed.out).toMatch(
      /^install\.yaml:\d+:\d+: warning: Job\/train container t gets NVIDIA GPUs, but the CUDA of registry\.example\.com\/ml\/trainer:1\.0 is not known/m,
    );
    expect(cli(dir, 'check', '--baseline', 'none', '--fail-on', 'never').code).toBe(0);
    writeFileSync(join(dir, 'baseline.yaml'), 'unchecked: neutral\n');
    expect(cli(dir, 'check', '--baseline', 'baseline.yaml').code).toBe(0);
  });

  it('exits 0 when only warnings remain', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cgk-cli-'));
    writeFileSync(
      join(dir, 'requirements.txt'),
      codeBlock`
        --extra-index-url https://download.pytorch.org/whl/cu117
        torch>=2.0
      `,
    );
    const { code, out } = cli(dir, 'check', '--baseline', 'none');
    expect(code).toBe(0);
    expect(out).toContain('[index-url]');
  });

  it('writes findings as JSON data', () => {
    const { out } = cli(demoCopy(), 'check', '--format', 'json', '--baseline', 'baseline.yaml');
    const data = JSON.parse(out) as {
      version: number;
      findings: { ruleId: string; location: { start: { line: number } }; docsUrl: string }[];
      counts: Record<string, number>;
    };
    expect(data.version).toBe(1);
    expect(data.counts.error).toBeGreaterThan(0);
    expect(data.findings[0]).toMatchObject({ ruleId: expect.any(String), docsUrl: expect.stringContaining('/rules/') });
  });

  it('writes SARIF 2.1.0 with rules, regions relative to the working directory, and fixes', () => {
    const { out } = cli(demoCopy(), 'check', '--format', 'sarif', '--baseline', 'baseline.yaml');
    const sarif = JSON.parse(out);
    expect(sarif.version).toBe('2.1.0');
    const run0 = sarif.runs[0];
    expect(run0.tool.driver.rules.map((rule: { id: string }) => rule.id)).toContain('cuda-mismatch');
    const result = run0.results.find((entry: { ruleId: string }) => entry.ruleId === 'companion-mismatch');
    expect(result).toMatchObject({
      level: 'error',
      locations: [
        {
          physicalLocation: { artifactLocation: { uri: 'requirements.txt' }, region: { startLine: 3, startColumn: 1 } },
        },
      ],
    });
    expect(result.fixes[0].artifactChanges[0].replacements[0]).toMatchObject({
      deletedRegion: { startLine: 3 },
      insertedContent: { text: '0.18.0' },
    });
    expect(run0.results.some((entry: { level: string }) => entry.level === 'warning')).toBe(true);
  });

  it('writes GitHub workflow annotations', () => {
    const { out } = cli(demoCopy(), 'check', '--format', 'github', '--baseline', 'baseline.yaml');
    expect(out).toMatch(
      /^::error file=requirements\.txt,line=3,col=1,endLine=3,endColumn=\d+,title=companion-mismatch::torchvision 0\.17\.0/m,
    );
  });

  it('applies safe fixes with --fix and leaves unsafe ones alone', () => {
    const dir = demoCopy();
    const { err } = cli(dir, 'check', '--fix', '--baseline', 'baseline.yaml');
    expect(err).toMatch(/applied \d+ safe fix/);
    expect(readFileSync(join(dir, 'requirements.txt'), 'utf8')).toContain('torchvision==0.18.0+cu121');
    expect(readFileSync(join(dir, 'Dockerfile'), 'utf8')).toContain('TORCH_CUDA_ARCH_LIST="7.0;8.0;9.0"');
    expect(readFileSync(join(dir, 'environment.yml'), 'utf8')).toContain('pytorch-cuda=12.6');
  });

  it('checks only files changed since a git ref, plus the files they pull in', () => {
    const dir = demoCopy();
    const git = (...args: string[]) =>
      execFileSync('git', args, {
        cwd: dir,
        stdio: 'pipe',
        env: {
          ...process.env,
          GIT_AUTHOR_NAME: 't',
          GIT_AUTHOR_EMAIL: 't@t',
          GIT_COMMITTER_NAME: 't',
          GIT_COMMITTER_EMAIL: 't@t',
        },
      });
    git('init', '-q');
    git('add', '.');
    git('commit', '-qm', 'base');
    writeFileSync(join(dir, 'Dockerfile'), readFileSync(join(dir, 'Dockerfile'), 'utf8').replace('7.0;8.0', '8.0;9.0'));
    const { out } = cli(dir, 'check', '--changed-since', 'HEAD', '--baseline', 'baseline.yaml');
    expect(out).toContain('Dockerfile:');
    expect(out).toContain('requirements.txt:'); // installed by the Dockerfile
    expect(out).not.toContain('environment.yml:');
    expect(out).toMatch(/2 files checked/);
  });

  it('rejects bad usage and unreadable or invalid baselines with exit 2 and one clear line', () => {
    const dir = demoCopy();
    expect(cli(dir, 'check', '--format', 'xml')).toMatchObject({
      code: 2,
      err: expect.stringContaining('unknown format "xml"'),
    });
    expect(cli(dir, 'check', '--baseline', 'missing.yaml')).toMatchObject({
      code: 2,
      err: 'cuda-gatekeeper: cannot read baseline missing.yaml: it does not exist\n',
    });
    expect(cli(dir, 'check', 'no/such/path', '--baseline', 'none')).toMatchObject({ code: 2 });
    expect(cli(dir, 'check', '--bogus')).toMatchObject({
      code: 2,
      err: expect.stringContaining('unknown option --bogus'),
    });
    expect(cli(dir, 'frobnicate')).toMatchObject({ code: 2, err: expect.stringContaining('unknown command') });
    writeFileSync(
      join(dir, 'bad.yaml'),
      codeBlock`
        cuda:
          allowed: [twelve]
      `,
    );
    const bad = cli(dir, 'check', '--baseline', 'bad.yaml');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('bad.yaml:2:13: error: cuda.allowed.0: expected a CUDA version');
    expect(cli(dir, 'check', '--changed-since', 'nope', '--baseline', 'none')).toMatchObject({
      code: 2,
      err: expect.stringContaining('unknown git ref "nope"'),
    });
  });

  it('uses .github/cuda-gatekeeper.yml when present, else the bundled baseline.yaml', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cgk-cli-'));
    writeFileSync(join(dir, 'requirements.txt'), 'torch>=2\n');
    expect(cli(dir, 'check').out).toContain('[exact-pin]'); // bundled default pins exactly
    cpSync(
      join(ROOT, 'fixtures', 'rules', 'policy-error', 'ok', 'baseline.yaml'),
      join(dir, '.github', 'cuda-gatekeeper.yml'),
      { recursive: true },
    );
    expect(cli(dir, 'check').out).not.toContain('[exact-pin]');
  });
});

describe('cuda-gatekeeper plan', () => {
  it('lists the exact edits to move to a CUDA version, the torch release and the driver', () => {
    const { code, out } = cli(demoCopy(), 'plan', '--cuda', '12.4', '--baseline', 'baseline.yaml');
    expect(code).toBe(0);
    expect(out).toContain('Plan: move to CUDA 12.4');
    expect(out).toContain('torch 2.4.1+cu124, torchvision 0.19.1, torchaudio 2.4.1');
    expect(out).toContain(
      'Dockerfile:3: base image: nvidia/cuda:${CUDA_VERSION}-cudnn8-devel-ubuntu22.04 -> nvidia/cuda:${CUDA_VERSION}-cudnn-devel-ubuntu22.04 (and 12.1.1 → 12.4.1 at line 2)',
    );
    expect(out).toContain('requirements.txt:2: torch: torch==2.3.0+cu121 -> torch==2.4.1+cu124');
    expect(out).toContain('driver: >= 550.54.15 for CUDA 12.4.1 images');
  });

  it('moves an NGC base to the newest NGC tag of the same variant with the target CUDA (issue 47)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cgk-cli-'));
    writeFileSync(
      join(dir, 'Dockerfile'),
      'FROM nvcr.io/nvidia/pytorch:24.05-py3\nRUN pip install transformers==4.44.0\n',
    );
    writeFileSync(join(dir, 'Dockerfile.triton'), 'FROM nvcr.io/nvidia/tritonserver:24.05-trtllm-python-py3\n');
    const { out } = cli(dir, 'plan', '--cuda', '12.8', '--baseline', 'none');
    // NGC's rows: PyTorch 25.01 is built on CUDA 12.8.0; Triton's TensorRT-LLM container of 25.05 on 12.8.1.
    expect(out).toMatch(
      /Dockerfile:1: base image: nvcr\.io\/nvidia\/pytorch:24\.05-py3 -> nvcr\.io\/nvidia\/pytorch:25\.0\d-py3/,
    );
    expect(out).toMatch(
      /Dockerfile\.triton:1: base image: nvcr\.io\/nvidia\/tritonserver:24\.05-trtllm-python-py3 -> nvcr\.io\/nvidia\/tritonserver:25\.\d\d-trtllm-python-py3/,
    );
    expect(cli(dir, 'plan', '--cuda', '11.1', '--baseline', 'none').out).toContain(
      'nvcr.io/nvidia/pytorch:24.05-py3 -> nvcr.io/nvidia/pytorch:20.12-py3',
    );
    // No cuda-dl-base tag with CUDA 12.2 is known: said, not guessed.
    writeFileSync(join(dir, 'Dockerfile'), 'FROM nvcr.io/nvidia/cuda-dl-base:24.09-cuda12.6-devel-ubuntu22.04\n');
    const none = cli(dir, 'plan', '--cuda', '12.2', '--baseline', 'none');
    expect(none.out).toContain('no tag of nvidia/cuda-dl-base with CUDA 12.2 is in the knowledge base');
  });

  it('applies the plan with --write, after which the files agree on the new CUDA', () => {
    const dir = demoCopy();
    expect(cli(dir, 'plan', '--cuda', '12.4', '--write', '--baseline', 'baseline.yaml').err).toMatch(
      /applied \d+ edits/,
    );
    expect(readFileSync(join(dir, 'Dockerfile'), 'utf8')).toContain(
      'ARG CUDA_VERSION=12.4.1\nFROM nvidia/cuda:${CUDA_VERSION}-cudnn-devel-ubuntu22.04',
    );
    expect(readFileSync(join(dir, 'requirements.txt'), 'utf8')).toContain(
      'torch==2.4.1+cu124\ntorchvision==0.19.1+cu124',
    );
    const after = cli(dir, 'check', '--baseline', 'baseline.yaml', '--format', 'json');
    const rules = (JSON.parse(after.out) as { findings: { ruleId: string }[] }).findings.map(
      (finding) => finding.ruleId,
    );
    expect(rules).not.toContain('cuda-mismatch');
    expect(rules).not.toContain('companion-mismatch');
  });

  it('answers in JSON and refuses CUDA versions that do not exist', () => {
    const dir = demoCopy();
    const json = JSON.parse(cli(dir, 'plan', '--cuda', '12.8', '--format', 'json', '--baseline', 'none').out);
    expect(json.torch).toMatchObject({ variant: 'cu128' });
    // The driver of the image the plan writes (12.8.1's own Table 3 row), not 12.8 GA's 570.26.
    expect(json.driver).toMatchObject({ cuda: '12.8.1', minimum: '570.124.06' });
    // pytorch-cuda has no 12.8 build: the conda environment stays as it is, and the plan says why.
    expect(json.held).toEqual([
      expect.objectContaining({
        unit: 'environment.yml',
        reasons: expect.arrayContaining([expect.stringContaining('pytorch-cuda has no 12.8 build')]),
      }),
    ]);
    expect(json.steps.length).toBeGreaterThan(0);
    expect(cli(dir, 'plan', '--cuda', '12.7')).toMatchObject({
      code: 2,
      err: expect.stringContaining('never released'),
    });
    // A CUDA newer than anything known is refused the same way: nothing about it (driver floor, wheels) is known.
    expect(cli(dir, 'plan', '--cuda', '99.9')).toMatchObject({
      code: 2,
      err: expect.stringContaining('CUDA 99.9 is newer than any CUDA the knowledge base knows'),
    });
    expect(cli(dir, 'plan')).toMatchObject({ code: 2, err: expect.stringContaining('--cuda') });
  });

  it('moves the packages built for one torch with it, naming the release (issue 50, item 10), and leaves them when torch stays', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cgk-plan-companions-'));
    writeFileSync(
      join(dir, 'requirements.txt'),
      codeBlock`
        --extra-index-url https://download.pytorch.org/whl/cu126
        torch==2.7.1+cu126
        vllm==0.10.1.1
        xformers==0.0.31.post1
      `,
    );
    const steps = (cuda: string) =>
      (
        JSON.parse(cli(dir, 'plan', '--cuda', cuda, '--format', 'json', '--baseline', 'none').out) as {
          steps: { what: string; to: string }[];
        }
      ).steps.map((step) => `${step.what}: ${step.to}`);
    // torch 2.7.1 has a cu128 build: torch stays, and so do vllm and xformers.
    expect(steps('12.8')).toEqual([
      'index URL: --extra-index-url https://download.pytorch.org/whl/cu128',
      'torch: torch==2.7.1+cu128',
    ]);
    // CUDA 13 needs torch 2.9: vllm and xformers move to their releases for it.
    expect(steps('13.0')).toEqual([
      'index URL: --extra-index-url https://download.pytorch.org/whl/cu130',
      'torch: torch==2.9.1+cu130',
      'vllm: vllm==0.16.0',
      'xformers: xformers==0.0.33.post2',
    ]);
  });
});

describe('never reading outside the repository', () => {
  it('ignores -r includes and COPY sources that leave the working directory, and symlinks that point outside', async () => {
    const { symlinkSync, mkdirSync } = await import('node:fs');
    const outside = mkdtempSync(join(tmpdir(), 'cgk-outside-'));
    writeFileSync(join(outside, 'secret.txt'), 'torch==1.0.0+cu101\n');
    const dir = mkdtempSync(join(tmpdir(), 'cgk-repo-'));
    mkdirSync(join(dir, 'app'));
    writeFileSync(
      join(dir, 'app', 'requirements.txt'),
      `-r ../../${outside.split('/').pop()}/secret.txt\n-r ${outside}/secret.txt\ntorch==2.3.0\n`,
    );
    writeFileSync(
      join(dir, 'app', 'Dockerfile'),
      codeBlock`
        FROM ubuntu:22.04
        COPY ../../secret.txt /tmp/r.txt
        RUN pip install -r /tmp/r.txt
      `,
    );
    symlinkSync(join(outside, 'secret.txt'), join(dir, 'requirements-linked.txt'));
    const { out, err } = cli(dir, 'check', '--baseline', 'none', '--format', 'json');
    const data = JSON.parse(out) as { filesChecked: number; findings: { location: { path: string } }[] };
    expect(
      data.findings.every((finding) => !finding.location.path.includes('..') && !finding.location.path.startsWith('/')),
    ).toBe(true);
    expect(out).not.toContain('1.0.0');
    expect(data.filesChecked).toBe(2);
    expect(cli(dir, 'check', 'requirements-linked.txt', '--baseline', 'none').err).toContain(
      'requirements-linked.txt: skipped: is a link to a file outside the repository',
    );
    void err;
  });

  it('reads nothing through a linked directory named on the command line, or through a path that passes one', async () => {
    const { symlinkSync, mkdirSync } = await import('node:fs');
    const outside = mkdtempSync(join(tmpdir(), 'cgk-outside-'));
    mkdirSync(join(outside, 'deps'));
    writeFileSync(join(outside, 'deps', 'requirements.txt'), 'torch==1.0.0+cu101\n');
    const dir = mkdtempSync(join(tmpdir(), 'cgk-repo-'));
    writeFileSync(join(dir, 'requirements.txt'), 'torch==2.3.0\n');
    symlinkSync(join(outside, 'deps'), join(dir, 'deps'));
    // Walking the checkout never follows the link; naming it (or a file below it) must not read outside either.
    expect(JSON.parse(cli(dir, 'check', '--baseline', 'none', '--format', 'json').out).filesChecked).toBe(1);
    for (const input of ['deps', 'deps/requirements.txt']) {
      const { out, err } = cli(dir, 'check', input, '--baseline', 'none', '--format', 'json');
      expect(out).not.toContain('1.0.0');
      expect(err).toContain('deps/requirements.txt: skipped: is a link to a file outside the repository');
    }
  });

  it('reads a checkout whose own path passes a link, and a link inside it that stays inside', async () => {
    const { symlinkSync, mkdirSync } = await import('node:fs');
    const real = mkdtempSync(join(tmpdir(), 'cgk-real-'));
    mkdirSync(join(real, 'app'));
    writeFileSync(join(real, 'app', 'requirements.txt'), 'torch==2.3.0\n');
    symlinkSync(join(real, 'app'), join(real, 'app-link'));
    const linkedRoot = join(mkdtempSync(join(tmpdir(), 'cgk-link-')), 'repo');
    symlinkSync(real, linkedRoot);
    const { out, err } = cli(linkedRoot, 'check', '.', 'app-link', '--baseline', 'none', '--format', 'json');
    // app-link/requirements.txt is app/requirements.txt: read once.
    expect(err).toBe('app-link/requirements.txt: skipped: is app/requirements.txt again, reached through a link\n');
    expect(JSON.parse(out).filesChecked).toBe(1);
  });
});

describe('cuda-gatekeeper check of some files', () => {
  it("checks a named Dockerfile with the manifests that run its image, read only where the baseline's images map one", () => {
    const dir = mkdtempSync(join(tmpdir(), 'cgk-cli-'));
    cpSync(join(ROOT, 'fixtures', 'repos', 'demo-fleet'), dir, { recursive: true });
    // The repository's baseline maps ghcr.io/demo/trainer to trainer/Dockerfile: k8s/train.yaml runs it.
    expect(cli(dir, 'check', 'trainer/Dockerfile').out).toMatch(/^k8s\/train\.yaml:17:22: error: .*\[driver-floor\]$/m);
    // Without a baseline no manifest includes a Dockerfile: none joins the check.
    const alone = cli(dir, 'check', 'trainer/Dockerfile', '--baseline', 'none').out;
    expect(alone).not.toContain('k8s/');
    expect(alone).toMatch(/^1 file checked/m);
  });

  it('checks a KServe InferenceService with the runtime another file defines, and the runtime with its services', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cgk-cli-'));
    cpSync(join(ROOT, 'fixtures', 'rules', 'image-unknown', 'kserve-runtime-in-other-file'), dir, { recursive: true });
    for (const named of [
      'kserve/nim-models/llama3-8b-instruct_1xgpu_1.0.0.yaml',
      'kserve/runtimes/llama3-8b-instruct-1.0.0.yaml',
    ]) {
      const { out } = cli(dir, 'check', named, '--baseline', 'none');
      expect(out, named).toMatch(
        /^kserve\/runtimes\/llama3-8b-instruct-1\.0\.0\.yaml:25:12: warning: ClusterServingRuntime\/nvidia-nim-llama3-8b-instruct-1\.0\.0 \(for InferenceService\/llama3-8b-instruct-1xgpu in kserve\/nim-models\/llama3-8b-instruct_1xgpu_1\.0\.0\.yaml\) .*\[image-unknown\]$/m,
      );
      expect(out, named).not.toContain('[parse-error]');
    }
  });
});
