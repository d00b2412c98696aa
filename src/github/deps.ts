/**
 * What the App's handlers share: the App id, caches, the per-commit locks, the deliveries seen, and where fan-out
 * work goes. Created once per process (app.ts); tests create their own.
 */
import { InlineGates, type Gates, type GatePool } from '../sandbox/gate-pool.js';
import { OrgConfigCache } from './config.js';
import type { Trigger } from './check.js';
import type { Fanout } from './jobs.js';
import { MemoryPathIndex, type PathIndex } from './path-index.js';
import { JobQueue } from './queue.js';
import type { ExistingRun } from './read.js';
import type { LookupCache } from '../images/cache.js';
import type { RedeliveryState } from './redeliver.js';

/** How the App looks images up in their registries (src/images): unset, it does not (tests, by default). */
export interface ImageLookupService {
  readonly cache: LookupCache;
  /** Where the credentials' REGISTRY_* variables are read. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Milliseconds a pull request's lookups may take, all images together (within the check's own budget). */
  readonly budgetMs: number;
  readonly fetch?: typeof fetch;
  /** Let go of the cache's connection (the shutdown drain). */
  readonly close?: () => Promise<void>;
}

export interface AppDeps {
  readonly appId: number;
  readonly orgCache: OrgConfigCache;
  /** Our newest run per `owner/repo@sha`, created by this process (GitHub's reads can lag behind a create). */
  readonly runs: Map<string, ExistingRun>;
  /** Per repository and head commit: the check in flight, and the one waiting after it (with how it was asked for). */
  readonly locks: Map<string, { running: Promise<unknown>; next?: { trigger: Trigger } }>;
  readonly deliveries: Deliveries;
  /** The CUDA-relevant paths of default branches, kept current from pushes (path-index.ts); in Redis with REDIS_URL. */
  readonly paths: PathIndex;
  /**
   * Fan-out work (previews, organisation re-checks): the in-process queue, or the durable one on Redis; app.ts starts
   * it.
   */
  readonly fanout: Fanout;
  /** What runs the pull requests' gates: worker threads (the server), or the calling thread (tests, by default). */
  readonly gatePool: Gates;
  /** The thread that runs the self-service page's checks, after the pull requests' (unset: inline). */
  readonly snippetPool?: GatePool;
  /** How often the drift sweep runs; unset: no sweep (tests). */
  readonly sweepIntervalMs?: number;
  /** GitHub's web address, for links in check runs (https://github.com, or a GitHub Enterprise host). */
  readonly webUrl?: string;
  /** Image lookups (the server: on, unless IMAGE_LOOKUP=off or the baseline's registries.lookup is false). */
  readonly images?: ImageLookupService;
  /** Scans for failed webhook deliveries and asks GitHub to redeliver them (redeliver.ts); unset: none (tests). */
  readonly redelivery?: {
    readonly intervalMs: number;
    readonly windowMs: number;
    readonly state: RedeliveryState;
    readonly close?: () => void;
  };
}

/** What a process chooses; the rest of AppDeps is state every process starts empty. */
export type DepsOptions = Pick<AppDeps, 'appId'> &
  Partial<
    Pick<
      AppDeps,
      'paths' | 'fanout' | 'gatePool' | 'snippetPool' | 'sweepIntervalMs' | 'webUrl' | 'images' | 'redelivery'
    >
  >;

export function createDeps(options: DepsOptions): AppDeps {
  // Each default by name: an option given as undefined (exactOptionalPropertyTypes is off) still gets one.
  return {
    ...options,
    orgCache: new OrgConfigCache(),
    runs: new Map(),
    locks: new Map(),
    deliveries: new Deliveries(),
    paths: options.paths ?? new MemoryPathIndex(),
    fanout: options.fanout ?? new JobQueue(),
    gatePool: options.gatePool ?? new InlineGates(),
  };
}

/** Remember at most this many runs and deliveries (the oldest are forgotten first). */
const REMEMBERED = 10_000;

export function rememberRun(deps: AppDeps, key: string, run: ExistingRun): void {
  deps.runs.delete(key);
  deps.runs.set(key, run);
  while (deps.runs.size > REMEMBERED) deps.runs.delete(deps.runs.keys().next().value!);
}

/**
 * Delivery ids (GitHub redelivers with the same id). A delivery is dropped while the same id is being handled,
 * or after it was handled successfully; after a failure it is forgotten, so a manual redelivery runs again.
 */
export class Deliveries {
  private readonly inFlight = new Set<string>();
  private readonly done = new Set<string>();

  /** True when this delivery should be handled now. */
  begin(id: string): boolean {
    if (this.inFlight.has(id) || this.done.has(id)) return false;
    this.inFlight.add(id);
    return true;
  }

  end(id: string, succeeded: boolean): void {
    this.inFlight.delete(id);
    if (!succeeded) return;
    this.done.add(id);
    if (this.done.size > REMEMBERED) this.done.delete(this.done.values().next().value!);
  }
}
