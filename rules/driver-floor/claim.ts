/**
 * One claim judged on one driver: NVIDIA's three tiers (full support, minor-version compatibility, forward
 * compatibility through an NVIDIA image's cuda-compat), and the claims of the units a driver check judges.
 */
import { imageFullName } from '../../src/parsers/image-ref.js';
import { claimCuda, majorCertain, originRelated, pickSubject, type CudaClaim } from '../../src/analysis/claims.js';
import type { Unit } from '../../src/analysis/units.js';
import { cite, isUnverified, type DriverNeed, type KnowledgeBase } from '../../src/knowledge/index.js';
import { heldLess, type Draft, type Reporter } from '../../src/rule.js';
import type { ParsedFile } from '../../src/parsers/facts.js';
import { buildStageCopy, fleetScope } from '../../src/analysis/runs.js';
import { cudaMajor } from '../../src/knowledge/versions.js';
import { compareDotted } from '../../src/util/dotted.js';
import { HELPS, type MessageId } from './messages.js';
import type { ForwardCompat } from './forward-compat.js';

/** A reporter that adds, for a claim carried from a Dockerfile to a manifest, where the Dockerfile says it. */
export function withOrigin(claim: CudaClaim, report: Reporter<MessageId>): Reporter<MessageId> {
  if (!claim.origin) return report;
  return (draft) => report({ ...draft, related: [...(draft.related ?? []), ...originRelated(claim)] });
}

export const MVC = 'https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html';

export const FORWARD = 'https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html';

/**
 * Whether the unit runs on an image that ships NVIDIA's cuda-compat: nvidia/cuda and NGC images, and the vendor images
 * the knowledge base reads the CUDA of (vLLM, SGLang, Ray, runpod: each built FROM an nvidia/cuda image, whose
 * cuda-compat it keeps; images.json `vendor`). Forward compatibility is possible there.
 */
export function compatImage(unit: Pick<Unit, 'claims' | 'packages' | 'container'>, kb: KnowledgeBase): boolean {
  // A stage that installs NVIDIA's forward-compatibility package itself (`apt-get install cuda-compat-13-2`, as the
  // GPU Operator's image does: docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html, "Installing the
  // cuda-compat package"). A container runs its image's claims (those of the Dockerfile that builds it).
  if (!unit.container && unit.packages.some(({ pkg }) => pkg.ecosystem === 'apt' && CUDA_COMPAT.test(pkg.name)))
    return true;
  return (unit.container?.claims ?? unit.claims).some((claim) => {
    const image = claim.kind === 'image' ? claim.image : undefined;
    if (!image) return false;
    if (kb.isNvidiaCuda(image.registry, image.repository)) return true;
    if (image.registry === 'nvcr.io' && image.repository.startsWith('nvidia/')) return true;
    const name = imageFullName(image);
    const vendor = image.tag === undefined ? undefined : kb.vendorImage(name, image.tag);
    return vendor !== undefined && !('cudaCompat' in vendor.record && vendor.record.cudaCompat === false);
  });
}

/** NVIDIA's forward-compatibility packages: `cuda-compat-12-4`. */
const CUDA_COMPAT = /^cuda-compat-\d+-\d+$/;

/**
 * What a claim is judged on: the driver (the fleet's, or one pool's), whether the unit's image ships cuda-compat,
 * and what the fleet allows of forward compatibility.
 */
