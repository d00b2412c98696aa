import type { FileFormat } from '../format.js';
import { parsePyproject } from './parse.js';

/** A Python project's pyproject.toml (PEP 621, uv, Poetry, pixi's `[tool.pixi]`). */
export const pyproject: FileFormat = {
  kind: 'pyproject',
  fileName: 'pyproject.toml',
  matches: (name) => name === 'pyproject.toml',
  hookPattern: '(?:^|/)pyproject\\.toml$',
  parse: parsePyproject,
  units: 'selections',
  besideDockerfile: ['pyproject.toml'],
  defaultSelection: ['the project'],
  companions: ['uv.lock', 'poetry.lock', 'pixi.lock', 'pdm.lock'],
  indexes: 'tables',
};
