/** The self-service page and its JSON API over HTTP (no browser): answers, errors, escaping, dogfooding. */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBaseline } from '../../src/baseline/load.js';
import { gate } from '../../src/gate.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import { parseFile } from '../../src/parsers/index.js';
import { FILE_KIND_NAMES } from '../../src/parsers/formats.js';
import {
  OS_CHOICES,
  PYTHON_CHOICES,
  recommend,
  type Recommendation,
  type RecommendInput,
} from '../../src/web/recommend.js';
import { compareDotted } from '../../src/util/dotted.js';
import { RULE_IDS } from '../../rules/index.js';
import { ROOT } from '../support/harness.js';
import { RateLimiter, webHandler } from '../../src/web/handler.js';
import { codeBlock } from '../support/code-block.js';

let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer(
    (req, res) => void webHandler(req, res).then((handled) => handled || (res.writeHead(404), res.end())),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const kb = defaultKnowledgeBase();

describe('recommendations', () => {
  it('RTX 5090 with torch 2.7.1: only the cu128 build has Blackwell kernels', () => {
    const result = recommend(kb, { framework: 'pytorch', version: '2.7.1', gpu: 'RTX 5090' });
    expect(result.options.map((option) => [option.tag, option.works])).toEqual([
      ['cu128', true],
      ['cu126', false],
      ['cu118', false],
    ]);
    expect(result.install).toMatchObject({
      cuda: '12.8',
      image: 'nvidia/cuda:12.8.1-runtime-ubuntu22.04',
      pip: 'pip install torch==2.7.1+cu128 torchvision==0.22.1+cu128 torchaudio==2.7.1+cu128 --index-url https://download.pytorch.org/whl/cu128',
      driverFull: '570.26',
    });
    expect(result.sources.some((source) => source.includes('developer.nvidia.com/cuda-gpus'))).toBe(true);
  });

  it('a choice that does not exist says why and offers the nearest that does', () => {
    const none = recommend(kb, { framework: 'pytorch', version: '2.6.0', gpu: 'B200' });
    expect(none.install).toBeUndefined();
    expect(none.problems[0]).toMatch(
      /No CUDA build of torch 2\.6\.0 works here for B200\. Nearest release that does: torch 2\.7\.1\./,
    );
    expect(recommend(kb, { framework: 'pytorch', version: '2.6.7' }).problems[0]).toBe(
      'torch 2.6.7 is not a known release; nearest: 2.6.0.',
    );
    expect(recommend(kb, { framework: 'pytorch', version: '2.9.1', python: '3.9' }).problems).toContain(
      'torch 2.9.1 supports Python >=3.10,<3.15, not 3.9.',
    );
  });

  it('never offers a stack that cannot install: no Dockerfile for a Python the release has no wheels for', () => {
    // TensorFlow 2.15's wheels are for Python 3.9-3.11: pip refuses it on 3.12.
    const asked = recommend(kb, { framework: 'tensorflow', version: '2.15.0', python: '3.12' });
    expect(asked.problems).toContain('TensorFlow 2.15.0 supports Python 3.9-3.11, not 3.12.');
    expect(asked.install).toBeUndefined();
    expect(recommend(kb, { framework: 'pytorch', version: '2.9.1', python: '3.9' }).install).toBeUndefined();
    // A Python it supports still gets the Dockerfile.
    expect(recommend(kb, { framework: 'tensorflow', version: '2.15.0', python: '3.11' }).install?.dockerfile).toContain(
      'tensorflow[and-cuda]==2.15.0',
    );
  });

  it('uses the PyPI build when it fits and explains the fleet driver', () => {
    const result = recommend(kb, { framework: 'pytorch', version: '2.5.1', gpu: 'H100', driver: '550.54.14' });
    expect(result.install?.pip).toBe('pip install torch==2.5.1 torchvision==0.20.1 torchaudio==2.5.1');
    expect(result.install?.conda).toBe(
      'conda install pytorch==2.5.1 torchvision==0.20.1 torchaudio==2.5.1 pytorch-cuda=12.4 -c pytorch -c nvidia',
    );
    const old = recommend(kb, { framework: 'pytorch', version: '2.11.0', driver: '550.54.14' });
    expect(old.options.find((option) => option.tag === 'cu130')).toMatchObject({
      works: false,
      reasons: ['driver 550.54.14 cannot run CUDA 13.x (needs >= 580)'],
    });
  });

  it('TensorFlow: tested CUDA, base image with the right cuDNN spelling, and-cuda extra', () => {
    const result = recommend(kb, { framework: 'tensorflow', version: '2.15.0', gpu: 'A100' });
    expect(result.install).toMatchObject({
      cuda: '12.2',
      image: 'nvidia/cuda:12.2.2-cudnn8-runtime-ubuntu22.04',
      pip: 'pip install "tensorflow[and-cuda]==2.15.0"',
    });
  });
});

/**
 * Every answer, gated: the Dockerfile and the requirements file of each recommendation must pass `check` (no
 * error) with the bundled default baseline, and answers given under the example policy must pass that policy.
 */
describe('every recommendation passes the gate', () => {
  const load = (path: string) => {
    const loaded = loadBaseline(path, readFileSync(join(ROOT, path), 'utf8'), RULE_IDS);
    expect(loaded.problems).toEqual([]);
    return loaded;
  };
  const errors = (result: Recommendation, policy: ReturnType<typeof load>): string[] => {
    const files = [
      parseFile('Dockerfile', `${result.install!.dockerfile}\n`, 'dockerfile'),
      parseFile('requirements.txt', result.install!.requirements, 'requirements'),
    ];
    return gate(files, policy.baseline, kb, { policy })
      .findings.filter((finding) => finding.severity === 'error')
      .map((finding) => `${finding.location.path}: ${finding.message} [${finding.ruleId}]`);
  };
  const torchVersions = kb
    .torchReleases()
    .filter((row) => compareDotted(row.version, '2.0.0') >= 0 && row.confidence !== 'unverified')
    .map((row) => row.version);
  const inputs: RecommendInput[] = [
    { framework: 'pytorch' },
    ...torchVersions.flatMap((version) =>
      ['H100', 'A100', 'L4', 'RTX 5090', 'T4'].map((gpu) => ({ framework: 'pytorch' as const, version, gpu })),
    ),
    ...PYTHON_CHOICES.flatMap((python) =>
      OS_CHOICES.map((os) => ({ framework: 'pytorch' as const, version: '2.7.1', python, os })),
    ),
    ...kb.tensorflowReleases().map((row) => ({ framework: 'tensorflow' as const, version: row.version, gpu: 'A100' })),
  ];

  it('with the bundled default baseline', () => {
    const policy = load('baseline.yaml');
    const failures = inputs.flatMap((input) => {
      const result = recommend(kb, input);
      return result.install ? errors(result, policy).map((error) => `${JSON.stringify(input)}: ${error}`) : [];
    });
    expect(failures).toEqual([]);
  });

  it('with the example policy (examples/platform-team.yaml), for the torch releases and GPUs it allows', () => {
    const policy = load('examples/platform-team.yaml');
    const answered = inputs
      .filter((input) => input.framework === 'pytorch')
      .map((input) => recommend(kb, { ...input, gpu: input.gpu === 'A100' ? 'A100' : 'H100' }, policy.baseline));
    // torch 2.6.0 and 2.7.1 on A100 and H100: the answers the policy allows.
    expect(answered.filter((result) => result.install && result.problems.length === 0).length).toBeGreaterThanOrEqual(
      4,
    );
    expect(
      answered.flatMap((result) => (result.install && result.problems.length === 0 ? errors(result, policy) : [])),
    ).toEqual([]);
  });

  it('installs the Python the user chose', () => {
    for (const os of OS_CHOICES) {
      const result = recommend(kb, { framework: 'pytorch', version: '2.7.1', python: '3.11', os });
      expect(result.install!.dockerfile, os).toMatch(/python3\.11 -m venv \/opt\/venv/);
    }
    expect(
      recommend(kb, { framework: 'pytorch', version: '2.7.1', python: '3.10', os: 'ubuntu22.04' }).install!.dockerfile,
    ).toContain('python3 -m venv /opt/venv');
  });

  it('defaults to the newest verified torch release', () => {
    const newest = kb
      .torchReleases()
      .filter((row) => row.confidence !== 'unverified')
      .at(-1)!.version;
    expect(recommend(kb, { framework: 'pytorch' }).version).toBe(newest);
    expect(kb.torchReleases().at(-1)!.confidence).toBe('unverified'); // the newest known is not the default
  });
});

describe('HTTP', () => {
  it('serves the page, which works without JavaScript (GET form renders the answer)', async () => {
    const html = await (
      await fetch(`${base}/cuda-gatekeeper/?gpu=H100&framework=pytorch&torch=2.7.1&python=3.11&os=ubuntu22.04&driver=`)
    ).text();
    expect(html).toContain('<label>GPU model<select name="gpu" id="gpu">');
    expect(html).toContain('Recommended: CUDA 12.6');
    expect(html).toContain('pip install torch==2.7.1 torchvision==0.22.1 torchaudio==2.7.1');
  });

  it('escapes user input', async () => {
    const html = await (
      await fetch(`${base}/cuda-gatekeeper/?gpu=%3Cscript%3Ealert(1)%3C%2Fscript%3E&framework=pytorch`)
    ).text();
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).toContain('&lt;script&gt;');
  });

  it('checks a snippet as a form post and through the JSON API', async () => {
    const form = new URLSearchParams({
      kind: 'requirements',
      baseline: 'none',
      text: codeBlock`
        torch==2.3.0+cu121
        torchvision==0.17.0+cu121
        --extra-index-url https://download.pytorch.org/whl/cu121
      `,
    });
    const html = await (await fetch(`${base}/cuda-gatekeeper/check`, { method: 'POST', body: form })).text();
    expect(html).toContain('torchvision 0.17.0 does not belong to torch 2.3.0');
    const api = await fetch(`${base}/cuda-gatekeeper/api/check`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'dockerfile', text: 'FROM nvidia/cuda:12.7.0-devel-ubuntu22.04\n' }),
    });
    const data = (await api.json()) as { findings: { ruleId: string }[] };
    expect(data.findings.map((finding) => finding.ruleId)).toContain('image-missing');
  });

  it("the form's 400 page says why it did not check (issue 26)", async () => {
    const form = new URLSearchParams({ kind: 'makefile', baseline: 'none', text: 'all:\n' });
    const response = await fetch(`${base}/cuda-gatekeeper/check`, { method: 'POST', body: form });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain(
      '<p class="problem" role="alert">Not checked: kind must be one of dockerfile',
    );
  });

  it('answers bad API input with 400/413 and a clear error', async () => {
    expect((await fetch(`${base}/cuda-gatekeeper/api/check`, { method: 'POST', body: 'not json' })).status).toBe(400);
    const wrong = await fetch(`${base}/cuda-gatekeeper/api/check`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'makefile', text: '' }),
    });
    // Every kind the registry reads, in its order (cog.yaml was the last added).
    expect(await wrong.json()).toEqual({
      error: `kind must be one of ${FILE_KIND_NAMES.join(', ')}, not "makefile"`,
    });
    expect(FILE_KIND_NAMES.slice(0, 2)).toEqual(['dockerfile', 'requirements']);
    expect(
      (await fetch(`${base}/cuda-gatekeeper/api/check`, { method: 'POST', body: 'x'.repeat(300_000) })).status,
    ).toBe(413);
  });

  it('serves the matrix, the API description, /healthz and /metrics', async () => {
    const matrix = (await (await fetch(`${base}/cuda-gatekeeper/api/matrix`)).json()) as {
      torch: { columns: string[] };
      drivers: { cuda: string; floor: string }[];
    };
    expect(matrix.torch.columns).toContain('cu128');
    expect(matrix.drivers.find((row) => row.cuda === '12.4')).toMatchObject({ floor: '525.60.13' });
    expect(await (await fetch(`${base}/cuda-gatekeeper/matrix`)).text()).toContain('PyTorch × CUDA');
    expect(await (await fetch(`${base}/cuda-gatekeeper/api`)).text()).toContain('GET  /cuda-gatekeeper/api/recommend');
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    for (const name of [
      'cuda_gatekeeper_webhooks_total',
      'cuda_gatekeeper_check_runs_total',
      'cuda_gatekeeper_github_api_calls_total',
      'cuda_gatekeeper_github_rate_limit_remaining',
      'cuda_gatekeeper_queue_depth',
      'cuda_gatekeeper_check_seconds_bucket',
    ])
      expect(metrics).toContain(name);
  });
});

