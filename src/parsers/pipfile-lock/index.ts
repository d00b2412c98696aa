import type { FileFormat } from '../format.js';
import { parsePipfileLock } from './parse.js';

/** Pipenv's Pipfile.lock: every package `pipenv sync` and `pipenv install --deploy` install, with its source. */
export const pipfileLock: FileFormat = {
  kind: 'pipfile-lock',
  fileName: 'Pipfile.lock',
  matches: (name) => name === 'pipfile.lock',
  hookPattern: '(?:^|/)Pipfile\\.lock$',
  parse: parsePipfileLock,
  lock: {
    writtenBy: 'pipenv lock',
    relock:
      'Pipfile.lock is written by Pipenv, not by hand: change the Pipfile (the version or the index), then run pipenv lock.',
  },
  units: 'selections',
  besideDockerfile: ['Pipfile.lock'],
  defaultSelection: ['the project'],
  indexes: 'registry',
};
