/**
 * A Dockerfile's ARG and ENV facts by stage, grouped once per parsed file: a rule that looks at each stage's own
 * variables reads its group instead of the whole file's list, so a file of many stages costs time linear in its size.
 */
import type { EnvFact, ParsedFile } from '../parsers/facts.js';
import { groupBy } from '../util/collections.js';

const NONE: readonly EnvFact[] = [];
/** Keyed by the parsed file itself (never by its text): a file parsed again is a new key. */
const grouped = new WeakMap<ParsedFile, Map<number, EnvFact[]>>();

/** The ARG and ENV facts of `stage` in `file`, in file order. */
export function envOfStage(file: ParsedFile, stage: number): readonly EnvFact[] {
  let byStage = grouped.get(file);
  if (!byStage) {
    byStage = groupBy(file.env, (env) => env.stage);
    grouped.set(file, byStage);
  }
  return byStage.get(stage) ?? NONE;
}
