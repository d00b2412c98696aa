/**
 * Upgrade planning: the exact edits that move a set of files to a target CUDA version. Pure, like the gate.
 *
 * A unit (one Dockerfile stage and what it installs, one requirements set, one conda environment) moves only as a
 * whole: its image, torch with torchvision and torchaudio, the index URLs, conda pins, and the packages built
 * against one torch (xformers, triton, torchtext, torchdata), each to a build the knowledge base says exists. A
 * unit with anything that cannot move (a wheel page built per torch minor, a CUDA wheel of another project, a
 * torch from PyPI whose PyPI build is another CUDA) is left as it is, and the plan says why. Every move is checked
 * by running the gate on the unit's files with the edits applied: a move that adds an error is not made.
 */
import { claimCuda, type CudaClaim } from '../analysis/claims.js';
import { applyEdits } from '../analysis/edits.js';
import { resolveLinks } from '../analysis/links.js';
import { nearestReleaseWithCuda } from '../analysis/nearest.js';
import { projectName } from '../analysis/packages.js';
import { TORCH_FAMILY } from '../parsers/python-requirement.js';
import { torchPage } from '../analysis/torch-pages.js';
import { buildUnits, type Unit, type UnitPackage } from '../analysis/units.js';
import type { Baseline } from '../baseline/schema.js';
import type { PackageFact, ParsedFile } from '../parsers/facts.js';
import type { Finding, Location, TextEdit } from '../finding.js';
import { gate } from '../gate.js';
import { cite, latestImagePatch, type KnowledgeBase, type TorchRelease } from '../knowledge/index.js';
import { parseFile } from '../parsers/index.js';
import { affectedFiles } from '../reader.js';
import { cudaMajor, cudaMajorMinor, minorOf, publicVersion, tagFromCuda } from '../knowledge/versions.js';
import { compareDotted } from '../util/dotted.js';
import { compare as comparePep440 } from '@renovatebot/pep440';
import { merged } from '../verify.js';

export interface PlanStep {
  readonly location: Location;
  readonly what: string;
  readonly from: string;
  readonly to: string;
  readonly edits?: readonly TextEdit[];
  readonly note?: string;
}

/** A unit the plan does not move, and why. */
export interface PlanHold {
  readonly unit: string;
  readonly location: Location;
  readonly reasons: readonly string[];
}

export interface Plan {
  readonly cuda: string;
  /** The torch release the moved units take (the newest one, where units take different releases). */
  readonly torch?: {
    readonly version: string;
    readonly torchvision?: string;
    readonly torchaudio?: string;
    readonly variant: string;
    readonly source: string;
  };
  /** What the driver must be for the images the plan writes (their CUDA update's own row of Table 3). */
  readonly driver?: {
    readonly cuda: string;
    readonly minimum: string;
    readonly floor: string;
    readonly fleet?: string;
    readonly fleetOk?: boolean;
    readonly source: string;
  };
  readonly steps: readonly PlanStep[];
  readonly held: readonly PlanHold[];
  readonly notes: readonly string[];
}

export class PlanError extends Error {}

/**
 * Rules whose findings about the target itself the plan's notes report instead (the baseline does not allow it yet).
 */
const TARGET_POLICY = new Set(['cuda-not-allowed']);

