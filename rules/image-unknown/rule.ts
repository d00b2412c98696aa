import { imageFullName } from '../../src/parsers/image-ref.js';
import {
  imageCuda,
  imageWithoutCuda,
  impossibleNgcTag,
  rocmImage,
  ROCM_SOURCE,
  type CudaClaim,
} from '../../src/analysis/claims.js';
import { builtForCuda } from '../../src/analysis/packages.js';
import { baseImage } from '../../src/analysis/stages.js';
import { isPytorchIndex } from '../../src/analysis/cuda-labels.js';
import type { Unit } from '../../src/analysis/units.js';
import { isScratch } from '../../src/images/reference.js';
import type { KnowledgeBase } from '../../src/knowledge/index.js';
import type { ImageFact, ParsedFile } from '../../src/parsers/facts.js';
import { defineRule, type Reporter } from '../../src/rule.js';

/** Names that say an image is for GPUs (an unknown one of those is said, at notice, even where nothing needs it). */
const GPU_NAME =
  /cuda|gpu|nvidia|nvcr|torch|tensorflow|triton|tensorrt|vllm|sglang|jax|rapids|cupy|nemo|deepspeed|megatron|ray-ml|ray-llm|text-generation-inference|(?:^|[^a-z])cu\d{2,3}(?![0-9])/i;

/** A tag that names the CPU build as a word of its own (`-cpu`, `cpu-`, `_cpu`). */
const CPU_TAG = /(?:^|[-_.])cpu(?:$|[-_.])/i;

const LOOKUP =
  'Images are looked up in their registries by the App and the Action, and by the CLI with --online (or registries.lookup: true in the baseline); private registries need registries.credentials.';

/** The rule's messages, by id: `MessageId` types the helpers' reporter, so a misspelt id does not compile. */
const MESSAGES = {
  container:
    '{{workload}} container {{container}} gets NVIDIA GPUs, but the CUDA of {{image}} is not known ({{why}}), so {{unchecked}}',
  containerBuilt:
    "{{workload}} container {{container}} gets NVIDIA GPUs and runs {{image}}, built from {{path}}, which says no CUDA of its own and whose base image's CUDA is not known, so {{unchecked}}",
  containerWithoutCuda:
    '{{workload}} container {{container}} gets NVIDIA GPUs and runs {{image}} ({{why}}): what runs in it brings its CUDA, which is not known here, so {{unchecked}}',
  containerBuiltWithoutCuda:
    '{{workload}} container {{container}} gets NVIDIA GPUs and runs {{image}}, built from {{path}} on {{base}} ({{why}}), which installs no CUDA build the check reads: what runs in it brings its CUDA, which is not known here, so {{unchecked}}',
  stage:
    '{{image}} is the base of a stage that installs CUDA builds ({{what}}), but its own CUDA is not known ({{why}}), so the two are not compared',
  named: 'the CUDA of {{image}} is not known ({{why}})',
  rocm: '{{image}} is an AMD ROCm image, which ships no CUDA: no CUDA check applies to it ({{source}})',
  rocmStage:
    '{{image}} is an AMD ROCm image, which ships no CUDA, but the stage installs CUDA builds ({{what}}), which run on NVIDIA GPUs only ({{source}})',
};
type MessageId = keyof typeof MESSAGES;

