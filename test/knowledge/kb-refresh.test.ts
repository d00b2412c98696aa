import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EMPTY_BASELINE } from '../../src/baseline/schema.js';
import { MemoryCache } from '../../src/images/cache.js';
import { lookUpImages } from '../../src/images/resolve.js';
import { FakeRegistry, imageConfig } from '../support/fake-registry.js';
import { parseDockerHubTags, parseDriverTable, toolkitVersion } from '../../src/knowledge/refresh/parse.js';
import {
  OfflineError,
  refresh,
  SOURCES,
  summary,
  type Fetch,
  type ReadImages,
} from '../../src/knowledge/refresh/run.js';
import { parseProjectPage, parseWheelName, SIMPLE_ACCEPT } from '../../src/knowledge/refresh/simple-index.js';
import { parse } from 'yaml';
import { ROOT } from '../support/harness.js';

const excerpt = (name: string) => readFileSync(join(ROOT, 'fixtures', 'kb', name), 'utf8');

/**
 * The sources as recorded pages: the variant indexes of fixtures/kb/indexes/ (PEP 691 JSON where recorded so, else
 * PEP 503 HTML; any other variant answers 404, as download.pytorch.org does for an index that does not exist), and
 * `others` by URL. `edit` changes a page before it is served. The variant pages are asked for with PEP 691's Accept.
 */
function recorded(
  others: Record<string, string>,
  edit: (url: string, page: string) => string = (_, page) => page,
): Fetch {
  return async (url, accept) => {
    if (url in others) return others[url];
    const variant = /^https:\/\/download\.pytorch\.org\/whl\/([^/]+)\/([^/]+)\/$/.exec(url);
    if (!variant) throw new OfflineError(`no recorded page for ${url}`);
    expect(accept).toBe(SIMPLE_ACCEPT);
    for (const ending of ['json', 'html']) {
      const path = join(ROOT, 'fixtures', 'kb', 'indexes', variant[1]!, `${variant[2]}.${ending}`);
      if (existsSync(path)) return edit(url, readFileSync(path, 'utf8'));
    }
    return undefined;
  };
}

describe('kb:refresh parsers on saved excerpts', () => {
  it('reads a variant index page as PEP 503 HTML and as PEP 691 JSON: version, build tag and platform', () => {
    const html = parseProjectPage(excerpt('indexes/cu126/torch.html'), 'torch');
    expect(html).toContainEqual({ version: '2.9.0', label: 'cu126', platform: 'linux_x86_64' });
    const json = parseProjectPage(excerpt('indexes/cu129/torch.json'), 'torch');
    expect(new Set(json.map((wheel) => `${wheel.version}+${wheel.label} ${wheel.platform}`))).toEqual(
      new Set(['2.9.0+cu129 linux_x86_64', '2.12.1+cu129 linux_x86_64', '2.12.1+cu129 linux_aarch64']),
    );
    // Another project's wheels on the page, sdists and unknown platforms are not this project's wheels.
    expect(
      parseProjectPage(
        '<a href="/x">torchvision-0.24.0+cu129-cp310-cp310-manylinux_2_28_x86_64.whl</a>' +
          '<a href="/y">torch-2.9.0.tar.gz</a><a href="/z">torch-2.9.0-cp310-none-macosx_11_0_arm64.whl</a>',
        'torch',
      ),
    ).toEqual([]);
  });

  it('reads wheel file names as PEP 427 and PEP 425 write them', () => {
    expect(parseWheelName('torch-2.9.0%2Bcu129-cp310-cp310-manylinux_2_28_aarch64.whl')).toEqual({
      distribution: 'torch',
      indexed: { version: '2.9.0', label: 'cu129', platform: 'linux_aarch64' },
    });
    expect(parseWheelName('torch-2.5.1+cu124-1-cp311-cp311-win_amd64.whl')?.indexed).toEqual({
      version: '2.5.1',
      label: 'cu124',
      platform: 'win_amd64',
    });
    expect(
      parseWheelName('nvidia_nccl_cu12-2.21.5-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl')?.indexed,
    ).toEqual({ version: '2.21.5', platform: 'linux_x86_64' });
    expect(parseWheelName('torch-2.9.0.tar.gz')).toBeUndefined();
  });

  it('reads NVIDIA Table 3 rows', () => {
    expect(parseDriverTable(excerpt('cuda-release-notes.html'))).toEqual([
      { label: '11.0.3 Update 1', version: '11.0.3', linux: '450.51.06', windows: '451.82' },
      { label: '12.4 Update 1', version: '12.4.1', linux: '550.54.15', windows: '551.78' },
      { label: '12.8 GA', version: '12.8.0', linux: '570.26', windows: '570.65' },
      { label: '12.9 Update 1', version: '12.9.1', linux: '575.57.08', windows: '576.57' },
      { label: '13.0 GA', version: '13.0.0', linux: '580.65.06' },
    ]);
    expect(['CUDA 12.6 Update 3', 'CUDA 11.1.1 Update 1', 'CUDA 12.1 GA', 'CUDA 13.4'].map(toolkitVersion)).toEqual([
      '12.6.3',
      '11.1.1',
      '12.1.0',
      '13.4.0',
    ]);
  });

  it('reads Docker Hub tag names', () => {
    expect(parseDockerHubTags(excerpt('dockerhub-tags.json'))).toEqual([
      '12.4.1-cudnn-devel-ubuntu22.04',
      '12.8.1-runtime-ubuntu24.04',
      '13.0.2-base-ubuntu24.04',
    ]);
  });
});

