/** Organisation baselines, cached per installation for a few minutes (pushes to the config repository invalidate). */
import type { ConfigBlob } from '../baseline/layers.js';

export const ORG_CACHE_TTL_MS = 5 * 60 * 1000;

/** Organisation baselines per installation, for a short time; pushes to the config repository invalidate. */
export class OrgConfigCache {
  private readonly entries = new Map<
    string,
    { value: ConfigBlob | null; missing?: 'repository' | 'file'; expires: number }
  >();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly ttlMs = ORG_CACHE_TTL_MS,
  ) {}

  private key(installationId: number, owner: string): string {
    return `${installationId}/${owner.toLowerCase()}`;
  }

  get(installationId: number, owner: string): ConfigBlob | null | undefined {
    const entry = this.entries.get(this.key(installationId, owner));
    if (!entry || entry.expires <= this.now()) return undefined;
    return entry.value;
  }

  /** `missing` says why there is none (no `.github` seen, or no baseline file in it), where that is known. */
  set(installationId: number, owner: string, value: ConfigBlob | null, missing?: 'repository' | 'file'): void {
    this.entries.set(this.key(installationId, owner), {
      value,
      ...(value === null && missing ? { missing } : {}),
      expires: this.now() + this.ttlMs,
    });
  }

  /** Why no organisation baseline is cached, where known. */
  missing(installationId: number, owner: string): 'repository' | 'file' | undefined {
    const entry = this.entries.get(this.key(installationId, owner));
    return entry && entry.expires > this.now() ? entry.missing : undefined;
  }

  invalidate(installationId: number, owner: string): void {
    this.entries.delete(this.key(installationId, owner));
  }
}
