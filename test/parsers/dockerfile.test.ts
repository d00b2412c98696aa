/** The Dockerfile parser on small inline inputs: images, ARGs, installs, links and exact positions. */
import { describe, expect, it } from 'vitest';
import { parseDockerfile } from '../../src/parsers/dockerfile/parse.js';
import { at, text } from '../support/positions.js';
import type { ParsedFile } from '../../src/parsers/facts.js';

/** Each package's command: whether it may not run, or the conditions that make it run, or 'runs'. */
function howEachRuns(file: ParsedFile): Record<string, string> {
  return Object.fromEntries(
    file.packages.map((pkg) => {
      const context = file.contexts[pkg.context!]!;
      return [pkg.name, context.mayNotRun ? 'may not run' : (context.holds ?? 'runs')];
    }),
  );
}

describe('Dockerfile parser', () => {
  it('reads stages: --platform, AS name, FROM <stage> chains, registries and digests', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM --platform=linux/amd64 nvcr.io/nvidia/pytorch:24.05-py3 AS base',
        'FROM base AS build',
        'FROM docker.io/library/python:3.11@sha256:abc',
        '',
      ].join('\n'),
    );
    expect(
      file.images.map((image) => ({
        registry: image.registry,
        repository: image.repository,
        tag: image.tag,
        digest: image.digest,
        platform: image.platform,
        stageName: image.stageName,
        fromStage: image.fromStage,
      })),
    ).toEqual([
      {
        registry: 'nvcr.io',
        repository: 'nvidia/pytorch',
        tag: '24.05-py3',
        digest: undefined,
        platform: 'linux/amd64',
        stageName: 'base',
        fromStage: undefined,
      },
      {
        registry: undefined,
        repository: 'base',
        tag: undefined,
        digest: undefined,
        platform: undefined,
        stageName: 'build',
        fromStage: 0,
      },
      {
        registry: undefined,
        repository: 'python',
        tag: '3.11',
        digest: 'sha256:abc',
        platform: undefined,
        stageName: undefined,
        fromStage: undefined,
      },
    ]);
  });

  it('resolves global and stage ARGs into FROM and RUN, and maps edits to the ARG default', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'ARG CUDA=12.4.1',
        'ARG TORCH',
        'FROM nvidia/cuda:${CUDA}-cudnn-devel-ubuntu22.04',
        'ARG CUDA',
        'ARG TV=0.19.1',
        'RUN pip install "torchvision==${TV}" torch==$TORCH',
        '',
      ].join('\n'),
    );
    const image = file.images[0]!;
    expect(image.tag).toBe('12.4.1-cudnn-devel-ubuntu22.04');
    expect(image.via?.name).toBe('CUDA');
    expect(at(file, image.span.start)).toBe('3:6');
    const versionSpan = image.tagMap!.origin(0, 6)!;
    expect([text(file, versionSpan), at(file, versionSpan.start)]).toEqual(['12.4.1', '1:10']);
    const vision = file.packages.find((pkg) => pkg.name === 'torchvision')!;
    expect(vision.exact).toBe('0.19.1');
    expect(at(file, vision.clauses[0]!.versionSpan.start)).toBe('5:8');
    expect(file.unresolved).toEqual([
      expect.objectContaining({ text: 'torch==$TORCH', reason: expect.stringContaining('re-declare it after FROM') }),
    ]);
  });

  it('reads pip, pip3, python -m pip and uv pip commands across continuations and comments', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM ubuntu:22.04',
        'RUN pip3 install --no-cache-dir \\',
        '      --extra-index-url=https://download.pytorch.org/whl/cu121 \\',
        '    # a comment inside the continuation',
        '      torch==2.3.0+cu121 \\',
        '    && python3 -m pip install -r /app/requirements.txt -c constraints.txt \\',
        '    && uv pip install --system --index-url https://download.pytorch.org/whl/cu124 torchaudio==2.4.1',
        '',
      ].join('\n'),
    );
    expect(file.contexts.map((context) => context.tool)).toEqual(['pip', 'pip', 'uv']);
    expect(file.packages.map((pkg) => [pkg.name, pkg.exact, at(file, pkg.span.start)])).toEqual([
      ['torch', '2.3.0+cu121', '5:7'],
      ['torchaudio', '2.4.1', '7:83'],
    ]);
    expect(file.indexes.map((index) => [index.kind, index.url, at(file, index.span.start)])).toEqual([
      ['extra-index-url', 'https://download.pytorch.org/whl/cu121', '3:7'],
      ['index-url', 'https://download.pytorch.org/whl/cu124', '7:32'],
    ]);
    expect(file.includes.map((include) => [include.kind, include.target])).toEqual([
      ['requirement', '/app/requirements.txt'],
      ['constraint', 'constraints.txt'],
    ]);
  });

  it('reads heredoc scripts but not heredoc data', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM ubuntu:22.04',
        'RUN <<EOF',
        'set -e',
        'pip install torch==2.5.1',
        'EOF',
        'RUN cat <<EOF > /tmp/requirements.txt',
        'pip install numpy==1.0',
        'EOF',
        '',
      ].join('\n'),
    );
    expect(file.packages.map((pkg) => [pkg.name, at(file, pkg.span.start)])).toEqual([['torch', '4:13']]);
  });

  it('reads a command whose standard input is a here-document, and requirements written by here-documents', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM ubuntu:22.04',
        'RUN --mount=type=cache,target=/root/.cache/pip pip install torch==2.5.1 -r /dev/stdin <<EOF',
        'numpy==1.0',
        'EOF',
        'COPY <<EOF ./app/req.txt',
        'scipy==1.11.0  # pinned',
        'EOF',
        'RUN cat <<EOT > /tmp/more.txt',
        'pandas==2.2.0',
        'EOT',
        'RUN pip install -r app/req.txt -r /tmp/more.txt -r other.txt',
        'RUN python3 - <<EOF',
        'print("pip install tensorflow==2.0")',
        'EOF',
        '',
      ].join('\n'),
    );
    // The words before the here-document are the command; the body is pip's standard input, or the file written.
    expect(file.packages.map((pkg) => [pkg.name, at(file, pkg.span.start)])).toEqual([
      ['torch', '2:60'],
      ['numpy', '3:1'],
      ['scipy', '6:1'],
      ['pandas', '9:1'],
    ]);
    // Only the file no here-document wrote is still an include.
    expect(file.includes.map((include) => include.target)).toEqual(['other.txt']);
  });

  it('reads a here-document file in the stages built on its own, until a COPY may put another file there', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM python:3.11 AS base',
        'COPY <<EOF /app/r.txt',
        'torch==2.5.1',
        'EOF',
        'FROM base',
        'RUN pip install -r /app/r.txt',
        'COPY r.txt /app/',
        'RUN pip install -r /app/r.txt',
        '',
      ].join('\n'),
    );
    // The child stage sees its parent's file; after the COPY, the install reads the copied file (an include).
    expect(file.packages.map((pkg) => [pkg.name, at(file, pkg.span.start)])).toEqual([['torch', '3:1']]);
    expect(file.includes.map((include) => include.target)).toEqual(['/app/r.txt']);
  });

  it('reads conda, mamba and apt-get installs', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM ubuntu:22.04',
        'RUN conda install -y -c pytorch -c nvidia pytorch=2.1.0 "pytorch-cuda=12.1" && conda clean -a',
        'RUN micromamba install -n base cuda-version=12.4',
        'RUN apt-get update && apt-get install -y --no-install-recommends cuda-toolkit-12-4 libcudnn8=8.9.2.26-1+cuda12.2',
        '',
      ].join('\n'),
    );
    expect(file.packages.map((pkg) => [pkg.ecosystem, pkg.name, pkg.exact ?? '', pkg.localLabel ?? ''])).toEqual([
      ['conda', 'pytorch', '2.1.0', ''],
      ['conda', 'pytorch-cuda', '12.1', ''],
      ['conda', 'cuda-version', '12.4', ''],
      ['apt', 'cuda-toolkit-12-4', '', ''],
      ['apt', 'libcudnn8', '8.9.2.26-1+cuda12.2', 'cuda12.2'],
    ]);
    expect(file.contexts[0]!.channels).toEqual(['pytorch', 'nvidia']);
  });

  it('reads installs inside if, case and loop bodies, marked as on some paths only', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM python:3.12',
        'ARG TARGETPLATFORM',
        'RUN if [ "$TARGETPLATFORM" = "linux/arm64" ]; then \\',
        '      pip install torch==2.6.0 --index-url https://download.pytorch.org/whl/cpu; \\',
        '    else \\',
        '      uv pip install --system torch==2.6.0+cu124; \\',
        '    fi && pip install numpy==2.2.0',
        'RUN for i in $(seq 2); do conda install -y pytorch=2.1.0; done',
        'RUN if pip install vllm==0.8.0; then echo ok; fi',
        // A loop over known words runs its body (once with each).
        'RUN for i in 1 2; do pip install transformers==4.46.0; done',
        '',
      ].join('\n'),
    );
    expect(
      file.packages.map((pkg) => [pkg.name, pkg.exact, file.contexts[pkg.context!]!.alternative ?? 'always']),
    ).toEqual([
      ['torch', '2.6.0', 'in an if, case or loop of its RUN, which may not run'],
      ['torch', '2.6.0+cu124', 'in an if, case or loop of its RUN, which may not run'],
      ['numpy', '2.2.0', 'always'],
      ['pytorch', '2.1.0', 'in an if, case or loop of its RUN, which may not run'],
      // The condition of an `if` runs whenever the `if` is reached.
      ['vllm', '0.8.0', 'always'],
      ['transformers', '4.46.0', 'always'],
    ]);
    expect(file.indexes.map((index) => index.url)).toEqual(['https://download.pytorch.org/whl/cpu']);
  });

  it('knows the CUDA_VERSION an nvidia/cuda image sets, where the Dockerfile does not set its own', () => {
    // google-deepmind/alphafold docker/Dockerfile: `conda install --channel nvidia cuda=${CUDA_VERSION}`.
    const file = parseDockerfile(
      'Dockerfile',
      [
        'ARG CUDA=12.2.2',
        'FROM nvidia/cuda:${CUDA}-cudnn8-runtime-ubuntu20.04',
        'RUN conda install -y --channel nvidia cuda=${CUDA_VERSION}',
        'FROM python:3.11 AS other',
        'RUN conda install -y --channel nvidia cuda=${CUDA_VERSION}',
        '',
      ].join('\n'),
    );
    expect(file.packages.map((pkg) => [pkg.name, pkg.specifier])).toEqual([['cuda', '=12.2.2']]);
    expect(file.unresolved.map((fact) => fact.reason)).toEqual([
      '$CUDA_VERSION is not defined by an ARG or ENV in this build stage',
    ]);
  });

  it("reads the branch of an if that the Dockerfile's own values make true as running, naming the condition", () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM python:3.12',
        'ARG FLASH=true',
        'ARG OFF=false',
        'ARG UNSET',
        'ENV MODE=gpu',
        'RUN if [ "$FLASH" = "true" ]; then pip install a==1; elif [ "$MODE" = gpu ]; then pip install b==1; else pip install c==1; fi',
        'RUN if [ "$OFF" = "true" ]; then pip install d==1; fi',
        'RUN if [ "$UNSET" = "x" ]; then pip install e==1; fi',
        'RUN if $FLASH; then pip install f==1; else pip install g==1; fi',
        'RUN if [[ "$MODE" == "gpu" ]]; then if test -n "$FLASH"; then pip install h==1; fi; fi',
        'RUN if [ "$FLASH" = true ] && [ -z "$UNSET" ]; then pip install i==1; fi',
        'RUN if [[ "$MODE" == g* ]]; then pip install j==1; fi',
        'RUN if ! [ "$OFF" = true ]; then pip install k==1; fi',
        'RUN if [ 2 -eq 2 ]; then pip install l==1; fi',
        'RUN while [ "$FLASH" = true ]; do pip install m==1; done',
        '',
      ].join('\n'),
    );
    expect(howEachRuns(file)).toEqual({
      a: '[ "$FLASH" = "true" ]',
      // `elif` and `else` branches, a false or unknown condition, a compound one, a pattern and a loop: may not run.
      b: 'may not run',
      c: 'may not run',
      d: 'may not run',
      e: 'may not run',
      f: '$FLASH',
      g: 'may not run',
      h: '[[ "$MODE" == "gpu" ]], test -n "$FLASH"',
      i: 'may not run',
      j: 'may not run',
      k: '! [ "$OFF" = true ]',
      l: '[ 2 -eq 2 ]',
      m: 'may not run',
    });
  });

  it("decides an if whose condition chains tests with && and || by the file's values", () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM python:3.10',
        'ARG A=2',
        'ARG B=7',
        'RUN if [ "$A" = "2" ] && [ "$B" = "7" ]; then pip install p==1; else pip install q==1; fi',
        'RUN if [ "$A" = "3" ] || [ "$B" = "7" ]; then pip install r==1; fi',
        'RUN if [ "$A" = "3" ] && [ "$C" = "7" ]; then pip install s==1; else pip install t==1; fi',
        'RUN if [ "$A" = "2" ] && [ "$C" = "7" ]; then pip install u==1; fi',
        '',
      ].join('\n'),
    );
    const read = howEachRuns(file);
    expect(read).toEqual({
      p: '[ "$A" = "2" ] && [ "$B" = "7" ]',
      q: 'may not run',
      r: '[ "$A" = "3" ] || [ "$B" = "7" ]',
      // `false && …` is false whatever follows: the else runs.
      s: 'may not run',
      t: '! [ "$A" = "3" ]',
      // A test of a value not known (C) leaves the whole unknown.
      u: 'may not run',
    });
  });

  it('knows a variable the branch that runs sets, after the if, and one set earlier in the same branch', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM python:3.10',
        'ARG MAJOR=1',
        // The else runs with the ARG's default: TAG is cu118 after the if (another --build-arg may change it).
        'RUN if [ "$MAJOR" = "2" ]; then TAG=cu121; else TAG=cu118; fi && pip install torch==2.0.1+${TAG}',
        // Set before its use in the same branch (mosaicml/composer's Dockerfile): known there, not after the if.
        'RUN if [ -n "$X" ]; then V=cu117 && pip install torchvision==0.15.2+${V}; fi; pip install torchaudio==2.0.2+${V}',
        '',
      ].join('\n'),
    );
    expect(file.packages.map((pkg) => `${pkg.name} ${pkg.exact ?? '-'}`)).toEqual([
      'torch 2.0.1+cu118',
      'torchvision 0.15.2+cu117',
    ]);
    expect(file.unresolved.map((entry) => entry.text)).toEqual(['torchaudio==2.0.2+${V}']);
  });

  it('reads nothing of a branch that never runs with values no build argument changes; one an ARG decides may run', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM python:3.12',
        'ENV MODE=gpu',
        'ENV OFF=false',
        'RUN if [ "$MODE" = cpu ]; then pip install n==1; elif [ "$MODE" = gpu ]; then pip install o==1; else pip install p==1; fi',
        'RUN if [ "$OFF" = true ]; then pip install q==1; else pip install r==1; fi',
        'RUN if [ "$MODE" = gpu ]; then pip install s==1; elif [ "$X" = 1 ]; then pip install t==1; else pip install u==1; fi',
        'ARG FLAG=true',
        'RUN if [ "$FLAG" = false ]; then pip install v==1; elif [ "$MODE" = gpu ]; then pip install w==1; fi',
        'RUN if [ "$FLAG" = true ]; then pip install x==1; else pip install y==1; fi',
        'RUN V=$FLAG && if [ "$V" = false ]; then pip install z==1; fi',
        'RUN M=cpu && if [ "$M" = gpu ]; then pip install zz==1; fi',
        '',
      ].join('\n'),
    );
    const read = howEachRuns(file);
    expect(read).toEqual({
      // ENV decides: the branch that holds runs, the others (their conditions untested) never do.
      o: '[ "$MODE" = gpu ]',
      // Every condition of the chain false: its else runs.
      r: '! [ "$OFF" = true ]',
      s: '[ "$MODE" = gpu ]',
      // An ARG's default decides: the branch it picks is read as running (as the default builds it), and the others
      // may run, since --build-arg can pick them.
      v: 'may not run',
      w: '[ "$MODE" = gpu ]',
      x: '[ "$FLAG" = true ]',
      y: 'may not run',
      // A variable the script sets from another may carry a build argument; one it sets to a word does not.
      z: 'may not run',
    });
  });

  it('says which branch of an if a build argument decides runs only in another build, and instead of which', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM python:3.12',
        'ARG USE_CUDA=false',
        'ARG SLIM=true',
        'RUN if [ "$USE_CUDA" = true ]; then pip install a==1; else pip install b==1; fi',
        'RUN if [ "$SLIM" = true ]; then pip install c==1; else pip install d==1; fi',
        // An elif chain: each branch never runs with what holds where its condition is false.
        'RUN if [ "$SLIM" = true ]; then pip install e==1; elif [ "$USE_CUDA" = true ]; then pip install f==1; fi',
        // No else: nothing runs instead, but an else elsewhere that holds the negation does.
        'RUN if [ "$USE_CUDA" = true ]; then pip install g==1; fi',
        // Nested: the inner branch is in the other build of the outer if.
        'RUN if [ "$USE_CUDA" = true ]; then if [ "$SLIM" = true ]; then pip install h==1; fi; fi',
        '',
      ].join('\n'),
    );
    const by = (name: string) => {
      const context = file.contexts[file.packages.find((pkg) => pkg.name === name)!.context]!;
      return { held: context.held, otherBuild: context.otherBuild };
    };
    const notCuda = '! [ "$USE_CUDA" = true ]';
    expect(by('a')).toEqual({ held: undefined, otherBuild: [notCuda] });
    expect(by('b')).toEqual({ held: [notCuda], otherBuild: undefined });
    expect(by('c')).toEqual({ held: ['[ "$SLIM" = true ]'], otherBuild: undefined });
    expect(by('d')).toEqual({ held: undefined, otherBuild: ['[ "$SLIM" = true ]'] });
    expect(by('e')).toEqual({ held: ['[ "$SLIM" = true ]'], otherBuild: undefined });
    expect(by('f')).toEqual({ held: undefined, otherBuild: [notCuda, '[ "$SLIM" = true ]'] });
    expect(by('g')).toEqual({ held: undefined, otherBuild: [notCuda] });
    expect(by('h')).toEqual({ held: undefined, otherBuild: [notCuda] });
  });

  it('marks the pip and uv installs that replace what is installed (-U, --force-reinstall, -I, uv --reinstall)', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM python:3.12',
        'RUN pip install torch',
        'RUN pip install -qU torch',
        'RUN pip install --upgrade torch && pip install --force-reinstall torch && pip install -I torch',
        'RUN uv pip install --system --reinstall torch && uv pip install -P torch torch && pip install -q -i https://x/simple torch',
        '',
      ].join('\n'),
    );
    expect(file.contexts.map((context) => context.replacesInstalled ?? false)).toEqual([
      false,
      true,
      true,
      true,
      true,
      true,
      true,
      false,
    ]);
  });

  it('a pip configuration file hides the indexes of pip installs after it, said at each; uv reads none', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM python:3.12',
        'RUN uv pip install --system torch==2.6.0',
        'COPY pip.conf /etc/pip.conf',
        'RUN pip install torch==2.6.0 && uv pip install --system torch==2.6.0',
        'RUN pip install --index-url https://download.pytorch.org/whl/cu124 torch==2.6.0',
        '',
      ].join('\n'),
    );
    expect(file.contexts.map((context) => [context.tool, context.hiddenIndexes !== undefined])).toEqual([
      ['uv', false],
      ['pip', true],
      ['uv', false],
      ['pip', true],
    ]);
    // Said where the index is not named on the command.
    expect(file.unresolved.map((fact) => text(file, fact.span))).toEqual(['install torch==2.6.0']);
    // A file of another name is no pip configuration: aws/deep-learning-containers writes the dynamic linker's
    // /etc/ld.so.conf.d/nvidia-pip.conf; one named pip.conf anywhere is pip's.
    const written = (path: string, writer = 'echo "[global]\\nextra-index-url = $URL"') =>
      parseDockerfile('Dockerfile', `FROM python:3.12\nRUN ${writer} > ${path}\nRUN pip install torch==2.6.0\n`)
        .contexts[0]!.hiddenIndexes !== undefined;
    expect(written('/etc/ld.so.conf.d/nvidia-pip.conf')).toBe(false);
    expect(written('/etc/pip.conf')).toBe(true);
    expect(written('~/.config/pip/pip.conf')).toBe(true);
    expect(written('pip.ini')).toBe(true);
    // Literal text that sets no index option is known, and hides nothing (lightning-thunder's image); an index option
    // or a value computed at build time hides the indexes.
    expect(written('/etc/pip.conf', 'apt-get update && echo -e "[global]\\nbreak-system-packages = true"')).toBe(false);
    expect(written('/etc/pip.conf', 'printf "[global]\\nindex-url = https://example.com/simple\\n"')).toBe(true);
    expect(written('/etc/pip.conf', 'printf "[global]\\nfind_links = /wheels\\n"')).toBe(true);
    expect(written('/etc/pip.conf', 'echo "$PIP_CONF"')).toBe(true);
    expect(written('/etc/pip.conf', 'cat pip.template')).toBe(true);
  });

  it('an ARG built with ${V:+"…"} names the image without the quotes', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'ARG CUDA_VERSION=12.4.1',
        'ARG BASE_IMAGE=${CUDA_VERSION:+"nvidia/cuda:${CUDA_VERSION}-cudnn-devel-ubuntu22.04"}',
        'FROM ${BASE_IMAGE}',
        '',
      ].join('\n'),
    );
    expect(file.images.map((image) => [image.repository, image.tag])).toEqual([
      ['nvidia/cuda', '12.4.1-cudnn-devel-ubuntu22.04'],
    ]);
  });

  it('an argument that an empty ARG leaves empty names no package (no parse problem at the top of the file)', () => {
    // mlcommons/inference multimodal/qwen3-vl/docker/vllm-cuda.Dockerfile: the install runs only when the ARG is set.
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM python:3.12',
        'ARG LOADGEN_INSTALL_URL=""',
        'ARG CONDA_EXTRA=',
        'RUN if [ -n "${LOADGEN_INSTALL_URL}" ]; then uv pip install --system "${LOADGEN_INSTALL_URL}" torch==2.6.0; fi',
        'RUN conda install -y "$CONDA_EXTRA" pytorch=2.1.0',
        '',
      ].join('\n'),
    );
    expect(file.problems).toEqual([]);
    expect(file.packages.map((pkg) => [pkg.ecosystem, pkg.name, pkg.exact])).toEqual([
      ['pip', 'torch', '2.6.0'],
      ['conda', 'pytorch', '2.1.0'],
    ]);
  });
  it('reads ENV (both forms) and COPY sources', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM nvidia/cuda:12.4.1-base-ubuntu22.04',
        'ENV TORCH_CUDA_ARCH_LIST="8.0;9.0+PTX" CUDA_HOME=/usr/local/cuda',
        'ENV NVIDIA_REQUIRE_CUDA cuda>=12.4',
        'COPY --chown=app requirements.txt requirements-gpu.txt /app/',
        'COPY ["env/environment.yml", "/env.yml"]',
        '',
      ].join('\n'),
    );
    expect(file.env.map((env) => [env.key, env.value])).toEqual([
      ['TORCH_CUDA_ARCH_LIST', '8.0;9.0+PTX'],
      ['CUDA_HOME', '/usr/local/cuda'],
      ['NVIDIA_REQUIRE_CUDA', 'cuda>=12.4'],
    ]);
    expect(text(file, file.env[0]!.valueSpan)).toBe('8.0;9.0+PTX');
    expect(file.copies.map((copy) => [copy.sources.map((source) => source.path), copy.destination])).toEqual([
      [['requirements.txt', 'requirements-gpu.txt'], '/app/'],
      [['env/environment.yml'], '/env.yml'],
    ]);
  });

  // docs.docker.com/reference/dockerfile/#run---mounttypebind: bind is the default type, `source` the context's root.
  it("reads a RUN's bind mounts from the build context and from a stage as copies into that RUN", () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM python:3.12',
        'RUN --mount=type=cache,target=/root/.cache/pip \\',
        '    --mount=type=bind,source=requirements.txt,target=/tmp/reqs.txt \\',
        '    python -m pip install -r /tmp/reqs.txt',
        'RUN --mount=src=gpu.txt,dst=/gpu.txt --mount=type=bind,target=/src --network=none pip install -r /gpu.txt',
        'RUN --mount=type=bind,from=builder,source=/out/r.txt,target=/r.txt --mount=type=secret,id=pip,target=/etc/pip.conf pip install -r /r.txt',
        'RUN --mount=type=bind,source=uv.lock,target=uv.lock <<EOF',
        'uv sync --frozen',
        'EOF',
        'RUN pip install --mount=type=bind,source=x,target=/x -r /x',
        '',
      ].join('\n'),
    );
    expect(
      file.copies.map((copy) => [copy.sources.map((source) => source.path), copy.destination, copy.fromStage ?? '']),
    ).toEqual([
      [['requirements.txt'], '/tmp/reqs.txt', ''],
      [['gpu.txt'], '/gpu.txt', ''],
      [['.'], '/src', ''],
      // From a stage (or an image): a path there, as COPY --from reads it (no stage "builder" here, so no index).
      [['/out/r.txt'], '/r.txt', 'builder'],
      [['uv.lock'], 'uv.lock', ''],
    ]);
    expect(text(file, file.copies[0]!.span)).toBe('--mount=type=bind,source=requirements.txt,target=/tmp/reqs.txt');
  });

  // Docker's "Build variables" page: "Arguments and variables are inherited from parent stages".
  it('a stage inherits ENV and ARG from every stage it builds on, nearest first', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM ubuntu:22.04 AS base',
        'ENV TORCH_INDEX=https://download.pytorch.org/whl/cu118 EXTRA=https://download.pytorch.org/whl/cu121',
        'ARG LOCAL=https://example.com/simple',
        'FROM base AS deps',
        'ENV TORCH_INDEX=https://download.pytorch.org/whl/cu124',
        'FROM deps AS app',
        'RUN pip install --index-url ${TORCH_INDEX} --extra-index-url $EXTRA --extra-index-url $LOCAL torch==2.5.1',
        'FROM ubuntu:22.04 AS unrelated',
        'RUN pip install --extra-index-url $LOCAL torch==2.5.1',
        '',
      ].join('\n'),
    );
    expect(file.indexes.map((index) => index.url)).toEqual([
      'https://download.pytorch.org/whl/cu124',
      'https://download.pytorch.org/whl/cu121',
      'https://example.com/simple',
    ]);
    // A stage from another image inherits nothing.
    expect(file.unresolved.map((u) => u.reason)).toEqual([expect.stringContaining('$LOCAL is not defined')]);
    // An edit to the inherited URL goes to its definition two stages up.
    expect(text(file, file.indexes[1]!.urlSpan)).toBe('https://download.pytorch.org/whl/cu121');
    expect(file.indexes[1]!.urlSpan.start).toBeLessThan(file.source.text.indexOf('FROM base'));
  });

  it('honours the escape directive', () => {
    const file = parseDockerfile(
      'Dockerfile',
      '# escape=`\nFROM mcr.microsoft.com/windows:ltsc2022\nRUN pip install `\n  torch==2.1.0\n',
    );
    expect(file.packages.map((pkg) => pkg.name)).toEqual(['torch']);
  });

  it('says a file without FROM is not checked, failing closed where it names CUDA, NVIDIA or torch', () => {
    const unread = (text: string) => parseDockerfile('Dockerfile', text).unresolved[0]!;
    expect(unread('RUN echo hi\n')).toMatchObject({ text: 'this file', reason: expect.stringContaining('no FROM') });
    expect(unread('RUN echo hi\n').fails).toBeUndefined();
    expect(unread('RUN pip install torch==2.5.1\n').fails).toBe(true);
  });
  it('reads the Pythons RUNs install by script, with the version where the command names it', () => {
    const source = [
      'ARG PY=3.12',
      'FROM ubuntu:24.04',
      'ARG PY',
      'RUN wget https://repo.anaconda.com/miniconda/Miniconda3-py310_23.1.0-1-Linux-x86_64.sh -O m.sh && bash m.sh -b',
      'RUN curl -L -O "https://github.com/conda-forge/miniforge/releases/latest/download/Miniforge3-$(uname)-$(uname -m).sh"',
      'RUN pyenv install -s 3.11.9 && pyenv install --list',
      'RUN uv python install ${PY} pypy@3.10 && uv python install -i /opt/py',
      'RUN uv venv -p python3.9 /opt/a && uv venv --python=3.8 /opt/b && uv venv -p python3 /opt/c && uv sync --python $UNSET',
      'FROM base',
      'RUN pip install torch',
      '',
    ].join('\n');
    const file = parseDockerfile('Dockerfile', source);
    expect(file.pythons.map((python) => [python.stage, python.by, python.version, text(file, python.span)])).toEqual([
      [
        0,
        'the Miniconda installer',
        '3.10',
        'https://repo.anaconda.com/miniconda/Miniconda3-py310_23.1.0-1-Linux-x86_64.sh',
      ],
      [
        0,
        'the Miniforge installer',
        undefined,
        '"https://github.com/conda-forge/miniforge/releases/latest/download/Miniforge3-$(uname)-$(uname -m).sh"',
      ],
      [0, 'pyenv install', '3.11', '3.11.9'],
      [0, 'uv python install', '3.12', '${PY}'],
      [0, 'uv python install', '3.10', 'pypy@3.10'],
      [0, 'uv python install', undefined, 'install'],
      [0, 'uv venv --python', '3.9', 'python3.9'],
      [0, 'uv venv --python', '3.8', '--python=3.8'],
      [0, 'uv sync --python', undefined, '$UNSET'],
    ]);
  });
});