export default defineRule({
  id: 'image-unknown',
  description:
    'An image whose CUDA is not known is said, with the reason, where a GPU workload or a CUDA stage runs it',
  defaultSeverity: 'warning',
  fix: 'none',
  messages: MESSAGES,
  helps: {
    container: '{{help}}',
    containerWithoutCuda: '{{help}}',
    containerBuilt:
      "The CUDA of a built image is what its Dockerfile's stage says: its base image's (a row of the knowledge, or its registry's config) and what it installs. Its base image's finding in the Dockerfile says why that one is not known.",
    containerBuiltWithoutCuda:
      'Its base ships no CUDA, and the Dockerfile installs no CUDA build the check reads: the CUDA it loads comes with what runs in it at start (a `uv run` or `pip install` in its entrypoint, a volume), which a check of the files cannot see. Install the CUDA builds in the Dockerfile (a pinned torch from a PyTorch index) to have them judged, or name them in a requirements file it installs.',
    stage: '{{help}}',
    named: '{{help}}',
    rocm: "Nothing to do where the image is meant for AMD GPUs; the gate checks NVIDIA's CUDA stacks.",
    rocmStage:
      'Install the ROCm builds (`--index-url https://download.pytorch.org/whl/rocm6.2`, a `+rocm` wheel), or start from a CUDA image.',
  },
  check({ files, units, kb, baseline, report }) {
    const fleet = baseline.pools.length > 0 || baseline.driver.minimum !== undefined;
    const said = new Set<string>();
    const once = (file: ParsedFile, image: ImageFact): boolean => {
      const key = `${file.path}:${image.span.start}`;
      if (said.has(key)) return false;
      said.add(key);
      return true;
    };
    for (const unit of units) {
      if (unit.container) checkContainer(unit, kb, report, once, fleet);
      else if (unit.root.kind === 'dockerfile' && unit.stage !== undefined) checkStage(unit, kb, report, once);
    }
    // Any other unknown image whose name says it is for GPUs, or that the image a Dockerfile builds starts from when
    // the baseline has a fleet to judge it on: a notice.
    for (const file of files) {
      if (file.kind !== 'dockerfile' && file.kind !== 'skypilot') continue;
      const last = file.images.at(-1);
      // A SkyPilot task's container is what runs on the GPUs it asks for, whatever the baseline's fleet.
      const built = (fleet || file.kind === 'skypilot') && last ? baseImage(file, last.stage) : undefined;
      for (const image of file.images) {
        // A reference a build argument completes is the build's to say (image-pin notes it where pinning is asked),
        // except where it is the base of the image built and a fleet is to run it: its CUDA, and so the drivers it
        // needs, are not known, and that is said.
        if (image.unresolved && !(image === built && image.fromStage === undefined)) continue;
        if (image.fromStage === undefined && rocmImage(image) && imageCuda(image, kb) === undefined) {
          if (once(file, image))
            report({
              messageId: 'rocm',
              data: { image: image.reference, source: ROCM_SOURCE },
              file,
              span: image.span,
              severity: 'notice',
            });
          continue;
        }
        // A name that says GPUs, unless its tag says it is the CPU build (`substratusai/vllm:v0.6.3.post1-cpu`).
        const named = GPU_NAME.test(image.reference) && !CPU_TAG.test(image.tag ?? '');
        if (!(image === built || named) || !unknown(image, kb)) continue;
        if (imageWithoutCuda(image, kb) || kb.imageLookup(image)?.state === 'missing' || !once(file, image)) continue;
        const why = whyUnknown(image, kb);
        report({
          messageId: 'named',
          data: { image: image.reference, why: why.reason, help: why.help },
          file,
          span: image.span,
          severity: 'notice',
        });
      }
    }
  },
});

