import type { FileFormat } from '../format.js';
import { parsePipfile } from './parse.js';

/** Pipenv's Pipfile (its sources and packages), read with the Pipfile.lock beside it. */
export const pipfile: FileFormat = {
  kind: 'pipfile',
  fileName: 'Pipfile',
  matches: (name) => name === 'pipfile',
  hookPattern: '(?:^|/)Pipfile$',
  parse: parsePipfile,
  units: 'file',
  besideDockerfile: ['Pipfile'],
  companions: ['Pipfile.lock'],
  indexes: 'tables',
};
