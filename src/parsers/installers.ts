import {
  inContext,
  packageFact,
  type FactSink,
  type IndexKind,
  type ContextDraft,
  type UnresolvedFact,
} from './facts.js';
import { parseMatchSpec } from './conda/match-spec.js';
import { optionSpec, splitOption } from './pip-options.js';
import {
  BUILT_AGAINST_CUDA,
  isLocalProject,
  normalizePythonName,
  parsePythonRequirement,
  TORCH_FAMILY,
  vcsBuild,
} from './python-requirement.js';
import { addRequirementsContext } from './requirements/parse.js';
import { shellRun, type Command, type Resolver, type Word } from './shell.js';
import type { Span } from './source.js';
import { MappedBuilder, type Mapped } from './mapped.js';

/**
 * Recognise package-manager invocations in one simple shell command (from a Dockerfile RUN) and record
 * what they install. Returns false when the command installs nothing we model.
 */
export function recordInstallCommand(sink: FactSink, command: Command, stage: number, env?: Resolver): boolean {
  const words = stripPrefixes(command);
  const program = basename(words[0]?.text ?? '');
  recordPython(sink, program, words, stage);
  if (PIP.test(program))
    return inEnvironment(sink, environmentOfProgram(words[0]!), () =>
      recordPip(sink, words.slice(1), stage, 'pip', interpreterOf(words[0]!, 'pip')),
    );
  if (program === 'uv' && words[1]?.text === 'pip') return recordPip(sink, words.slice(2), stage, 'uv');
  if (program === 'uv' && words[1]?.text === 'sync') return recordUvSync(sink, words.slice(2), words, stage);
  if (program === 'pixi' && (words[1]?.text === 'install' || words[1]?.text === 'shell-hook'))
    return recordPixiInstall(sink, words.slice(2), words, stage);
  if (program === 'poetry' && (words[1]?.text === 'install' || words[1]?.text === 'sync'))
    return recordPoetryInstall(sink, words.slice(2), words, stage);
  // `pipenv install` with no package named installs the Pipfile (`pipenv install torch` adds one to it first).
  if (
    program === 'pipenv' &&
    (words[1]?.text === 'sync' || (words[1]?.text === 'install' && !namesPackage(words.slice(2))))
  )
    return recordPipenvInstall(sink, words, stage, pipfileOf(command, words, env));
  // `poetry run pip install …`, `uv run --with x pip install …`: the rest runs as a command of its own, in the
  // project's environment.
  const runner = RUNNERS[program];
  const subcommand = runner && skipOptions(words.slice(1), runner);
  if (subcommand?.[0]?.text === 'run') {
    const command = skipOptions(subcommand.slice(1), runner!);
    // `uv run` syncs the project first, as `uv sync` with the same selection ("when `uv run` is used, the project is
    // locked and synced before invoking the requested command", docs.astral.sh/uv/concepts/projects/sync), unless
    // told not to; where the folder holds no project, it runs the command alone.
    const options = subcommand.slice(1, subcommand.length - command.length);
    const synced =
      program === 'uv' && !options.some((word) => UV_RUN_NO_SYNC.has(word.text))
        ? recordUvSync(sink, options, words, stage, true)
        : false;
    return recordInstallCommand(sink, command, stage, env) || synced;
  }
  // `poetry add torch`, `pdm add`, `uv add`, `pipenv install torch`: each package named is added to the project and
  // installed, from the index the project's sources choose.
  if (
    ((program === 'poetry' || program === 'pdm' || program === 'uv') && words[1]?.text === 'add') ||
    (program === 'pipenv' && words[1]?.text === 'install')
  )
    return recordProjectAdd(sink, program, words, stage);
  if (program === 'pdm' && (words[1]?.text === 'install' || words[1]?.text === 'sync'))
    return recordPdmInstall(sink, words.slice(2), words, stage);
  if (program === 'conda-lock' && words[1]?.text === 'install')
    return recordCondaLockInstall(sink, words.slice(2), words, stage);
  if (/^(conda|mamba|micromamba)$/.test(program)) {
    // `conda run -n env pip install …` runs the rest as a command of its own.
    if (words[1]?.text === 'run')
      return inEnvironment(sink, condaEnvironment(words.slice(2)), () =>
        recordInstallCommand(sink, skipRunOptions(words.slice(2)), stage, env),
      );
    return recordConda(sink, words.slice(1), stage);
  }
  if (/^(apt-get|apt|aptitude)$/.test(program)) return recordApt(sink, words.slice(1), stage);
  // NVIDIA's RPM repositories name their packages as its Debian ones do (cuda-toolkit-12-3, cuda-compiler-12-3).
  if (/^(dnf|yum|microdnf|tdnf)$/.test(program)) return recordApt(sink, words.slice(1), stage, RPM_VALUE_OPTIONS);
  // `<interpreter> -m pip install …`: the interpreter may be any path or variable (`${PYTHON}`, `$(which python)`,
  // `/opt/conda/bin/python3.11`); `-m uv pip install` too.
  const m = words.findIndex((word, i) => i > 0 && word.text === '-m');
  if (m > 0 && words.slice(1, m).every((word) => word.text.startsWith('-'))) {
    const module = words[m + 1]?.text ?? '';
    if (PIP.test(module))
      return inEnvironment(sink, environmentOfProgram(words[0]!), () =>
        recordPip(sink, words.slice(m + 2), stage, 'pip', interpreterOf(words[0]!, 'python')),
      );
    if (module === 'uv' && words[m + 2]?.text === 'pip') return recordPip(sink, words.slice(m + 3), stage, 'uv');
    // `python3.9 -m poetry install`, `python -m pipenv sync`: the tool, run by that interpreter.
    if (module === 'poetry' || module === 'pipenv' || module === 'pdm' || module === 'uv')
      return recordInstallCommand(sink, words.slice(m + 1), stage, env);
  }
  return false;
}

/**
 * `uv sync`: installs the project in the working directory (or `--project`/`--directory DIR`) from its
 * pyproject.toml, with the extras and groups the options select (docs.astral.sh/uv/reference/cli/#uv-sync):
 * an include of that pyproject.toml that names the selection, so the Dockerfile's stage is checked with what it
 * installs. `--all-extras` selects every extra; with `--extra X` the selection is X.
 */
function recordUvSync(
  sink: FactSink,
  args: readonly Word[],
  all: readonly Word[],
  stage: number,
  /** `uv run`'s sync: a folder without a pyproject.toml holds no project, and the command runs without one. */
  projectOptional = false,
): boolean {
  const context = addRequirementsContext(sink, 'uv', commandSpan(all), { stage });
  // It installs the versions the lock resolves, whatever the environment holds: nothing installed before is kept for
  // a requirement it meets, as pip keeps it ("Syncing ensures that all project dependencies are installed and
  // up-to-date with the lockfile", docs.astral.sh/uv/concepts/projects/sync).
  context.replacesInstalled = true;
  const read = optionReader(args);
  let directory = '.';
  const selects: string[] = [];
  /** The default groups ([tool.uv] default-groups) unless the options leave them out; the groups left out. */
  let defaults = true;
  const without: string[] = [];
  /** Packages this sync leaves out (`--no-install-package torch`, docs.astral.sh/uv/reference/cli/#uv-sync). */
  const skips: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const option = read(i);
    if (option.name === '--project' || option.name === '--directory') directory = option.value() ?? directory;
    else if (option.name === '--no-default-groups') defaults = false;
    else if (option.name === '--no-dev') without.push('group dev');
    else if (option.name === '--no-group') {
      const group = option.value();
      if (group) without.push(`group ${group}`);
    } else if (option.name === '--all-groups') selects.push('*groups');
    else if (option.name === '--dev') selects.push('group dev');
    else if (option.name === '--no-install-package') {
      const name = option.value();
      if (name) skips.push(normalizePythonName(name));
    } else if (option.name === '--extra') {
      const extra = option.value();
      if (extra) selects.push(`extra ${extra}`);
    } else if (option.name === '--all-extras') selects.push('*extras');
    else if (option.name === '--group') {
      const group = option.value();
      if (group) selects.push(`group ${group}`);
    } else if (option.name === '--only-group') {
      // Only the group: "The project and its dependencies will be omitted" (docs.astral.sh/uv/reference/cli/#uv-sync).
      const group = option.value();
      if (group) selects.push(`only group ${group}`);
      defaults = false;
    } else if (option.name === '--only-dev') {
      selects.push('only group dev');
      defaults = false;
    } else if (UV_SYNC_VALUES.test(option.name)) option.value(); // its value is no option
    i = option.next();
  }
  // uv installs its default groups with whatever else is selected (`dev` unless [tool.uv] default-groups says
  // otherwise; docs.astral.sh/uv/concepts/projects/dependencies/#default-groups), less those `--no-group` names.
  const named = selects.length ? selects : ['the project'];
  if (defaults) named.push('*default-groups uv', ...without.map((group) => `!${group}`));
  // The project's pyproject.toml and its uv.lock, which is what uv installs (with --frozen as it is; otherwise
  // after bringing it up to date with pyproject.toml, and writing it where there is none).
  projectIncludes(
    sink,
    context,
    directory,
    [
      ['pyproject.toml', projectOptional],
      ['uv.lock', true],
    ],
    named,
    skips,
  );
  return true;
}

