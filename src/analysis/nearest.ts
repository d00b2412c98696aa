import { torchBuildTags, type KnowledgeBase, type TorchRelease } from '../knowledge/index.js';
import { cudaFromTag, cudaMajor, minorOf, publicVersion, tagFromCuda } from '../knowledge/versions.js';
import { compareDotted } from '../util/dotted.js';

/** The CUDA build of a release closest to the one wanted (same major preferred). */
export function nearestCudaBuild(release: TorchRelease, wantedCuda: string): string | undefined {
  const tags = torchBuildTags(release);
  const wanted = cudaScore(wantedCuda);
  const scored = tags
    .map((tag) => ({ tag, cuda: cudaFromTag(tag)! }))
    .sort((a, b) => {
      const majorA = cudaMajor(a.cuda) === cudaMajor(wantedCuda) ? 0 : 1;
      const majorB = cudaMajor(b.cuda) === cudaMajor(wantedCuda) ? 0 : 1;
      return (
        majorA - majorB ||
        Math.abs(cudaScore(a.cuda) - wanted) - Math.abs(cudaScore(b.cuda) - wanted) ||
        cudaScore(b.cuda) - cudaScore(a.cuda)
      );
    });
  return scored[0]?.tag;
}

/** The release nearest to `version` (by release order) that ships a build for `cuda`. */
export function nearestReleaseWithCuda(kb: KnowledgeBase, version: string, cuda: string): TorchRelease | undefined {
  // A pure question about the knowledge base, asked many times per repository.
  const target = publicVersion(version);
  return kb.memoized(`nearestReleaseWithCuda:${target}:${cuda}`, () => computeNearestRelease(kb, target, cuda));
}

function computeNearestRelease(kb: KnowledgeBase, target: string, cuda: string): TorchRelease | undefined {
  const releases = kb.torchReleases();
  const wantedTag = tagFromCuda(cuda);
  const candidates = releases.filter(
    (release) => release.variants.includes(wantedTag) && release.confidence !== 'unverified',
  );
  if (candidates.length === 0) return undefined;
  const found = releases.findIndex((release) => compareDotted(release.version, target) >= 0);
  const targetIndex = found < 0 ? releases.length : found;
  const distance = new Map(candidates.map((release) => [release, Math.abs(releases.indexOf(release) - targetIndex)]));
  const nearest = [...candidates].sort(
    (a, b) => distance.get(a)! - distance.get(b)! || compareDotted(b.version, a.version),
  )[0]!;
  // Within the chosen minor, take the newest patch release (same features, more fixes).
  return candidates
    .filter((release) => minorOf(release.version) === minorOf(nearest.version))
    .sort((a, b) => compareDotted(b.version, a.version))[0];
}

function cudaScore(cuda: string): number {
  const [major, minor] = cuda.split('.');
  return Number(major) * 10 + Number(minor ?? 0);
}