export function plan(files: readonly ParsedFile[], targetCuda: string, kb: KnowledgeBase, baseline: Baseline): Plan {
  const cuda = cudaMajorMinor(targetCuda);
  if (!cuda) throw new PlanError(`"${targetCuda}" is not a CUDA version (expected major.minor, e.g. 12.8)`);
  const exists = kb.cudaExists(cuda);
  if (exists === 'no') throw new PlanError(`CUDA ${cuda} was never released (${kb.noReleaseRecord(cuda)?.note ?? ''})`);
  // Nothing is known of a CUDA newer than the knowledge base (its driver floor, its wheels): no plan can be sound.
  if (exists === 'unknown' && compareDotted(cuda, kb.newestCuda()) > 0)
    throw new PlanError(
      `CUDA ${cuda} is newer than any CUDA the knowledge base knows (the newest is ${kb.newestCuda()}, data retrieved ${kb.retrieved}): nothing can be planned for it`,
    );
  const notes: string[] = [];
  const steps: PlanStep[] = [];
  const held: PlanHold[] = [];
  const units = buildUnits(files, resolveLinks(files), kb);
  const taken: TorchRelease[] = [];
  /** Every edit of the units moved so far: a later unit that shares a file must agree with them. */
  let accepted: TextEdit[] = [];
  const errorsOf = (subset: readonly ParsedFile[]): Finding[] =>
    gate(subset, baseline, kb).findings.filter(
      (finding) => finding.severity === 'error' && !TARGET_POLICY.has(finding.ruleId),
    );

  for (const unit of units) {
    const move = planUnit(unit, cuda, kb);
    if (move.moves.length === 0 && move.reasons.length === 0) continue;
    const reasons = [...move.reasons];
    const edits = move.moves.flatMap((step) => step.edits ?? []);
    const together = reasons.length === 0 ? merged([...accepted, ...edits]) : undefined;
    if (reasons.length === 0 && !together) reasons.push('another unit that shares its files moves them differently');
    if (reasons.length === 0 && together) {
      // The gate on the unit's files, before and after: the move must not add an error.
      const subset = affectedFiles(files, new Set(edits.map((edit) => edit.path)));
      const before = errorsOf(subset.map((file) => withEdits(file, accepted)));
      const after = errorsOf(subset.map((file) => withEdits(file, together)));
      const added = after.find(
        (finding) =>
          !before.some(
            (old) =>
              old.ruleId === finding.ruleId &&
              old.location.path === finding.location.path &&
              old.message === finding.message,
          ),
      );
      if (added) reasons.push(`moving it gives ${added.ruleId} "${added.message}" (${added.location.path})`);
    }
    if (reasons.length > 0) {
      held.push({ unit: unit.label, location: unit.root.source.location(0, 0), reasons });
      continue;
    }
    accepted = together!;
    steps.push(
      ...move.moves.filter(
        (step) =>
          !steps.some(
            (other) =>
              other.location.path === step.location.path && other.location.start.offset === step.location.start.offset,
          ),
      ),
    );
    if (move.release) taken.push(move.release);
  }

  const release =
    taken.sort((a, b) => compareDotted(b.version, a.version))[0] ??
    (units.length === 0 || !units.some((unit) => unit.packages.some(({ pkg }) => projectName(pkg) === 'torch'))
      ? kb
          .torchReleasesWithCuda(cuda)
          .filter((row) => row.confidence !== 'unverified')
          .at(-1)
      : undefined);
  if (!release && kb.torchReleasesWithCuda(cuda).length === 0)
    notes.push(`No PyTorch release in the knowledge base ships a ${tagFromCuda(cuda)} build.`);

  // The driver the new images need: their CUDA update's own row (12.8.1 needs 570.124.06, not 12.8 GA's 570.26).
  const image = latestImagePatch(kb, cuda) ?? cuda;
  const minimum = kb.minDriver(image);
  const floor = kb.driverFloor(cudaMajor(cuda));
  const fleet = baseline.driver.minimum;
  const driver =
    minimum && floor
      ? {
          cuda: image,
          minimum: minimum.linux,
          floor: floor.linux,
          // A release whose own row is below the major's floor (CUDA 11.0.x) runs from that row.
          ...(fleet
            ? {
                fleet,
                fleetOk:
                  compareDotted(fleet, compareDotted(minimum.linux, floor.linux) < 0 ? minimum.linux : floor.linux) >=
                  0,
              }
            : {}),
          source: cite(minimum.row),
        }
      : undefined;
  if (driver?.fleetOk === false)
    notes.push(
      compareDotted(driver.minimum, driver.floor) < 0
        ? `The fleet driver ${fleet} cannot run CUDA ${image}; it needs >= ${driver.minimum} first.`
        : `The fleet driver ${fleet} cannot run CUDA ${cudaMajor(cuda)}.x at all; it needs >= ${driver.floor} first.`,
    );
  else if (driver && fleet && compareDotted(fleet, driver.minimum) < 0)
    notes.push(
      `The fleet driver ${fleet} runs CUDA ${image} only under minor-version compatibility; >= ${driver.minimum} gives the full feature set.`,
    );
  // A fleet of pools: which pools can take the new images now, and the driver each of the others needs first.
  if (driver && baseline.pools.length > 0) {
    const needed = compareDotted(driver.minimum, driver.floor) < 0 ? driver.minimum : driver.floor;
    const ready = baseline.pools.filter((pool) => compareDotted(pool.driver, driver.minimum) >= 0);
    const compat = baseline.pools.filter((pool) => !ready.includes(pool) && compareDotted(pool.driver, needed) >= 0);
    const behind = baseline.pools.filter((pool) => compareDotted(pool.driver, needed) < 0);
    if (ready.length)
      notes.push(
        `Pools that run CUDA ${image} now: ${ready.map((pool) => `${pool.name} (${pool.driver})`).join(', ')}.`,
      );
    if (compat.length)
      notes.push(
        `Pools that run it only under minor-version compatibility until they reach ${driver.minimum}: ${compat.map((pool) => `${pool.name} (${pool.driver})`).join(', ')}.`,
      );
    if (behind.length)
      notes.push(
        `Pools that need a driver upgrade first (to >= ${needed}, or >= ${driver.minimum} for the full feature set): ${behind.map((pool) => `${pool.name} (${pool.driver})`).join(', ')}.`,
      );
  }
  if (baseline.cuda.allowed && !baseline.cuda.allowed.includes(cuda))
    notes.push(`The baseline does not allow CUDA ${cuda} yet (allowed: ${baseline.cuda.allowed.join(', ')}).`);

  const tag = tagFromCuda(cuda);
  return {
    cuda,
    ...(release
      ? {
          torch: {
            version: release.version,
            ...(release.torchvision[0] ? { torchvision: release.torchvision[0] } : {}),
            ...(release.torchaudio[0] ? { torchaudio: release.torchaudio[0] } : {}),
            variant: tag,
            source: cite(release),
          },
        }
      : {}),
    ...(driver ? { driver } : {}),
    steps: steps.sort(
      (a, b) => a.location.path.localeCompare(b.location.path) || a.location.start.offset - b.location.start.offset,
    ),
    held,
    notes,
  };
}