/** `uv run` options after which it syncs no project: it runs the command (or a script's own dependencies) alone. */
const UV_RUN_NO_SYNC: ReadonlySet<string> = new Set(['--no-sync', '--no-project', '--script', '--gui-script', '-s']);

/** `uv sync` options that take a value. */
const UV_SYNC_VALUES =
  /^--(?:python|index|default-index|extra-index-url|index-url|find-links|package|no-install-package|resolution|prerelease|index-strategy|python-platform|config-file|cache-dir|exclude-newer|link-mode|compile-bytecode-timeout)$/;

/** Includes of a project's files in `directory`, each with the selection the command installs. */
function projectIncludes(
  sink: FactSink,
  context: ContextDraft,
  directory: string,
  names: readonly (readonly [name: string, optional: boolean])[],
  selects: readonly string[],
  skips: readonly string[] = [],
): void {
  for (const [name, optional] of names) {
    const target = `${directory.replace(/\/+$/, '') || '.'}/${name}`.replace(/^\.\//, '');
    const fact = {
      kind: 'requirement' as const,
      target,
      targetSpan: context.span,
      span: context.span,
      context: context.id,
      selects,
      ...(optional ? { optional } : {}),
      ...(skips.length ? { skips } : {}),
    };
    sink.addInclude(context, fact);
  }
}

/** An option's name and value (`--opt=value` or `--opt value`), moving `i` past a separate value. */
function optionReader(args: readonly Word[]) {
  return (i: number): { name: string; value: () => string | undefined; next: () => number } => {
    const text = args[i]!.text;
    const eq = text.startsWith('--') ? text.indexOf('=') : -1;
    let at = i;
    return {
      name: eq > 0 ? text.slice(0, eq) : text,
      value: () => (eq > 0 ? text.slice(eq + 1) : args[++at]?.text),
      next: () => at,
    };
  };
}

/**
 * `pixi install [-e ENV]… [--all] [--manifest-path PATH]` (and `pixi shell-hook`, which installs the environment
 * it activates; pixi.sh/latest/reference/cli/pixi/install): the manifest (pixi.toml, else a pyproject.toml with
 * [tool.pixi]) and pixi.lock beside it, with the environments it installs ("environment default" unless named).
 */
function recordPixiInstall(sink: FactSink, args: readonly Word[], all: readonly Word[], stage: number): boolean {
  const context = addRequirementsContext(sink, 'conda-env', commandSpan(all), { stage });
  const read = optionReader(args);
  let manifest: string | undefined;
  const selects: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const option = read(i);
    if (option.name === '-e' || option.name === '--environment') {
      const environment = option.value();
      if (environment) selects.push(`environment ${environment}`);
    } else if (option.name === '-a' || option.name === '--all') selects.push('*environments');
    else if (option.name === '--manifest-path') manifest = option.value();
    i = option.next();
  }
  const chosen = selects.length ? selects : ['environment default'];
  if (manifest && /\.toml$/.test(manifest)) {
    const slash = manifest.lastIndexOf('/');
    const directory = slash >= 0 ? manifest.slice(0, slash) : '.';
    projectIncludes(
      sink,
      context,
      directory,
      [
        [manifest.slice(slash + 1), false],
        ['pixi.lock', true],
      ],
      chosen,
    );
  } else {
    // pixi reads pixi.toml where there is one, else pyproject.toml: whichever the repository has.
    projectIncludes(
      sink,
      context,
      manifest ?? '.',
      [
        ['pixi.toml', true],
        ['pyproject.toml', true],
        ['pixi.lock', true],
      ],
      chosen,
    );
  }
  return true;
}

/**
 * `poetry install [--with G,…] [--only G] [-E X…|--extras "X Y"] [--all-extras] [-C DIR]`
 * (python-poetry.org/docs/cli/#install): pyproject.toml and poetry.lock, with the main group, the groups and the extras
 * it names.
 */
function recordPoetryInstall(sink: FactSink, args: readonly Word[], all: readonly Word[], stage: number): boolean {
  const context = addRequirementsContext(sink, 'pip', commandSpan(all), { stage });
  const read = optionReader(args);
  let directory = '.';
  let main = true;
  let only = false;
  const selects: string[] = [];
  const without: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const option = read(i);
    const list = (): string[] => (option.value() ?? '').split(/[\s,]+/).filter(Boolean);
    if (option.name === '--with') selects.push(...list().map((group) => `group ${group}`));
    else if (option.name === '--only') {
      const groups = list();
      // "Only the specified groups": the main group (the project's dependencies) only where it is named.
      main = groups.includes('main');
      only = true;
      selects.push(...groups.filter((group) => group !== 'main').map((group) => `only group ${group}`));
    } else if (option.name === '-E' || option.name === '--extras')
      selects.push(...list().map((extra) => `extra ${extra}`));
    else if (option.name === '--all-extras') selects.push('*extras');
    else if (
      option.name === '-C' ||
      option.name === '--directory' ||
      option.name === '-P' ||
      option.name === '--project'
    )
      directory = option.value() ?? directory;
    else if (option.name === '--without') without.push(...list());
    else if (option.name === '--no-dev') without.push('dev');
    i = option.next();
  }
  // Without --only, Poetry installs every group not marked optional as well ("By default, dependencies across all
  // non-optional groups will be installed": python-poetry.org/docs/managing-dependencies/, "Installing group
  // dependencies"), less those --without (or Poetry 1's --no-dev) names.
  const defaults = only ? [] : ['*default-groups poetry', ...without.map((group) => `!group ${group}`)];
  projectIncludes(
    sink,
    context,
    directory,
    [
      ['pyproject.toml', false],
      ['poetry.lock', true],
    ],
    [...(main ? ['the project'] : []), ...selects, ...defaults],
  );
  return true;
}

/** Whether `pipenv install`'s arguments name a package (a word that is neither an option nor an option's value). */
function namesPackage(args: readonly Word[]): boolean {
  for (let i = 0; i < args.length; i++) {
    const text = args[i]!.text;
    if (!text.startsWith('-')) return true;
    if (ADD_VALUE_OPTIONS.test(text)) i++;
  }
  return false;
}

/**
 * The Pipfile pipenv reads: `PIPENV_PIPFILE` (pipenv.pypa.io/en/latest/configuration/: "a custom Pipfile location"),
 * from the command's own `PIPENV_PIPFILE=… pipenv …` or the image's ENV and ARG; undefined for the Pipfile of the
 * working directory.
 */
function pipfileOf(
  command: Command,
  words: readonly Word[],
  env: Resolver | undefined,
): { path: string } | { unresolved: string; span: Span } | undefined {
  const prefix = command
    .slice(0, command.length - words.length)
    .reverse()
    .find((word) => word.text.startsWith(PIPFILE_IS));
  // An empty value is no location: pipenv looks for the Pipfile as it does without one.
  if (prefix)
    return prefix.unresolved
      ? { unresolved: prefix.unresolved, span: prefix.span }
      : prefix.text.length > PIPFILE_IS.length
        ? { path: prefix.text.slice(PIPFILE_IS.length) }
        : undefined;
  const variable = env?.('PIPENV_PIPFILE');
  if (!variable) return undefined;
  if (!('value' in variable)) return { unresolved: variable.unresolved, span: commandSpan(words) };
  return variable.value.text === '' ? undefined : { path: variable.value.text };
}

const PIPFILE_IS = 'PIPENV_PIPFILE=';

/**
 * `pipenv install` / `pipenv sync` with no package named: the Pipfile `PIPENV_PIPFILE` names (pipfileOf), else the
 * one in the working directory, with its sources (pipenv.pypa.io/en/latest/commands/), and the Pipfile.lock beside
 * it, which `sync`, `install --deploy` and `install --ignore-pipfile` install from. The lock's selection: its default
 * packages, with `--dev` its develop ones too, and with `--categories "a b"` the categories named (`packages` is the
 * default one; `dev-packages` is read as `--dev`, the default packages with the develop ones).
 */
