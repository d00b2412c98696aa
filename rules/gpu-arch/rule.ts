import { claimCuda } from '../../src/analysis/claims.js';
import type { TorchBuild } from '../../src/analysis/torch-build.js';
import type { EnvFact, ParsedFile } from '../../src/parsers/facts.js';
import type { Fix } from '../../src/finding.js';
import { cite, isUnverified, runsOn, type GpuInfo, type KnowledgeBase } from '../../src/knowledge/index.js';
import type { Pool } from '../../src/baseline/schema.js';
import { defineRule, type Draft, type Reporter, type UnitVerdict } from '../../src/rule.js';
import { selectPools } from '../../src/analysis/placement.js';
import type { CudaClaim } from '../../src/analysis/claims.js';
import type { Unit } from '../../src/analysis/units.js';
import { compareDotted, cudaMajor, tagFromCuda } from '../../src/knowledge/versions.js';

interface FleetGpu {
  readonly label: string;
  readonly cc: string;
  readonly minCuda: string;
  readonly lastCudaMajor?: number;
  readonly record: Parameters<typeof cite>[0];
}

export default defineRule({
  id: 'gpu-arch',
  description: "The fleet's GPUs are supported by the CUDA version and by the compiled architectures of the torch build",
  defaultSeverity: 'error',
  fix: 'safe',
  messages: {
    tooOld: '{{subject}} uses CUDA {{cuda}}, but {{gpu}} (compute capability {{cc}}) needs CUDA >= {{minCuda}}',
    dropped: '{{subject}} uses CUDA {{cuda}}, which no longer supports {{gpu}} (compute capability {{cc}}); the last CUDA for it is {{last}}.x',
    noKernels: '{{subject}} has no kernels for {{gpu}} (sm_{{sm}}): it is compiled for {{archs}}',
    archList: 'TORCH_CUDA_ARCH_LIST "{{value}}" does not cover {{gpu}} (compute capability {{cc}})',
    gpuDriver: "{{gpu}} needs NVIDIA driver >= {{needed}}, but the baseline's fleet driver is {{fleet}}",
  },
  check({ units, files, kb, baseline, policy, report: reportAll, verdict }) {
    // With pools, every pool's GPUs are checked and a finding is an error only when it holds on every pool.
    const pools = baseline.pools;
    const held = pools.length > 0 ? poolReporter(pools, kb, reportAll) : undefined;
    const report: Reporter = held ?? reportAll;
    // One GPU per compute capability across pools ("V100" in one pool and "Tesla V100" in another are one finding).
    const names =
      pools.length > 0
        ? [
            ...new Map(
              pools
                .flatMap((pool) => pool.gpus)
                .reverse()
                .map((name) => [kb.gpu(name)?.cc ?? name, name] as const),
            ).values(),
          ].reverse()
        : baseline.gpus;
    const fleet = names
      .map((name) => ({ name, info: kb.gpu(name) }))
      .filter((gpu): gpu is { name: string; info: GpuInfo } => gpu.info !== undefined)
      .map<FleetGpu>(({ name, info }) => ({
        label: name,
        cc: info.cc,
        minCuda: info.minCuda,
        ...(info.lastCudaMajor ? { lastCudaMajor: info.lastCudaMajor } : {}),
        record: info.record,
      }));
    if (fleet.length === 0) return;
    const fleetDriver = pools.length > 0 ? undefined : baseline.driver.minimum;
    if (fleetDriver && policy) {
      baseline.gpus.forEach((name, index) => {
        const info = kb.gpu(name);
        if (info?.minDriver && compareDotted(fleetDriver, info.minDriver) < 0) {
          report({
            messageId: 'gpuDriver',
            data: { gpu: name, needed: info.minDriver, fleet: fleetDriver },
            file: { path: policy.source.path, source: policy.source },
            span: policy.locate(['gpus', index]),
            unverified: isUnverified(info.record),
            help: `Older drivers do not recognise this GPU at all. Source: ${cite(info.record)}`,
          });
        }
      });
    }
    for (const unit of units) {
      if (pools.length > 0) poolVerdicts(unit, pools, kb, verdict);
      if (unit.container && pools.length > 0) {
        checkContainer(unit, pools, kb, reportAll);
        continue;
      }
      for (const claim of unit.claims) {
        if (claim.kind !== 'image' && claim.kind !== 'conda' && claim.kind !== 'apt') continue;
        const cuda = claimCuda(claim);
        for (const gpu of fleet) {
          const data = { subject: claim.subject, cuda, gpu: gpu.label, cc: gpu.cc, minCuda: gpu.minCuda };
          if (claim.precision === 'minor' && compareDotted(cuda, gpu.minCuda) < 0) {
            report({
              messageId: 'tooOld',
              data,
              file: claim.file,
              span: claim.span,
              unverified: isUnverified(gpu.record),
              help: `CUDA ${cuda} cannot generate code for compute capability ${gpu.cc}. Source: ${cite(gpu.record)}`,
            });
          } else if (gpu.lastCudaMajor !== undefined && cudaMajor(cuda) > gpu.lastCudaMajor) {
            report({
              messageId: 'dropped',
              data: { ...data, last: gpu.lastCudaMajor },
              file: claim.file,
              span: claim.span,
              unverified: isUnverified(gpu.record),
              help: `CUDA ${gpu.lastCudaMajor + 1}.0 removed offline compilation and library support for this architecture. Source: ${cite(gpu.record)}`,
            });
          }
        }
      }
      for (const { file, pkg, build } of unit.packages) {
        if (!build || pkg.name !== 'torch' || build.cpu || !build.cuda || build.missing) continue;
        for (const gpu of fleet)
          checkTorchBuild(file, pkg.span, `torch ${pkg.exact}${pkg.localLabel ? '' : ` (${tagFromCuda(build.cuda)} build)`}`, build, gpu, kb, report);
      }
    }
    for (const file of files) for (const env of file.env) if (env.key === 'TORCH_CUDA_ARCH_LIST') checkArchList(file, env, fleet, report);
    held?.flush();
  },
});

