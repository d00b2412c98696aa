/**
 * How many images of real GPU manifests and Dockerfiles (fixtures/images/real, from public projects) the gate can
 * judge: offline (the knowledge snapshot alone), and with every public registry answering as a registry does (a
 * fake that has every tag asked for: what a lookup can reach; the CUDA then comes from each image's own config).
 *
 *   npx tsx scripts/measure-images.ts [folder ...]
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { imageCuda, imageWithoutCuda, snapshotKnows } from '../src/analysis/claims.js';
import { EMPTY_BASELINE } from '../src/baseline/schema.js';
import { MemoryCache } from '../src/images/cache.js';
import { imageKey, registryHost } from '../src/images/reference.js';
import { imagesToLookUp, lookUpImages } from '../src/images/resolve.js';
import { defaultKnowledgeBase } from '../src/knowledge/index.js';
import type { ImageFact, ParsedFile } from '../src/parsers/facts.js';
import { classifyPath, kindByContent, parseFile } from '../src/parsers/index.js';
import { FakeRegistry, imageConfig, registriesFetch } from '../test/support/fake-registry.js';

const folders = process.argv.slice(2);
const roots = folders.length
  ? folders
  : ['fixtures/images/real/manifests', 'fixtures/images/real/dockerfiles'].map((folder) =>
      join(import.meta.dirname, '..', folder),
    );

const kb = defaultKnowledgeBase();
const files: ParsedFile[] = [];
for (const root of roots) {
  for (const name of readdirSync(root)) {
    const path = join(root, name);
    if (!statSync(path).isFile() || name.endsWith('.md')) continue;
    const text = readFileSync(path, 'utf8');
    const kind = /Dockerfile/.test(name) ? 'dockerfile' : (classifyPath(name) ?? kindByContent(name, text));
    if (kind) files.push(parseFile(name, text, kind));
  }
}

/** The images a verdict needs: GPU containers' images, and every Dockerfile's base images. */
const needed: { readonly file: string; readonly image: ImageFact }[] = [];
for (const file of files) {
  for (const container of file.containers) if (container.gpu) needed.push({ file: file.path, image: container.image });
  for (const image of file.images) if (image.fromStage === undefined) needed.push({ file: file.path, image });
}
const manifests = files.filter((file) => file.kind === 'kubernetes').length;
const dockerfiles = files.filter((file) => file.kind === 'dockerfile').length;

const known = (image: ImageFact, withKb = kb) =>
  imageCuda(image, withKb) !== undefined || imageWithoutCuda(image, withKb) !== undefined;
const offline = needed.filter(({ image }) => known(image));

// Online: a registry for every host named, holding every tag asked for (a config without CUDA_VERSION, so only what
// the lookup reaches is counted, not a CUDA we would invent).
const refs = imagesToLookUp(files, (image) => snapshotKnows(image, kb));
const registries = new Map<string, FakeRegistry>();
for (const ref of refs) {
  const host = registryHost(ref);
  if (!registries.has(host)) registries.set(host, new FakeRegistry({ host }));
  registries
    .get(host)!
    .push(repositoryPath(ref), ref.digest ?? ref.tag ?? 'latest', { platforms: { 'linux/amd64': imageConfig({}) } });
}
const run = await lookUpImages(refs, EMPTY_BASELINE, {
  cache: new MemoryCache(),
  env: {},
  budgetMs: 10_000,
  today: new Date().toISOString().slice(0, 10),
  fetch: registriesFetch(...registries.values()),
});
const read = needed.filter(({ image }) => known(image) || run.lookups[imageKey(image)]?.state === 'read');

const row = ({ file, image }: (typeof needed)[number]) => {
  const lookup = run.lookups[imageKey(image)];
  const offlineSays = imageCuda(image, kb)?.cuda ?? (imageWithoutCuda(image, kb) ? 'no CUDA' : '—');
  return `| ${image.reference} | ${file} | ${offlineSays} | ${known(image) ? 'not needed' : (lookup?.state ?? (image.unresolved ? `not a reference (${image.unresolved})` : 'not looked up'))}${lookup?.state === 'unread' ? `: ${lookup.reason}` : ''} |`;
};
console.log(`${manifests} manifests, ${dockerfiles} Dockerfiles: ${needed.length} image references a verdict needs\n`);
console.log(`offline (knowledge snapshot): ${offline.length} of ${needed.length} known`);
console.log(
  `with the registries answering: ${read.length} of ${needed.length} known or read (${run.spent.requests} requests)\n`,
);
console.log('| image | file | offline | lookup |\n|---|---|---|---|');
for (const entry of needed) console.log(row(entry));

function repositoryPath(ref: { registry?: string; repository: string }): string {
  return !ref.registry && !ref.repository.includes('/') ? `library/${ref.repository}` : ref.repository;
}
