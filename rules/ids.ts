/**
 * Every rule's id and default severity, as data: what the baseline layer, the self-service page and the App need to
 * know of the rules (a `rules:` key's validity, a lock's floor) without loading any rule's code. A leaf: it imports
 * only a type. test/rules/meta.test.ts keeps it in step with the registry (rules/index.ts) and the rule folders.
 */
import type { Severity } from '../src/finding.js';

export const RULE_SEVERITIES = {
  'cuda-mismatch': 'error',
  'driver-floor': 'error',
  'wheel-missing': 'error',
  'companion-mismatch': 'error',
  'gpu-arch': 'error',
  'arch-unsupported': 'error',
  'image-missing': 'error',
  'image-unknown': 'warning',
  'missing-include': 'error',
  'cpu-wheel': 'error',
  'index-url': 'error',
  'exact-pin': 'error',
  'image-pin': 'error',
  'cuda-not-allowed': 'error',
  'package-not-allowed': 'error',
  prerelease: 'error',
  'parse-error': 'error',
  'policy-error': 'error',
  'invalid-suppression': 'error',
} as const satisfies Readonly<Record<string, Severity>>;

export type RuleId = keyof typeof RULE_SEVERITIES;

export const RULE_IDS: ReadonlySet<string> = new Set(Object.keys(RULE_SEVERITIES));

/** Each rule's own severity, for the locks of `rules` (a locked rule may not go below it). */
export const RULE_DEFAULTS: ReadonlyMap<string, Severity> = new Map(Object.entries(RULE_SEVERITIES));