/** Why a GPU cannot run code of a CUDA claim (too new a GPU for it, or dropped by its major), if it cannot. */
function gpuProblem(claim: CudaClaim, gpu: GpuInfo): string | undefined {
  const cuda = claimCuda(claim);
  if (claim.precision === 'minor' && compareDotted(cuda, gpu.minCuda) < 0)
    return `CUDA ${cuda} has no code for ${gpu.name} (compute capability ${gpu.cc} needs CUDA >= ${gpu.minCuda})`;
  if (gpu.lastCudaMajor !== undefined && cudaMajor(cuda) > gpu.lastCudaMajor)
    return `CUDA ${cuda} no longer supports ${gpu.name} (compute capability ${gpu.cc}; the last CUDA for it is ${gpu.lastCudaMajor}.x)`;
  return undefined;
}

/** The claims a rule judges a unit's GPUs by: a container's image (or its Dockerfile's), else the unit's image, conda and apt claims. */
function gpuClaims(unit: Unit): readonly CudaClaim[] {
  return (unit.container?.claims ?? unit.claims).filter((claim) => claim.kind === 'image' || claim.kind === 'conda' || claim.kind === 'apt');
}

/** The pool table's GPU column: a pool fails a unit when one of its GPUs cannot run a claim of it. */
function poolVerdicts(unit: Unit, pools: readonly Pool[], kb: KnowledgeBase, verdict: (verdict: UnitVerdict) => void): void {
  // A container's pods never reach the pools its node selection leaves out: nothing to say about those.
  const scheduled = unit.container ? selectPools(pools, unit.container.fact.placement, kb).pools : pools;
  for (const claim of gpuClaims(unit))
    for (const pool of scheduled) {
      const problem = pool.gpus.map((name) => kb.gpu(name)).find((gpu) => gpu && gpuProblem(claim, gpu));
      if (problem) verdict({ unit: unit.label, file: claim.file, span: claim.span, pool: pool.name, tier: 'fails', reason: gpuProblem(claim, problem) });
    }
}

