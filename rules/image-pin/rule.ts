import type { ImageFact } from '../../src/parsers/facts.js';
import { defineRule } from '../../src/rule.js';

/** Why a tag that moves is a problem, for the three messages that say it does. */
const FLOATING =
  'Tags such as "latest", "12" or "12.4" move to new releases; a CUDA base image that moves changes the CUDA, cuDNN and driver requirements of every build. Name the full version, e.g. nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04.';

export default defineRule({
  id: 'image-pin',
  description: 'Base images are pinned to an exact tag (or digest, if the baseline asks for it)',
  defaultSeverity: 'error',
  fix: 'none',
  about: 'written',
  messages: {
    noTag: '{{image}} has no tag, so Docker pulls "latest", which changes under you',
    latest: '{{image}} uses the floating "latest" tag',
    floating: '{{image}} uses the floating tag "{{tag}}"; pin the full version',
    noDigest: '{{image}} is not pinned by digest, as the baseline requires',
    unresolved: 'the base image cannot be checked: {{reason}}',
  },
  helps: {
    noTag: FLOATING,
    latest: FLOATING,
    floating: FLOATING,
    noDigest:
      'Append @sha256:<digest> (from `docker buildx imagetools inspect IMAGE:TAG`) so the build cannot change when the tag is re-pushed.',
    unresolved: 'Give the ARG a default value that names an exact tag, so the file documents what it builds from.',
  },
  check({ files, baseline, report }) {
    if (baseline.pinning.images === 'none') return;
    for (const file of files) {
      for (const image of file.images) {
        if (image.fromStage !== undefined || image.repository === 'scratch') continue;
        const data = { image: image.reference };
        if (image.unresolved) {
          report({
            messageId: 'unresolved',
            data: { reason: image.unresolved },
            file,
            span: image.span,
            severity: 'notice',
          });
          continue;
        }
        if (baseline.pinning.images === 'digest') {
          if (!image.digest)
            report({
              messageId: 'noDigest',
              data,
              file,
              span: image.span,
            });
          continue;
        }
        if (image.digest) continue;
        const problem = tagProblem(image);
        if (problem)
          report({
            messageId: problem,
            data: { ...data, tag: image.tag ?? '' },
            file,
            span: image.span,
          });
      }
    }
  },
});

function tagProblem(image: ImageFact): 'noTag' | 'latest' | 'floating' | undefined {
  if (image.tag === undefined) return 'noTag';
  if (image.tag === 'latest') return 'latest';
  const version = /^v?(\d+(?:\.\d+)*)/.exec(image.tag)?.[1];
  if (
    version !== undefined &&
    version.split('.').length < 3 &&
    /^(nvidia\/cuda|pytorch\/pytorch|nvidia\/pytorch)$/.test(image.repository)
  ) {
    // nvidia/cuda and PyTorch images version with three parts; NGC uses YY.MM, which is exact.
    if (!(image.registry === 'nvcr.io' && /^\d{2}\.\d{2}-/.test(image.tag))) return 'floating';
  }
  if (/^\d+(\.\d+)?$/.test(image.tag)) return 'floating';
  return undefined;
}
