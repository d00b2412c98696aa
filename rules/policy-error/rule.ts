import { cite } from '../../src/knowledge/index.js';
import { defineRule } from '../../src/rule.js';

export default defineRule({
  id: 'policy-error',
  description: 'The baseline (CUDA policy) is invalid or names things that do not exist',
  defaultSeverity: 'error',
  fix: 'none',
  about: 'written',
  messages: {
    invalid: '{{message}}',
    noSuchCuda: 'cuda.allowed lists CUDA {{cuda}}, which NVIDIA never released',
    unknownGpu:
      '{{where}} lists "{{gpu}}", which the knowledge base does not know: the GPU checks leave it out; give its compute capability (such as "8.9") or a known model name',
  },
  helps: {
    invalid:
      'The baseline was not applied; only the built-in consistency rules ran. See baseline.yaml in cuda-gatekeeper for the documented format.',
    noSuchCuda: '{{note}} Source: {{source}}',
    unknownGpu:
      'The rest of the baseline applies. Names are read as nvidia-smi and NVIDIA\'s compute capability table print them ("H100", "RTX 4090", "A10G"); a compute capability says what the checks need of a GPU the knowledge base does not list yet.',
  },
  check({ policy, policyProblems, kb, report }) {
    for (const problem of policyProblems ?? []) {
      report({
        messageId: 'invalid',
        data: { message: problem.message },
        file: problem.file,
        span: problem.span,
        // A locked key, not an invalid baseline: the baseline was applied, without this value. Its own help (a
        // message id of its own would change the findings' messageId).
        help: 'The organisation baseline locks this key; the organisation value stays in effect. Change it in the organisation config repository instead.',
      });
    }
    if (!policy) return;
    const file = { path: policy.source.path, source: policy.source };
    for (const problem of policy.problems) {
      report({
        messageId: 'invalid',
        data: { message: problem.message },
        file,
        span: problem.span,
      });
    }
    if (policy.problems.length > 0) return;
    (policy.baseline.cuda.allowed ?? []).forEach((cuda, index) => {
      const missing = kb.noReleaseRecord(cuda);
      if (kb.cudaExists(cuda) === 'no' && missing)
        report({
          messageId: 'noSuchCuda',
          data: { cuda, note: missing.note ?? '', source: cite(missing) },
          file,
          span: policy.locate(['cuda', 'allowed', index]),
        });
    });
    // An unknown GPU does not make the baseline invalid: it is said, at warning, and left out of the GPU checks.
    const unknownGpu = (gpu: string, where: string, path: readonly (string | number)[]): void => {
      if (!kb.gpu(gpu))
        report({ messageId: 'unknownGpu', data: { gpu, where }, file, span: policy.locate(path), severity: 'warning' });
    };
    policy.baseline.gpus.forEach((gpu, index) => unknownGpu(gpu, 'gpus', ['gpus', index]));
    policy.baseline.pools.forEach((pool, at) =>
      pool.gpus.forEach((gpu, index) => unknownGpu(gpu, `pool ${pool.name}`, ['fleet', 'pools', at, 'gpus', index])),
    );
  },
});
