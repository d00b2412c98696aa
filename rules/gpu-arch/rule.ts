import { claimCuda } from '../../src/analysis/claims.js';
import type { TorchBuild } from '../../src/analysis/torch-build.js';
import type { EnvFact, GpuAsk, ParsedFile } from '../../src/parsers/facts.js';
import type { Fix } from '../../src/finding.js';
import { cite, isUnverified, runsOn, type GpuInfo, type KnowledgeBase } from '../../src/knowledge/index.js';
import type { Pool } from '../../src/baseline/schema.js';
import {
  heldLess,
  defineRule,
  formatMessage,
  helpText,
  type Draft,
  type Reporter,
  type UnitVerdict,
} from '../../src/rule.js';
import { fleetScope } from '../../src/analysis/runs.js';
import { ownArchValues, torchArchEntries } from '../../src/analysis/arch-lists.js';
import { selectPools } from '../../src/analysis/placement.js';
import { originRelated, pickSubject, todaysPick, type CudaClaim } from '../../src/analysis/claims.js';
import { torchesBoundBy, type Unit } from '../../src/analysis/units.js';
import { isPypiIndex } from '../../src/analysis/cuda-labels.js';
import { cudaFromTag, cudaMajor, tagFromCuda } from '../../src/knowledge/versions.js';
import { compareDotted } from '../../src/util/dotted.js';

interface FleetGpu {
  readonly label: string;
  readonly cc: string;
  /** The first CUDA whose code runs on the GPU (GpuInfo.runsFrom: an earlier minor's cubin of its major runs). */
  readonly runsFrom: string;
  readonly lastCudaMajor?: number;
  readonly record: Parameters<typeof cite>[0];
}

/** NVIDIA's binary compatibility: a cubin for X.y runs on X.z, z >= y. */
const BINARY_COMPATIBILITY = 'https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility';

/**
 * NVIDIA's PTX compatibility: PTX of any compute capability is compiled by the driver for the GPU at hand, a newer one
 * included (each architecture's compatibility guide: "Applications Built Using CUDA Toolkit 11.7 or Earlier … are
 * compatible with Hopper as long as they are built to include PTX versions of their kernels").
 */
const PTX_COMPATIBILITY = 'https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#ptx-compatibility';

/**
 * PyTorch's wheel build scripts name no `+PTX` target in any release's TORCH_CUDA_ARCH_LIST (the one `+PTX`, CUDA 12.4
 * nightlies of 2024, was reverted): a wheel runs only on the GPUs its SASS covers.
 */
const WHEELS_WITHOUT_PTX =
  'pytorch/builder manywheel/build.sh and build_cuda.sh on every release branch, e.g. https://github.com/pytorch/builder/blob/d08f22640ad6f332026f26242d458b8d157187be/manywheel/build_cuda.sh';

/**
 * What a toolkit too old for a GPU still runs there, the tail of tooOld's message (not a torch wheel's): an image's or
 * an apt toolkit's nvcc builds code; a conda CUDA (`cudatoolkit`, the runtime of the pytorch channel's builds) or a
 * package's build string names the CUDA its packages were built with (the pytorch channel's 1.x and 2.0 builds carry
 * `3.7+PTX`: pytorch/builder conda/pytorch-nightly/build.sh).
 */
function fromPtx(claim: CudaClaim): string {
  if (isCondaClaim(claim)) return ': the packages built with it run there only from the PTX they carry';
  return aptLibrary(claim)
    ? ': the library and what is built with it run there only from the PTX they carry'
    : ': what it builds runs there only from PTX';
}

/** What a claim names, as its help says it: the thing to replace and the thing not known to carry PTX. */
function claimNoun(claim: CudaClaim): string {
  if (isCondaClaim(claim)) return 'a conda package';
  return aptLibrary(claim) ? 'a CUDA library package' : claim.kind === 'apt' ? 'a toolkit' : 'an image';
}

/** An apt package of a library NVIDIA built (`libcudnn8`, `libnccl2`), not of a toolkit that builds code (nvcc). */
function aptLibrary(claim: CudaClaim): boolean {
  return claim.kind === 'apt' && claim.package !== undefined && claim.package.name.startsWith('lib');
}

function isCondaClaim(claim: CudaClaim): boolean {
  return claim.kind === 'conda' || claim.kind === 'conda-build';
}