describe('the public snippet API has limits', () => {
  it('a file over 64 KiB is refused with a clear reason', async () => {
    const response = await fetch(`${base}/cuda-gatekeeper/api/check`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'requirements', text: 'numpy==1.26.4\n'.repeat(6000) }),
    });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toContain('larger than 64 KiB');
  });

  it('a token bucket per address: a burst, then 429 with Retry-After until it refills', () => {
    let now = 0;
    const limiter = new RateLimiter(30, 3, () => now);
    expect([1, 2, 3, 4].map(() => limiter.take('a'))).toEqual([true, true, true, false]);
    expect(limiter.take('b')).toBe(true);
    now += 2000; // 30 a minute: one token per 2 s
    expect([limiter.take('a'), limiter.take('a')]).toEqual([true, false]);
  });

  it('over HTTP, the eleventh quick check from one address gets 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 14; i++)
      statuses.push(
        (
          await fetch(`${base}/cuda-gatekeeper/api/check`, {
            method: 'POST',
            body: JSON.stringify({ kind: 'requirements', text: 'numpy==1.26.4\n' }),
          })
        ).status,
      );
    expect(statuses).toContain(429);
    const limited = await fetch(`${base}/cuda-gatekeeper/api/check`, { method: 'POST', body: '{}' });
    expect(limited.headers.get('retry-after')).toBe('10');
  });
});

