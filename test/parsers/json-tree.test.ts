/**
 * The JSON reader (src/parsers/json-tree.ts, for Pipfile.lock) against the reference, `JSON.parse`: the same texts
 * are accepted and refused, the values read are the same, and every string's mapped text is where the file has it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ParseProblem } from '../../src/parsers/facts.js';
import { readJson, readJsonRoot } from '../../src/parsers/json-tree.js';
import type { TomlValue } from '../../src/parsers/toml-tree.js';
import { assertProperty } from '../support/property.js';
import { RUNS } from '../support/fuzz-inputs.js';

/** The tree as the plain value JSON.parse gives. */
function plain(text: string, node: TomlValue): unknown {
  switch (node.kind) {
    case 'table':
      return Object.fromEntries([...node.entries].map(([key, value]) => [key, plain(text, value)]));
    case 'array':
      return node.items.map((item) => plain(text, item));
    case 'string':
      return node.value;
    default:
      return JSON.parse(text.slice(node.span.start, node.span.end));
  }
}

/** What JSON.parse makes of a text, or 'refused'. */
function reference(text: string): unknown {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return 'refused';
  }
}

function ours(text: string): unknown {
  try {
    return { value: plain(text, readJson(text)) };
  } catch (error) {
    expect((error as Error).constructor.name).toBe('JsonError');
    return 'refused';
  }
}

/** Every string's characters: its span is the quoted text, and plain strings map to the file where they are. */
function stringsAreWhereTheFileHasThem(text: string, node: TomlValue): void {
  if (node.kind === 'table') {
    for (const [key, value] of node.entries) {
      const span = node.keySpans.get(key)!;
      const written = text.slice(span.start, span.end);
      expect(written === key || JSON.parse(written) === key).toBe(true);
      stringsAreWhereTheFileHasThem(text, value);
    }
  } else if (node.kind === 'array') for (const item of node.items) stringsAreWhereTheFileHasThem(text, item);
  else if (node.kind === 'string') {
    expect(JSON.parse(text.slice(node.span.start, node.span.end))).toBe(node.value);
    const offset = node.mapped.plainOffset;
    if (offset >= 0) expect(text.slice(offset, offset + node.value.length)).toBe(node.value);
  }
}

const layout = fc.constantFrom<[undefined | number | string]>([undefined], [2], [4], ['\t']);

describe('the JSON reader', () => {
  it('reads what JSON.parse reads, in every layout, with each string where the file has it', () => {
    assertProperty(
      fc.property(fc.jsonValue(), layout, (value, [indent]) => {
        const text = JSON.stringify(value, null, indent);
        expect(ours(text)).toEqual(reference(text));
        stringsAreWhereTheFileHasThem(text, readJson(text));
      }),
      { numRuns: RUNS },
    );
  });

  it('refuses what JSON.parse refuses, and accepts what it accepts, in mutated documents', () => {
    const edit = fc.record({
      at: fc.nat(),
      drop: fc.nat({ max: 3 }),
      insert: fc.constantFrom(
        '',
        ',',
        ']',
        '}',
        '{',
        '[',
        '"',
        ':',
        '\\',
        ' ',
        '\n',
        '1',
        '-',
        '.',
        'e',
        'tru',
        'null',
        '\u0001',
        '\\u12',
      ),
    });
    assertProperty(
      fc.property(fc.jsonValue(), layout, fc.array(edit, { maxLength: 3 }), (value, [indent], edits) => {
        let text = JSON.stringify(value, null, indent) ?? '';
        for (const { at, drop, insert } of edits) {
          const i = text.length === 0 ? 0 : at % (text.length + 1);
          text = text.slice(0, i) + insert + text.slice(i + drop);
        }
        expect(ours(text), JSON.stringify(text)).toEqual(reference(text));
      }),
      { numRuns: RUNS },
    );
  });

  it('reads nesting far deeper than the call stack, and a repeated key keeps its last value', () => {
    const depth = 200_000;
    const text = `${'['.repeat(depth)}1${']'.repeat(depth)}`;
    let node = readJson(text);
    for (let level = 0; level < depth; level++) node = (node as Extract<TomlValue, { kind: 'array' }>).items[0]!;
    expect(node).toEqual({ kind: 'other', span: { start: depth, end: depth + 1 } });
    expect(ours('{"a": 1, "b": 2, "a": 3}')).toEqual(reference('{"a": 1, "b": 2, "a": 3}'));
  });

  it('says where a document stops being JSON, once', () => {
    const problemsOf = (text: string) => {
      const problems: ParseProblem[] = [];
      expect(readJsonRoot(text, problems, 'Pipfile.lock')).toBeUndefined();
      return problems;
    };
    expect(problemsOf('{"default": {"torch": {"version": "==2.3.1",}}}')).toEqual([
      { span: { start: 44, end: 45 }, message: 'JSON: expected a key in double quotes but found "}"' },
    ]);
    expect(problemsOf('{"a": "b"')).toEqual([
      { span: { start: 9, end: 9 }, message: 'JSON: expected "," or "}" at the end of the file' },
    ]);
    expect(problemsOf('{"a": "line\nbreak"}')).toEqual([
      {
        span: { start: 11, end: 12 },
        message: 'JSON: a control character in a string (write it as an escape)',
      },
    ]);
    expect(problemsOf('[1, 2]')).toEqual([
      { span: { start: 0, end: 6 }, message: 'Pipfile.lock must be a JSON object' },
    ]);
    expect(problemsOf('')).toEqual([
      { span: { start: 0, end: 0 }, message: 'JSON: expected a value at the end of the file' },
    ]);
  });
});
