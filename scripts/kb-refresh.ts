/**
 * npm run kb:refresh [-- --dry-run] [-- --summary FILE]: update the knowledge base from upstream sources (needs
 * network). --summary writes the changes, grouped by source, as Markdown (the weekly workflow's pull request body).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fetchText, OfflineError, refresh, summary, writeData, type ReadImages } from '../src/knowledge/refresh/run.js';
import { MemoryCache } from '../src/images/cache.js';
import { lookUpImages } from '../src/images/resolve.js';
import { EMPTY_BASELINE } from '../src/baseline/schema.js';

const dataDir = join(import.meta.dirname, '..', 'src', 'knowledge', 'data');
const dryRun = process.argv.includes('--dry-run');
const summaryAt = process.argv.indexOf('--summary');
const summaryFile = summaryAt >= 0 ? process.argv[summaryAt + 1] : undefined;
if (summaryAt >= 0 && !summaryFile) {
  process.stderr.write('kb:refresh: --summary needs a file name\n');
  process.exit(2);
}
const today = new Date().toISOString().slice(0, 10);

try {
  // The unverified image rows are checked against the images' configs (HEAD resolves tags: Docker Hub's pull limit
  // counts only the manifests read, one per image).
  const readImages: ReadImages = async (refs) =>
    (
      await lookUpImages(refs, EMPTY_BASELINE, {
        cache: new MemoryCache(),
        env: process.env,
        budgetMs: 10 * 60_000,
        maxImages: refs.length,
        today,
      })
    ).lookups;
  const result = await refresh(dataDir, fetchText, today, readImages);
  if (summaryFile) writeFileSync(summaryFile, summary(result.changes, today));
  for (const change of result.changes) process.stdout.write(`${change}\n`);
  if (result.changes.length === 0) process.stdout.write('kb:refresh: the knowledge base matches its sources\n');
  else if (!dryRun) {
    writeData(dataDir, result.files);
    process.stdout.write(
      `kb:refresh: ${result.changes.length} change(s) written; review them with git diff src/knowledge/data and run npm test\n`,
    );
  }
} catch (error) {
  if (error instanceof OfflineError) {
    process.stderr.write(`kb:refresh: ${error.message}\n`);
    process.exitCode = 1;
  } else throw error;
}
