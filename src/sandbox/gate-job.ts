/**
 * One pull request's gate as plain data in and out, so it can run on a worker thread: the files as texts, the
 * baseline as the blobs it is layered from, the options; the verified report back. Pure.
 */
import type { Report } from '../finding.js';
import { gate, regateFiles, type GateOptions } from '../gate.js';
import { gateOptionsFor, layerBaselines, type ConfigBlob } from '../baseline/layers.js';
import { defaultKnowledgeBase } from '../knowledge/index.js';
import { parseFile } from '../parsers/index.js';
import type { SourceFile } from '../reader.js';
import { verifyFixes } from '../verify.js';
import { checkSnippet, type SnippetRequest, type SnippetResult } from '../web/snippet.js';
import { bundledBaseline, today } from '../util/package-root.js';

export interface GateJob {
  readonly owner: string;
  readonly repo: string;
  readonly repoConfig?: ConfigBlob;
  readonly orgConfig: ConfigBlob | null | undefined;
  readonly sources: readonly SourceFile[];
  /** Paths known to be no file of the commit checked (include candidates GitHub answered none for). */
  readonly noFile?: readonly string[];
  readonly options: Pick<GateOptions, 'repository' | 'today' | 'removed' | 'images'>;
}

export function runGateJob(job: GateJob): Report {
  const baseline = layerBaselines(job.owner, job.repo, job.repoConfig, job.orgConfig, bundledBaseline());
  const files = job.sources.map((source) =>
    parseFile(source.path, source.text, source.kind, { images: baseline.baseline.images }),
  );
  const noFile = new Set(job.noFile);
  const options: GateOptions = {
    ...gateOptionsFor(baseline, job.owner, job.repo, { today: today() }),
    ...job.options,
    // What GitHub did not show is not known: only a path it answered none for is no file.
    ...(noFile.size > 0 ? { fileExists: (path: string) => (noFile.has(path) ? false : undefined) } : {}),
  };
  const kb = defaultKnowledgeBase();
  return verifyFixes(gate(files, baseline.baseline, kb, options), files, regateFiles(baseline.baseline, kb, options));
}

/** What a worker thread is given: a pull request's gate, or a pasted file's check. */
export type WorkerJob =
  | { readonly kind: 'pull'; readonly job: GateJob }
  | { readonly kind: 'snippet'; readonly request: SnippetRequest };

export function runWorkerJob(job: WorkerJob): Report | SnippetResult {
  return job.kind === 'pull' ? runGateJob(job.job) : checkSnippet(job.request);
}