/**
 * A Kubernetes container on a fleet of pools: its image judged on the GPUs of the pools its pods may be scheduled
 * on. An error when every one of them has a GPU the image cannot use, else a warning naming those that do.
 */
function checkContainer(unit: Unit, pools: readonly Pool[], kb: KnowledgeBase, report: Reporter): void {
  const container = unit.container!;
  const selection = selectPools(pools, container.fact.placement, kb);
  for (const claim of gpuClaims(unit)) {
    const hit = selection.pools
      .map((pool) => ({ pool, gpu: pool.gpus.map((name) => kb.gpu(name)).find((gpu) => gpu && gpuProblem(claim, gpu)) }))
      .filter((entry): entry is { pool: Pool; gpu: GpuInfo } => entry.gpu !== undefined);
    if (hit.length === 0) continue;
    const clear = selection.pools.filter((pool) => !hit.some((entry) => entry.pool === pool));
    const first = hit[0]!.gpu;
    const dropped = first.lastCudaMajor !== undefined && cudaMajor(claimCuda(claim)) > first.lastCudaMajor;
    report({
      messageId: dropped ? 'dropped' : 'tooOld',
      data: { subject: claim.subject, cuda: claimCuda(claim), gpu: first.name, cc: first.cc, minCuda: first.minCuda, last: first.lastCudaMajor ?? '' },
      file: claim.file,
      span: claim.span,
      ...(clear.length > 0 ? { severity: 'warning' as const } : {}),
      unverified: hit.some((entry) => isUnverified(entry.gpu.record)),
      ...(claim.origin
        ? { related: [{ file: claim.origin.file, span: claim.origin.span, message: `the image is built from here: ${claim.origin.subject}` }] }
        : {}),
      help: `${hit.map((entry) => `pool ${entry.pool.name}: ${gpuProblem(claim, entry.gpu)}`).join('; ')}.${clear.length ? ` ${clear.map((pool) => pool.name).join(', ')} ${clear.length === 1 ? 'runs' : 'run'} it: keep the workload to ${clear.length === 1 ? 'that pool' : 'those pools'}.` : selection.narrowed ? ` The workload is scheduled only there (${selection.by.join(', ')}).` : ''} Source: ${cite(first.record)}`,
    });
  }
}

/**
 * Findings about GPUs of a fleet of pools: held until the check is done, then per place a finding stays an error
 * only where every pool has a GPU it names; where some pool has none, it is a warning that names the pools it holds
 * for and those it does not.
 */
function poolReporter(pools: readonly Pool[], kb: KnowledgeBase, report: Reporter): Reporter & { flush(): void } {
  const held: Draft[] = [];
  const hold = ((draft: Draft) => void held.push(draft)) as Reporter & { flush(): void };
  const ccOf = (name: string) => kb.gpu(name)?.cc;
  hold.flush = () => {
    const byPlace = new Map<string, Draft[]>();
    for (const draft of held) {
      const key = `${draft.file.path}\0${draft.span.start}\0${draft.messageId}`;
      byPlace.set(key, [...(byPlace.get(key) ?? []), draft]);
    }
    for (const drafts of byPlace.values()) {
      const failing = new Set(drafts.map((draft) => ccOf(String(draft.data?.gpu ?? ''))));
      const hit = pools.filter((pool) => pool.gpus.some((gpu) => failing.has(ccOf(gpu))));
      const clear = pools.filter((pool) => !hit.includes(pool));
      for (const draft of drafts) {
        if (clear.length === 0) report(draft);
        else
          report({
            ...draft,
            severity: draft.severity === 'notice' ? 'notice' : 'warning',
            help: `Only on pool${hit.length === 1 ? '' : 's'} ${hit.map((pool) => pool.name).join(', ')}: ${clear.map((pool) => pool.name).join(', ')} ${clear.length === 1 ? 'runs' : 'run'} it, so keep it to ${clear.length === 1 ? 'that pool' : 'those pools'}. ${draft.help ?? ''}`,
          });
      }
    }
  };
  return hold;
}

