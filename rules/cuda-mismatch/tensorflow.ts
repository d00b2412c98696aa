/**
 * TensorFlow's pip package brings no CUDA: it loads the CUDA libraries of the machine it runs on by their file names
 * (libcudart.so.12, libcublas.so.12, libcudnn.so.9) when it starts, and where they are missing it logs "Cannot dlopen
 * some GPU libraries … Skipping registering GPU devices" and runs on the CPU, with no error. A release is built for one
 * CUDA, and those file names carry its major (from CUDA 11; before, its major and minor: libcudart.so.10.1), so a
 * `tensorflow==2.16.1` (CUDA 12.3) on an image of CUDA 11.8 finds none of its libraries there. In a conda environment
 * whose cudatoolkit is of another CUDA, it finds none there either, unless the machine has its own (a warning).
 */
import { claimCuda, majorUncertain, type CudaClaim } from '../../src/analysis/claims.js';
import type { Unit, UnitPackage } from '../../src/analysis/units.js';
import type { PackageFact, ParsedFile } from '../../src/parsers/facts.js';
import type { Fix } from '../../src/finding.js';
import { cite, type KnowledgeBase, type TensorflowRelease } from '../../src/knowledge/index.js';
import { cudaFromPythonName } from '../../src/analysis/cuda-labels.js';
import { satisfiesPep440 } from '../../src/util/pep440.js';
import { publicVersion } from '../../src/knowledge/versions.js';
import type { Reporter } from '../../src/rule.js';

export const TENSORFLOW_MESSAGES = {
  tensorflowMachine:
    '{{subject}} loads the CUDA {{generation}} libraries of the image it runs in (it is built for CUDA {{found}}), but {{target}} ships CUDA {{expected}}: TensorFlow finds no GPU libraries there and runs on the CPU',
  tensorflowMachineRange:
    'every TensorFlow release {{subject}} admits loads the CUDA {{generation}} libraries of the image it runs in (built for CUDA {{found}}), but {{target}} ships CUDA {{expected}}: TensorFlow finds no GPU libraries there and runs on the CPU',
  tensorflowLibraries:
    '{{subject}} loads {{needs}}, but {{target}} {{has}}: TensorFlow finds no GPU libraries there and runs on the CPU',
  tensorflowConda:
    "{{subject}} loads the CUDA {{generation}} libraries of the machine (it is built for CUDA {{found}}), but the environment's {{target}} gives CUDA {{expected}}: unless the machine has CUDA {{generation}} libraries of its own, TensorFlow finds none and runs on the CPU",
} as const;

const TF_21 = 'https://github.com/tensorflow/tensorflow/releases/tag/v2.1.0';
const TF_PIP = 'https://www.tensorflow.org/install/pip';

const HELP = `TensorFlow's pip package does not bring CUDA (only \`tensorflow[and-cuda]\` does, from 2.15 CUDA 12's pip wheels): it opens the machine's CUDA libraries by name when it starts (libcudart.so.{{soname}}, libcublas, libcudnn), and where they are missing it logs "Cannot dlopen some GPU libraries" and skips every GPU, so the job runs on the CPU without failing. {{why}} Install a release built for CUDA {{expectedGeneration}}{{suggest}}, or a base image of CUDA {{generation}}. Sources: TensorFlow's tested build configurations, {{evidence}}; ${TF_PIP}; ${TF_21} (the tensorflow package loads CUDA from 2.1)`;

export const TENSORFLOW_HELPS = {
  tensorflowMachine: HELP,
  tensorflowMachineRange: HELP,
  tensorflowLibraries: `TensorFlow's pip package brings no CUDA libraries: it opens the image's by name when it starts (the CUDA runtime, cuBLAS, cuFFT, cuSOLVER, cuSPARSE and cuDNN), and where one is missing it logs "Cannot dlopen some GPU libraries" and skips every GPU, so the job runs on the CPU without failing. {{why}} NVIDIA's nvidia/cuda images ship the CUDA runtime alone in their base flavour, CUDA's math libraries from runtime on, and cuDNN only in their cudnn tags (cudnn8: cuDNN 8; cudnn: cuDNN 9) (gitlab.com/nvidia/container-images/cuda, dist/<version>/<os>/<flavour>/cudnn). Use {{fix}}, or install the libraries in the image (apt's libcudnn9-cuda-12, say), or install tensorflow[and-cuda] (TF 2.15 and later), which brings them as pip wheels. Sources: TensorFlow's tested build configurations, {{evidence}}; ${TF_PIP}`,
  tensorflowConda: `${HELP} TensorFlow's instructions for a conda environment's cudatoolkit put the environment's lib folder on LD_LIBRARY_PATH, so those are the libraries it finds; the machine's own are not known here.`,
} as const;

