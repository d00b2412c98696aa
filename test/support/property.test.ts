/** The property runner every property test uses (test/support/property.ts): fixed seeds, recorded counterexamples. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkProperty, leastShare, type Plan } from './property.js';

const plan = (overrides: Partial<Plan> = {}): Plan => ({
  test: 'a test',
  place: 0,
  seed: 42,
  numRuns: 50,
  recorded: [],
  ...overrides,
});

describe('checkProperty', () => {
  it('draws the same cases for the same seed, and other cases for another', () => {
    const drawn = (seed: number) => {
      const values: number[] = [];
      checkProperty(
        fc.property(fc.integer(), (value) => void values.push(value)),
        plan({ seed }),
      );
      return values;
    };
    expect(drawn(42)).toEqual(drawn(42));
    expect(drawn(43)).not.toEqual(drawn(42));
  });

  it('tries every recorded input, which 50 random cases would not find', () => {
    const property = fc.property(fc.integer(), (value) => value !== 123_456_789);
    expect(() => checkProperty(property, plan())).not.toThrow();
    const recorded = [{ test: 'a test', seed: 1, input: [123_456_789], found: '2026-12-05', note: 'n' }];
    expect(() => checkProperty(property, plan({ recorded }))).toThrow(/Counterexample: \[123456789\]/);
  });

  it('replays a recorded seed and path exactly', () => {
    const property = fc.property(fc.integer(), (value) => value % 1000 !== 7);
    const found = fc.check(property, { seed: 7, numRuns: 100_000 });
    expect(found.failed).toBe(true);
    const recorded = [{ test: 'a test', seed: found.seed, path: found.counterexamplePath!, found: '', note: '' }];
    expect(() => checkProperty(property, plan({ recorded }))).toThrow(
      new RegExp(`Counterexample: \\[${found.counterexample![0]}\\]`),
    );
  });

  it('prints the entry to record: the test, its place, the seed, the path and the shrunk input', () => {
    const property = fc.property(fc.string(), (text) => !text.includes('!'));
    let message = '';
    try {
      checkProperty(property, plan({ place: 1, numRuns: 10_000 }));
    } catch (error) {
      message = (error as Error).message;
    }
    const entry = JSON.parse(message.slice(message.lastIndexOf('\n{\n'))) as Record<string, unknown>;
    expect(entry).toMatchObject({ test: 'a test', property: 1, seed: 42, input: ['!'] });
    expect(entry.path).toMatch(/^\d+(:\d+)*$/);
  });
});

describe('leastShare', () => {
  it('is the Chernoff bound at one in a billion: below it, a binomial draw is out of reach of chance', () => {
    // n·D(q‖p) = ln 10⁹ at the bound (D the Kullback–Leibler divergence of Bernoulli(q) from Bernoulli(p)).
    for (const [p, n] of [
      [0.05, 1500],
      [0.3, 1500],
      [0.6, 10_000],
    ] as const) {
      const q = leastShare(p, n);
      const divergence = q * Math.log(q / p) + (1 - q) * Math.log((1 - q) / (1 - p));
      expect(n * divergence).toBeCloseTo(Math.log(1e9), 6);
      expect(q).toBeLessThan(p);
    }
  });

  it('tightens as the runs grow, and is 0 where no bound is safe', () => {
    expect(leastShare(0.3, 10_000)).toBeGreaterThan(leastShare(0.3, 1500));
    expect(leastShare(0.01, 100)).toBe(0);
  });
});
