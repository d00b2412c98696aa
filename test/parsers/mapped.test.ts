import fc from 'fast-check';
import { assertProperty } from '../support/property.js';
import { describe, expect, it } from 'vitest';
import type { ArgOrigin } from '../../src/parsers/facts.js';
import { Mapped, MappedBuilder, SegmentMapped, type Segment } from '../../src/parsers/mapped.js';
import { RUNS } from '../support/fuzz-inputs.js';

/** One pushSegment call: file characters at `origin`, or a substituted/synthetic piece with its own site. */
interface Piece {
  readonly text: string;
  readonly origin: number;
  readonly via: ArgOrigin | undefined;
}

/** The reference: every character of the assembled string with its file offset (-1: not editable) and substitution. */
interface Char {
  readonly origin: number;
  readonly via: ArgOrigin | undefined;
}

const piece: fc.Arbitrary<Piece> = fc.record({
  text: fc.string({ minLength: 1, maxLength: 6 }),
  origin: fc.oneof(fc.constant(-1), fc.nat(200)),
  via: fc.option(fc.record({ name: fc.constantFrom('A', 'B'), reference: fc.constant({ start: 0, end: 4 }) }), {
    nil: undefined,
  }),
});

function assemble(pieces: readonly Piece[]): { mapped: Mapped; chars: Char[] } {
  const builder = new MappedBuilder();
  const chars: Char[] = [];
  for (const p of pieces) {
    const plain = p.origin >= 0 && !p.via;
    builder.pushSegment(p.text, p.origin, plain ? undefined : { start: 0, end: 1 }, p.via);
    for (let i = 0; i < p.text.length; i++) chars.push({ origin: p.origin < 0 ? -1 : p.origin + i, via: p.via });
  }
  return { mapped: builder.build(), chars };
}

/**
 * What origin() must answer by definition: the file range when text[from, to) is one contiguous run of file characters.
 */
function expectedOrigin(chars: readonly Char[], from: number, to: number): { start: number; end: number } | undefined {
  if (to <= from) return undefined;
  for (let i = from; i < to; i++) {
    if (chars[i]!.origin < 0) return undefined;
    if (i > from && chars[i]!.origin !== chars[i - 1]!.origin + 1) return undefined;
  }
  return { start: chars[from]!.origin, end: chars[to - 1]!.origin + 1 };
}

const withRange = fc.array(piece, { minLength: 1, maxLength: 12 }).chain((pieces) => {
  const length = pieces.reduce((n, p) => n + p.text.length, 0);
  return fc
    .tuple(fc.constant(pieces), fc.nat(length), fc.nat(length))
    .map(([ps, a, b]) => ({ pieces: ps, from: Math.min(a, b), to: Math.max(a, b) }));
});

describe('Mapped', () => {
  it('slice, origin and via agree with a character-by-character model', () => {
    assertProperty(
      fc.property(withRange, ({ pieces, from, to }) => {
        const { mapped, chars } = assemble(pieces);
        const slice = mapped.slice(from, to);
        expect(slice.text).toBe(mapped.text.slice(from, to));
        // The slice keeps each character's origin: a one-character origin() on it matches the model.
        for (let i = 0; i < slice.length; i++) {
          const c = chars[from + i]!;
          expect(slice.origin(i, i + 1)).toEqual(c.origin < 0 ? undefined : { start: c.origin, end: c.origin + 1 });
          expect(slice.via(i, i + 1)).toEqual(c.via);
        }
        if (to > from) {
          expect(mapped.origin(from, to)).toEqual(expectedOrigin(chars, from, to));
          expect(mapped.via(from, to)).toEqual(chars.slice(from, to).find((c) => c.via)?.via);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('slicing every word of a many-piece string reads each piece a bounded number of times (no quadratic scan)', () => {
    // A RUN line with thousands of continuation lines becomes one Mapped of thousands of pieces, then is cut
    // into words. Count the reads of the piece list instead of timing, so the check is exact on any machine.
    const pieces = 4000;
    const builder = new MappedBuilder();
    for (let i = 0; i < pieces; i++) builder.pushSegment('word ', i * 10); // gaps in the file: no merging
    const built = builder.build();
    let reads = 0;
    const counted = new Proxy([...built.pieces()], {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver) as unknown;
      },
    }) as Segment[];
    const mapped = new SegmentMapped(built.text, counted);
    for (let i = 0; i < pieces; i++) {
      mapped.slice(i * 5, i * 5 + 4);
      mapped.via(i * 5, i * 5 + 4);
      mapped.origin(i * 5, i * 5 + 4);
    }
    // A binary search is ~12 reads for 4,000 pieces; a scan of the whole list per call would be 48 million.
    expect(reads).toBeLessThan(pieces * 3 * 20);
  });

  it('a plain piece (Mapped.of at a file offset) answers exactly as the same piece held as a segment', () => {
    const describe = (m: Mapped, from: number, to: number): unknown => ({
      text: m.text,
      site: m.site(from, to),
      origin: m.origin(from, to),
      via: m.via(from, to),
      pieces: m.pieces(),
      slice: {
        text: m.slice(from, to).text,
        pieces: m.slice(from, to).pieces(),
        site: m.slice(from, to).site(0, 1),
        trimmed: m.trim().pieces(),
      },
    });
    assertProperty(
      fc.property(
        fc.string({ maxLength: 8 }),
        fc.nat(500),
        fc.integer({ min: -2, max: 10 }),
        fc.integer({ min: -2, max: 10 }),
        (text, origin, from, to) => {
          const plain = Mapped.of(text, origin);
          const segment = new SegmentMapped(text, [
            { from: 0, to: text.length, origin, site: { start: origin, end: origin + text.length }, via: undefined },
          ]);
          expect(describe(plain, from, to)).toEqual(describe(segment, from, to));
          // Appended to a builder, both give the same pieces.
          const a = new MappedBuilder();
          const b = new MappedBuilder();
          a.pushSegment('x', 0);
          b.pushSegment('x', 0);
          a.pushMapped(plain);
          b.pushMapped(segment);
          expect(a.build().pieces()).toEqual(b.build().pieces());
        },
      ),
      { numRuns: RUNS },
    );
  });
});
