/**
 * What an image says of the driver it needs besides its CUDA: NVIDIA_REQUIRE_CUDA (the container toolkit's start
 * condition) and NVIDIA driver packages installed in it.
 */
import type { ParsedFile } from '../../src/parsers/facts.js';
import type { KnowledgeBase } from '../../src/knowledge/index.js';
import type { Reporter } from '../../src/rule.js';
import { compareDotted } from '../../src/util/dotted.js';
import type { MessageId } from './messages.js';

export const REQUIRE =
  'https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html';

export type Verdict = 'yes' | 'no' | { readonly brands: readonly string[] };

/** One comma-separated term of NVIDIA_REQUIRE_CUDA against a fleet driver: all its constraints must hold. */
export function evaluateTerm(term: string, fleet: string, kb: KnowledgeBase): Verdict {
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
export function checkRequireCuda(
  file: ParsedFile,
  fleet: string,
  kb: KnowledgeBase,
  report: Reporter<MessageId>,
): void {
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
          fleet: `driver ${fleet}`,
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

export function checkDriverPackages(file: ParsedFile, fleet: string | undefined, report: Reporter<MessageId>): void {
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
