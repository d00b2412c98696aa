/**
 * conda's version specs as its match-spec means them (docs.conda.io, "Package match specifications"; conda's
 * `models/version.py`), for the versions the knowledge base lists:
 *
 * - `1.9`, `=1.9`, `1.9.*`: fuzzy, every version that starts with the given components (1.9, 1.9.0, 1.9.1);
 * - `==1.9`: exactly that version (conda orders 1.9 and 1.9.0 as equal);
 * - `>=1.10,<1.11`, `!=2.0.0`, `~=1.9.0`: ordered comparisons, `,` joins them (and), `|` separates alternatives (or).
 *
 * Versions compare as conda's VersionOrder does for what ML stacks write: components split at `.` `_` `-`, each into
 * runs of digits and letters; numbers compare as numbers, a letter run sorts before any number (2.1.0a0 < 2.1.0),
 * `post` after everything and `dev` before, a component that starts with letters has a 0 before them, missing
 * components count as 0 (conda's documented order: 1.1dev1 < 1.1a1 < 1.1.0dev1 == 1.1.dev1 < 1.1.a1 < 1.1.0rc1 < 1.1.0
 * == 1.1).
 */

import { memoize } from '../util/memo.js';

export interface CondaVersionSpec {
  /** Alternatives (`|`), each a list of constraints that must all hold (`,`). */
  readonly anyOf: readonly (readonly Constraint[])[];
}

interface Constraint {
  readonly operator: '==' | '!=' | '>=' | '<=' | '>' | '<' | '~=' | 'prefix';
  readonly version: string;
}

const OPERATOR = /^(==|!=|>=|<=|~=|>|<|=)?\s*(.*)$/;

/** The spec of a version text (`>=2.0.0,<2.1.0a0`, `=1.9`, `1.12.*`), or undefined when conda would not read it. */
export function parseCondaVersionSpec(text: string, bare: 'exact' | 'fuzzy' = 'fuzzy'): CondaVersionSpec | undefined {
  const trimmed = text.trim();
  if (!trimmed) return undefined;
  const anyOf: Constraint[][] = [];
  for (const alternative of trimmed.split('|')) {
    const all: Constraint[] = [];
    for (const part of alternative.split(',')) {
      const match = OPERATOR.exec(part.trim());
      const [, op, raw] = match ?? [];
      const version = (raw ?? '').trim();
      if (!version || /\s/.test(version) || !/^[0-9A-Za-z*][0-9A-Za-z.*_+!-]*$/.test(version)) return undefined;
      if (version === '*') continue; // any version
      if (version.endsWith('.*') || version.endsWith('*')) {
        if (op && op !== '=' && op !== '==') return undefined; // `>=1.*` is not a spec we read
        all.push({ operator: 'prefix', version: version.replace(/\.?\*$/, '') });
      } else if (op === '=' || (!op && bare === 'fuzzy')) all.push({ operator: 'prefix', version });
      else all.push({ operator: (op ?? '==') as Constraint['operator'], version });
    }
    anyOf.push(all);
  }
  return { anyOf };
}

/** Whether `version` satisfies the spec. */
export function condaAdmits(spec: CondaVersionSpec, version: string): boolean {
  return spec.anyOf.some((all) => all.every((constraint) => holds(constraint, version)));
}

function holds({ operator, version }: Constraint, candidate: string): boolean {
  switch (operator) {
    case 'prefix': {
      const want = components(version);
      const have = components(candidate);
      return want.every((part, i) => compareComponent(part, have[i] ?? [0]) === 0);
    }
    case '==':
      return compareCondaVersions(candidate, version) === 0;
    case '!=':
      return compareCondaVersions(candidate, version) !== 0;
    case '>=':
      return compareCondaVersions(candidate, version) >= 0;
    case '<=':
      return compareCondaVersions(candidate, version) <= 0;
    case '>':
      return compareCondaVersions(candidate, version) > 0;
    case '<':
      return compareCondaVersions(candidate, version) < 0;
    case '~=': {
      // ~=1.9.0: >=1.9.0 and the same 1.9 prefix.
      const parts = version.split('.');
      const prefix = parts.slice(0, Math.max(1, parts.length - 1)).join('.');
      return compareCondaVersions(candidate, version) >= 0 && holds({ operator: 'prefix', version: prefix }, candidate);
    }
  }
}

type Part = number | string;

/** A version's components, read once per version text (a conda environment's specs meet the same candidates). */
const components = memoize(readComponents);

function readComponents(version: string): Part[][] {
  const local = version.toLowerCase().split('+')[0]!;
  const epoch = /^\d+!/.test(local) ? local.slice(local.indexOf('!') + 1) : local;
  // A component that starts with letters counts as 0 followed by them (conda: 1.1.dev1 == 1.1.0dev1).
  return epoch.split(/[._-]/).map((component) => {
    const runs: Part[] = (component.match(/\d+|[a-z]+/g) ?? ['0']).map((run) => (/^\d/.test(run) ? Number(run) : run));
    return typeof runs[0] === 'string' ? [0, ...runs] : runs;
  });
}

function rank(part: Part): number {
  if (typeof part === 'number') return 2;
  if (part === 'post') return 3;
  if (part === 'dev') return 0;
  return 1;
}

function comparePart(a: Part, b: Part): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareComponent(a: readonly Part[], b: readonly Part[]): number {
  const length = Math.max(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const order = comparePart(a[i] ?? 0, b[i] ?? 0);
    if (order !== 0) return order;
  }
  return 0;
}

/** conda's order of two versions: negative, 0 or positive. */
export function compareCondaVersions(a: string, b: string): number {
  const left = components(a);
  const right = components(b);
  const length = Math.max(left.length, right.length);
  for (let i = 0; i < length; i++) {
    const order = compareComponent(left[i] ?? [0], right[i] ?? [0]);
    if (order !== 0) return order;
  }
  return 0;
}
