import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  parseDockerHubTags,
  parseDriverTable,
  parseWheelIndex,
  toolkitVersion,
} from '../../src/knowledge/refresh/parse.js';
import { OfflineError, refresh, SOURCES, summary } from '../../src/knowledge/refresh/run.js';
import { parse } from 'yaml';
import { ROOT } from '../support/harness.js';

const excerpt = (name: string) => readFileSync(join(ROOT, 'fixtures', 'kb', name), 'utf8');

describe('kb:refresh parsers on saved excerpts', () => {
  it('reads Linux x86_64 CUDA wheels from the PyTorch simple index', () => {
    const index = parseWheelIndex(excerpt('torch-index.html'));
    expect(Object.fromEntries([...index].map(([version, tags]) => [version, [...tags].sort()]))).toEqual({
      '2.3.0': ['cu118', 'cu121'],
      '2.6.0': ['cu118', 'cu124', 'cu126'],
    });
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
    const pages: Record<string, string> = {
      [SOURCES.torchIndex]: excerpt('torch-index.html').replace(
        '</body>',
        '<a href="/whl/cu130/torch-2.16.0%2Bcu130-cp312-cp312-manylinux_2_28_x86_64.whl">torch-2.16.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl</a></body>',
      ),
      [SOURCES.releaseNotes]: excerpt('cuda-release-notes.html'),
      [SOURCES.dockerHub]: excerpt('dockerhub-tags.json'),
    };
    const result = await refresh(dir, async (url) => pages[url]!, '2026-12-01');
    expect(result.changes).toEqual(['pytorch: new release 2.16.0 (cu130)']);
    const added = (
      result.files['pytorch.json'] as { releases: { version: string; confidence?: string }[] }
    ).releases.find((release) => release.version === '2.16.0');
    expect(added).toMatchObject({ confidence: 'unverified' });
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
    const pages: Record<string, string> = {
      [SOURCES.torchIndex]: excerpt('torch-index.html'),
      [SOURCES.releaseNotes]: page,
      [SOURCES.dockerHub]: excerpt('dockerhub-tags.json'),
    };
    const result = await refresh(dir, async (url) => pages[url]!, '2026-12-01');
    expect(result.changes).toEqual([]);
  });

  it('names a changed driver row under its source in the pull request body', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cgk-kb-'));
    cpSync(join(ROOT, 'src', 'knowledge', 'data'), dir, { recursive: true });
    const changed = page.replace('595.45.04', '595.45.09');
    expect(changed).not.toBe(page);
    const pages: Record<string, string> = {
      [SOURCES.torchIndex]: excerpt('torch-index.html'),
      [SOURCES.releaseNotes]: changed,
      [SOURCES.dockerHub]: excerpt('dockerhub-tags.json'),
    };
    const result = await refresh(dir, async (url) => pages[url]!, '2026-12-08');
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
