/** What every parser shares: which file a path is read as, and no throwing or stray positions on odd input. */
import { describe, expect, it } from 'vitest';
import { classifyPath, parseFile, sniffKind } from '../../src/parsers/index.js';
import { codeBlock } from '../support/code-block.js';

describe('classifyPath', () => {
  it.each([
    ['Dockerfile', 'dockerfile'],
    ['docker/Dockerfile.gpu', 'dockerfile'],
    ['train.Dockerfile', 'dockerfile'],
    ['Containerfile', 'dockerfile'],
    ['requirements.txt', 'requirements'],
    ['requirements-gpu.txt', 'requirements'],
    ['requirements/base.txt', 'requirements'],
    ['requirements/dev.in', 'requirements'],
    ['environment.yml', 'conda'],
    ['environment-cuda.yaml', 'conda'],
    ['conda/env.yml', undefined], // by content: condaByContent
    ['README.md', undefined],
    ['src/main.py', undefined],
    ['docker-compose.yml', 'compose'],
  ])('%s → %s', (path, kind) => {
    expect(classifyPath(path)).toBe(kind);
  });
});

describe('sniffKind (a file named on the command line whose name does not tell its kind)', () => {
  it("takes Python's `from … import …` for no Dockerfile (ms-swift's setup.py), and a FROM in any case for one", () => {
    expect(sniffKind('from setuptools import find_packages, setup\nimport os\n')).toBeUndefined();
    expect(sniffKind('# comment\nfrom typing import List\n')).toBeUndefined();
    expect(sniffKind('FROM python:3.11-slim\nRUN pip install torch\n')).toBe('dockerfile');
    expect(sniffKind('from nvidia/cuda:12.4.1-base-ubuntu22.04 as build\n')).toBe('dockerfile');
    expect(sniffKind('ARG BASE=python:3.11\nFROM $BASE\n')).toBe('dockerfile');
  });
});

describe('robustness', () => {
  const odd = [
    '',
    '\0\0\0',
    '\ufeff',
    'FROM',
    'RUN \\',
    '- - -',
    ':::',
    '[[[',
    '{{{',
    'a'.repeat(10_000),
    '\r\r\r',
    '${',
    '"unterminated',
    "RUN pip install 'torch==",
    '<<EOF',
    'ARG =',
    'FROM ${',
    '-r',
    '--index-url',
  ];
  it.each(['dockerfile', 'requirements', 'conda'] as const)(
    '%s parser never throws and keeps spans in range',
    (kind) => {
      for (const input of odd) {
        const file = parseFile('f', input, kind);
        for (const span of [
          ...file.packages.map((pkg) => pkg.span),
          ...file.problems.map((problem) => problem.span),
          ...file.indexes.map((index) => index.span),
        ]) {
          expect(span.start).toBeGreaterThanOrEqual(0);
          expect(span.end).toBeLessThanOrEqual(input.length);
          expect(span.start).toBeLessThanOrEqual(span.end);
        }
      }
    },
  );
});

describe('regressions found by fuzzing', () => {
  it('a COPY source with a bracket does not break the link glob', async () => {
    const { gate } = await import('../../src/gate.js');
    const { EMPTY_BASELINE } = await import('../../src/baseline/schema.js');
    const { defaultKnowledgeBase } = await import('../../src/knowledge/index.js');
    const file = parseFile(
      'Dockerfile',
      codeBlock`
        FROM nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04
        WORKDIR /app
        COPY [requirements.txt .
        RUN pip install -r requirements.txt
      `,
      'dockerfile',
    );
    expect(() => gate([file], EMPTY_BASELINE, defaultKnowledgeBase())).not.toThrow();
  });

  it('YAML error recovery never yields positions past the end of the file', () => {
    const text = 'channels: [     !';
    const file = parseFile('environment.yml', text, 'conda');
    for (const span of [
      ...file.indexes.flatMap((index) => [index.span, index.urlSpan]),
      ...file.problems.map((problem) => problem.span),
    ])
      expect(span.end).toBeLessThanOrEqual(text.length);
  });
});

describe('a Dockerfile built by another BuildKit frontend', () => {
  const parse = (text: string) => parseFile('Dockerfile', text, 'dockerfile');
  it('is said not checked at its syntax directive, failing closed where it names CUDA', () => {
    const dalec = parse('# syntax=ghcr.io/azure/dalec/frontend:0.18\n\nname: skopeo\n');
    expect([dalec.problems, dalec.unresolved.map((fact) => [fact.text, fact.fails ?? false])]).toEqual([
      [],
      [['# syntax=ghcr.io/azure/dalec/frontend:0.18', false]],
    ]);
    const cuda = parse('# escape=`\n# syntax = example.com/frontend:1\ndependencies: [cuda-toolkit]\n');
    expect(cuda.unresolved.map((fact) => [fact.text, fact.fails])).toEqual([['# syntax=example.com/frontend:1', true]]);
  });
  it("Docker's own Dockerfile frontend, and a directive after a comment (no directive then), are Dockerfiles", () => {
    for (const first of [
      '# syntax=docker/dockerfile:1',
      '# syntax=docker.io/docker/dockerfile-upstream:master',
      '# hi\n# syntax=x/y',
    ])
      expect(parse(`${first}\nRUN echo\n`).unresolved.map((fact) => fact.reason)).toEqual([
        'it has no FROM instruction, so docker build refuses it as it is (a part that a build pastes into another Dockerfile, or a mistake), and its instructions are not read',
      ]);
  });
});
