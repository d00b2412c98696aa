import type { FileFormat } from '../format.js';
import { parseCompose } from './parse.js';

/**
 * Docker Compose files, by name: the Compose Specification's `compose.yaml`/`compose.yml` and the older
 * `docker-compose.yaml`/`docker-compose.yml`, and the variants teams keep beside them (`docker-compose.gpu.yml`,
 * `compose.override.yaml`, `docker-compose-dev.yml`, `docker_compose.yaml`). A YAML file of another name is one by its
 * content (`looksLikeCompose` in src/parsers/index.ts).
 */
export const compose: FileFormat = {
  kind: 'compose',
  fileName: 'compose.yaml',
  matches: (name) => COMPOSE_NAME.test(name),
  hookPattern: '(^|/)(docker[-_])?compose([._-][^/]*)?\\.ya?ml$',
  parse: parseCompose,
  units: 'containers',
  indexes: 'options',
};

const COMPOSE_NAME = /^(?:docker[-_])?compose(?:[._-][^/]*)?\.ya?ml$/;
