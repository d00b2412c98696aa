/**
 * The properties a parser fast path must have: on every input it accepts it reads exactly what the reference
 * library reads (`agrees` throws otherwise and returns whether the scan accepted the input), and it accepts a fair
 * share of real, generated and mutated files, so none of these properties holds vacuously.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { mutated, RUNS, seeds, type Kind } from './fuzz-inputs.js';

export function fastPathProperties(
  kind: Kind,
  reference: string,
  generated: fc.Arbitrary<string>,
  agrees: (text: string) => boolean,
  /**
   * The least share of generated and of mutated inputs the fast path must accept. Set well below the share it
   * does accept (at 1,500 cases, three standard deviations or more), so that the bound fails only when the fast
   * path stops reading a kind of input, not by chance.
   */
  share: { readonly generated: number; readonly mutated?: number },
): void {
  it(`reads every fixture and corpus file it accepts exactly as ${reference} does, and accepts most of them`, () => {
    const files = seeds(kind);
    expect(files.filter((text) => agrees(text)).length).toBeGreaterThan(files.length / 2);
  });

  it(`agrees with ${reference} on generated files`, () => {
    let accepted = 0;
    fc.assert(
      fc.property(generated, (text) => void (agrees(text) && accepted++)),
      { numRuns: RUNS },
    );
    expect(accepted).toBeGreaterThan(RUNS * share.generated);
  });

  it(`agrees with ${reference} on mutated real files`, () => {
    let accepted = 0;
    fc.assert(
      fc.property(mutated(kind), (text) => void (agrees(text) && accepted++)),
      { numRuns: RUNS },
    );
    expect(accepted).toBeGreaterThan(RUNS * (share.mutated ?? 1 / 20));
  });
}
