/** The format registry (src/parsers/formats.ts): one descriptor per kind, names claimed by one format at most. */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { assertProperty } from '../support/property.js';
import { describe, expect, it } from 'vitest';
import {
  BESIDE_DOCKERFILE,
  FILE_KIND_NAMES,
  formatByName,
  formatOf,
  hasSelections,
  isLockKind,
  lockCommands,
  packagingPartners,
} from '../../src/parsers/formats.js';
import { lockCompanions, parseFile } from '../../src/parsers/index.js';

const ROOT = join(import.meta.dirname, '..', '..');

function* pathsUnder(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* pathsUnder(path);
    else yield relative(ROOT, path);
  }
}

/** Every format whose name matcher claims a path. */
const claimants = (path: string): string[] => {
  const name = path.slice(path.lastIndexOf('/') + 1).toLowerCase();
  return FILE_KIND_NAMES.filter((kind) => formatOf(kind).matches?.(name, path));
};

describe('the format registry', () => {
  it('registers each kind under its own name, and claims each usual file name for its format', () => {
    for (const kind of FILE_KIND_NAMES) {
      const format = formatOf(kind);
      expect(format.kind).toBe(kind);
      // A Kubernetes manifest and a SkyPilot task are known by their content only.
      expect(formatByName(format.fileName)?.kind).toBe(kind === 'kubernetes' || kind === 'skypilot' ? undefined : kind);
      expect(parseFile(format.fileName, '', kind).kind).toBe(kind);
    }
  });

  it('never lets two formats claim one name: every fixture path, and generated names', () => {
    const paths = [...pathsUnder(join(ROOT, 'fixtures'))];
    expect(paths.length).toBeGreaterThan(500);
    for (const path of paths) expect(claimants(path).length, path).toBeLessThanOrEqual(1);
    const part = fc.constantFrom(
      'dockerfile',
      'Containerfile',
      'conda',
      'conda-lock',
      'environment',
      'requirements',
      'constraints',
      'pyproject',
      'uv',
      'pixi',
      'poetry',
      'Pipfile',
      'pdm',
      'gpu',
      'cuda',
      'env',
    );
    const separator = fc.constantFrom('.', '-', '_', '');
    const ending = fc.constantFrom(
      '',
      '.txt',
      '.in',
      '.yml',
      '.yaml',
      '.toml',
      '.lock',
      '.dockerfile',
      '.md',
      '.lock.yml',
    );
    const folder = fc.constantFrom('', 'requirements/', 'docker/', 'conda/environments/');
    assertProperty(
      fc.property(
        folder,
        fc.array(fc.tuple(part, separator), { minLength: 1, maxLength: 3 }),
        ending,
        (dir, parts, end) => {
          const path = `${dir}${parts.map(([word, sep]) => word + sep).join('')}${end}`;
          expect(claimants(path).length, path).toBeLessThanOrEqual(1);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('derives the lock facts from the descriptors', () => {
    expect(FILE_KIND_NAMES.filter(isLockKind)).toEqual([
      'uv-lock',
      'pixi-lock',
      'poetry-lock',
      'conda-lock',
      'pipfile-lock',
      'pdm-lock',
    ]);
    expect(FILE_KIND_NAMES.filter(hasSelections)).toEqual([
      'pyproject',
      'uv-lock',
      'pixi',
      'pixi-lock',
      'poetry-lock',
      'conda-lock',
      'pipfile-lock',
      'pdm-lock',
    ]);
    expect(lockCommands('pyproject')).toEqual(['uv lock', 'poetry lock', 'pixi lock', 'pdm lock']);
    expect(lockCommands('pixi')).toEqual(['pixi lock']);
    expect(lockCommands('pipfile')).toEqual(['pipenv lock']);
    expect(lockCommands('requirements')).toEqual([]);
    expect(lockCompanions('svc/pyproject.toml', 'pyproject')).toEqual([
      'svc/uv.lock',
      'svc/poetry.lock',
      'svc/pixi.lock',
      'svc/pdm.lock',
    ]);
    expect(lockCompanions('Dockerfile', 'dockerfile')).toEqual([]);
  });

  it('reads a manifest with its locks and a lock with its manifests', () => {
    expect(packagingPartners('pyproject.toml')).toEqual(['uv.lock', 'poetry.lock', 'pixi.lock', 'pdm.lock']);
    expect(packagingPartners('pdm.lock')).toEqual(['pyproject.toml']);
    expect(packagingPartners('pixi.toml')).toEqual(['pixi.lock']);
    expect(packagingPartners('uv.lock')).toEqual(['pyproject.toml']);
    expect(packagingPartners('poetry.lock')).toEqual(['pyproject.toml']);
    expect(packagingPartners('pixi.lock')).toEqual(['pyproject.toml', 'pixi.toml']);
    expect(packagingPartners('Pipfile')).toEqual(['Pipfile.lock']);
    expect(packagingPartners('Pipfile.lock')).toEqual(['Pipfile']);
    expect(packagingPartners('requirements.txt')).toEqual([]);
    expect(packagingPartners('conda-lock.yml')).toEqual([]);
  });

  it('lists what a Dockerfile most likely installs from its folder', () => {
    expect(BESIDE_DOCKERFILE).toEqual([
      'requirements.txt',
      'requirements-gpu.txt',
      'requirements-cuda.txt',
      'environment.yml',
      'environment.yaml',
      'pyproject.toml',
      'uv.lock',
      'pixi.toml',
      'pixi.lock',
      'poetry.lock',
      'Pipfile',
      'Pipfile.lock',
      'pdm.lock',
    ]);
    for (const name of BESIDE_DOCKERFILE) expect(formatByName(name)?.units).not.toBe('stages');
  });
});
