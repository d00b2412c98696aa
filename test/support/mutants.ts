/**
 * Realistic upgrade mistakes injected one at a time into real files the checker passes clean (issue 27): each
 * mutant is one edit of one line, with the rule that must catch it at error and the lines it may be reported on.
 * Deterministic: the same corpus gives the same mutants. The kinds follow the held-out measurement's table:
 *
 * - index-major: a PyTorch index `cuXYZ` moved to the other CUDA major;
 * - image-major: a base image moved to an existing tag of the other major;
 * - label: a `+cuXYZ` label with no such build for that torch;
 * - companion: torchvision / torchaudio of another torch minor;
 * - conda: `pytorch-cuda` never published, an impossible `cudatoolkit`, a build string of a CUDA never built;
 * - tag: an `nvidia/cuda` tag that never existed (an update that never came, a CUDA release that never was);
 * - index-dropped: the index or find-links line that `+cu` (or PyG `+ptXYcuZ`) pins need, removed;
 * - other-major: a package of the other CUDA major added (cupy, cuDNN, NVIDIA's runtime wheels, cuda-toolkit).
 *
 * A mutant whose mistake cannot be seen in its file alone (nothing else in it names a CUDA) is not made: the
 * measure is of mistakes a reviewer could catch from the change.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { classifyPath, sniffKind } from '../../src/parsers/index.js';
import { formatOf } from '../../src/parsers/formats.js';

export type MutantKind =
  | 'index-major'
  | 'image-major'
  | 'label'
  | 'companion'
  | 'conda'
  | 'tag'
  | 'index-dropped'
  | 'other-major';

export interface Original {
  readonly name: string;
  /** Repository path → text: the file and what it is checked with. */
  readonly files: Readonly<Record<string, string>>;
  /** The path the mutations are made in. */
  readonly main: string;
}

export interface Mutant {
  readonly id: string;
  readonly kind: MutantKind;
  readonly original: Original;
  readonly files: Readonly<Record<string, string>>;
  /** Rules that catch it (any one), at error. */
  readonly rules: readonly string[];
  /** Lines of `path` it may be reported on (1-based). */
  readonly lines: readonly number[];
  readonly path: string;
  readonly what: string;
}

/** Real files and the reviewer's pairs: fixtures/corpus (with its `with` files) and fixtures/corpus-packaging. */
export function originals(root: string): Original[] {
  const out: Original[] = [];
  const corpus = join(root, 'fixtures', 'corpus');
  const expect = JSON.parse(readFileSync(join(corpus, 'expect.json'), 'utf8')) as Record<
    string,
    { path: string; with?: Record<string, string> }
  >;
  for (const [name, entry] of Object.entries(expect)) {
    const files: Record<string, string> = { [entry.path]: readFileSync(join(corpus, name), 'utf8') };
    for (const [file, path] of Object.entries(entry.with ?? {})) files[path] = readFileSync(join(corpus, file), 'utf8');
    out.push({ name, files, main: entry.path });
  }
  const packaging = join(root, 'fixtures', 'corpus-packaging');
  for (const name of readdirSync(packaging).sort()) {
    if (!/^\d+__/.test(name)) continue;
    const text = readFileSync(join(packaging, name), 'utf8');
    const tail = name.split('__').at(-1)!;
    const kind = classifyPath(tail) ?? sniffKind(text);
    if (!kind) continue;
    const path = classifyPath(tail) ? tail : formatOf(kind).fileName;
    out.push({ name, files: { [path]: text }, main: path });
  }
  return out;
}

const OTHER_MAJOR_INDEX: Readonly<Record<string, string>> = { '11': 'cu121', '12': 'cu118', '13': 'cu126' };
const OTHER_MAJOR_IMAGE: Readonly<Record<string, string>> = { '11': '12.1.1', '12': '11.8.0', '13': '12.8.1' };

