/**
 * Where a Dockerfile's install of a path in the image leads in the repository (includeCandidates): back through the
 * COPY instructions of the stage and the stages it builds on, a RUN's bind mounts, and `COPY --from` of an earlier
 * stage, to the build context.
 */
import { describe, expect, it } from 'vitest';
import { includeCandidates } from '../../src/analysis/links.js';
import { parseDockerfile } from '../../src/parsers/dockerfile/parse.js';

/** The candidates of each include of a Dockerfile at `docker/Dockerfile`, nearest first. */
function candidates(...lines: string[]): string[][] {
  const file = parseDockerfile('docker/Dockerfile', `${lines.join('\n')}\n`);
  return file.includes.map((include) => includeCandidates(file, include));
}

describe('an install of a file in the image', () => {
  it("reads a relative path in the stage's WORKDIR, through a COPY written relative to an earlier one", () => {
    // GenerativeAIExamples' workflow agent: `COPY . workflow` under WORKDIR /workspace, then WORKDIR into a subfolder.
    expect(
      candidates(
        'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04',
        'WORKDIR /workspace',
        'COPY . workflow',
        'WORKDIR workflow/optimization',
        'RUN pip install -r requirements.txt',
      )[0]!.slice(0, 2),
    ).toEqual(['docker/optimization/requirements.txt', 'optimization/requirements.txt']);
    // A stage FROM another keeps its WORKDIR; a WORKDIR naming a variable, or a RUN that changes directory, is not
    // followed (the path is matched as written, as before).
    expect(
      candidates(
        'FROM python:3.11 AS base',
        'WORKDIR /app',
        'COPY . .',
        'FROM base',
        'WORKDIR sub',
        'RUN pip install -r requirements.txt',
      )[0]![0],
    ).toBe('docker/sub/requirements.txt');
    expect(
      candidates(
        'FROM python:3.11',
        'WORKDIR /app',
        'COPY . .',
        'WORKDIR $DIR',
        'RUN pip install -r requirements.txt',
      )[0]![0],
    ).toBe('docker/requirements.txt');
    expect(
      candidates(
        'FROM python:3.11',
        'WORKDIR /app',
        'COPY . .',
        'WORKDIR sub',
        'RUN cd /app && pip install -r requirements.txt',
      )[0]![0],
    ).toBe('docker/requirements.txt');
  });

  it('leads through COPY --from of an earlier stage to what that stage copied from the context', () => {
    expect(
      candidates(
        'FROM python:3.11 AS builder',
        'COPY requirements.txt /src/requirements.txt',
        'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04',
        'COPY --from=builder /src/requirements.txt /app/reqs.txt',
        'RUN pip install -r /app/reqs.txt',
      ),
    ).toEqual([['docker/requirements.txt', 'requirements.txt']]);
    // A folder copied whole, a stage named by its index, and a chain of two stages.
    expect(
      candidates(
        'FROM python:3.11',
        'COPY . /src',
        'FROM python:3.11 AS middle',
        'COPY --from=0 /src /opt/src',
        'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04',
        'COPY --from=middle /opt/src/requirements/gpu.txt /gpu.txt',
        'RUN pip install -r /gpu.txt',
      ),
    ).toEqual([['docker/requirements/gpu.txt', 'requirements/gpu.txt']]);
  });

  it('leads nowhere through COPY --from of an image, of a later stage, or of a path the stage did not copy', () => {
    expect(
      candidates(
        'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04',
        'COPY --from=ghcr.io/acme/reqs:1 /requirements.txt /app/requirements.txt',
        'RUN pip install -r /app/requirements.txt',
      ),
    ).toEqual([[]]);
    expect(
      candidates(
        'FROM python:3.11 AS builder',
        'RUN pip freeze > /src/requirements.txt',
        'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04',
        'COPY --from=builder /src/requirements.txt /app/requirements.txt',
        'RUN pip install -r /app/requirements.txt',
      ),
    ).toEqual([[]]);
  });

  it('reads COPY --from as the first earlier stage of that name, once, in the parser (fromIndex)', () => {
    const file = parseDockerfile(
      'Dockerfile',
      [
        'FROM python:3.11 AS deps',
        'FROM python:3.11 AS deps',
        'FROM python:3.11',
        'COPY --from=DEPS /a /a',
        'COPY --from=1 /b /b',
        'COPY --from=later /c /c',
        'COPY --from=python:3.12 /d /d',
        'FROM python:3.11 AS later',
        '',
      ].join('\n'),
    );
    expect(file.copies.map((copy) => [copy.fromStage, copy.fromIndex])).toEqual([
      ['DEPS', 0],
      ['1', 1],
      ['later', undefined],
      ['python:3.12', undefined],
    ]);
  });

  it("leads through a RUN's bind mount from the context", () => {
    expect(
      candidates(
        'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04',
        'RUN --mount=type=bind,source=requirements.txt,target=/tmp/r.txt pip install -r /tmp/r.txt',
      ),
    ).toEqual([['docker/requirements.txt', 'requirements.txt']]);
  });
});

describe('a COPY source named without an extension', () => {
  it('may be a file or a folder: the file first, then the folder', () => {
    expect(
      candidates(
        'FROM nvidia/cuda:11.8.0-runtime-ubuntu22.04',
        'COPY ./gpu-test/Pipfile ./gpu-test/Pipfile.lock /code/gpu-test/',
        'RUN pipenv install -r /code/gpu-test/Pipfile',
      )[0]?.slice(0, 2),
    ).toEqual(['docker/gpu-test/Pipfile', 'gpu-test/Pipfile']);
    // A folder: a file under it is found there, and nothing is read as the folder itself.
    expect(
      candidates(
        'FROM nvidia/cuda:11.8.0-runtime-ubuntu22.04',
        'COPY requirements /app/requirements',
        'RUN pip install -r /app/requirements/gpu.txt',
      ),
    ).toEqual([['docker/requirements/gpu.txt', 'requirements/gpu.txt']]);
  });

  it('a glob without an extension is a pattern of files, not a folder', () => {
    expect(
      candidates(
        'FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04',
        'COPY requirements* /app/',
        'RUN pip install -r /app/requirements-gpu.txt',
      ),
    ).toEqual([['docker/requirements-gpu.txt', 'requirements-gpu.txt']]);
  });
});