/** Why each finding matters and how to fix it, filled from its data (src/rule.ts, `helps`). */
const HELPS = {
  gpuDriver: 'Older drivers do not recognise this GPU at all. Source: {{source}}',
  gpuUnresolved:
    'A variable names the accelerator (`--env`, `envs:`, or a value SkyPilot sets): name the GPU in the task, or check the task with the value it is launched with.',
  gpuUnknown:
    "The knowledge base's GPU table (compute capability, the CUDA range that builds for it) has no row for this name: another vendor's accelerator (a TPU, AWS Inferentia, AMD's MI300X) runs no CUDA at all, and an NVIDIA GPU of another spelling should be written as the table names it (H100, A100-80GB, L40S, RTX A6000).",
  tooOld: `CUDA {{cuda}} generates no cubin that runs on compute capability {{cc}}: neither for it nor for an earlier minor of its major, whose cubins it would run (${BINARY_COMPATIBILITY}). What is built with it runs there only where it ships PTX, which the driver compiles when the program starts (${PTX_COMPATIBILITY}): not known of {{noun}}, so no certain failure. Use {{noun}} of CUDA >= {{minCuda}} for this GPU. Source: {{source}}`,
  dropped: 'CUDA {{next}}.0 removed offline compilation and library support for this architecture. Source: {{source}}',
  noKernels:
    'torch raises "no kernel image is available for execution on the device" on this GPU. Use a build that includes sm_{{sm}} (compute capability {{cc}} needs CUDA >= {{minCuda}}). Sources: {{sources}}',
  archList:
    'Extensions built with this list carry no kernels for compute capability {{cc}} and fail with "no kernel image is available". Source: {{source}}',
  tooOldAll: `CUDA {{cuda}} generates no cubin that runs on these GPUs: neither for them nor for an earlier minor of their major, whose cubins they would run (${BINARY_COMPATIBILITY}). What is built with it runs there only where it ships PTX, which the driver compiles when the program starts (${PTX_COMPATIBILITY}).`,
  archListAll:
    'Extensions built with this list carry no kernels for these GPUs and fail with "no kernel image is available".',
  noKernelsAll:
    'torch raises "no kernel image is available for execution on the device" on these GPUs. Use a build that includes their architectures.',
  droppedAll:
    'The CUDA majors after their last removed offline compilation and library support for these architectures.',
};

/** The rule's messages, by id: `MessageId` types the helpers' reporter, so a misspelt id does not compile. */
const MESSAGES = {
  tooOld:
    '{{subject}} uses CUDA {{cuda}}, which compiles no native code for {{gpu}} (compute capability {{cc}} needs CUDA >= {{minCuda}}){{fromPtx}}',
  dropped:
    '{{subject}} uses CUDA {{cuda}}, which no longer supports {{gpu}} (compute capability {{cc}}); the last CUDA for it is {{last}}.x',
  noKernels: '{{subject}} has no kernels for {{gpu}} (sm_{{sm}}): it is compiled for {{archs}}',
  archList: 'TORCH_CUDA_ARCH_LIST "{{value}}" does not cover {{gpu}} (compute capability {{cc}})',
  archListAll: 'TORCH_CUDA_ARCH_LIST "{{value}}" does not cover {{gpus}}',
  tooOldAll: '{{subject}} uses CUDA {{cuda}}, which compiles no native code for {{gpus}}{{fromPtx}}',
  noKernelsAll: '{{subject}} has no kernels for {{gpus}}: it is compiled for {{archs}}',
  droppedAll: '{{subject}} uses CUDA {{cuda}}, which no longer supports {{gpus}}',
  gpuDriver: "{{gpu}} needs NVIDIA driver >= {{needed}}, but the baseline's fleet driver is {{fleet}}",
  gpuUnknown:
    '{{gpu}} is no NVIDIA GPU the knowledge base knows, so what the workload runs is not judged on it (its CUDA, its torch builds)',
  gpuUnresolved:
    '{{gpu}} is only known when the task is launched, so what the workload runs is not judged on the GPU it gets (its CUDA, its torch builds)',
};
type MessageId = keyof typeof MESSAGES;