/** A GPU container whose image's CUDA nothing says (its Dockerfile, the knowledge, its registry). */
function checkContainer(
  unit: Unit,
  kb: KnowledgeBase,
  report: Reporter<MessageId>,
  once: (file: ParsedFile, image: ImageFact) => boolean,
  fleet: boolean,
): void {
  const container = unit.container!;
  // A GPU container whose image is a placeholder is parse-error's (not checked, failing closed).
  if (container.missing || container.claims.length > 0 || container.fact.image.unresolved) return;
  const { fact } = container;
  // NVIDIA's GPU management tools (DCGM's exporter) need only the driver: no CUDA of theirs or of what runs in them.
  if (kb.driverToolImage(imageFullName(fact.image))) return;
  if (kb.imageLookup(fact.image)?.state === 'missing' || !once(unit.root, fact.image)) return;
  // An image the repository builds (its Dockerfile found): the Dockerfile's base is what is not known, said there too.
  if (fact.dockerfile) {
    // Built on an image known to ship no CUDA (python:3.12-slim, a package-manager image): what runs in it brings its
    // own, said at notice as for such an image run directly.
    const base = container.builtOn;
    const without = base ? imageWithoutCuda(base, kb) : undefined;
    if (base && without) {
      report({
        messageId: 'containerBuiltWithoutCuda',
        data: {
          workload: fact.workload,
          container: fact.name,
          image: fact.image.reference,
          path: fact.dockerfile.path,
          base: base.reference,
          why: without,
          unchecked: fleet
            ? "the fleet's drivers are not checked against it"
            : 'the NVIDIA driver it needs is not known',
        },
        file: unit.root,
        span: fact.span,
        severity: 'notice',
      });
      return;
    }
    report({
      messageId: 'containerBuilt',
      data: {
        workload: fact.workload,
        container: fact.name,
        image: fact.image.reference,
        path: fact.dockerfile.path,
        unchecked: fleet ? "the fleet's drivers are not checked against it" : 'the NVIDIA driver it needs is not known',
      },
      file: unit.root,
      span: fact.span,
    });
    return;
  }
  const why = whyUnknown(fact.image, kb);
  report({
    messageId: why.withoutCuda ? 'containerWithoutCuda' : 'container',
    data: {
      workload: fact.workload,
      container: fact.name,
      image: fact.image.reference,
      why: why.reason,
      // With no fleet in the baseline there are no drivers to check; the driver it needs is what is not known.
      unchecked: fleet ? "the fleet's drivers are not checked against it" : 'the NVIDIA driver it needs is not known',
      help: `${why.help} Or name the Dockerfile that builds it: \`images: { "<image name>": "<path to Dockerfile>" }\` in the baseline, or the annotation \`cuda-gatekeeper.io/dockerfile: <path>\` on the workload.`,
    },
    file: unit.root,
    span: fact.span,
    // An image known to ship no CUDA: said at notice (the CUDA comes with what runs in it).
    ...(why.withoutCuda ? { severity: 'notice' as const } : {}),
  });
}

/** A Dockerfile stage that installs CUDA builds on a base whose CUDA is not known. */
function checkStage(
  unit: Unit,
  kb: KnowledgeBase,
  report: Reporter<MessageId>,
  once: (file: ParsedFile, image: ImageFact) => boolean,
): void {
  const base = baseImage(unit.root, unit.stage!);
  if (!base || isScratch(base) || !unknown(base, kb)) return;
  const pinned = unit.claims.filter((claim) => claim.kind !== 'image' && claim.kind !== 'env');
  // CUDA builds on an AMD ROCm image cannot use its GPUs. Only those the files name: a build PyPI would give (an
  // `implied` claim) may never be installed, where the image's own ROCm torch already meets the requirement.
  // Not a stage that installs NVIDIA's CUDA itself (ollama builds its CUDA backends on ROCm's dev image, with
  // `dnf install cuda-toolkit-12-8`): its builds then have their CUDA.
  const installsCuda = pinned.some((claim) => claim.kind === 'apt');
  const named =
    rocmImage(base) && !installsCuda ? pinned.filter((claim) => claim.kind !== 'implied' && claim.kind !== 'name') : [];
  if (named.length > 0) {
    if (!once(unit.root, base)) return;
    const subjects = subjectsOf(named);
    report({
      messageId: 'rocmStage',
      data: { image: base.reference, what: listed(subjects), source: ROCM_SOURCE },
      file: unit.root,
      span: base.span,
    });
    return;
  }
  // A base without CUDA of its own (python, pixi, a config without CUDA_VERSION, ROCm): the builds bring theirs.
  if (imageWithoutCuda(base, kb)) return;
  // Packages built for a CUDA whose release nothing here names (flash-attn, sglang): said all the same.
  const claimed = new Set(pinned.map((claim) => claim.package));
  // And torch from PyPI whose CUDA is not one major for every Python the image may run (its Python is not known):
  // PyPI's Linux torch is a CUDA build whichever release is taken.
  const built = unit.packages.filter(
    ({ pkg, build, invocation }) =>
      !claimed.has(pkg) &&
      (builtForCuda(pkg) ||
        (pkg.ecosystem === 'pip' &&
          pkg.name === 'torch' &&
          !pkg.url &&
          !build?.cpu &&
          // Another index decides which build: `--index-url`, `--find-links`, or a PyTorch index (its CPU builds'
          // `+cpu` sorts above PyPI's release, so `--extra-index-url …/whl/cpu` installs a CPU build).
          !invocation?.indexes.some(
            (index) => index.kind === 'index-url' || index.kind === 'find-links' || isPytorchIndex(index.url),
          ))),
  );
  if (pinned.length === 0 && built.length === 0) return;
  if (kb.imageLookup(base)?.state === 'missing' || !once(unit.root, base)) return;
  const why = whyUnknown(base, kb);
  const subjects = [...new Set([...subjectsOf(pinned), ...built.map(({ pkg }) => `${pkg.rawName}${pkg.specifier}`)])];
  report({
    messageId: 'stage',
    data: {
      image: base.reference,
      what: listed(subjects),
      why: why.reason,
      help: why.help,
    },
    file: unit.root,
    span: base.span,
  });
}

