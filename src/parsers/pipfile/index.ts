import type { FileFormat } from '../format.js';
import { parsePipfile } from './parse.js';

/** Pipenv's Pipfile (its sources and packages; Pipfile.lock is not read). */
export const pipfile: FileFormat = {
  kind: 'pipfile',
  fileName: 'Pipfile',
  matches: (name) => name === 'pipfile',
  hookPattern: '(?:^|/)Pipfile$',
  parse: parsePipfile,
  units: 'file',
  besideDockerfile: ['Pipfile'],
  indexes: 'tables',
};
