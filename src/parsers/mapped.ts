import type { ArgOrigin } from './facts.js';
import type { Span } from './source.js';

/**
 * A string assembled from pieces of a file (line continuations removed, quotes stripped, ARG values
 * substituted) that remembers, for every character, where it lives in the file (`origin`, the place an
 * edit must go) and where a reader saw it (`site`, the place an annotation points at).
 */
export interface Segment {
  readonly from: number; // index in text
  readonly to: number;
  readonly origin: number; // file offset of text[from]; -1 when not editable (synthetic)
  readonly site: Span;
  readonly via?: ArgOrigin;
}

/**
 * A string read from a file: its text, and for every character where it lives in the file. Two forms behind one
 * interface: `PlainMapped`, text copied from the file at one offset (most requirement lines and shell words, of
 * which a repository has hundreds of thousands: no segment objects), and `SegmentMapped`, text assembled from
 * pieces. Make one with `Mapped.of` or a `MappedBuilder`; both forms answer every question alike
 * (test/parsers/mapped.test.ts).
 */
export interface Mapped {
  readonly text: string;
  readonly length: number;
  /** The file offset of a string that is one plain piece of the file, else -1. */
  readonly plainOffset: number;
  /** The pieces this string is made of (for builders that concatenate mapped strings). */
  pieces(): readonly Segment[];
  /** Where a reader sees text[from, to): for annotations. */
  site(from: number, to: number): Span;
  /** The file range holding exactly text[from, to), if it is one contiguous piece of the file. */
  origin(from: number, to: number): Span | undefined;
  /** The ARG/ENV substitution that produced any character of text[from, to), if one did. */
  via(from: number, to: number): ArgOrigin | undefined;
  slice(from: number, to?: number): Mapped;
  trim(): Mapped;
}

export const Mapped = {
  /** Text at `fileOffset` in the file, or (offset -1) text that is not in the file. */
  of(text: string, fileOffset: number): Mapped {
    return fileOffset >= 0
      ? new PlainMapped(text, fileOffset)
      : new SegmentMapped(text, [plainSegment(text, fileOffset)]);
  },
};

function trimmed(mapped: Mapped): Mapped {
  const start = mapped.text.length - mapped.text.trimStart().length;
  const end = mapped.text.trimEnd().length;
  return start >= end ? mapped.slice(start, start) : mapped.slice(start, end);
}

/** Text copied from the file at one offset: each character is where it is in the file. */
export class PlainMapped implements Mapped {
  constructor(
    readonly text: string,
    readonly plainOffset: number,
  ) {}

  get length(): number {
    return this.text.length;
  }

  pieces(): readonly Segment[] {
    return [plainSegment(this.text, this.plainOffset)];
  }

  site(from: number, to: number): Span {
    const at = this.plainOffset;
    const last = this.text.length - 1;
    if (last < 0) return { start: at, end: at };
    if (to <= from) {
      const point = from <= last ? at + Math.max(0, from) : at + Math.max(0, Math.min(from - 1, last)) + 1;
      return { start: point, end: point };
    }
    const start = at + Math.max(0, Math.min(from, last));
    return { start, end: Math.max(start, at + Math.max(0, Math.min(to - 1, last)) + 1) };
  }

  origin(from: number, to: number): Span | undefined {
    if (to < from) return undefined;
    // One piece covering [0, length): an empty range needs a character at or just before it; others need both ends
    // inside.
    const length = this.text.length;
    if (to === from)
      return (from >= 0 && from < length) || (from - 1 >= 0 && from - 1 < length)
        ? { start: this.plainOffset + from, end: this.plainOffset + from }
        : undefined;
    return from >= 0 && to <= length ? { start: this.plainOffset + from, end: this.plainOffset + to } : undefined;
  }

  via(): ArgOrigin | undefined {
    return undefined;
  }

  slice(from: number, to: number = this.text.length): Mapped {
    // The whole string: this one (a Mapped never changes).
    if (from <= 0 && to >= this.text.length && this.text.length > 0) return this;
    const a = Math.max(0, Math.min(from, this.text.length));
    const b = Math.max(a, Math.min(to, this.text.length));
    return new PlainMapped(this.text.slice(a, b), this.plainOffset + a);
  }

  trim(): Mapped {
    return trimmed(this);
  }
}

/** Text assembled from pieces of a file (and pieces that are not in it); segments tile the text in order. */
export class SegmentMapped implements Mapped {
  readonly plainOffset = -1;

  constructor(
    readonly text: string,
    private readonly segments: readonly Segment[],
  ) {}

  get length(): number {
    return this.text.length;
  }

  pieces(): readonly Segment[] {
    return this.segments;
  }

  /** Index of the first segment that ends after `index` (segments.length when none does). */
  private firstEndingAfter(index: number): number {
    let low = 0;
    let high = this.segments.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.segments[mid]!.to <= index) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  private segmentAt(index: number): Segment | undefined {
    const seg = this.segments[this.firstEndingAfter(index)];
    return seg && seg.from <= index ? seg : undefined;
  }

  private siteOf(index: number, side: 'start' | 'end'): number {
    const seg = this.segmentAt(index) ?? this.segments.at(-1);
    if (!seg) return 0;
    if (seg.origin >= 0 && !seg.via) {
      const offset = seg.origin + Math.max(0, Math.min(index - seg.from, seg.to - seg.from - 1));
      return side === 'start' ? offset : offset + 1;
    }
    return side === 'start' ? seg.site.start : seg.site.end;
  }