interface UnitMove {
  readonly moves: PlanStep[];
  readonly reasons: string[];
  readonly release?: TorchRelease;
}

/** The steps that move one unit to `cuda`, or the reasons it cannot move. */
function planUnit(unit: Unit, cuda: string, kb: KnowledgeBase): UnitMove {
  const moves: PlanStep[] = [];
  const reasons: string[] = [];
  const tag = tagFromCuda(cuda);
  const step = (
    file: ParsedFile,
    span: { start: number; end: number },
    what: string,
    edits: readonly TextEdit[],
    note?: string,
  ): void => {
    moves.push({
      location: file.source.location(span.start, span.end),
      what,
      from: file.source.text.slice(span.start, span.end),
      to: preview(file, span, edits),
      edits,
      ...(note ? { note } : {}),
    });
  };

  // The torch family first: which release the unit moves to decides the rest.
  const torch = unit.packages.find(
    ({ pkg }) => projectName(pkg) === 'torch' && pkg.exact && (pkg.ecosystem === 'pip' || pkg.ecosystem === 'conda'),
  );
  const current = torch ? kb.torchRelease(publicVersion(torch.pkg.exact!)) : undefined;
  let release: TorchRelease | undefined;
  if (torch && !current) reasons.push(`torch ${torch.pkg.exact} is not in the knowledge base`);
  else if (torch && current) {
    release =
      torch.pkg.ecosystem === 'conda' ? condaRelease(unit, current, cuda, kb) : pipRelease(torch, current, cuda, kb);
    if (!release)
      reasons.push(
        torch.pkg.ecosystem === 'conda'
          ? `no pytorch conda package near ${current.version} is built for CUDA ${cuda}`
          : torch.build?.source === 'pypi'
            ? `torch comes from PyPI, and no release near ${current.version} has a PyPI build for CUDA ${cuda}; install it from https://download.pytorch.org/whl/${tag} first`
            : `no torch release near ${current.version} has a ${tag} build`,
      );
  }

  for (const claim of unit.claims) {
    if (
      claim.kind === 'implied' ||
      (claim.kind === 'wheel-tag' && claim.package && TORCH_FAMILY.has(claim.package.name))
    )
      continue;
    if (claim.precision === 'minor' ? claimCuda(claim) === cuda : cudaMajor(claim.cuda) === cudaMajor(cuda)) continue;
    const reason = claimHold(claim, cuda, kb);
    if (reason) {
      reasons.push(reason);
      continue;
    }
    const edits = claim.rewrite?.(cuda);
    if (!edits) {
      reasons.push(
        `${claim.subject} (CUDA ${claimCuda(claim)}) cannot be rewritten to CUDA ${cuda}; change it by hand`,
      );
      continue;
    }
    step(
      claim.file,
      claim.span,
      claim.kind === 'image' ? 'base image' : claim.kind === 'index' ? 'index URL' : `${claim.package?.name ?? 'pin'}`,
      edits,
    );
  }

  if (release && current) {
    for (const entry of unit.packages) {
      const { file, pkg } = entry;
      const name = projectName(pkg);
      if (!pkg.exact) continue;
      const wanted = familyVersion(name, pkg, { from: current, to: release, tag }, kb);
      if (wanted === undefined) continue;
      if (wanted === null) {
        reasons.push(`${pkg.rawName}==${pkg.exact} has no release for torch ${release.version} in the knowledge base`);
        continue;
      }
      const clause = pkg.clauses[0];
      if (!clause || file.source.text.slice(clause.versionSpan.start, clause.versionSpan.end) !== clause.version) {
        reasons.push(`${pkg.rawName}==${pkg.exact} cannot be edited where it is written`);
        continue;
      }
      if (wanted !== clause.version)
        step(
          file,
          pkg.span,
          name,
          [{ path: file.path, range: [clause.versionSpan.start, clause.versionSpan.end], text: wanted }],
          name === 'torch' ? jumpNote(current, release, tag, kb) : undefined,
        );
    }
    for (const invocation of unit.invocations) {
      for (const index of invocation.indexes) {
        const page = index.kind === 'find-links' ? torchPage(index.url) : undefined;
        if (page && (page.torch !== minorOf(release.version) || !index.url.includes(tag)))
          reasons.push(
            `${index.url} is a ${page.project} wheel page for one torch and CUDA; whether a page exists for torch ${release.version} and ${tag} is not known here (${page.source})`,
          );
      }
    }
    for (const { pkg } of unit.packages) {
      if (pkg.localLabel && /^pt\d+(cu\d+|cpu)$/.test(pkg.localLabel))
        reasons.push(
          `${pkg.rawName}==${pkg.exact} is a PyG wheel built for one torch and CUDA; move it with the PyG page for torch ${release.version}`,
        );
    }
  }
  return { moves: reasons.length ? [] : moves, reasons: [...new Set(reasons)], ...(release ? { release } : {}) };
}

