/** Organisation baselines, cached per installation for a few minutes (pushes to the config repository invalidate). */
import type { ConfigBlob } from '../baseline/layers.js';

export const ORG_CACHE_TTL_MS = 5 * 60 * 1000;

/** Organisation baselines per installation, for a short time; pushes to the config repository invalidate. */
export class OrgConfigCache {
  private readonly entries = new Map<string, { value: ConfigBlob | null; expires: number }>();

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

  set(installationId: number, owner: string, value: ConfigBlob | null): void {
    this.entries.set(this.key(installationId, owner), { value, expires: this.now() + this.ttlMs });
  }

  invalidate(installationId: number, owner: string): void {
    this.entries.delete(this.key(installationId, owner));
  }
}
