/**
 * Every file format the checker reads, registered once. A format's descriptor lives in its folder
 * (`src/parsers/<format>/index.ts`, as Renovate's managers carry their own `fileMatch`) and says everything the rest
 * of the engine asks of a kind: its usual name, which names it claims, its parser, how its contents become units,
 * which lock files pin it and how its indexes are written. Code outside `src/parsers/` reads these properties and
 * never tests a kind by name; a new format is a folder, its kind in `FileKind`, and one line below.
 */
import type { FileKind } from './facts.js';
import type { FileFormat } from './format.js';
import { cog } from './cog/index.js';
import { compose } from './compose/index.js';
import { condaLock } from './conda-lock/index.js';
import { conda } from './conda/index.js';
import { dockerfile } from './dockerfile/index.js';
import { kubernetes } from './kubernetes/index.js';
import { pixiLock } from './pixi-lock/index.js';
import { pdmLock } from './pdm-lock/index.js';
import { pipfileLock } from './pipfile-lock/index.js';
import { pipfile } from './pipfile/index.js';
import { pixi } from './pixi/index.js';
import { poetryLock } from './poetry-lock/index.js';
import { pyproject } from './pyproject/index.js';
import { requirements } from './requirements/index.js';
import { skypilot } from './skypilot/index.js';
import { uvLock } from './uv-lock/index.js';

export type { FileFormat, ParseOptions } from './format.js';

/** The registry. Its order is the order of `--type`'s list and the web page's menu. */
const FORMATS = {
  dockerfile,
  requirements,
  conda,
  pyproject,
  'uv-lock': uvLock,
  pixi,
  'pixi-lock': pixiLock,
  'poetry-lock': poetryLock,
  'conda-lock': condaLock,
  pipfile,
  'pipfile-lock': pipfileLock,
  'pdm-lock': pdmLock,
  kubernetes,
  compose,
  cog,
  skypilot,
} as const satisfies Record<FileKind, FileFormat>;

const ALL: readonly FileFormat[] = Object.values(FORMATS);

export const FILE_KIND_NAMES = Object.keys(FORMATS) as FileKind[];

export function isFileKind(value: string): value is FileKind {
  return Object.hasOwn(FORMATS, value);
}

export function formatOf(kind: FileKind): FileFormat {
  return FORMATS[kind];
}

/** The format that claims a path by its name, if one does. */
export function formatByName(path: string): FileFormat | undefined {
  const name = path.slice(path.lastIndexOf('/') + 1).toLowerCase();
  return ALL.find((format) => format.matches?.(name, path));
}

/** Every path some format reads, as one pre-commit `files` pattern: the union of the formats' `hookPattern`s. */
export const HOOK_FILES = `(?i)${[...new Set(ALL.map((format) => format.hookPattern))].join('|')}`;

/**
 * The names a Dockerfile most likely installs from its folder, in registry order (each format's `besideDockerfile`).
 */
export const BESIDE_DOCKERFILE: readonly string[] = ALL.flatMap((format) => format.besideDockerfile ?? []);

/**
 * The files read with a manifest or a lock of that name: a manifest's lock files, and the manifests a lock pins
 * (a manifest and its lock are one selection).
 */
export function packagingPartners(name: string): readonly string[] {
  const format = formatByName(name);
  if (!format || format.fileName !== name) return [];
  const locks = format.companions ?? [];
  const manifests = ALL.filter((other) => other.companions?.includes(name)).map((other) => other.fileName);
  return [...locks, ...manifests];
}

/** Lock files: written by their tool (uv lock, pixi lock, poetry lock, conda-lock), never edited by hand. */
export function isLockKind(kind: FileKind | undefined): boolean {
  return kind !== undefined && FORMATS[kind].lock !== undefined;
}

/**
 * The commands that write the lock files pinning a manifest (`uv lock`, `poetry lock`, `pixi lock` for a
 * pyproject.toml).
 */
export function lockCommands(kind: FileKind): string[] {
  return (FORMATS[kind].companions ?? []).flatMap((name) => formatByName(name)?.lock?.writtenBy ?? []);
}

/**
 * Kinds whose contexts are selections (`variant`: the project, an extra, a group, a pixi environment, a lock's
 * platform), one unit each.
 */
export function hasSelections(kind: FileKind): boolean {
  return FORMATS[kind].units === 'selections';
}