  site(from: number, to: number): Span {
    if (this.segments.length === 0) return { start: 0, end: 0 };
    if (this.text.length === 0) {
      const seg = this.segments[0]!;
      const at = seg.origin >= 0 && !seg.via ? seg.origin : seg.site.start;
      return { start: at, end: at };
    }
    if (to <= from) {
      const at = from < this.text.length ? this.siteOf(from, 'start') : this.siteOf(Math.max(0, from - 1), 'end');
      return { start: at, end: at };
    }
    const start = this.siteOf(from, 'start');
    const end = this.siteOf(to - 1, 'end');
    return { start, end: Math.max(start, end) };
  }

  origin(from: number, to: number): Span | undefined {
    if (to < from) return undefined;
    if (to === from) {
      const seg = this.segmentAt(from) ?? this.segmentAt(from - 1);
      if (!seg || seg.origin < 0) return undefined;
      const at = seg.origin + (from - seg.from);
      return { start: at, end: at };
    }
    const first = this.segmentAt(from);
    const last = this.segmentAt(to - 1);
    if (!first || !last || first.origin < 0 || last.origin < 0) return undefined;
    const start = first.origin + (from - first.from);
    const end = last.origin + (to - last.from);
    if (first !== last) {
      // Contiguous only if every segment in between continues the previous one in the file.
      let expected = first.origin + (first.to - first.from);
      for (let i = this.firstEndingAfter(first.to); i < this.segments.length; i++) {
        const seg = this.segments[i]!;
        if (seg.from > last.from) break;
        if (seg.origin !== expected) return undefined;
        expected = seg.origin + (seg.to - seg.from);
      }
    }
    return { start, end };
  }

  via(from: number, to: number): ArgOrigin | undefined {
    const end = Math.max(to, from + 1);
    for (let i = this.firstEndingAfter(from); i < this.segments.length; i++) {
      const seg = this.segments[i]!;
      if (seg.from >= end) break;
      if (seg.via) return seg.via;
    }
    return undefined;
  }

  slice(from: number, to: number = this.text.length): Mapped {
    // The whole string: this one (a Mapped never changes).
    if (from <= 0 && to >= this.text.length && this.text.length > 0) return this;
    const a = Math.max(0, Math.min(from, this.text.length));
    const b = Math.max(a, Math.min(to, this.text.length));
    // Inside one plain piece of the file (a word of one line of a continued RUN): a plain string, no segments.
    const first = this.segments[this.firstEndingAfter(a)];
    if (first && first.origin >= 0 && !first.via && first.from <= a && b <= first.to && b > a)
      return new PlainMapped(this.text.slice(a, b), first.origin + (a - first.from));
    if (this.segments.length === 1) {
      const seg = this.segments[0]!;
      if (seg.origin >= 0 && !seg.via) return Mapped.of(this.text.slice(a, b), seg.origin + a);
    }
    const builder = new MappedBuilder();
    for (let i = this.firstEndingAfter(from); i < this.segments.length; i++) {
      const seg = this.segments[i]!;
      if (seg.from >= to) break;
      const a = Math.max(seg.from, from);
      const b = Math.min(seg.to, to);
      if (a >= b) continue;
      builder.pushSegment(
        this.text.slice(a, b),
        seg.origin < 0 ? -1 : seg.origin + (a - seg.from),
        seg.origin < 0 || seg.via ? seg.site : undefined,
        seg.via,
      );
    }
    return builder.build();
  }

  trim(): Mapped {
    return trimmed(this);
  }
}

export class MappedBuilder {
  private readonly parts: string[] = [];
  private size = 0;
  private readonly segments: Segment[] = [];

  get length(): number {
    return this.size;
  }

  /** Characters that are in the file at `origin` (or not editable when origin is -1). */
  pushSegment(text: string, origin: number, site?: Span, via?: ArgOrigin): void {
    if (text.length === 0) return;
    const from = this.size;
    const ownSite = site ?? { start: origin, end: origin + text.length };
    const prev = this.segments.at(-1);
    if (
      prev &&
      !via &&
      !prev.via &&
      !site &&
      origin >= 0 &&
      prev.origin >= 0 &&
      prev.origin + (prev.to - prev.from) === origin
    ) {
      // Every segment has the same fields in the same order (see packageFact in facts.ts).
      this.segments[this.segments.length - 1] = {
        from: prev.from,
        to: from + text.length,
        origin: prev.origin,
        site: { start: prev.site.start, end: ownSite.end },
        via: undefined,
      };
    } else {
      this.segments.push({ from, to: from + text.length, origin, site: ownSite, via });
    }
    this.parts.push(text);
    this.size += text.length;
  }

  pushMapped(mapped: Mapped): void {
    if (mapped.plainOffset >= 0) {
      this.pushSegment(mapped.text, mapped.plainOffset);
      return;
    }
    for (const seg of mapped.pieces()) {
      const text = mapped.text.slice(seg.from, seg.to);
      const plain = seg.origin >= 0 && !seg.via;
      this.pushSegment(text, seg.origin, plain ? undefined : seg.site, seg.via);
    }
  }

  build(): Mapped {
    return new SegmentMapped(this.parts.join(''), [...this.segments]);
  }
}

function plainSegment(text: string, origin: number): Segment {
  return { from: 0, to: text.length, origin, site: { start: origin, end: origin + text.length }, via: undefined };
}
