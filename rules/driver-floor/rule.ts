import { claimCuda, originRelated, type CudaClaim } from '../../src/analysis/claims.js';
import type { ParsedFile } from '../../src/parsers/facts.js';
import type { Unit } from '../../src/analysis/units.js';
import { cite, isUnverified, type KnowledgeBase } from '../../src/knowledge/index.js';
import type { Pool } from '../../src/baseline/schema.js';
import { defineRule, helpText, type Draft, type Reporter, type RuleContext } from '../../src/rule.js';
import { selectPools, type Selection } from '../../src/analysis/placement.js';
import { cudaMajor } from '../../src/knowledge/versions.js';
import { compareDotted } from '../../src/util/dotted.js';
import { stageRequirements, startOn, type StageRequirements } from './toolkit-start.js';

/** The help of a finding judged on the pools: each pool's own why, and where the workload is scheduled. */
const PER_POOL = 'Per pool: {{reasons}}{{pinned}}';

/** Why each finding matters and how to fix it, filled from its data (src/rule.ts, `helps`). */
const HELPS = {
  forwardCompat:
    'NVIDIA supports {{package}} on R{{branches}} drivers, and NVIDIA\'s images ship it, but only on data-center GPUs on Linux ("Forward Compatibility is applicable only for systems with: NVIDIA Data Center GPUs. Select NGC Server Ready SKUs of RTX cards. Jetson boards"). On other GPUs the container fails with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE.{{fleetNote}} Sources: {{sources}}',
  release:
    'CUDA {{cuda}} code needs at least the driver it was released with ({{needed}}, CUDA {{row}}): older drivers fail CUDA initialisation with "driver version is insufficient for CUDA runtime version". {{floor}} is needed only for later CUDA {{major}}.x releases.{{compatNote}} Sources: {{sources}}',
  major:
    'A driver older than {{floor}} runs no CUDA {{major}}.x code newer than its own release: CUDA initialisation fails with "driver version is insufficient for CUDA runtime version".{{compatNote}} Upgrade the fleet driver or stay on CUDA {{previous}}.x. Sources: {{sources}}',
  noPool: PER_POOL,
  somePools: PER_POOL,
  pinned: PER_POOL,
  poolsCompat: PER_POOL,
  unmatched:
    'The pods cannot be scheduled on a node of the pools the baseline lists ({{labels}}), so either the fleet in the baseline is incomplete or the selector is wrong. Pools are matched by their labels, their GPUs (nvidia.com/gpu.product, nvidia.com/gpu.compute.*), their driver (nvidia.com/cuda.driver.*) and, for the GKE, EKS and AKS node-pool labels, their names.',
  noDockerfile:
    "Without the Dockerfile, the image's CUDA is known only from its name{{says}}. Correct the path (it is read from the repository root). {{images}}",
  refusedEverywhere: 'Per pool: {{reasons}}{{pinned}}',
  refused:
    'The NVIDIA Container Toolkit\'s legacy path (docker run --gpus, the nvidia runtime before toolkit 1.18, mode = "legacy") evaluates the image\'s NVIDIA_REQUIRE_CUDA on every GPU and refuses to start the container: "{{condition}}" (driver {{driver}} reports CUDA {{driverCuda}}; no brand term admits {{gpus}}). Use an image whose CUDA the driver supports, upgrade the driver, or start containers through CDI (which does not check it). Source: {{source}}',
  requireCudaBrand:
    "The container starts when any space-separated term holds; on the fleet's driver only terms that name a GPU brand do. Source: {{source}}",
  requireCuda:
    'The NVIDIA container runtime starts a container only when one space-separated term of NVIDIA_REQUIRE_CUDA holds for the host; none does for {{driver}}. Lower the requirement or upgrade the fleet. Source: {{source}}',
  driverInImage:
    'Containers use the host\'s kernel driver; the NVIDIA container toolkit mounts the matching user-space libraries at run time. Driver libraries baked into an image break with "Failed to initialize NVML: Driver/library version mismatch" whenever the host driver differs. Remove the package and let the toolkit inject the driver.',
  minor:
    "Driver {{fleet}} is a CUDA {{major}}.x driver, so CUDA {{cuda}} code runs under minor-version compatibility: PTX that is newer than the driver cannot be JIT-compiled, and APIs added after the driver's CUDA version fail with cudaErrorCallRequiresNewerDriver. Needed for everything: >= {{needed}} (CUDA {{row}}). Sources: {{sources}}",
};