function recordPipenvInstall(
  sink: FactSink,
  all: readonly Word[],
  stage: number,
  pipfile: ReturnType<typeof pipfileOf>,
): boolean {
  const context = addRequirementsContext(sink, 'pip', commandSpan(all), { stage });
  const args = all.slice(2);
  const read = optionReader(args);
  let dev = false;
  let categories: string[] | undefined;
  for (let i = 0; i < args.length; i++) {
    const option = read(i);
    if (option.name === '--dev' || option.name === '-d') dev = true;
    else if (option.name === '--categories')
      categories = (option.value() ?? '').split(/[\s,]+/).filter((category) => category !== '');
    else if (/^(?:--python|--pypi-mirror|-i|--index|--extra-index-url|-r|--requirements)$/.test(option.name))
      option.value();
    i = option.next();
  }
  const selects = categories
    ? [
        ...new Set(
          categories.map((category) =>
            category === 'packages' || category === 'default'
              ? 'the project'
              : category === 'dev-packages' || category === 'develop'
                ? 'dev'
                : `category ${category}`,
          ),
        ),
      ]
    : [dev ? 'dev' : 'the project'];
  const path = pipfile && 'path' in pipfile ? pipfile.path : undefined;
  const name = path === undefined ? 'Pipfile' : path.slice(path.lastIndexOf('/') + 1);
  if (pipfile && 'unresolved' in pipfile) {
    sink.unresolved.push({
      span: pipfile.span,
      text: 'PIPENV_PIPFILE',
      reason: `the Pipfile pipenv installs is PIPENV_PIPFILE's, and ${pipfile.unresolved}`,
    });
    return true;
  }
  if (name !== 'Pipfile') {
    // Pipenv reads the file as a Pipfile whatever its name; this check tells a Pipfile by its name, so it says so.
    sink.unresolved.push({
      span: commandSpan(all),
      text: `PIPENV_PIPFILE=${path}`,
      reason: `pipenv installs ${path} (PIPENV_PIPFILE), a Pipfile by another name, which this check does not read`,
    });
    return true;
  }
  projectIncludes(
    sink,
    context,
    path === undefined ? '.' : path.slice(0, path.lastIndexOf('/') + 1) || '.',
    [
      ['Pipfile', false],
      ['Pipfile.lock', true],
    ],
    selects,
  );
  return true;
}

/**
 * `pdm install` / `pdm sync`: the project in the working directory (or `-p/--project DIR`) from its pyproject.toml,
 * with PDM's sources (pdm-project.org/latest/reference/cli/#install), and the pdm.lock beside it, which is what is
 * installed: every group it locks, unless `-G group` (with `default`), `--prod` (`default` alone) or `-G :all`
 * choose (pdm-project.org/latest/usage/lockfile/). `-L FILE` names the lock: one named pdm.lock is read there, one
 * by another name is said to be not checked.
 */
function recordPdmInstall(sink: FactSink, args: readonly Word[], all: readonly Word[], stage: number): boolean {
  const context = addRequirementsContext(sink, 'pip', commandSpan(all), { stage });
  const read = optionReader(args);
  let directory = '.';
  const groups: string[] = [];
  let production = false;
  let noDefault = false;
  /** The lock `-L` names (pdm-project.org/latest/reference/cli/#install: "Specify another lockfile path"). */
  let lockfile: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const option = read(i);
    if (option.name === '-p' || option.name === '--project') directory = option.value() ?? directory;
    else if (option.name === '-G' || option.name === '--group' || option.name === '--with')
      groups.push(...(option.value() ?? '').split(',').filter((group) => group !== ''));
    else if (option.name === '--prod' || option.name === '--production') production = true;
    else if (option.name === '--no-default') noDefault = true;
    else if (option.name === '-L' || option.name === '--lockfile') lockfile = option.value() ?? '';
    else if (/^(?:--venv|-k|--skip|--without)$/.test(option.name)) option.value();
    i = option.next();
  }
  // The default group unless --no-default, the groups -G names (an optional-dependencies group, an extra of
  // pyproject.toml, or a development group), and every development group unless --prod ("Include dev dependencies by
  // default for install and sync commands. Add a new option --prod/--production to exclude them", PDM 1.5.0's
  // release notes; pdm-project.org/latest/reference/cli/#install). pdm.lock does not say which of its groups are
  // development ones: the pyproject.toml beside it does (selectedContexts).
  const selects = groups.includes(':all')
    ? ['*']
    : [
        ...(noDefault ? [] : ['the project']),
        ...groups.flatMap((group) => (group === 'default' ? ['the project'] : [`group ${group}`, `extra ${group}`])),
        ...(production ? [] : ['*default-groups pdm']),
      ];
  projectIncludes(sink, context, directory, [['pyproject.toml', false]], selects);
  const slash = lockfile?.lastIndexOf('/') ?? -1;
  if (lockfile !== undefined && lockfile.slice(slash + 1) !== 'pdm.lock') {
    // This check tells a PDM lock by its name: one by another name would be read as something else, so it says so.
    sink.unresolved.push({
      span: commandSpan(all),
      text: `-L ${lockfile}`,
      reason: `pdm installs the lock ${lockfile || '(none named)'} (-L), which this check does not read: it reads a lock named pdm.lock`,
    });
    return true;
  }
  const lockDirectory = lockfile === undefined ? directory : slash > 0 ? lockfile.slice(0, slash) : '.';
  projectIncludes(sink, context, lockDirectory, [['pdm.lock', true]], selects);
  return true;
}

/** `conda-lock install [-n NAME|-p PREFIX] [LOCKFILE]` (default conda-lock.yml): every platform it locks. */
function recordCondaLockInstall(sink: FactSink, args: readonly Word[], all: readonly Word[], stage: number): boolean {
  const context = addRequirementsContext(sink, 'conda', commandSpan(all), { stage });
  let lock = 'conda-lock.yml';
  for (let i = 0; i < args.length; i++) {
    const text = args[i]!.text;
    if (/^(?:-n|--name|-p|--prefix|--conda|--log-level)$/.test(text)) i++;
    else if (!text.startsWith('-')) lock = text;
  }
  const slash = lock.lastIndexOf('/');
  projectIncludes(sink, context, slash >= 0 ? lock.slice(0, slash) : '.', [[lock.slice(slash + 1), false]], ['*']);
  return true;
}

/**
 * `pip install ./svc[cu124,dev]`: an include of svc/pyproject.toml with the selections "pip: the project", "pip: extra
 * cu124", …; under `uv pip install`, uv's own ("the project", "extra cu124").
 */
function localProjectInclude(sink: FactSink, word: Word, context: ContextDraft): void {
  const head = word.text.split(';')[0]!.trim();
  const extras = /\[([^\]]*)\]$/.exec(head)?.[1];
  const path = head
    .replace(/\[[^\]]*\]$/, '')
    .replace(/^file:(?:\/\/)?/i, '')
    .replace(/[/\\]+$/, '');
  const target = `${path === '' || path === '.' ? '' : `${path}/`}pyproject.toml`.replace(/^\.\//, '');
  const prefix = context.tool === 'uv' ? '' : 'pip: ';
  const selects = [
    `${prefix}the project`,
    ...(extras ?? '')
      .split(',')
      .map((extra) => extra.trim())
      .filter(Boolean)
      .map((extra) => `${prefix}extra ${extra}`),
  ];
  const fact = {
    kind: 'requirement' as const,
    target,
    targetSpan: word.span,
    span: word.span,
    context: context.id,
    selects,
    optional: true,
    copiedOnly: true,
  };
  sink.addInclude(context, fact);
}

/**
 * A wheel URL whose variables are all in its Python, ABI (or build) tags, with its name, version and platform
 * written: the same address with those tags as `py3-none` (a wheel file name is `name-version[-build]-python-abi-
 * platform.whl`, packaging.python.org/en/latest/specifications/binary-distribution-format/), mapped to the file
 * where it is written. Undefined for anything else.
 */
