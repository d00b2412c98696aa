/**
 * Replicate's Cog configuration (`cog.yaml`): the image `cog build` makes, read for what decides its CUDA and torch.
 * What Cog does with it (github.com/replicate/cog at 6110c912377d4ded0f57165d305821a14a9a4418, v0.22.0):
 * - `build.gpu: true` builds on a CUDA base: Replicate's `r8.im/cog-base:cuda<M.m>-python<M.m>[-torch<X.Y.Z>]`
 *   (pkg/dockerfile/base.go, BaseImageName), itself built FROM `nvidia/cuda:<M.m.p>-cudnn-devel-ubuntu<…>`
 *   (config.go cudaBaseImageFor), or that image directly where no cog-base fits. `build.cuda` names the CUDA; without
 *   it Cog takes the newest CUDA the pinned torch has a build for (config.go validateAndCompleteCUDA).
 * - A `torch==X` requirement (and torchvision's) is installed from the PyTorch index of X's newest build whose CUDA is
 *   at most `build.cuda`, which Cog adds as `--extra-index-url https://download.pytorch.org/whl/cuXYZ/`; with none,
 *   plain PyPI's build (config.go pythonPackageForArch, compatibility.go torchGPUPackage). Ranges and other lines are
 *   installed as written.
 * - `build.python_packages` (requirement lines) or `build.python_requirements` (a requirements file, relative to the
 *   project, which is cog.yaml's folder) are what pip installs; `build.run` commands run after them.
 * - With `build.gpu` false the image is `python:<version>-slim`, with no CUDA of its own.
 */
import { isMap, isScalar, type Node } from 'yaml';
import type { ContextDraft, FactSink, ParsedFile } from '../facts.js';
import { imageFactOf } from '../image-ref.js';
import { readScript } from '../scripts.js';
import type { Mapped } from '../mapped.js';
import { addRequirementsContext, parseRequirementLine } from '../requirements/parse.js';
import type { Resolver } from '../shell.js';
import type { Span } from '../source.js';
import { listOf, readYamlDocument, scalarText, valueOf } from '../yaml-text.js';

/** Cog's own environment variables are set outside cog.yaml: a `$NAME` in a run command is not known here. */
const unknownVariable: Resolver = (name) => ({ unresolved: `$${name} is set outside cog.yaml, when the build runs` });

