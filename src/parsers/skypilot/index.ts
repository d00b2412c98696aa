import type { FileFormat } from '../format.js';
import { parseSkypilot } from './parse.js';

/**
 * SkyPilot task YAML (docs.skypilot.co/en/latest/reference/yaml-spec.html): no name says so (`task.yaml`,
 * `serve.yaml`), only the content (`looksLikeSkypilot` in src/parsers/index.ts).
 */
export const skypilot: FileFormat = {
  kind: 'skypilot',
  fileName: 'task.yaml',
  hookPattern: '\\.ya?ml$',
  parse: parseSkypilot,
  units: 'file',
  indexes: 'options',
};
