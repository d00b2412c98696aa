/**
 * `/cuda-check upgrade X.Y` with real payloads and the spec-validating fake GitHub: the command → a branch from the
 * default branch → one commit per unit that moves → a pull request whose body is the plan, verified by the gate;
 * refused for a reader and for a read-only installation; a draft where something cannot move.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Probot } from 'probot';
import { EMPTY_BASELINE } from '../../src/baseline/schema.js';
import { gate } from '../../src/gate.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import { parseFile, classifyPath } from '../../src/parsers/index.js';
import { FakeGitHub } from '../support/fake-github.js';
import { setup, teardown } from '../support/probot.js';
import { commentPayload, FULL, pullScenario } from '../support/scenario.js';
import { codeBlock } from '../support/code-block.js';

/** The default branch: an image on CUDA 12.4 with its torch, and a trainer Job on a pool that runs it. */
const MAIN = {
  Dockerfile: codeBlock`
    FROM nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04
    ENV TORCH_CUDA_ARCH_LIST="7.0;8.0;9.0"
    COPY requirements.txt .
    RUN pip install -r requirements.txt
  `,
  'requirements.txt': codeBlock`
    --index-url https://download.pytorch.org/whl/cu124
    torch==2.5.1+cu124
    torchvision==0.20.1+cu124
  `,
};

let fake: FakeGitHub;
let probot: Probot;

beforeEach(() => {
  fake = new FakeGitHub();
  ({ probot } = setup(fake));
});

afterEach(() => {
  expect(fake.violations).toEqual([]);
  teardown();
});

async function ask(main: Record<string, string>, body: string): Promise<void> {
  const scenario = pullScenario(fake, { main, head: { 'README.md': 'docs' }, changed: ['README.md'] });
  await probot.receive({ id: 'u', name: 'issue_comment', payload: commentPayload(fake, scenario, body) } as never);
}

const replies = () => fake.pull(FULL, 7)!.comments.map((comment) => comment.body);
const branch = 'cuda-gatekeeper/upgrade-cuda-12.8';

describe('/cuda-check upgrade', () => {
  it('opens a verified pull request from the default branch, one commit per unit, its body the plan', async () => {
    fake.permissions.set('octocat', 'write');
    fake.installationPermissions.contents = 'write';
    await ask(MAIN, '/cuda-check upgrade 12.8');
    expect(fake.createdPulls).toEqual([
      expect.objectContaining({ repo: FULL, head: branch, base: 'main', title: 'Move to CUDA 12.8', draft: false }),
    ]);
    const body = fake.createdPulls[0]!.body;
    expect(body).toContain('### Plan: move to CUDA 12.8');
    expect(body).toContain('torch **2.7.1+cu128**');
    expect(body).toContain('Asked for by @octocat in #7.');
    // The branch starts at the default branch's head; the default branch itself is never pushed to.
    expect(fake.branches.get(`${FULL}#main`)).toBeUndefined();
    const commits = fake.commits.filter((commit) => commit.branch === branch);
    expect(commits).toHaveLength(1);
    expect(commits[0]!.message.headline).toBe('Move Dockerfile stage 1 to CUDA 12.8');
    expect(commits[0]!.message.body).toContain('published_versions.json'); // the torch fact's source
    const files = Object.fromEntries(commits[0]!.files.map((file) => [file.path, file.contents]));
    expect(files.Dockerfile).toContain('FROM nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04');
    expect(files['requirements.txt']).toContain('torch==2.7.1+cu128');
    expect(files['requirements.txt']).toContain('https://download.pytorch.org/whl/cu128');
    // Verified: the moved tree passes the gate.
    const moved = Object.entries({ ...MAIN, ...files }).map(([path, text]) =>
      parseFile(path, text, classifyPath(path)!),
    );
    expect(gate(moved, EMPTY_BASELINE, defaultKnowledgeBase()).counts.error).toBe(0);
    expect(replies().at(-1)).toContain(`Opened #${fake.createdPulls[0]!.number}.`);
  });

  it('is refused for a reader: no branch, no commit, no pull request', async () => {
    fake.permissions.set('octocat', 'read');
    fake.installationPermissions.contents = 'write';
    await ask(MAIN, '/cuda-check upgrade 12.8');
    expect(replies().at(-1)).toContain('only people with write access');
    expect(fake.branches.has(`${FULL}#${branch}`)).toBe(false);
    expect(fake.commits).toEqual([]);
    expect(fake.createdPulls).toEqual([]);
  });

  it('says what is missing on an installation that may not write contents', async () => {
    fake.permissions.set('octocat', 'admin');
    await ask(MAIN, '/cuda-check upgrade 12.8');
    expect(replies().at(-1)).toContain('Contents: Read and write');
    expect(fake.createdPulls).toEqual([]);
  });

  it('opens a draft that says what could not move', async () => {
    fake.permissions.set('octocat', 'write');
    fake.installationPermissions.contents = 'write';
    await ask(
      {
        ...MAIN,
        'serve/Dockerfile': codeBlock`
          FROM pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime
          RUN pip install torchvision==0.20.1
        `,
        'build/environment.yml': codeBlock`
          name: build
          channels: [conda-forge]
          dependencies:
            - cuda-version=12.4
            - cuda-nvcc=12.4
        `,
      },
      '/cuda-check upgrade 12.8',
    );
    expect(fake.createdPulls).toEqual([expect.objectContaining({ head: branch, draft: true })]);
    // Each unit that moves is a commit of its own, on top of the one before (in the plan's order, by path).
    expect(fake.commits.map((commit) => commit.message.headline)).toEqual([
      'Move build/environment.yml to CUDA 12.8',
      'Move Dockerfile stage 1 to CUDA 12.8',
    ]);
    expect(fake.commits[0]!.files).toEqual([
      { path: 'build/environment.yml', contents: expect.stringContaining('cuda-nvcc=12.8') },
    ]);
    expect(fake.createdPulls[0]!.body).toContain('**Not moved:**');
    expect(fake.createdPulls[0]!.body).toContain('pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime');
    expect(replies().at(-1)).toMatch(/Opened #\d+ as a draft/);
  });

  it('opens a draft that names the files it could not read: they may carry a CUDA too', async () => {
    fake.permissions.set('octocat', 'write');
    fake.installationPermissions.contents = 'write';
    await ask({ ...MAIN, 'requirements-bin.txt': 'torch\0\0' }, '/cuda-check upgrade 12.8');
    expect(fake.createdPulls).toEqual([expect.objectContaining({ head: branch, draft: true })]);
    expect(fake.createdPulls[0]!.body).toContain('1 file was not read');
    expect(fake.createdPulls[0]!.body).toMatch(/\*\*Not read\*\*[^]*`requirements-bin\.txt`/);
  });

  it('answers a CUDA that was never released without writing anything', async () => {
    fake.permissions.set('octocat', 'write');
    fake.installationPermissions.contents = 'write';
    await ask(MAIN, '/cuda-check upgrade 12.7');
    expect(replies().at(-1)).toContain('No upgrade to CUDA 12.7: CUDA 12.7 was never released');
    expect(fake.commits).toEqual([]);
  });
});