/** conda packages that put CUDA's runtime libraries into the environment (not `cuda-version`, a constraint only). */
const CONDA_CUDA_LIBRARIES: ReadonlySet<string> = new Set([
  'cudatoolkit',
  'cuda-toolkit',
  'cuda-runtime',
  'cuda-cudart',
  'cuda-libraries',
]);

type MessageId = keyof typeof TENSORFLOW_MESSAGES;

/**
 * The pip packages of TensorFlow that load the machine's CUDA: `tensorflow-gpu` always, plain `tensorflow` from 2.1
 * ("The tensorflow pip package now includes GPU support by default", TensorFlow 2.1.0's release notes; before, it was
 * the CPU build), never with the `and-cuda` extra (it brings CUDA's own wheels: a claim of its own, claims.ts).
 */
function loadsMachineCuda(pkg: PackageFact, lowest: string): boolean {
  if (pkg.ecosystem !== 'pip' || pkg.url || pkg.extras.includes('and-cuda')) return false;
  // tensorflow-gpu 2.12 and later is an empty package that fails to install ("tensorflow-gpu has been removed").
  if (pkg.name === 'tensorflow-gpu') return satisfiesPep440(lowest, '<2.12') === true;
  return pkg.name === 'tensorflow' && satisfiesPep440(lowest, '>=2.1') === true;
}

/**
 * The part of a CUDA version its libraries' file names carry: the major from CUDA 11 (libcudart.so.12 for every 12.x),
 * the major and minor before (libcudart.so.10.1, libcudart.so.10.2), where a minor is known.
 */
function generation(cuda: string): string | undefined {
  const [major, minor] = cuda.split('.');
  // CUDA 11.0's cuSOLVER is libcusolver.so.10, 11.1 and later's libcusolver.so.11: TensorFlow 2.4 (CUDA 11.0) finds
  // no cuSOLVER on CUDA 11.1+, and 2.5 (CUDA 11.2) none on 11.0 (tensorflow/tensorflow#45848, #43947).
  if (major === '11') return minor === undefined ? undefined : minor === '0' ? '11.0' : '11';
  if (Number(major) >= 12) return major;
  return minor === undefined ? undefined : `${major}.${minor}`;
}

/** The releases of the knowledge a requirement admits, or undefined where it may take one the knowledge lacks. */
function admitted(pkg: PackageFact, kb: KnowledgeBase): readonly TensorflowRelease[] | undefined {
  if (pkg.exact) {
    const row = kb.tensorflow(pkg.exact);
    return row && loadsMachineCuda(pkg, publicVersion(pkg.exact)) ? [row] : undefined;
  }
  const specifier = pkg.specifier.replace(/\s+/g, '');
  if (!specifier || !pkg.clauses.some((clause) => /^(>=|>|~=|==)$/.test(clause.operator))) return undefined;
  const releases = kb.tensorflowReleases();
  const rows = releases.filter((row) => satisfiesPep440(row.version, specifier) === true);
  // A range down to the knowledge's oldest release may take an older one, whose CUDA is not known here.
  const oldest = releases[releases.length - 1];
  if (rows.length === 0 || rows.includes(oldest!)) return undefined;
  const lowest = rows[rows.length - 1]!.version;
  return loadsMachineCuda(pkg, lowest) ? rows : undefined;
}

/** Packages whose CUDA libraries of one major come with them (the nvidia-*-cu12 wheels a CUDA torch depends on). */
const bringsLibraries = new Map<string, (entry: UnitPackage) => boolean>();
function bringsLibrariesOf(major: string): (entry: UnitPackage) => boolean {
  let test = bringsLibraries.get(major);
  if (!test)
    bringsLibraries.set(
      major,
      (test = ({ pkg, build }) =>
        build?.cuda?.split('.')[0] === major || cudaFromPythonName(pkg.name)?.cuda.split('.')[0] === major),
    );
  return test;
}

/**
 * Each TensorFlow requirement of a unit built on an image of a known CUDA, whose releases load CUDA libraries of
 * another generation than the image ships. Not where anything else of the unit (or the stages above) brings or
 * installs CUDA of TensorFlow's major (a CUDA torch's nvidia-* wheels, apt's libraries): TensorFlow may find those.
 */