/**
 * A move of torch past other releases (2.1 → 2.7) says so: the releases it skips have no build for the target, so
 * this is the nearest one that has, and the skipped releases' notes are worth reading before the move.
 */
function jumpNote(current: TorchRelease, release: TorchRelease, tag: string, kb: KnowledgeBase): string | undefined {
  const [low, high] = compareDotted(current.version, release.version) <= 0 ? [current, release] : [release, current];
  const skipped = [...new Set(kb.torchReleases().map((entry) => minorOf(entry.version)))].filter(
    (minor) => compareDotted(minor, minorOf(low.version)) > 0 && compareDotted(minor, minorOf(high.version)) < 0,
  );
  if (skipped.length === 0) return undefined;
  return `a jump of ${skipped.length + 1} releases, ${minorOf(current.version)} to ${minorOf(release.version)}: torch ${skipped.join(', ')} ${skipped.length === 1 ? 'has' : 'have'} no ${tag} build, so ${release.version} is the nearest that has; read the release notes in between`;
}

/** Why a claim cannot move to `cuda` with the knowledge at hand, if it cannot. */
function claimHold(claim: CudaClaim, cuda: string, kb: KnowledgeBase): string | undefined {
  const name = claim.package?.name;
  if (claim.kind === 'conda' && name === 'pytorch-cuda' && !kb.condaPytorchCudaVersions().includes(cuda))
    return `pytorch-cuda has no ${cuda} build (published: ${kb.condaPytorchCudaVersions().join(', ')}); install torch from pip instead`;
  if (claim.kind === 'conda' && name === 'cudatoolkit' && Number(cudaMajor(cuda)) > kb.condaCudatoolkit().lastMajor)
    return `cudatoolkit has no CUDA ${cudaMajor(cuda)} packages (${cite(kb.condaCudatoolkit())}); use cuda-version=${cuda}`;
  if (
    claim.kind === 'image' &&
    claim.image?.registry === 'nvcr.io' &&
    claim.image.tag &&
    !claim.image.tag.includes('$')
  ) {
    if (!kb.ngcTagFor(claim.image.repository, claim.image.tag, cuda))
      return `${claim.subject}: no tag of ${claim.image.repository} with CUDA ${cuda} is in the knowledge base (NGC's release notes as of ${kb.retrieved}); pick one from NGC's support matrix by hand`;
  }
  if (claim.kind === 'image' && !claim.rewrite)
    return `${claim.subject} is not an nvidia/cuda or NGC image; pick its CUDA ${cuda} tag by hand`;
  if (!['image', 'index', 'conda', 'wheel-tag'].includes(claim.kind))
    return `${claim.subject} is built for CUDA ${claimCuda(claim)}; move it by hand`;
  return undefined;
}