function checkTorchBuild(
  file: ParsedFile,
  span: { start: number; end: number },
  subject: string,
  build: TorchBuild,
  gpu: FleetGpu,
  kb: KnowledgeBase,
  report: Reporter,
): void {
  const cuda = build.cuda!;
  const archs = kb.compiledArchs(build.version, tagFromCuda(cuda));
  const data = { subject, cuda, gpu: gpu.label, cc: gpu.cc, minCuda: gpu.minCuda, sm: gpu.cc.replace('.', '') };
  if (archs) {
    if (runsOn(gpu.cc, archs.sass, archs.ptx ?? [])) return;
    report({
      messageId: 'noKernels',
      data: {
        ...data,
        archs: archs.sass.map((arch) => `sm_${arch.replace('.', '')}`).join(', ') + (archs.ptx?.length ? ` (+PTX ${archs.ptx.join(', ')})` : ''),
      },
      file,
      span,
      unverified: isUnverified(archs) || isUnverified(gpu.record),
      help: `torch raises "no kernel image is available for execution on the device" on this GPU. Use a build that includes sm_${data.sm} (compute capability ${gpu.cc} needs CUDA >= ${gpu.minCuda}). Sources: ${cite(archs)}; ${cite(gpu.record)}`,
    });
    return;
  }
  if (compareDotted(cuda, gpu.minCuda) < 0) {
    report({
      messageId: 'tooOld',
      data,
      file,
      span,
      unverified: isUnverified(gpu.record),
      help: `A CUDA ${cuda} build cannot contain code for compute capability ${gpu.cc}. Source: ${cite(gpu.record)}`,
    });
  } else if (gpu.lastCudaMajor !== undefined && cudaMajor(cuda) > gpu.lastCudaMajor) {
    report({
      messageId: 'dropped',
      data: { ...data, last: gpu.lastCudaMajor },
      file,
      span,
      unverified: isUnverified(gpu.record),
      help: `CUDA ${gpu.lastCudaMajor + 1} wheels drop pre-Turing GPUs. Source: ${cite(gpu.record)}`,
    });
  }
}

function checkArchList(file: ParsedFile, env: EnvFact, fleet: readonly FleetGpu[], report: Reporter): void {
  const entries = env.value.split(/[;\s]+/).filter(Boolean);
  const sass: string[] = [];
  const ptx: string[] = [];
  for (const entry of entries) {
    const match = /^(\d+\.\d+a?)(\+PTX)?$/i.exec(entry);
    if (!match) continue;
    sass.push(match[1]!);
    if (match[2]) ptx.push(match[1]!);
  }
  if (sass.length === 0) return;
  for (const gpu of fleet) {
    if (runsOn(gpu.cc, sass, ptx)) continue;
    const separator = env.value.includes(';') ? ';' : ' ';
    const editable = file.source.text.slice(env.valueSpan.start, env.valueSpan.end) === env.value;
    const fix: Fix | undefined = editable
      ? {
          title: `Add ${gpu.cc} to TORCH_CUDA_ARCH_LIST`,
          safety: 'safe',
          edits: [{ path: file.path, range: [env.valueSpan.end, env.valueSpan.end], text: `${separator}${gpu.cc}` }],
        }
      : undefined;
    report({
      messageId: 'archList',
      data: { value: env.value, gpu: gpu.label, cc: gpu.cc },
      file,
      span: env.span,
      severity: 'warning',
      unverified: isUnverified(gpu.record),
      help: `Extensions built with this list carry no kernels for compute capability ${gpu.cc} and fail with "no kernel image is available". Source: ${cite(gpu.record)}`,
      ...(fix ? { fix } : {}),
    });
  }
}
