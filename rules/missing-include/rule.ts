import { includeCandidates } from '../../src/analysis/links.js';
import { isStandardInput, type IncludeFact, type ParsedFile } from '../../src/parsers/facts.js';
import { formatOf } from '../../src/parsers/formats.js';
import { defineRule, type Reporter } from '../../src/rule.js';

/** Candidate paths named in a message before "and N more". */
const SHOWN = 3;

/**
 * An include (`-r`, a Dockerfile's COPY + `pip install -r`, `conda env create -f`) whose file is not there.
 *
 * - The change deletes it: an error. The finding needs to know what the change deletes, so it comes from checks of a
 *   change: the App's pull-request check and `check --changed-since`.
 * - It is in no file of the repository (`git clone … && pip install -r repo/requirements.txt`, a file the base image
 *   or an earlier step makes): a notice that what it installs is not checked. Only where the caller knows which files
 *   the repository has (GateOptions.fileExists: a checkout, a commit's tree); a file given alone says nothing.
 * - It is standard input fed by a pipe (`grep torch requirements.txt | pip install -r /dev/stdin`): a notice, wherever
 *   it is. A here-document's body is read where it is written (the Dockerfile parser).
 */
export default defineRule({
  id: 'missing-include',
  description: 'No file installs or includes a file that the change deletes, or that is not in the repository',
  defaultSeverity: 'error',
  fix: 'none',
  about: 'written',
  messages: {
    deleted: '{{target}} is deleted by this change, but this line still installs it',
    nowhere: '{{target}} is installed here, but {{where}}: what it installs is not checked',
    standardInput: 'this install reads its requirements from standard input ({{target}}), which is not checked',
    chosenAtBuild:
      '{{target}} is installed here from the folder that {{variables}} names in the COPY that brings it, which is only known when the image is built: what it installs is not checked',
    setupPy:
      '{{project}} is installed here from its {{setup}}, whose requirements are not read: what it installs is not checked',
    clonedProject:
      'the project of the clone of {{url}} is installed here, and its requirements are not read: what it installs is not checked',
  },
  helps: {
    deleted: '{{how}}. Restore {{target}}, or change this line to install the file that replaces it.',
    nowhere:
      'The file comes from outside the repository ({{from}}), so cuda-gatekeeper cannot read what it installs. Check the file where it is made (cuda-gatekeeper check FILE), or add it to the repository and install that copy. If the path is a mistake, the install fails when it runs ({{tool}} stops with "{{error}}").',
    setupPy:
      "A setup.py is a Python program: its install_requires is known only when it runs, and cuda-gatekeeper reads what files state. Declare the requirements in pyproject.toml's [project] table (PEP 621; setuptools reads it too) or in a requirements file the Dockerfile installs, to have them checked. Source: https://packaging.python.org/en/latest/guides/writing-pyproject-toml/",
    clonedProject:
      "The project's pyproject.toml or setup.py is in the clone the build makes, not in this repository, so cuda-gatekeeper cannot read what it installs (a project may pin or replace torch: `pip install .` installs its dependencies unless told `--no-deps`). Check that project's requirements where they are (cuda-gatekeeper check in its checkout at the revision cloned), or pin what matters in a requirements file this build installs.",
    chosenAtBuild:
      'A build argument with no default (ARG {{first}}) is given when the image is built (docker build --build-arg {{first}}=…), so which folder the COPY takes, and which requirements file this line installs, is not known from the files. Check each folder it may name on its own (cuda-gatekeeper check PATH), or give the ARG a default to have that one checked here. Source: https://docs.docker.com/reference/dockerfile/#arg',
    standardInput:
      'The requirements come from the command before the pipe (`grep torch requirements.txt | pip install -r /dev/stdin`), which cuda-gatekeeper does not run. Install a file of the repository instead (the file the pipe filters, or a requirements file that pins what it installs) to have it checked.',
  },
  check({ files, removed, fileExists, report }) {
    const present = new Map(files.map((file) => [file.path, file] as const));
    for (const file of files) {
      const image = formatOf(file.kind).units === 'stages';
      for (const include of file.includes) {
        if (include.copiedOnly && include.target.endsWith(PYPROJECT)) {
          // `git clone URL && cd repo && pip install .`: the project is the clone's.
          if (include.cloned)
            report({
              messageId: 'clonedProject',
              data: { url: include.cloned.url },
              file,
              span: include.span,
              severity: 'notice',
            });
          else setupPyProject(file, include, present, fileExists, report);
          continue;
        }
        if (include.optional || include.copiedOnly || include.exported || /[$`]/.test(include.target)) continue;
        // A here-document's body is read by the parser, which drops the include: what is left comes from a pipe.
        if (isStandardInput(include.target)) {
          report({
            messageId: 'standardInput',
            data: { target: include.target },
            file,
            span: include.span,
            severity: 'notice',
          });
          continue;
        }
        if (removed.size === 0 && !fileExists && !include.cloned) continue;
        const candidates = includeCandidates(file, include);
        // Another candidate that is still there (a file beside the Dockerfile, say) is what the line installs.
        if (candidates.some((path) => present.has(path))) continue;
        const how = image
          ? 'docker build stops at the COPY (or pip at `-r`) with "file not found"'
          : 'pip stops with "Could not open requirements file"';
        // A clone's revision may still have what the change deletes from the checkout.
        const gone = include.cloned ? undefined : candidates.find((path) => removed.has(path));
        if (gone) {
          report({ messageId: 'deleted', data: { target: gone, how }, file, span: include.span });
          continue;
        }
        // A target by its web address has its own notice (parse-error), and a file only known as missing is said
        // to be missing: a path the caller cannot answer for (a read cut short) is reported as not read.
        // A clone's file with no candidate in the repository (a bare name, an absolute path) needs no answer.
        if (!fileExists && !(include.cloned && candidates.length === 0)) continue;
        if (/^[a-z][a-z0-9+.-]*:\/\//i.test(include.target.replace(/^file:(?!\/\/)/i, ''))) continue;
        if (include.kind === 'dockerfile' && candidates.length === 0) continue;
        if (!candidates.every((path) => fileExists?.(path) === false)) continue;
        const looked =
          candidates.length > SHOWN
            ? `${candidates.slice(0, SHOWN).join(', ')} and ${candidates.length - SHOWN} more`
            : candidates.join(', ');
        // A COPY source that names a build argument (`COPY tools/${DIRECTORY_NAME}/ /opt/tools`): which folder, and so
        // which file, is chosen when the image is built.
        const variables = include.cloned ? undefined : buildTimeVariables(candidates);
        if (variables) {
          report({
            messageId: 'chosenAtBuild',
            data: {
              target: include.target,
              variables: variables.map((name) => `\${${name}}`).join(', '),
              first: variables[0]!,
            },
            file,
            span: include.span,
            severity: 'notice',
          });
          continue;
        }
        const where = include.cloned
          ? `it is a file of the clone of ${include.cloned.url}`
          : candidates.length === 0
            ? 'no COPY of the stage brings it from the build context'
            : `no file of the repository is there (looked for ${looked})`;
        const from = include.cloned
          ? `the clone of ${include.cloned.url}`
          : image
            ? 'a download or a clone in an earlier step, a file the base image has, or a file the build makes'
            : 'a file a build step makes or downloads';
        report({
          messageId: 'nowhere',
          data: { target: include.target, where, from, ...failure(include) },
          file,
          span: include.span,
          severity: 'notice',
        });
      }
    }
  },
});

/** The variables every candidate path still names (`${DIRECTORY_NAME}`), where each names one; else undefined. */
function buildTimeVariables(candidates: readonly string[]): string[] | undefined {
  if (candidates.length === 0) return undefined;
  const names = new Set<string>();
  for (const path of candidates) {
    const found = [...path.matchAll(/\$\{?([A-Za-z_]\w*)\}?/g)].map((match) => match[1]!);
    if (found.length === 0) return undefined;
    for (const name of found) names.add(name);
  }
  return [...names];
}

const PYPROJECT = 'pyproject.toml';

/**
 * A Dockerfile's install of a local project (`pip install /src`, `pip install ./llm-foundry[gpu]`) whose folder has no
 * pyproject.toml the check read but has a setup.py: what it installs is in a program, not in a file the check reads.
 * Said, not passed (llm-foundry's torch pin lives in its setup.py). Only where the caller knows the repository's
 * files.
 */
function setupPyProject(
  file: ParsedFile,
  include: IncludeFact,
  present: ReadonlyMap<string, ParsedFile>,
  fileExists: ((path: string) => boolean | undefined) | undefined,
  report: Reporter<'setupPy'>,
): void {
  if (!fileExists) return;
  const candidates = includeCandidates(file, include);
  // A pyproject.toml that is there and states its dependencies says what the project installs; one that leaves them
  // to a setup.py (`dynamic = ["dependencies"]`) does not.
  const stated = candidates.filter((path) => present.has(path));
  if (stated.some((path) => !present.get(path)!.dynamicDependencies)) return;
  const setup =
    (stated.length > 0 ? stated : candidates)
      .map((path) => `${path.slice(0, -PYPROJECT.length)}setup.py`)
      .find((path) => fileExists(path) === true) ??
    // A setup.py copied by its own name (`COPY setup.py ./`, a bind mount of it): its copy's source, where no
    // pyproject.toml was copied beside it.
    (stated.length === 0 && include.target.endsWith(PYPROJECT)
      ? includeCandidates(file, { ...include, target: `${include.target.slice(0, -PYPROJECT.length)}setup.py` }).find(
          (path) => fileExists(path) === true,
        )
      : undefined);
  if (!setup) return;
  const folder = setup.slice(0, -'/setup.py'.length);
  report({
    messageId: 'setupPy',
    data: { project: folder && folder !== setup ? `the project in ${folder}/` : 'the project', setup },
    file,
    span: include.span,
    severity: 'notice',
  });
}

/** What stops when an install names a file that is not there. */
function failure(include: IncludeFact): { tool: string; error: string } {
  if (include.kind === 'dockerfile') return { tool: 'docker build', error: 'failed to read dockerfile' };
  // `conda env create -f` and `conda env update -f` read YAML; pip reads any other name as a requirements list.
  if (/\.ya?ml$/i.test(include.target)) return { tool: 'conda', error: 'EnvironmentFileNotFound' };
  return { tool: 'pip', error: 'Could not open requirements file' };
}