/** The CUDA majors a file states elsewhere than on `skip` (labels, images, pytorch-cuda, cudatoolkit, cuda-version). */
function majorsBesides(text: string, skip: number): Set<string> {
  const majors = new Set<string>();
  text.split('\n').forEach((line, i) => {
    if (i === skip || /^\s*#/.test(line)) return;
    for (const match of line.matchAll(/\+cu(1[0-3])\d\b/g)) majors.add(match[1]!);
    for (const match of line.matchAll(/nvidia\/cuda:(1[0-3])\.\d/g)) majors.add(match[1]!);
    for (const match of line.matchAll(/(?:pytorch-cuda|cudatoolkit|cuda-version)\s*[=:]?=?\s*["']?(1[0-3])\.\d/g))
      majors.add(match[1]!);
    for (const match of line.matchAll(/download\.pytorch\.org\/whl\/cu(1[0-3])\d/g)) majors.add(match[1]!);
  });
  return majors;
}

interface Draft {
  readonly kind: MutantKind;
  readonly line: number;
  readonly replace: string;
  readonly rules: readonly string[];
  readonly lines?: readonly number[];
  readonly what: string;
}

/** Every mutant of one original. */
export function mutantsOf(original: Original): Mutant[] {
  // Lock files are written by tools, not by people: their mistakes are made in the manifest.
  const kind = classifyPath(original.main);
  if (
    kind === 'uv-lock' ||
    kind === 'pixi-lock' ||
    kind === 'poetry-lock' ||
    kind === 'conda-lock' ||
    /\.lock\.ya?ml$/.test(original.main)
  )
    return [];
  const text = original.files[original.main]!;
  const lines = text.split('\n');
  const drafts: Draft[] = [];
  const comment = (line: string) => /^\s*#/.test(line);

  lines.forEach((line, i) => {
    if (comment(line)) return;
    // index-major
    const index = /download\.pytorch\.org\/whl\/cu(1[0-3])(\d)\b/.exec(line);
    if (index && majorsBesides(text, i).has(index[1]!)) {
      const other = OTHER_MAJOR_INDEX[index[1]!]!;
      drafts.push({
        kind: 'index-major',
        line: i,
        replace: line.replace(/whl\/cu1[0-3]\d\b/, `whl/${other}`),
        rules: ['cuda-mismatch', 'wheel-missing', 'index-url'],
        what: `index cu${index[1]}${index[2]} → ${other}`,
      });
    }
    // image-major: only where the stage itself installs something that names its CUDA
    const image = /nvidia\/cuda:(1[0-3])\.(\d+)\.(\d+)-((?:cudnn\d?-)?(?:base|runtime|devel))-ubuntu(\d\d\.\d\d)/.exec(
      line,
    );
    const stageEnd = lines.findIndex((other, j) => j > i && /^\s*FROM\s/i.test(other));
    const stage = lines
      .slice(i + 1, stageEnd < 0 ? lines.length : stageEnd)
      .filter((other) => !/^\s*ENV\s/i.test(other));
    if (image && majorsBesides(stage.join('\n'), -1).has(image[1]!)) {
      const other = OTHER_MAJOR_IMAGE[image[1]!]!;
      // The tag as NVIDIA spells it for that release: -cudnn8- up to 12.2, -cudnn- from 12.4; 11.8 and 12.1 on 22.04.
      const old = other === '11.8.0' || other === '12.1.1';
      const flavour = image[4]!.replace(/cudnn\d?-/, old ? 'cudnn8-' : 'cudnn-');
      const os = old ? '22.04' : image[5]!;
      drafts.push({
        kind: 'image-major',
        line: i,
        replace: line.replace(
          image[0]!,
          `nvidia/cuda:${other}-${image[4]!.includes('cudnn') ? flavour : image[4]!}-ubuntu${os}`,
        ),
        rules: ['cuda-mismatch'],
        lines: lines.map((_, n) => n + 1),
        what: `image ${image[1]}.${image[2]}.${image[3]} → ${other}`,
      });
    }
    // label: +cuXYZ a torch release does not have
    const label = /\btorch==(\d+\.\d+\.\d+)\+cu(\d+)/.exec(line);
    if (label) {
      const [major, minor] = label[1]!.split('.').map(Number) as [number, number];
      // A build no release of that line has: cu121 from 2.6 on (and for every 1.x), cu126 before 2.6.
      const missing = major === 1 || minor >= 6 ? 'cu121' : 'cu126';
      if (missing !== `cu${label[2]}`)
        drafts.push({
          kind: 'label',
          line: i,
          replace: line.replace(`+cu${label[2]}`, `+${missing}`),
          rules: ['wheel-missing', 'cuda-mismatch', 'index-url'],
          what: `torch ${label[1]}+cu${label[2]} → +${missing}`,
        });
    }
    // companion: torchvision of another torch minor
    const vision = /\btorchvision\s*(==|=)\s*0\.(\d+)\.(\d+)/.exec(line);
    if (vision && /\btorch\s*(==|=)\s*\d/.test(text)) {
      const minor = Number(vision[2]) > 14 ? Number(vision[2]) - 2 : Number(vision[2]) + 2;
      drafts.push({
        kind: 'companion',
        line: i,
        replace: line.replace(vision[0]!, `torchvision${vision[1]}0.${minor}.0`),
        rules: ['companion-mismatch'],
        what: `torchvision 0.${vision[2]} → 0.${minor}`,
      });
    }
    const audio = /\btorchaudio\s*(==|=)\s*(\d+)\.(\d+)\.(\d+)/.exec(line);
    if (audio && /\btorch\s*(==|=)\s*\d/.test(text)) {
      const version =
        audio[2] === '0'
          ? `0.${Number(audio[3]) > 10 ? Number(audio[3]) - 2 : Number(audio[3]) + 2}.0`
          : `2.${Number(audio[3]) > 2 ? Number(audio[3]) - 2 : Number(audio[3]) + 2}.0`;
      drafts.push({
        kind: 'companion',
        line: i,
        replace: line.replace(audio[0]!, `torchaudio${audio[1]}${version}`),
        rules: ['companion-mismatch'],
        what: `torchaudio ${audio[2]}.${audio[3]} → ${version}`,
      });
    }
    // a conda build string of a CUDA never built (pytorch=2.1.0=py3.10_cuda11.8_cudnn8.7.0_0 → cuda11.9)
    const build = /(\bpytorch\s*=\s*[\d.]+\s*=\s*\S*cuda)(\d+)\.(\d+)/.exec(line);
    if (build)
      drafts.push({
        kind: 'conda',
        line: i,
        replace: line.replace(build[0]!, `${build[1]}${build[2]}.9`),
        rules: ['wheel-missing', 'cuda-mismatch', 'image-missing'],
        what: `a pytorch build for CUDA ${build[2]}.9 (never built)`,
      });
    // cuda-version of a CUDA that never was
    const cudaVersion = /(\bcuda-version\s*(?:==?|:)?\s*["']?)(\d+)\.(\d+)/.exec(line);
    if (cudaVersion)
      drafts.push({
        kind: 'conda',
        line: i,
        replace: line.replace(cudaVersion[0]!, `${cudaVersion[1]}${cudaVersion[2] === '11' ? '11.9' : '12.7'}`),
        rules: ['wheel-missing', 'cuda-mismatch', 'image-missing'],
        what: `cuda-version ${cudaVersion[2]}.${cudaVersion[3]} → a CUDA that never was`,
      });
    // conda: pytorch-cuda never published / cudatoolkit impossible
    const pytorchCuda = /(pytorch-cuda\s*[=:]?=?\s*["']?)(\d+\.\d+)/.exec(line);
    if (pytorchCuda)
      drafts.push({
        kind: 'conda',
        line: i,
        replace: line.replace(pytorchCuda[0]!, `${pytorchCuda[1]}12.6`),
        rules: ['wheel-missing', 'cuda-mismatch'],
        what: `pytorch-cuda ${pytorchCuda[2]} → 12.6 (never published)`,
      });
    const toolkit = /(\bcudatoolkit\s*(?:==?|:)?\s*["']?)(\d+\.\d+)/.exec(line);
    if (toolkit)
      drafts.push({
        kind: 'conda',
        line: i,
        replace: line.replace(toolkit[0]!, `${toolkit[1]}11.9`),
        rules: ['wheel-missing', 'cuda-mismatch', 'image-missing'],
        what: `cudatoolkit ${toolkit[2]} → 11.9 (no such CUDA)`,
      });
    // tag: an update that never came, a minor that never was
    const tag = /nvidia\/cuda:(1[0-3])\.(\d+)\.(\d+)(-\S+)/.exec(line);
    if (tag) {
      const finished = `${tag[1]}.${tag[2]}` !== '13.5';
      if (finished)
        drafts.push({
          kind: 'tag',
          line: i,
          replace: line.replace(tag[0]!, `nvidia/cuda:${tag[1]}.${tag[2]}.9${tag[4]}`),
          rules: ['image-missing'],
          what: `nvidia/cuda ${tag[1]}.${tag[2]}.${tag[3]} → ${tag[1]}.${tag[2]}.9 (no such update)`,
        });
      drafts.push({
        kind: 'tag',
        line: i,
        replace: line.replace(
          tag[0]!,
          `nvidia/cuda:${tag[1] === '11' ? '11.9' : tag[1] === '12' ? '12.7' : '13.9'}.0${tag[4]}`,
        ),
        rules: ['image-missing'],
        what: `nvidia/cuda ${tag[1]}.${tag[2]} → a CUDA release that never was`,
      });
    }
    // other-major in a Dockerfile stage: `pip install cupy-cuda11x` on a CUDA 12 image
    const run = /^\s*RUN\s+.*\bpip3?\s+install\b/i.exec(line);
    if (run && /Dockerfile|dockerfile/.test(original.main)) {
      const from = lines
        .slice(0, i + 1)
        .reverse()
        .find((other) => /^\s*FROM\s/i.test(other));
      const major = /nvidia\/cuda:(1[1-3])\./.exec(from ?? '')?.[1];
      if (major && !line.trimEnd().endsWith('\\')) {
        const other = major === '11' ? '12' : '11';
        drafts.push({
          kind: 'other-major',
          line: i,
          replace: `${line}\nRUN pip install cupy-cuda${other}x==13.3.0`,
          rules: ['cuda-mismatch'],
          lines: [i + 2],
          what: `RUN pip install cupy-cuda${other}x on a CUDA ${major} image`,
        });
      }
    }
    // other-major: a package of the other major added after a CUDA pin
    const pin = /^(\s*-?\s*)(torch|pytorch)\s*(==|=)\s*\d[^\s#;]*/.exec(line);
    if (pin && majorsBesides(text, -1).size === 1) {
      const major = [...majorsBesides(text, -1)][0]!;
      const other = major === '11' ? '12' : '11';
      const conda = /^\s*-/.test(line) || original.main.endsWith('.yml') || original.main.endsWith('.yaml');
      const addition = conda ? `${pin[1]}cupy-cuda${other}x==13.3.0` : `cupy-cuda${other}x==13.3.0`;
      if (!conda && !original.main.endsWith('.toml') && !/Dockerfile|dockerfile/.test(original.main))
        drafts.push({
          kind: 'other-major',
          line: i,
          replace: `${line}\n${addition}`,
          rules: ['cuda-mismatch'],
          lines: [i + 2],
          what: `cupy-cuda${other}x added beside a CUDA ${major} stack`,
        });
      if (!conda && !original.main.endsWith('.toml') && !/Dockerfile|dockerfile/.test(original.main))
        drafts.push({
          kind: 'other-major',
          line: i,
          replace: `${line}\nnvidia-cudnn-cu${other}==9.1.0.70`,
          rules: ['cuda-mismatch'],
          lines: [i + 2],
          what: `nvidia-cudnn-cu${other} added beside a CUDA ${major} stack`,
        });
    }
  });

  // index-dropped: the line that serves the +cu pins, removed (only where a pin needs it)
  const labelled = lines.some((line) => !comment(line) && /\b(torch|torchvision|torchaudio)==[\d.]+\+cu\d+/.test(line));
  lines.forEach((line, i) => {
    if (comment(line) || !labelled) return;
    if (!/^\s*(--extra-index-url|--index-url|-i|--find-links|-f)\b.*download\.pytorch\.org\/whl/.test(line)) return;
    // Another index line of PyTorch's stays: then nothing is missing.
    if (lines.some((other, j) => j !== i && !comment(other) && /download\.pytorch\.org\/whl/.test(other))) return;
    const pins = lines.flatMap((other, j) =>
      /\b(torch|torchvision|torchaudio)==[\d.]+\+cu\d+/.test(other) && !comment(other) ? [j + 1] : [],
    );
    drafts.push({
      kind: 'index-dropped',
      line: i,
      replace: '',
      rules: ['index-url', 'wheel-missing'],
      lines: pins.map((n) => (n > i + 1 ? n - 1 : n)),
      what: 'the PyTorch index line removed',
    });
  });

  return drafts.map((draft, n) => {
    const edited = [...lines];
    if (draft.kind === 'index-dropped') edited.splice(draft.line, 1);
    else edited[draft.line] = draft.replace;
    return {
      id: `${original.name}#${n}`,
      kind: draft.kind,
      original,
      files: { ...original.files, [original.main]: edited.join('\n') },
      rules: draft.rules,
      lines: draft.lines ?? [draft.line + 1],
      path: original.main,
      what: draft.what,
    };
  });
}
