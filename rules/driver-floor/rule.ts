import { claimCuda, type CudaClaim } from '../../src/analysis/claims.js';
import type { ParsedFile } from '../../src/facts.js';
import { cite, isUnverified, type KnowledgeBase } from '../../src/knowledge/index.js';
import { defineRule } from '../../src/rule.js';
import { compareDotted, cudaMajor } from '../../src/versions.js';

export default defineRule({
  id: 'driver-floor',
  description: 'What images and wheels need from the NVIDIA driver is within what the fleet runs',
  defaultSeverity: 'error',
  fix: 'none',
  messages: {
    major: '{{subject}} needs CUDA {{major}}.x, which needs NVIDIA driver >= {{floor}}; the fleet runs {{fleet}}',
    minor: '{{subject}} targets CUDA {{cuda}}, whose full feature set needs driver >= {{needed}}; the fleet runs {{fleet}}, so it runs only under minor-version compatibility',
    requireCuda: 'NVIDIA_REQUIRE_CUDA asks for CUDA >= {{cuda}}, which needs driver >= {{needed}}; the container runtime will refuse to start on the fleet\'s {{fleet}}',
    driverInImage: '{{name}} installs NVIDIA driver {{branch}} libraries into the image; they must match the host kernel driver{{fleetNote}}',
  },
  check({ units, files, kb, baseline, report }) {
    const fleet = baseline.driver.minimum;
    for (const file of files) checkDriverPackages(file, fleet, report);
    if (!fleet) return;
    const done = new Set<string>();
    for (const unit of units) {
      for (const claim of unit.claims) {
        if (claim.kind === 'implied' && claim.index) continue;
        const key = `${claim.file.path}#${claimCuda(claim)}`;
        if (done.has(key)) continue;
        if (checkClaim(claim, fleet, kb, report)) done.add(key);
      }
    }
    for (const file of files) checkRequireCuda(file, fleet, kb, report);
  },
});

type Report = Parameters<Parameters<typeof defineRule>[0]['check']>[0]['report'];
const MVC = 'https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html';

/** Reports at most one finding for the claim; returns whether it did. */
function checkClaim(claim: CudaClaim, fleet: string, kb: KnowledgeBase, report: Report): boolean {
  const major = cudaMajor(claim.cuda);
  const floor = kb.driverFloor(major);
  if (!floor) return false;
  const cuda = claimCuda(claim);
  if (compareDotted(fleet, floor.linux) < 0) {
    report({
      messageId: 'major',
      data: { subject: claim.subject, major, floor: floor.linux, fleet },
      file: claim.file,
      span: claim.span,
      unverified: isUnverified(floor) || isUnverified(claim.record),
      help: `A driver older than ${floor.linux} cannot run any CUDA ${major}.x code: CUDA initialisation fails with "driver version is insufficient for CUDA runtime version". Upgrade the fleet driver or stay on CUDA ${major - 1}.x. Source: ${cite(floor)}`,
    });
    return true;
  }
  if (claim.precision !== 'minor') return false;
  const need = kb.minDriver(claim.cuda);
  if (!need || compareDotted(fleet, need.linux) >= 0) return false;
  report({
    messageId: 'minor',
    data: { subject: claim.subject, cuda, needed: need.linux, fleet },
    file: claim.file,
    span: claim.span,
    severity: 'warning',
    unverified: isUnverified(need.row) || isUnverified(claim.record),
    help: `Driver ${fleet} is a CUDA ${major}.x driver, so CUDA ${cuda} code runs under minor-version compatibility: PTX that is newer than the driver cannot be JIT-compiled, and APIs added after the driver's CUDA version fail with cudaErrorCallRequiresNewerDriver. Needed for everything: >= ${need.linux} (CUDA ${need.row.label}${need.exactRow ? '' : ', nearest published row'}). Sources: ${cite(need.row)}; ${MVC}`,
  });
  return true;
}

function checkRequireCuda(file: ParsedFile, fleet: string, kb: KnowledgeBase, report: Report): void {
  for (const env of file.env) {
    if (env.key !== 'NVIDIA_REQUIRE_CUDA') continue;
    const cuda = /cuda>=(\d+\.\d+)/.exec(env.value)?.[1];
    if (!cuda) continue;
    const need = kb.minDriver(cuda);
    if (!need || compareDotted(fleet, need.linux) >= 0) continue;
    report({
      messageId: 'requireCuda',
      data: { cuda, needed: need.linux, fleet },
      file,
      span: env.span,
      unverified: isUnverified(need.row),
      help: `The NVIDIA container runtime compares NVIDIA_REQUIRE_CUDA with the CUDA version the host driver supports and refuses to start the container when it is older. Lower the requirement or upgrade the fleet. Source: ${cite(need.row)}; https://github.com/NVIDIA/nvidia-container-toolkit`,
    });
  }
}

function checkDriverPackages(file: ParsedFile, fleet: string | undefined, report: Report): void {
  if (file.kind !== 'dockerfile') return;
  for (const pkg of file.packages) {
    const branch = pkg.ecosystem === 'apt' ? /^(?:nvidia-(?:driver|dkms|utils|compute-utils)|libnvidia-compute)-(\d{3})(?:-server|-open)?$/.exec(pkg.name)?.[1] : undefined;
    if (!branch) continue;
    const fleetBranch = fleet?.split('.')[0];
    const mismatch = fleetBranch !== undefined && fleetBranch !== branch;
    report({
      messageId: 'driverInImage',
      data: { name: pkg.rawName, branch, fleetNote: fleet ? ` (the fleet runs ${fleet})` : '' },
      file,
      span: pkg.span,
      severity: mismatch ? 'error' : 'warning',
      help: 'Containers use the host\'s kernel driver; the NVIDIA container toolkit mounts the matching user-space libraries at run time. Driver libraries baked into an image break with "Failed to initialize NVML: Driver/library version mismatch" whenever the host driver differs. Remove the package and let the toolkit inject the driver.',
    });
  }
}