export default defineRule({
  id: 'gpu-arch',
  description:
    "The fleet's GPUs are supported by the CUDA version and by the compiled architectures of the torch build",
  defaultSeverity: 'error',
  fix: 'safe',
  messages: MESSAGES,
  helps: HELPS,
  check({ units, files, kb, baseline, policy, report: reportAll, verdict }) {
    // With pools, every pool's GPUs are checked and a finding is an error only when it holds on every pool.
    const pools = baseline.pools;
    const held = pools.length > 0 ? poolReporter(pools, kb, reportAll) : undefined;
    const merged = held ? undefined : mergingReporter(reportAll);
    const fleetReport: Reporter<MessageId> = held ?? merged!;
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
    const fleet = fleetGpus(names, kb);
    const fleetDriver = pools.length > 0 ? undefined : baseline.driver.minimum;
    if (fleetDriver && policy) {
      baseline.gpus.forEach((name, index) => {
        const info = kb.gpu(name);
        if (info?.minDriver && compareDotted(fleetDriver, info.minDriver) < 0) {
          fleetReport({
            messageId: 'gpuDriver',
            data: { gpu: name, needed: info.minDriver, fleet: fleetDriver, source: cite(info.record) },
            file: { path: policy.source.path, source: policy.source },
            span: policy.locate(['gpus', index]),
            unverified: isUnverified(info.record),
          });
        }
      });
    }
    const scope = fleetScope(files, kb);
    for (const unit of units) {
      // A workload that names the GPUs it runs on (a SkyPilot task's accelerators) is judged on those, fleet or none.
      if (unit.root.gpus?.length) {
        checkOwnGpus(unit, unit.root.gpus, kb, reportAll);
        continue;
      }
      if (fleet.length === 0 || unit.root.offFleet) continue;
      if (unit.container && pools.length > 0) {
        checkContainer(unit, pools, kb, reportAll, verdict);
        continue;
      }
      // What the files say does not run on the fleet as it is: said less certainly (src/analysis/runs.ts).
      const report = heldLess(unit, scope, HELPS, fleetReport);
      if (pools.length > 0)
        for (const claim of gpuClaims(unit))
          for (const hit of poolHits(claim, pools, kb)) verdict(hitVerdict(unit, claim, hit));
      checkToolkitClaims(unit, fleet, report);
      const pins = torchPins(unit, kb);
      for (const pin of pins) {
        const { file, span } = pin;
        for (const gpu of fleet) checkTorchBuild(pin, gpu, kb, report);
        // The pool table says what the finding says: a pool with a GPU the build has no code for does not run it.
        for (const pool of pools) {
          const misses = pool.gpus.flatMap((name) => {
            const info = kb.gpu(name);
            if (!info) return [];
            const gpu = { label: name, cc: info.cc, runsFrom: info.runsFrom, record: info.record };
            return collectDrafts((probe) => checkTorchBuild(pin, { ...gpu, ...lastMajor(info) }, kb, probe));
          });
          if (misses.length > 0)
            verdict({
              unit: unit.label,
              file,
              span,
              pool: pool.name,
              tier: 'fails',
              reason: misses.map((draft) => formatMessage(MESSAGES[draft.messageId], draft.data ?? {})).join('; '),
            });
        }
      }
    }
    let stageUnits: ReadonlyMap<ParsedFile, ReadonlyMap<number, Unit>> | undefined;
    if (fleet.length > 0)
      for (const file of files) {
        const lists = ownArchValues(file.env);
        if (lists.length === 0) continue;
        // A list in a stage that does not run on the fleet as it is (a Jetson build's `8.7;11.0`): said as such.
        stageUnits ??= groupStageUnits(units);
        for (const env of lists) {
          const unit = stageUnits.get(file)?.get(env.stage);
          checkArchList(file, env, fleet, unit ? heldLess(unit, scope, HELPS, fleetReport) : fleetReport);
        }
      }
    held?.flush();
    merged?.flush();
  },
});

/** A Dockerfile stage's unit (its default environment's, not a container's), by file and stage: one pass over them. */
function groupStageUnits(units: readonly Unit[]): ReadonlyMap<ParsedFile, ReadonlyMap<number, Unit>> {
  const byFile = new Map<ParsedFile, Map<number, Unit>>();
  for (const unit of units) {
    if (unit.stage === undefined || unit.container) continue;
    let byStage = byFile.get(unit.root);
    if (!byStage) byFile.set(unit.root, (byStage = new Map()));
    // The stage's default environment's unit comes after its other environments' (buildUnits): the last one.
    byStage.set(unit.stage, unit);
  }
  return byFile;
}

/** The GPUs of these names the knowledge knows, as the checks read them (names it does not know are left out). */
function fleetGpus(names: readonly string[], kb: KnowledgeBase): FleetGpu[] {
  return names
    .map((name) => ({ name, info: kb.gpu(name) }))
    .filter((gpu): gpu is { name: string; info: GpuInfo } => gpu.info !== undefined)
    .map<FleetGpu>(({ name, info }) => ({
      label: name,
      cc: info.cc,
      runsFrom: info.runsFrom,
      ...(info.lastCudaMajor ? { lastCudaMajor: info.lastCudaMajor } : {}),
      record: info.record,
    }));
}

/** A unit's image, conda and apt CUDA on each GPU: too old to compile native code for it, or past its last CUDA. */
function checkToolkitClaims(unit: Unit, fleet: readonly FleetGpu[], report: Reporter<MessageId>): void {
  for (const claim of toolkitClaims(unit.claims)) {
    const cuda = claimCuda(claim);
    for (const gpu of fleet) {
      const data = { subject: claim.subject, cuda, gpu: gpu.label, cc: gpu.cc, minCuda: gpu.runsFrom };
      const miss = gpuMiss(claim, gpu);
      if (miss === 'tooOld') {
        // Only PTX the build ships runs there: not known of an image, a toolkit or a package, so never an error.
        report({
          messageId: 'tooOld',
          data: { ...data, source: cite(gpu.record), fromPtx: fromPtx(claim), noun: claimNoun(claim) },
          file: claim.file,
          span: claim.span,
          severity: 'warning',
          unverified: isUnverified(gpu.record),
        });
      } else if (miss === 'dropped') {
        report({
          messageId: 'dropped',
          data: { ...data, last: gpu.lastCudaMajor!, next: gpu.lastCudaMajor! + 1, source: cite(gpu.record) },
          file: claim.file,
          span: claim.span,
          unverified: isUnverified(gpu.record),
        });
      }
    }
  }
}

