import { claimCuda } from '../../src/analysis/claims.js';
import { cite, isUnverified } from '../../src/knowledge/index.js';
import { defineRule } from '../../src/rule.js';
import { cudaMajor } from '../../src/versions.js';

export default defineRule({
  id: 'cuda-not-allowed',
  description: 'Images and builds target a CUDA version the baseline allows',
  defaultSeverity: 'error',
  fix: 'unsafe',
  messages: {
    notAllowed: '{{subject}} targets CUDA {{cuda}}, which the baseline does not allow (allowed: {{allowed}})',
  },
  check({ units, baseline, report }) {
    const allowed = baseline.cuda.allowed;
    if (!allowed || allowed.length === 0) return;
    for (const unit of units) {
      for (const claim of unit.claims) {
        if (claim.kind === 'implied' && claim.index) continue;
        const cuda = claimCuda(claim);
        const ok = claim.precision === 'major' ? allowed.some((version) => cudaMajor(version) === cudaMajor(cuda)) : allowed.includes(cuda);
        if (ok) continue;
        const sameMajor = allowed.filter((version) => cudaMajor(version) === cudaMajor(cuda));
        const proposal = sameMajor.at(-1) ?? allowed.at(-1)!;
        const edit = claim.precision === 'minor' ? claim.rewrite?.(proposal) : undefined;
        report({
          messageId: 'notAllowed',
          data: { subject: claim.subject, cuda, allowed: allowed.join(', ') },
          file: claim.file,
          span: claim.span,
          unverified: isUnverified(claim.record),
          help: `The organisation's baseline pins the CUDA versions its fleet supports (cuda.allowed). Move to an allowed version, e.g. ${proposal}, or change the baseline.${claim.record ? ` Fact: ${cite(claim.record)}.` : ''}`,
          ...(edit ? { suggestions: [{ title: `Move to CUDA ${proposal}`, safety: 'unsafe' as const, edits: [edit] }] } : {}),
        });
      }
    }
  },
});
