import { claimCuda, type CudaClaim } from '../../src/analysis/claims.js';
import type { Fix } from '../../src/finding.js';
import { cite, isUnverified } from '../../src/knowledge/index.js';
import { defineRule } from '../../src/rule.js';
import { cudaMajor } from '../../src/knowledge/versions.js';

/** Both messages' help: where the allow-list lives and how to move. */
const HELP =
  "The baseline's cuda.allowed lists the CUDA versions the organisation supports. Move to an allowed version (e.g. {{proposal}}; `cuda-gatekeeper plan --cuda {{proposal}}` lists the edits) or change the baseline.{{evidence}}";

export default defineRule({
  id: 'cuda-not-allowed',
  description: 'Images and builds target a CUDA version the baseline allows',
  defaultSeverity: 'error',
  fix: 'unsafe',
  about: 'written',
  messages: {
    notAllowed: '{{subject}} targets CUDA {{cuda}}, which the baseline does not allow (allowed: {{allowed}})',
    notAllowedMany:
      '{{subject}} and {{more}} more declaration{{plural}} in this file target CUDA {{cuda}}, which the baseline does not allow (allowed: {{allowed}})',
  },
  helps: {
    notAllowed: HELP,
    notAllowedMany: HELP,
  },

  check({ units, baseline, report }) {
    const allowed = baseline.cuda.allowed;
    if (!allowed || allowed.length === 0) return;
    // One finding per file and CUDA version, at its first declaration; the others are related locations.
    const groups = new Map<string, CudaClaim[]>();
    const preferred = new Map<string, string>();
    const seen = new Set<CudaClaim>();
    for (const unit of units) {
      const target = unit.target && unit.target.precision === 'minor' ? claimCuda(unit.target) : undefined;
      for (const claim of unit.claims) {
        // pixi's system requirement is the driver's floor, not a build.
        if (seen.has(claim) || (claim.kind === 'implied' && claim.index) || claim.kind === 'system') continue;
        seen.add(claim);
        const cuda = claimCuda(claim);
        const ok =
          claim.precision === 'major'
            ? allowed.some((version) => cudaMajor(version) === cudaMajor(cuda))
            : allowed.includes(cuda);
        if (ok) continue;
        const key = `${claim.file.path}\0${cuda}`;
        groups.set(key, [...(groups.get(key) ?? []), claim]);
        if (target && allowed.includes(target) && !preferred.has(key)) preferred.set(key, target);
      }
    }
    for (const [key, claims] of groups) {
      const sorted = [...new Map(claims.map((claim) => [`${claim.span.start}:${claim.kind}`, claim])).values()].sort(
        (a, b) => a.span.start - b.span.start,
      );
      const first = sorted[0]!;
      const cuda = claimCuda(first);
      const sameMajor = allowed.filter((version) => cudaMajor(version) === cudaMajor(cuda));
      // Prefer the CUDA the rest of the unit already targets, then the newest allowed one of the same major.
      const proposal = preferred.get(key) ?? sameMajor.at(-1) ?? allowed.at(-1)!;
      const edits = first.precision === 'minor' ? sorted.flatMap((claim) => claim.rewrite?.(proposal) ?? []) : [];
      const suggestion: Fix | undefined =
        edits.length > 0
          ? {
              title: `Move to CUDA ${proposal} (${edits.length} edit${edits.length === 1 ? '' : 's'}; check the builds exist)`,
              safety: 'unsafe',
              edits,
            }
          : undefined;
      const more = sorted.length - 1;
      report({
        messageId: more > 0 ? 'notAllowedMany' : 'notAllowed',
        data: {
          subject: first.subject,
          cuda,
          allowed: allowed.join(', '),
          more,
          plural: more === 1 ? '' : 's',
          proposal,
          evidence: first.record ? ` Fact: ${cite(first.record)}.` : '',
        },
        file: first.file,
        span: first.span,
        unverified: sorted.every((claim) => isUnverified(claim.record)),
        related: sorted.slice(1).map((claim) => ({
          file: claim.file,
          span: claim.span,
          message: `${claim.subject} also targets CUDA ${cuda}`,
        })),
        ...(suggestion ? { suggestions: [suggestion] } : {}),
      });
    }
  },
});