/** The release a pip torch moves to: one with a build for the target, reachable the way this torch is installed. */
function pipRelease(
  torch: UnitPackage,
  current: TorchRelease,
  cuda: string,
  kb: KnowledgeBase,
): TorchRelease | undefined {
  const tag = tagFromCuda(cuda);
  if (torch.build?.source !== 'pypi') return nearestReleaseWithCuda(kb, current.version, cuda);
  // From PyPI the build is the release's PyPI default: only a release whose PyPI build is the target CUDA will do.
  return nearest(
    kb.torchReleases().filter((release) => release.pypiDefault === tag && release.confidence !== 'unverified'),
    current.version,
  );
}

/** The release a conda pytorch moves to: one the pytorch channel built for the target CUDA, as the unit pins it. */
function condaRelease(unit: Unit, current: TorchRelease, cuda: string, kb: KnowledgeBase): TorchRelease | undefined {
  const names = new Set(unit.packages.filter(({ pkg }) => pkg.ecosystem === 'conda').map(({ pkg }) => pkg.name));
  const last = kb.pytorchChannel().lastVersion;
  const candidates = kb
    .torchReleases()
    .filter(
      (release) =>
        compareDotted(release.version, last) <= 0 &&
        release.confidence !== 'unverified' &&
        (names.has('cudatoolkit')
          ? release.condaCudatoolkit?.includes(cuda)
          : release.condaPytorchCuda?.includes(cuda)),
    );
  return nearest(candidates, current.version);
}

/** The candidate nearest to `version` in release order, newest patch of its minor. */
function nearest(candidates: readonly TorchRelease[], version: string): TorchRelease | undefined {
  if (candidates.length === 0) return undefined;
  const distance = (release: TorchRelease): number => Math.abs(score(release.version) - score(version));
  const best = [...candidates].sort((a, b) => distance(a) - distance(b) || compareDotted(b.version, a.version))[0]!;
  return candidates
    .filter((release) => minorOf(release.version) === minorOf(best.version))
    .sort((a, b) => compareDotted(b.version, a.version))[0];
}

function score(version: string): number {
  const [major = 0, minor = 0, patch = 0] = version.split('.').map((part) => Number.parseInt(part, 10) || 0);
  return major * 10000 + minor * 100 + patch;
}

/** torch moving from one release to another, on the CUDA build `tag` (`cu124`). */
interface TorchMove {
  readonly from: TorchRelease;
  readonly to: TorchRelease;
  readonly tag: string;
}

/**
 * The version text a pin of the unit takes when torch moves from `current` to `release`: undefined when the pin
 * does not move with torch, null when it must and the knowledge base has no release for the new torch.
 */
