import type { ImageFact, ParsedFile } from '../parsers/facts.js';

/**
 * What a Dockerfile stage inherits from the stages it is built FROM, worked out once per file.
 *
 * A stage `FROM build` sees what `build` saw (its COPYs, its ENV) and, through it, everything further up.
 * Walking that chain for every stage, with a search of the images at each step, made a file of many chained
 * stages cubic; here every stage is visited once, in order: a stage's parent always comes earlier in the file,
 * because FROM can only name a stage already defined.
 */
export class StageTree {
  /** Parent stage of each stage (undefined for a stage built on an image). */
  private readonly parents: (number | undefined)[] = [];
  /** The stage at the end of each stage's chain: the one whose FROM names an image. */
  private readonly roots: number[] = [];

  private constructor(
    readonly stageCount: number,
    file: ParsedFile,
  ) {
    for (const image of file.images) {
      if (this.parents[image.stage] !== undefined || image.stage >= stageCount) continue;
      // The parser only links to earlier stages; anything else is treated as a base image.
      if (image.fromStage !== undefined && image.fromStage < image.stage) this.parents[image.stage] = image.fromStage;
    }
    for (let stage = 0; stage < stageCount; stage++) {
      const parent = this.parents[stage];
      this.roots[stage] = parent === undefined ? stage : this.roots[parent]!;
    }
  }

  private static readonly cache = new WeakMap<ParsedFile, StageTree>();

  static of(file: ParsedFile): StageTree {
    let tree = StageTree.cache.get(file);
    if (!tree) {
      let count = file.stages.length;
      for (const image of file.images) count = Math.max(count, image.stage + 1);
      StageTree.cache.set(file, (tree = new StageTree(count, file)));
    }
    return tree;
  }

  parent(stage: number): number | undefined {
    return this.parents[stage];
  }

  /** The base stage of this stage's chain (itself when it is built on an image). */
  root(stage: number): number {
    return this.roots[stage] ?? stage;
  }

  /**
   * For every stage, its own items after those of the stages it builds on (items in stage order, so in file
   * order when `own` lists them in file order). A stage that adds nothing shares its parent's list.
   */
  inherited<T>(own: (stage: number) => readonly T[]): (stage: number) => readonly T[] {
    const lists: (readonly T[])[] = [];
    for (let stage = 0; stage < this.stageCount; stage++) {
      const parent = this.parents[stage];
      const above = parent === undefined ? [] : lists[parent]!;
      const mine = own(stage);
      lists[stage] = mine.length === 0 ? above : above.length === 0 ? mine : [...above, ...mine];
    }
    return (stage) => lists[stage] ?? own(stage);
  }
}

/** Each Dockerfile's stages → the image its chain of `FROM <stage>` starts from (computed once per file). */
const bases = new WeakMap<ParsedFile, Map<number, ImageFact | undefined>>();

/** The image a stage's chain of `FROM <stage>` starts from. */
export function baseImage(file: ParsedFile, stage: number): ImageFact | undefined {
  let memo = bases.get(file);
  if (!memo) {
    memo = new Map();
    const byStage = new Map(file.images.map((image) => [image.stage, image]));
    // Stages only build on earlier ones: in order, each stage's base is its parent's.
    for (const image of file.images)
      memo.set(
        image.stage,
        image.fromStage !== undefined && image.fromStage < image.stage
          ? memo.get(image.fromStage)
          : image.fromStage === undefined
            ? image
            : byStage.get(image.fromStage),
      );
    bases.set(file, memo);
  }
  return memo.get(stage);
}