export function parseCog(path: string, text: string): ParsedFile {
  const { source, sink, doc } = readYamlDocument(path, text);
  if (!doc) return sink.finish(path, 'cog', source);
  const build = valueOf(doc.contents, 'build');
  if (!isMap(build)) return sink.finish(path, 'cog', source);
  const gpu = valueOf(build, 'gpu');
  const onGpu = isScalar(gpu) && gpu.value === true;
  const cuda = scalarText(valueOf(build, 'cuda'), source);
  const python = scalarText(valueOf(build, 'python_version'), source)?.text;
  const span: Span = cuda ? cuda.site(0, cuda.text.length) : rangeOf(gpu ?? build);
  // Cog refuses a CUDA without its minor or older than 11 (config.go validateCudaVersion): said, and nothing of it
  // taken for the build's CUDA.
  const valid = cuda !== undefined && /^\d+\.\d+(?:\.\d+)?$/.test(cuda.text) && Number.parseInt(cuda.text, 10) >= 11;
  if (cuda && !valid)
    sink.problems.push({
      span,
      message: `build.cuda "${cuda.text}" is no CUDA version Cog accepts (major.minor, 11.0 or newer), so cog build refuses it`,
    });
  const context = addRequirementsContext(sink, 'pip', span, {
    stage: 0,
    // Cog takes a torch pin's build from the PyTorch index of the newest build within the image's CUDA.
    ...(onGpu && (valid || !cuda) ? { pytorchUpTo: { ...(cuda ? { cuda: cuda.text } : {}), span, by: 'Cog' } } : {}),
  });
  sink.stages.push({ index: 0, span: { start: 0, end: text.length } });
  // The base image, where the file says its CUDA (without `cuda`, Cog takes the newest of the torch pinned, which is
  // the build it installs: nothing to compare).
  if (onGpu && cuda && valid) {
    const minor = cuda.text.split('.').slice(0, 2).join('.');
    const pythonPart = python && /^3\.\d+/.test(python) ? `-python${/^3\.\d+/.exec(python)![0]}` : '';
    const reference = `r8.im/cog-base:cuda${minor}${pythonPart}`;
    // No tag span: the tag is Cog's, made from `cuda`, and no edit of the file's text changes it as such.
    sink.images.push(imageFactOf(reference, 0, span));
  }
  for (const item of listOf(valueOf(build, 'python_packages'))) {
    const line = scalarText(item, source);
    if (line) packageLine(sink, line, context);
  }
  // A GPU build needs torch's version, which picks the CUDA (compatibility.go: "torch version must be specified when
  // using CUDA", from Cog 0.16.10; an older Cog installs PyPI's newest torch, whatever its CUDA).
  const torch = onGpu ? sink.packages.find((pkg) => pkg.name === 'torch' && !pkg.specifier && !pkg.url) : undefined;
  if (torch)
    sink.problems.push({
      span: torch.span,
      message:
        'torch has no version, so cog build refuses this GPU build ("torch version must be specified when using CUDA", Cog 0.16.10 and later): pin it (`torch==X.Y.Z`), and Cog installs its build for build.cuda',
    });
  const requirements = scalarText(valueOf(build, 'python_requirements'), source);
  if (requirements && requirements.text.trim()) {
    const at = requirements.site(0, requirements.text.length);
    // Relative to the project, cog.yaml's folder, as a requirements file's includes are read.
    const target = requirements.text.trim().replace(/^\.\//, '');
    sink.addInclude(context, { kind: 'requirement', target, targetSpan: at, span: at, context: context.id });
  }
  for (const item of listOf(valueOf(build, 'run'))) {
    const command = scalarText(isMap(item) ? valueOf(item, 'command') : item, source);
    if (command) readScript(sink, command, context.stage ?? 0, unknownVariable, 'the build.run command');
  }
  return sink.finish(path, 'cog', source);
}

/**
 * A `python_packages` line. On a pinned one (`torch==1.11.0 --extra-index-url=https://…/cu113`), Cog takes the index
 * options out and writes them at the top of the requirements it installs, for every line (requirements.go
 * SplitPinnedPythonRequirement: `--extra-index-url=URL`, `--find-links=URL`, `-f URL`; config.go
 * PythonRequirementsForArch): indexes of the install, not options pip would ignore on a requirement line.
 */
function packageLine(sink: FactSink, line: Mapped, context: ContextDraft): void {
  const text = line.text;
  if (!/^\s*[A-Za-z0-9_-]+==\S/.test(text)) return parseRequirementLine(sink, line, context);
  const options = /\s(?:--extra-index-url=(\S+)|--find-links=(\S+)|-f\s+(\S+))/g;
  let end = text.length;
  for (let match = options.exec(text); match; match = options.exec(text)) {
    end = Math.min(end, match.index);
    const url = match[1] ?? match[2] ?? match[3]!;
    const at = match.index + match[0].length - url.length;
    const urlSpan = line.site(at, at + url.length);
    const span = line.site(match.index + 1, match.index + match[0].length);
    const kind = match[1] !== undefined ? ('extra-index-url' as const) : ('find-links' as const);
    sink.addIndex(context, { kind, url, urlSpan, span, context: context.id });
  }
  parseRequirementLine(sink, line.slice(0, end), context);
}

function rangeOf(node: Node): Span {
  const range = node.range;
  return range ? { start: range[0], end: range[1] } : { start: 0, end: 0 };
}