/** The rule's messages, by id: `MessageId` types the helpers' reporter, so a misspelt id does not compile. */
const MESSAGES = {
  major: '{{subject}} needs CUDA {{major}}.x, which needs NVIDIA driver >= {{floor}}; the fleet runs {{fleet}}',
  release: '{{subject}} needs CUDA {{cuda}}, which needs NVIDIA driver >= {{needed}}; the fleet runs {{fleet}}',
  forwardCompat:
    "{{subject}} needs CUDA {{cuda}}; on the fleet's {{fleet}} it runs only through forward compatibility ({{package}} in the image, data-center GPUs only)",
  minor:
    '{{subject}} targets CUDA {{cuda}}, whose full feature set needs driver >= {{needed}}; the fleet runs {{fleet}}, so it runs only under minor-version compatibility',
  requireCuda:
    'NVIDIA_REQUIRE_CUDA ({{value}}) accepts no driver the fleet runs ({{fleet}}): the container runtime will refuse to start',
  requireCudaBrand: "NVIDIA_REQUIRE_CUDA ({{value}}) accepts the fleet's {{fleet}} only on {{brands}} GPUs",
  driverInImage:
    '{{name}} installs NVIDIA driver {{branch}} libraries into the image; they must match the host kernel driver{{fleetNote}}',
  noPool: '{{subject}} needs CUDA {{cuda}}, which no pool of the fleet can run: {{fails}}',
  refused: '{{subject}}: the NVIDIA Container Toolkit refuses to start it on driver {{driver}} ({{condition}})',
  refusedEverywhere:
    '{{subject}}: the NVIDIA Container Toolkit refuses to start it on every pool it may run on, {{pools}} ({{condition}})',
  somePools: '{{subject}} needs CUDA {{cuda}}: it runs on {{runs}}, not on {{fails}}',
  poolsCompat: '{{subject}} targets CUDA {{cuda}}: {{how}}',
  pinned: '{{subject}} needs CUDA {{cuda}}, which no pool it is scheduled on can run: {{fails}}',
  unmatched: '{{workload}} container {{container}}: {{why}}, so it is judged on every pool',
  noDockerfile:
    '{{workload}} container {{container}}: {{path}}, named as the Dockerfile of {{image}}, is not in the repository',
};
type MessageId = keyof typeof MESSAGES;

export default defineRule({
  id: 'driver-floor',
  description: 'What images and wheels need from the NVIDIA driver is within what the fleet runs',
  defaultSeverity: 'error',
  fix: 'none',
  messages: MESSAGES,
  helps: HELPS,
  check({ units, files, kb, baseline, report, verdict }) {
    if (baseline.pools.length > 0) {
      checkPools(
        { units, files, kb, report, verdict },
        { pools: baseline.pools, stated: baseline.driver.forwardCompat },
      );
      checkContainers(units, report);
      return;
    }
    const fleet = baseline.driver.minimum;
    for (const file of files) checkDriverPackages(file, fleet, report);
    if (!fleet) return;
    const forward = fleetForwardCompat(baseline.driver.forwardCompat, baseline.gpus, kb);
    eachClaim(units, kb, (claim, compat) =>
      checkClaim(claim, { driver: fleet, compat, forward }, kb, withOrigin(claim, report)),
    );
    for (const file of files) checkRequireCuda(file, fleet, kb, report);
    checkContainers(units, report);
  },
});

const IMAGES_HELP =
  'Name the Dockerfile that builds it: `images: { "<image name>": "<path to Dockerfile>" }` in the baseline, or the annotation `cuda-gatekeeper.io/dockerfile: <path>` on the workload or its pod template.';

/**
 * What a GPU container leaves unjudged, said rather than passed in silence: a Dockerfile named for its image that is
 * not there (an image whose CUDA nothing says is image-unknown's).
 */
function checkContainers(units: readonly Unit[], report: Reporter<MessageId>): void {
  for (const unit of units) {
    const container = unit.container;
    if (!container) continue;
    const { fact } = container;
    const base = { workload: fact.workload, container: fact.name, image: fact.image.reference };
    if (container.missing) {
      report({
        messageId: 'noDockerfile',
        data: {
          ...base,
          path: container.missing,
          says: container.claims.length ? '' : ', which says none',
          images: IMAGES_HELP,
        },
        file: unit.root,
        span: fact.dockerfile!.span,
        severity: 'warning',
      });
    }
  }
}

/** A reporter that adds, for a claim carried from a Dockerfile to a manifest, where the Dockerfile says it. */
function withOrigin(claim: CudaClaim, report: Reporter<MessageId>): Reporter<MessageId> {
  if (!claim.origin) return report;
  return (draft) => report({ ...draft, related: [...(draft.related ?? []), ...originRelated(claim)] });
}

