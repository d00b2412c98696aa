/**
 * PEP 508 environment markers
 * (packaging.python.org/en/latest/specifications/dependency-specifiers/#environment-markers), judged for the machines
 * the CUDA checks are about: Linux, with the extras a selection installs. Everything else (the Python version, the
 * machine's architecture) is unknown, and the logic is three-valued: a marker is false only when it cannot hold
 * whatever the unknowns are.
 *
 * uv writes the extras and groups of conflicting selections into its lock's markers as
 * `extra == 'extra-8-nanochat-cpu'` and `extra == 'group-8-nanochat-dev'` (`extra-<length of the project's
 * name>-<name>-<extra>`): `activeExtras` gives both spellings.
 */
import { compareDotted } from '../util/dotted.js';
import { memoize } from '../util/memo.js';
import { ownValue } from '../util/collections.js';

/** The machines Linux GPU nodes run, as `platform_machine` names them. */
export const MACHINES = ['x86_64', 'aarch64'] as const;
export type Machine = (typeof MACHINES)[number];

/** What is known of the environment: the extras installed (undefined: any may be), and values of other variables. */
export interface MarkerEnvironment {
  readonly extras?: ReadonlySet<string>;
  /** `python_version`, `python_full_version`, `platform_machine`, … where a caller fixes them. */
  readonly values?: Readonly<Record<string, string>>;
}

type Value = boolean | undefined;

/** Known values of the environment's variables on Linux (packaging's `default_environment()` names). */
const LINUX: Readonly<Record<string, string>> = {
  sys_platform: 'linux',
  platform_system: 'Linux',
  os_name: 'posix',
  implementation_name: 'cpython',
  platform_python_implementation: 'CPython',
};

type Token = { readonly kind: 'string' | 'name' | 'op' | '(' | ')'; readonly text: string };

/** A marker's tokens, remembered per text: a lock repeats the same markers on thousands of references. */
const tokensOf = memoize(tokenize);
const TRAILING_SPACE = /\s*$/y;

