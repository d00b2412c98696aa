import { claimCuda, indexSubject, type ClaimKind } from '../../src/analysis/claims.js';
import { isCpuUrl } from '../../src/analysis/cuda-labels.js';
import { replaceWithin } from '../../src/analysis/edits.js';
import { TORCH_FAMILY } from '../../src/parsers/python-requirement.js';
import { torchPage } from '../../src/analysis/torch-pages.js';
import { claimContext, neverInOneBuild, type Invocation, type Unit } from '../../src/analysis/units.js';
import type { Fix } from '../../src/finding.js';
import type { IndexFact, InstallContext, PackageFact } from '../../src/parsers/facts.js';
import { formatOf } from '../../src/parsers/formats.js';
import { defineRule } from '../../src/rule.js';
import { cudaMajor, publicVersion, tagFromCuda } from '../../src/knowledge/versions.js';
import { compareDotted } from '../../src/util/dotted.js';
import type { KnowledgeBase } from '../../src/knowledge/index.js';
import { releaseFor } from '../../src/analysis/torch-build.js';
import { satisfiesPep440 } from '../../src/util/pep440.js';

/**
 * The pytorch channel's packages whose build cpuonly and pytorch-mutex choose: each build depends on the pytorch-mutex
 * build of its kind (`cpu`, `cuda`), and cpuonly on pytorch-mutex's `cpu` build.
 */
const CONDA_TORCH: ReadonlySet<string> = new Set(['pytorch', 'torchvision', 'torchaudio']);

/** Claims of GPU stacks other than PyTorch (and NVIDIA's libraries alone). */
const OTHER_STACKS: ReadonlySet<ClaimKind> = new Set(['nvidia-wheel', 'cupy', 'jax', 'tensorflow', 'library']);

/** Every message's help: what a CPU build does to a GPU job, and when another stack makes it deliberate. */
const CPU_HELP =
  'A +cpu wheel has no CUDA kernels: torch.cuda.is_available() is False and every GPU job falls back to the CPU or fails.{{deliberate}}';

