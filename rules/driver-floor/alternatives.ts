/**
 * Installs whose CUDA depends on what the unit does not say (Unit.alternatives): `pip install torch` on an image whose
 * Python is not known takes torch 2.8.0, a CUDA 12.8 build, on Python 3.9 and a CUDA 13 build on 3.10 and later. Each
 * build is judged on each host (the fleet's driver, or each pool it may be scheduled on). An error only where no build
 * runs on any host, whichever the Python; a warning, which says what is not known, where some build does not run on
 * some host; nothing where every build runs everywhere.
 */
import { claimCuda, type CudaClaim } from '../../src/analysis/claims.js';
import type { Alternatives } from '../../src/analysis/unpinned.js';
import type { Unit } from '../../src/analysis/units.js';
import { cite, type KnowledgeBase } from '../../src/knowledge/index.js';
import { heldLess, helpText, type Draft, type Reporter, type RuleContext } from '../../src/rule.js';
import { fleetScope } from '../../src/analysis/runs.js';
import { HELPS, type MessageId } from './messages.js';
import { checkClaim, collect, compatImage, withOrigin, type Host } from './claim.js';

/** Where a unit's installs run: each host with its name (a pool's, or the fleet's driver), and how it was chosen. */
export interface Hosts {
  /** `name` is the pool's (the table's column), `label` what a message calls it (`a100 (driver 550.127.05)`). */
  readonly hosts: readonly (Omit<Host, 'compat'> & { readonly name: string; readonly label: string })[];
  /** For a container pinned to pools: the reporter that adds where its node selection is written, and the words. */
  readonly pinned?: string;
  readonly report?: (report: Reporter<MessageId>) => Reporter<MessageId>;
  /** The table's verdict per host, where the fleet is pools. */
  readonly verdict?: (claim: CudaClaim, host: string, tier: 'runs' | 'unknown' | 'fails', reason?: string) => void;
}

/** One build on one host: runs (natively or under a compatibility mode) or fails, with the draft that says why. */
interface Judged {
  readonly claim: CudaClaim;
  /** The host's label. */
  readonly host: string;
  readonly draft?: Draft<MessageId>;
}

const fails = (judged: Judged): boolean =>
  judged.draft !== undefined && judged.draft.messageId !== 'minor' && judged.draft.messageId !== 'forwardCompat';

/** Every unit's alternatives judged on the hosts `hostsOf` gives it; once per install line. */
export function checkAlternatives(
  { units, files, kb, report }: Pick<RuleContext, 'units' | 'files' | 'kb' | 'report'>,
  hostsOf: (unit: Unit) => Hosts,
): void {
  const scope = fleetScope(files, kb);
  const done = new Set<string>();
  for (const unit of units) {
    const all = unit.container ? unit.container.alternatives : unit.alternatives;
    if (!all || (!unit.container && unit.stage === undefined && unit.root.library)) continue;
    const compat = compatImage(unit, kb);
    for (const either of all) {
      const first = either.claims[0]!;
      const key = `${first.file.path}#${first.span.start}`;
      if (done.has(key)) continue;
      done.add(key);
      const where = hostsOf(unit);
      const unitReport = heldLess(unit, scope, HELPS, where.report ? where.report(report) : report);
      judgeAlternatives(either, where, compat, kb, withOrigin(first, unitReport));
    }
  }
}

function judgeAlternatives(
  either: Alternatives,
  where: Hosts,
  compat: boolean,
  kb: KnowledgeBase,
  report: Reporter<MessageId>,
): void {
  const judged: Judged[] = [];
  for (const host of where.hosts)
    for (const claim of either.claims) {
      const [draft] = collect((probe) => checkClaim(claim, { ...host, compat }, kb, probe));
      judged.push({ claim, host: host.label, ...(draft ? { draft } : {}) });
    }
  const failing = judged.filter(fails);
  for (const host of where.hosts) {
    const on = judged.filter((entry) => entry.host === host.label);
    const bad = on.filter(fails);
    const tier = bad.length === 0 ? 'runs' : bad.length === on.length ? 'fails' : 'unknown';
    where.verdict?.(
      either.claims[0]!,
      host.name,
      tier,
      bad.length ? bad.map((entry) => reasonOf(entry, host.driver)).join('; ') : undefined,
    );
  }
  if (failing.length === 0) return;
  const first = either.claims[0]!;
  const builds = either.claims
    .map(
      (claim) =>
        `torch ${releaseOf(claim)} (CUDA ${claimCuda(claim)}) ${claim.newest!.slice(releaseOf(claim).length + 1)}`,
    )
    .join(' or ');
  const none = failing.length === judged.length;
  const failingBuilds = either.claims.filter((claim) => failing.some((entry) => entry.claim === claim));
  const runsEverywhere = either.claims.filter((claim) => !failingBuilds.includes(claim));
  const reasons = failing.map((entry) => `${entry.host}: ${reasonOf(entry, driverOf(where, entry.host))}`).join('; ');
  const why = helpText(HELPS, failing[0]!.draft!) ?? '';
  const release = runsEverywhere.at(-1);
  const fix = release
    ? `Pin it to a release whose build runs everywhere (torch==${releaseOf(release)}, a CUDA ${claimCuda(release)} build), or install it from the PyTorch index of a CUDA every host runs (--index-url https://download.pytorch.org/whl/cu${claimCuda(release).replace('.', '')}), or build on an image whose Python is known (python:3.X, an nvidia/cuda image), or give the project's requires-python.`
    : "Pin torch to a release whose CUDA the hosts run and install it from that CUDA's PyTorch index, or upgrade the driver.";
  report({
    messageId: none ? 'byPythonNone' : 'byPython',
    data: {
      subject: first.subject,
      builds,
      unknown: either.unknown,
      neither: either.claims.length === 2 ? 'neither runs' : 'none of them runs',
      fails: none
        ? `on ${where.hosts.map((host) => host.label).join(', ')}`
        : failingBuilds
            .map(
              (claim) =>
                `CUDA ${claimCuda(claim)} does not run on ${[...new Set(failing.filter((entry) => entry.claim === claim).map((entry) => entry.host))].join(', ')}`,
            )
            .join('; '),
      sources: [...new Set(either.claims.flatMap((claim) => (claim.record ? [cite(claim.record)] : [])))].join('; '),
      reasons,
      why,
      pinned: where.pinned ?? '',
      fix,
    },
    file: first.file,
    span: first.span,
    ...(none ? {} : { severity: 'warning' as const }),
  });
}

function driverOf(where: Hosts, label: string): string {
  return where.hosts.find((host) => host.label === label)?.driver ?? '';
}

/** The release a build is of (`2.8.0` of "2.8.0 on Python 3.9"). */
const releaseOf = (claim: CudaClaim): string => claim.newest?.split(' ')[0] ?? '';

/** Why one build does not run on one host: what it needs and what the host runs. */
function reasonOf(entry: Judged, driver: string): string {
  const data = entry.draft?.data ?? {};
  return `torch ${entry.claim.newest} is a CUDA ${claimCuda(entry.claim)} build, which needs driver >= ${String(data.floor ?? data.needed ?? '')} (${driver} here)`;
}