export interface Host {
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
export function checkClaim(
  claim: CudaClaim,
  { driver: fleet, compat, forward }: Host,
  kb: KnowledgeBase,
  report: Reporter<MessageId>,
): boolean {
  const forwardCompat = forward.allowed;
  const major = cudaMajor(claim.cuda);
  const floor = kb.driverFloor(major);
  const cuda = claimCuda(claim);
  const need = claim.precision === 'minor' ? kb.minDriver(claim.cuda) : undefined;
  if (!floor) return need ? checkBeforeCompat(claim, need, fleet, report) : false;
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
          subject: pickSubject(claim),
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
    // NGC release notes allow older data-center branches than NVIDIA's forward-compatibility table lists today
    // ("470.57 (or later R470) … on data center GPUs" for CUDA 12.3 containers, where the table lists R535 on): two
    // NVIDIA sources disagree, so it is no certain failure, and no certain run either (a warning).
    const notes =
      compat && forwardCompat !== false && claim.kind === 'image' && claim.image?.registry === 'nvcr.io'
        ? kb.ngcDataCenterDriver(claim.image.repository, claim.image.tag ?? '', major, branch)
        : undefined;
    if (notes && compareDotted(fleet, notes.minimum) >= 0) {
      report({
        messageId: 'forwardCompat',
        data: {
          subject: pickSubject(claim),
          cuda,
          fleet,
          package: 'its cuda-compat',
          branches: String(branch),
          fleetNote: ` Its release notes allow R${branch} (>= ${notes.minimum}) on data-center GPUs, but NVIDIA's forward-compatibility table ${pkg?.compatibleBranches.length ? `lists only R${pkg.compatibleBranches.join(', R')} for ${pkg.package}` : `lists no branch for CUDA ${cuda}`} today: it may not start. An R${pkg?.compatibleBranches[0] ?? branchOf(floor.linux)} or newer driver runs it for sure.${forward.reason ? ` Here ${forward.reason}.` : ''}`,
          sources: `${imageSource(claim)}${cite(notes.row)}; ${pkg ? `${cite(pkg)}; ` : ''}${FORWARD}`,
        },
        file: claim.file,
        span: claim.span,
        severity: 'warning',
        // As certain as the failure it stands for (below the major's floor), not softened by an unverified notes
        // row: were the row wrong, the image would fail here.
        unverified: majorUnverified,
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
          subject: pickSubject(claim),
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
        subject: pickSubject(claim),
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
      subject: pickSubject(claim),
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

/**
 * Where an NGC or vendor image's CUDA comes from, for the sources of its finding: the release notes or build row, or
 * the tag that names it. nvidia/cuda tags and wheels carry their CUDA in what is written, which the message quotes.
 */
export function imageSource(claim: CudaClaim): string {
  if (claim.kind !== 'image' || !claim.image) return '';
  if (!claim.record && claim.image.registry !== 'nvcr.io') return '';
  return claim.record
    ? `${claim.subject} is CUDA ${claim.cuda}: ${cite(claim.record)}; `
    : `${claim.subject} names CUDA ${claim.cuda} in its tag; `;
}

/**
 * A CUDA release before 11.0, which has no minor-version compatibility (NVIDIA's CUDA Compatibility guide: it starts
 * with CUDA 11) and no forward-compatibility package for today's drivers: it runs from its own Table 3 row only.
 */
function checkBeforeCompat(claim: CudaClaim, need: DriverNeed, fleet: string, report: Reporter<MessageId>): boolean {
  if (compareDotted(fleet, need.linux) >= 0) return false;
  report({
    messageId: 'beforeCompat',
    data: {
      subject: pickSubject(claim),
      cuda: claimCuda(claim),
      needed: need.linux,
      fleet,
      row: rowLabel(need),
      sources: `${imageSource(claim)}${cite(need.row)}; ${MVC}`,
    },
    file: claim.file,
    span: claim.span,
    unverified: isUnverified(claim.record) || isUnverified(need.row),
  });
  return true;
}

/** The driver table row a release's need comes from: `12.4 Update 1`, or `…, nearest published row`. */
export function rowLabel(need: { readonly row: { readonly label: string }; readonly exactRow: boolean }): string {
  return `${need.row.label}${need.exactRow ? '' : ', nearest published row'}`;
}

/**
 * Each claim of the units that a driver check judges, with whether its unit runs on an NVIDIA image (cuda-compat) and
 * the reporter for the unit (heldLess): one finding per file and CUDA version, so `check` returns whether it reported
 * one. Units the checked files say do not run on the fleet as they are (a stage only built to be copied from, a
 * Dockerfile run only without GPUs, pip-compile's input) are judged last: a CUDA they share with what runs is
 * reported where it runs.
 */
export function eachClaim(
  units: readonly Unit[],
  files: readonly ParsedFile[],
  kb: KnowledgeBase,
  report: Reporter<MessageId>,
  check: (claim: CudaClaim, compat: boolean, unit: Unit, report: Reporter<MessageId>) => boolean,
): void {
  const scope = fleetScope(files, kb);
  const done = new Set<string>();
  const judge = (unit: Unit): void => {
    const claims = unit.container?.claims ?? unit.claims;
    const compat = compatImage(unit, kb);
    const unitReport = heldLess(unit, scope, HELPS, report);
    // A lock's torch first: the finding of one CUDA per file is said where its cause is, at torch.
    for (const claim of torchFirst(claims)) {
      if (claim.kind === 'implied' && claim.index) continue;
      // Each container is judged on its own pools, at its own image line.
      const where = `${claim.file.path}${unit.container ? `#${unit.container.fact.span.start}` : ''}`;
      const key = `${where}#${claimCuda(claim)}`;
      // A claim of a major alone (cuda-bindings==13.2.0: "CUDA 13") says no more than a finding already made there of
      // a release of that major (torch 2.11.0's CUDA 13.0, which needs what every 13.x needs).
      const major = `${where}#${cudaMajor(claim.cuda)}.x`;
      if (done.has(key) || (claim.precision === 'major' && done.has(major))) continue;
      if (check(claim, compat, unit, unitReport)) {
        done.add(key);
        done.add(major);
      }
    }
  };
  const later: Unit[] = [];
  for (const unit of units) {
    // A container runs its image: its own claim, or those of the Dockerfile that builds it (cuda-compat as there).
    // A library's pyproject.toml checked on its own (ParsedFile.library): its ranges are its users' resolvers', and
    // what it runs on is judged where it is installed (a Dockerfile's `pip install .`), not on the fleet here.
    if (!unit.container && unit.stage === undefined && unit.root.library) continue;
    if (scope.notRun(unit) || buildStageCopy(unit)) later.push(unit);
    else judge(unit);
  }
  for (const unit of later) judge(unit);
}

/**
 * A unit's claims with a lock's torch before the lock's other packages (stable otherwise): a lock lists the CUDA
 * libraries torch depends on (nvidia-cuda-cupti-cu12, cuda-bindings) before torch itself.
 */
function torchFirst(claims: readonly CudaClaim[]): readonly CudaClaim[] {
  const locked = (claim: CudaClaim): boolean => claim.package !== undefined && claim.file.kind.endsWith('-lock');
  const torch = claims.filter((claim) => locked(claim) && claim.package!.name === 'torch');
  if (torch.length === 0) return claims;
  const first = claims.findIndex(locked);
  const rest = claims.filter((claim) => !torch.includes(claim));
  const at = rest.findIndex(locked);
  return first < 0 || at < 0 ? claims : [...rest.slice(0, at), ...torch, ...rest.slice(at)];
}

/** The drafts a check reports, collected instead of reported. */
export function collect(check: (probe: Reporter<MessageId>) => unknown): Draft<MessageId>[] {
  const drafts: Draft<MessageId>[] = [];
  check((draft) => drafts.push(draft));
  return drafts;
}

/** The branch of a driver version: 570 for 570.124.06. */
export function branchOf(driver: string): number {
  return Number.parseInt(driver, 10);
}
