/**
 * Where lookups are kept between checks: a config by digest (content-addressed, so never stale) and a tag's digest
 * for a while (a tag can be pushed again). In memory for one process, a folder for the CLI (the XDG cache folder),
 * Redis for the App's replicas. A cache is a help, never a source of failure: one that cannot be read or written
 * is skipped. The Redis cache is in redis-cache.ts (only the App loads ioredis).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface LookupCache {
  get(key: string): Promise<string | undefined>;
  /** Keep `value` for `seconds` (a config by digest: as long as the cache keeps anything). */
  set(key: string, value: string, seconds: number): Promise<void>;
}

/** How long a tag's digest is trusted before the registry is asked again. */
export const TAG_SECONDS = 6 * 3600;
/** How long a registry's "no such tag" is trusted (a tag may be pushed soon after). */
export const MISSING_SECONDS = 600;
/** A config by digest never changes; kept this long so a cache folder does not grow forever. */
export const DIGEST_SECONDS = 90 * 24 * 3600;

/** One process's cache, bounded: the oldest entries go first. */
export class MemoryCache implements LookupCache {
  private readonly entries = new Map<string, { readonly value: string; readonly until: number }>();

  constructor(
    private readonly limit = 2000,
    private readonly now: () => number = Date.now,
  ) {}

  async get(key: string): Promise<string | undefined> {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  async set(key: string, value: string, seconds: number): Promise<void> {
    this.entries.delete(key);
    this.entries.set(key, { value, until: this.now() + seconds * 1000 });
    while (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value!);
  }
}

/**
 * The CLI's cache: one file per key under `$XDG_CACHE_HOME/cuda-gatekeeper/images` (else `~/.cache/…`, as the XDG
 * Base Directory spec says). Written through a temporary file and a rename, so a reader never sees half a file.
 */
export class FileCache implements LookupCache {
  constructor(
    private readonly folder: string,
    private readonly now: () => number = Date.now,
  ) {}

  async get(key: string): Promise<string | undefined> {
    try {
      const entry = JSON.parse(readFileSync(this.path(key), 'utf8')) as { until?: unknown; value?: unknown };
      return typeof entry.value === 'string' && typeof entry.until === 'number' && entry.until > this.now()
        ? entry.value
        : undefined;
    } catch {
      return undefined;
    }
  }

  async set(key: string, value: string, seconds: number): Promise<void> {
    try {
      mkdirSync(this.folder, { recursive: true });
      const path = this.path(key);
      const temporary = `${path}.${process.pid}.tmp`;
      writeFileSync(temporary, JSON.stringify({ until: this.now() + seconds * 1000, value }));
      renameSync(temporary, path);
    } catch {
      // A read-only or full disk: the next check asks the registry again.
    }
  }

  private path(key: string): string {
    return join(this.folder, `${createHash('sha256').update(key).digest('hex')}.json`);
  }
}

/** The CLI's cache folder for image lookups (XDG Base Directory: $XDG_CACHE_HOME, else ~/.cache). */
export function cacheFolder(env: Readonly<Record<string, string | undefined>>): string {
  const base =
    env.XDG_CACHE_HOME && env.XDG_CACHE_HOME.startsWith('/') ? env.XDG_CACHE_HOME : join(homedir(), '.cache');
  return join(base, 'cuda-gatekeeper', 'images');
}

/** Memory first, then the shared cache (what the shared one had is kept in memory too). */
export class TieredCache implements LookupCache {
  constructor(
    private readonly near: LookupCache,
    private readonly far: LookupCache,
  ) {}

  async get(key: string): Promise<string | undefined> {
    const near = await this.near.get(key);
    if (near !== undefined) return near;
    const far = await this.far.get(key);
    if (far !== undefined) await this.near.set(key, far, MISSING_SECONDS);
    return far;
  }

  async set(key: string, value: string, seconds: number): Promise<void> {
    await Promise.all([this.near.set(key, value, seconds), this.far.set(key, value, seconds)]);
  }
}
