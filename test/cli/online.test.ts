/**
 * `check --online`: images looked up in their registries (a fake that answers as the distribution spec says), the
 * verdicts that follows from their configs, the cache folder, and what stays offline.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run, runAsync } from '../../src/cli/main.js';
import { FakeRegistry, registriesFetch } from '../support/fake-registry.js';

const CONFIGS = join(import.meta.dirname, '..', '..', 'fixtures', 'images', 'configs');
const real = (name: string): unknown => JSON.parse(readFileSync(join(CONFIGS, name), 'utf8'));

function tree(files: Readonly<Record<string, string>>): string {
  const dir = mkdtempSync(join(tmpdir(), 'cgk-online-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

async function check(cwd: string, args: readonly string[], fetch: typeof globalThis.fetch, env = {}) {
  let out = '';
  let err = '';
  const code = await runAsync(['check', ...args], {
    cwd,
    out: (text) => (out += text),
    err: (text) => (err += text),
    env: { XDG_CACHE_HOME: join(cwd, '.cache'), ...env },
    fetch,
  });
  return { code, out, err };
}

const BASELINE = `fleet:
  pools:
    - { name: dev, driver: "535.183.01", gpus: [RTX 4090], class: geforce, runtime: legacy }
`;

const MANIFEST = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: serve
spec:
  template:
    spec:
      containers:
        - name: serve
          image: ghcr.io/acme/serve:v1
          resources:
            limits:
              nvidia.com/gpu: 1
`;

function ghcr(): FakeRegistry {
  const registry = new FakeRegistry({ host: 'ghcr.io', realm: 'https://ghcr.io/token', redirectBlobs: true });
  // A private image built on vLLM 0.8.5's image: its config carries CUDA_VERSION=12.4.0 and NVIDIA_REQUIRE_CUDA.
  registry.push('acme/serve', 'v1', { platforms: { 'linux/amd64': real('vllm-vllm-openai-v0.8.5.json') } });
  return registry;
}

describe('check --online', () => {
  it('reads an image the snapshot does not know from its config, and judges it on the fleet', async () => {
    const dir = tree({ 'deploy/serve.yaml': MANIFEST, '.github/cuda-gatekeeper.yml': BASELINE });
    const registry = ghcr();
    const offline = await check(dir, ['--format', 'json'], registry.fetch);
    expect(JSON.parse(offline.out).findings.map((f: { ruleId: string }) => f.ruleId)).toEqual(['image-unknown']);
    expect(registry.requests).toEqual([]);

    const online = await check(dir, ['--online', '--format', 'json', '--verbose'], registry.fetch);
    const findings = JSON.parse(online.out).findings as { ruleId: string; message: string; help: string }[];
    // CUDA 12.4 on R535 (a CUDA 12.2 driver): the legacy toolkit refuses unless a brand term admits GeForce R535,
    // which vLLM 0.8.5's NVIDIA_REQUIRE_CUDA has (brand=geforce,driver>=535,driver<536): it starts, under
    // minor-version compatibility.
    expect(findings.map((f) => f.ruleId)).toEqual(['driver-floor']);
    expect(findings[0]!.message).toMatch(/ghcr\.io\/acme\/serve:v1 targets CUDA 12\.4/);
    expect(findings[0]!.help).toContain("the image's config on ghcr.io");
    expect(online.err).toMatch(/looked up 1 image: 1 read \(0 from the cache\), 0 missing, 0 not read/);
  });

  it('keeps what it read in the cache folder: a second check asks the registry nothing for the config', async () => {
    const dir = tree({ 'deploy/serve.yaml': MANIFEST, '.github/cuda-gatekeeper.yml': BASELINE });
    const registry = ghcr();
    await check(dir, ['--online'], registry.fetch);
    const refuse: typeof fetch = async () => {
      throw new TypeError('fetch failed');
    };
    // The tag's digest is fresh in the cache too: nothing is asked at all.
    const again = await check(dir, ['--online', '--format', 'json', '--verbose'], refuse);
    expect(JSON.parse(again.out).findings.map((f: { ruleId: string }) => f.ruleId)).toEqual(['driver-floor']);
    expect(again.err).toMatch(/1 read \(1 from the cache\)/);
  });

  it('says a tag the registry does not have is missing, at error', async () => {
    const dir = tree({ 'deploy/serve.yaml': MANIFEST.replace('serve:v1', 'serve:v9') });
    const result = await check(dir, ['--online', '--baseline', 'none'], ghcr().fetch);
    expect(result.out).toContain(
      'error: ghcr.io/acme/serve:v9 does not exist: ghcr.io has no tag v9 of acme/serve (404 manifest unknown) [image-missing]',
    );
    expect(result.code).toBe(1);
  });

  it('says why an image could not be read, never passing it in silence', async () => {
    const dir = tree({
      'deploy/serve.yaml': MANIFEST.replace('ghcr.io/acme/serve:v1', 'registry.acme.internal/serve:v1'),
    });
    const result = await check(dir, ['--online', '--baseline', 'none'], ghcr().fetch);
    expect(result.out).toContain(
      'not read: registry.acme.internal is not a public registry cuda-gatekeeper reads; name it under registries.credentials in the baseline to have it read',
    );
  });

  it('looks up when the baseline says registries.lookup: true, and not with --offline', async () => {
    const dir = tree({
      'deploy/serve.yaml': MANIFEST,
      '.github/cuda-gatekeeper.yml': `${BASELINE}registries:\n  lookup: true\n`,
    });
    const registry = ghcr();
    await check(dir, ['--offline'], registry.fetch);
    expect(registry.requests).toEqual([]);
    await check(dir, [], registry.fetch);
    expect(registry.requests.length).toBeGreaterThan(0);
  });

  it('reads Dockerfiles from standard input and on the command line alike', async () => {
    const hub = new FakeRegistry({
      host: 'registry-1.docker.io',
      realm: 'https://auth.docker.io/token',
      service: 'registry.docker.io',
    });
    hub.push('acme/cuda-base', '2024.1', { platforms: { 'linux/amd64': real('anomalib-on-nvidia-cuda-11.4.0.json') } });
    const dockerfile =
      'FROM acme/cuda-base:2024.1\nRUN pip install torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124\n';
    const dir = tree({});
    let out = '';
    const code = await runAsync(['check', '-', '--stdin-filename', 'Dockerfile', '--online', '--baseline', 'none'], {
      cwd: dir,
      out: (text) => (out += text),
      err: () => undefined,
      stdin: () => dockerfile,
      env: { XDG_CACHE_HOME: join(dir, '.cache') },
      fetch: registriesFetch(hub),
    });
    // The base's config says CUDA 11.4.0; the wheel is built for 12.4.
    expect(out).toMatch(/torch==2\.5\.1\+cu124 .*CUDA 12\.4.*11\.4/);
    expect(code).toBe(1);
  });

  it('is refused by the synchronous entry, before anything is asked', () => {
    const dir = tree({ 'deploy/serve.yaml': MANIFEST });
    let err = '';
    const code = run(['check', '--online'], { cwd: dir, out: () => undefined, err: (text) => (err += text) });
    expect(code).toBe(2);
    expect(err).toMatch(/needs the command line itself/);
  });

  it('refuses --online with --offline', async () => {
    const dir = tree({});
    const result = await check(dir, ['--online', '--offline'], ghcr().fetch);
    expect(result.code).toBe(2);
    expect(result.err).toContain('--online and --offline cannot both be given');
  });
});
