/** Synthetic projects for the benchmarks: five files each, one project in seven inconsistent. */
import type { ParsedFile } from '../../src/parsers/facts.js';
import { classifyPath, parseFile } from '../../src/parsers/index.js';

const CUDA = ['11.8', '12.1', '12.4', '12.6', '12.8'];
const TORCH: Record<string, [string, string, string]> = {
  '11.8': ['2.3.1', '0.18.1', '2.3.1'],
  '12.1': ['2.3.1', '0.18.1', '2.3.1'],
  '12.4': ['2.5.1', '0.20.1', '2.5.1'],
  '12.6': ['2.7.1', '0.22.1', '2.7.1'],
  '12.8': ['2.7.1', '0.22.1', '2.7.1'],
};
const IMAGE: Record<string, string> = {
  '11.8': '11.8.0-cudnn8',
  '12.1': '12.1.1-cudnn8',
  '12.4': '12.4.1-cudnn',
  '12.6': '12.6.3-cudnn',
  '12.8': '12.8.1-cudnn',
};
const FILLER = [
  'numpy==1.26.4',
  'pandas==2.2.2',
  'scipy==1.13.1',
  'requests==2.32.3',
  'pydantic==2.7.4',
  'fastapi==0.111.0',
  'uvicorn==0.30.1',
  'tqdm==4.66.4',
  'pyyaml==6.0.1',
  'einops==0.8.0',
  'safetensors==0.4.3',
  'transformers==4.41.2',
  'accelerate==0.31.0',
  'datasets==2.20.0',
  'sentencepiece==0.2.0',
];

export function project(i: number): Record<string, string> {
  const cuda = CUDA[i % CUDA.length]!;
  const wrong = i % 7 === 0 ? CUDA[(i + 1) % CUDA.length]! : cuda; // one project in seven is inconsistent
  const tag = `cu${wrong.replace('.', '')}`;
  const [torch, vision, audio] = TORCH[cuda]!;
  const filler = FILLER.map((line, j) => `${line}${j % 4 === 0 ? '  # pinned for reproducibility' : ''}`).join('\n');
  return {
    Dockerfile: `# syntax=docker/dockerfile:1\nARG CUDA=${IMAGE[cuda]}\nFROM nvidia/cuda:\${CUDA}-devel-ubuntu22.04 AS build\nENV TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0"\nWORKDIR /app\nCOPY requirements.txt requirements-base.txt ./\nRUN apt-get update && apt-get install -y --no-install-recommends git curl \\\n    && rm -rf /var/lib/apt/lists/*\nRUN pip install --no-cache-dir -r requirements.txt\nCOPY . .\nFROM nvidia/cuda:${IMAGE[cuda]!.replace(/-cudnn\d*$/, '')}-runtime-ubuntu22.04\nCOPY --from=build /app /app\nCMD ["python", "-m", "service"]\n`,
    'requirements.txt': `--extra-index-url https://download.pytorch.org/whl/${tag}\n-r requirements-base.txt\n-c constraints.txt\ntorch==${torch}+${tag}\ntorchvision==${vision}+${tag}\ntorchaudio==${audio}+${tag}\n`,
    'requirements-base.txt': `${filler}\n`,
    'constraints.txt': `${FILLER.slice(0, 8).join('\n')}\n`,
    'environment.yml': `name: project-${i}\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.11\n  - cuda-version=${cuda}\n  - numpy=1.26.4\n  - pip\n  - pip:\n      - -r requirements-base.txt\n`,
  };
}

/** Parse a project's files under `prefix/`, each with the parser the CLI would choose for its name. */
export function parseProject(prefix: string, files: Record<string, string>): ParsedFile[] {
  return Object.entries(files).map(([name, text]) => parseFile(`${prefix}/${name}`, text, classifyPath(name)!));
}