export function checkTensorflow(unit: Unit, kb: KnowledgeBase, report: Reporter<MessageId>): void {
  const target = unit.target;
  const conda = target?.kind === 'conda' && CONDA_CUDA_LIBRARIES.has(target.package?.name ?? '');
  if (!target || (target.kind !== 'image' && !conda) || unit.machine === 'aarch64') return;
  const expected = claimCuda(target);
  const expectedGeneration = generation(expected);
  if (!expectedGeneration) return;
  for (const { file, pkg } of unit.packages) {
    if (pkg.name !== 'tensorflow' && pkg.name !== 'tensorflow-gpu') continue;
    const rows = admitted(pkg, kb);
    const generations = new Set(rows?.map((row) => generation(row.cuda)));
    if (!rows || generations.size !== 1) continue;
    const found = generation(rows[0]!.cuda)!;
    if (found === expectedGeneration) {
      if (!conda) checkImageLibraries(unit, target, file, pkg, rows, kb, report);
      continue;
    }
    const major = found.split('.')[0]!;
    if (librariesBeside(unit, target, major)) continue;
    // A range the image's own TensorFlow meets is kept (an NGC TensorFlow image, tensorflow/tensorflow:…-gpu).
    if (!pkg.exact && /tensorflow/.test(target.subject)) continue;
    const cudas = [...new Set(rows.map((row) => row.cuda))];
    // A range that admits the knowledge's newest release admits releases to come, whose CUDA is not known yet.
    const open = !pkg.exact && rows.includes(kb.tensorflowReleases()[0]!);
    const unsure = majorUncertain(target, Number(major), kb) || open;
    report({
      messageId: conda ? 'tensorflowConda' : pkg.exact ? 'tensorflowMachine' : 'tensorflowMachineRange',
      data: {
        subject: `${pkg.rawName}${pkg.specifier}`,
        generation: found,
        found: cudas.join(', '),
        target: target.subject,
        expected,
        soname: found,
        expectedGeneration,
        why: pkg.exact
          ? `TensorFlow ${rows[0]!.version} was built and tested with CUDA ${rows[0]!.cuda} and cuDNN ${rows[0]!.cudnn}.`
          : `Each release it admits (${rows.map((row) => row.version).join(', ')}) was built for CUDA ${cudas.join(' or ')}.`,
        suggest: suggestion(expectedGeneration, kb),
        evidence: cite(rows[0]!),
      },
      file,
      span: pkg.span,
      severity: unsure || conda ? 'warning' : 'error',
      related: [
        { file: target.file, span: target.span, message: `CUDA ${expected} is installed here (${unit.label})` },
      ],
      ...fixes(file, pkg, expectedGeneration, kb),
    });
  }
}

/** Whether the unit or a stage above installs CUDA libraries of `major` besides the image (pip wheels, apt). */
function librariesBeside(unit: Unit, target: CudaClaim, major: string): boolean {
  const own = unit.claims.some((claim) => claim !== target && claim.cuda.split('.')[0] === major);
  return own || unit.inherited?.findLast(bringsLibrariesOf(major)) !== undefined;
}

/** The newest release of the knowledge built for a CUDA of `wanted`'s generation. */
function newestFor(wanted: string, kb: KnowledgeBase): TensorflowRelease | undefined {
  return kb.tensorflowReleases().find((row) => generation(row.cuda) === wanted);
}

function suggestion(wanted: string, kb: KnowledgeBase): string {
  const row = newestFor(wanted, kb);
  return row ? ` (the newest: ${row.version}, built for CUDA ${row.cuda})` : '';
}

/** An exact pin moved to the newest release of the image's CUDA: unsafe, TensorFlow's API moves between releases. */
function fixes(file: ParsedFile, pkg: PackageFact, wanted: string, kb: KnowledgeBase): { suggestions?: Fix[] } {
  const row = newestFor(wanted, kb);
  const clause = pkg.clauses[0];
  if (!row || !pkg.exact || pkg.via || pkg.clauses.length !== 1 || !clause) return {};
  if (file.source.text.slice(clause.versionSpan.start, clause.versionSpan.end) !== clause.version) return {};
  return {
    suggestions: [
      {
        title: `Install TensorFlow ${row.version} (built for CUDA ${row.cuda})`,
        safety: 'unsafe',
        edits: [{ path: file.path, range: [clause.versionSpan.start, clause.versionSpan.end], text: row.version }],
      },
    ],
  };
}

/**
 * An nvidia/cuda image of TensorFlow's CUDA that lacks libraries it opens: a base flavour (the CUDA runtime alone), or
 * a tag without the cuDNN major the release is built with (`12.4.1-cudnn-runtime` ships cuDNN 9, which TensorFlow
 * 2.16, built with cuDNN 8.9, does not open; `12.4.1-runtime` none). Not where the unit installs those libraries
 * itself (apt, pip or conda packages of cuDNN or of CUDA's libraries).
 */
