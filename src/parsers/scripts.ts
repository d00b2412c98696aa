/**
 * Shell scripts a configuration runs in the image it names (SkyPilot's `setup` and `run`, Cog's `build.run`): what
 * their commands install, read as a Dockerfile's RUN is, with the clones they make.
 */
import { cloneOf, Clones } from './dockerfile/clones.js';
import { mayInstall, recordInstallCommand, unreadInstall } from './installers.js';
import type { FactSink } from './facts.js';
import type { Mapped } from './mapped.js';
import { readCommands, withCommandStrings, type Resolver } from './shell.js';

/**
 * The installs of a script a configuration runs in its image (Cog's `build.run`, SkyPilot's `setup`), as a Dockerfile
 * RUN's are read, and what it runs that is not read, said (unreadInstall, in `runBy`'s words).
 */
export function readScript(sink: FactSink, script: Mapped, stage: number, resolve: Resolver, runBy: string): void {
  const read = withCommandStrings(readCommands(script, resolve), resolve);
  // `git clone URL && cd repo && pip install .`: the clone's project, as a Dockerfile's RUN reads it (Clones).
  const clones = new Clones();
  clones.startRun();
  for (const words of read.commands) {
    if (words[0]?.text === 'cd') clones.cd(words.map((word) => word.text));
    const clone = words.length > 2 && words.some((word) => word.text === 'clone') ? cloneOf(words) : undefined;
    if (clone) {
      clones.add(stage, clone);
      continue;
    }
    if (mayInstall(words)) {
      const before = sink.contexts.length;
      recordInstallCommand(sink, words, stage, resolve);
      for (const context of sink.contexts.slice(before))
        for (const include of [...context.includes]) {
          const cloned = clones.cloneOf(stage, include.target);
          if (cloned) sink.markCloned(context, include, cloned);
        }
    } else {
      const unread = unreadInstall(words, runBy);
      if (unread) sink.unresolved.push(unread);
    }
  }
}