const MVC = 'https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html';
const TOOLKIT =
  'libnvidia-container src/cli/dsl.c and configure.c; NVIDIA/nvidia-container-toolkit#1470 (CDI modes do not check NVIDIA_REQUIRE_*)';

/** A pool's nodes refuse the container on the legacy path: the draft a pool verdict carries. */
function refusedDraft(
  claim: CudaClaim,
  pool: Pool,
  condition: string,
  requirements: StageRequirements,
  kb: KnowledgeBase,
): Draft<MessageId> {
  return {
    messageId: 'refused',
    data: {
      subject: claim.subject,
      condition,
      driver: pool.driver,
      driverCuda: kb.driverCuda(pool.driver) ?? 'not known',
      gpus: pool.gpus.length ? pool.gpus.join(', ') : 'GPUs the pool does not name',
      source: `${cite(requirements.record)}; ${TOOLKIT}`,
    },
    file: claim.file,
    span: claim.span,
  };
}
const FORWARD = 'https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html';
const REQUIRE = 'https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html';

/**
 * Whether the unit runs on an image of NVIDIA's that ships cuda-compat (nvidia/cuda, NGC): forward compatibility is
 * possible there.
 */
function compatImage(unit: Pick<Unit, 'claims'>, kb: KnowledgeBase): boolean {
  return unit.claims.some(
    (claim) =>
      claim.kind === 'image' &&
      claim.image !== undefined &&
      (kb.isNvidiaCuda(claim.image.registry, claim.image.repository) ||
        (claim.image.registry === 'nvcr.io' && claim.image.repository.startsWith('nvidia/'))),
  );
}

/**
 * What a claim is judged on: the driver (the fleet's, or one pool's), whether the unit's image ships cuda-compat,
 * and what the fleet allows of forward compatibility.
 */
interface Host {
  readonly driver: string;
  readonly compat: boolean;
  readonly forward: ForwardCompat;
}

/**
 * NVIDIA's three tiers (CUDA Compatibility guide): a driver at or above the claimed release's own Table 3 row runs
 * it fully; below that but at or above the major's minor-version-compatibility floor it runs with a limited feature
 * set (a warning); below both it does not run, unless an NVIDIA image's cuda-compat package covers the driver's
 * branch on a data-center GPU (forward compatibility). Reports at most one finding; returns whether it did.
 */
function checkClaim(
  claim: CudaClaim,
  { driver: fleet, compat, forward }: Host,
  kb: KnowledgeBase,
  report: Reporter<MessageId>,
): boolean {
  const forwardCompat = forward.allowed;
  const major = cudaMajor(claim.cuda);
  const floor = kb.driverFloor(major);
  if (!floor) return false;
  const cuda = claimCuda(claim);
  const need = claim.precision === 'minor' ? kb.minDriver(claim.cuda) : undefined;
  // Its own row: full support (CUDA 11.0.3 on 450.51.06).
  if (need && compareDotted(fleet, need.linux) >= 0) return false;
  const unverified = isUnverified(floor) || isUnverified(claim.record) || isUnverified(need?.row);
  // Below the major's floor, only the major matters: an unverified row whose major is certain still fails for sure.
  const majorUnverified = isUnverified(floor) || (isUnverified(claim.record) && !majorCertain(claim, major, kb));
  if (claim.precision !== 'minor' && compareDotted(fleet, floor.linux) >= 0) return false;
  if (compareDotted(fleet, floor.linux) < 0) {
    // A major-only claim (cupy-cuda11x) may be the oldest minor of the major: below that one's own row it cannot run.
    const lowest = kb.lowestDriver(major);
    if (claim.precision !== 'minor' && lowest?.linux && compareDotted(fleet, lowest.linux) >= 0) return false;
    const pkg = kb.forwardCompat(cuda);
    const branch = branchOf(fleet);
    if (compat && forwardCompat !== false && pkg && pkg.compatibleBranches.includes(branch)) {
      report({
        messageId: 'forwardCompat',
        data: {
          subject: claim.subject,
          cuda,
          fleet,
          package: pkg.package,
          branches: pkg.compatibleBranches.filter((b) => b < branchOf(floor.linux)).join(', R'),
          fleetNote: forwardCompat
            ? forward.reason
              ? ` Here ${forward.reason}.`
              : ''
            : ` ${forward.reason ? `Here ${forward.reason}; say` : 'Say'} which fleet this is with gpus: [...] or driver.forwardCompat: true (data-center) or false in the baseline.`,
          sources: `${imageSource(claim)}${cite(pkg)}; ${FORWARD}`,
        },
        file: claim.file,
        span: claim.span,
        severity: forwardCompat ? 'notice' : 'warning',
        unverified: unverified || isUnverified(pkg),
      });
      return true;
    }
    const compatNote = compat
      ? forwardCompat === false && pkg?.compatibleBranches.includes(branch)
        ? ` Forward compatibility (${pkg.package}) covers R${branch} only on data-center GPUs: ${forward.reason ?? 'the baseline says this fleet has none (driver.forwardCompat: false)'}.`
        : ` Forward compatibility (cuda-compat) does not cover R${branch}${forwardCompat === false ? ' on this fleet' : ''}.`
      : '';
    if (need && compareDotted(need.linux, floor.linux) < 0) {
      // Below the major's minor-version floor, a release whose own row is lower (CUDA 11.0.x: 450.51.06 against the
      // 11.x floor 450.80.02) runs from its own row: that is the driver to name, not the floor.
      report({
        messageId: 'release',
        data: {
          subject: claim.subject,
          cuda,
          needed: need.linux,
          fleet,
          row: rowLabel(need),
          floor: floor.linux,
          major,
          compatNote,
          sources: `${imageSource(claim)}${cite(need.row)}; ${MVC}`,
        },
        file: claim.file,
        span: claim.span,
        unverified,
      });
      return true;
    }
    report({
      messageId: 'major',
      data: {
        subject: claim.subject,
        major,
        floor: floor.linux,
        fleet,
        compatNote,
        previous: major - 1,
        sources: `${imageSource(claim)}${cite(floor)}; ${MVC}`,
      },
      file: claim.file,
      span: claim.span,
      unverified: majorUnverified,
    });
    return true;
  }
  if (!need) return false;
  report({
    messageId: 'minor',
    data: {
      subject: claim.subject,
      cuda,
      needed: need.linux,
      fleet,
      major,
      row: rowLabel(need),
      sources: `${imageSource(claim)}${cite(need.row)}; ${MVC}`,
    },
    file: claim.file,
    span: claim.span,
    severity: 'warning',
    unverified,
  });
  return true;
}

