/**
 * What a check learned of its images from their registries, as plain data (it crosses to worker threads and into
 * the gate, which stays pure): for each image, its config, or that the registry has no such tag, or why it could not
 * be read.
 */
import type { ImageConfig } from './config.js';

export type ImageLookup =
  /** The registry answered with the image's config (for the platform the fleet runs). */
  | {
      readonly state: 'read';
      /** The registry asked, as named in references (`docker.io`, `nvcr.io`). */
      readonly registry: string;
      /** The manifest's digest (of the platform's manifest, under an index). */
      readonly digest: string;
      readonly config: ImageConfig;
      /** The day the registry was read (YYYY-MM-DD). */
      readonly retrieved: string;
    }
  /** The registry, asked with access, says the tag (or repository) does not exist. */
  | { readonly state: 'missing'; readonly registry: string; readonly reason: string }
  /** Not read: why (offline, a registry that refused, timed out, answered nonsense, or a spent budget). */
  | { readonly state: 'unread'; readonly reason: string };

/** Lookups by image key (reference.ts imageKey). */
export type ImageLookups = Readonly<Record<string, ImageLookup>>;