describe("a project tool's run and add", () => {
  const packagesOf = (run: string) => {
    const file = parseDockerfile('Dockerfile', `FROM python:3.12\nRUN ${run}\n`);
    return file.packages.map((pkg) => [
      pkg.name,
      pkg.exact,
      file.contexts[pkg.context]!.hiddenIndexes ?? null,
      file.contexts[pkg.context]!.indexes.map((index) => index.url),
    ]);
  };

  it('reads the command a project tool runs in its environment, past the options that take a value', () => {
    for (const runner of [
      'poetry run',
      'poetry -C app run',
      'pipenv run',
      'pdm run -p svc',
      'uv run --with numpy --python 3.12',
      'uv run --',
    ])
      expect(
        packagesOf(`${runner} pip install torch==2.1.0+cu118 -i https://download.pytorch.org/whl/cu118`),
        runner,
      ).toEqual([['torch', '2.1.0+cu118', null, ['https://download.pytorch.org/whl/cu118']]]);
    expect(packagesOf('poetry run python -m pip install torch==2.3.1')).toEqual([['torch', '2.3.1', null, []]]);
    expect(packagesOf('python3.9 -m poetry run pip install torch==2.3.1')).toEqual([['torch', '2.3.1', null, []]]);
  });

  it("reads what an add names, from the index the project's sources choose, which the command does not say", () => {
    expect(packagesOf('poetry add --group dev torch==2.1.0+cu118 ./local git+https://github.com/a/b.git')).toEqual([
      ['torch', '2.1.0+cu118', "poetry add takes it from pyproject.toml's sources", []],
    ]);
    expect(packagesOf('uv add --index pytorch=https://download.pytorch.org/whl/cu124 torch==2.6.0')).toEqual([
      ['torch', '2.6.0', "uv add takes it from pyproject.toml's indexes", []],
    ]);
    for (const run of ['pipenv install torch==2.3.1', 'pipenv install --dev --python 3.11 torch==2.3.1'])
      expect(
        packagesOf(run).map(([name, , hidden]) => [name, hidden]),
        run,
      ).toEqual([['torch', "pipenv install takes it from the Pipfile's sources"]]);
    expect(packagesOf('pdm add -G cuda cupy-cuda12x').map(([name]) => name)).toEqual(['cupy-cuda12x']);
    // An option's value is no package (`-f` names a page of wheels, not a requirement).
    expect(
      packagesOf('uv add torch -f https://download.pytorch.org/whl/cu111/torch_stable.html').map(([name]) => name),
    ).toEqual(['torch']);
  });

  it('installs the whole project after an add, unless the add only locks', () => {
    const includesOf = (run: string) =>
      parseDockerfile('Dockerfile', `FROM python:3.12\nRUN ${run}\n`).includes.map((include) => [
        include.target,
        include.selects,
      ]);
    // Poetry's installer, with no group named, takes every group not marked optional.
    expect(includesOf('poetry add torch==2.3.1')).toEqual([
      ['pyproject.toml', ['the project', '*default-groups poetry']],
      ['poetry.lock', ['the project', '*default-groups poetry']],
    ]);
    expect(includesOf('uv add --project=svc torch')).toEqual([
      ['svc/pyproject.toml', ['the project']],
      ['svc/uv.lock', ['the project']],
    ]);
    expect(includesOf('pdm add -p api -G cuda cupy-cuda12x').map(([target]) => target)).toEqual([
      'api/pyproject.toml',
      'api/pdm.lock',
    ]);
    for (const run of [
      'poetry add --lock torch',
      'uv add --no-sync torch',
      'uv add --frozen torch',
      'pdm add --no-sync torch',
    ])
      expect(includesOf(run), run).toEqual([]);
    // What else `pipenv install PACKAGE` installs is not documented: only the package named.
    expect(includesOf('pipenv install torch')).toEqual([]);
  });
});

