import type { FileFormat } from '../formats.js';
import { parseKubernetesManifest } from './parse.js';

/** Kubernetes workloads: no name says so, only the content (`looksLikeManifest` in src/parsers/index.ts). */
export const kubernetes: FileFormat = {
  kind: 'kubernetes',
  fileName: 'deployment.yaml',
  parse: parseKubernetesManifest,
  units: 'containers',
  indexes: 'options',
};