/**
 * The torch builds a unit installs, as pins to judge the GPUs' kernels with: its torch pins, else the torch a
 * companion's pin brings, and what an unpinned torch or a range installs where the unit says which release.
 */
function torchPins(unit: Unit, kb: KnowledgeBase): TorchPin[] {
  const pins: TorchPin[] = [];
  for (const { file, pkg, build } of unit.packages) {
    if (!build || pkg.name !== 'torch' || build.cpu || !build.cuda || build.missing) continue;
    pins.push({
      file,
      span: pkg.span,
      subject: `torch ${pkg.exact}${pkg.localLabel ? '' : ` (${tagFromCuda(build.cuda)} build)`}`,
      build,
    });
  }
  // A torchvision or torchaudio pin with no torch pin beside it installs the torch release it belongs to
  // (each release requires its one torch exactly), that release's build: judged as its pin.
  if (pins.length === 0)
    for (const { file, pkg, build } of unit.packages) {
      if (pkg.name !== 'torchvision' && pkg.name !== 'torchaudio') continue;
      if (!pkg.exact || !build?.release || build.cpu || !build.cuda || build.missing) continue;
      if (unit.packages.some((other) => other.pkg.name === 'torch' && other.pkg.exact)) continue;
      const version = String(build.release.version);
      pins.push({
        file,
        span: pkg.span,
        subject: `${pkg.rawName}==${pkg.exact} (and the torch ${version} it requires, its ${tagFromCuda(build.cuda)} build)`,
        build: { version, cuda: build.cuda },
      });
      break;
    }
  if (pins.length === 0) pins.push(...boundTorch(unit, kb));
  // What an unpinned torch or a range installs, where the unit says which release pip takes (one for every Python
  // it may run: `torch` today is 2.14.0, a cu130 build, whose wheels have no sm_70): judged as that release's pin.
  for (const claim of unit.claims) {
    const version = todaysPick(claim);
    if (version)
      pins.push({
        file: claim.file,
        span: claim.span,
        subject: pickSubject(claim),
        build: { version, cuda: claim.cuda },
      });
  }
  pins.push(...rangePicks(unit, pins, kb));
  return pins;
}

/**
 * A unit with no torch pin whose exact pins require torch releases (torchdata 0.6.1 requires torch 2.0.1; triton 2.0.0
 * goes with torch 2.0.0 and 2.0.1): the one release every such pin admits, where there is one, from plain PyPI (no
 * other index named), its PyPI build, judged as its pin (Stability-AI/generative-models' pt2.txt: `torch>=2.0.1` with
 * them installs 2.0.1, a CUDA 11.7 build without sm_90).
 */
function boundTorch(unit: Unit, kb: KnowledgeBase): TorchPin[] {
  if (unit.packages.some(({ pkg }) => pkg.name === 'torch' && (pkg.exact || pkg.url))) return [];
  if (unit.invocations.some((invocation) => invocation.indexes.some((index) => !isPypiIndex(index.url)))) return [];
  let torches: Set<string> | undefined;
  let first: Unit['packages'][number] | undefined;
  for (const entry of unit.packages) {
    const admitted = new Set(torchesBoundBy(entry.pkg, kb));
    if (admitted.size === 0) continue;
    torches = torches ? new Set([...torches].filter((torch) => admitted.has(torch))) : admitted;
    first ??= entry;
  }
  if (!first || torches?.size !== 1) return [];
  const [version] = torches;
  const release = kb.torchRelease(version!);
  const cuda = release?.pypiDefault ? cudaFromTag(release.pypiDefault) : undefined;
  if (!release || !cuda) return [];
  return [
    {
      file: first.file,
      span: first.pkg.span,
      subject: `${first.pkg.rawName}==${first.pkg.exact} (and the torch ${version} it requires, its ${release.pypiDefault} build on PyPI)`,
      build: { version: version!, cuda },
    },
  ];
}

/**
 * A unit whose workload names the GPU models it runs on (a SkyPilot task's `accelerators`): its CUDA and torch builds
 * judged on each of them. Where it names several (`{L4: 1, A100: 1}`: SkyPilot takes whichever is available), a GPU
 * the build cannot run on is a warning: another may be the one it gets.
 */
