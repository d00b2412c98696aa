/**
 * Image references as a registry is asked about them: the host to ask, the repository's name there, and one key per
 * image for the lookups a check carries (pure).
 */
import type { ImageFact } from '../parsers/facts.js';

/** An image as the parsers read it: registry (none for Docker Hub), repository, tag or digest. */
export type ImageRef = Pick<ImageFact, 'registry' | 'repository' | 'tag' | 'digest'>;

/** Docker Hub's registry API host: `docker.io` is its name in references, not where its API answers. */
const DOCKER_HUB = 'registry-1.docker.io';

/**
 * One key per image, whatever the spelling: `docker.io/library/python:3.11`, `python:3.11` and
 * `index.docker.io/python:3.11` are one image (parseImageRef folds them); a digest names the image whatever the tag.
 */
export function imageKey(ref: ImageRef): string {
  const name = `${ref.registry ?? 'docker.io'}/${ref.repository}`;
  return ref.digest ? `${name}@${ref.digest}` : `${name}:${ref.tag ?? 'latest'}`;
}

/** The host whose `/v2/` API serves the image (Docker Hub's references name no registry). */
export function registryHost(ref: Pick<ImageRef, 'registry'>): string {
  return ref.registry ?? DOCKER_HUB;
}

/** The registry an image is on, as people name it in messages: `docker.io`, `nvcr.io`, `ghcr.io`. */
export function registryName(ref: Pick<ImageRef, 'registry'>): string {
  return ref.registry ?? 'docker.io';
}

/**
 * The repository's name in the API path: Docker Hub's official images live under `library/` (`python` is
 * `library/python`), as its registry API expects (https://docs.docker.com/docker-hub/repos/manage/hub-images/official/).
 */
export function repositoryPath(ref: ImageRef): string {
  return !ref.registry && !ref.repository.includes('/') ? `library/${ref.repository}` : ref.repository;
}

/** `FROM scratch`: the empty image, not an image anywhere. */
export function isScratch(ref: Pick<ImageRef, 'registry' | 'repository'>): boolean {
  return !ref.registry && ref.repository === 'scratch';
}
