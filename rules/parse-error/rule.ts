import { defineRule } from '../../src/rule.js';

export default defineRule({
  id: 'parse-error',
  description: 'A file could not be read completely',
  defaultSeverity: 'error',
  fix: 'none',
  messages: { problem: '{{message}}' },
  check({ files, report }) {
    for (const file of files) {
      for (const problem of file.problems) {
        report({
          messageId: 'problem',
          data: { message: problem.message },
          file,
          span: problem.span,
          help: 'The rest of the file was still checked; whatever could not be read here was skipped, so fix it to get a complete check.',
        });
      }
    }
  },
});
