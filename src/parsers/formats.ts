/**
 * Every file format the checker reads, registered once. A format's descriptor lives in its folder
 * (`src/parsers/<format>/index.ts`, as Renovate's managers carry their own `fileMatch`) and says everything the rest
 * of the engine asks of a kind: its usual name, which names it claims, its parser, how its contents become units,
 * which lock files pin it and how its indexes are written. Code outside `src/parsers/` reads these properties and
 * never tests a kind by name; a new format is a folder, its kind in `FileKind`, and one line below.
 */
import type { FileKind, ParsedFile } from './facts.js';
import type { ManifestOptions } from './kubernetes/parse.js';
import { condaLock } from './conda-lock/index.js';
import { conda } from './conda/index.js';
import { dockerfile } from './dockerfile/index.js';
import { kubernetes } from './kubernetes/index.js';
import { pixiLock } from './pixi-lock/index.js';
import { pixi } from './pixi/index.js';
import { poetryLock } from './poetry-lock/index.js';
import { pyproject } from './pyproject/index.js';
import { requirements } from './requirements/index.js';
import { uvLock } from './uv-lock/index.js';

/** What parsing needs beyond a file's text: the baseline's `images` mapping, for Kubernetes manifests. */
export type ParseOptions = ManifestOptions;

interface FormatBase {
  readonly kind: FileKind;
  /** The file name that is its usual spelling (`--type`, the web page's file, the fuzz inputs' names). */
  readonly fileName: string;
  /**
   * Whether a path is a file of this format by its name alone (`name` is the lower-cased last segment). No two
   * formats claim one name (test/parsers/formats.test.ts). Absent: only the content says (a Kubernetes manifest).
   */
  readonly matches?: (name: string, path: string) => boolean;
  /**
   * The paths it is read from, as pre-commit's `files` selects them: a regular expression in Python's `re` syntax,
   * searched case-insensitively in the path from the repository root. The names `matches` claims, and for a format
   * read by content (a conda environment outside its names, a manifest) every YAML file. The hook's pattern is the
   * union of these (HOOK_FILES); test/cli/pre-commit.test.ts checks with Python that it selects what the CLI reads.
   */
  readonly hookPattern: string;
  readonly parse: (path: string, text: string, options: ParseOptions) => ParsedFile;
  /**
   * A lock file, never edited by hand: the command that writes it, and how it is brought in line (a finding whose
   * fix would edit it says this instead, src/gate.ts).
   */
  readonly lock?: { readonly writtenBy: string; readonly relock: string };
  /**
   * The lock files beside it that pin it (read with it, so exact-pin sees that its ranges are locked). None when
   * absent.
   */
  readonly companions?: readonly string[];
  /**
   * The names under which a Dockerfile most likely installs a file of this format from its own folder (what
   * `pip install -r`, `uv sync`, `pixi install` and `poetry install` read): the App reads them with a changed
   * Dockerfile in its first round.
   */
  readonly besideDockerfile?: readonly string[];
  /**
   * How its package indexes are written: as pip options (`--extra-index-url URL`, editable in place), as tables
   * chosen per extra or environment (a pyproject.toml's `[[tool.uv.index]]`, pixi's `index =`: what to change is the
   * routing, not one URL), or as the registry a lock recorded.
   */
  readonly indexes: 'options' | 'tables' | 'registry';
  /** pip reads an option on a line of its own (`--extra-index-url URL` at the top of a requirements file). */
  readonly optionLines?: boolean;
}

/**
 * How a file's contexts become units: one per build stage (a Dockerfile, whose paths come through COPY from its
 * build context); one per selection (an extra, a group, an environment, a lock's platform: the command installing the
 * file names which, else `defaultSelection`); one per container (a Kubernetes manifest, after the Dockerfiles whose
 * images it runs); or the file as one unit unless a larger unit installs it (requirements, conda environments).
 */
type Units =
  | { readonly units: 'stages' | 'containers' | 'file' }
  | { readonly units: 'selections'; readonly defaultSelection: readonly string[] };

export type FileFormat = FormatBase & Units;

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
  kubernetes,
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