/** Whether the claim's CUDA major is certain though its row is unverified (an NGC tag past a verified one). */
function majorCertain(claim: CudaClaim, major: number, kb: KnowledgeBase): boolean {
  const image = claim.image;
  if (claim.kind !== 'image' || image?.registry !== 'nvcr.io' || !image.tag) return false;
  return kb.ngcMajorAtLeast(image.repository, image.tag, major);
}

/**
 * Where an NGC or vendor image's CUDA comes from, for the sources of its finding: the release notes or build row, or
 * the tag that names it. nvidia/cuda tags and wheels carry their CUDA in what is written, which the message quotes.
 */
function imageSource(claim: CudaClaim): string {
  if (claim.kind !== 'image' || !claim.image) return '';
  if (!claim.record && claim.image.registry !== 'nvcr.io') return '';
  return claim.record
    ? `${claim.subject} is CUDA ${claim.cuda}: ${cite(claim.record)}; `
    : `${claim.subject} names CUDA ${claim.cuda} in its tag; `;
}

/** The driver table row a release's need comes from: `12.4 Update 1`, or `…, nearest published row`. */
function rowLabel(need: { readonly row: { readonly label: string }; readonly exactRow: boolean }): string {
  return `${need.row.label}${need.exactRow ? '' : ', nearest published row'}`;
}

/** What one pool makes of a claim: it runs it, only under a compatibility mode, or not at all (with the reason). */
type PoolVerdict =
  | { readonly pool: Pool; readonly tier: 'runs' }
  | { readonly pool: Pool; readonly tier: 'minor' | 'forward' | 'fails'; readonly draft: Draft<MessageId> };

/** The fleet a pool check judges against: its pools, and what the baseline says of forward compatibility. */
interface Fleet {
  readonly pools: readonly Pool[];
  readonly stated: boolean | undefined;
}

/**
 * The fleet as pools (baseline `fleet.pools`): each claim is judged on every pool with the pool's own driver and
 * GPUs (forward compatibility only where the pool's product line allows it), and reported once. An error only when
 * no pool can run it; a warning naming the pools that cannot when some can; a warning (minor-version compatibility)
 * or notice (forward compatibility) naming the pools that run it only that way.
 */
