import { describe, expect, it } from 'vitest';
import { linkTarget } from '../../src/github/links.js';

describe('linkTarget', () => {
  it.each([
    ['requirements.txt', 'constraints/cu118.txt', 'constraints/cu118.txt'],
    ['docker/requirements.txt', '../constraints/cu118.txt', 'constraints/cu118.txt'],
    ['a/b/req.txt', './c.txt', 'a/b/c.txt'],
    ['a/req.txt', '../../etc/passwd', undefined],
    ['req.txt', '/etc/passwd', undefined],
    ['req.txt', '..', undefined],
    ['a/req.txt', '..', undefined],
  ])('%s → %s is %s', (path, text, expected) => {
    expect(linkTarget(path, text)).toBe(expected);
  });
});
