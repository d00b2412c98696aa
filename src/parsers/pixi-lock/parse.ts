/**
 * pixi.lock: exactly what `pixi install [-e ENV]` installs (pixi.sh/latest/workspace/lockfile). Every version
 * (4, 5 and 6) lists, per environment and platform, the package files it installs:
 *
 *   environments:
 *     cuda:
 *       channels: [{ url: https://conda.anaconda.org/conda-forge/ }]
 *       packages:
 *         linux-64:
 *         - conda: https://conda.anaconda.org/conda-forge/linux-64/cuda-version-12.1-h1d6eff3_3.conda
 *         - pypi: https://download.pytorch.org/whl/cu124/torch-2.5.1%2Bcu124-cp312-cp312-linux_x86_64.whl
 *
 * Each environment on each Linux platform is a selection ("environment cuda", or "environment cuda on linux-64" where
 * it has several), the same names as the manifest's. Its conda packages are facts at their URLs (name, version and
 * build from the file name), its PyPI packages at theirs (a wheel's file name gives the version and its `+cu124`; the
 * URL gives the index). The lock is never edited: the checks say which `pixi` command to run (gate.ts).
 */
import { FactSink, packageFact, type ContextDraft, type ParsedFile } from '../facts.js';
import { condaPackageFromUrl, entries, get, items, readLockYaml, text, type LockNode } from '../locks.js';
import { parsePythonRequirement } from '../python-requirement.js';
import { SourceText } from '../source.js';

export function parsePixiLock(path: string, fileText: string): ParsedFile {
  const source = new SourceText(path, fileText);
  const sink = new FactSink();
  const root = readLockYaml(fileText, 'a pixi.lock', source, sink.problems);
  if (!root) return sink.finish(path, 'pixi-lock', source);
  const torchRequirements = lockedTorchRequirements(root);
  const subdirs = platformSubdirs(root);
  for (const [name, , environment] of entries(get(root, 'environments'))) {
    const channels = items(get(environment, 'channels')).flatMap((channel) => {
      const url = text(get(channel, 'url'))?.text ?? text(channel)?.text;
      return url ? [url] : [];
    });
    // Version 7 names its platforms (`x86-cuda13: { subdir: linux-64, virtual-packages: [__cuda=13] }`): a
    // platform is Linux by its subdir, not by its name. A name the lock does not describe and that is no conda
    // subdir is not read, and the file says so.
    const linux = entries(get(environment, 'packages')).filter(([platform, key]) => {
      const subdir = subdirs.get(platform) ?? (KNOWN_SUBDIR.test(platform) ? platform : undefined);
      if (subdir === undefined)
        sink.unresolved.push({
          span: key,
          text: `environment ${name}, platform ${platform}`,
          reason: `the lock does not say which conda subdir "${platform}" is (no platforms entry with a subdir), so its packages are not read`,
        });
      return subdir?.startsWith('linux') ?? false;
    });
    for (const [platform, , list] of linux) {
      const variant = `environment ${name}${linux.length > 1 ? ` on ${platform}` : ''}`;
      const context = (tool: ContextDraft['tool']): ContextDraft => {
        const made: ContextDraft = {
          id: sink.contexts.length,
          tool,
          span: { start: 0, end: 0 },
          indexes: [],
          includes: [],
          channels,
          variant,
        };
        sink.contexts.push(made);
        return made;
      };
      const conda = context('conda-env');
      let pypi: ContextDraft | undefined;
      for (const entry of items(list)) {
        const condaUrl = text(get(entry, 'conda'));
        if (condaUrl) {
          const fact = condaPackageFromUrl(condaUrl);
          const torchRequirement = torchRequirements.get(condaUrl.text);
          if (fact)
            sink.packages.push(
              packageFact({
                ...fact,
                ...(torchRequirement !== undefined ? { torchRequirement } : {}),
                context: conda.id,
              }),
            );
          continue;
        }
        const pypiUrl = text(get(entry, 'pypi'));
        // `pypi: .` and other local paths are the project itself or a path dependency.
        if (!pypiUrl || !/^[a-z+]+:\/\//i.test(pypiUrl.text)) continue;
        const result = parsePythonRequirement(pypiUrl);
        if (!result.ok || !result.fact.exact) continue;
        pypi ??= context('uv');
        sink.packages.push(packageFact({ ...result.fact, context: pypi.id }));
      }
    }
  }
  return sink.finish(path, 'pixi-lock', source);
}

/**
 * The `pytorch` requirement of each conda package the lock describes, by package URL: v6 lists packages as
 * `- conda: <url>` with `depends: [pytorch >=2.0.0,<2.1.0a0, …]`, v4/v5 as `- kind: conda` with `url:`.
 */
function lockedTorchRequirements(root: LockNode): Map<string, string> {
  const found = new Map<string, string>();
  for (const entry of items(get(root, 'packages'))) {
    const url =
      text(get(entry, 'conda'))?.text ??
      (text(get(entry, 'kind'))?.text === 'conda' ? text(get(entry, 'url'))?.text : undefined);
    if (!url) continue;
    for (const depend of items(get(entry, 'depends'))) {
      const spec = /^pytorch(?:\s+(.*))?$/.exec(text(depend)?.text.trim() ?? '');
      if (spec) found.set(url, (spec[1] ?? '').trim());
    }
  }
  return found;
}

/** conda's platform subdirs (conda's `context.known_subdirs`). */
const KNOWN_SUBDIR =
  /^(?:noarch|linux-(?:32|64|aarch64|armv6l|armv7l|ppc64le|ppc64|s390x|riscv64)|osx-(?:64|arm64)|win-(?:32|64|arm64)|emscripten-wasm32|wasi-wasm32|zos-z)$/;

/** pixi.lock v7's `platforms`: each named platform's conda subdir (the name itself when no subdir is given). */
function platformSubdirs(root: LockNode): Map<string, string> {
  const subdirs = new Map<string, string>();
  for (const platform of items(get(root, 'platforms'))) {
    const name = text(get(platform, 'name'))?.text;
    if (!name) continue;
    subdirs.set(name, text(get(platform, 'subdir'))?.text ?? name);
  }
  return subdirs;
}
