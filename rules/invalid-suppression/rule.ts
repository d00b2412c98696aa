import { defineRule } from '../../src/rule.js';

/**
 * Suppression comments must name known rules and give a reason. Unused suppressions are reported by the
 * gate after all rules ran (only it knows which findings were silenced), with the `unused` message here.
 */
/** How a suppression is written, for each malformed one. */
const HOW =
  'Write `# cuda-gatekeeper: ignore[rule-id] reason` on the line before the statement (or at its end): name the rule and say why the finding does not apply.';

export default defineRule({
  id: 'invalid-suppression',
  description: 'A `# cuda-gatekeeper: ignore[...]` comment is malformed, unjustified or unused',
  defaultSeverity: 'error',
  fix: 'none',
  about: 'written',
  messages: {
    noRule: 'suppression names no rule: write ignore[rule-id] with the rule it silences',
    unknownRule: 'suppression names unknown rule {{rules}}',
    noReason: 'suppression of {{rules}} gives no reason; a reason is required, so nothing is suppressed',
    unused: 'suppression of {{rules}} matches no finding on the statement it precedes',
  },
  helps: { noRule: HOW, unknownRule: HOW, noReason: HOW },
  check({ files, ruleIds, report }) {
    for (const file of files) {
      for (const suppression of file.suppressions) {
        const unknown = suppression.rules.filter((id) => !ruleIds.has(id));
        if (suppression.rules.length === 0) report({ messageId: 'noRule', file, span: suppression.span });
        else if (unknown.length > 0)
          report({
            messageId: 'unknownRule',
            data: { rules: unknown.map((id) => `"${id}"`).join(', ') },
            file,
            span: suppression.span,
          });
        else if (suppression.reason === '')
          report({
            messageId: 'noReason',
            data: { rules: suppression.rules.join(', ') },
            file,
            span: suppression.span,
          });
      }
    }
  },
});