describe('kb:refresh merge', () => {
  it('reports no change when the sources agree with the data, and new rows when they add some', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cgk-kb-'));
    cpSync(join(ROOT, 'src', 'knowledge', 'data'), dir, { recursive: true });
    const others = {
      [SOURCES.releaseNotes]: excerpt('cuda-release-notes.html'),
      [SOURCES.dockerHub]: excerpt('dockerhub-tags.json'),
    };
    const added = (url: string, page: string) =>
      url.endsWith('/cu130/torch/')
        ? page.replace(
            '</body>',
            '<a href="/whl/cu130/torch-2.16.0%2Bcu130-cp312-cp312-manylinux_2_28_x86_64.whl">torch-2.16.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl</a></body>',
          )
        : page;
    const result = await refresh(dir, recorded(others, added), '2026-12-01');
    expect(result.changes).toEqual(['pytorch: new release 2.16.0 (cu130)']);
    const release = (
      result.files['pytorch.json'] as { releases: { version: string; confidence?: string; source: string[] }[] }
    ).releases.find((candidate) => candidate.version === '2.16.0');
    expect(release).toMatchObject({
      confidence: 'unverified',
      source: ['https://download.pytorch.org/whl/cu130/torch/'],
    });
  });

  it('adds the builds an index lists that the data lacks, with the platforms and the page as source', async () => {
    // The data as it was before the cu129 builds of 2.9.0 and 2.12.1 were recorded (round-4 audit, row 1).
    const dir = mkdtempSync(join(tmpdir(), 'cgk-kb-'));
    cpSync(join(ROOT, 'src', 'knowledge', 'data'), dir, { recursive: true });
    const path = join(dir, 'pytorch.json');
    const data = JSON.parse(readFileSync(path, 'utf8')) as {
      releases: { version: string; variants: string[]; platforms?: object; source: string[] }[];
    };
    for (const release of data.releases.filter((candidate) => ['2.9.0', '2.12.1'].includes(candidate.version))) {
      release.variants = release.variants.filter((tag) => tag !== 'cu129');
      delete release.platforms;
    }
    writeFileSync(path, JSON.stringify(data));
    const others = {
      [SOURCES.releaseNotes]: excerpt('cuda-release-notes.html'),
      [SOURCES.dockerHub]: excerpt('dockerhub-tags.json'),
    };
    const result = await refresh(dir, recorded(others), '2026-12-05');
    expect(result.changes).toEqual([
      'pytorch: 2.9.0 variants cu126, cu128, cu130 -> cu126, cu128, cu129, cu130',
      'pytorch: 2.12.1 variants cu126, cu130, cu132 -> cu126, cu129, cu130, cu132 (cu129 on linux_x86_64 and linux_aarch64)',
    ]);
    const releases = (result.files['pytorch.json'] as typeof data).releases;
    expect(releases.find((release) => release.version === '2.12.1')).toMatchObject({
      variants: ['cu126', 'cu129', 'cu130', 'cu132'],
      platforms: { cu129: ['linux_x86_64', 'linux_aarch64'] },
      source: expect.arrayContaining(['https://download.pytorch.org/whl/cu129/torch/']),
    });
  });

  it('names a torchvision or torchaudio build the indexes lack though its torch has it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cgk-kb-'));
    cpSync(join(ROOT, 'src', 'knowledge', 'data'), dir, { recursive: true });
    const others = {
      [SOURCES.releaseNotes]: excerpt('cuda-release-notes.html'),
      [SOURCES.dockerHub]: excerpt('dockerhub-tags.json'),
    };
    const withoutOne = (url: string, page: string) =>
      url.endsWith('/cu132/torchvision/')
        ? page.replace(/<a [^>]*>torchvision-0\.27\.0\+cu132[^<]*<\/a><br\/>/g, '')
        : page;
    const result = await refresh(dir, recorded(others, withoutOne), '2026-12-05');
    expect(result.changes).toEqual([
      'pytorch: torchvision 0.27.0 has no cu132 build on the indexes, though torch 2.12.0 has',
    ]);
  });

  it('fails with a clear message when offline', async () => {
    await expect(
      refresh(
        join(ROOT, 'src', 'knowledge', 'data'),
        async (url) => {
          throw new OfflineError(`cannot read ${url}`);
        },
        '2026-12-01',
      ),
    ).rejects.toThrow(/cannot read https:\/\/download\.pytorch\.org/);
  });
});

