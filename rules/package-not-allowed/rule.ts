import { eq, satisfies } from '@renovatebot/pep440';
import { projectName } from '../../src/analysis/packages.js';
import type { PackageFact, ParsedFile } from '../../src/parsers/facts.js';
import type { Fix } from '../../src/finding.js';
import { defineRule } from '../../src/rule.js';
import { minorOf, publicVersion } from '../../src/knowledge/versions.js';

export default defineRule({
  id: 'package-not-allowed',
  description: 'Pinned package versions are on the baseline allow-list',
  defaultSeverity: 'error',
  fix: 'unsafe',
  about: 'written',
  messages: {
    notAllowed: '{{name}} {{version}} is not allowed by the baseline (allowed: {{allowed}})',
  },
  helps: {
    notAllowed:
      "The baseline's packages.{{key}} lists the versions the organisation has validated. Use one of them{{closest}}, or extend the baseline.",
  },
  check({ files, baseline, report }) {
    const lists = baseline.packages;
    if (Object.keys(lists).length === 0) return;
    for (const file of files) {
      for (const pkg of file.packages) {
        const allowed = lists[projectName(pkg)] ?? lists[pkg.name];
        if (!allowed || !pkg.exact) continue;
        const version = publicVersion(pkg.exact);
        if (allowed.some((entry) => matches(version, entry))) continue;
        const proposal = nearest(version, allowed);
        const suggestion = proposal ? replaceVersion(file, pkg, version, proposal) : undefined;
        report({
          messageId: 'notAllowed',
          data: {
            name: pkg.rawName,
            version,
            allowed: allowed.join(', '),
            key: projectName(pkg),
            closest: proposal ? ` (closest: ${proposal})` : '',
          },
          file,
          span: pkg.span,
          ...(suggestion ? { suggestions: [suggestion] } : {}),
        });
      }
    }
  },
});

/** An allow-list entry is a version (`2.6.0`, compared by PEP 440) or a specifier (`>=2.6,<2.8`, `2.7.*`). */
function matches(version: string, entry: string): boolean {
  try {
    if (/[<>=!~*,]/.test(entry))
      return satisfies(version, entry.includes('*') && !/[<>=!~]/.test(entry) ? `==${entry}` : entry);
    return eq(version, entry);
  } catch {
    return version === entry;
  }
}

function nearest(version: string, allowed: readonly string[]): string | undefined {
  const exact = allowed.filter((entry) => /^[0-9][0-9A-Za-z.+-]*$/.test(entry));
  const minor = minorOf(version);
  return exact.find((entry) => entry.startsWith(`${minor}.`)) ?? exact.at(-1);
}

function replaceVersion(file: ParsedFile, pkg: PackageFact, version: string, proposal: string): Fix | undefined {
  const clause = pkg.clauses[0];
  if (!clause || file.source.text.slice(clause.versionSpan.start, clause.versionSpan.end) !== clause.version)
    return undefined;
  const start = clause.versionSpan.start + clause.version.indexOf(version);
  if (start < clause.versionSpan.start) return undefined;
  return {
    title: `Use ${pkg.rawName} ${proposal}`,
    safety: 'unsafe',
    edits: [{ path: file.path, range: [start, start + version.length], text: proposal }],
  };
}
