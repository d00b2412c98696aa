/**
 * Every property-based test runs through `assertProperty`, so that a test run fails only for a reason:
 *
 * - In `npm test`, `npm run test:all` and CI (`npm run fuzz:ci`), each property runs with the fixed seed of
 *   test/fuzz/seeds.json, and every counterexample recorded there for it is tried first: the same cases on every run
 *   and every machine, and each input that ever broke a property stays a regression test.
 * - With FUZZ_EXPLORE=1 (`npm run fuzz`), each property runs with a new seed (or FUZZ_SEED), to find new
 *   counterexamples; a failure prints the seed, the path and the shrunk input as the entry to add to seeds.json.
 *
 * Counterexamples are keyed by the test's full name and the property's place in it (a test may assert several).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { expect } from 'vitest';

export interface Counterexample {
  /** The test's full name, as Vitest gives it ("describe > it"). */
  readonly test: string;
  /** Which of the test's properties (0: the first it asserts). */
  readonly property?: number;
  /** The run that found it: replayed exactly while the property's arbitraries stay as they were. */
  readonly seed: number;
  readonly path?: string;
  /** The shrunk input (the property's arguments), replayed as an example whatever the arbitraries become. */
  readonly input?: readonly unknown[];
  /** When and what it broke, and what fixed it. */
  readonly found: string;
  readonly note: string;
}

interface SeedFile {
  /** The seed every property runs with, outside exploration. */
  readonly seed: number;
  readonly counterexamples: readonly Counterexample[];
}

export const SEEDS_PATH = join(import.meta.dirname, '..', 'fuzz', 'seeds.json');
const seeds = JSON.parse(readFileSync(SEEDS_PATH, 'utf8')) as SeedFile;

/** Exploring (`npm run fuzz`): a new seed per property; otherwise the fixed one. */
export const EXPLORING = process.env.FUZZ_EXPLORE === '1';

let current: { test: string; next: number } | undefined;

/** The current test's name and this property's place in it. */
function whereAmI(): { test: string; property: number } {
  const test = expect.getState().currentTestName ?? '(outside a test)';
  if (current?.test !== test) current = { test, next: 0 };
  return { test, property: current.next++ };
}

function seedFor(): number {
  if (process.env.FUZZ_SEED !== undefined) return Number(process.env.FUZZ_SEED);
  return EXPLORING ? (Date.now() ^ (Math.random() * 0x100000000)) | 0 : seeds.seed;
}

/** The failure as the entry to add to seeds.json, with fast-check's own report. */
function failure<Ts extends unknown[]>(plan: Plan, details: fc.RunDetails<Ts>): Error {
  const entry = {
    test: plan.test,
    ...(plan.place ? { property: plan.place } : {}),
    seed: details.seed,
    ...(details.counterexamplePath ? { path: details.counterexamplePath } : {}),
    ...(details.counterexample ? { input: details.counterexample } : {}),
    found: new Date().toISOString().slice(0, 10),
    note: 'what it broke, and what fixed it',
  } satisfies Counterexample;
  const report = fc.defaultReportMessage(details) ?? 'the property failed';
  return new Error(
    `${report}\n\nOnce fixed, keep it as a regression test: add this to the counterexamples of ${SEEDS_PATH}:\n${JSON.stringify(entry, null, 2)}`,
  );
}

export interface PropertyParameters {
  /** Cases per run; fast-check's default, 100, when not given. */
  readonly numRuns?: number;
}

/**
 * fc.assert with the repository's seed and the recorded counterexamples (see above). Synchronous properties
 * return nothing; asynchronous ones a promise.
 */
export function assertProperty<Ts extends unknown[]>(property: fc.IProperty<Ts>, parameters?: PropertyParameters): void;
export function assertProperty<Ts extends unknown[]>(
  property: fc.IAsyncProperty<Ts>,
  parameters?: PropertyParameters,
): Promise<void>;
export function assertProperty<Ts extends unknown[]>(
  property: fc.IProperty<Ts> | fc.IAsyncProperty<Ts>,
  parameters: PropertyParameters = {},
): void | Promise<void> {
  const { test, property: place } = whereAmI();
  const plan: Plan = {
    test,
    place,
    seed: seedFor(),
    numRuns: parameters.numRuns ?? 100,
    recorded: seeds.counterexamples.filter((entry) => entry.test === test && (entry.property ?? 0) === place),
  };
  return property.isAsync()
    ? checkPropertyAsync(property as fc.IAsyncProperty<Ts>, plan)
    : checkProperty(property as fc.IProperty<Ts>, plan);
}

/** One property's runs: which test and place it is, the seed, the cases, and what was recorded for it. */
export interface Plan {
  readonly test: string;
  readonly place: number;
  readonly seed: number;
  readonly numRuns: number;
  readonly recorded: readonly Counterexample[];
}

/** The recorded runs replayed exactly (a changed arbitrary makes them ordinary cases), then the seed's run. */
function runsOf<Ts extends unknown[]>(plan: Plan): fc.Parameters<Ts>[] {
  const examples = plan.recorded.flatMap((entry) => (entry.input ? [entry.input as Ts] : []));
  return [
    ...plan.recorded.flatMap((entry) => (entry.path ? [{ seed: entry.seed, path: entry.path, numRuns: 1 }] : [])),
    { seed: plan.seed, numRuns: plan.numRuns, examples },
  ];
}

/** Run a synchronous property as `plan` says; a failure throws with the entry to record. */
export function checkProperty<Ts extends unknown[]>(property: fc.IProperty<Ts>, plan: Plan): void {
  for (const run of runsOf<Ts>(plan)) {
    const details = fc.check(property, run);
    if (details.failed) throw failure(plan, details);
  }
}

async function checkPropertyAsync<Ts extends unknown[]>(property: fc.IAsyncProperty<Ts>, plan: Plan): Promise<void> {
  for (const run of runsOf<Ts>(plan)) {
    const details = await fc.check(property, run);
    if (details.failed) throw failure(plan, details);
  }
}

/**
 * The least share of `runs` cases that chance cannot undercut, for a property whose cases are each accepted with
 * probability `measured`. The Chernoff bound on a binomial's lower tail, P(X ≤ qn) ≤ exp(−n·D(q‖p)), with D the
 * Kullback–Leibler divergence of Bernoulli(q) from Bernoulli(p), is solved for the q at which that probability is
 * `chance` (10⁻⁹: one false failure in a billion runs of the property). Fewer accepted cases than that says the code
 * under test stopped taking a kind of input, not that the draw was unlucky. `measured` is the share seen over many
 * seeds less three standard deviations of that estimate (each call site says where its figure comes from).
 */
export function leastShare(measured: number, runs: number, chance = 1e-9): number {
  const divergence = (q: number): number =>
    (q === 0 ? 0 : q * Math.log(q / measured)) + (1 - q) * Math.log((1 - q) / (1 - measured));
  const needed = Math.log(1 / chance) / runs;
  if (divergence(0) < needed) return 0; // too few runs for any bound to be safe
  let [low, high] = [0, measured];
  for (let step = 0; step < 60; step++) {
    const middle = (low + high) / 2;
    if (divergence(middle) >= needed) low = middle;
    else high = middle;
  }
  return low;
}

/** `accepted` of `runs` cases is at least the share chance cannot undercut (leastShare). */
export function expectShare(accepted: number, runs: number, measured: number): void {
  const least = leastShare(measured, runs);
  expect(
    accepted,
    `accepted ${accepted} of ${runs}; at ${measured} each, fewer than ${Math.ceil(least * runs)} is not chance`,
  ).toBeGreaterThanOrEqual(Math.ceil(least * runs));
}
