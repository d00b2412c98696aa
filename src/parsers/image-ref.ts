import type { ImageFact } from './facts.js';
import type { Span } from './source.js';
/** Split a container image reference: `[registry/]repository[:tag][@digest]`. */
export interface ImageRefParts {
  readonly registry?: string;
  readonly repository: string;
  readonly tag?: string;
  /** Index of the tag's first character in the reference. */
  readonly tagOffset?: number;
  readonly digest?: string;
}

/**
 * Docker Hub by its own names, and its public pull-through copies that keep its paths: Google's `mirror.gcr.io`
 * ("caches frequently-accessed public Docker Hub images", cloud.google.com/artifact-registry/docs/pull-cached-
 * dockerhub-images) and DaoCloud's `docker.m.daocloud.io` (github.com/DaoCloud/public-image-mirror: "docker.io →
 * docker.m.daocloud.io"). The same images, so the same knowledge.
 */
const DOCKER_HUB: ReadonlySet<string> = new Set([
  'docker.io',
  'index.docker.io',
  'registry-1.docker.io',
  'mirror.gcr.io',
  'docker.m.daocloud.io',
]);

export function parseImageRef(reference: string): ImageRefParts {
  let rest = reference;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  let tag: string | undefined;
  let tagOffset: number | undefined;
  const slash = rest.lastIndexOf('/');
  const colon = rest.lastIndexOf(':');
  if (colon > slash) {
    tag = rest.slice(colon + 1);
    tagOffset = colon + 1;
    rest = rest.slice(0, colon);
  }
  let registry: string | undefined;
  const firstSlash = rest.indexOf('/');
  if (firstSlash > 0) {
    const first = rest.slice(0, firstSlash);
    if (first.includes('.') || first.includes(':') || first === 'localhost') {
      registry = first.toLowerCase();
      rest = rest.slice(firstSlash + 1);
    }
  }
  let repository = rest.toLowerCase();
  // Docker's own copy of its Official Images on Amazon ECR Public (gallery.ecr.aws/docker): the same images.
  if (registry === 'public.ecr.aws' && repository.startsWith('docker/library/')) {
    registry = undefined;
    repository = repository.slice('docker/'.length);
  }
  if (!registry || DOCKER_HUB.has(registry)) {
    if (repository.startsWith('library/')) repository = repository.slice('library/'.length);
    if (registry) registry = undefined;
  }
  return {
    ...(registry ? { registry } : {}),
    repository,
    ...(tag !== undefined ? { tag, tagOffset: tagOffset! } : {}),
    ...(digest ? { digest } : {}),
  };
}

/**
 * An image's name as the baseline's `images` mapping keys it: registry and repository as parseImageRef reads them,
 * without tag or digest.
 */
export function imageName(reference: string): string {
  return imageFullName(parseImageRef(reference.trim()));
}

/** An image's registry and repository as one name (`nvcr.io/nvidia/pytorch`, `python`): what knowledge rows match. */
export function imageFullName(image: { readonly registry?: string; readonly repository: string }): string {
  return image.registry ? `${image.registry}/${image.repository}` : image.repository;
}

/**
 * The image fact of a reference a configuration names for a stage (SkyPilot's `image_id`, the base Cog builds on), at
 * `span`: its parts as parseImageRef reads them.
 */
export function imageFactOf(reference: string, stage: number, span: Span): ImageFact {
  const { registry, repository, tag } = parseImageRef(reference);
  return { stage, reference, ...(registry ? { registry } : {}), repository, ...(tag ? { tag } : {}), span };
}
