import type { FileFormat } from '../format.js';
import { parseUvLock } from './parse.js';

export const uvLock: FileFormat = {
  kind: 'uv-lock',
  fileName: 'uv.lock',
  matches: (name) => name === 'uv.lock',
  hookPattern: '(?:^|/)uv\\.lock$',
  parse: parseUvLock,
  lock: {
    writtenBy: 'uv lock',
    relock:
      'uv.lock is written by uv, not by hand: change pyproject.toml (the version, the extra or the index it routes to), then run uv lock (or uv lock --upgrade-package NAME).',
  },
  units: 'selections',
  besideDockerfile: ['uv.lock'],
  defaultSelection: ['the project'],
  indexes: 'registry',
};