describe('kb:refresh on a real page', () => {
  // fixtures/kb/real/: NVIDIA's CUDA 13.2 release notes, sections 2.2 to Table 3, from a stored public copy (see
  // fixtures/kb/README.md). Its rows are as NVIDIA wrote them: "CUDA 9.2 (9.2.148 Update 1)", ">= 450.51.06"
  // with a space, "N/A" for 13.x Windows, a header row inside the body.
  const page = readFileSync(join(ROOT, 'fixtures', 'kb', 'real', 'cuda-13.2-release-notes.table3.md'), 'utf8');

  it('reads every row of Table 3, builds before 11.0 by their full version', () => {
    const rows = parseDriverTable(page);
    expect(rows).toHaveLength(62);
    expect(rows[0]).toEqual({ label: '7.0 (7.0.28)', version: '7.0.28', linux: '346.46', windows: '347.62' });
    expect(rows.find((row) => row.version === '9.2.148')).toMatchObject({ linux: '396.37' });
    expect(rows.find((row) => row.version === '11.0.3')).toMatchObject({ linux: '450.51.06' });
    expect(rows.at(-1)).toEqual({ label: '13.2 GA', version: '13.2.0', linux: '595.45.04' });
    expect(new Set(rows.map((row) => row.version)).size).toBe(rows.length);
  });

  it('agrees with the knowledge base row for row: a refresh from it changes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cgk-kb-'));
    cpSync(join(ROOT, 'src', 'knowledge', 'data'), dir, { recursive: true });
    const result = await refresh(
      dir,
      recorded({ [SOURCES.releaseNotes]: page, [SOURCES.dockerHub]: excerpt('dockerhub-tags.json') }),
      '2026-12-01',
    );
    expect(result.changes).toEqual([]);
  });

  it('names a changed driver row under its source in the pull request body', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cgk-kb-'));
    cpSync(join(ROOT, 'src', 'knowledge', 'data'), dir, { recursive: true });
    const changed = page.replace('595.45.04', '595.45.09');
    expect(changed).not.toBe(page);
    const result = await refresh(
      dir,
      recorded({ [SOURCES.releaseNotes]: changed, [SOURCES.dockerHub]: excerpt('dockerhub-tags.json') }),
      '2026-12-08',
    );
    expect(result.changes).toEqual(['drivers: CUDA 13.2 GA Linux 595.45.04 -> 595.45.09']);
    const body = summary(result.changes, '2026-12-08');
    expect(body).toContain(`### From ${SOURCES.releaseNotes}\n\n- CUDA 13.2 GA Linux 595.45.04 -> 595.45.09`);
    expect(summary([], '2026-12-08')).toMatch(/matches its sources/);
  });

  it('runs weekly in CI and opens a pull request with the summary', () => {
    const workflow = readFileSync(join(ROOT, '.github', 'workflows', 'kb-refresh.yml'), 'utf8');
    const parsed = parse(workflow) as {
      on: { schedule: { cron: string }[] };
      jobs: { refresh: { steps: { run?: string }[] } };
    };
    expect(parsed.on.schedule[0]!.cron).toMatch(/^\S+ \S+ \* \* [0-6]$/);
    const runs = parsed.jobs.refresh.steps.map((step) => step.run ?? '').join('\n');
    expect(runs).toContain('npm run kb:refresh -- --summary');
    expect(runs).toMatch(/gh pr (create|edit)/);
  });
});

