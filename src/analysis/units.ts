import type { IndexFact, InstallContext, PackageFact, ParsedFile } from '../facts.js';
import type { KnowledgeBase } from '../knowledge/index.js';
import { cudaMajor, cudaMajorMinor } from '../versions.js';
import { CLAIM_PRECEDENCE, cudaClaim, fileClaims, type ClaimKind, type CudaClaim } from './claims.js';
import type { Link } from './links.js';
import { resolveTorchBuild, type TorchBuild } from './torch-build.js';

/** One pip/conda run: a command or file plus the files it pulls in, sharing index options. */
export interface Invocation {
  readonly members: readonly { readonly file: ParsedFile; readonly context: InstallContext }[];
  readonly indexes: readonly IndexFact[];
}

export interface UnitPackage {
  readonly file: ParsedFile;
  readonly pkg: PackageFact;
  readonly invocation?: Invocation;
  readonly build?: TorchBuild;
}

/**
 * A consistency unit: what ends up installed together — one Dockerfile stage and the files it installs,
 * one requirements file and its includes, or one conda environment. Its CUDA target is inferred from its
 * strongest declarations, and every other declaration is compared against it.
 */
export interface Unit {
  readonly label: string;
  readonly root: ParsedFile;
  readonly stage?: number;
  readonly files: readonly ParsedFile[];
  readonly claims: readonly CudaClaim[];
  readonly target?: CudaClaim;
  readonly packages: readonly UnitPackage[];
  readonly invocations: readonly Invocation[];
}

const NO_INDEXES: readonly IndexFact[] = [];

/** Which claims may set the target, strongest tier first; index URLs only ever get compared. */
const TIERS: readonly (readonly ClaimKind[])[] = [
  ['image', 'env'],
  ['conda', 'conda-build', 'conda-channel', 'apt'],
  ['wheel-tag', 'wheel-url', 'implied'],
  ['nvidia-wheel', 'cupy', 'jax', 'tensorflow'],
];

/** Units of `files`, which must include every file linked to or from one of them. */
export function buildUnits(files: readonly ParsedFile[], links: ReadonlyMap<ParsedFile, readonly Link[]>, kb: KnowledgeBase): Unit[] {
  const claimCache = new Map<ParsedFile, CudaClaim[]>();
  const claimsOf = (file: ParsedFile): CudaClaim[] => {
    let claims = claimCache.get(file);
    if (!claims) claimCache.set(file, (claims = fileClaims(file, kb)));
    return claims;
  };
  const units: Unit[] = [];
  // `files` is closed under links (every file a link touches is in it), so its own links are all there are.
  const includers = new Map<ParsedFile, ParsedFile[]>();
  for (const from of files) {
    for (const link of links.get(from) ?? []) {
      const list = includers.get(link.to);
      if (list) list.push(from);
      else includers.set(link.to, [from]);
    }
  }
  for (const file of files) {
    if (file.kind === 'dockerfile') {
      for (const stage of file.stages) units.push(dockerStageUnit(file, stage.index, links, claimsOf, kb));
    } else if (!includedElsewhere(file, includers.get(file) ?? [], links)) {
      units.push(fileUnit(file, links, claimsOf, kb));
    }
  }
  return units;
}

/**
 * A requirements or conda file that another file installs or includes (a Dockerfile's `pip install -r`,
 * another file's `-r`) is checked only as part of the larger unit: its own, narrower view would infer a
 * different target and propose conflicting fixes. Files that include each other are each kept.
 */
function includedElsewhere(file: ParsedFile, includers: readonly ParsedFile[], links: ReadonlyMap<ParsedFile, readonly Link[]>): boolean {
  return includers.some((includer) => includer !== file && (includer.kind === 'dockerfile' || !reachable(links.get(file) ?? [], links, new Set([file])).includes(includer)));
}

type ClaimsOf = (file: ParsedFile) => CudaClaim[];

/** Files reachable through includes, each with all of its contexts. */
function reachable(start: readonly Link[], links: ReadonlyMap<ParsedFile, readonly Link[]>, seen: Set<ParsedFile>): ParsedFile[] {
  const out: ParsedFile[] = [];
  const queue = [...start];
  while (queue.length > 0) {
    const link = queue.shift()!;
    if (seen.has(link.to)) continue;
    seen.add(link.to);
    out.push(link.to);
    queue.push(...(links.get(link.to) ?? []));
  }
  return out;
}

function fileUnit(file: ParsedFile, links: ReadonlyMap<ParsedFile, readonly Link[]>, claimsOf: ClaimsOf, kb: KnowledgeBase): Unit {
  const seen = new Set([file]);
  const included = reachable(links.get(file) ?? [], links, seen);
  const files = [file, ...included];
  const invocations: Invocation[] = [];
  const pipContexts = file.contexts.filter((context) => context.tool !== 'conda-env');
  for (const context of pipContexts) {
    const contextLinks = (links.get(file) ?? []).filter((link) => link.include.context === context.id);
    const linked = reachable(contextLinks, links, new Set([file]));
    invocations.push(makeInvocation([{ file, context }, ...linked.flatMap((member) => member.contexts.map((c) => ({ file: member, context: c })))]));
  }
  const claims = files.flatMap((member) => claimsOf(member));
  return finishUnit(file.path, file, undefined, files, claims, invocations, kb);
}

