import type { FileFormat } from '../format.js';
import { parseKubernetesManifest } from './parse.js';

/** Kubernetes workloads: no name says so, only the content (`looksLikeManifest` in src/parsers/index.ts). */
export const kubernetes: FileFormat = {
  kind: 'kubernetes',
  fileName: 'deployment.yaml',
  // Decided by content: every YAML file may be one, and so may a template of one (yamlByContent).
  hookPattern: '(\\.ya?ml([.-](template|tmpl|tpl|tftpl|j2|jinja2?|in))?|\\.tftpl|\\.template)$',
  parse: parseKubernetesManifest,
  units: 'containers',
  indexes: 'options',
};
