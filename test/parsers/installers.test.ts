/**
 * `mayInstall` (src/parsers/installers.ts) is a fast path: a RUN's command it declines is not given to the readers of
 * installs, exports and pip configuration. It must only decline commands those readers would find nothing in. This
 * holds it over every command of every RUN in the fixtures (the corpus's real files among them) and over commands
 * written to reach each reader by a way the fast path has to see.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FactSink } from '../../src/parsers/facts.js';
import { lockExport, mayInstall, recordInstallCommand } from '../../src/parsers/installers.js';
import { PipEnv } from '../../src/parsers/dockerfile/pip-env.js';
import { readDockerfile } from '../../src/parsers/dockerfile/instructions.js';
import { Mapped } from '../../src/parsers/mapped.js';
import { splitCommands, type Command } from '../../src/parsers/shell.js';
import { SourceText } from '../../src/parsers/source.js';

/** What the three readers make of a command: nothing at all is `{}`. */
function readersGive(command: Command): Record<string, unknown> {
  const sink = new FactSink();
  const pip = new PipEnv(undefined);
  const out: Record<string, unknown> = {};
  if (pip.configure(command)) out.configure = true;
  const lock = lockExport(command);
  if (lock) out.lockExport = lock;
  if (recordInstallCommand(sink, command, 0)) out.recorded = true;
  for (const [key, value] of Object.entries(sink))
    if (Array.isArray(value) && value.length > 0) out[key] = value.length;
  return out;
}

function dockerfilesUnder(folder: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) found.push(...dockerfilesUnder(path));
    else if (/dockerfile|containerfile/i.test(entry.name)) found.push(path);
  }
  return found;
}

/** Every simple command of every RUN of a file (variables left unresolved, as a build argument without a default). */
function runCommands(text: string): Command[] {
  const { instructions } = readDockerfile(text, new SourceText('Dockerfile', text));
  const commands: Command[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword.toUpperCase() !== 'RUN') continue;
    const start = instruction.span.start + instruction.keyword.length;
    const script = text.slice(start, instruction.span.end).replace(/\\\n/g, '  ');
    commands.push(...splitCommands(Mapped.of(script, start), () => undefined));
  }
  return commands;
}

describe('mayInstall', () => {
  it('declines only commands in which no reader finds anything, over every RUN of the fixtures', () => {
    const files = dockerfilesUnder('fixtures');
    expect(files.length).toBeGreaterThan(100);
    let declined = 0;
    let read = 0;
    for (const file of files)
      for (const command of runCommands(readFileSync(file, 'utf8'))) {
        if (command.length === 0) continue;
        const gives = readersGive(command);
        if (mayInstall(command)) {
          if (Object.keys(gives).length > 0) read++;
          continue;
        }
        declined++;
        expect(gives, `${file}: ${command.map((word) => word.text).join(' ')}`).toEqual({});
      }
    // The fixtures hold thousands of commands of both sorts: the property is not held by an empty set.
    expect(declined).toBeGreaterThan(1000);
    expect(read).toBeGreaterThan(1000);
  });

  it.each([
    ['pip install torch==2.3.1', 'recorded'],
    ['/opt/venv/bin/pip3.11 install -r requirements.txt', 'recorded'],
    ['sudo -H pip config set global.extra-index-url https://download.pytorch.org/whl/cu121', 'configure'],
    ['env PIP_NO_CACHE_DIR=1 /usr/bin/python3 -m pip install torch', 'recorded'],
    ['PIP_INDEX_URL=https://example.org/simple python3.11 -m uv pip install torch', 'recorded'],
    ['then poetry export -o requirements.txt --with gpu', 'lockExport'],
    ['uv export --frozen -o requirements.txt', 'lockExport'],
    ['pipenv requirements --dev', 'lockExport'],
    ['micromamba install -y -n base cudatoolkit=11.8', 'recorded'],
    ['mamba install -y pytorch-cuda=12.1', 'recorded'],
    ['conda-lock install -n env conda-lock.yml', 'recorded'],
    ['apt-get install -y cuda-toolkit-12-4', 'recorded'],
    ['pyenv install 3.11.9', 'pythons'],
    ['uv python install 3.12', 'pythons'],
    ['bash Miniforge3-Linux-x86_64.sh -b -p /opt/conda', 'pythons'],
    ['poetry run pip install torch', 'recorded'],
    ['pdm sync -G gpu', 'recorded'],
    ['pixi install -e cuda', 'recorded'],
  ])('takes `%s` (a reader gives %s)', (line, what) => {
    const [command] = splitCommands(Mapped.of(line, 0), () => undefined);
    expect(mayInstall(command!)).toBe(true);
    expect(readersGive(command!)).toHaveProperty(what);
  });

  it.each([
    'mkdir -p /workspace',
    'rm -rf /var/lib/apt/lists/*',
    'curl -fsSL https://example.org/x.sh -o x.sh',
    'cd /src',
  ])('declines `%s`', (line) => {
    const [command] = splitCommands(Mapped.of(line, 0), () => undefined);
    expect(mayInstall(command!)).toBe(false);
  });
});