function checkPools(
  { units, files, kb, report, verdict }: Pick<RuleContext, 'units' | 'files' | 'kb' | 'report' | 'verdict'>,
  fleet: Fleet,
): void {
  const { pools, stated } = fleet;
  for (const file of files) {
    // Driver libraries in an image must match the host driver of every pool it runs on: an error when no pool runs that
    // branch.
    const probes = pools.map((pool) => collect((probe) => checkDriverPackages(file, pool.driver, probe)));
    for (const [i, draft] of (probes[0] ?? []).entries()) {
      const matches = probes.some((drafts) => drafts[i]?.severity !== 'error');
      report({
        ...draft,
        severity: matches ? 'warning' : 'error',
        data: {
          ...draft.data,
          fleetNote: ` (the pools run ${pools.map((pool) => `${pool.name} ${pool.driver}`).join(', ')})`,
        },
      });
    }
  }
  // NVIDIA_REQUIRE_CUDA: a finding only where no pool's driver satisfies it.
  const fleetText = pools.map((pool) => `${pool.name} ${pool.driver}`).join(', ');
  for (const file of files) {
    const bySpan = new Map<number, Draft<MessageId>[]>();
    for (const pool of pools)
      for (const draft of collect((probe) => checkRequireCuda(file, pool.driver, kb, probe)))
        bySpan.set(draft.span.start, [...(bySpan.get(draft.span.start) ?? []), draft]);
    for (const drafts of bySpan.values())
      if (drafts.length === pools.length)
        report({ ...drafts[0]!, data: { ...drafts[0]!.data, fleet: `any pool (${fleetText})` } });
  }
  // A container's pods run only on the pools its node selection allows; said once when it allows none.
  const selections = new Map<Unit, Selection>();
  const selectionOf = (unit: Unit): Selection => {
    let selection = selections.get(unit);
    if (!selection) {
      selection = selectPools(pools, unit.container?.fact.placement, kb);
      selections.set(unit, selection);
      if (selection.unmatched && unit.container)
        report({
          messageId: 'unmatched',
          data: {
            workload: unit.container.fact.workload,
            container: unit.container.fact.name,
            why: selection.unmatched,
            labels: pools.map((pool) => `${pool.name}: ${labelsOf(pool)}`).join('; '),
          },
          file: unit.root,
          span: unit.container.fact.span,
          severity: 'warning',
        });
    }
    return selection;
  };
  // Every GPU container's selection is judged, whatever is known of its image: a pod that no pool can take stays
  // Pending.
  for (const unit of units) if (unit.container?.fact.gpu) selectionOf(unit);
  eachClaim(units, kb, (claim, compat, unit) => {
    const selection = selectionOf(unit);
    const requirements = stageRequirements(claim, kb);
    // Pools whose runtime is not said, where the legacy path would refuse the container: the message names both.
    const unsaid: string[] = [];
    const verdicts: PoolVerdict[] = selection.pools.map((pool) => {
      const [draft] = collect((probe) =>
        checkClaim(claim, { driver: pool.driver, compat, forward: poolForwardCompat(pool, stated, kb) }, kb, probe),
      );
      const start = requirements ? startOn(pool, requirements, kb) : undefined;
      if (start && 'refused' in start && pool.runtime === 'legacy')
        return { pool, tier: 'fails', draft: refusedDraft(claim, pool, start.refused, requirements!, kb) };
      if (start && 'refused' in start && pool.runtime === undefined)
        unsaid.push(`${pool.name}: ${helpText(HELPS, refusedDraft(claim, pool, start.refused, requirements!, kb))}`);
      if (!draft) return { pool, tier: 'runs' };
      const tier = draft.messageId === 'minor' ? 'minor' : draft.messageId === 'forwardCompat' ? 'forward' : 'fails';
      return { pool, tier, draft };
    });
    for (const entry of verdicts)
      verdict({
        unit: unit.label,
        file: claim.file,
        span: claim.span,
        pool: entry.pool.name,
        tier: entry.tier,
        ...(entry.tier === 'runs' ? {} : { reason: tierReason(claim, entry) }),
      });
    for (const pool of pools)
      if (!selection.pools.includes(pool))
        verdict({
          unit: unit.label,
          file: claim.file,
          span: claim.span,
          pool: pool.name,
          tier: 'not-scheduled',
          reason: `not selected by ${selection.by.join(', ')}`,
        });
    if (verdicts.every((verdict) => verdict.tier === 'runs')) return false;
    const reportClaim = withOrigin(claim, withSelection(unit, selection, report));
    const named = (list: readonly PoolVerdict[]) =>
      list.map((verdict) => `${verdict.pool.name} (driver ${verdict.pool.driver})`).join(', ');
    const failing = verdicts.filter((verdict) => verdict.tier === 'fails');
    const running = verdicts.filter((verdict) => verdict.tier !== 'fails');
    const reasons = [
      ...verdicts
        .filter((verdict): verdict is Extract<PoolVerdict, { draft: Draft<MessageId> }> => verdict.tier !== 'runs')
        .map((verdict) => `${verdict.pool.name}: ${helpText(HELPS, verdict.draft) ?? ''}`),
      ...(unsaid.length
        ? [
            `Where the runtime is not said (${unsaid.map((line) => line.split(':')[0]).join(', ')}): under CDI (the nvidia runtime's default from toolkit 1.18.0) the container starts as above; in legacy mode it does not. ${unsaid.join(' ')} Say runtime: legacy or cdi for the pool in the baseline.`,
          ]
        : []),
    ].join(' ');
    const unverified = verdicts.some((verdict) => verdict.tier !== 'runs' && verdict.draft.unverified === true);
    const cuda = claimCuda(claim);
    const pinned = selection.narrowed
      ? ` It is scheduled only on ${selection.pools.map((pool) => pool.name).join(', ')} (${selection.by.join(', ')}).`
      : '';
    const common = { file: claim.file, span: claim.span, unverified };
    const refusals = failing.filter(
      (verdict): verdict is Extract<PoolVerdict, { draft: Draft<MessageId> }> =>
        verdict.tier === 'fails' && verdict.draft.messageId === 'refused',
    );
    if (failing.length > 0 && running.length === 0 && refusals.length === failing.length) {
      // Refused by the container toolkit everywhere it may run: said as that, not as a driver it lacks.
      reportClaim({
        messageId: 'refusedEverywhere',
        data: {
          subject: claim.subject,
          pools: named(refusals),
          condition: String(refusals[0]!.draft.data?.condition ?? ''),
          reasons,
          pinned,
        },
        ...common,
      });
      return true;
    }
    if (failing.length > 0) {
      reportClaim({
        messageId: running.length === 0 ? (selection.narrowed ? 'pinned' : 'noPool') : 'somePools',
        data: {
          subject: claim.subject,
          cuda,
          fails: named(failing),
          reasons,
          pinned,
          runs: running
            .map(
              (verdict) =>
                `${verdict.pool.name}${verdict.tier === 'runs' ? '' : verdict.tier === 'minor' ? ' (minor-version compatibility)' : ' (forward compatibility)'}`,
            )
            .join(', '),
        },
        ...(running.length === 0 ? {} : { severity: 'warning' as const }),
        ...common,
      });
      return true;
    }
    const minor = verdicts.filter((verdict) => verdict.tier === 'minor');
    const forward = verdicts.filter(
      (verdict): verdict is Extract<PoolVerdict, { draft: Draft<MessageId> }> => verdict.tier === 'forward',
    );
    const how = [
      ...(minor.length ? [`on ${named(minor)} only under minor-version compatibility`] : []),
      ...(forward.length ? [`on ${named(forward)} only through forward compatibility (cuda-compat in the image)`] : []),
    ].join('; ');
    const forwardSeverity = forward.some((verdict) => verdict.draft.severity === 'warning') ? 'warning' : 'notice';
    reportClaim({
      messageId: 'poolsCompat',
      data: { subject: claim.subject, cuda, how, reasons, pinned },
      severity: minor.length ? 'warning' : forwardSeverity,
      ...common,
    });
    return true;
  });
}