function familyVersion(
  name: string,
  pkg: PackageFact,
  { from: current, to: release, tag }: TorchMove,
  kb: KnowledgeBase,
): string | null | undefined {
  const labelled = (version: string, cudaBuilds = true): string =>
    pkg.localLabel && cudaBuilds ? `${version}+${tag}` : version;
  if (name === 'torch') return pkg.ecosystem === 'conda' ? release.version : labelled(release.version);
  if (name === 'torchvision' || name === 'torchaudio') {
    // A companion that does not belong to the current torch (the gate says so) moves to the new torch's all the same.
    const version = release[name][0];
    if (!version) return null;
    return pkg.ecosystem === 'conda'
      ? version
      : labelled(version, !(name === 'torchaudio' && release.torchaudioCuda === false));
  }
  // xformers, triton, torchtext, torchdata: a release that requires the current torch moves to the one for the new
  // torch.
  if (pkg.ecosystem !== 'pip') return undefined;
  const pins = kb.companionPins(name);
  // A pin of the torch minor (abi: minor, torchtext 0.18.0) serves every torch of that minor.
  const serves = (row: (typeof pins)[number], torch: string): boolean =>
    row.torch === torch || (row.abi === 'minor' && minorOf(row.torch) === minorOf(torch));
  const own = pins.filter((row) => row.version === publicVersion(pkg.exact!));
  if (!own.some((row) => serves(row, current.version))) return undefined;
  // A release that already serves the new torch (the same torch in another CUDA build) stays as it is.
  if (own.some((row) => serves(row, release.version))) return undefined;
  const next = pins
    .filter((row) => serves(row, release.version) && row.confidence !== 'unverified')
    .map((row) => row.version)
    .sort(comparePep440)
    .at(-1);
  return next ?? null;
}

/** The file with the edits that fall in it applied and parsed again, or the file itself. */
function withEdits(file: ParsedFile, edits: readonly TextEdit[]): ParsedFile {
  const own = edits.filter((edit) => edit.path === file.path);
  return own.length === 0 ? file : parseFile(file.path, applyEdits(file.source.text, own), file.kind);
}

/** The declaration as it reads after the edits; edits outside it (an ARG default) are shown as `ARG=…`. */
function preview(file: ParsedFile, span: { start: number; end: number }, edits: readonly TextEdit[]): string {
  const inside = edits
    .filter((edit) => edit.range[0] >= span.start && edit.range[1] <= span.end)
    .sort((a, b) => b.range[0] - a.range[0]);
  let text = file.source.text.slice(span.start, span.end);
  for (const edit of inside)
    text = text.slice(0, edit.range[0] - span.start) + edit.text + text.slice(edit.range[1] - span.start);
  const outside = edits
    .filter((edit) => !inside.includes(edit))
    .map(
      (edit) =>
        `${file.source.text.slice(edit.range[0], edit.range[1])} → ${edit.text} at line ${file.source.position(edit.range[0]).line}`,
    );
  return outside.length > 0 ? `${text} (and ${outside.join(', ')})` : text;
}

export function renderPlanText(result: Plan): string {
  const lines = [`Plan: move to CUDA ${result.cuda}`];
  if (result.torch)
    lines.push(
      `  torch ${result.torch.version}+${result.torch.variant}${result.torch.torchvision ? `, torchvision ${result.torch.torchvision}` : ''}${result.torch.torchaudio ? `, torchaudio ${result.torch.torchaudio}` : ''}  (${result.torch.source})`,
    );
  if (result.driver)
    lines.push(
      `  driver: >= ${result.driver.minimum} for CUDA ${result.driver.cuda} images, >= ${result.driver.floor} for any CUDA ${cudaMajor(result.cuda)}.x${result.driver.fleet ? `; fleet ${result.driver.fleet}` : ''}  (${result.driver.source})`,
    );
  lines.push('');
  for (const step of result.steps)
    lines.push(
      `${step.location.path}:${step.location.start.line}: ${step.what}: ${step.from} -> ${step.to}${step.note ? `  (${step.note})` : ''}`,
    );
  if (result.steps.length === 0 && result.held.length === 0) lines.push('No file declares a CUDA version to change.');
  for (const hold of result.held)
    lines.push(`${hold.location.path}: not moved (${hold.unit}): ${hold.reasons.join('; ')}`);
  for (const note of result.notes) lines.push(`note: ${note}`);
  return `${lines.join('\n')}\n`;
}
