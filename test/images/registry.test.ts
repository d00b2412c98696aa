import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configCuda, readImageConfig } from '../../src/images/config.js';
import { EMPTY_BASELINE } from '../../src/baseline/schema.js';
import { MemoryCache } from '../../src/images/cache.js';
import { lookUpImages } from '../../src/images/resolve.js';
import { parseChallenge, pickPlatform, retryAfter } from '../../src/images/registry.js';
import { requirementsOf } from '../../src/analysis/toolkit.js';
import { FakeRegistry, imageConfig } from '../support/fake-registry.js';

const CONFIGS = join(import.meta.dirname, '..', '..', 'fixtures', 'images', 'configs');
const real = (name: string): unknown => JSON.parse(readFileSync(join(CONFIGS, name), 'utf8'));

/** A clock that moves only when the client sleeps, so waits are exact and instant. */
function clock(start = 1_000_000) {
  let now = start;
  const slept: number[] = [];
  return {
    now: () => now,
    sleep: async (ms: number) => {
      slept.push(ms);
      now += ms;
    },
    slept,
  };
}

function settings(registry: FakeRegistry, extra: Partial<Parameters<typeof lookUpImages>[2]> = {}) {
  const time = clock();
  return {
    time,
    settings: {
      cache: new MemoryCache(100, time.now),
      env: {},
      budgetMs: 10_000,
      today: '2026-12-05',
      fetch: registry.fetch,
      now: time.now,
      sleep: time.sleep,
      ...extra,
    },
  };
}

const ref = (registry: string | undefined, repository: string, tag: string) => ({
  ...(registry ? { registry } : {}),
  repository,
  tag,
});

describe('real image configs (fixtures/images/configs)', () => {
  it.each([
    ['vllm-vllm-openai-v0.8.5.json', '12.4.0', 'linux/amd64'],
    ['anomalib-on-nvidia-cuda-11.4.0.json', '11.4.0', 'linux/amd64'],
    ['vllm-build-on-nvidia-cuda-13.2.0-arm64.json', '13.2.0', 'linux/arm64/v8'],
    ['simoncblyth-cuda-12.4.1-runtimeplus-rockylinux9.json', '12.4.1', 'linux/amd64'],
    ['vllm-vllm-openai-0.16.0-environment.json', '12.9.1', 'linux/amd64'],
    // NGC's four-part CUDA_VERSION: the release is its first three parts.
    ['nvcr-nvidia-pytorch-21.12-py3-excerpt.json', '11.5.0', 'linux/amd64'],
  ])('%s: CUDA %s on %s', (name, cuda, platform) => {
    const config = readImageConfig(real(name));
    if (typeof config === 'string') throw new Error(config);
    expect(configCuda(config)).toBe(cuda);
    expect(config.platform).toBe(platform);
  });

  it('holds NVIDIA_REQUIRE_CUDA values the toolkit reads as it would', () => {
    for (const name of readdirSync(CONFIGS).filter((file) => file.endsWith('.json'))) {
      const config = readImageConfig(real(name));
      if (typeof config === 'string') throw new Error(config);
      const read = requirementsOf(new Map(Object.entries(config.env)));
      expect(read.invalid, name).toEqual([]);
    }
  });

  it('says why a config is not one', () => {
    expect(readImageConfig([])).toMatch(/not a JSON object/);
    expect(readImageConfig({ config: { Env: 'CUDA_VERSION=12.4.1' } })).toMatch(/"Env" is not a list/);
    expect(readImageConfig({ config: { Env: [3] } })).toMatch(/not a string/);
  });
});

