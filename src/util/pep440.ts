/** PEP 440 version matching (@renovatebot/pep440), remembered. */
import { satisfies } from '@renovatebot/pep440';
import { Answers } from './memo.js';

const answers = new Answers<boolean | undefined>(8192);

/**
 * Whether `version` meets `specifier` (PEP 440; `prereleases`: a pre-release may match), or undefined when the library
 * cannot read one of them (each caller says what that means). The library parses both on every call, and a check asks
 * the same few pairs (a knowledge row's range, the versions files pin) thousands of times: each answer is kept by the
 * pair (see Answers).
 */
export function satisfiesPep440(version: string, specifier: string, prereleases = false): boolean | undefined {
  return answers.of(`${prereleases ? '+' : '-'}${specifier}\u0000${version}`, () => {
    try {
      return satisfies(version, specifier, prereleases ? { prereleases: true } : undefined);
    } catch {
      return undefined;
    }
  });
}
