import type { FileFormat } from '../format.js';
import { CONDA_LOCK_NAME } from '../conda-lock/index.js';
import { parseCondaEnvironment } from './parse.js';

/**
 * Conda environments by name: `environment*.yml`, `conda*.yml`, `*-environment.yml`, `*.conda.yml` (and `.yaml`),
 * but not conda-lock's unified lock. Names that only hint at an environment, and YAML files in environment folders,
 * are read by content (`condaByContent` in src/parsers/index.ts).
 */
export const conda: FileFormat = {
  kind: 'conda',
  fileName: 'environment.yml',
  matches: (name) =>
    /(?:^|[._-])(?:conda|environment)(?:[._-][^/]*)?\.ya?ml$/.test(name) && !CONDA_LOCK_NAME.test(name),
  // By name, or by content in an environment folder: every YAML file may be one.
  hookPattern: '\\.ya?ml$',
  parse: parseCondaEnvironment,
  units: 'file',
  besideDockerfile: ['environment.yml', 'environment.yaml'],
  indexes: 'options',
};