describe('a lock exported to a requirements file', () => {
  const includesOf = (...lines: string[]) =>
    parseDockerfile('Dockerfile', `FROM python:3.12 AS base\n${lines.join('\n')}\n`)
      .includes.filter((include) => include.selects !== undefined)
      .map((include) => [include.target, include.selects, include.optional ?? false]);

  it('is installed where pip installs the exported file: the lock, in the selection exported', () => {
    expect(
      includesOf('RUN poetry export -f requirements.txt > requirements.txt && pip install -r requirements.txt'),
    ).toEqual([['poetry.lock', ['the project'], true]]);
    expect(
      includesOf('RUN poetry export --with gpu -E cuda -o requirements.txt', 'RUN pip install -r ./requirements.txt'),
    ).toEqual([['poetry.lock', ['the project', 'group gpu', 'extra cuda'], true]]);
    expect(includesOf('RUN uv export --extra cu124 -o req.txt && uv pip install --system -r req.txt')).toEqual([
      ['uv.lock', ['extra cu124'], true],
    ]);
    expect(includesOf('RUN pdm export --prod -o r.txt && pip install -r r.txt')).toEqual([
      ['pdm.lock', ['the project'], true],
    ]);
    expect(includesOf('RUN pdm export -G cuda -o r.txt && pip install -r r.txt')).toEqual([
      ['pdm.lock', ['the project', 'group cuda'], true],
    ]);
    expect(includesOf('RUN pipenv requirements --dev > r.txt && pip install -r r.txt')).toEqual([
      ['Pipfile.lock', ['dev'], true],
    ]);
  });

  it('is installed from the file standard output went to, and only from that file', () => {
    expect(includesOf('RUN poetry export -f requirements.txt > req.txt', 'RUN pip install -r ./req.txt')).toEqual([
      ['poetry.lock', ['the project'], true],
    ]);
    expect(includesOf('RUN uv export --frozen 1> req.txt 2> errors.log && pip install -r req.txt')).toEqual([
      ['uv.lock', ['the project'], true],
    ]);
    // Redirected to another file than the one installed; standard error is not the export.
    expect(includesOf('RUN poetry export > req.txt && pip install -r other.txt')).toEqual([]);
    expect(includesOf('RUN poetry export 2> req.txt && pip install -r req.txt')).toEqual([
      ['poetry.lock', ['the project'], true],
    ]);
  });

  it("is installed from its copy in another stage (COPY --from, as in FastAPI's recipe)", () => {
    const builder = (...lines: string[]) =>
      includesOf(
        'WORKDIR /tmp',
        'COPY ./pyproject.toml ./poetry.lock* /tmp/',
        'RUN poetry export -f requirements.txt --output requirements.txt --without-hashes --with cuda',
        'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04',
        ...lines,
      );
    const locked = [['poetry.lock', ['the project', 'group cuda'], true]];
    expect(
      builder(
        'COPY --from=base /tmp/requirements.txt /code/requirements.txt',
        'RUN pip install --no-cache-dir --upgrade -r /code/requirements.txt',
      ),
    ).toEqual(locked);
    // Into a folder, installed by a path relative to the WORKDIR, or named by the stage's index.
    expect(builder('COPY --from=base /tmp/requirements.txt .', 'RUN pip install -r requirements.txt')).toEqual(locked);
    expect(builder('COPY --from=0 /tmp/requirements.txt /code/', 'RUN pip install -r requirements.txt')).toEqual(
      locked,
    );
    // Another file of the stage, a stage that exported nothing, or an image's file: not the export.
    expect(builder('COPY --from=base /tmp/constraints.txt /code/', 'RUN pip install -r /code/constraints.txt')).toEqual(
      [],
    );
    expect(
      builder('COPY --from=python:3.12 /tmp/requirements.txt /code/', 'RUN pip install -r /code/requirements.txt'),
    ).toEqual([]);
    expect(
      includesOf(
        'COPY --from=base /tmp/requirements.txt /code/',
        'RUN poetry export -o requirements.txt',
        'RUN pip install -r /code/requirements.txt',
      ),
    ).toEqual([]);
  });

  it('is not what another file, a project or another stage installs', () => {
    expect(includesOf('RUN poetry export -o requirements.txt && pip install -r other.txt')).toEqual([]);
    expect(
      includesOf('RUN poetry export -o requirements.txt', 'FROM python:3.12', 'RUN pip install -r requirements.txt'),
    ).toEqual([]);
    // `pip install .` includes the project with its own selection, not the export.
    expect(includesOf('RUN poetry export > requirements.txt && pip install .')).toEqual([
      ['pyproject.toml', ['pip: the project'], true],
    ]);
  });
});

