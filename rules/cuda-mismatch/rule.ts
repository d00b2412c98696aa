import { claimCuda, compareClaims, type CudaClaim } from '../../src/analysis/claims.js';
import type { Unit } from '../../src/analysis/units.js';
import type { Fix } from '../../src/finding.js';
import { cite, isUnverified } from '../../src/knowledge/index.js';
import { defineRule } from '../../src/rule.js';

const MVC = 'https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html';

export default defineRule({
  id: 'cuda-mismatch',
  description: 'Every CUDA build in an image, environment or requirements set targets the same CUDA version',
  defaultSeverity: 'error',
  fix: 'safe',
  messages: {
    major: '{{subject}} is built for CUDA {{found}}, but {{target}} sets CUDA {{expected}}',
    minor: '{{subject}} is built for CUDA {{found}}, but {{target}} sets CUDA {{expected}} (same major, different minor)',
    implied: '{{subject}} installs the CUDA {{found}} build {{how}}, but {{target}} sets CUDA {{expected}}',
    index: '{{subject}} serves CUDA {{found}} builds, but {{target}} sets CUDA {{expected}}',
  },
  check({ units, report }) {
    for (const unit of units) {
      const target = unit.target;
      if (!target) continue;
      for (const claim of unit.claims) {
        if (claim === target || (claim.kind === 'implied' && claim.index)) continue;
        const relation = compareClaims(claim, target);
        if (relation === 'same') continue;
        reportMismatch(unit, claim, target, relation, report);
      }
    }
  },
});

type Report = Parameters<Parameters<typeof defineRule>[0]['check']>[0]['report'];

function reportMismatch(unit: Unit, claim: CudaClaim, target: CudaClaim, relation: 'minor' | 'major', report: Report): void {
  const expected = claimCuda(target);
  const found = claimCuda(claim);
  // A build installed in another stage and copied into this one (COPY --from=build /opt/conda …) is right for its
  // own stage's image: rewriting it would move the mismatch there. A person picks which side changes.
  const copied = unit.stage !== undefined && claim.file === unit.root && claim.context !== undefined && claim.file.contexts[claim.context]?.stage !== unit.stage;
  const edits = target.precision === 'minor' && !copied ? claim.rewrite?.(expected) : undefined;
  const fix: Fix | undefined = edits ? { title: `Build for CUDA ${expected}`, safety: 'safe', edits } : undefined;
  const why =
    relation === 'major'
      ? `Libraries built for different CUDA majors need different runtime libraries (libcudart.so.${found.split('.')[0]} vs .so.${expected.split('.')[0]}) and cannot share one process reliably.`
      : `Within one CUDA major, builds for different minors run only under minor-version compatibility, which has a limited feature set (no PTX JIT of newer PTX); keep them in step. Source: ${MVC}`;
  const implied = claim.kind === 'implied';
  const how = implied ? (claim.package && !claim.index ? 'that plain PyPI gives on Linux x86_64' : 'from its index') : '';
  const evidence = claim.record ? ` Fact: ${cite(claim.record)}.` : '';
  report({
    messageId: implied ? 'implied' : claim.kind === 'index' || claim.kind === 'conda-channel' ? 'index' : relation,
    data: { subject: claim.subject, found, target: target.subject, expected, how },
    file: claim.file,
    span: claim.span,
    severity: relation === 'major' ? 'error' : 'warning',
    unverified: isUnverified(claim.record) || isUnverified(target.record),
    help: `${why}${evidence}${implied ? ' Pin the build you want with a local version label (e.g. ==X.Y.Z+cu121) and an index that serves it.' : ''}${copied ? ` This build is installed in another stage and copied into ${unit.label}: change the build or this stage's image.` : ''}`,
    related: [{ file: target.file, span: target.span, message: `CUDA ${expected} is set here (${unit.label})` }],
    ...(fix ? { fix } : {}),
  });
}
