/** The CLI helper never hands a test a process that did not finish as if it were a result. */
import { describe, expect, it } from 'vitest';
import { binProcess } from './cli.js';

describe('binProcess', () => {
  it('gives the exit status and output of a process that ran', () => {
    const result = binProcess(['rules']);
    expect(result.code).toBe(0);
    expect(result.out).toContain('cuda-mismatch');
  });

  it('throws for a process killed at its timeout (Node cannot start in a millisecond)', () => {
    expect(() => binProcess(['rules'], { timeout: 1 })).toThrow(/did not finish: .*ETIMEDOUT/);
  });
});
