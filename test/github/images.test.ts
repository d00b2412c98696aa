/**
 * The App looks up the images of a pull request's manifests and Dockerfiles (a fake registry that answers as the
 * distribution and token specs say): a private image's config decides the fleet verdict; a registry that fails is
 * said, and the check still completes; the baseline can turn lookups off.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Probot } from 'probot';
import { MemoryCache } from '../../src/images/cache.js';
import { FakeGitHub } from '../support/fake-github.js';
import { FakeRegistry } from '../support/fake-registry.js';
import { setup, teardown } from '../support/probot.js';
import { pullScenario } from '../support/scenario.js';
import { codeBlock } from '../support/code-block.js';

const CONFIGS = join(import.meta.dirname, '..', '..', 'fixtures', 'images', 'configs');

const MANIFEST = codeBlock`
  apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: serve
  spec:
    template:
      spec:
        containers:
          - name: serve
            image: ghcr.io/acme/serve:v2
            resources:
              limits:
                nvidia.com/gpu: 1
`;

function registry(): FakeRegistry {
  const ghcr = new FakeRegistry({ host: 'ghcr.io', realm: 'https://ghcr.io/token' });
  // Built on nvidia/cuda 13.2.0: its own NVIDIA_REQUIRE_CUDA has no GeForce term.
  ghcr.push('acme/serve', 'v2', {
    platforms: {
      'linux/amd64': JSON.parse(readFileSync(join(CONFIGS, 'vllm-build-on-nvidia-cuda-13.2.0-arm64.json'), 'utf8')),
    },
  });
  return ghcr;
}

let fake: FakeGitHub;
let probot: Probot;

afterEach(() => {
  expect(fake.violations, "every request matches GitHub's API description").toEqual([]);
  teardown();
});

function start(fetch: typeof globalThis.fetch) {
  fake = new FakeGitHub();
  ({ probot } = setup(fake, {
    deps: { images: { cache: new MemoryCache(), env: {}, budgetMs: 5_000, fetch } },
  }));
}

const FLEET = codeBlock`
  fleet:
    pools:
      - { name: desk, driver: "580.95.05", gpus: [RTX 5090], class: geforce, runtime: legacy }
`;

describe('image lookups in pull request checks', () => {
  it('judges a private image by its own config: the toolkit refuses it on the GeForce pool', async () => {
    const ghcr = registry();
    start(ghcr.fetch);
    const scenario = pullScenario(fake, {
      main: { '.github/cuda-gatekeeper.yml': FLEET },
      head: { 'deploy/serve.yaml': MANIFEST },
      changed: ['deploy/serve.yaml'],
    });
    await probot.receive({ id: 'd1', name: 'pull_request', payload: scenario.payload } as never);
    const run = fake.checkRuns[0]!;
    expect(run.conclusion).toBe('failure');
    expect(run.annotations).toEqual([
      expect.objectContaining({ path: 'deploy/serve.yaml', title: 'driver-floor', annotation_level: 'failure' }),
    ]);
    expect((run.annotations[0] as { message: string }).message).toMatch(
      /refuses to start it on every pool it may run on, desk/,
    );
    expect(ghcr.requests.length).toBeGreaterThan(0);
  });

  it('says a registry that cannot be reached, and completes the check', async () => {
    start(async () => {
      throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
    });
    const scenario = pullScenario(fake, {
      main: { '.github/cuda-gatekeeper.yml': FLEET },
      head: { 'deploy/serve.yaml': MANIFEST },
      changed: ['deploy/serve.yaml'],
    });
    await probot.receive({ id: 'd2', name: 'pull_request', payload: scenario.payload } as never);
    const run = fake.checkRuns[0]!;
    expect(run.status).toBe('completed');
    expect(run.annotations).toEqual([expect.objectContaining({ title: 'image-unknown', annotation_level: 'warning' })]);
    expect((run.annotations[0] as { message: string }).message).toContain(
      'not read: cannot reach ghcr.io (ECONNREFUSED)',
    );
  });

  it('asks no registry when the baseline says registries.lookup: false', async () => {
    const ghcr = registry();
    start(ghcr.fetch);
    const scenario = pullScenario(fake, {
      main: { '.github/cuda-gatekeeper.yml': `${FLEET}registries:\n  lookup: false\n` },
      head: { 'deploy/serve.yaml': MANIFEST },
      changed: ['deploy/serve.yaml'],
    });
    await probot.receive({ id: 'd3', name: 'pull_request', payload: scenario.payload } as never);
    expect(ghcr.requests).toEqual([]);
    expect((fake.checkRuns[0]!.annotations[0] as { message: string }).message).toContain('its registry was not asked');
  });
});

describe('the server looks images up by default', () => {
  it('with a memory cache, unless IMAGE_LOOKUP=off; with IMAGE_LOOKUP_BUDGET_MS as the budget', async () => {
    const { imageLookups } = await import('../../src/github/env-deps.js');
    fake = new FakeGitHub();
    const on = imageLookups({ IMAGE_LOOKUP_BUDGET_MS: '3000' });
    expect(on.images?.budgetMs).toBe(3000);
    expect(on.images?.cache).toBeInstanceOf(MemoryCache);
    expect(imageLookups({ IMAGE_LOOKUP: 'off' })).toEqual({});
  });
});
