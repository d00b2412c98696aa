/**
 * A rule's helpers report through `Reporter<MessageId>` (src/rule.ts): an id the rule does not declare is a type
 * error, checked by `npm run typecheck` (CI's typecheck step) through the `@ts-expect-error` below, which fails to
 * compile if the misspelt id were accepted.
 */
import { describe, expect, it } from 'vitest';
import type { Draft, Reporter } from '../../src/rule.js';
import { SourceText } from '../../src/parsers/source.js';

describe('typed message ids', () => {
  it("a reporter of a rule's ids takes them, and a misspelt id does not compile", () => {
    const source = new SourceText('Dockerfile', 'FROM scratch\n');
    const seen: string[] = [];
    const report: Reporter<'noTag' | 'latest'> = (draft: Draft<'noTag' | 'latest'>) => void seen.push(draft.messageId);
    report({ messageId: 'latest', file: { path: 'Dockerfile', source }, span: { start: 0, end: 4 } });
    // @ts-expect-error -- 'lastest' is not an id of this reporter
    report({ messageId: 'lastest', file: { path: 'Dockerfile', source }, span: { start: 0, end: 4 } });
    expect(seen).toEqual(['latest', 'lastest']);
  });
});
