/**
 * What a file format's descriptor says (each format's folder exports one; src/parsers/formats.ts is the registry).
 * Types only, and a leaf: the descriptors import it, the registry imports the descriptors, and nothing here imports
 * either, so no import leads back.
 */
import type { FileKind, ParsedFile } from './facts.js';
import type { ManifestOptions } from './kubernetes/parse.js';

/** What parsing needs beyond a file's text: the baseline's `images` mapping, for Kubernetes manifests. */
export type ParseOptions = ManifestOptions;

export interface FormatBase {
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