describe('the registry client, against a registry that answers as the distribution and token specs say', () => {
  it('answers the 401 with a token from the realm, resolves the tag by HEAD and reads the config through the index', async () => {
    const registry = new FakeRegistry({ host: 'registry.example' });
    const digest = registry.push('team/trainer', 'v1', {
      platforms: {
        'linux/amd64': real('vllm-vllm-openai-v0.8.5.json'),
        'linux/arm64/v8': real('vllm-build-on-nvidia-cuda-13.2.0-arm64.json'),
      },
    });
    const { settings: s } = settings(registry, {
      ...{},
    });
    const baseline = {
      registries: { credentials: { 'registry.example': { username: 'REGISTRY_U', password: 'REGISTRY_P' } } },
    };
    const run = await lookUpImages([ref('registry.example', 'team/trainer', 'v1')], baseline, s);
    const lookup = run.lookups['registry.example/team/trainer:v1'];
    expect(lookup).toMatchObject({ state: 'read', registry: 'registry.example', digest, retrieved: '2026-12-05' });
    expect(lookup?.state === 'read' && configCuda(lookup.config)).toBe('12.4.0');
    // HEAD (401, token, HEAD), the index, the amd64 manifest, the config: one token for the repository.
    expect(registry.requests.map((line) => line.split(' ')[0])).toEqual(['HEAD', 'GET', 'HEAD', 'GET', 'GET', 'GET']);
    expect(registry.tokens).toBe(1);
  });

  it('reads the platform the fleet runs from an index, and says when the index has none', async () => {
    const registry = new FakeRegistry({ host: 'registry.example' });
    registry.push('team/trainer', 'v1', {
      platforms: {
        'linux/amd64': imageConfig({ CUDA_VERSION: '12.8.1' }),
        'linux/arm64/v8': imageConfig({ CUDA_VERSION: '12.9.1' }, 'linux/arm64/v8'),
      },
      docker: true,
    });
    registry.push('team/x86-only', 'v1', {
      platforms: { 'linux/amd64': imageConfig({ CUDA_VERSION: '12.8.1' }), 'linux/ppc64le': imageConfig({}) },
    });
    const baseline = {
      registries: { credentials: { 'registry.example': { username: 'REGISTRY_U', password: 'REGISTRY_P' } } },
    };
    const arm = await lookUpImages(
      [ref('registry.example', 'team/trainer', 'v1'), ref('registry.example', 'team/x86-only', 'v1')],
      baseline,
      { ...settings(registry).settings, platform: 'linux/arm64' },
    );
    const trainer = arm.lookups['registry.example/team/trainer:v1'];
    expect(trainer?.state === 'read' && trainer.config.env.CUDA_VERSION).toBe('12.9.1');
    expect(arm.lookups['registry.example/team/x86-only:v1']).toEqual({
      state: 'unread',
      reason: 'the image has no linux/arm64 build (its index lists linux/amd64, linux/ppc64le)',
    });
  });

  it('reads Docker Hub official images under library/ and counts its manifest GETs as pulls', async () => {
    const hub = new FakeRegistry({
      host: 'registry-1.docker.io',
      realm: 'https://auth.docker.io/token',
      service: 'registry.docker.io',
      hubStyle: true,
    });
    hub.push('vllm/vllm-openai', 'v0.99.0', { platforms: { 'linux/amd64': real('vllm-vllm-openai-v0.8.5.json') } });
    const run = await lookUpImages(
      [ref(undefined, 'vllm/vllm-openai', 'v0.99.0'), ref(undefined, 'someone/private', 'v1')],
      EMPTY_BASELINE,
      settings(hub).settings,
    );
    expect(run.lookups['docker.io/vllm/vllm-openai:v0.99.0']).toMatchObject({ state: 'read', registry: 'docker.io' });
    // Docker Hub answers a repository it will not show (private or absent) with 401 insufficient_scope, not 404.
    expect(run.lookups['docker.io/someone/private:v1']).toEqual({
      state: 'unread',
      reason:
        'docker.io refused access (401): a private image, or one that does not exist; name credentials for it under registries in the baseline',
    });
    // One manifest GET (a single-platform image) and the config: HEAD is not a pull.
    expect(run.spent.hubPulls).toBe(1);
  });

  it('says a tag the registry does not have is missing (404 MANIFEST_UNKNOWN), and caches that for a while', async () => {
    const registry = new FakeRegistry({ host: 'nvcr.io', realm: 'https://nvcr.io/proxy_auth' });
    registry.push('nvidia/pytorch', '25.12-py3', {
      platforms: { 'linux/amd64': imageConfig({ CUDA_VERSION: '13.1.0.036' }) },
    });
    const { settings: s } = settings(registry);
    const first = await lookUpImages([ref('nvcr.io', 'nvidia/pytorch', '25.13-py3')], EMPTY_BASELINE, s);
    expect(first.lookups['nvcr.io/nvidia/pytorch:25.13-py3']).toEqual({
      state: 'missing',
      registry: 'nvcr.io',
      reason: 'nvcr.io has no tag 25.13-py3 of nvidia/pytorch (404 manifest unknown)',
    });
    const asked = registry.requests.length;
    const again = await lookUpImages([ref('nvcr.io', 'nvidia/pytorch', '25.13-py3')], EMPTY_BASELINE, s);
    expect(again.lookups['nvcr.io/nvidia/pytorch:25.13-py3']?.state).toBe('missing');
    expect(registry.requests.length).toBe(asked);
  });

  it('reads a config once per digest: a second check asks nothing while the tag is fresh, only HEAD after', async () => {
    const registry = new FakeRegistry({ host: 'ghcr.io', realm: 'https://ghcr.io/token' });
    registry.push('org/serve', 'v2', { platforms: { 'linux/amd64': imageConfig({ CUDA_VERSION: '12.9.1' }) } });
    const time = clock();
    const cache = new MemoryCache(100, time.now);
    const s = {
      cache,
      env: {},
      budgetMs: 5_000,
      today: '2026-12-05',
      fetch: registry.fetch,
      now: time.now,
      sleep: time.sleep,
    };
    await lookUpImages([ref('ghcr.io', 'org/serve', 'v2')], EMPTY_BASELINE, s);
    const first = registry.requests.length;
    const second = await lookUpImages([ref('ghcr.io', 'org/serve', 'v2')], EMPTY_BASELINE, s);
    expect(registry.requests.length).toBe(first);
    expect(second.spent.cached).toBe(1);
    await time.sleep(7 * 3600 * 1000); // past the tag's TTL: HEAD again, the config from the cache
    await lookUpImages([ref('ghcr.io', 'org/serve', 'v2')], EMPTY_BASELINE, s);
    expect(registry.requests.slice(first).every((line) => line.startsWith('HEAD') || line.includes('/token'))).toBe(
      true,
    );
  });

  it('follows a blob redirect to signed storage without sending the registry token there', async () => {
    const registry = new FakeRegistry({ host: 'registry.example', redirectBlobs: true });
    registry.push('team/a', 'v1', { platforms: { 'linux/amd64': imageConfig({ CUDA_VERSION: '12.6.3' }) } });
    const baseline = {
      registries: { credentials: { 'registry.example': { username: 'REGISTRY_U', password: 'REGISTRY_P' } } },
    };
    const run = await lookUpImages([ref('registry.example', 'team/a', 'v1')], baseline, settings(registry).settings);
    expect(run.lookups['registry.example/team/a:v1']?.state).toBe('read');
    const storage = registry.requests.filter((line) => line.includes('storage.registry.example'));
    expect(storage).toHaveLength(1);
    expect(storage[0]).not.toMatch(/\[Bearer\]/);
  });

  it('waits as Retry-After asks when the wait fits the budget, and gives up with the reason when it does not', async () => {
    const registry = new FakeRegistry({ host: 'ghcr.io', realm: 'https://ghcr.io/token' });
    registry.push('org/a', 'v1', { platforms: { 'linux/amd64': imageConfig({ CUDA_VERSION: '12.4.1' }) } });
    registry.fault({ match: '/manifests/', status: 429, retryAfter: '2' }, { match: '/blobs/', status: 503 });
    const { time, settings: s } = settings(registry);
    const run = await lookUpImages([ref('ghcr.io', 'org/a', 'v1')], EMPTY_BASELINE, s);
    expect(run.lookups['ghcr.io/org/a:v1']?.state).toBe('read');
    expect(time.slept).toEqual([2000, 500]);

    const limited = new FakeRegistry({ host: 'ghcr.io', realm: 'https://ghcr.io/token' });
    limited.push('org/a', 'v1', { platforms: { 'linux/amd64': imageConfig({ CUDA_VERSION: '12.4.1' }) } });
    limited.fault({ match: '/manifests/', status: 429, retryAfter: '3600' });
    const late = await lookUpImages([ref('ghcr.io', 'org/a', 'v1')], EMPTY_BASELINE, settings(limited).settings);
    expect(late.lookups['ghcr.io/org/a:v1']).toEqual({
      state: 'unread',
      reason: 'ghcr.io answered 429 too many requests and asks to wait 3600 s, past the lookup budget',
    });

    const down = new FakeRegistry({ host: 'quay.io', realm: 'https://quay.io/v2/auth' });
    down.push('org/a', 'v1', { platforms: { 'linux/amd64': imageConfig({}) } });
    down.fault(...Array.from({ length: 3 }, () => ({ match: '/manifests/', status: 502 })));
    const broken = await lookUpImages([ref('quay.io', 'org/a', 'v1')], EMPTY_BASELINE, settings(down).settings);
    expect(broken.lookups['quay.io/org/a:v1']).toEqual({ state: 'unread', reason: 'quay.io answered 502 3 times' });
  });

  it('refuses malformed, huge and tampered manifests with the reason', async () => {
    const registry = new FakeRegistry({ host: 'ghcr.io', realm: 'https://ghcr.io/token' });
    registry.pushRaw('org/bad', 'json', Buffer.from('{"schemaVersion": 2, "config": '));
    registry.pushRaw('org/bad', 'huge', Buffer.alloc(5 * 1024 * 1024, 32));
    registry.pushRaw('org/bad', 'v1', Buffer.from('{"schemaVersion":1,"name":"org/bad","fsLayers":[]}'));
    const run = await lookUpImages(
      [ref('ghcr.io', 'org/bad', 'json'), ref('ghcr.io', 'org/bad', 'huge'), ref('ghcr.io', 'org/bad', 'v1')],
      EMPTY_BASELINE,
      settings(registry).settings,
    );
    expect(run.lookups['ghcr.io/org/bad:json']).toEqual({ state: 'unread', reason: 'the manifest is not valid JSON' });
    expect(
      run.lookups['ghcr.io/org/bad:huge']?.state === 'unread' && run.lookups['ghcr.io/org/bad:huge'].reason,
    ).toMatch(/^the manifest is larger than 4 MiB/);
    expect(run.lookups['ghcr.io/org/bad:v1']).toEqual({
      state: 'unread',
      reason: 'the registry serves a schema 1 manifest, which has no config to read',
    });
  });

  it('reads private images with the credentials the baseline names by environment variable, and never logs them', async () => {
    const user = { username: 'robot', password: 's3cret-token' };
    const registry = new FakeRegistry({ host: 'registry.example', user });
    registry.push(
      'team/private',
      'v1',
      { platforms: { 'linux/amd64': imageConfig({ CUDA_VERSION: '12.8.0' }) } },
      { isPrivate: true },
    );
    const baseline = {
      registries: { credentials: { 'registry.example': { username: 'REGISTRY_USER', password: 'REGISTRY_TOKEN' } } },
    };
    const without = await lookUpImages(
      [ref('registry.example', 'team/private', 'v1')],
      baseline,
      settings(registry).settings,
    );
    expect(without.lookups['registry.example/team/private:v1']).toEqual({
      state: 'unread',
      reason: "registry.example's token service (auth.registry.example) answered 401",
    });
    const env = { REGISTRY_USER: user.username, REGISTRY_TOKEN: user.password };
    const run = await lookUpImages(
      [ref('registry.example', 'team/private', 'v1')],
      baseline,
      settings(registry, { env }).settings,
    );
    expect(run.lookups['registry.example/team/private:v1']?.state).toBe('read');
    expect(JSON.stringify(run)).not.toContain(user.password);
    expect(registry.requests.join('\n')).not.toContain(user.password);
  });

  it('answers a Basic challenge (htpasswd registries) with the credentials', async () => {
    const user = { username: 'ci', password: 'pw' };
    const registry = new FakeRegistry({ host: 'registry.example', user, basic: true });
    registry.push(
      'team/p',
      'v1',
      { platforms: { 'linux/amd64': imageConfig({ CUDA_VERSION: '12.2.2' }) } },
      { isPrivate: true },
    );
    const baseline = {
      registries: { credentials: { 'registry.example': { username: 'REGISTRY_U', password: 'REGISTRY_P' } } },
    };
    const run = await lookUpImages(
      [ref('registry.example', 'team/p', 'v1')],
      baseline,
      settings(registry, { env: { REGISTRY_U: 'ci', REGISTRY_P: 'pw' } }).settings,
    );
    expect(run.lookups['registry.example/team/p:v1']?.state).toBe('read');
  });

  it('asks only public registries and those the baseline names, and no more images than the cap', async () => {
    const registry = new FakeRegistry({ host: 'registry.internal.example' });
    const run = await lookUpImages(
      [ref('registry.internal.example', 'a', 'v1'), ref('169.254.169.254', 'latest', 'meta-data')],
      EMPTY_BASELINE,
      settings(registry).settings,
    );
    expect(registry.requests).toEqual([]);
    expect(run.lookups['169.254.169.254/latest:meta-data']).toEqual({
      state: 'unread',
      reason:
        '169.254.169.254 is not a public registry cuda-gatekeeper reads; name it under registries.credentials in the baseline to have it read',
    });
    const capped = await lookUpImages([ref('ghcr.io', 'a', '1'), ref('ghcr.io', 'b', '1')], EMPTY_BASELINE, {
      ...settings(registry).settings,
      maxImages: 1,
    });
    expect(capped.lookups['ghcr.io/b:1']).toEqual({
      state: 'unread',
      reason: 'the check names more than 1 images to look up; this one was not',
    });
  });

  it('stops at the budget: a registry that does not answer is said to, never waited for past it', async () => {
    const registry = new FakeRegistry({ host: 'ghcr.io' });
    const hanging: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason)));
    const started = Date.now();
    const run = await lookUpImages([ref('ghcr.io', 'org/slow', 'v1')], EMPTY_BASELINE, {
      ...settings(registry).settings,
      fetch: hanging,
      now: Date.now,
      budgetMs: 50,
    });
    expect(run.lookups['ghcr.io/org/slow:v1']).toEqual({
      state: 'unread',
      reason: 'ghcr.io did not answer within the lookup budget',
    });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('says a registry it cannot reach', async () => {
    const failing: typeof fetch = async () => {
      throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ENOTFOUND' } });
    };
    const run = await lookUpImages([ref('ghcr.io', 'org/a', 'v1')], EMPTY_BASELINE, {
      ...settings(new FakeRegistry({ host: 'ghcr.io' })).settings,
      fetch: failing,
    });
    expect(run.lookups['ghcr.io/org/a:v1']).toEqual({ state: 'unread', reason: 'cannot reach ghcr.io (ENOTFOUND)' });
  });
});