/**
 * Each claim of the units that a driver check judges, with whether its unit runs on an NVIDIA image (cuda-compat):
 * one finding per file and CUDA version, so `check` returns whether it reported one.
 */
function eachClaim(
  units: readonly Unit[],
  kb: KnowledgeBase,
  check: (claim: CudaClaim, compat: boolean, unit: Unit) => boolean,
): void {
  const done = new Set<string>();
  for (const unit of units) {
    // A container runs its image: its own claim, or those of the Dockerfile that builds it (cuda-compat as there).
    const claims = unit.container?.claims ?? unit.claims;
    const compat = compatImage({ claims }, kb);
    for (const claim of claims) {
      if (claim.kind === 'implied' && claim.index) continue;
      // Each container is judged on its own pools, at its own image line.
      const key = `${claim.file.path}#${claimCuda(claim)}${unit.container ? `#${unit.container.fact.span.start}` : ''}`;
      if (!done.has(key) && check(claim, compat, unit)) done.add(key);
    }
  }
}

/** A table cell's reason: what the claim needs and how the pool falls short. */
function tierReason(claim: CudaClaim, verdict: Extract<PoolVerdict, { draft: Draft<MessageId> }>): string {
  const data = verdict.draft.data ?? {};
  const cuda = claimCuda(claim);
  if (verdict.tier === 'minor')
    return `CUDA ${cuda} under minor-version compatibility (all of it needs driver >= ${data.needed})`;
  if (verdict.tier === 'forward') return `CUDA ${cuda} through forward compatibility (${data.package} in the image)`;
  if (verdict.draft.messageId === 'refused')
    return `the container toolkit refuses it in legacy mode: ${data.condition} (driver ${verdict.pool.driver} is CUDA ${data.driverCuda})`;
  // 'major' names the major's floor, 'release' the release's own row.
  return `CUDA ${cuda} needs driver >= ${data.floor ?? data.needed}, the pool runs ${verdict.pool.driver}`;
}

