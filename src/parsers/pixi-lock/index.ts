import type { FileFormat } from '../format.js';
import { parsePixiLock } from './parse.js';

export const pixiLock: FileFormat = {
  kind: 'pixi-lock',
  fileName: 'pixi.lock',
  matches: (name) => name === 'pixi.lock',
  hookPattern: '(?:^|/)pixi\\.lock$',
  parse: parsePixiLock,
  lock: {
    writtenBy: 'pixi lock',
    relock:
      'pixi.lock is written by pixi, not by hand: change the manifest (pixi.toml or [tool.pixi]: the version, cuda-version, the index or system-requirements), then run pixi lock (pixi install updates it too).',
  },
  units: 'selections',
  besideDockerfile: ['pixi.lock'],
  defaultSelection: ['environment default'],
  indexes: 'registry',
};