describe('will this image run on my pools? (issue 47)', () => {
  it('names the image CUDA with its source and the verdict per pasted pool, on the page and in the API', async () => {
    const query = new URLSearchParams({
      image: 'nvcr.io/nvidia/tritonserver:25.10-py3',
      fleet:
        '- { name: desk, driver: "570.172.08", gpus: [RTX 4090], class: geforce }\n- { name: dc, driver: "580.95.05", gpus: [H100] }',
    });
    const api = (await (await fetch(`${base}/cuda-gatekeeper/api/image?${query}`)).json()) as {
      cuda: { version: string; source: string };
      pools: { name: string; cell: { tier: string } }[];
    };
    // Triton 25.10's release notes: CUDA 13.0.2; R570 on a GeForce card cannot run CUDA 13, R580 can.
    expect(api.cuda.version).toBe('13.0.2');
    expect(api.cuda.source).toContain('rel-25-10.html');
    expect(api.pools.map((pool) => `${pool.name}: ${pool.cell.tier}`)).toEqual(['desk: fails', 'dc: runs']);
    const html = await (await fetch(`${base}/cuda-gatekeeper/image?${query}`)).text();
    expect(html).toContain('is CUDA 13.0.2');
    expect(html).toMatch(/desk \(driver 570\.172\.08\) does not run/);
  });

  it('says when an image is not known, and refuses what is not a reference', async () => {
    const unknown = (await (await fetch(`${base}/cuda-gatekeeper/api/image?image=ghcr.io/acme/serve:1`)).json()) as {
      unknown: string;
    };
    expect(unknown.unknown).toContain('--online');
    const bad = (await (
      await fetch(`${base}/cuda-gatekeeper/api/image?image=${encodeURIComponent('a b <c>')}`)
    ).json()) as {
      problems: string[];
    };
    expect(bad.problems[0]).toContain('Give one image reference');
    const html = await (
      await fetch(`${base}/cuda-gatekeeper/image?image=${encodeURIComponent('<script>x</script>')}`)
    ).text();
    expect(html).not.toContain('<script>x</script>');
  });
});