/** A reporter that adds, for a container pinned to pools, where its node selection is written. */
function withSelection(unit: Unit, selection: Selection, report: Reporter<MessageId>): Reporter<MessageId> {
  const placement = unit.container?.fact.placement;
  if (!placement || !selection.narrowed) return report;
  const written = [...placement.selector, ...placement.terms.flat()];
  const pools = selection.pools.map((pool) => `${pool.name} (driver ${pool.driver})`).join(', ');
  return (draft) =>
    report({
      ...draft,
      related: [
        ...(draft.related ?? []),
        ...written
          .slice(0, 1)
          .map((requirement) => ({ file: unit.root, span: requirement.span, message: `schedules it on ${pools}` })),
      ],
    });
}

function labelsOf(pool: Pool): string {
  const labels = Object.entries(pool.labels).map(([key, value]) => `${key}=${value}`);
  return [...labels, ...(pool.gpus.length ? [`GPUs ${pool.gpus.join(', ')}`] : []), `driver ${pool.driver}`].join(', ');
}

/** The drafts a check reports, collected instead of reported. */
function collect(check: (probe: Reporter<MessageId>) => unknown): Draft<MessageId>[] {
  const drafts: Draft<MessageId>[] = [];
  check((draft) => drafts.push(draft));
  return drafts;
}

/**
 * A pool's forward compatibility: its product line decides (cuda-compat: data-center and Jetson GPUs only), else its
 * GPUs.
 */
function poolForwardCompat(pool: Pool, stated: boolean | undefined, kb: KnowledgeBase): ForwardCompat {
  if (pool.class === 'data-center' || pool.class === 'jetson')
    return { allowed: true, reason: `pool ${pool.name} is ${pool.class} GPUs` };
  if (pool.class === 'geforce')
    return {
      allowed: false,
      reason: `pool ${pool.name} is GeForce GPUs, on which cuda-compat fails with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804)`,
    };
  if (pool.class === 'workstation' && stated !== true)
    return {
      allowed: false,
      reason: `pool ${pool.name} is workstation GPUs: only select NGC-Server-Ready RTX SKUs support cuda-compat (if these are, set driver.forwardCompat: true)`,
    };
  return fleetForwardCompat(stated, pool.gpus, kb);
}

interface ForwardCompat {
  /** true: the fleet's GPUs may use cuda-compat; false: they may not; undefined: not known. */
  readonly allowed: boolean | undefined;
  /** Why, when the fleet's GPUs decided it. */
  readonly reason?: string;
}

/**
 * Whether forward compatibility can work on the fleet: only NVIDIA data-center GPUs, Jetson boards and select
 * NGC-Server-Ready RTX SKUs may use cuda-compat; elsewhere it fails with error 804. A GeForce GPU in the fleet rules it
 * out whatever the baseline says; a workstation RTX only if the baseline does not say the fleet's cards are such SKUs
 * (driver.forwardCompat: true); a fleet of data-center and Jetson GPUs allows it unless the baseline says false. GPUs
 * the knowledge base cannot place leave the baseline's word (or nothing) to decide.
 */
function fleetForwardCompat(stated: boolean | undefined, gpus: readonly string[], kb: KnowledgeBase): ForwardCompat {
  const placed = gpus.map((name) => ({ name, line: kb.gpu(name)?.class }));
  const geforce = placed.find((gpu) => gpu.line === 'geforce');
  if (geforce)
    return {
      allowed: false,
      reason: `the fleet's ${geforce.name} is a GeForce GPU, on which cuda-compat fails with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804)`,
    };
  const workstation = placed.find((gpu) => gpu.line === 'workstation');
  if (workstation && stated !== true)
    return {
      allowed: false,
      reason: `the fleet's ${workstation.name} is a workstation GPU: only select NGC-Server-Ready RTX SKUs support cuda-compat (if these are, set driver.forwardCompat: true)`,
    };
  if (stated !== undefined) return { allowed: stated };
  if (placed.length > 0 && placed.every((gpu) => gpu.line === 'data-center' || gpu.line === 'jetson'))
    return { allowed: true, reason: `the fleet's GPUs (${gpus.join(', ')}) are data-center or Jetson GPUs` };
  const unknown = placed.find((gpu) => !gpu.line);
  return {
    allowed: undefined,
    ...(unknown ? { reason: `the knowledge base does not know which product line ${unknown.name} is` } : {}),
  };
}

