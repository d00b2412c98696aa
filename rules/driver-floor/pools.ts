/**
 * The fleet as pools (baseline `fleet.pools`): each claim judged on every pool it may be scheduled on, with each pool's
 * own driver, GPUs and container runtime; one finding per claim, and the verdicts of the report's pool table.
 */
import { claimCuda, pickSubject, type CudaClaim } from '../../src/analysis/claims.js';
import type { Unit } from '../../src/analysis/units.js';
import { cite, type KnowledgeBase } from '../../src/knowledge/index.js';
import type { Pool } from '../../src/baseline/schema.js';
import { helpText, type Draft, type Reporter, type RuleContext } from '../../src/rule.js';
import { selectPools, unitPlacement, type Selection } from '../../src/analysis/placement.js';
import { stageRequirements, startOn, type StageRequirements } from './toolkit-start.js';
import { HELPS, type MessageId } from './messages.js';
import { checkClaim, collect, eachClaim, withOrigin } from './claim.js';
import { poolForwardCompat } from './forward-compat.js';
import { checkAlternatives } from './alternatives.js';
import { checkDriverPackages, checkRequireCuda } from './require-cuda.js';

export const TOOLKIT =
  'libnvidia-container src/cli/dsl.c and configure.c; NVIDIA/nvidia-container-toolkit#1470 (CDI modes do not check NVIDIA_REQUIRE_*)';

/** A pool's nodes refuse the container on the legacy path: the draft a pool verdict carries. */
export function refusedDraft(
  claim: CudaClaim,
  pool: Pool,
  condition: string,
  requirements: StageRequirements,
  kb: KnowledgeBase,
): Draft<MessageId> {
  return {
    messageId: 'refused',
    data: {
      subject: pickSubject(claim),
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

/** What one pool makes of a claim: it runs it, only under a compatibility mode, or not at all (with the reason). */
export type PoolVerdict =
  | { readonly pool: Pool; readonly tier: 'runs' }
  | { readonly pool: Pool; readonly tier: 'minor' | 'forward' | 'fails'; readonly draft: Draft<MessageId> };

/** The fleet a pool check judges against: its pools, and what the baseline says of forward compatibility. */
export interface Fleet {
  readonly pools: readonly Pool[];
  readonly stated: boolean | undefined;
}

/**
 * The fleet as pools (baseline `fleet.pools`): each claim is judged on every pool with the pool's own driver and
 * GPUs (forward compatibility only where the pool's product line allows it), and reported once. An error only when
 * no pool can run it; a warning naming the pools that cannot when some can; a warning (minor-version compatibility)
 * or notice (forward compatibility) naming the pools that run it only that way.
 */
export function checkPools(
  { units, files, kb, report, verdict }: Pick<RuleContext, 'units' | 'files' | 'kb' | 'report' | 'verdict'>,
  fleet: Fleet,
): void {
  const { pools, stated } = fleet;
  for (const file of files) {
    // Driver libraries in an image must match the host driver of every pool it runs on: an error when no pool runs that
    // branch.
    // Each pool's drafts keyed by where they are written, not by their order in the list.
    const byPlace = new Map<number, { readonly draft: Draft<MessageId>; readonly erring: Set<string> }>();
    for (const pool of pools)
      for (const draft of collect((probe) => checkDriverPackages(file, pool.driver, probe))) {
        const entry = byPlace.get(draft.span.start) ?? { draft, erring: new Set<string>() };
        if (draft.severity === 'error') entry.erring.add(pool.name);
        byPlace.set(draft.span.start, entry);
      }
    for (const { draft, erring } of byPlace.values()) {
      report({
        ...draft,
        severity: erring.size === pools.length ? 'error' : 'warning',
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
        report({
          ...drafts[0]!,
          // Every pool's driver, as the message's noun: "accepts no driver the fleet runs (a100 550.127.05, …)",
          // "accepts the fleet's drivers (…) only on tesla GPUs".
          data: {
            ...drafts[0]!.data,
            fleet: drafts[0]!.messageId === 'requireCudaBrand' ? `drivers (${fleetText})` : fleetText,
          },
        });
  }
  // A container's pods run only on the pools its node selection allows; said once when it allows none.
  const selections = new Map<Unit, Selection>();
  const selectionOf = (unit: Unit): Selection => {
    let selection = selections.get(unit);
    if (!selection) {
      selection = unit.root.offFleet
        ? { pools: [], narrowed: true, by: [] }
        : selectPools(pools, unitPlacement(unit), kb);
      // A task that names GPUs no pool has (a SkyPilot task for a cloud's H100s) does not run on the fleet.
      if (!unit.container && selection.unmatched) selection = { pools: [], narrowed: true, by: selection.by };
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
  eachClaim(units, files, kb, report, (claim, compat, unit, unitReport) => {
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
    const reportClaim = withOrigin(claim, withSelection(unit, selection, unitReport));
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
    // As certain as what it says: where some pool cannot run it, that (its major's floor on those pools), not a
    // pool's own minor-version row (NGC 26.06's CUDA 13.3 row is unverified; that R550 runs no CUDA 13 is not).
    const failingNow = verdicts.some((verdict) => verdict.tier === 'fails');
    const unverified = verdicts.some(
      (verdict) =>
        verdict.tier !== 'runs' && (!failingNow || verdict.tier === 'fails') && verdict.draft.unverified === true,
    );
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
          subject: pickSubject(claim),
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
          subject: pickSubject(claim),
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
      data: { subject: pickSubject(claim), cuda, how, reasons, pinned },
      severity: minor.length ? 'warning' : forwardSeverity,
      ...common,
    });
    return true;
  });
  checkAlternatives({ units, files, kb, report }, (unit) => {
    const selection = selectionOf(unit);
    return {
      hosts: selection.pools.map((pool) => ({
        name: pool.name,
        label: `${pool.name} (driver ${pool.driver})`,
        driver: pool.driver,
        forward: poolForwardCompat(pool, stated, kb),
      })),
      report: (to) => withSelection(unit, selection, to),
      pinned: selection.narrowed
        ? ` It is scheduled only on ${selection.pools.map((pool) => pool.name).join(', ')} (${selection.by.join(', ')}).`
        : '',
      verdict: (claim, pool, tier, reason) =>
        verdict({ unit: unit.label, file: claim.file, span: claim.span, pool, tier, ...(reason ? { reason } : {}) }),
    };
  });
}

/** A table cell's reason: what the claim needs and how the pool falls short. */
export function tierReason(claim: CudaClaim, verdict: Extract<PoolVerdict, { draft: Draft<MessageId> }>): string {
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
export function withSelection(unit: Unit, selection: Selection, report: Reporter<MessageId>): Reporter<MessageId> {
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

export function labelsOf(pool: Pool): string {
  const labels = Object.entries(pool.labels).map(([key, value]) => `${key}=${value}`);
  return [...labels, ...(pool.gpus.length ? [`GPUs ${pool.gpus.join(', ')}`] : []), `driver ${pool.driver}`].join(', ');
}
