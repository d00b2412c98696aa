import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDockerHubTags, parseDriverTable, parseWheelIndex, toolkitVersion } from '../src/knowledge/refresh/parse.js';
import { OfflineError, refresh, SOURCES } from '../src/knowledge/refresh/run.js';
import { ROOT } from './harness.js';

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
    expect(['CUDA 12.6 Update 3', 'CUDA 11.1.1 Update 1', 'CUDA 12.1 GA', 'CUDA 13.4'].map(toolkitVersion)).toEqual(['12.6.3', '11.1.1', '12.1.0', '13.4.0']);
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
    const added = (result.files['pytorch.json'] as { releases: { version: string; confidence?: string }[] }).releases.find(
      (release) => release.version === '2.16.0',
    );
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
