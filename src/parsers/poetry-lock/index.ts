import type { FileFormat } from '../format.js';
import { parsePoetryLock } from './parse.js';

export const poetryLock: FileFormat = {
  kind: 'poetry-lock',
  fileName: 'poetry.lock',
  matches: (name) => name === 'poetry.lock',
  hookPattern: '(?:^|/)poetry\\.lock$',
  parse: parsePoetryLock,
  lock: {
    writtenBy: 'poetry lock',
    relock:
      'poetry.lock is written by Poetry, not by hand: change pyproject.toml (the version or the source), then run poetry lock (Poetry 1.x: poetry lock --no-update).',
  },
  units: 'selections',
  besideDockerfile: ['poetry.lock'],
  defaultSelection: ['the project'],
  indexes: 'registry',
};