describe('a wheel address whose Python tags are only known when the build runs', () => {
  const parse = (url: string) =>
    parseDockerfile(
      'Dockerfile',
      `FROM nvidia/cuda:11.2.2-devel-ubuntu20.04\nRUN PYTAGS=$(python tags.py) && pip install ${url}\n`,
    );

  it('reads its name, version and CUDA, and says nothing is unknown but the tags', () => {
    const file = parse('https://download.pytorch.org/whl/cu101/torch-1.7.1%2Bcu101-${PYTAGS}-linux_x86_64.whl');
    expect(file.packages.map((pkg) => [pkg.name, pkg.exact, pkg.localLabel])).toEqual([
      ['torch', '1.7.1+cu101', 'cu101'],
    ]);
    expect(file.unresolved).toEqual([]);
  });

  it('stays not checked where the name, version or platform is the unknown part', () => {
    for (const url of [
      'https://download.pytorch.org/whl/cu101/torch-${V}%2Bcu101-cp38-cp38-linux_x86_64.whl',
      'https://download.pytorch.org/whl/cu101/torch-1.7.1%2Bcu101-cp38-cp38-${PLATFORM}.whl',
      'https://download.pytorch.org/whl/${CU}/torch-1.7.1-cp38-cp38-linux_x86_64.whl',
    ]) {
      const file = parse(url);
      expect(file.packages, url).toEqual([]);
      expect(file.unresolved.length, url).toBe(1);
    }
  });

  it("reads a shell's command string as the commands it runs, where it is written", () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM ubuntu:22.04',
        'RUN bash -c "pip install torch==2.5.1" && sh -ec \'pip install torchvision==0.20.1\'',
        'RUN sudo -u app -H bash -lc "cd /app && pip install torchaudio==2.5.1"',
        'RUN su - app -c "pip install --user numpy==1.26.4"',
        'RUN /bin/bash -ceuxo pipefail "pip install triton==3.1.0"',
        'RUN conda run -n env --no-capture-output /bin/bash -c "pip install xformers==0.0.28.post3"',
        'RUN bash -o pipefail -c "bash -c \\"pip install scipy==1.14.1\\""',
        'RUN if [ -n "$X" ]; then bash -c "pip install pillow==11.0.0"; fi',
        '',
      ].join('\n'),
    );
    expect(file.packages.map((pkg) => [pkg.name, pkg.exact, at(file, pkg.span.start)])).toEqual([
      ['torch', '2.5.1', '2:26'],
      ['torchvision', '0.20.1', '2:63'],
      ['torchaudio', '2.5.1', '3:53'],
      ['numpy', '1.26.4', '4:37'],
      ['triton', '3.1.0', '5:44'],
      ['xformers', '0.0.28.post3', '6:68'],
      ['scipy', '1.14.1', '7:48'],
      ['pillow', '11.0.0', '8:47'],
    ]);
    expect(howEachRuns(file)).toMatchObject({ torch: 'runs', pillow: 'may not run' });
  });

  it('says that the scripts a RUN runs are not read, and not what sets the environment', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM ubuntu:22.04',
        'RUN bash ./scripts/install_deps.sh cu124 && /tmp/det/install_apex.sh',
        'RUN sudo sh -e $DIR/setup.sh && bash -c "echo hi"',
        'RUN source /opt/conda/etc/profile.d/conda.sh && . ./env.sh && bash -x',
        'RUN bash Miniconda3-latest-Linux-x86_64.sh -b -p /opt/conda',
        '',
      ].join('\n'),
    );
    expect(file.unresolved.map((fact) => [fact.text, at(file, fact.span.start)])).toEqual([
      ['./scripts/install_deps.sh', '2:10'],
      ['/tmp/det/install_apex.sh', '2:45'],
      ['$DIR/setup.sh', '3:16'],
    ]);
  });

  it("reads a parameter expansion's quoted pattern and replacement as bash does", () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM ubuntu:22.04',
        'ARG CUDA=12.6.3',
        "RUN MM=${CUDA%'.'*} && pip install --extra-index-url=\"https://download.pytorch.org/whl/cu${MM//'.'/''}/\" x",
        'RUN pip install --extra-index-url "https://download.pytorch.org/whl/cu${CUDA//"."/}" y',
        "RUN pip install --extra-index-url https://download.pytorch.org/whl/${CUDA/'12'/'cu12'} z",
        '',
      ].join('\n'),
    );
    expect(file.indexes.map((index) => index.url)).toEqual([
      'https://download.pytorch.org/whl/cu126/',
      'https://download.pytorch.org/whl/cu1263',
      'https://download.pytorch.org/whl/cu12.6.3',
    ]);
  });
});
