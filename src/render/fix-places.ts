import type { Fix } from '../finding.js';

/**
 * Where each fix of a report was first written out, for renderers that write a shared fix once (the JSON report's
 * `sameAs`, SARIF's `sameFixAs`). Findings share fixes: a unit's safe fix is offered by each of its claims, a torch
 * family's move by each pin, and writing every copy grew with the square of the pins (287 MB of JSON, 139 MB of
 * SARIF). A fix is the same when it has the same safety, title and verification and the very same list of edits:
 * rules share one list among the findings a change answers, so this is a lookup per fix, never a comparison of edits.
 */
export class FixPlaces {
  private readonly places = new Map<Fix['edits'], Map<string, string>>();

  /** Where the same fix was written before (a JSON pointer), if it was. */
  before(fix: Fix): string | undefined {
    return this.places.get(fix.edits)?.get(sameness(fix));
  }

  /** Note that `fix` is written out in full at `pointer`. */
  written(fix: Fix, pointer: string): void {
    let byKey = this.places.get(fix.edits);
    if (!byKey) this.places.set(fix.edits, (byKey = new Map()));
    byKey.set(sameness(fix), pointer);
  }
}

function sameness(fix: Fix): string {
  return `${fix.safety}\0${fix.title}\0${fix.verification ?? ''}`;
}
