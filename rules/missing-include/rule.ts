import { includeCandidates } from '../../src/analysis/links.js';
import { formatOf } from '../../src/parsers/formats.js';
import { defineRule } from '../../src/rule.js';

/**
 * An include (`-r`, a Dockerfile's COPY + `pip install -r`, `conda env create -f`) whose file the change
 * deletes. The finding needs to know what the change deletes, so it comes from checks of a change: the App's
 * pull-request check and `check --changed-since`.
 */
export default defineRule({
  id: 'missing-include',
  description: 'No file installs or includes a file that the change deletes',
  defaultSeverity: 'error',
  fix: 'none',
  about: 'written',
  messages: {
    deleted: '{{target}} is deleted by this change, but this line still installs it',
  },
  helps: {
    deleted: '{{how}}. Restore {{target}}, or change this line to install the file that replaces it.',
  },
  check({ files, removed, report }) {
    if (removed.size === 0) return;
    const present = new Set(files.map((file) => file.path));
    for (const file of files) {
      for (const include of file.includes) {
        if (include.optional) continue;
        const candidates = includeCandidates(file, include);
        // Another candidate that is still there (a file beside the Dockerfile, say) is what the line installs.
        if (candidates.some((path) => present.has(path))) continue;
        const gone = candidates.find((path) => removed.has(path));
        if (!gone) continue;
        const how =
          formatOf(file.kind).units === 'stages'
            ? 'docker build stops at the COPY (or pip at `-r`) with "file not found"'
            : 'pip stops with "Could not open requirements file"';
        report({
          messageId: 'deleted',
          data: { target: gone, how },
          file,
          span: include.span,
        });
      }
    }
  },
});
