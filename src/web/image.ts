/**
 * "Will this image run on my pools?": an image reference judged on pasted pools (or the bundled baseline's fleet) as
 * a Dockerfile that starts from it would be, from the knowledge snapshot (the page asks no registry: the CLI's
 * --online and the App do). Pure.
 */
import { imageCuda, imageWithoutCuda } from '../analysis/claims.js';
import { EMPTY_BASELINE, type Baseline } from '../baseline/schema.js';
import type { Finding, PoolCell } from '../finding.js';
import { readPastedFleet } from '../fleet/paste.js';
import { gate } from '../gate.js';
import { cite, type KnowledgeBase } from '../knowledge/index.js';
import { parseFile } from '../parsers/index.js';

export interface ImageVerdict {
  readonly image: string;
  /** The image's CUDA and where it comes from, or why it is not known. */
  readonly cuda?: { readonly version: string; readonly source?: string };
  readonly unknown?: string;
  /** Per pool: the tier and the reason. */
  readonly pools: readonly { readonly name: string; readonly driver: string; readonly cell: PoolCell }[];
  readonly findings: readonly Pick<Finding, 'ruleId' | 'severity' | 'message' | 'help'>[];
  readonly problems: readonly string[];
}

/** At most this long: an image reference, not a file. */
const MAX_REFERENCE = 256;

export function imageVerdict(
  kb: KnowledgeBase,
  image: string,
  fleet: string | undefined,
  baseline?: Baseline,
): ImageVerdict {
  const reference = image.trim();
  const empty = { image: reference, pools: [], findings: [] };
  if (reference === '' || reference.length > MAX_REFERENCE || /\s|[$`{}]/.test(reference))
    return { ...empty, problems: ['Give one image reference, such as nvcr.io/nvidia/tritonserver:25.10-py3.'] };
  const pasted = fleet ? readPastedFleet(fleet, kb) : undefined;
  const pools = pasted?.pools.length ? pasted.pools : (baseline?.pools ?? []);
  const policy: Baseline = { ...(baseline ?? EMPTY_BASELINE), pools };
  const file = parseFile('Dockerfile', `FROM ${reference}\n`, 'dockerfile');
  const fact = file.images[0];
  if (!fact) return { ...empty, problems: [`"${reference}" is not an image reference.`] };
  const report = gate([file], policy, kb);
  const known = imageCuda(fact, kb);
  const none = imageWithoutCuda(fact, kb);
  const row = report.fleet?.rows[0];
  return {
    image: reference,
    ...(known ? { cuda: { version: known.cuda, ...(known.record ? { source: cite(known.record) } : {}) } } : {}),
    ...(!known
      ? {
          unknown:
            none ??
            'no tag of it is in the knowledge snapshot; check it with the CLI (--online), which reads its config from the registry',
        }
      : {}),
    pools: (report.fleet?.pools ?? []).map((pool, index) => ({ ...pool, cell: row?.cells[index] ?? { tier: 'runs' } })),
    findings: report.findings.map((finding) => ({
      ruleId: finding.ruleId,
      severity: finding.severity,
      message: finding.message,
      ...(finding.help ? { help: finding.help } : {}),
    })),
    problems: [
      ...(pasted?.problems ?? []),
      ...(pools.length === 0 ? ["No pools: paste one (or a node's nvidia-smi line) to get a verdict per pool."] : []),
    ],
  };
}
