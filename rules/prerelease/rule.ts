import { parse } from '@renovatebot/pep440';
import { isPytorchIndex, pytorchIndexChannel } from '../../src/analysis/cuda-labels.js';
import { defineRule } from '../../src/rule.js';
import { memoize } from '../../src/util/memo.js';
import { publicVersion } from '../../src/knowledge/versions.js';

/** Every message's help: what the baseline forbids, and why. */
const FORBIDDEN =
  'The baseline sets prerelease: forbid. Pre-release builds (rc, dev, nightly, /whl/test) change without notice and are not supported; use a released version.';

export default defineRule({
  id: 'prerelease',
  description: 'No nightly, dev, release-candidate or test builds where the baseline forbids pre-releases',
  defaultSeverity: 'error',
  fix: 'none',
  about: 'written',
  messages: {
    version: '{{name}} {{version}} is a pre-release',
    index: '{{url}} serves {{channel}} builds',
    flag: '{{flag}} lets pip install pre-releases',
    channel: 'conda channel "{{channel}}" publishes nightly builds',
  },
  helps: { version: FORBIDDEN, index: FORBIDDEN, flag: FORBIDDEN, channel: FORBIDDEN },
  check({ files, baseline, report }) {
    if (baseline.prerelease !== 'forbid') return;
    for (const file of files) {
      for (const pkg of file.packages) {
        if (pkg.ecosystem !== 'pip' || !pkg.exact) continue;
        const parsed = safeParse(publicVersion(pkg.exact));
        if (parsed && (parsed.pre || parsed.dev !== null))
          report({ messageId: 'version', data: { name: pkg.rawName, version: pkg.exact }, file, span: pkg.span });
      }
      for (const index of file.indexes) {
        if (index.ignoredReason) continue;
        if (index.kind === 'conda-channel') {
          if (/nightly/.test(index.url))
            report({ messageId: 'channel', data: { channel: index.url }, file, span: index.span });
          continue;
        }
        if (!isPytorchIndex(index.url)) continue;
        const channel = pytorchIndexChannel(index.url);
        if (channel !== 'stable')
          report({
            messageId: 'index',
            data: { url: index.url, channel: channel === 'test' ? 'release-candidate (test)' : 'nightly' },
            file,
            span: index.span,
          });
      }
      for (const pkg of file.packages) {
        if (pkg.ecosystem === 'conda' && pkg.channel && /nightly/.test(pkg.channel))
          report({ messageId: 'channel', data: { channel: pkg.channel }, file, span: pkg.span });
      }
      for (const option of file.options)
        report({ messageId: 'flag', data: { flag: option.name }, file, span: option.span });
    }
  },
});

/** PEP 440 parse that answers null for versions it cannot read; a repository repeats the same few versions. */
const safeParse = memoize((version: string): ReturnType<typeof parse> => {
  try {
    return parse(version);
  } catch {
    return null;
  }
}, 10_000);
