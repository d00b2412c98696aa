import { archList, archMiss, withoutEntries, type ArchEntry, type ArchMiss } from '../../src/analysis/arch-lists.js';
import { claimCuda, type CudaClaim } from '../../src/analysis/claims.js';
import type { Unit } from '../../src/analysis/units.js';
import type { EnvFact, ParsedFile } from '../../src/parsers/facts.js';
import type { Fix } from '../../src/finding.js';
import { cite, isUnverified } from '../../src/knowledge/index.js';
import { defineRule, type Reporter } from '../../src/rule.js';
import { envOfStage } from '../../src/analysis/env-by-stage.js';

/** The claims that say which nvcc compiles a stage: its image, its CUDA_VERSION, a conda or apt toolkit. */
const COMPILER_CLAIMS: ReadonlySet<string> = new Set(['image', 'env', 'conda', 'apt']);

/** The rule's messages, by id: `MessageId` types the helpers' reporter, so a misspelt id does not compile. */
const MESSAGES = {
  dropped:
    '{{name}} names compute capability {{cc}}{{written}}, which CUDA {{cuda}} cannot compile for: the last CUDA for it is {{last}}',
  unknown:
    '{{name}} names compute capability {{cc}}{{written}}, which the knowledge base does not list: whether CUDA {{cuda}} compiles for it is not checked',
  tooNew:
    '{{name}} names compute capability {{cc}}{{written}}, which CUDA {{cuda}} cannot compile for: it needs CUDA >= {{bound}}',
};
type MessageId = keyof typeof MESSAGES;

export default defineRule({
  id: 'arch-unsupported',
  description:
    "Architecture lists (TORCH_CUDA_ARCH_LIST, CMAKE_CUDA_ARCHITECTURES) name only GPUs the stage's CUDA can compile for",
  defaultSeverity: 'error',
  fix: 'safe',
  messages: MESSAGES,
  helps: {
    dropped:
      'nvcc stops with "Unsupported gpu architecture \'compute_{{sm}}\'", so the build fails (a PyTorch extension, a CMake project): {{removed}} Drop it from the list (the fix does), or build with CUDA {{last}} for the GPUs that need it. Source: {{source}}',
    unknown:
      "The knowledge base lists the compute capabilities of NVIDIA's GPU table with the CUDA that first and last compiles each; {{cc}} is not among them (a typo, or a GPU newer than the data), so nothing says whether nvcc {{cuda}} accepts it. Check it against `nvcc --list-gpu-arch` in the image.",
    tooNew:
      'nvcc stops with "Unsupported gpu architecture \'compute_{{sm}}\'": CUDA {{cuda}} does not know this architecture. Use an image with CUDA >= {{bound}}, or drop it from the list (the fix does). Source: {{source}}',
  },
  check({ units, kb, report }) {
    for (const unit of units) {
      const compiler = compilerClaim(unit);
      if (!compiler) continue;
      const cuda = claimCuda(compiler);
      for (const env of envOfStage(unit.root, unit.stage!)) {
        const list = archList(env);
        if (!list) continue;
        const found = list.entries.flatMap((entry) => {
          const miss = archMiss(entry.cc, cuda, kb);
          return miss ? [{ entry, miss }] : [];
        });
        const editable = unit.root.source.text.slice(env.valueSpan.start, env.valueSpan.end) === env.value;
        const spanOf = (entry: ArchEntry) => {
          const at = env.valueSpan.start + entry.offset;
          return editable ? { start: at, end: at + entry.text.length } : env.span;
        };
        // What is not known is said at its entry, as a notice, and never dropped by the fix.
        for (const { entry, miss } of found)
          if (miss.reason === 'unknown')
            report({
              messageId: 'unknown',
              data: { name: env.key, cc: entry.cc, written: written(entry), cuda },
              file: unit.root,
              span: spanOf(entry),
              severity: 'notice',
            });
        const misses = found.flatMap(({ entry, miss }) => (miss.reason === 'unknown' ? [] : [{ entry, miss }]));
        if (misses.length === 0) continue;
        const rest = editable
          ? withoutEntries(
              env.value,
              misses.map(({ entry }) => entry),
              list.entries,
            )
          : undefined;
        const fix: Fix | undefined =
          rest === undefined
            ? undefined
            : {
                title: `Drop ${[...new Set(misses.map(({ entry }) => entry.text))].join(', ')} from ${env.key} (CUDA ${cuda} cannot compile ${misses.length === 1 ? 'it' : 'them'})`,
                safety: 'safe',
                edits: [{ path: unit.root.path, range: [env.valueSpan.start, env.valueSpan.end], text: rest }],
              };
        for (const { entry, miss } of misses)
          reportMiss({ file: unit.root, env, entry, span: spanOf(entry) }, miss, compiler, fix, report);
      }
    }
  },
});

/**
 * The claim that says which CUDA compiles a Dockerfile stage: its image (or CUDA_VERSION), else a conda or apt
 * toolkit, when it names a CUDA release. Kubernetes containers compile nothing.
 */
function compilerClaim(unit: Unit): CudaClaim | undefined {
  const target = unit.target;
  if (unit.container || unit.stage === undefined || unit.root.kind !== 'dockerfile' || !target) return undefined;
  return COMPILER_CLAIMS.has(target.kind) && target.precision === 'minor' ? target : undefined;
}

/** One entry of a list, where it is written. */
interface EntrySite {
  readonly file: ParsedFile;
  readonly env: EnvFact;
  readonly entry: ArchEntry;
  readonly span: { readonly start: number; readonly end: number };
}

/** An entry as written, where it is not the bare capability (`70-real` for 7.0). */
function written(entry: ArchEntry): string {
  return entry.text === entry.cc ? '' : ` (${entry.text})`;
}

function reportMiss(
  { file, env, entry, span }: EntrySite,
  miss: Exclude<ArchMiss, { reason: 'unknown' }>,
  compiler: CudaClaim,
  fix: Fix | undefined,
  report: Reporter<MessageId>,
): void {
  const cuda = claimCuda(compiler);
  const dropped = miss.reason === 'dropped' ? miss : undefined;
  report({
    messageId: dropped ? 'dropped' : 'tooNew',
    data: {
      name: env.key,
      cc: entry.cc,
      written: written(entry),
      cuda,
      bound: miss.bound,
      // A capability the table does not list, below the lowest the major compiles: gone by this major or earlier.
      last: dropped && !dropped.exact ? `${miss.bound}.x or earlier` : `${miss.bound}.x`,
      removed:
        dropped && !dropped.exact
          ? `CUDA ${cuda.split('.')[0]} compiles nothing below compute capability ${dropped.lowest}.`
          : `CUDA ${Number(miss.bound) + 1}.0 removed offline compilation and library support for this architecture.`,
      sm: entry.cc.replace('.', ''),
      source: cite(miss.record),
    },
    file,
    span,
    unverified: isUnverified(miss.record),
    related: [{ file: compiler.file, span: compiler.span, message: `CUDA ${cuda} is set here` }],
    ...(fix ? { fix } : {}),
  });
}
