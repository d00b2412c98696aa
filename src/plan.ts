/**
 * Upgrade planning: the exact edits that move a set of files to a target CUDA version, choosing the torch
 * release nearest to the one pinned today that ships that CUDA. Pure, like the gate.
 */
import { resolveLinks } from './analysis/links.js';
import { nearestReleaseWithCuda } from './analysis/nearest.js';
import { projectName } from './analysis/packages.js';
import { buildUnits } from './analysis/units.js';
import type { Baseline } from './baseline/schema.js';
import type { ParsedFile } from './facts.js';
import type { Location, TextEdit } from './finding.js';
import { cite, type KnowledgeBase, type TorchRelease } from './knowledge/index.js';
import { compareDotted, cudaMajor, cudaMajorMinor, publicVersion, tagFromCuda } from './versions.js';

export interface PlanStep {
  readonly location: Location;
  readonly what: string;
  readonly from: string;
  readonly to: string;
  readonly edits?: readonly TextEdit[];
  readonly note?: string;
}

export interface Plan {
  readonly cuda: string;
  readonly torch?: { readonly version: string; readonly torchvision?: string; readonly torchaudio?: string; readonly variant: string; readonly source: string };
  readonly driver?: { readonly minimum: string; readonly floor: string; readonly fleet?: string; readonly fleetOk?: boolean; readonly source: string };
  readonly steps: readonly PlanStep[];
  readonly notes: readonly string[];
}

export class PlanError extends Error {}

export function plan(files: readonly ParsedFile[], targetCuda: string, kb: KnowledgeBase, baseline: Baseline): Plan {
  const cuda = cudaMajorMinor(targetCuda);
  if (!cuda) throw new PlanError(`"${targetCuda}" is not a CUDA version (expected major.minor, e.g. 12.8)`);
  if (kb.cudaExists(cuda) === 'no') throw new PlanError(`CUDA ${cuda} was never released (${kb.noReleaseRecord(cuda)?.note ?? ''})`);
  const notes: string[] = [];
  const steps: PlanStep[] = [];
  const units = buildUnits(files, resolveLinks(files), kb);
  const tag = tagFromCuda(cuda);

  const pinnedTorch = units.flatMap((unit) => unit.packages).find(({ pkg }) => projectName(pkg) === 'torch' && pkg.exact)?.pkg.exact;
  const release: TorchRelease | undefined = pinnedTorch ? nearestReleaseWithCuda(kb, pinnedTorch, cuda) : kb.torchReleasesWithCuda(cuda).filter((row) => row.confidence !== 'unverified').at(-1);
  if (!release) notes.push(`No PyTorch release in the knowledge base ships a ${tag} build.`);

  const seen = new Set<string>();
  const add = (file: ParsedFile, span: { start: number; end: number }, step: Omit<PlanStep, 'location'>): void => {
    const key = `${file.path}#${span.start}`;
    if (seen.has(key)) return;
    seen.add(key);
    steps.push({ location: file.source.location(span.start, span.end), ...step });
  };

  for (const unit of units) {
    for (const claim of unit.claims) {
      if (claim.kind !== 'image' && claim.kind !== 'index' && claim.kind !== 'conda' && claim.kind !== 'wheel-tag') continue;
      if (claim.kind === 'wheel-tag') continue; // packages are handled below, with their versions
      if (claim.precision === 'minor' && cudaMajorMinor(claim.cuda) === cuda) continue;
      if (claim.kind === 'conda' && claim.package?.name === 'pytorch-cuda' && !kb.condaPytorchCudaVersions().includes(cuda)) {
        add(claim.file, claim.span, { what: 'conda pytorch-cuda', from: claim.subject, to: '(none)', note: `pytorch-cuda has no ${cuda} build (published: ${kb.condaPytorchCudaVersions().join(', ')}); install torch from pip instead` });
        continue;
      }
      const edits = claim.rewrite?.(cuda);
      const to = edits ? applyPreview(claim.file, claim.span, edits) : '(edit by hand)';
      add(claim.file, claim.span, { what: claim.kind === 'image' ? 'base image' : claim.kind === 'index' ? 'index URL' : `conda ${claim.package?.name ?? 'pin'}`, from: claim.file.source.text.slice(claim.span.start, claim.span.end), to, ...(edits ? { edits } : {}) });
    }
    if (!release) continue;
    for (const { file, pkg } of unit.packages) {
      const name = projectName(pkg);
      if (pkg.ecosystem !== 'pip' || !['torch', 'torchvision', 'torchaudio'].includes(name) || !pkg.exact) continue;
      const version = name === 'torch' ? release.version : release[name as 'torchvision' | 'torchaudio'][0];
      const clause = pkg.clauses[0];
      if (!version) {
        add(file, pkg.span, { what: name, from: `${pkg.rawName}==${pkg.exact}`, to: '(remove)', note: `PyTorch published no ${name} for torch ${release.version}` });
        continue;
      }
      const wanted = pkg.localLabel ? `${version}+${tag}` : version;
      if (clause && wanted !== clause.version && file.source.text.slice(clause.versionSpan.start, clause.versionSpan.end) === clause.version) {
        const edit: TextEdit = { path: file.path, range: [clause.versionSpan.start, clause.versionSpan.end], text: wanted };
        add(file, pkg.span, { what: name, from: `${pkg.rawName}==${pkg.exact}`, to: `${pkg.rawName}==${wanted}`, edits: [edit] });
      }
    }
  }

  if (release && !units.some((unit) => unit.claims.some((claim) => claim.kind === 'index'))) {
    const needsIndex = release.pypiDefault !== tag;
    if (needsIndex) notes.push(`torch ${release.version} from PyPI is a ${release.pypiDefault ?? 'unknown'} build; install with --index-url https://download.pytorch.org/whl/${tag} (and pin ==${release.version}+${tag}) to get ${tag}.`);
  }

  const minimum = kb.minDriver(cuda);
  const floor = kb.driverFloor(cudaMajor(cuda));
  const fleet = baseline.driver.minimum;
  const driver = minimum && floor
    ? { minimum: minimum.linux, floor: floor.linux, ...(fleet ? { fleet, fleetOk: compareDotted(fleet, floor.linux) >= 0 } : {}), source: cite(minimum.row) }
    : undefined;
  if (driver?.fleetOk === false) notes.push(`The fleet driver ${fleet} cannot run CUDA ${cudaMajor(cuda)}.x at all; it needs >= ${driver.floor} first.`);
  else if (driver && fleet && compareDotted(fleet, driver.minimum) < 0) notes.push(`The fleet driver ${fleet} runs CUDA ${cuda} only under minor-version compatibility; >= ${driver.minimum} gives the full feature set.`);
  if (baseline.cuda.allowed && !baseline.cuda.allowed.includes(cuda)) notes.push(`The baseline does not allow CUDA ${cuda} yet (allowed: ${baseline.cuda.allowed.join(', ')}).`);

  return {
    cuda,
    ...(release ? { torch: { version: release.version, ...(release.torchvision[0] ? { torchvision: release.torchvision[0] } : {}), ...(release.torchaudio[0] ? { torchaudio: release.torchaudio[0] } : {}), variant: tag, source: cite(release) } } : {}),
    ...(driver ? { driver } : {}),
    steps: steps.sort((a, b) => a.location.path.localeCompare(b.location.path) || a.location.start.offset - b.location.start.offset),
    notes,
  };
}

