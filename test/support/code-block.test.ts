import { describe, expect, it } from 'vitest';
import { codeBlock } from './code-block.js';

describe('codeBlock', () => {
  it('drops the first line break and the common indentation, and ends with one line break', () => {
    expect(codeBlock`
      FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
        # indented further
      RUN pip install torch==${'2.6.0'}
    `).toBe('FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n  # indented further\nRUN pip install torch==2.6.0\n');
    expect(codeBlock`
      a

      b
    `).toBe('a\n\nb\n');
  });
});
