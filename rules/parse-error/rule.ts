import { defineRule } from '../../src/rule.js';

export default defineRule({
  id: 'parse-error',
  description: 'A file could not be read completely',
  defaultSeverity: 'error',
  fix: 'none',
  about: 'written',
  messages: {
    problem: '{{message}}',
    notRead: '{{text}} is not checked: {{reason}}',
    notReadMany: '{{text}} are not checked: {{reason}}',
    notChecked: '{{text}} is not checked: {{reason}}',
  },
  helps: {
    problem:
      'The rest of the file was still checked; whatever could not be read here was skipped, so fix it to get a complete check.',
    notRead:
      'cuda-gatekeeper judges what a file states; a value only known when the build or install runs is left to it. Give it a default (an ARG value, a pinned version) to have it checked.',
    notReadMany:
      'cuda-gatekeeper judges what a file states; values only known when the build or install runs are left to it. Give the variable a default (an ARG value) to have them checked.',
    notChecked:
      "A GPU workload the gate cannot read is not a pass (the baseline's unchecked: fail; neutral makes this a notice). Check the rendered manifests instead (helm template … | cuda-gatekeeper check --stdin-filename rendered.yaml -), give the container an image the workload states, or exclude the file (files.exclude) if it is not deployed.",
  },
  check({ files, baseline, report }) {
    for (const file of files) {
      for (const problem of file.problems) {
        report({
          messageId: 'problem',
          data: { message: problem.message },
          file,
          span: problem.span,
          ...(problem.whole
            ? { help: 'Nothing else of this file could be read, so none of it was checked: fix it to have it checked.' }
            : {}),
        });
      }
      // What the file says but only the build (or the install) knows: a notice, so nothing is skipped in silence.
      // Base images are image-pin's to report (it says when their tag cannot be checked).
      const images = new Set(
        file.images.filter((image) => image.unresolved).map((image) => `${image.span.start}:${image.span.end}`),
      );
      // Values one ARG leaves open in a row (an apt-get install of 20 packages pinned to `=${TENSORRT_VERSION}`, each
      // on the line after the last) are one notice at the first of them, naming a few.
      let run: (typeof file.unresolved)[number][] = [];
      const flush = (): void => {
        const [first] = run;
        if (!first) return;
        const named = run.slice(0, 3).map((fact) => (fact.text.length > 80 ? `${fact.text.slice(0, 77)}…` : fact.text));
        const text = run.length > 3 ? `${named.join(', ')} and ${run.length - 3} more` : named.join(', ');
        report({
          messageId: run.length > 1 ? 'notReadMany' : 'notRead',
          data: { text, reason: first.reason },
          file,
          span: first.span,
          severity: 'notice',
          ...(first.help ? { help: first.help } : {}),
          // A secret's value is never to be written into the file (an ARG default is in the image's history).
          ...(/is a build secret/.test(first.reason)
            ? {
                help: 'cuda-gatekeeper judges what a file states; a secret is only known when the build runs, and is left to it (never give it a default: build arguments stay in the image history). Source: https://docs.docker.com/reference/dockerfile/#run---mounttypesecret',
              }
            : {}),
        });
        run = [];
      };
      for (const fact of file.unresolved) {
        if (images.has(`${fact.span.start}:${fact.span.end}`)) continue;
        if (fact.fails) {
          flush();
          report({
            messageId: 'notChecked',
            data: { text: fact.text, reason: fact.reason },
            file,
            span: fact.span,
            // Where only the pools' placement is not known and the baseline has no pools, nothing is hidden.
            ...(baseline.unchecked === 'neutral' || (fact.placementOnly && baseline.pools.length === 0)
              ? { severity: 'notice' as const }
              : {}),
          });
          continue;
        }
        const last = run.at(-1);
        // The same text again (one option in two commands) is said at each place; so is what has advice of its own.
        if (
          last &&
          (last.reason !== fact.reason ||
            fact.help !== undefined ||
            run.some((held) => held.text === fact.text) ||
            !adjacent(file.source.text, last.span.end, fact.span.start))
        )
          flush();
        run.push(fact);
      }
      flush();
    }
  },
});

/** Whether `start` follows `end` on the same line or the next one (at most one line break between them). */
function adjacent(text: string, end: number, start: number): boolean {
  if (start < end) return false;
  const first = text.indexOf('\n', end);
  if (first < 0 || first >= start) return true;
  const second = text.indexOf('\n', first + 1);
  return second < 0 || second >= start;
}
