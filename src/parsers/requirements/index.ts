import type { FileFormat } from '../format.js';
import { dockerfile } from '../dockerfile/index.js';
import { parseRequirements } from './parse.js';

/**
 * pip requirements and constraints: `requirements*.txt`/`.in`, `*-requirements.txt`, `requirements/*.txt`,
 * `constraints*.txt`; a Dockerfile's name (`requirements/Dockerfile.in`) stays a Dockerfile's.
 */
export const requirements: FileFormat = {
  kind: 'requirements',
  fileName: 'requirements.txt',
  matches: (name, path) =>
    /\.(?:txt|in)$/.test(name) &&
    (/requirements?/.test(name) || /(^|\/)requirements\//.test(path.toLowerCase()) || /^constraints/.test(name)) &&
    !dockerfile.matches!(name, path),
  // *requirement*.txt|.in, constraints*.txt|.in, and any .txt|.in below a requirements/ folder.
  hookPattern:
    '(?:^|/)(?:[^/]*requirement[^/]*|constraints[^/]*)\\.(?:txt|in)$|(?:^|/)requirements/(?:[^/]+/)*[^/]*\\.(?:txt|in)$',
  parse: parseRequirements,
  units: 'file',
  besideDockerfile: ['requirements.txt', 'requirements-gpu.txt', 'requirements-cuda.txt'],
  indexes: 'options',
  optionLines: true,
};