function checkOwnGpus(unit: Unit, asks: readonly GpuAsk[], kb: KnowledgeBase, reportAll: Reporter<MessageId>): void {
  // A name the knowledge does not place (another vendor's accelerator, a catalog's spelling): said, not passed over.
  for (const ask of asks)
    if (!kb.gpu(ask.name))
      reportAll({
        messageId: /[$`]/.test(ask.name) ? 'gpuUnresolved' : 'gpuUnknown',
        data: { gpu: ask.name },
        file: unit.root,
        span: ask.span,
        severity: 'notice',
      });
  const gpus = fleetGpus(
    asks.map((ask) => ask.name),
    kb,
  );
  if (gpus.length === 0) return;
  const merged = mergingReporter(reportAll);
  const report: Reporter<MessageId> =
    new Set(gpus.map((gpu) => gpu.cc)).size > 1 ? (draft) => merged({ ...draft, severity: 'warning' }) : merged;
  checkToolkitClaims(unit, gpus, report);
  for (const pin of torchPins(unit, kb)) for (const gpu of gpus) checkTorchBuild(pin, gpu, kb, report);
  merged.flush();
}

/** The findings said once per place for every GPU they hold for (one cause, one finding: sweeps 18 and 19). */
const MERGED: Partial<Record<MessageId, MessageId>> = {
  tooOld: 'tooOldAll',
  noKernels: 'noKernelsAll',
  dropped: 'droppedAll',
  archList: 'archListAll',
};

/**
 * One draft for the drafts of one place and message about several GPUs (a cu102 torch on A100, H200 and RTX 4090):
 * the GPUs listed, each with what it needs, and their helps joined. A single draft, or one with a fix, as it is.
 */
function mergeDrafts(drafts: readonly Draft<MessageId>[]): Draft<MessageId> {
  const first = drafts[0]!;
  const many = MERGED[first.messageId];
  // A fix stands for every GPU of the place only where it is one (the arch list's adds them all).
  if (drafts.length === 1 || !many || (drafts.some((draft) => draft.fix) && first.messageId !== 'archList'))
    return first;
  // One GPU said once (two stages of one file judged at the same line name it twice).
  const gpus = [...new Set(drafts.map((draft) => String(draft.data?.gpu)))];
  if (gpus.length === 1) return first;
  const each = (draft: Draft<MessageId>): string => {
    const data = draft.data ?? {};
    if (first.messageId === 'noKernels') return `${String(data.gpu)} (sm_${String(data.sm)})`;
    if (first.messageId === 'archList') return `${String(data.gpu)} (compute capability ${String(data.cc)})`;
    return listedGpu(first.messageId, {
      name: String(data.gpu),
      cc: String(data.cc),
      runsFrom: String(data.minCuda),
      last: String(data.last),
    });
  };
  const helps = [...new Set(drafts.map((draft) => helpText(HELPS, draft) ?? ''))].filter(Boolean);
  return {
    ...first,
    messageId: many,
    data: { ...first.data, gpus: [...new Set(drafts.map(each))].join(', ') },
    help: helps.join(' '),
    unverified: drafts.some((draft) => draft.unverified === true),
  };
}

/** A GPU as a merged finding lists it: what it needs of a CUDA too old for it, or the last CUDA for it. */
function listedGpu(
  miss: MessageId,
  gpu: { readonly name: string; readonly cc: string; readonly runsFrom: string; readonly last: string },
): string {
  return miss === 'dropped'
    ? `${gpu.name} (compute capability ${gpu.cc}, last CUDA ${gpu.last}.x)`
    : `${gpu.name} (compute capability ${gpu.cc}, needs CUDA >= ${gpu.runsFrom})`;
}

/** Drafts held until the check is done, then one finding per place and message (mergeDrafts). */
function mergingReporter(report: Reporter<MessageId>): Reporter<MessageId> & { flush(): void } {
  const held = new Map<string, Draft<MessageId>[]>();
  const hold = ((draft: Draft<MessageId>) => {
    const key = `${draft.file.path}\0${draft.span.start}\0${draft.messageId}\0${draft.severity ?? ''}`;
    const list = held.get(key);
    if (list) list.push(draft);
    else held.set(key, [draft]);
  }) as Reporter<MessageId> & { flush(): void };
  hold.flush = () => {
    for (const drafts of held.values()) report(mergeDrafts(drafts));
  };
  return hold;
}

/** Whether a GPU cannot run a claim's CUDA: a release too old to build for it, or a major that dropped it. */
function gpuMiss(claim: CudaClaim, gpu: Pick<GpuInfo, 'runsFrom' | 'lastCudaMajor'>): 'tooOld' | 'dropped' | undefined {
  const cuda = claimCuda(claim);
  if (claim.precision === 'minor' && compareDotted(cuda, gpu.runsFrom) < 0) return 'tooOld';
  if (gpu.lastCudaMajor !== undefined && cudaMajor(cuda) > gpu.lastCudaMajor) return 'dropped';
  return undefined;
}

/**
 * The claims a rule judges a unit's GPUs by: a container's image (or its Dockerfile's), else the unit's image, conda
 * and apt claims (`toolkitClaims`).
 */
function gpuClaims(unit: Unit): readonly CudaClaim[] {
  return toolkitClaims(unit.container?.claims ?? unit.claims);
}

/**
 * Of claims, those that say the CUDA code is built with: an image's, a conda CUDA package's, and an apt CUDA package's
 * or a conda package's build string (`pytorch=1.12.1=py3.8_cuda11.6_cudnn8.3.2_0`) where no other of them says that
 * CUDA already.
 */
function toolkitClaims(claims: readonly CudaClaim[]): CudaClaim[] {
  const toolkits = claims.filter((claim) => claim.kind === 'image' || claim.kind === 'conda');
  // An apt package of a CUDA an image or another package of the stage says already (deepops' libcudnn8, libnccl2 and
  // libnccl-dev of `+cuda11.2` on a CUDA 11.2 image) adds no cause: said once, where that CUDA is first said.
  for (const claim of claims)
    if (
      (claim.kind === 'apt' || claim.kind === 'conda-build') &&
      !toolkits.some((other) => claimCuda(other) === claimCuda(claim))
    )
      toolkits.push(claim);
  return toolkits;
}

interface PoolHit {
  readonly pool: Pool;
  readonly gpu: GpuInfo;
  readonly miss: 'tooOld' | 'dropped';
}

/** The pools with a GPU that cannot run a claim, each with its first such GPU. */
function poolHits(claim: CudaClaim, pools: readonly Pool[], kb: KnowledgeBase): PoolHit[] {
  const hits: PoolHit[] = [];
  for (const pool of pools)
    for (const name of pool.gpus) {
      const gpu = kb.gpu(name);
      const miss = gpu && gpuMiss(claim, gpu);
      if (miss) {
        hits.push({ pool, gpu, miss });
        break;
      }
    }
  return hits;
}

function hitReason(claim: CudaClaim, hit: PoolHit): string {
  const { gpu } = hit;
  return hit.miss === 'tooOld'
    ? `CUDA ${claimCuda(claim)} compiles no native code for ${gpu.name} (compute capability ${gpu.cc} needs CUDA >= ${gpu.runsFrom}): it runs there only from PTX`
    : `CUDA ${claimCuda(claim)} no longer supports ${gpu.name} (compute capability ${gpu.cc}; the last CUDA for it is ${gpu.lastCudaMajor}.x)`;
}

/** The pool table's cell for a pool with a GPU the unit's claim cannot use. */
function hitVerdict(unit: Unit, claim: CudaClaim, hit: PoolHit): UnitVerdict {
  return {
    unit: unit.label,
    file: claim.file,
    span: claim.span,
    pool: hit.pool.name,
    // Too old a CUDA runs there from the PTX it ships, if it does: not known.
    tier: hit.miss === 'tooOld' ? 'unknown' : 'fails',
    reason: hitReason(claim, hit),
  };
}

/**
 * A Kubernetes container on a fleet of pools: its image judged on the GPUs of the pools its pods may be scheduled
 * on. An error when every one of them has a GPU the image cannot use, else a warning naming those that do.
 */
function checkContainer(
  unit: Unit,
  pools: readonly Pool[],
  kb: KnowledgeBase,
  report: Reporter<MessageId>,
  verdict: (verdict: UnitVerdict) => void,
): void {
  const selection = selectPools(pools, unit.container!.fact.placement, kb);
  for (const claim of gpuClaims(unit)) {
    const hits = poolHits(claim, selection.pools, kb);
    for (const hit of hits) verdict(hitVerdict(unit, claim, hit));
    if (hits.length === 0) continue;
    const clear = selection.pools.filter((pool) => !hits.some((hit) => hit.pool === pool));
    const { gpu, miss } = hits[0]!;
    const keep = clear.length
      ? ` ${clear.map((pool) => pool.name).join(', ')} ${clear.length === 1 ? 'runs' : 'run'} it: keep the workload to ${clear.length === 1 ? 'that pool' : 'those pools'}.`
      : selection.narrowed
        ? ` The workload is scheduled only there (${selection.by.join(', ')}).`
        : '';
    // Every pool's GPU named in the headline where they miss alike (the help says which pool has which): one GPU
    // named there would read as if the others ran it.
    const alike = hits.filter((hit) => hit.miss === miss);
    const named = [...new Map(alike.map((hit) => [hit.gpu.name, hit.gpu] as const)).values()];
    const many = named.length > 1 && alike.length === hits.length;
    report({
      messageId: many ? MERGED[miss]! : miss,
      data: {
        subject: claim.subject,
        cuda: claimCuda(claim),
        gpu: gpu.name,
        cc: gpu.cc,
        minCuda: gpu.runsFrom,
        last: gpu.lastCudaMajor ?? '',
        fromPtx: miss === 'tooOld' ? fromPtx(claim) : '',
        ...(many
          ? {
              gpus: named
                .map((each) => listedGpu(miss, { ...each, last: String(each.lastCudaMajor ?? '') }))
                .join(', '),
            }
          : {}),
      },
      file: claim.file,
      span: claim.span,
      ...(clear.length > 0 || miss === 'tooOld' ? { severity: 'warning' as const } : {}),
      unverified: hits.some((hit) => isUnverified(hit.gpu.record)),
      related: originRelated(claim),
      // Per pool, the GPU each cannot use: its own help, over the message's template for one GPU.
      help: `${hits.map((hit) => `pool ${hit.pool.name}: ${hitReason(claim, hit)}`).join('; ')}.${keep}${miss === 'tooOld' ? ` What is built with it runs there only where it ships PTX, which the driver compiles when the program starts (${PTX_COMPATIBILITY}): not known of ${claimNoun(claim)}.` : ''} Source: ${cite(gpu.record)}`,
    });
  }
}

/**
 * Findings about GPUs of a fleet of pools: held until the check is done, then per place a finding stays an error
 * only where every pool has a GPU it names; where some pool has none, it is a warning that names the pools it holds
 * for and those it does not.
 */
function poolReporter(
  pools: readonly Pool[],
  kb: KnowledgeBase,
  report: Reporter<MessageId>,
): Reporter<MessageId> & { flush(): void } {
  const held: Draft<MessageId>[] = [];
  const hold = ((draft: Draft<MessageId>) => void held.push(draft)) as Reporter<MessageId> & { flush(): void };
  const ccOf = (name: string) => kb.gpu(name)?.cc;
  hold.flush = () => {
    const byPlace = new Map<string, Draft<MessageId>[]>();
    for (const draft of held) {
      const key = `${draft.file.path}\0${draft.span.start}\0${draft.messageId}`;
      byPlace.set(key, [...(byPlace.get(key) ?? []), draft]);
    }
    for (const drafts of byPlace.values()) {
      const failing = new Set(drafts.map((draft) => ccOf(String(draft.data?.gpu ?? ''))));
      const hit = pools.filter((pool) => pool.gpus.some((gpu) => failing.has(ccOf(gpu))));
      const clear = pools.filter((pool) => !hit.includes(pool));
      const one = mergeDrafts(drafts);
      for (const draft of one === drafts[0] ? drafts : [one]) {
        if (clear.length === 0) report(draft);
        else
          report({
            ...draft,
            severity: draft.severity === 'notice' ? 'notice' : 'warning',
            help: `Only on pool${hit.length === 1 ? '' : 's'} ${hit.map((pool) => pool.name).join(', ')}: ${clear.map((pool) => pool.name).join(', ')} ${clear.length === 1 ? 'runs' : 'run'} it, so keep it to ${clear.length === 1 ? 'that pool' : 'those pools'}. ${helpText(HELPS, draft) ?? ''}`,
          });
      }
    }
  };
  return hold;
}

/** A GPU's last CUDA major, where it has one, as FleetGpu holds it. */
const lastMajor = (info: GpuInfo): { lastCudaMajor?: number } =>
  info.lastCudaMajor !== undefined ? { lastCudaMajor: info.lastCudaMajor } : {};

/** The drafts a check reports, collected instead of reported. */
function collectDrafts(check: (probe: Reporter<MessageId>) => void): Draft<MessageId>[] {
  const drafts: Draft<MessageId>[] = [];
  check((draft) => void drafts.push(draft));
  return drafts;
}

/**
 * A torch range of a unit that says every Python it runs (`FROM python:3.12-slim`, `pip install "torch>=2.4,<2.8"`),
 * from plain PyPI and decided by nothing else in the unit (Unit.torchRanges): the release pip takes, the newest the
 * range admits with wheels for that Python (2.7.1, a cu126 build), as a pin of it.
 */
function rangePicks(unit: Unit, judged: readonly TorchPin[], kb: KnowledgeBase): TorchPin[] {
  const pythons = unit.torchRanges ? unit.pythonsRun?.()?.versions : undefined;
  if (!pythons?.length) return [];
  const pins: TorchPin[] = [];
  const at = new Set(judged.map((pin) => `${pin.file.path}\0${pin.span.start}`));
  for (const { file, pkg, specifier } of unit.torchRanges!) {
    if (at.has(`${file.path}\0${pkg.span.start}`)) continue;
    const picks = new Set(pythons.map((python) => kb.newestTorchFor(specifier, python)));
    const [pick] = picks;
    const cuda = pick?.pypiDefault ? cudaFromTag(pick.pypiDefault) : undefined;
    if (picks.size !== 1 || !pick || !cuda) continue;
    pins.push({
      file,
      span: pkg.span,
      subject: `${pkg.rawName}${pkg.specifier} (torch ${pick.version} on this stage's Python, its ${pick.pypiDefault} build on PyPI)`,
      build: { version: pick.version, cuda },
    });
  }
  return pins;
}

/** A torch pin of a CUDA build: where it is written, what findings call it, and the build it resolves to. */
interface TorchPin {
  readonly file: ParsedFile;
  readonly span: { readonly start: number; readonly end: number };
  readonly subject: string;
  readonly build: Pick<TorchBuild, 'version' | 'cuda'>;
}

/** Whether the torch build has kernels for the GPU (its compiled architectures), else whether its CUDA can. */
function checkTorchBuild(
  { file, span, subject, build }: TorchPin,
  gpu: FleetGpu,
  kb: KnowledgeBase,
  report: Reporter<MessageId>,
): void {
  const cuda = build.cuda!;
  const archs = kb.compiledArchs(build.version, tagFromCuda(cuda));
  const data = { subject, cuda, gpu: gpu.label, cc: gpu.cc, minCuda: gpu.runsFrom, sm: gpu.cc.replace('.', '') };
  if (archs) {
    if (runsOn(gpu.cc, archs.sass, archs.ptx ?? [])) return;
    report({
      messageId: 'noKernels',
      data: {
        ...data,
        archs:
          archs.sass.map((arch) => `sm_${arch.replace('.', '')}`).join(', ') +
          (archs.ptx?.length ? ` (+PTX ${archs.ptx.join(', ')})` : ''),
        sources: `${cite(archs)}; ${cite(gpu.record)}`,
      },
      file,
      span,
      unverified: isUnverified(archs) || isUnverified(gpu.record),
    });
    return;
  }
  if (compareDotted(cuda, gpu.runsFrom) < 0) {
    report({
      messageId: 'tooOld',
      data: { ...data, fromPtx: '' },
      file,
      span,
      unverified: isUnverified(gpu.record),
      // A wheel's why, not the toolkit's of the message's template: its own help (a message id of its own would
      // change the findings' messageId).
      help: `CUDA ${cuda} generates no cubin that runs on compute capability ${gpu.cc}: neither for it nor for an earlier minor of its major (${BINARY_COMPATIBILITY}). PyTorch's wheels are built with no PTX target (${WHEELS_WITHOUT_PTX}), so nothing is compiled for it when torch starts. Source: ${cite(gpu.record)}`,
    });
  } else if (gpu.lastCudaMajor !== undefined && cudaMajor(cuda) > gpu.lastCudaMajor) {
    report({
      messageId: 'dropped',
      data: { ...data, last: gpu.lastCudaMajor },
      file,
      span,
      unverified: isUnverified(gpu.record),
      // A wheel's why (see tooOld above).
      help: `CUDA ${gpu.lastCudaMajor + 1} wheels drop pre-Turing GPUs. Source: ${cite(gpu.record)}`,
    });
  }
}

function checkArchList(file: ParsedFile, env: EnvFact, fleet: readonly FleetGpu[], report: Reporter<MessageId>): void {
  const entries = env.value
    .split(/[;\s]+/)
    .filter(Boolean)
    .flatMap((entry) => torchArchEntries(entry));
  const sass: string[] = [];
  const ptx: string[] = [];
  for (const entry of entries) {
    const match = /^(\d+\.\d+[af]?)(\+PTX)?$/i.exec(entry);
    if (!match) continue;
    sass.push(match[1]!);
    if (match[2]) ptx.push(match[1]!);
  }
  if (sass.length === 0) return;
  const missing = fleet.filter((gpu) => !runsOn(gpu.cc, sass, ptx));
  if (missing.length === 0) return;
  // One fix, at the first GPU's finding, that adds every missing capability: a fix of one GPU alone would leave the
  // others' findings with another value in their message, which verification counts as new.
  // A list of one entry takes `;` (PyTorch's cpp_extension reads `;` and spaces alike): a space would make the rest of
  // an unquoted `ENV KEY=8.7` another name=value word, which BuildKit refuses ("can't find = in").
  const separator = !env.value.includes(';') && /\s/.test(env.value) ? ' ' : ';';
  const editable = file.source.text.slice(env.valueSpan.start, env.valueSpan.end) === env.value;
  const added = [...new Set(missing.map((gpu) => gpu.cc))];
  const fix: Fix | undefined = editable
    ? {
        title: `Add ${added.join(' and ')} to TORCH_CUDA_ARCH_LIST`,
        safety: 'safe',
        edits: [
          {
            path: file.path,
            range: [env.valueSpan.end, env.valueSpan.end],
            text: added.map((cc) => `${separator}${cc}`).join(''),
          },
        ],
      }
    : undefined;
  for (const [k, gpu] of missing.entries()) {
    report({
      messageId: 'archList',
      data: { value: env.value, gpu: gpu.label, cc: gpu.cc, source: cite(gpu.record) },
      file,
      span: env.span,
      severity: 'warning',
      unverified: isUnverified(gpu.record),
      ...(fix && k === 0 ? { fix } : {}),
    });
  }
}
