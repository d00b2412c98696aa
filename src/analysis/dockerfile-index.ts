/** The index a Dockerfile's stage units are built from (src/analysis/units.ts). */
import type { InstallContext, PackageFact, ParsedFile, PythonFact } from '../parsers/facts.js';
import { groupBy, positions } from '../util/collections.js';
import type { CudaClaim } from './claims.js';
import type { Link } from './links.js';
import { StageTree } from './stages.js';

const NO_PYTHONS: readonly PythonFact[] = [];

/** Paths that hold an installed Python environment: a conda prefix, a virtualenv, site-packages, a pip --prefix. */
const ENVIRONMENT =
  /(?:conda|mamba|venv|virtualenv|site-packages|dist-packages|\/\.local\b|^\/install\b|^\/usr\/local\/?(?:lib\/?)?$|\/python\d(?:\.\d+)?\b)/i;

/** A `COPY --from` (of a stage or an image) of an environment's folder: what was installed there comes with it. */
function bringsEnvironment(copy: ParsedFile['copies'][number]): boolean {
  return copy.fromStage !== undefined && copy.sources.some((source) => ENVIRONMENT.test(source.path));
}

/**
 * A Dockerfile's contexts, links, packages and claims grouped by stage and context once: each stage's unit reads
 * only its own, so the units of a file cost time linear in its size however many stages it has.
 */
export class DockerfileIndex {
  readonly contextsByStage: Map<number, InstallContext[]>;
  readonly linksByContext: Map<number, Link[]>;
  private readonly packagesByContext: Map<number, number[]>;
  /**
   * Claims by position in `claims`: those of a stage (not images) with its ancestors', images by stage, and by context.
   */
  private readonly chainClaims: (stage: number) => readonly number[];
  private readonly imageClaims: Map<number, number[]>;
  private readonly contextClaims: Map<number, number[]>;
  private readonly tree: StageTree;
  /** The Pythons a stage's RUNs and those of the stages it builds on install by script. */
  private readonly chainPythons: (stage: number) => readonly PythonFact[];
  private readonly copiesByStage: Map<number, ParsedFile['copies'][number][]>;
  /** By stage, in file order as far as computed: contexts a stage copies in, and what copying out of it brings. */
  private readonly copied: InstallContext[][] = [];
  private readonly reached: (readonly InstallContext[])[] = [];
  /** By stage, as `copied` and `reached`: Pythons copied in with environments, and those an environment out holds. */
  private readonly copiedPythons: (readonly PythonFact[])[] = [];
  private readonly reachedPythons: (readonly PythonFact[])[] = [];
  private environmentCopies?: boolean;

  constructor(
    readonly file: ParsedFile,
    links: readonly Link[],
    private readonly claims: readonly CudaClaim[],
  ) {
    this.tree = StageTree.of(file);
    this.contextsByStage = groupBy(file.contexts, (context) => context.stage);
    this.copiesByStage = groupBy(file.copies, (copy) => copy.stage);
    this.linksByContext = groupBy(links, (link) => link.include.context);
    this.packagesByContext = groupBy(positions(file.packages.length), (i) => file.packages[i]!.context);
    const all = positions(claims.length);
    const stageClaims = groupBy(all, (i) =>
      claims[i]!.stage !== undefined && claims[i]!.kind !== 'image' ? claims[i]!.stage : undefined,
    );
    this.chainClaims = this.tree.inherited((stage) => stageClaims.get(stage) ?? []);
    this.imageClaims = groupBy(all, (i) => (claims[i]!.kind === 'image' ? claims[i]!.stage : undefined));
    this.contextClaims = groupBy(all, (i) => (claims[i]!.stage === undefined ? claims[i]!.context : undefined));
    // Most Dockerfiles install no Python by script: nothing to group or inherit.
    const pythons = file.pythons.length > 0 ? groupBy(file.pythons, (python) => python.stage) : undefined;
    this.chainPythons = pythons ? this.tree.inherited((stage) => pythons.get(stage) ?? []) : () => NO_PYTHONS;
  }

  /**
   * The file's own claims that bear on a stage, in the file's claim order: claims of the stage and the stages it
   * builds on (the image only of the base stage, which is what the stage runs on), and those of its contexts.
   */
  claimsOf(stage: number, contexts: readonly InstallContext[]): CudaClaim[] {
    const picked = [...this.chainClaims(stage), ...(this.imageClaims.get(this.tree.root(stage)) ?? [])];
    for (const context of contexts) picked.push(...(this.contextClaims.get(context.id) ?? []));
    return picked.sort((a, b) => a - b).map((i) => this.claims[i]!);
  }

