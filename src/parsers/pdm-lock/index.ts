import type { FileFormat } from '../format.js';
import { parsePdmLock } from './parse.js';

/** PDM's pdm.lock: every package `pdm sync` and `pdm install` install, by group. */
export const pdmLock: FileFormat = {
  kind: 'pdm-lock',
  fileName: 'pdm.lock',
  matches: (name) => name === 'pdm.lock',
  hookPattern: '(?:^|/)pdm\\.lock$',
  parse: parsePdmLock,
  lock: {
    writtenBy: 'pdm lock',
    relock:
      'pdm.lock is written by PDM, not by hand: change pyproject.toml (the version or the source), then run pdm lock.',
  },
  units: 'selections',
  besideDockerfile: ['pdm.lock'],
  // `pdm sync` and `pdm install` install every group the lock has unless -G, -d or --prod choose
  // (pdm-project.org/latest/usage/lockfile/).
  defaultSelection: ['*'],
  indexes: 'registry',
};