function checkImageLibraries(
  unit: Unit,
  target: CudaClaim,
  file: ParsedFile,
  pkg: PackageFact,
  rows: readonly TensorflowRelease[],
  kb: KnowledgeBase,
  report: Reporter<MessageId>,
): void {
  const image = target.image;
  if (!image?.tag || !kb.isNvidiaCuda(image.registry, image.repository)) return;
  // CUDA's pip wheels of TensorFlow's major beside it (a CUDA torch's nvidia-cublas-cu12, nvidia-cudnn-cu12):
  // TensorFlow may load those.
  if (librariesBeside(unit, target, generation(rows[0]!.cuda)!.split('.')[0]!)) return;
  const tag = kb.nvidiaCudaTag(image.tag);
  if (!tag) return;
  const cudnns = [...new Set(rows.map((row) => row.cudnn.split('.')[0]!))];
  if (cudnns.length !== 1) return;
  const wanted = cudnns[0]!;
  const shipped = tag.cudnn === undefined ? undefined : tag.cudnn === 'cudnn' ? '9' : tag.cudnn.replace('cudnn', '');
  // What the unit installs, and what its files leave unread (`libcudnn${CUDNN_MAJOR}=${CUDNN_VERSION}`, a name only the
  // build knows): either may be those libraries.
  // A red check must be certain: the stage (or a stage it is built on) naming the libraries in any instruction but its
  // FROM (a tarball a script unpacks, a variable that names the package) is reason enough to say nothing.
  const text = stageText(unit);
  const named = (test: RegExp) =>
    text.split('\n').some((line) => !/^\s*(?:FROM\s|#)/i.test(line) && test.test(line.toLowerCase()));
  const installs = (test: RegExp) =>
    unit.packages.some(({ pkg: other }) => test.test(other.name)) ||
    unit.files.some((member) => member.unresolved.some((fact) => test.test(fact.text.toLowerCase()))) ||
    named(test);
  const missing: { needs: string; has: string }[] = [];
  if (
    tag.flavour === 'base' &&
    !installs(/cuda-libraries|cuda-toolkit|cudatoolkit|cuda-runtime|cublas|\bcuda-\d+-\d+\b|(?:^|\s)cuda(?:\s|$)/)
  )
    missing.push({
      needs: "CUDA's math libraries (cuBLAS, cuFFT, cuSOLVER, cuSPARSE)",
      has: 'is a base image with the CUDA runtime alone',
    });
  else if (shipped !== wanted && !installs(/cudnn/))
    missing.push({
      needs: `cuDNN ${wanted} (libcudnn.so.${wanted}; it is built with cuDNN ${rows[0]!.cudnn})`,
      has: shipped === undefined ? 'ships no cuDNN (its tag names none)' : `ships cuDNN ${shipped}`,
    });
  for (const { needs, has } of missing)
    report({
      messageId: 'tensorflowLibraries',
      data: {
        subject: `${pkg.rawName}${pkg.specifier}`,
        needs,
        target: target.subject,
        has,
        why: pkg.exact
          ? `TensorFlow ${rows[0]!.version} was built and tested with CUDA ${rows[0]!.cuda} and cuDNN ${rows[0]!.cudnn}.`
          : `The releases it admits were built with cuDNN ${[...new Set(rows.map((row) => row.cudnn))].join(' or ')}.`,
        fix:
          tag.flavour === 'base' || shipped === undefined
            ? `an image with ${tag.flavour === 'base' ? "CUDA's libraries and " : ''}cuDNN ${wanted} (nvidia/cuda:${tag.version}-${wanted === '9' ? 'cudnn' : `cudnn${wanted}`}-runtime-…, where NVIDIA publishes that tag)`
            : `a TensorFlow release built with cuDNN ${shipped}, or an image tag with cuDNN ${wanted}`,
        evidence: cite(rows[0]!),
      },
      file,
      span: pkg.span,
      severity: 'error',
      related: [{ file: target.file, span: target.span, message: `${target.subject} ${has}` }],
    });
}

/** The instructions of a Dockerfile unit's stage and of the stages it is built on, as text. */
function stageText(unit: Unit): string {
  const file = unit.root;
  if (unit.stage === undefined || file.kind !== 'dockerfile') return '';
  const starts = [...file.images].sort((a, b) => a.span.start - b.span.start);
  const parts: string[] = [];
  const seen = new Set<number>();
  for (let stage: number | undefined = unit.stage; stage !== undefined && !seen.has(stage); ) {
    seen.add(stage);
    const at = starts.findIndex((image) => image.stage === stage);
    if (at < 0) break;
    const start = file.source.text.lastIndexOf('\n', starts[at]!.span.start) + 1;
    parts.push(file.source.text.slice(start, starts[at + 1]?.span.start ?? file.source.text.length));
    stage = starts[at]!.fromStage;
  }
  return parts.join('\n');
}