function wheelOfUnknownPython(word: Word): Mapped | undefined {
  const text = word.text;
  const query = text.search(/[#?]/);
  const path = query < 0 ? text : text.slice(0, query);
  const slash = path.lastIndexOf('/');
  if (!/^https?:\/\//i.test(text) || !path.endsWith('.whl') || slash < 0 || path.slice(0, slash).includes('$'))
    return undefined;
  const name = path.slice(slash + 1);
  const version = /^[A-Za-z0-9_.]+-[A-Za-z0-9_.!]+(?:%2B|\+)?[A-Za-z0-9_.]*-/i.exec(name);
  const platform = name.lastIndexOf('-');
  if (
    !version ||
    platform < version[0].length ||
    /\$/.test(name.slice(platform)) ||
    /\$/.test(name.slice(0, version[0].length))
  )
    return undefined;
  if (query >= 0 && text.slice(query).includes('$')) return undefined;
  const builder = new MappedBuilder();
  builder.pushMapped(word.mapped.slice(0, slash + 1 + version[0].length));
  builder.pushSegment('py3-none', -1, word.span);
  builder.pushMapped(word.mapped.slice(slash + 1 + platform));
  return builder.build();
}

/** `pip`, `pip3`, `pip3.11`. */
const PIP = /^pip(\d+(\.\d+)?)?$/;

/** The command after `conda run`'s own options (`-n env`, `--no-capture-output`, `-p prefix`). */
/**
 * The project tools whose `run` runs a command in the project's environment, with their options that take a value
 * (poetry: python-poetry.org/docs/cli/#run and its global options; pdm: pdm-project.org/latest/reference/cli/#run;
 * uv: docs.astral.sh/uv/reference/cli/#uv-run; pipenv: pipenv.pypa.io/en/latest/commands/#run).
 */
const RUNNERS: Readonly<Record<string, ReadonlySet<string>>> = {
  poetry: new Set(['-C', '--directory', '-P', '--project']),
  pdm: new Set(['-p', '--project', '--venv', '-g']),
  pipenv: new Set(['--python']),
  uv: new Set([
    '--with',
    '--with-editable',
    '--with-requirements',
    '-p',
    '--python',
    '--project',
    '--directory',
    '--package',
    '--extra',
    '--group',
    '--only-group',
    '--no-group',
    '--env-file',
    '--index',
    '--default-index',
    '-i',
    '--index-url',
    '--extra-index-url',
    '-f',
    '--find-links',
    '--index-strategy',
    '--config-file',
    '--cache-dir',
    '--python-preference',
    '--no-install-package',
  ]),
};

/** The command after a runner's options (`--with torch pip install …` → `pip install …`). */
function skipOptions(words: readonly Word[], takesValue: ReadonlySet<string>): Word[] {
  let i = 0;
  while (i < words.length && words[i]!.text.startsWith('-')) {
    if (words[i]!.text === '--') return words.slice(i + 1);
    i += takesValue.has(words[i]!.text) ? 2 : 1;
  }
  return words.slice(i);
}

/** Why the index of a package a project tool adds is not known from the command. */
const PROJECT_INDEX: Readonly<Record<string, string>> = {
  poetry: "poetry add takes it from pyproject.toml's sources",
  pdm: "pdm add takes it from pyproject.toml's sources",
  uv: "uv add takes it from pyproject.toml's indexes",
  pipenv: "pipenv install takes it from the Pipfile's sources",
};

/** Options of the add commands that take a value, whose value is not a package. */
const ADD_VALUE_OPTIONS =
  /^(?:-G|--group|-g|--optional|-E|--extras?|-C|--directory|-P|--project|-p|--python|--source|--index|--default-index|-i|--index-url|--extra-index-url|-f|--find-links|--categories|--bounds|--tag|--branch|--rev|--marker|-L|--lockfile|--venv|--frozen-lockfile|--package|--script|-r|--requirements|--constraints?|-c)$/;

/**
 * `poetry add torch==2.1.0`, `pdm add`, `uv add`, `pipenv install torch`: each package named, as a requirement of a
 * pip context whose index is the project's to say (its sources, not this command): only a build its own name or
 * version gives is read (`torch==2.1.0+cu118`), as with a pip configuration file the gate cannot read.
 */
function recordProjectAdd(sink: FactSink, program: string, words: readonly Word[], stage: number): boolean {
  const context = addRequirementsContext(sink, 'pip', commandSpan(words), { stage });
  (context as { hiddenIndexes?: string }).hiddenIndexes = PROJECT_INDEX[program]!;
  const args = words.slice(2);
  const project = PROJECT_OF_ADD[program];
  let directory = '.';
  let installs = true;
  for (let i = 0; i < args.length; i++) {
    const text = args[i]!.text;
    if (text.startsWith('-')) {
      const [name, inline] = text.startsWith('--') && text.includes('=') ? text.split(/=(.*)/s) : [text, undefined];
      if (project?.lockOnly.includes(name!)) installs = false;
      if (project?.directory.includes(name!)) directory = inline ?? args[i + 1]?.text ?? directory;
      if (inline === undefined && ADD_VALUE_OPTIONS.test(text)) i++;
      continue;
    }
    if (isLocalProject(text) || /^(?:git\+|hg\+|svn\+|bzr\+)/.test(text)) continue;
    recordPipRequirement(sink, args[i]!, context);
  }
  // The add then installs the whole project, as the tool's own install or sync would, unless told only to lock it.
  if (project && installs)
    projectIncludes(
      sink,
      addRequirementsContext(sink, project.tool, commandSpan(words), { stage }),
      directory,
      [
        [project.manifest, false],
        [project.lock, true],
      ],
      project.selects,
    );
  return true;
}

/**
 * What each tool's add installs after adding: the project in `directory` (its own option), from its lock, with the
 * selection its install or sync takes by default; not with the options that only lock (or only say what would be
 * done). poetry add "adds required packages to your pyproject.toml and installs them" (python-poetry.org/docs/cli/#add,
 * `--lock`: "Do not perform operations (only update the lockfile)"), with every group not marked optional, as its
 * installer does when no group is named (poetry/installation/installer.py); uv add syncs the project's environment
 * unless `--no-sync` or `--frozen` (docs.astral.sh/uv/reference/cli/#uv-add); pdm add installs unless `--no-sync`
 * (pdm-project.org/latest/reference/cli/#add). For uv and PDM the project's default group alone: which other groups
 * their add's sync takes is not documented, and a red check must be certain. `pipenv install PACKAGE` is not here:
 * what else it installs is not documented.
 */
const PROJECT_OF_ADD: Readonly<
  Record<
    string,
    {
      readonly tool: 'pip' | 'uv';
      readonly manifest: string;
      readonly lock: string;
      readonly selects: readonly string[];
      readonly directory: readonly string[];
      readonly lockOnly: readonly string[];
    }
  >
> = {
  poetry: {
    tool: 'pip',
    manifest: 'pyproject.toml',
    lock: 'poetry.lock',
    // Its installer runs with no groups named: `without_optional_dependency_groups()`, as a plain `poetry install`.
    selects: ['the project', '*default-groups poetry'],
    directory: ['-C', '--directory', '-P', '--project'],
    lockOnly: ['--lock', '--dry-run'],
  },
  uv: {
    tool: 'uv',
    manifest: 'pyproject.toml',
    lock: 'uv.lock',
    selects: ['the project'],
    directory: ['--project', '--directory'],
    lockOnly: ['--no-sync', '--frozen'],
  },
  pdm: {
    tool: 'pip',
    manifest: 'pyproject.toml',
    lock: 'pdm.lock',
    selects: ['the project'],
    directory: ['-p', '--project'],
    lockOnly: ['--no-sync', '--dry-run'],
  },
};

/**
 * The environment a conda command's options name (`-n serve`, `--name=serve`, `-p /opt/env`), where they name one:
 * `conda:NAME` or `prefix:PATH` (one under an `envs/` folder is that environment's name).
 */
function condaEnvironment(words: readonly Word[]): string | undefined {
  for (let i = 0; i < words.length; i++) {
    const text = words[i]!.text;
    const eq = text.indexOf('=');
    const name = eq > 0 ? text.slice(0, eq) : text;
    if (!/^(?:-n|--name|-p|--prefix)$/.test(name)) continue;
    const value = eq > 0 ? text.slice(eq + 1) : words[i + 1]?.text;
    const word = eq > 0 ? words[i] : words[i + 1];
    if (!value || word?.unresolved || value.includes('$')) return undefined;
    if (name === '-n' || name === '--name') return value === 'base' ? undefined : `conda:${value}`;
    return environmentOfPrefix(value);
  }
  return undefined;
}

/** `conda:NAME` for a prefix under an `envs/` folder (`/opt/conda/envs/serve`), else `prefix:PATH`. */
function environmentOfPrefix(path: string): string {
  const trimmed = path.replace(/\/+$/, '');
  const named = /\/envs\/([^/]+)$/.exec(trimmed)?.[1];
  return named ? `conda:${named}` : `prefix:${trimmed}`;
}

/**
 * The environment a pip or python run by its path installs into (`/opt/miniconda3/envs/serve/bin/pip`,
 * `/opt/venv/bin/python`): the folder above its `bin`. Not a system or conda base prefix (`/usr/bin/pip`,
 * `/usr/local/bin/python3`, `/opt/conda/bin/pip`), which is the image's default environment, nor a path from a
 * variable.
 */
function environmentOfProgram(word: Word): string | undefined {
  if (word.unresolved || word.text.includes('$') || !word.text.startsWith('/')) return undefined;
  const prefix = /^(\/.+)\/bin\/[^/]+$/.exec(word.text)?.[1];
  if (!prefix || DEFAULT_PREFIXES.test(prefix)) return undefined;
  return environmentOfPrefix(prefix);
}

/** Prefixes of the image's default Python: the system's, and a conda installation's base environment. */
const DEFAULT_PREFIXES =
  /^(?:\/usr|\/usr\/local|\/opt\/(?:conda|miniconda3?|miniforge3?|mambaforge|anaconda3?)|\/root\/(?:\.local|miniconda3?|miniforge3?|anaconda3?)|\/home\/[^/]+\/\.local|\/root\/\.pyenv\/shims|\/root\/\.pyenv\/versions\/[^/]+|\/usr\/local\/python[^/]*)$/;

/** Records what `record` installs as installed into `environment` (every context it adds), where one is named. */
function inEnvironment(sink: FactSink, environment: string | undefined, record: () => boolean): boolean {
  if (!environment) return record();
  const before = sink.contexts.length;
  const recorded = record();
  for (let i = before; i < sink.contexts.length; i++) sink.contexts[i]!.environment ??= environment;
  return recorded;
}

function skipRunOptions(words: readonly Word[]): Word[] {
  let i = 0;
  while (i < words.length && words[i]!.text.startsWith('-'))
    i += /^(-n|--name|-p|--prefix|--cwd)$/.test(words[i]!.text) ? 2 : 1;
  return words.slice(i);
}

/**
 * A conda installer (`Miniconda3-py310_23.1.0-1-Linux-x86_64.sh`, `Miniforge3-Linux-x86_64.sh`) named in a command:
 * it installs a Python of its own, the one its `pyXY` tag names (pyenv's python-build installs
 * `Miniconda3-py310_23.1.0-1` as miniconda3-3.10-23.1.0-1 and checks it with `verify_py310`), else the newest
 * Python of its release.
 */
const CONDA_INSTALLER = /(?:^|\/)(Miniconda|Miniforge|Mambaforge|Anaconda)(?:3|-pypy3)?-(?:py(3)(\d{1,2})_)?/;

/** A CPython source release (python.org's `ftp/python/3.11.9/` or its `Python-3.11.9.tgz` archive). */
const PYTHON_SOURCE = /(?:python\.org\/ftp\/python\/|(?:^|\/)Python-)(3)\.(\d{1,2})\.\d+/;

/** A Python's major and minor in a version or request (`cpython-3.10.4-linux-x86_64-gnu`). */
const PYTHON_MINOR = /(?:^|[^\d.])(3)\.(\d{1,2})(?![\d])/;

/**
 * A Python the command installs by a tool the gate reads no packages of, so that pip may run with it: a conda
 * installer, `pyenv install V` (github.com/pyenv/pyenv, COMMANDS.md), `uv python install [V…]` ("If not provided … it
 * will install the latest stable version of Python", docs.astral.sh/uv/reference/cli/#uv-python-install), and `uv
 * venv` or `uv sync` with `--python V` / `-p V` (uv downloads the Python a request names when it is not there, docs
 * .astral.sh/uv/concepts/python-versions). Its version where the command names one, else unknown.
 */
function recordPython(sink: FactSink, program: string, words: readonly Word[], stage: number): void {
  if (program === 'pyenv' && words[1]?.text === 'install') {
    for (const word of words.slice(2))
      if (!word.text.startsWith('-')) addPython(sink, word, stage, 'pyenv install', pythonOf(word));
    return;
  }
  if (program === 'uv' && words[1]?.text === 'python' && words[2]?.text === 'install') {
    const targets = optionFree(words.slice(3), UV_PYTHON_INSTALL_VALUES);
    for (const word of targets) addPython(sink, word, stage, 'uv python install', pythonOf(word));
    if (targets.length === 0) addPython(sink, words[2], stage, 'uv python install', undefined);
    return;
  }
  if (program === 'uv' && (words[1]?.text === 'venv' || words[1]?.text === 'sync')) {
    const args = words.slice(2);
    const read = optionReader(args);
    for (let i = 0; i < args.length; i++) {
      const option = read(i);
      if (option.name === '--python' || option.name === '-p') {
        const value = option.value();
        const word = args[option.next()];
        const version = word?.unresolved ? undefined : value && pythonMinor(value);
        // A request that names no version (`-p python3`, `-p /usr/bin/python`) finds a Python already there.
        if (word && (version || word.unresolved))
          addPython(sink, word, stage, `uv ${words[1]!.text} --python`, version);
      }
      i = option.next();
    }
    return;
  }
  // `python3.9 get-pip.py` installs pip for that Python, with the `pip` and `pip3` scripts (pip.pypa.io,
  // "Installation": get-pip.py), which a later `pip3 install` runs: that Python is the one pip installs for.
  if (/^python3(?:\.\d+)?$/.test(program) && words[1] && GET_PIP.test(words[1].text)) {
    addPython(sink, words[0]!, stage, `${program} get-pip.py`, pythonOf(words[0]!));
    return;
  }
  for (const word of words) {
    // A CPython source release fetched to be built (`https://www.python.org/ftp/python/3.11.9/Python-3.11.9.tgz`):
    // its `make install` puts python3 in /usr/local/bin, first on the PATH.
    if (word.text.includes('ython') && !word.unresolved) {
      const source = PYTHON_SOURCE.exec(word.text);
      if (source) {
        addPython(sink, word, stage, 'a CPython built from source', `${source[1]}.${source[2]}`);
        return;
      }
    }
    // Every installer's name holds `conda` or `forge`: most words are tested by those two searches alone.
    if (!word.text.includes('conda') && !word.text.includes('forge')) continue;
    const installer = CONDA_INSTALLER.exec(word.text);
    if (!installer) continue;
    const version = installer[3] ? `${installer[2]}.${installer[3]}` : undefined;
    addPython(sink, word, stage, `the ${installer[1]} installer`, version, true);
    return;
  }
}

function addPython(
  sink: FactSink,
  word: Word,
  stage: number,
  by: string,
  version: string | undefined,
  condaInstaller = false,
  beside = false,
): void {
  sink.pythons.push({ span: word.span, stage, by, version, condaInstaller, ...(beside ? { beside } : {}) });
}

/** The minor version a word names (`3.10.12` → `3.10`), unless it is only known at build time. */
function pythonOf(word: Word): string | undefined {
  return word.unresolved ? undefined : pythonMinor(word.text);
}

/** `3.10` of a version or request (`3.10.12`, `cpython@3.10`, `python3.10`), where it names one. */
function pythonMinor(text: string): string | undefined {
  const m = PYTHON_MINOR.exec(text);
  return m ? `${m[1]}.${m[2]}` : undefined;
}

/** `uv python install` options that take a value (docs.astral.sh/uv/reference/cli/#uv-python-install). */
const UV_PYTHON_INSTALL_VALUES =
  /^(?:-i|-d|--install-dir|--mirror|--pypy-mirror|--python-downloads-json-url|--cache-dir|--config-file|--directory|--project|--color|--allow-insecure-host)$/;

/** The words of `args` that are no option and no option's value. */
function optionFree(args: readonly Word[], takesValue: RegExp): Word[] {
  const out: Word[] = [];
  for (let i = 0; i < args.length; i++) {
    const text = args[i]!.text;
    if (text.startsWith('-')) {
      if (takesValue.test(text)) i++;
      continue;
    }
    out.push(args[i]!);
  }
  return out;
}

const PREFIXES = new Set(['sudo', 'env', 'time', 'exec', 'nohup', 'command']);
/**
 * The reserved words a command may follow in a compound command (`if pip install a; then pip install b; fi`, `do …`,
 * `! …`, `{ …; }`): the command after them runs. `for`, `case` and `select` are not here: the words after them are no
 * command.
 */
export const RESERVED = new Set(['then', 'else', 'elif', 'do', 'if', 'while', 'until', '!', '{']);

export function stripPrefixes(command: Command): Word[] {
  let i = 0;
  while (i < command.length && isPrefix(command, i)) i++;
  return command.slice(i);
}

/** Whether the word at `i` comes before the program (`sudo -H`, `env`, `then`, `PIP_INDEX_URL=… pip`). */
export function isPrefix(command: Command, i: number): boolean {
  const text = command[i]!.text;
  return (
    PREFIXES.has(text) ||
    RESERVED.has(text) ||
    ASSIGNMENT_WORD.test(text) ||
    (i > 0 && command[i - 1]!.text === 'sudo' && text.startsWith('-'))
  );
}

const ASSIGNMENT_WORD = /^[A-Za-z_][A-Za-z0-9_]*=/;

const SCRIPT_HELP =
  'cuda-gatekeeper reads the commands a build states, not the scripts they run. Install what CUDA depends on (torch and its companions, CUDA libraries) in the command itself, or from a requirements file it names (`pip install -r requirements.txt`), to have it checked.';

const MIM_HELP =
  "`mim install mmcv` looks up the torch and CUDA of the environment and installs the matching prebuilt wheel from download.openmmlab.com, or builds it from source (mmcv's installation guide). Install it with pip and the find-links page of the build you want (`pip install mmcv==2.1.0 -f https://download.openmmlab.com/mmcv/dist/cu121/torch2.1/index.html`) to have it checked.";

/**
 * A command no reader here records that installs what is not read (mayInstall declined it): a script it runs (a shell
 * script, a Python script named for installing: shellRun), or OpenMMLab's `mim install`, which picks mmcv's build for
 * the torch and CUDA it finds when it runs. Said not checked where it is written (parse-error), never passed over.
 */
export function unreadInstall(command: Command, runBy = 'the RUN'): UnresolvedFact | undefined {
  const script = shellRun(command)?.script;
  // autotools' `./autogen.sh` generates a configure script (autoreconf) for a C or C++ build: it installs no Python or
  // CUDA package (prime-rl's and OLMo's images build a library so).
  if (script && /(?:^|\/)autogen\.sh$/.test(script.text)) return undefined;
  if (script)
    return {
      span: script.span,
      text: script.text,
      reason: `${runBy} runs this script, which is not read, so what it installs is not checked`,
      help: SCRIPT_HELP,
    };
  const at = command.findIndex((word) => word.text === 'mim' || word.text.endsWith('/mim'));
  if (at < 0 || command[at + 1]?.text !== 'install') return undefined;
  // The packages before the first option (whose values, `-f URL`, are no packages).
  const rest = command.slice(at + 2);
  const option = rest.findIndex((word) => word.text.startsWith('-'));
  const packages = option < 0 ? rest : rest.slice(0, option);
  if (packages.length === 0) return undefined;
  return {
    span: { start: packages[0]!.span.start, end: packages.at(-1)!.span.end },
    text: packages.map((word) => word.text).join(' '),
    reason:
      "OpenMMLab's mim picks the build of what it installs (mmcv's for the torch and CUDA it finds) when the install runs, so which build is not checked",
    help: MIM_HELP,
  };
}

/**
 * Whether a command may be one that recordInstallCommand, lockExport or a PipEnv's `configure` reads: a word is pip
 * (`sudo -H pip config …`, `/opt/venv/bin/pip3 install`), `-m` (`python -m pip`) or names a conda installer or a
 * CPython source release (what recordPython looks for), or the program after the prefixes is another tool they know.
 * Most commands of a RUN (`mkdir`, `cd`, `rm -rf`, `curl`) are none, and are then not read word by word three times
 * (each reader strips the prefixes, takes the program's name and tests every word again).
 * test/parsers/installers.test.ts holds that a command this declines gives those readers nothing, over every RUN of
 * the fixtures and the corpus.
 */
export function mayInstall(command: Command): boolean {
  let program: string | undefined;
  for (let i = 0; i < command.length; i++) {
    const text = command[i]!.text;
    if (text === '-m' || text.includes('conda') || text.includes('forge')) return true;
    // A CPython source release (recordPython): `python.org/ftp/python/3.11.9/…`, `Python-3.11.9.tgz`.
    if (text.includes('ython') && PYTHON_SOURCE.test(text)) return true;
    if (text.includes('pip') && (PIP.test(basename(text)) || GET_PIP.test(text))) return true;
    if (program === undefined && !isPrefix(command, i)) program = basename(text);
  }
  return program !== undefined && TOOLS.has(program);
}

/** pip's bootstrap script (`python3.9 get-pip.py`): recordPython reads the Python it installs pip for. */
const GET_PIP = /(?:^|\/)get-pip\.py$/;

/** The programs (besides pip, and conda's installers) whose commands the readers above know. */
const TOOLS: ReadonlySet<string> = new Set([
  'uv',
  'pixi',
  'poetry',
  'pipenv',
  'pdm',
  'conda-lock',
  'conda',
  'mamba',
  'micromamba',
  'apt-get',
  'apt',
  'aptitude',
  'dnf',
  'yum',
  'microdnf',
  'tdnf',
  'pyenv',
]);

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function commandSpan(words: readonly Word[]): { start: number; end: number } {
  const first = words[0]?.span;
  const last = words.at(-1)?.span;
  return { start: first?.start ?? 0, end: last?.end ?? first?.end ?? 0 };
}

/**
 * pip's and uv's options that install over what is installed (`pip install --help`; uv's reference for `uv pip
 * install`), with the short ones also in a cluster (`-qU`).
 */
const REPLACES_INSTALLED =
  /^(?:--upgrade|--force-reinstall|--ignore-installed|--reinstall|--reinstall-package|--upgrade-package|-P|-[A-Za-z]*[UI][A-Za-z]*)$/;

const INDEX_KIND: Partial<Record<string, IndexKind>> = {
  'index-url': 'index-url',
  'extra-index-url': 'extra-index-url',
  'find-links': 'find-links',
  'no-index': 'no-index',
};

/**
 * The Python a `pip`/`pip3.11` program or a `python3.11 -m pip` interpreter installs for: undefined for the image's
 * own (`pip`, `pip3`, `python3`, under /usr/bin or /usr/local/bin), the minor version a name gives, `other` for
 * any other path or a variable (`/opt/conda/bin/pip`, `/opt/venv/bin/python`, `$PYTHON`).
 */
function interpreterOf(word: Word, kind: 'pip' | 'python'): string | undefined {
  if (word.unresolved) return 'other';
  const slash = word.text.lastIndexOf('/');
  const directory = word.text.slice(0, slash + 1);
  if (directory !== '' && directory !== '/usr/bin/' && directory !== '/usr/local/bin/') return 'other';
  const name = word.text.slice(slash + 1);
  if (name === kind || name === `${kind}3`) return undefined;
  const version = /^(?:pip|python)(3\.\d{1,2})$/.exec(name)?.[1];
  return version ?? 'other';
}

/** Options by which a pip or uv install is for another Python than the one running it, or into another place. */
const OTHER_PYTHON = new Set([
  '--python-version',
  '--platform',
  '--python-platform',
  '--target',
  '-t',
  '--implementation',
  '--abi',
]);

function recordPip(sink: FactSink, args: readonly Word[], stage: number, tool: 'pip' | 'uv', python?: string): boolean {
  let i = 0;
  while (i < args.length && args[i]!.text.startsWith('-'))
    i += optionSpec(splitOption(args[i]!.text).name).takesValue && !args[i]!.text.includes('=') ? 2 : 1;
  if (args[i]?.text !== 'install') return false;
  const rest = args.slice(i + 1);
  const context = addRequirementsContext(sink, tool, commandSpan(args), { stage, ...(python ? { python } : {}) });
  // `--no-deps` (pip's `--no-dependencies` too) installs the named packages and local projects alone, none of their
  // dependencies.
  const noDeps = rest.some((word) => word.text === '--no-deps' || word.text === '--no-dependencies');
  if (noDeps) context.noDependencies = true;
  for (let j = 0; j < rest.length; j++) {
    const word = rest[j]!;
    if (word.text.startsWith('-') && word.text.length > 1) {
      const { name, inlineValue, valueOffset } = splitOption(word.text);
      if (REPLACES_INSTALLED.test(name)) context.replacesInstalled = true;
      if (OTHER_PYTHON.has(name)) context.python = 'other';
      else if (name === '--python' || (tool === 'uv' && name === '-p')) {
        // pip's `--python` runs pip for that interpreter (pip 22.3); uv's selects the environment's Python.
        const value = inlineValue !== undefined ? word : rest[j + 1];
        const text = value && !value.unresolved ? value.text.slice(inlineValue !== undefined ? valueOffset : 0) : '';
        context.python = /^(?:python)?3\.\d{1,2}(?:\.\d+)?$/.test(text) ? pythonMinor(text)! : 'other';
      }
      const spec = optionSpec(name);
      let value: Word | undefined;
      let valueFrom = 0;
      if (spec.takesValue) {
        if (inlineValue !== undefined) {
          value = word;
          valueFrom = valueOffset;
        } else {
          value = rest[++j];
        }
      }
      const span = value ? { start: word.span.start, end: value.span.end } : word.span;
      const valueText = value ? value.text.slice(valueFrom) : '';
      const valueSpan = value
        ? (value.mapped.origin(valueFrom, value.text.length) ?? value.mapped.site(valueFrom, value.text.length))
        : span;
      const indexKind = INDEX_KIND[spec.role];
      if (value?.unresolved) {
        sink.unresolved.push({ span, text: `${name} ${value.text}`, reason: value.unresolved });
        // An index only known when the build runs (TransformerEngine's `--index-url …/cu${TORCH_CUDA_VERSION}`, set by
        // `python -c`): which builds this install takes is not known, never PyPI's by default.
        if (indexKind || spec.role === 'torch-backend')
          (context as { hiddenIndexes?: string }).hiddenIndexes = `${name} ${value.text} is only known when it runs`;
        continue;
      }
      if (spec.role === 'pre' && (name === '--pre' || /allow/.test(valueText)))
        sink.options.push({ name, span, context: context.id });
      // uv compares versions across indexes as pip does only with this strategy (docs.astral.sh/uv/concepts/indexes).
      if (tool === 'uv' && name === '--index-strategy' && valueText === 'unsafe-best-match')
        sink.options.push({ name: 'unsafe-best-match', span, context: context.id });
      if (indexKind) {
        // uv names an index: `--index pytorch=https://download.pytorch.org/whl/cu124`.
        const named =
          value && tool === 'uv'
            ? (/^[A-Za-z0-9_.-]+=(?=[a-z][a-z0-9+.-]*:\/\/)/i.exec(valueText)?.[0].length ?? 0)
            : 0;
        const url = valueText.slice(named);
        const urlSpan =
          named && value ? (value.mapped.origin(valueFrom + named, value.text.length) ?? valueSpan) : valueSpan;
        const fact = { kind: indexKind, url, urlSpan, span, context: context.id };
        sink.addIndex(context, fact);
      } else if ((spec.role === 'requirement' || spec.role === 'constraint') && value) {
        const fact = { kind: spec.role, target: valueText, targetSpan: valueSpan, span, context: context.id };
        sink.addInclude(context, fact);
      } else if (spec.role === 'editable' && value) {
        recordPipRequirement(sink, value, context, noDeps, true);
      } else if (spec.role === 'torch-backend' && valueText === 'auto') {
        sink.options.push({ name: 'torch-backend-auto', span, context: context.id });
      } else if (spec.role === 'torch-backend' && value) {
        const url = /^cu\d+$|^cpu$/.test(valueText) ? `https://download.pytorch.org/whl/${valueText}` : valueText;
        const written = `${name}=${valueText}`;
        const fact = { kind: 'index-url' as const, url, urlSpan: valueSpan, span, context: context.id, written };
        sink.addIndex(context, fact);
      }
      continue;
    }
    recordPipRequirement(sink, word, context, noDeps);
  }
  return true;
}

function recordPipRequirement(
  sink: FactSink,
  word: Word,
  context: ContextDraft,
  noDeps = false,
  /**
   * `-e`'s value: "a local project path or a VCS url" (pip install's `--editable`), so `-e "python[all]"` is the
   * project in python/ (sglang's layout), not a package named python.
   */
  editable = false,
): void {
  if (isLocalProject(word.text) || (editable && !word.unresolved && !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(word.text))) {
    // `pip install /workspace/wheels/*`: the files a pattern names (wheels an earlier stage built with `pip wheel`,
    // kubernetes-engine-samples' mix-train-and-inference image) are only known when the build runs.
    if (!word.unresolved && /[*?]/.test(word.text) && context.stage !== undefined) {
      sink.unresolved.push({
        span: word.span,
        text: word.text,
        reason:
          'the files this pattern names (wheels or projects the build makes) are only known when the build runs, so what they install is not checked',
      });
      return;
    }
    // With `--no-deps` pip installs the project alone: what its metadata requires is not installed.
    if (noDeps) return;
    // A local project: its metadata says what it installs. A Dockerfile's `pip install .[cu124]` installs the
    // pyproject.toml there, as pip reads it: [project] dependencies and the extras named, from this command's
    // indexes (pip knows nothing of [tool.uv.sources] or Poetry's sources). A setup.py project has none.
    // `uv pip install .[x]` resolves the project as uv does, with its [tool.uv.sources] and indexes (uv pip has
    // `--no-sources` to ignore them: docs.astral.sh/uv/reference/cli/#uv-pip-install--no-sources): the selections
    // `uv sync` reads, without a lock.
    if ((context.tool === 'pip' || context.tool === 'uv') && context.stage !== undefined && !word.unresolved)
      localProjectInclude(sink, word, context);
    return;
  }
  if (word.unresolved) {
    // A wheel's address whose only unknown is its Python and ABI tags (deepops: `…/whl/cu101/torch-1.6.0%2Bcu101-
    // ${PYTAGS}-linux_x86_64.whl`, PYTAGS set by `python -c` in the RUN): its name, version and CUDA are written, and
    // read; the tags only decide which Python it installs on.
    const wheel = wheelOfUnknownPython(word);
    const parsed = wheel ? parsePythonRequirement(wheel) : undefined;
    if (parsed?.ok) {
      sink.packages.push(inContext(parsed.fact, context.id));
      return;
    }
    sink.unresolved.push({ span: word.span, text: word.text, reason: word.unresolved });
    return;
  }
  // `"${EXTRA}"` where EXTRA is empty (`ARG EXTRA=""`, used under `if [ -n "$EXTRA" ]`): an empty argument, no package.
  if (word.text === '') return;
  const result = parsePythonRequirement(word.mapped);
  const vcs = result.ok ? vcsBuild(result.fact) : undefined;
  if (vcs) sink.unresolved.push({ span: word.span, text: word.text, reason: vcs });
  // Any other project from a repository's address: pip installs it with its dependencies (unless --no-deps), which
  // its metadata there names, as a clone's project installed with `pip install .` (pip.pypa.io/en/stable/topics/
  // vcs-support/). Not torch's family or the CUDA packages the gate knows by name and revision (xformers@v0.0.28).
  else if (
    result.ok &&
    !noDeps &&
    result.fact.url &&
    /^(?:git|hg|svn|bzr)\+/i.test(result.fact.url) &&
    !BUILT_AGAINST_CUDA.has(result.fact.name) &&
    !TORCH_FAMILY.has(result.fact.name)
  )
    sink.unresolved.push({
      span: word.span,
      text: word.text,
      reason:
        "pip installs this repository's project with its dependencies, which its metadata there names and which are not read here, so what it installs is not checked",
    });
  if (result.ok) sink.packages.push(inContext(result.fact, context.id));
  else if (word.span.end - word.span.start > word.text.length + 2)
    // Written longer than it reads, past its quotes: a variable made it (`vllm-omni==${VERSION}` with `ARG
    // VERSION=""`, installed under `if [ -n "$VERSION" ]`). Not a requirement as the file's defaults give it, and not
    // one the file wrote wrong: its value is only known at build time.
    sink.unresolved.push({
      span: word.span,
      text: word.text,
      reason: `a variable makes it "${word.text}" with the file's defaults, which is no requirement (${result.message}): what it installs is only known at build time`,
    });
  else sink.problems.push({ span: result.span, message: result.message });
}

const CONDA_VALUE_OPTIONS = new Set([
  '-n',
  '--name',
  '-p',
  '--prefix',
  '--file',
  '-f',
  '--solver',
  '--repodata-fn',
  '--subdir',
  '--platform',
  '-r',
  '--root-prefix',
]);

function recordConda(sink: FactSink, args: readonly Word[], stage: number): boolean {
  let i = 0;
  while (i < args.length && args[i]!.text.startsWith('-')) i++;
  let verb = args[i]?.text;
  if (verb === 'env') verb = `env ${args[++i]?.text ?? ''}`;
  if (!verb || !['install', 'create', 'update', 'env create', 'env update'].includes(verb)) return false;
  const rest = args.slice(i + 1);
  const channels: string[] = [];
  const context = addRequirementsContext(sink, 'conda', commandSpan(args), { stage, channels });
  const environment = condaEnvironment(rest);
  if (environment) context.environment = environment;
  for (let j = 0; j < rest.length; j++) {
    const word = rest[j]!;
    if (word.text.startsWith('-')) {
      const eq = word.text.indexOf('=');
      const name = eq > 0 ? word.text.slice(0, eq) : word.text;
      const valueWord = eq > 0 ? word : rest[j + 1];
      const valueFrom = eq > 0 ? eq + 1 : 0;
      if (name === '-c' || name === '--channel') {
        if (eq < 0) j++;
        if (!valueWord) continue;
        const url = valueWord.text.slice(valueFrom);
        channels.push(url);
        const urlSpan = valueWord.mapped.origin(valueFrom, valueWord.text.length) ?? valueWord.span;
        const fact = {
          kind: 'conda-channel' as const,
          url,
          urlSpan,
          span: { start: word.span.start, end: valueWord.span.end },
          context: context.id,
        };
        sink.addIndex(context, fact);
      } else if (name === '--file' || name === '-f') {
        if (eq < 0) j++;
        if (!valueWord) continue;
        const target = valueWord.text.slice(valueFrom);
        const fact = {
          kind: 'requirement' as const,
          target,
          targetSpan: valueWord.mapped.origin(valueFrom, valueWord.text.length) ?? valueWord.span,
          span: { start: word.span.start, end: valueWord.span.end },
          context: context.id,
        };
        sink.addInclude(context, fact);
      } else if (CONDA_VALUE_OPTIONS.has(name) && eq < 0) {
        j++;
      }
      continue;
    }
    if (word.unresolved) {
      sink.unresolved.push({ span: word.span, text: word.text, reason: word.unresolved });
      continue;
    }
    if (word.text === '') continue; // an empty argument (an empty variable, quoted): no package
    const result = parseMatchSpec(word.mapped);
    if (result.ok) sink.packages.push(inContext(result.fact, context.id));
    else sink.problems.push({ span: result.span, message: result.message });
  }
  return true;
}

const APT_VALUE_OPTIONS = new Set(['-o', '-t', '--target-release', '-c', '--config-file']);

const RPM_ARCH = /\.(?:x86_64|aarch64|noarch|i686|ppc64le|s390x)$/;

/** dnf's, yum's and microdnf's options that take the next word as their value (`--setopt X`, `-x pkg`). */
const RPM_VALUE_OPTIONS = new Set([
  '--setopt',
  '-x',
  '--exclude',
  '--enablerepo',
  '--disablerepo',
  '--repo',
  '--releasever',
  '--installroot',
  '-d',
  '-e',
  '-c',
  '--config',
]);

/**
 * `apt-get install` (and dnf's, yum's, microdnf's, whose package names are the same for NVIDIA's CUDA packages): the
 * packages, read as apt packages (a `name=version` pin is apt's; an RPM's `name-version` is read as a name).
 */
function recordApt(
  sink: FactSink,
  args: readonly Word[],
  stage: number,
  valueOptions: ReadonlySet<string> = APT_VALUE_OPTIONS,
): boolean {
  let verbIndex = -1;
  for (let j = 0; j < args.length; j++) {
    if (!args[j]!.text.startsWith('-')) {
      verbIndex = j;
      break;
    }
    if (valueOptions.has(args[j]!.text)) j++;
  }
  if (args[verbIndex]?.text !== 'install') return false;
  const context = addRequirementsContext(sink, 'apt', commandSpan(args), { stage });
  const rest = args.slice(verbIndex + 1);
  for (let j = 0; j < rest.length; j++) {
    const word = rest[j]!;
    if (word.text.startsWith('-')) {
      if (valueOptions.has(word.text)) j++;
      continue;
    }
    if (word.unresolved) {
      sink.unresolved.push({ span: word.span, text: word.text, reason: word.unresolved });
      // `apt-get install python${PYTHON_VERSION}`: a Python beside the distribution's, of a version not known here.
      if (/^python3?(?:\.|\$)/.test(word.text) && !word.text.includes('-'))
        addPython(sink, word, stage, `apt-get install ${word.text}`, undefined, false, true);
      continue;
    }
    const rpm = valueOptions !== APT_VALUE_OPTIONS;
    const eq = rpm ? -1 : word.text.indexOf('=');
    // An RPM name may carry its architecture (`cuda-compiler-12-3.x86_64`).
    const rawName = eq < 0 ? (rpm ? word.text.replace(RPM_ARCH, '') : word.text) : word.text.slice(0, eq);
    const version = eq < 0 ? '' : word.text.slice(eq + 1);
    const cuda = /\+cuda(\d+\.\d+)/.exec(version)?.[1];
    const versionSpan = word.mapped.origin(eq + 1, word.text.length) ?? word.span;
    sink.packages.push(
      packageFact({
        ecosystem: 'apt',
        name: rawName.toLowerCase(),
        rawName,
        nameSpan: word.mapped.site(0, rawName.length),
        span: word.span,
        extras: [],
        specifier: version,
        specifierSpan:
          eq < 0
            ? (word.mapped.origin(word.text.length, word.text.length) ?? { start: word.span.end, end: word.span.end })
            : versionSpan,
        clauses: version ? [{ operator: '=', version, versionSpan }] : [],
        exact: version || undefined,
        localLabel: cuda ? `cuda${cuda}` : undefined,
        context: context.id,
        via: word.mapped.via(0, word.text.length),
      }),
    );
  }
  return true;
}

/**
 * A requirements file a lock is exported to (`poetry export -f requirements.txt -o requirements.txt`, `uv export -o
 * FILE`, `pdm export -o FILE`, `pipenv requirements > FILE`), for the `pip install -r FILE` that installs it: the lock
 * and manifest to include instead, with the selection the export takes. `output` is undefined where the file is only
 * named by a redirection (the shell reader keeps no redirection target).
 */
export interface LockExport {
  readonly output?: string;
  /** Copied from the stage that exported it (`COPY --from`): a `-r` of a file of its name installs it. */
  readonly copied?: boolean;
  readonly directory: string;
  readonly names: readonly (readonly [name: string, optional: boolean])[];
  readonly selects: readonly string[];
}

/**
 * The export a command makes, if it is one: poetry's (python-poetry/poetry-plugin-export: the main group, `--with G`,
 * `--only G`, `-E X`, `--all-extras`), uv's (docs.astral.sh/uv/reference/cli/#uv-export: the project with its default
 * groups, `--extra X`, `--all-extras`), PDM's (pdm-project.org/latest/reference/cli/#export: every group unless `-G`
 * or `--prod`) and Pipenv's `requirements` (the default category, `--dev` with develop).
 */
export function lockExport(command: Command): LockExport | undefined {
  const words = stripPrefixes(command);
  const program = basename(words[0]?.text ?? '');
  const sub = words[1]?.text;
  const isExport =
    ((program === 'poetry' || program === 'uv' || program === 'pdm') && sub === 'export') ||
    (program === 'pipenv' && sub === 'requirements');
  if (!isExport) return undefined;
  const args = words.slice(2);
  const read = optionReader(args);
  let output: string | undefined;
  let directory = '.';
  const selects: string[] = [];
  let dev = false;
  let production = false;
  for (let i = 0; i < args.length; i++) {
    const option = read(i);
    const name = option.name;
    if (name === '-o' || name === '--output' || name === '--output-file') output = option.value();
    else if (name === '-C' || name === '--directory' || name === '-p' || name === '--project') {
      directory = option.value() ?? directory;
    } else if (name === '--with' || name === '--group' || name === '-G') {
      for (const group of (option.value() ?? '').split(',').filter(Boolean))
        selects.push(group === ':all' ? '*' : group === 'default' ? 'the project' : `group ${group}`);
    } else if (name === '--only' || name === '--only-group') {
      for (const group of (option.value() ?? '').split(',').filter(Boolean)) selects.push(`only group ${group}`);
    } else if (name === '-E' || name === '--extras' || name === '--extra') {
      for (const extra of (option.value() ?? '').split(/[\s,]+/).filter(Boolean)) selects.push(`extra ${extra}`);
    } else if (name === '--all-extras') selects.push('*extras');
    else if (name === '--dev' || name === '-d') dev = true;
    else if (name === '--prod' || name === '--production' || name === '--no-dev') production = true;
    else if (/^(?:-f|--format|--without|--python|--no-group|--lockfile|-L|--package|--prune)$/.test(name))
      option.value();
    i = option.next();
  }
  const at = (path: string | undefined) => (path === undefined ? undefined : path.replace(/^\.\//, ''));
  if (program === 'pipenv')
    return {
      output: at(output),
      directory,
      names: [['Pipfile.lock', true]],
      selects: [dev ? 'dev' : 'the project'],
    };
  const lock = program === 'poetry' ? 'poetry.lock' : program === 'uv' ? 'uv.lock' : 'pdm.lock';
  // Poetry and PDM export their main (default) group with the groups named, unless `--only` leaves it out; a lock
  // that names no group (Poetry 1's `category = "main"`) has only that one. uv names its selections as `uv sync` does.
  const main = program !== 'uv' && !selects.some((select) => select.startsWith('only group '));
  const chosen =
    selects.length > 0
      ? [...(main ? ['the project'] : []), ...selects]
      : program === 'pdm' && !production
        ? ['*']
        : ['the project'];
  return { output: at(output), directory, names: [[lock, true]], selects: chosen };
}

/** Install what a lock export wrote where a pip context installs the exported file (`pip install -r FILE`). */
export function installExport(sink: FactSink, context: ContextDraft, exported: LockExport): void {
  projectIncludes(sink, context, exported.directory, exported.names, exported.selects);
}