/** The branch of a driver version: 570 for 570.124.06. */
function branchOf(driver: string): number {
  return Number.parseInt(driver, 10);
}

type Verdict = 'yes' | 'no' | { readonly brands: readonly string[] };

/** One comma-separated term of NVIDIA_REQUIRE_CUDA against a fleet driver: all its constraints must hold. */
function evaluateTerm(term: string, fleet: string, kb: KnowledgeBase): Verdict {
  const brands: string[] = [];
  for (const constraint of term.split(',')) {
    const match = /^(cuda|driver|brand|arch)\s*(>=|<=|==|=|<|>)\s*(\S+)$/.exec(constraint.trim());
    if (!match) continue; // a constraint we do not model cannot make the term fail
    const [, key, op, value] = match as unknown as [string, string, string, string];
    if (key === 'brand') {
      brands.push(value);
      continue;
    }
    if (key === 'arch') continue;
    // cuda: the CUDA version the host driver supports, i.e. the driver must reach that release's own row.
    const driver = key === 'cuda' ? kb.minDriver(value)?.linux : value;
    if (!driver) continue;
    const order = compareDotted(fleet, driver);
    const holds =
      key === 'cuda'
        ? op === '>='
          ? order >= 0
          : op === '>'
            ? order > 0
            : true
        : op === '>='
          ? order >= 0
          : op === '>'
            ? order > 0
            : op === '<'
              ? compareDotted(fleet, value) < 0
              : op === '<='
                ? compareDotted(fleet, value) <= 0
                : compareDotted(fleet, value) === 0;
    if (!holds) return 'no';
  }
  return brands.length ? { brands } : 'yes';
}

/**
 * NVIDIA_REQUIRE_CUDA as the container toolkit reads it: "space-separated constraints are ORed, comma-separated
 * constraints are ANDed" (docker-specialized.html). `cuda>=12.8 brand=tesla,driver>=535,driver<536` starts on any
 * driver of CUDA 12.8 or newer, or on a Tesla GPU with an R535 driver.
 */
function checkRequireCuda(file: ParsedFile, fleet: string, kb: KnowledgeBase, report: Reporter<MessageId>): void {
  if (file.env.some((env) => env.key === 'NVIDIA_DISABLE_REQUIRE' && /^(1|true)$/i.test(env.value))) return;
  for (const env of file.env) {
    if (env.key !== 'NVIDIA_REQUIRE_CUDA' || env.value.trim() === '') continue;
    const verdicts = env.value
      .trim()
      .split(/\s+/)
      .map((term) => evaluateTerm(term, fleet, kb));
    if (verdicts.includes('yes')) continue;
    const branded = verdicts.filter((verdict): verdict is { brands: readonly string[] } => typeof verdict === 'object');
    const value = env.value.trim().length > 80 ? `${env.value.trim().slice(0, 77)}…` : env.value.trim();
    if (branded.length) {
      report({
        messageId: 'requireCudaBrand',
        data: {
          value,
          fleet,
          brands: [...new Set(branded.flatMap((verdict) => verdict.brands))].join(', '),
          source: REQUIRE,
        },
        file,
        span: env.span,
        severity: 'warning',
      });
      continue;
    }
    report({
      messageId: 'requireCuda',
      // `driver` stays the driver judged when a pool check names every pool in `fleet`.
      data: { value, fleet, driver: fleet, source: REQUIRE },
      file,
      span: env.span,
    });
  }
}

function checkDriverPackages(file: ParsedFile, fleet: string | undefined, report: Reporter<MessageId>): void {
  for (const pkg of file.packages) {
    const branch =
      pkg.ecosystem === 'apt'
        ? /^(?:nvidia-(?:driver|dkms|utils|compute-utils)|libnvidia-compute)-(\d{3})(?:-server|-open)?$/.exec(
            pkg.name,
          )?.[1]
        : undefined;
    if (!branch) continue;
    const fleetBranch = fleet?.split('.')[0];
    const mismatch = fleetBranch !== undefined && fleetBranch !== branch;
    report({
      messageId: 'driverInImage',
      data: { name: pkg.rawName, branch, fleetNote: fleet ? ` (the fleet runs ${fleet})` : '' },
      file,
      span: pkg.span,
      severity: mismatch ? 'error' : 'warning',
    });
  }
}