export default defineRule({
  id: 'cpu-wheel',
  description: 'No CPU-only PyTorch builds where the image or environment targets CUDA',
  defaultSeverity: 'error',
  fix: 'safe',
  messages: {
    cpuBuild: '{{subject}} is a CPU-only build, but {{target}} targets CUDA {{cuda}}',
    cpuIndex: '{{subject}} serves CPU-only builds, but {{target}} targets CUDA {{cuda}}',
    cpuConda: '{{subject}} selects CPU-only PyTorch, but {{target}} targets CUDA {{cuda}}',
  },
  helps: { cpuBuild: CPU_HELP, cpuIndex: CPU_HELP, cpuConda: CPU_HELP },
  check({ units, kb, report }) {
    for (const unit of units) {
      const target = unit.target;
      if (!target) continue;
      const cuda = claimCuda(target);
      const related = [{ file: target.file, span: target.span, message: `CUDA ${cuda} is set here` }];
      // A CPU torch chosen on purpose beside another GPU stack (jax[cuda12], CuPy, onnxruntime-gpu) is how those files
      // keep torch small; when that stack is all that says CUDA, or sits beside the image, the choice is deliberate.
      const otherStack = unit.claims.find((claim) => OTHER_STACKS.has(claim.kind));
      const severity = OTHER_STACKS.has(target.kind) || otherStack ? ('notice' as const) : undefined;
      const why = {
        target: target.subject,
        cuda,
        deliberate: severity
          ? ` ${otherStack?.subject ?? target.subject} uses CUDA here, so a CPU torch may be deliberate.`
          : '',
      };
      // cpuonly and pytorch-mutex choose which build of the pytorch channel's packages conda takes: beside no conda
      // pytorch (torch from pip, RVC's DirectML environment) they choose nothing.
      const condaTorch = unit.packages.some(({ pkg }) => pkg.ecosystem === 'conda' && CONDA_TORCH.has(pkg.name));
      // A CPU build on the branch of an `if` that a build argument picks over the target's (`else` of `if [ "$USE_CUDA"
      // = true ]` after `ARG USE_CUDA=false`) is never installed in one build with it: each build gets one of them.
      const targetContext = claimContext(target);
      for (const { file, pkg, build } of unit.packages) {
        if (neverInOneBuild(unit, file.contexts[pkg.context], targetContext)) continue;
        if (
          condaTorch &&
          pkg.ecosystem === 'conda' &&
          (pkg.name === 'cpuonly' || (pkg.name === 'pytorch-mutex' && /cpu/.test(pkg.build ?? pkg.specifier)))
        ) {
          report({
            messageId: 'cpuConda',
            data: { subject: pkg.rawName, ...why },
            file,
            span: pkg.span,
            related,
            ...(severity ? { severity } : {}),
          });
          continue;
        }
        if (
          !build?.cpu ||
          build.source === 'index-url' ||
          build.source === 'extra-index-url' ||
          build.source === 'find-links'
        )
          continue;
        let fix: Fix | undefined;
        const clause = pkg.clauses[0];
        const tag = tagFromCuda(cuda);
        if (
          clause &&
          pkg.localLabel === 'cpu' &&
          target.precision === 'minor' &&
          kb.torchVariants(build.release?.version ?? '').includes(tag)
        ) {
          const plus = clause.version.indexOf('+');
          const edit = replaceWithin(
            file,
            { span: clause.versionSpan, value: clause.version },
            [plus + 1, clause.version.length],
            tag,
          );
          if (edit) fix = { title: `Use the ${tag} build`, safety: 'safe', edits: [edit] };
        }
        report({
          messageId: 'cpuBuild',
          data: { subject: `${pkg.rawName} ${pkg.exact ?? ''}`.trim(), ...why },
          file,
          span: pkg.span,
          related,
          ...(severity ? { severity } : {}),
          ...(fix && !severity ? { fix } : {}),
        });
      }
      // The indexes the unit installs with: a Dockerfile stage's own runs and what they pull in, one selection of a
      // pyproject.toml or uv.lock.
      const seenIndexes = new Set<IndexFact>();
      // The unit's torch, torchvision and torchaudio by the context that installs them (read once per unit).
      const familyOf = new Map<InstallContext, PackageFact[]>();
      for (const { file, pkg } of unit.packages) {
        if (!TORCH_FAMILY.has(pkg.name)) continue;
        const context = file.contexts[pkg.context]!;
        const list = familyOf.get(context);
        if (list) list.push(pkg);
        else familyOf.set(context, [pkg]);
      }
      for (const invocation of unit.invocations) {
        // A CPU index serves nothing to a run whose every torch, torchvision and torchaudio is pinned to a CUDA
        // build (`==2.5.1+cu124`) or a wheel URL: it is there for another platform (`+cpu ; sys_platform == "darwin"`).
        const family = invocation.members.flatMap((member) => familyOf.get(member.context) ?? []);
        if (family.length > 0 && family.every((pkg) => pkg.url || (pkg.localLabel && pkg.localLabel !== 'cpu')))
          continue;
        // A run of packages that bring no torch (TORCH_FREE): their CPU build leaves torch's alone, a notice.
        const torchFree = family.length === 0 && installsOnly(unit, invocation, TORCH_FREE);
        if (invocation.members.some(({ context }) => neverInOneBuild(unit, context, targetContext))) continue;
        for (const index of invocation.indexes) {
          if (seenIndexes.has(index) || index.kind === 'conda-channel' || !isCpuUrl(index.url)) continue;
          // A CPU page of PyG's (mmcv's, detectron2's) wheels serves only its own packages: none installed, none taken.
          const page = index.kind === 'find-links' ? torchPage(index.url) : undefined;
          if (page && !installsFrom(unit, invocation, page.packages)) continue;
          seenIndexes.add(index);
          const claimFile =
            invocation.members.find((member) => member.context.indexes.includes(index))?.file ?? unit.root;
          let fix: Fix | undefined;
          const at = index.url.search(/cpu(?=\/|$)/);
          // A pyproject.toml's CPU index is what its cpu extra is for: the package beside it is what to change.
          // Only to an index that exists and serves what the run asks of it: the target's build, else the newest
          // of its major below it that does (`torch~=2.2.1` on CUDA 12.4: cu121; 2.2 has no cu124 build).
          const tag =
            at >= 0 && target.precision === 'minor' && formatOf(claimFile.kind).indexes !== 'tables'
              ? servingTag(kb, family, cuda)
              : undefined;
          if (tag) {
            const edit = replaceWithin(claimFile, { span: index.urlSpan, value: index.url }, [at, at + 3], tag);
            if (edit) fix = { title: `Use the ${tag} index`, safety: 'safe', edits: [edit] };
          }
          const softened = torchFree ? ('notice' as const) : severity;
          report({
            messageId: 'cpuIndex',
            data: {
              subject: indexSubject(claimFile, index),
              ...why,
              ...(torchFree ? { deliberate: TORCH_FREE_NOTE } : {}),
            },
            file: claimFile,
            span: index.span,
            related,
            ...(softened ? { severity: softened } : {}),
            ...(fix && !softened ? { fix } : {}),
          });
        }
      }
    }
  },
});

