import type { FileFormat } from '../format.js';
import { parsePixiManifest } from './parse.js';

export const pixi: FileFormat = {
  kind: 'pixi',
  fileName: 'pixi.toml',
  matches: (name) => name === 'pixi.toml',
  hookPattern: '(?:^|/)pixi\\.toml$',
  parse: parsePixiManifest,
  units: 'selections',
  besideDockerfile: ['pixi.toml'],
  // `pixi install` without `-e` installs the default environment.
  defaultSelection: ['environment default'],
  companions: ['pixi.lock'],
  indexes: 'tables',
};
