/**
 * The properties a parser fast path must have: on every input it accepts it reads exactly what the reference
 * library reads (`agrees` throws otherwise and returns whether the scan accepted the input), and it accepts a fair
 * share of real, generated and mutated files, so none of these properties holds vacuously.
 */
import fc from 'fast-check';
import { assertProperty, expectShare } from './property.js';
import { expect, it } from 'vitest';
import { mutated, RUNS, seeds, type Kind } from './fuzz-inputs.js';

export function fastPathProperties(
  kind: Kind,
  reference: string,
  generated: fc.Arbitrary<string>,
  agrees: (text: string) => boolean,
  /**
   * The share of generated and of mutated inputs the fast path accepts, as measured: the mean over eight seeds of
   * 1,500 cases each, less three standard deviations of that mean. The test fails when the fast path accepts
   * fewer than chance allows at that share (expectShare), that is when it stops reading a kind of input.
   */
  measured: { readonly generated: number; readonly mutated: number },
): void {
  it(`reads every fixture and corpus file it accepts exactly as ${reference} does, and accepts most of them`, () => {
    const files = seeds(kind);
    expect(files.filter((text) => agrees(text)).length).toBeGreaterThan(files.length / 2);
  });

  it(`agrees with ${reference} on generated files`, () => {
    let accepted = 0;
    assertProperty(
      fc.property(generated, (text) => void (agrees(text) && accepted++)),
      { numRuns: RUNS },
    );
    expectShare(accepted, RUNS, measured.generated);
  });

  it(`agrees with ${reference} on mutated real files`, () => {
    let accepted = 0;
    assertProperty(
      fc.property(mutated(kind), (text) => void (agrees(text) && accepted++)),
      { numRuns: RUNS },
    );
    expectShare(accepted, RUNS, measured.mutated);
  });
}