/**
 * The PyTorch index a CPU index moves to for a CUDA target: the target's build where PyTorch publishes it and it
 * serves the run's requirements, else the newest build of the target's major below it that does (minor version
 * compatibility within a major); undefined where none does.
 */
function servingTag(kb: KnowledgeBase, family: readonly PackageFact[], cuda: string): string | undefined {
  const major = cudaMajor(cuda);
  return kb
    .publishedCudaBuilds()
    .filter((build) => cudaMajor(build.cuda) === major && compareDotted(build.cuda, cuda) <= 0)
    .reverse()
    .find((build) => servesFamily(kb, family, build.tag))?.tag;
}

/**
 * Whether PyTorch's index of a CUDA build (`cu124`) serves the torch, torchvision and torchaudio requirements of a run:
 * it exists, and each pin has that build, each range a release that does (a companion's range is not judged).
 */
function servesFamily(kb: KnowledgeBase, family: readonly PackageFact[], tag: string): boolean {
  return family.every((pkg) => {
    if (pkg.exact) {
      const release = releaseFor(kb, pkg, publicVersion(pkg.exact));
      return release === undefined || kb.torchBuilds(release).has(tag);
    }
    if (pkg.name !== 'torch' || !pkg.specifier) return true;
    return kb
      .torchReleases()
      .some(
        (release) => satisfiesPep440(release.version, pkg.specifier!) !== false && kb.torchBuilds(release).has(tag),
      );
  });
}

/**
 * Packages of PyTorch's indexes that require no torch: a CPU index that serves only them leaves torch's build alone.
 * torchcodec declares no dependencies (pytorch/torchcodec pyproject.toml); its CPU build decodes on the CPU, its CUDA
 * build adds NVDEC decoding (its README, "Installing CPU-only TorchCodec" with the CPU index, and "Installing
 * CUDA-enabled TorchCodec"); huggingface/transformers' GPU image takes the CPU one on purpose.
 */
const TORCH_FREE: ReadonlySet<string> = new Set(['torchcodec']);

const TORCH_FREE_NOTE =
  " Here it serves only torchcodec, which requires no torch: its CPU build decodes video on the CPU (the CUDA build adds NVDEC decoding), and torch's own build is not affected, so this may be deliberate. Source: https://github.com/meta-pytorch/torchcodec/blob/07bc410551c01df490a982c74b3e92bf1186f3d4/README.md";

/** Whether every package an invocation of the unit installs is one of `names` (and it installs one). */
function installsOnly(unit: Unit, invocation: Invocation, names: ReadonlySet<string>): boolean {
  const contexts = new Set(invocation.members.map((member) => member.context));
  const installed = unit.packages.filter(({ file, pkg }) => contexts.has(file.contexts[pkg.context]!));
  return installed.length > 0 && installed.every(({ pkg }) => names.has(pkg.name));
}

/** Whether an invocation of the unit installs one of `names`. */
function installsFrom(unit: Unit, invocation: Invocation, names: ReadonlySet<string>): boolean {
  const contexts = new Set(invocation.members.map((member) => member.context));
  return unit.packages.some(({ file, pkg }) => names.has(pkg.name) && contexts.has(file.contexts[pkg.context]!));
}
