/** Baseline waivers: time-limited, owned exceptions per rule, repository and path. */
import { describe, expect, it } from 'vitest';
import { loadBaseline } from '../../src/baseline/load.js';
import { gate } from '../../src/gate.js';
import { defaultKnowledgeBase } from '../../src/knowledge/index.js';
import { parseFile } from '../../src/parsers/index.js';
import { RULE_IDS } from '../../rules/index.js';
import { codeBlock } from '../support/code-block.js';

const file = parseFile(
  'services/train/requirements.txt',
  codeBlock`
    torch==2.3.0+cu121
    torchvision==0.17.0+cu121
    --extra-index-url https://download.pytorch.org/whl/cu121
  `,
  'requirements',
);
const kb = defaultKnowledgeBase();

function run(yaml: string, repository = 'octo-org/trainer', today = '2026-11-30') {
  const policy = loadBaseline('baseline.yaml', yaml, RULE_IDS);
  return { policy, report: gate([file], policy.baseline, kb, { policy, repository, today }) };
}

describe('waivers', () => {
  const waiver = (extra: string) =>
    `waivers:\n  - rule: companion-mismatch\n    repo: trainer\n    reason: torchvision is rebuilt in-house against 2.3.0\n    owner: ml-platform\n${extra}`;

  it('silence the named rule in the named repository until the expiry date', () => {
    const { report } = run(waiver('    expires: 2026-12-31\n'));
    expect(report.findings.map((finding) => finding.ruleId)).not.toContain('companion-mismatch');
    expect(report.waived).toBe(1);
  });

  it('stop applying after expiry, and the check says so', () => {
    const { report } = run(waiver('    expires: 2026-11-29\n'));
    expect(report.findings.map((finding) => finding.ruleId)).toContain('companion-mismatch');
    const note = report.findings.find((finding) => finding.messageId === 'waiverExpired')!;
    expect(note).toMatchObject({
      ruleId: 'policy-error',
      severity: 'notice',
      location: { path: 'baseline.yaml', start: { line: 2 } },
    });
    expect(note.message).toBe(
      'the waiver of companion-mismatch for trainer expired on 2026-11-29 (owner ml-platform); its findings are reported again',
    );
  });

  it('apply only to their repository and path', () => {
    expect(
      run(waiver('    expires: 2026-12-31\n'), 'octo-org/other').report.findings.map((finding) => finding.ruleId),
    ).toContain('companion-mismatch');
    expect(
      run(waiver('    path: services/serve/\n    expires: 2026-12-31\n')).report.findings.map(
        (finding) => finding.ruleId,
      ),
    ).toContain('companion-mismatch');
    expect(run(waiver('    path: services/train/\n    expires: 2026-12-31\n')).report.waived).toBe(1);
  });

  it('without an owner or an expiry are policy errors', () => {
    const { policy } = run(codeBlock`
      waivers:
        - rule: exact-pin
          repo: "*"
          reason: legacy
    `);
    expect(policy.problems.map((problem) => problem.message)).toEqual([
      'waivers.0.owner is required',
      'waivers.0.expires is required',
    ]);
  });
});