/**
 * What the claims say, each once: one index written in a pyproject.toml and recorded as its lock's registry is one
 * place the builds come from, not two.
 */
function subjectsOf(claims: readonly CudaClaim[]): string[] {
  const seen = new Set<string>();
  const subjects: string[] = [];
  for (const claim of claims) {
    const key = claim.kind === 'index' && claim.index ? `index ${claim.index.url.replace(/\/+$/, '')}` : claim.subject;
    if (seen.has(key)) continue;
    seen.add(key);
    subjects.push(claim.subject);
  }
  return subjects;
}

/** The first two of a list, and an ellipsis for the rest. */
const listed = (subjects: readonly string[]): string =>
  subjects.length > 2 ? `${subjects.slice(0, 2).join(', ')}, …` : subjects.join(', ');

/**
 * An image that names a real image whose CUDA neither the knowledge nor its registry gives (an NGC tag that cannot
 * exist is image-missing's).
 */
function unknown(image: ImageFact, kb: KnowledgeBase): boolean {
  return (
    image.fromStage === undefined && !isScratch(image) && !impossibleNgcTag(image) && imageCuda(image, kb) === undefined
  );
}

/** Why the CUDA of an image is not known, in words, and what would make it known. */
function whyUnknown(
  image: ImageFact,
  kb: KnowledgeBase,
): { readonly reason: string; readonly help: string; readonly withoutCuda?: boolean } {
  const none = imageWithoutCuda(image, kb);
  if (none)
    return {
      reason: none,
      help: 'The CUDA it runs comes with what is installed in it (wheels, conda packages), which the gate sees only in the Dockerfile that builds it.',
      withoutCuda: true,
    };
  if (image.unresolved)
    return {
      reason: `the reference is not resolved here: ${image.unresolved}`,
      help: 'Check the rendered manifest (kustomize build, helm template) or give the ARG a default.',
    };
  const lookup = kb.imageLookup(image);
  if (lookup?.state === 'unread') return { reason: `not read: ${lookup.reason}`, help: LOOKUP };
  // NeMo's 24.05 and 24.07: rows of the frameworks each tag holds, whose sources state no CUDA.
  const row = image.registry === 'nvcr.io' && image.tag ? kb.ngcImage(image.repository, image.tag) : undefined;
  if (row && !row.cuda)
    return {
      reason: `the knowledge snapshot of ${kb.retrieved} holds tag ${image.tag} of nvcr.io/${image.repository} without its CUDA (its source, ${row.source[0]}, does not state it), and its registry was not asked`,
      help: LOOKUP,
    };
  // A base named by an ARG's default (`ARG BASE_IMAGE=non-existing`, runpod's templates, whose bake file gives the
  // real ones) is the image of a build that passes no --build-arg: said so.
  const byDefault = image.via
    ? `; it is the default of ARG ${image.via.name}, which a build may replace (--build-arg ${image.via.name}=…, a bake file)`
    : '';
  return {
    reason: `the knowledge snapshot of ${kb.retrieved} has no row for ${image.tag ? `tag ${image.tag} of ` : ''}${imageFullName(image)}, and its registry was not asked${byDefault}`,
    help: LOOKUP,
  };
}