  /**
   * The install contexts whose results a stage copies in: `COPY --from=build /opt/conda /opt/conda` (an environment:
   * a conda prefix, a virtualenv, site-packages, a pip --prefix or --user directory) brings everything `build` and
   * the stages it builds on installed, and what they copied in themselves.
   */
  copiedContexts(stage: number): InstallContext[] {
    // Most files copy no environment out of a stage: then no stage copies anything in, and nothing is worked out
    // (each stage's list of everything above it would be quadratic in a chain of stages).
    if (!this.copiesEnvironments) return [];
    this.computeUpTo(stage);
    return this.copied[stage] ?? [];
  }

  /** The image at the root of a stage's FROM chain (what it runs on), where it names one. */
  baseImageOf(stage: number): ParsedFile['images'][number] | undefined {
    this.images ??= new Map(
      [...this.file.images].reverse().flatMap((image) => (image.fromStage === undefined ? [[image.stage, image]] : [])),
    );
    return this.images.get(this.tree.root(stage));
  }

  private images?: Map<number, ParsedFile['images'][number]>;

  /** The platform a stage's FROM names (`--platform=linux/arm64`), of the stage its chain starts from. */
  platformOf(stage: number): string | undefined {
    this.platforms ??= new Map([...this.file.images].reverse().map((image) => [image.stage, image.platform] as const));
    return this.platforms.get(this.tree.root(stage));
  }

  private platforms?: Map<number, string | undefined>;

  /**
   * The Pythons a stage's pip installs may run with, installed by script: by the stage and the stages it builds on,
   * and with an environment it copies in (`COPY --from=build /opt/conda /opt/conda` brings the Python of build's
   * Miniconda, which runs the packages installed there).
   */
  pythonsOf(stage: number): readonly PythonFact[] {
    const chain = this.chainPythons(stage);
    if (!this.copiesEnvironments) return chain;
    this.computeUpTo(stage);
    const copied = this.copiedPythons[stage] ?? [];
    return copied.length === 0 ? chain : [...new Set([...chain, ...copied])];
  }

  /**
   * Whether a stage, or one it builds on, copies an environment in from another stage or an image (`COPY
   * --from=python:3.11 /usr/local /usr/local`, `COPY --from=build /opt/conda /opt/conda`): a Python may come with it.
   */
  copiesEnvironmentInto(stage: number): boolean {
    if (!this.copiesEnvironments) return false;
    // A stage builds only on earlier ones: the walk up its chain ends.
    for (let at = stage; ; ) {
      if ((this.copiesByStage.get(at) ?? []).some(bringsEnvironment)) return true;
      const parent = this.tree.parent(at);
      if (parent === undefined || parent >= at) return false;
      at = parent;
    }
  }

  /** Whether any `COPY --from` of the file brings an environment (a conda prefix, a virtualenv, site-packages). */
  private get copiesEnvironments(): boolean {
    this.environmentCopies ??= this.file.copies.some(bringsEnvironment);
    return this.environmentCopies;
  }

  /**
   * Works out, stage by stage in file order, what each stage copies in and what an environment copied out of it
   * holds (its installs, what it copied in, and its base stage's). A stage copies only from earlier stages, so each
   * is computed once from results already there (linear in the copies, however the stages chain), and no recursion
   * can run out of stack.
   */
  private computeUpTo(stage: number): void {
    for (let at = this.copied.length; at <= stage; at++) {
      const copied = new Set<InstallContext>();
      const pythons = new Set<PythonFact>();
      for (const copy of this.copiesByStage.get(at) ?? []) {
        if (!bringsEnvironment(copy)) continue;
        // The earlier stage it names (the parser's `fromIndex`); a copy from an image brings no install of the file.
        const from = copy.fromIndex;
        if (from === undefined || from >= at) continue;
        for (const context of this.reached[from]!) copied.add(context);
        for (const python of this.reachedPythons[from]!) pythons.add(python);
      }
      this.copied.push([...copied]);
      this.copiedPythons.push([...pythons]);
      const parent = this.tree.parent(at);
      const above = parent !== undefined && parent < at;
      this.reached.push([
        ...new Set([...(this.contextsByStage.get(at) ?? []), ...copied, ...(above ? this.reached[parent]! : [])]),
      ]);
      this.reachedPythons.push([
        ...new Set([...this.chainPythons(at), ...pythons, ...(above ? this.reachedPythons[parent]! : [])]),
      ]);
    }
  }

  /** Packages installed by these contexts, in file order. */
  packagesOf(contexts: readonly InstallContext[]): PackageFact[] {
    const picked: number[] = [];
    for (const context of contexts) picked.push(...(this.packagesByContext.get(context.id) ?? []));
    return picked.sort((a, b) => a - b).map((i) => this.file.packages[i]!);
  }
}
