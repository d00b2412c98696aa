/**
 * driver-floor: what images and wheels need from the NVIDIA driver, against the fleet. The rule is a folder, as
 * typescript-eslint keeps its large rules: `messages.ts` (messages and helps), `claim.ts` (one claim on one driver:
 * NVIDIA's three tiers), `pools.ts` (the fleet as pools: per pool, then one finding per claim), `forward-compat.ts`,
 * `require-cuda.ts` (NVIDIA_REQUIRE_CUDA and driver packages in an image), `toolkit-start.ts` (whether the container
 * toolkit starts a container on a pool). This file wires them.
 */
import type { Unit } from '../../src/analysis/units.js';
import { defineRule, type Reporter } from '../../src/rule.js';
import { HELPS, MESSAGES, type MessageId } from './messages.js';
import { checkClaim, eachClaim, withOrigin } from './claim.js';
import { fleetForwardCompat } from './forward-compat.js';
import { checkDriverPackages, checkRequireCuda } from './require-cuda.js';
import { checkPools } from './pools.js';
import { checkAlternatives } from './alternatives.js';

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
    eachClaim(units, files, kb, report, (claim, compat, _unit, unitReport) =>
      checkClaim(claim, { driver: fleet, compat, forward }, kb, withOrigin(claim, unitReport)),
    );
    checkAlternatives({ units, files, kb, report }, () => ({
      hosts: [{ name: 'fleet', label: `the fleet's driver ${fleet}`, driver: fleet, forward }],
    }));
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
          images:
            fact.dockerfile!.how === 'compose'
              ? "Correct the service's `build` (its context is read from the Compose file's folder, its `dockerfile` from the context, its `target` among the Dockerfile's stages)."
              : IMAGES_HELP,
        },
        file: unit.root,
        span: fact.dockerfile!.span,
        severity: 'warning',
      });
    }
  }
}