/** The declaration as it reads after the edits; edits outside it (an ARG default) are shown as `ARG=…`. */
function applyPreview(file: ParsedFile, span: { start: number; end: number }, edits: readonly TextEdit[]): string {
  const inside = edits.filter((edit) => edit.range[0] >= span.start && edit.range[1] <= span.end).sort((a, b) => b.range[0] - a.range[0]);
  let text = file.source.text.slice(span.start, span.end);
  for (const edit of inside) text = text.slice(0, edit.range[0] - span.start) + edit.text + text.slice(edit.range[1] - span.start);
  const outside = edits.filter((edit) => !inside.includes(edit)).map((edit) => `${file.source.text.slice(edit.range[0], edit.range[1])} → ${edit.text} at line ${file.source.position(edit.range[0]).line}`);
  return outside.length > 0 ? `${text} (and ${outside.join(', ')})` : text;
}

export function renderPlanText(result: Plan): string {
  const lines = [`Plan: move to CUDA ${result.cuda}`];
  if (result.torch) lines.push(`  torch ${result.torch.version}+${result.torch.variant}${result.torch.torchvision ? `, torchvision ${result.torch.torchvision}` : ''}${result.torch.torchaudio ? `, torchaudio ${result.torch.torchaudio}` : ''}  (${result.torch.source})`);
  if (result.driver) lines.push(`  driver: >= ${result.driver.minimum} for the full feature set, >= ${result.driver.floor} for any CUDA ${cudaMajor(result.cuda)}.x${result.driver.fleet ? `; fleet ${result.driver.fleet}` : ''}  (${result.driver.source})`);
  lines.push('');
  for (const step of result.steps) {
    lines.push(`${step.location.path}:${step.location.start.line}: ${step.what}: ${step.from} -> ${step.to}${step.note ? `  (${step.note})` : ''}`);
  }
  if (result.steps.length === 0) lines.push('No file declares a CUDA version to change.');
  for (const note of result.notes) lines.push(`note: ${note}`);
  return `${lines.join('\n')}\n`;
}

export { publicVersion };
