import type { FileFormat } from '../format.js';
import { parseCondaLock } from './parse.js';

/**
 * conda-lock's unified lock: `conda-lock.yml`, or named with `--lockfile` `*.conda-lock.yml`. Its rendered
 * per-platform files (`conda-linux-64.lock.yml`) are environment files.
 */
export const CONDA_LOCK_NAME = /(?:^|[._-])conda-lock\.ya?ml$/;

export const condaLock: FileFormat = {
  kind: 'conda-lock',
  fileName: 'conda-lock.yml',
  matches: (name) => CONDA_LOCK_NAME.test(name),
  // conda-lock.yml by name; any YAML may be read by content (kubernetes, conda).
  hookPattern: '\\.ya?ml$',
  parse: parseCondaLock,
  lock: {
    writtenBy: 'conda-lock',
    relock:
      'conda-lock.yml is written by conda-lock, not by hand: change the environment file it was made from, then run conda-lock lock (conda-lock -f environment.yml).',
  },
  units: 'selections',
  // It selects no environment: each of its platforms is installed somewhere.
  defaultSelection: ['*'],
  indexes: 'registry',
};
