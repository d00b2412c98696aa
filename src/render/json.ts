import type { Finding, Fix, Report } from '../finding.js';
import { FixPlaces } from './fix-places.js';

/**
 * Findings as data (schema version 1): stable keys, positions 1-based, edit ranges as offsets.
 *
 * A fix or suggestion that several findings share (a torch family moved as one, offered on each of its pins; a
 * unit's safe fix, on each of its claims) is written in full where it first appears; each later finding names it
 * with `sameAs`, a JSON pointer (RFC 6901) to that place, beside its title and safety, instead of repeating its
 * edits. Otherwise 2,400 pins of one family printed 2,400 copies of a 600-edit move (287 MB).
 */
export function renderJson(report: Report, meta: Readonly<Record<string, unknown>> = {}): string {
  return `${JSON.stringify({ version: 1, ...meta, filesChecked: report.filesChecked, counts: report.counts, findings: fixesOnce(report.findings) }, null, 2)}\n`;
}

/** A fix written out before: where, and what a reader needs without following the pointer. */
interface SameAs {
  readonly title: string;
  readonly safety: Fix['safety'];
  readonly verification?: string;
  readonly sameAs: string;
}

/** The findings with every fix or suggestion after its first appearance replaced by a SameAs (see FixPlaces). */
export function fixesOnce(findings: readonly Finding[]): readonly unknown[] {
  const places = new FixPlaces();
  const once = (fix: Fix, pointer: string): Fix | SameAs => {
    const at = places.before(fix);
    if (at === undefined) {
      places.written(fix, pointer);
      return fix;
    }
    return {
      title: fix.title,
      safety: fix.safety,
      ...(fix.verification !== undefined ? { verification: fix.verification } : {}),
      sameAs: at,
    };
  };
  return findings.map((finding, i) => {
    if (!finding.fix && !finding.suggestions) return finding;
    const fix = finding.fix && once(finding.fix, `/findings/${i}/fix`);
    const suggestions = finding.suggestions?.map((option, k) => once(option, `/findings/${i}/suggestions/${k}`));
    const unchanged =
      fix === finding.fix && (suggestions ?? []).every((option, k) => option === finding.suggestions![k]);
    return unchanged ? finding : { ...finding, ...(fix ? { fix } : {}), ...(suggestions ? { suggestions } : {}) };
  });
}
