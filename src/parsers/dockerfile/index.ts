import type { FileFormat } from '../format.js';
import { parseDockerfile } from './parse.js';

/**
 * Extensions that make a `Dockerfile…` name something else: documentation, scripts, data, templates, and a
 * Dockerfile's own ignore file (`Dockerfile.python.dockerignore`: docs.docker.com/build/concepts/context/, "Filename
 * and location").
 */
export const NOT_A_DOCKERFILE =
  /\.(?:md|rst|txt|sh|bash|ps1|py|json|ya?ml|toml|cfg|ini|lock|j2|jinja2?|tmpl|tpl|template|erb|mustache|hbs|bak|orig|swp|patch|diff|dockerignore)$/;

/**
 * Dockerfiles, as Renovate and hadolint match them: `Dockerfile`, `Dockerfile.gpu`, `Dockerfile-cuda`,
 * `Dockerfile_dev`, `cuda.Dockerfile`, `backend.dockerfile`, and the same with `Containerfile`; and names that end in
 * `_Dockerfile` or `-Dockerfile` (lmdeploy's `docker/InternVL_Dockerfile`) or in `Dockerfile` alone (IOPaint's
 * `docker/GPUDockerfile`, built with `docker build -f docker/GPUDockerfile`).
 */
export const dockerfile: FileFormat = {
  kind: 'dockerfile',
  fileName: 'Dockerfile',
  matches: (name) =>
    (/^(?:dockerfile|containerfile)(?:[._-].+)?$/.test(name) && !NOT_A_DOCKERFILE.test(name)) ||
    /(?:dockerfile|containerfile)$/.test(name),
  // Dockerfile, Dockerfile.gpu, Dockerfile-cuda (not Dockerfile.md, …), cuda.Dockerfile, InternVL_Dockerfile,
  // GPUDockerfile.
  hookPattern: `(?:^|/)(?:(?![^/]*${NOT_A_DOCKERFILE.source})(?:dockerfile|containerfile)(?:[._-][^/]+)?|[^/]*(?:dockerfile|containerfile))$`,
  parse: parseDockerfile,
  units: 'stages',
  indexes: 'options',
};