describe('protocol details', () => {
  it.each([
    [
      'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/python:pull"',
      {
        scheme: 'bearer',
        params: {
          realm: 'https://auth.docker.io/token',
          service: 'registry.docker.io',
          scope: 'repository:library/python:pull',
        },
      },
    ],
    [
      'Bearer realm="https://nvcr.io/proxy_auth",scope="repository:nvidia/pytorch:pull"',
      { scheme: 'bearer', params: { realm: 'https://nvcr.io/proxy_auth', scope: 'repository:nvidia/pytorch:pull' } },
    ],
    ['Basic realm="Registry Realm"', { scheme: 'basic', params: { realm: 'Registry Realm' } }],
  ])('WWW-Authenticate %s', (header, expected) => {
    expect(parseChallenge(header)).toEqual(expected);
  });

  it('reads Retry-After as seconds or a date', () => {
    expect(retryAfter('120', 0)).toBe(120_000);
    expect(retryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:27:00 GMT'))).toBe(60_000);
    expect(retryAfter('soon', 0)).toBeUndefined();
  });

  it('picks linux/arm64 with or without the v8 variant, and skips attestations', () => {
    const entries = [
      { digest: 'sha256:att', platform: { os: 'unknown', architecture: 'unknown' } },
      { digest: 'sha256:arm', platform: { os: 'linux', architecture: 'arm64', variant: 'v8' } },
    ];
    expect(pickPlatform(entries, 'linux/arm64')).toEqual({ digest: 'sha256:arm' });
    expect(pickPlatform(entries, 'linux/amd64')).toEqual({
      problem: 'the image has no linux/amd64 build (its index lists linux/arm64/v8)',
    });
  });
});

describe('the platform a lookup reads', () => {
  it('is linux/arm64 for a fleet of Grace or Jetson pools only', async () => {
    const { fleetPlatform } = await import('../../src/images/resolve.js');
    const pool = (gpus: string[], cls?: 'jetson') => ({
      name: 'p',
      driver: '580.95.05',
      gpus,
      labels: {},
      ...(cls ? { class: cls } : {}),
    });
    expect(fleetPlatform({ pools: [pool(['GH200']), pool(['GB200'])] })).toBe('linux/arm64');
    expect(fleetPlatform({ pools: [pool([], 'jetson')] })).toBe('linux/arm64');
    expect(fleetPlatform({ pools: [pool(['GH200']), pool(['H100'])] })).toBe('linux/amd64');
    expect(fleetPlatform({ pools: [] })).toBe('linux/amd64');
  });
});