describe('image rows checked against the images themselves', () => {
  it('confirms an unverified row by its config, corrects one the config contradicts, and names a tag that is gone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cgk-kb-'));
    cpSync(join(ROOT, 'src', 'knowledge', 'data'), dir, { recursive: true });
    const others = {
      [SOURCES.releaseNotes]: excerpt('cuda-release-notes.html'),
      [SOURCES.dockerHub]: excerpt('dockerhub-tags.json'),
    };
    // A registry with two of the unverified vLLM rows' images: v0.8.4's config says 12.4.0 (as the row), v0.7.3's
    // 12.4.1 (the row says 12.1.0); v0.6.5 is not on it.
    const hub = new FakeRegistry({ host: 'registry-1.docker.io', realm: 'https://auth.docker.io/token' });
    hub.push('vllm/vllm-openai', 'v0.8.4', { platforms: { 'linux/amd64': imageConfig({ CUDA_VERSION: '12.4.0' }) } });
    hub.push('vllm/vllm-openai', 'v0.7.3', { platforms: { 'linux/amd64': imageConfig({ CUDA_VERSION: '12.4.1' }) } });
    const readImages: ReadImages = async (refs) =>
      (
        await lookUpImages(
          refs.filter((ref) => !ref.registry && ['v0.8.4', 'v0.7.3', 'v0.6.5'].includes(ref.tag ?? '')),
          EMPTY_BASELINE,
          { cache: new MemoryCache(), env: {}, budgetMs: 5_000, today: '2026-12-06', fetch: hub.fetch },
        )
      ).lookups;
    const result = await refresh(dir, recorded(others), '2026-12-06', readImages);
    expect(result.changes).toEqual([
      'images: vllm/vllm-openai:v0.6.5 is not on its registry (docker.io has no tag v0.6.5 of vllm/vllm-openai (404 manifest unknown))',
      'images: vllm/vllm-openai:v0.7.3 CUDA 12.1.0 -> 12.4.1 (its config)',
      'images: vllm/vllm-openai:v0.8.4 CUDA 12.4.0 confirmed by its config',
    ]);
    const vendor = (
      result.files['images.json'] as {
        vendor: { name: string; tags: Record<string, string>; confidence?: string; source: string[] }[];
      }
    ).vendor;
    const group = (tag: string) =>
      vendor.find((candidate) => candidate.name === 'vllm/vllm-openai' && Object.hasOwn(candidate.tags, tag))!;
    const row = (tag: string) => ({ ...group(tag), cuda: group(tag).tags[tag] });
    expect(row('v0.8.4').confidence).toBeUndefined();
    expect(row('v0.8.4').source[0]).toMatch(
      /^docker\.io image config of vllm\/vllm-openai:v0\.8\.4 \(sha256:[0-9a-f]{64}, linux\/amd64\): CUDA_VERSION=12\.4\.0$/,
    );
    expect(row('v0.7.3')).toMatchObject({ cuda: '12.4.1' });
    expect(row('v0.6.5')).toMatchObject({ cuda: '12.1.0', confidence: 'unverified' });
  });
});