function dockerStageUnit(file: ParsedFile, stage: number, links: ReadonlyMap<ParsedFile, readonly Link[]>, claimsOf: ClaimsOf, kb: KnowledgeBase): Unit {
  const chain = stageChain(file, stage);
  const name = file.stages[stage]?.name;
  const label = `${file.path} stage ${name ? `"${name}"` : stage + 1}`;
  const contexts = file.contexts.filter((context) => context.stage === stage);
  const invocations: Invocation[] = [];
  const seen = new Set([file]);
  const linkedFiles: ParsedFile[] = [];
  for (const context of contexts) {
    const contextLinks = (links.get(file) ?? []).filter((link) => link.include.context === context.id);
    const linked = reachable(contextLinks, links, new Set([file]));
    for (const member of linked) {
      if (seen.has(member)) continue;
      seen.add(member);
      linkedFiles.push(member);
    }
    if (context.tool !== 'apt') invocations.push(makeInvocation([{ file, context }, ...linked.flatMap((member) => member.contexts.map((c) => ({ file: member, context: c })))]));
  }
  const contextIds = new Set(contexts.map((context) => context.id));
  const own = claimsOf(file).filter((claim) =>
    claim.stage !== undefined ? (claim.kind === 'image' ? claim.stage === chain.at(-1) : chain.includes(claim.stage)) : claim.context !== undefined && contextIds.has(claim.context),
  );
  const claims = [...own, ...linkedFiles.flatMap((member) => claimsOf(member))];
  return finishUnit(label, file, stage, [file, ...linkedFiles], claims, invocations, kb, contextIds);
}

/** This stage and the stages it builds on, the stage itself first and its base image stage last. */
function stageChain(file: ParsedFile, stage: number): number[] {
  const chain: number[] = [];
  let current: number | undefined = stage;
  while (current !== undefined && !chain.includes(current)) {
    chain.push(current);
    current = file.images.find((image) => image.stage === current)?.fromStage;
  }
  return chain;
}

function makeInvocation(members: { file: ParsedFile; context: InstallContext }[]): Invocation {
  const indexes = members.flatMap((member) => member.context.indexes.filter((index) => !index.ignoredReason));
  return { members, indexes };
}

function finishUnit(
  label: string,
  root: ParsedFile,
  stage: number | undefined,
  files: readonly ParsedFile[],
  staticClaims: readonly CudaClaim[],
  invocations: readonly Invocation[],
  kb: KnowledgeBase,
  rootContexts?: ReadonlySet<number>,
): Unit {
  const invocationOf = new Map<InstallContext, Invocation>();
  for (const invocation of invocations) for (const member of invocation.members) invocationOf.set(member.context, invocation);
  const packages: UnitPackage[] = [];
  const implied: CudaClaim[] = [];
  for (const file of files) {
    for (const pkg of file.packages) {
      if (file === root && rootContexts && !rootContexts.has(pkg.context)) continue;
      const context = file.contexts[pkg.context];
      const invocation = context ? invocationOf.get(context) : undefined;
      const build = resolveTorchBuild(pkg, invocation?.indexes ?? NO_INDEXES, kb);
      packages.push({ file, pkg, invocation, build });
      if (build?.cuda && !pkg.localLabel && !pkg.url) {
        implied.push(
          cudaClaim({
            kind: 'implied',
            file,
            context: pkg.context,
            cuda: build.cuda,
            precision: 'minor',
            span: pkg.span,
            subject: `${pkg.rawName}${pkg.specifier}`,
            package: pkg,
            record: build.release,
            index: build.index,
          }),
        );
      }
    }
  }
  const claims = [...staticClaims, ...implied];
  const target = chooseTarget(claims);
  return { label, root, stage, files, claims, target, packages, invocations };
}

/** The strongest tier present decides; within it the most common CUDA version, then the earliest claim. */
export function chooseTarget(claims: readonly CudaClaim[]): CudaClaim | undefined {
  for (const tier of TIERS) {
    const inTier = claims.filter((claim) => tier.includes(claim.kind));
    if (inTier.length === 0) continue;
    const precise = inTier.filter((claim) => claim.precision === 'minor');
    const pool = precise.length > 0 ? precise : inTier;
    const key = (claim: CudaClaim): string => (claim.precision === 'minor' ? cudaMajorMinor(claim.cuda) ?? claim.cuda : String(cudaMajor(claim.cuda)));
    const counts = new Map<string, number>();
    for (const claim of pool) counts.set(key(claim), (counts.get(key(claim)) ?? 0) + 1);
    const best = Math.max(...counts.values());
    const sorted = [...pool].sort((a, b) => CLAIM_PRECEDENCE[a.kind] - CLAIM_PRECEDENCE[b.kind] || a.span.start - b.span.start);
    return sorted.find((claim) => counts.get(key(claim)) === best);
  }
  return undefined;
}
