import type { FileFormat } from '../format.js';
import { parseCog } from './parse.js';

/**
 * Replicate's Cog configuration, by name: `cog.yaml` (and `cog.yml`), at the root of a Cog project
 * (cog.run/yaml: "cog.yaml defines how to build a Docker image and how to run predictions on your model").
 */
export const cog: FileFormat = {
  kind: 'cog',
  fileName: 'cog.yaml',
  matches: (name) => name === 'cog.yaml' || name === 'cog.yml',
  hookPattern: '(^|/)cog\\.ya?ml$',
  parse: parseCog,
  units: 'file',
  indexes: 'options',
};
