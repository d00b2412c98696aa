/**
 * Checking a walked tree's files: read and gate them as they are read (stream.ts), then verify the safe fixes. The
 * CLI's `check` runs it on the main thread, or on worker threads over parts of the tree (threads.ts); a job holds
 * only data (paths, the baseline's text), so a worker builds the same checker the main thread would.
 */
import { loadBaseline } from '../baseline/load.js';
import { EMPTY_BASELINE, type Baseline } from '../baseline/schema.js';
import type { Report } from '../finding.js';
import { regateFiles, type GateOptions } from '../gate.js';
import type { ImageLookups } from '../images/lookup.js';
import { defaultKnowledgeBase, type KnowledgeBase } from '../knowledge/index.js';
import { parseFile } from '../parsers/index.js';
import type { Listed, SourceFile } from '../reader.js';
import { gateRepository, type RepositoryCheck, type RepositoryOptions } from '../stream.js';
import type { ServingIndex } from '../parsers/kubernetes/parse.js';
import { linkedWithin, verifyFixes } from '../verify.js';
import { RULE_IDS } from '../../rules/ids.js';
import { diskReader, listingFrom, type listingData, type Skipped } from './discover.js';

/** A part of a tree to check, as plain data (it crosses to a worker thread). */
export interface TreeJob {
  readonly cwd: string;
  /** The baseline as the main thread read it (undefined: `--baseline none`). */
  readonly baseline?: { readonly name: string; readonly text: string };
  readonly repository: string;
  readonly today: string;
  readonly list: readonly Listed[];
  /** The walk's files and the plain paths among them (see diskReader). */
  readonly walked: {
    readonly paths: readonly string[];
    readonly plain: readonly string[];
    readonly listing: ReturnType<typeof listingData>;
  };
  /** What --online read of the images from their registries. */
  readonly images?: ImageLookups;
  /** The whole tree's serving index (the parts of a tree share it: a runtime and its services may be in two). */
  readonly serving?: ServingIndex;
}

export interface TreeResult {
  readonly report: Report;
  readonly sources: readonly SourceFile[];
  readonly skipped: readonly Skipped[];
  readonly parsedAgain: number;
}

/** Check a job's files (on whichever thread runs it). */
export function checkTree(job: TreeJob): TreeResult {
  const policy = job.baseline ? loadBaseline(job.baseline.name, job.baseline.text, RULE_IDS) : undefined;
  const baseline = policy?.baseline ?? EMPTY_BASELINE;
  const kb = defaultKnowledgeBase();
  const skipped: Skipped[] = [];
  const reader = diskReader(job.cwd, skipped, {
    paths: job.walked.paths,
    plain: new Set(job.walked.plain),
    listing: listingFrom(job.walked.listing),
  });
  const options: RepositoryOptions = {
    ...(policy ? { policy } : {}),
    repository: job.repository,
    today: job.today,
    ...(job.images ? { images: job.images } : {}),
    ...(job.serving ? { serving: job.serving } : {}),
    fileExists: (path) => reader.isFile(path),
  };
  const checked = withVerifiedFixes(gateRepository(job.list, reader, baseline, kb, options), baseline, kb, options);
  return { report: checked.report, sources: checked.sources, skipped, parsedAgain: checked.parsedAgain };
}

/** The check with its safe fixes verified: each applied, and the gate run again over the files it touches. */
export function withVerifiedFixes(
  checked: RepositoryCheck,
  baseline: Baseline,
  kb: KnowledgeBase,
  options: GateOptions & Pick<RepositoryOptions, 'serving'>,
): RepositoryCheck {
  if (!checked.report.findings.some((finding) => finding.fix?.safety === 'safe')) return checked;
  // Only the groups of linked files that a fix touches are parsed again.
  const linked =
    checked.linked ??
    linkedWithin(
      checked.sources.map((source) =>
        parseFile(source.path, source.text, source.kind, {
          images: baseline.images,
          ...(options.serving ? { serving: options.serving } : {}),
        }),
      ),
    );
  return { ...checked, report: verifyFixes(checked.report, linked, regateFiles(baseline, kb, options)) };
}
