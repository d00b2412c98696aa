/** The vocabulary every stage of the pipeline shares: positions, findings and fixes. */

export type Severity = 'error' | 'warning' | 'notice';
export type FixSafety = 'safe' | 'unsafe';

/** 1-based line and column (column counts UTF-16 code units, as editors and GitHub do) plus the 0-based offset. */
export interface Position {
  readonly line: number;
  readonly column: number;
  readonly offset: number;
}

export interface Location {
  readonly path: string;
  readonly start: Position;
  readonly end: Position;
}

export interface RelatedLocation {
  readonly location: Location;
  readonly message: string;
}

/** Replace text[range[0], range[1]) of `path` with `text`. */
export interface TextEdit {
  readonly path: string;
  readonly range: readonly [start: number, end: number];
  readonly text: string;
}

export interface Fix {
  readonly title: string;
  readonly safety: FixSafety;
  readonly edits: readonly TextEdit[];
  /** Why a fix a rule offered as safe is not: what applying it gives (set by verifyFixes). */
  readonly verification?: string;
}

export interface Finding {
  readonly ruleId: string;
  readonly severity: Severity;
  readonly messageId: string;
  readonly message: string;
  /** Why, with the source of the fact where there is one. */
  readonly help?: string;
  readonly location: Location;
  readonly related: readonly RelatedLocation[];
  readonly fix?: Fix;
  /** Alternatives that need a human decision; never applied automatically. */
  readonly suggestions?: readonly Fix[];
  readonly docsUrl: string;
}

export interface Report {
  readonly findings: readonly Finding[];
  readonly filesChecked: number;
  readonly counts: Readonly<Record<Severity, number>>;
  /** Findings silenced by active baseline waivers. */
  readonly waived?: number;
  /** With a fleet of pools: what each pool makes of each unit that claims a CUDA version. */
  readonly fleet?: FleetTable;
}

/**
 * How a pool runs a unit: natively, only under minor-version or forward compatibility, not known (it depends on what
 * the unit does not say, such as the Python an unpinned torch is picked for), not at all, or never (the unit's pods
 * are not scheduled there).
 */
export type PoolTier = 'runs' | 'minor' | 'forward' | 'unknown' | 'fails' | 'not-scheduled';

/** One rule's word on one unit on one pool. */
export interface PoolVerdict {
  /** The unit's label (`Dockerfile (stage 1)`, `k8s/train.yaml (Job/train, container train)`). */
  readonly unit: string;
  readonly path: string;
  readonly line: number;
  readonly pool: string;
  readonly tier: PoolTier;
  readonly reason?: string;
}

export interface FleetTable {
  readonly pools: readonly { readonly name: string; readonly driver: string }[];
  /** One row per unit, in report order; a cell per pool, in the baseline's order. */
  readonly rows: readonly {
    readonly unit: string;
    readonly path: string;
    readonly line: number;
    readonly cells: readonly PoolCell[];
  }[];
}

export interface PoolCell {
  readonly tier: PoolTier;
  readonly reason?: string;
}

/** The worse of two tiers (a unit fails on a pool when any rule says so). */
export const TIER_RANK: Readonly<Record<PoolTier, number>> = {
  'not-scheduled': 0,
  runs: 1,
  forward: 2,
  minor: 3,
  unknown: 4,
  fails: 5,
};

export const severityRank: Readonly<Record<Severity, number>> = { error: 3, warning: 2, notice: 1 };