function tokenize(marker: string): readonly Token[] | undefined {
  const tokens: Token[] = [];
  const re =
    /\s*(?:(['"])(.*?)\1|(\(|\))|(===|==|!=|<=|>=|~=|<|>)|(not\s+in\b|in\b|and\b|or\b|not\b)|([A-Za-z_][A-Za-z0-9_.]*))/y;
  let at = 0;
  while (at < marker.length) {
    TRAILING_SPACE.lastIndex = at;
    if (TRAILING_SPACE.test(marker)) break;
    re.lastIndex = at;
    const match = re.exec(marker);
    if (!match) return undefined;
    at = re.lastIndex;
    if (match[1] !== undefined) tokens.push({ kind: 'string', text: match[2]! });
    else if (match[3]) tokens.push({ kind: match[3] as '(' | ')', text: match[3] });
    else if (match[4]) tokens.push({ kind: 'op', text: match[4] });
    else if (match[5])
      tokens.push({ kind: /^(?:and|or)$/.test(match[5]) ? 'name' : 'op', text: match[5].replace(/\s+/, ' ') });
    else tokens.push({ kind: 'name', text: match[6]! });
  }
  return tokens;
}

/** Whether a marker holds: true, false, or undefined when it depends on what is not known (or cannot be read). */
export function evaluateMarker(marker: string | undefined, environment: MarkerEnvironment = {}): Value {
  if (!marker || marker.trim() === '') return true;
  const tokens = tokensOf(marker);
  if (!tokens) return undefined;
  let i = 0;
  const peek = (): Token | undefined => tokens[i];
  const or = (): Value => {
    let result = and();
    while (peek()?.kind === 'name' && peek()!.text === 'or') {
      i++;
      const right = and();
      result = result === true || right === true ? true : result === false && right === false ? false : undefined;
    }
    return result;
  };
  const and = (): Value => {
    let result = atom();
    while (peek()?.kind === 'name' && peek()!.text === 'and') {
      i++;
      const right = atom();
      result = result === false || right === false ? false : result === true && right === true ? true : undefined;
    }
    return result;
  };
  const operand = (): { variable?: string; text?: string } | undefined => {
    const token = tokens[i++];
    if (token?.kind === 'string') return { text: token.text };
    if (token?.kind === 'name') return { variable: token.text };
    return undefined;
  };
  const atom = (): Value => {
    if (peek()?.kind === '(') {
      i++;
      const inner = or();
      if (peek()?.kind === ')') i++;
      return inner;
    }
    const left = operand();
    const op = tokens[i++];
    const right = operand();
    if (!left || !right || op?.kind !== 'op') return undefined;
    return compare(left, op.text, right, environment);
  };
  const result = or();
  return i === tokens.length ? result : undefined;
}

function compare(
  left: { variable?: string; text?: string },
  op: string,
  right: { variable?: string; text?: string },
  environment: MarkerEnvironment,
): Value {
  // `extra == 'cpu'`: known when the selection's extras are.
  const extraSide = left.variable === 'extra' ? right.text : right.variable === 'extra' ? left.text : undefined;
  if (extraSide !== undefined && (op === '==' || op === '!=')) {
    if (!environment.extras) return undefined;
    const has = environment.extras.has(normalizeExtra(extraSide));
    return op === '==' ? has : !has;
  }
  const known = (variable: string): string | undefined =>
    (environment.values && ownValue(environment.values, variable)) ?? ownValue(LINUX, variable);
  const value = (side: { variable?: string; text?: string }): string | undefined =>
    side.text ?? (side.variable ? known(side.variable) : undefined);
  const a = value(left);
  const b = value(right);
  if (a === undefined || b === undefined) return undefined;
  const versions = VERSION.test(a) && VERSION.test(b);
  if (op === '==' || op === '===') return versions && op === '==' ? compareDotted(a, b) === 0 : a === b;
  if (op === '!=') return versions ? compareDotted(a, b) !== 0 : a !== b;
  if (op === 'in') return b.includes(a);
  if (op === 'not in') return !b.includes(a);
  if (!versions) return undefined;
  const order = compareDotted(a, b);
  if (op === '<') return order < 0;
  if (op === '<=') return order <= 0;
  if (op === '>') return order > 0;
  if (op === '>=') return order >= 0;
  // ~=X.Y: >= X.Y and == X.*
  if (op === '~=')
    return (
      order >= 0 &&
      compareDotted(
        a
          .split('.')
          .slice(0, b.split('.').length - 1)
          .join('.'),
        b.split('.').slice(0, -1).join('.'),
      ) === 0
    );
  return undefined;
}

const VERSION = /^\d+(?:\.\d+)*$/;

/** Pythons and machines a Linux image may have: the environments two markers are tried in together. */
const SAMPLES: readonly Readonly<Record<string, string>>[] = [
  '3.7',
  '3.8',
  '3.9',
  '3.10',
  '3.11',
  '3.12',
  '3.13',
  '3.14',
].flatMap((python) =>
  ['x86_64', 'aarch64'].map((machine) => ({
    python_version: python,
    python_full_version: `${python}.0`,
    platform_machine: machine,
  })),
);

/**
 * Whether two requirements can be installed together on Linux: false only when their markers never hold in the
 * same environment (`python_version < "3.9"` beside `python_version >= "3.9"`: alternatives, never compared).
 */
export function mayHoldTogether(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b || a === b) return true;
  return (samplesWhereItMayHold(a) & samplesWhereItMayHold(b)) !== 0;
}

/**
 * The SAMPLES a marker may hold in, one bit each. Worked out once per marker text: a unit of many requirements
 * compares each with its torch, and a file's markers repeat (the same `python_version` test on every line).
 */
const samplesWhereItMayHold = memoize((marker: string): number =>
  SAMPLES.reduce((mask, values, bit) => (evaluateMarker(marker, { values }) !== false ? mask | (1 << bit) : mask), 0),
);

/** Whether a marker can hold on Linux (x86_64 or aarch64, any Python, any extras). */
export function holdsOnLinux(marker: string | undefined): boolean {
  return evaluateMarker(marker) !== false;
}

/** The extras a marker asks for (`extra == 'cuda'`), as written. */
export function markerExtras(marker: string | undefined): string[] {
  return marker ? [...marker.matchAll(/\bextra\s*==\s*['"]([^'"]+)['"]/g)].map((match) => match[1]!) : [];
}

/** PEP 685: extras compare normalised, as PEP 503 names. */
function normalizeExtra(extra: string): string {
  return extra.toLowerCase().replace(/[-_.]+/g, '-');
}

/** The extras a selection installs, as markers name them: plain, and as uv's lock encodes conflicting ones. */
export function activeExtras(project: string, extras: readonly string[], groups: readonly string[] = []): Set<string> {
  const name = normalizeExtra(project);
  return new Set([
    ...extras.map(normalizeExtra),
    ...extras.map((extra) => `extra-${name.length}-${name}-${normalizeExtra(extra)}`),
    ...groups.map((group) => `group-${name.length}-${name}-${normalizeExtra(group)}`),
  ]);
}
