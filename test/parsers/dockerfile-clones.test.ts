/** Installs of files a RUN clones (`git clone URL tool && pip install -r tool/requirements.txt`). */
import { describe, expect, it } from 'vitest';
import { parseDockerfile } from '../../src/parsers/dockerfile/parse.js';
import { includeCandidates } from '../../src/analysis/links.js';
import { codeBlock } from '../support/code-block.js';

/** Each include of a Dockerfile at `docker/Dockerfile`: its target, the clone it is in, and its candidates. */
function includes(text: string) {
  const file = parseDockerfile('docker/Dockerfile', text);
  return file.includes.map((include) => [include.target, include.cloned?.url, includeCandidates(file, include)]);
}

describe('a file of a folder a RUN clones', () => {
  it("is the clone's: no COPY of a file of the same name, nor the build context's file at its path, leads to it", () => {
    expect(
      includes(codeBlock`
        FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
        COPY requirements.txt .
        RUN pip install -r requirements.txt
        RUN git clone --depth 1 https://github.com/IDEA-Research/GroundingDINO.git && pip install -r GroundingDINO/requirements.txt
      `),
    ).toEqual([
      ['requirements.txt', undefined, ['docker/requirements.txt', 'requirements.txt']],
      ['GroundingDINO/requirements.txt', 'https://github.com/IDEA-Research/GroundingDINO.git', []],
    ]);
  });

  it("is the build context's file at its path inside the clone where that path has a folder (a clone of its own repository)", () => {
    // vllm-project/aibrix's build/container/Dockerfile.vllm.
    expect(
      includes(codeBlock`
        FROM python:3.12
        ARG AIBRIX_REPO=https://github.com/vllm-project/aibrix
        RUN git clone \${AIBRIX_REPO} /tmp/aibrix && cd /tmp/aibrix && git checkout v0.7.0
        RUN cd /tmp/aibrix && pip install -r python/aibrix_kvcache/requirements/build.txt -r requirements.txt
      `),
    ).toEqual([
      [
        'python/aibrix_kvcache/requirements/build.txt',
        'https://github.com/vllm-project/aibrix',
        ['docker/python/aibrix_kvcache/requirements/build.txt', 'python/aibrix_kvcache/requirements/build.txt'],
      ],
      ['requirements.txt', 'https://github.com/vllm-project/aibrix', []],
    ]);
  });

  it('is found through git options, a directory named, `git -C`, a `cd` into it and a later RUN of the stage', () => {
    const cloned = (text: string) => includes(text).map(([target, url]) => [target, url]);
    expect(
      cloned(codeBlock`
        FROM python:3.11
        RUN git clone -b v1.2 --depth=1 --recurse-submodules https://example.com/org/tool.git /opt/tool && pip install -r /opt/tool/requirements.txt
        RUN git -C /src clone git@github.com:org/lib.git && pip install -r /src/lib/requirements-gpu.txt
        RUN git clone https://example.com/org/app.git app-src
        RUN cd app-src && pip install -r requirements.txt
        RUN cd app-src && cd .. && pip install -r requirements.txt
        RUN git clone https://example.com/org/named.git -- checkout && cd -P checkout/sub && pip install -r ../requirements.txt
        RUN git clone https://github.com/conda-forge/cuda-feedstock.git && pip install -r cuda-feedstock/requirements.txt
      `),
    ).toEqual([
      ['/opt/tool/requirements.txt', 'https://example.com/org/tool.git'],
      ['/src/lib/requirements-gpu.txt', 'git@github.com:org/lib.git'],
      ['requirements.txt', 'https://example.com/org/app.git'],
      ['requirements.txt', undefined],
      ['../requirements.txt', 'https://example.com/org/named.git'],
      ['cuda-feedstock/requirements.txt', 'https://github.com/conda-forge/cuda-feedstock.git'],
    ]);
  });

  it('is not a file the build context has, of a clone the shell decides, of another stage, or after a cd the shell decides', () => {
    expect(
      includes(codeBlock`
        FROM python:3.11 AS tools
        RUN git clone https://example.com/org/tool.git
        FROM python:3.11
        COPY tool/requirements.txt tool/requirements.txt
        RUN pip install -r tool/requirements.txt
        ARG REPO
        RUN git clone $REPO src && pip install -r src/requirements.txt
        RUN git log --oneline && pip install -r log/requirements.txt
        RUN git clone https://example.com/org/app.git app && cd "$HOME" && pip install -r app/requirements.txt
      `).map(([target, url]) => [target, url]),
    ).toEqual([
      ['tool/requirements.txt', undefined],
      ['src/requirements.txt', undefined],
      ['log/requirements.txt', undefined],
      // After a `cd` the shell decides, a relative path may be anywhere.
      ['app/requirements.txt', undefined],
    ]);
  });
});
