/**
 * conda-lock's unified lock file, `conda-lock.yml` (conda.github.io/conda-lock/output): one `package` list whose
 * entries say `name`, `version`, `manager` (conda or pip), `platform`, `url` and `category`/`optional`:
 *
 *   package:
 *   - name: cudatoolkit
 *     version: 11.8.0
 *     manager: conda
 *     platform: linux-64
 *     url: https://conda.anaconda.org/conda-forge/linux-64/cudatoolkit-11.8.0-h4ba93d1_12.conda
 *     optional: false
 *
 * Each Linux platform is a selection ("platform linux-64") with the packages `conda-lock install` installs by
 * default (those not `optional`): conda packages from their URLs (build and channel from the file name), pip ones
 * as pinned. The rendered per-platform files (`conda-linux-64.lock.yml`) are environment files and read as such.
 */
import { FactSink, packageFact, type ContextDraft, type ParsedFile } from '../facts.js';
import { condaPackageFromUrl, get, items, readLockYaml, text } from '../locks.js';
import { MappedBuilder } from '../mapped.js';
import { parsePythonRequirement } from '../python-requirement.js';
import { SourceText } from '../source.js';

export function parseCondaLock(path: string, fileText: string): ParsedFile {
  const source = new SourceText(path, fileText);
  const sink = new FactSink();
  const root = readLockYaml(fileText, 'a conda-lock.yml', source, sink.problems);
  if (!root) return sink.finish(path, 'conda-lock', source);
  const channels = items(get(get(root, 'metadata'), 'channels')).flatMap((channel) => {
    const url = text(get(channel, 'url'))?.text;
    return url ? [url] : [];
  });
  const contexts = new Map<string, ContextDraft>();
  const contextOf = (platform: string, tool: ContextDraft['tool']): ContextDraft => {
    const key = `${platform} ${tool}`;
    let context = contexts.get(key);
    if (!context) {
      context = {
        id: sink.contexts.length,
        tool,
        span: { start: 0, end: 0 },
        indexes: [],
        includes: [],
        channels,
        variant: `platform ${platform}`,
      };
      sink.contexts.push(context);
      contexts.set(key, context);
    }
    return context;
  };
  for (const entry of items(get(root, 'package'))) {
    const platform = text(get(entry, 'platform'))?.text;
    if (!platform?.startsWith('linux')) continue;
    if (text(get(entry, 'optional'))?.text === 'true') continue;
    const manager = text(get(entry, 'manager'))?.text;
    const name = text(get(entry, 'name'));
    const version = text(get(entry, 'version'));
    const url = text(get(entry, 'url'));
    if (manager === 'conda') {
      const fact = url ? condaPackageFromUrl(url) : undefined;
      const torchRequirement = text(get(get(entry, 'dependencies'), 'pytorch'))?.text;
      if (fact)
        sink.packages.push(
          packageFact({
            ...fact,
            ...(torchRequirement !== undefined ? { torchRequirement } : {}),
            context: contextOf(platform, 'conda-env').id,
          }),
        );
    } else if (manager === 'pip' && name && version) {
      const pin = new MappedBuilder();
      pin.pushMapped(name);
      pin.pushSegment('==', -1, version.site(0, 0));
      pin.pushMapped(version);
      const wheel = url && /\.whl$/.test(url.text.split(/[?#]/)[0]!);
      const result = parsePythonRequirement(wheel ? url : pin.build());
      // A pip package from a URL that is no wheel (a `git+https://` repository, an sdist) is a direct reference:
      // pip takes it from there, never from an index.
      const direct = url && !wheel && !/^https:\/\/files\.pythonhosted\.org\//.test(url.text) ? url : undefined;
      if (result.ok)
        sink.packages.push(
          packageFact({
            ...result.fact,
            ...(direct ? { url: direct.text, urlSpan: direct.site(0, direct.length) } : {}),
            context: contextOf(platform, 'uv').id,
          }),
        );
    }
  }
  return sink.finish(path, 'conda-lock', source);
}
