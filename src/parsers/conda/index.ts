import type { FileFormat } from '../format.js';
import { CONDA_LOCK_NAME } from '../conda-lock/index.js';
import { parseCondaEnvironment } from './parse.js';

/** conda-lock's explicit render for one platform: `conda-linux-64.lock`, `conda-linux-aarch64.lock`. */
const EXPLICIT_LOCK_NAME = /(?:^|\/)conda-(?:linux|osx|win)-[a-z0-9_]+\.lock$/;

/**
 * Conda environments by name: `environment*.yml`, `conda*.yml`, `*-environment.yml`, `*.conda.yml` (and `.yaml`),
 * but not conda-lock's unified lock (a name with `conda` or `environment` inside it, AzureML's
 * `…-conda-in-dockerfile-deployment.yml`, is read by content); and conda-lock's explicit render,
 * `conda-linux-64.lock` (`conda-lock render --kind explicit` names it `conda-<platform>.lock`), an explicit spec
 * (parse.ts). Names that only hint at an environment, and YAML files in environment folders, are read by content
 * (`condaByContent` in src/parsers/index.ts); an explicit spec a conda command installs, whatever its name, by its
 * `@EXPLICIT` line (reader.ts).
 */
export const conda: FileFormat = {
  kind: 'conda',
  fileName: 'environment.yml',
  matches: (name) =>
    ((/^(?:conda|environment)(?:[._-][^/]*)?\.ya?ml$/.test(name) || /[._-](?:conda|environment)\.ya?ml$/.test(name)) &&
      !CONDA_LOCK_NAME.test(name)) ||
    EXPLICIT_LOCK_NAME.test(name),
  // By name, or by content in an environment folder: every YAML file may be one.
  hookPattern: `\\.ya?ml$|${EXPLICIT_LOCK_NAME.source}`,
  parse: parseCondaEnvironment,
  units: 'file',
  besideDockerfile: ['environment.yml', 'environment.yaml'],
  indexes: 'options',
};
