/**
 * Linking a file to the command that installs it adds context and never takes away what the file alone shows
 * (issue 50, item 4). On every fixture case where one file installs or includes another (a Dockerfile's `uv sync`,
 * `pip install -r`, a requirements file's `-r`), the findings at the installed file's lines when it is checked
 * alone must all be there when it is checked with its installer: the same rule at the same line, whatever the
 * message now names as the target (or, for two builds that disagree, at the other build, once the image sets the
 * target). A finding may go only where the link changes what is installed: the installing command passes indexes
 * of its own, or resolves with uv's first-index strategy, or the installer pins exactly what a range of the file
 * leaves open (pip resolves them together); then it is that install that is judged.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { resolveLinks } from '../../src/analysis/links.js';
import { EMPTY_BASELINE } from '../../src/baseline/schema.js';
import type { Finding } from '../../src/finding.js';
import { gate } from '../../src/gate.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import type { ParsedFile } from '../../src/parsers/facts.js';
import { ROOT, runCase } from '../support/harness.js';

const kb = defaultKnowledgeBase();
const FIXTURES = join(ROOT, 'fixtures', 'rules');

const key = (finding: Finding): string =>
  `${finding.ruleId} ${finding.location.path}:${finding.location.start.line}:${finding.location.start.column}`;

const atRelated = (related: Finding['related'][number]): string =>
  `cuda-mismatch ${related.location.path}:${related.location.start.line}:${related.location.start.column}`;

/**
 * Whether the installer's command that reaches `member` changes what is installed: it passes indexes of its own, or
 * it is uv's, which takes each package from the first index that has it where pip (the installer a file alone is read
 * with) compares versions across indexes
 * (docs.astral.sh/uv/pip/compatibility/#packages-that-exist-on-multiple-indexes).
 */
function installerChangesResolution(installer: ParsedFile, member: ParsedFile): boolean {
  const links = resolveLinks([installer, member]).get(installer) ?? [];
  return links.some((link) => {
    const command = installer.contexts[link.include.context];
    return link.to === member && ((command?.indexes.length ?? 0) > 0 || command?.tool === 'uv');
  });
}

/** Packages whose exact pin requires one torch release (their wheels' Requires-Dist): pip resolves torch to it. */
const PINS_TORCH = new Set(['torch', 'torchvision', 'torchaudio', 'vllm', 'xformers', 'sglang']);

/**
 * Whether the finding is about a range of the member that the installer pins exactly: pip resolves the two
 * requirements together ("a solution that satisfies both"), so the range installs the installer's pin, not its own
 * pick (aibrix's test.txt: `-r core.txt` with `torch>=2.7.0`, and `vllm==0.10.2`, which requires torch 2.8.0).
 */
function pinnedByInstaller(finding: Finding, installer: ParsedFile, member: ParsedFile): boolean {
  const line = finding.location.start.line;
  const ranged = member.packages.filter(
    (pkg) => !pkg.exact && !pkg.url && member.source.position(pkg.span.start).line === line,
  );
  return ranged.some((range) =>
    installer.packages.some(
      (pin) => pin.exact && (pin.name === range.name || (range.name === 'torch' && PINS_TORCH.has(pin.name))),
    ),
  );
}

const cases = readdirSync(FIXTURES).flatMap((rule) =>
  readdirSync(join(FIXTURES, rule)).map((name) => join(FIXTURES, rule, name)),
);

describe('a link adds findings, never hides one', () => {
  it('holds on every fixture case with an installer and a file it installs', () => {
    const violations: string[] = [];
    let pairs = 0;
    for (const dir of cases) {
      const { files, policy } = runCase(dir);
      const links = resolveLinks(files);
      for (const installer of files) {
        const members = new Set((links.get(installer) ?? []).map((link) => link.to));
        for (const member of members) {
          pairs++;
          const without = files.filter((file) => file !== installer);
          const options = policy ? { policy } : {};
          const alone = gate(without, policy?.baseline ?? EMPTY_BASELINE, kb, options).findings.filter(
            (finding) => finding.location.path === member.path,
          );
          const linked = new Set(
            gate(files, policy?.baseline ?? EMPTY_BASELINE, kb, options).findings.map((finding) => key(finding)),
          );
          for (const finding of alone) {
            if (linked.has(key(finding)) || finding.severity === 'notice') continue;
            // Two builds that disagree: alone, the first one sets the target; with the image, the image does, and
            // the disagreement is reported at the other build. The conflict is kept, seen from the other side.
            if (finding.ruleId === 'cuda-mismatch' && finding.related.some((other) => linked.has(atRelated(other))))
              continue;
            if (installerChangesResolution(installer, member) || pinnedByInstaller(finding, installer, member))
              continue;
            violations.push(
              `${dir.slice(FIXTURES.length + 1)}: ${installer.path} hides ${key(finding)}: ${finding.message}`,
            );
          }
        }
      }
    }
    expect(violations).toEqual([]);
    expect(pairs).toBeGreaterThanOrEqual(29);
  });
});
