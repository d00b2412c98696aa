import type { ImageFact, ParsedFile } from '../../src/facts.js';
import type { Fix } from '../../src/finding.js';
import { cite, latestCudaPatch, type KnowledgeBase, type NvidiaCudaTag } from '../../src/knowledge/index.js';
import { defineRule } from '../../src/rule.js';
import { compareDotted, cudaMajorMinor } from '../../src/versions.js';

export default defineRule({
  id: 'image-missing',
  description: 'nvidia/cuda base image tags follow NVIDIA\'s tag grammar and name a CUDA release that exists',
  defaultSeverity: 'error',
  fix: 'safe',
  messages: {
    grammar: 'nvidia/cuda has no tag "{{tag}}": tags are <major>.<minor>.<patch>-[cudnn-]<base|runtime|devel>-<os><version>',
    shortVersion: 'nvidia/cuda has no tag "{{tag}}": since CUDA 11 every tag names the full version ({{full}})',
    noRelease: 'nvidia/cuda:{{tag}} names CUDA {{cuda}}, which NVIDIA never released',
    unknownPatch: 'nvidia/cuda:{{tag}} names CUDA {{cuda}}, which is not a known release (newest {{minor}} release: {{latest}})',
    cudnnSpelling: 'nvidia/cuda tags for CUDA {{cuda}} spell cuDNN as "-{{expected}}-", not "-{{found}}-"',
    deleted: 'nvidia/cuda:{{tag}} is end-of-life; NVIDIA deletes such tags six months after end of life',
    os: 'nvidia/cuda {{cuda}} images are not published for {{os}}{{osVersion}} ({{rule}})',
  },
  check({ files, kb, report }) {
    for (const file of files) {
      for (const image of file.images) {
        // Only a fully resolved tag can be judged: anything still holding a variable is known only at build time.
        if (!image.tag || image.unresolved || image.digest || /[$`{}]/.test(image.tag) || !kb.isNvidiaCuda(image.registry, image.repository)) continue;
        checkTag(file, image, kb, report);
      }
    }
  },
});

type Report = Parameters<Parameters<typeof defineRule>[0]['check']>[0]['report'];
const POLICY = 'https://gitlab.com/nvidia/container-images/cuda/-/issues/177';

function checkTag(file: ParsedFile, image: ImageFact, kb: KnowledgeBase, report: Report): void {
  const tag = image.tag!;
  const parsed = kb.nvidiaCudaTag(tag);
  const policy = kb.data.images.nvidiaCuda.supportPolicy;
  if (!parsed || !parsed.flavour || !parsed.os) {
    report({ messageId: 'grammar', data: { tag }, file, span: image.span, help: `Flavours: base, runtime, devel; e.g. nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04. Source: ${cite(policy)}` });
    return;
  }
  const minor = cudaMajorMinor(parsed.version);
  if (minor && kb.cudaExists(parsed.version) === 'no') {
    const record = kb.noReleaseRecord(parsed.version)!;
    report({ messageId: 'noRelease', data: { tag, cuda: minor }, file, span: image.span, help: `${record.note ?? ''}. Source: ${cite(record)}` });
    return;
  }
  const parts = parsed.version.split('.');
  if (parts.length === 2 && minor) {
    const full = latestCudaPatch(kb, minor);
    const fix = full ? versionFix(file, image, parsed, full, kb) : undefined;
    report({ messageId: 'shortVersion', data: { tag, full: full ? `e.g. ${tag.replace(parsed.version, full)}` : 'X.Y.Z' }, file, span: image.span, help: `Source: ${cite(policy)}`, ...(fix ? { fix } : {}) });
    return;
  }
  if (minor && kb.cudaExists(parsed.version) === 'unknown') {
    const latest = latestCudaPatch(kb, minor);
    if (latest && compareDotted(parsed.version, latest) > 0) {
      const row = kb.minDriver(latest)!.row;
      report({ messageId: 'unknownPatch', data: { tag, cuda: parsed.version, minor, latest }, file, span: image.span, severity: 'warning', help: `NVIDIA's release table (retrieved ${row.retrieved}) has no CUDA ${parsed.version}. Source: ${cite(row)}` });
    }
  }
  if (parsed.cudnn) {
    const expected = kb.cudnnSpelling(parsed.version);
    if (expected && expected.spelling !== parsed.cudnn) {
      const fix = spellingFix(file, image, parsed, expected.spelling);
      report({ messageId: 'cudnnSpelling', data: { cuda: parsed.version, expected: expected.spelling, found: parsed.cudnn }, file, span: image.span, help: `cuDNN tags are -cudnn8- up to 12.2.2, -cudnn9- for 12.3.2 and version-less -cudnn- (cuDNN 9) from 12.4.1. Source: ${cite(expected.record)}`, ...(fix ? { fix } : {}) });
    }
  }
  const deleted = kb.nvidiaCudaTagDeleted(parsed.version);
  if (deleted) {
    const latest = minor ? latestCudaPatch(kb, minor) : undefined;
    report({ messageId: 'deleted', data: { tag }, file, span: image.span, severity: 'warning', unverified: deleted.confidence === 'unverified', help: `${policy.text}${latest && latest !== parsed.version ? ` Use ${latest} or a newer, supported CUDA.` : ''} Sources: ${cite(deleted)}; ${POLICY}` });
  }
  const os = kb.data.images.nvidiaCuda.osSuffixes.find((row) => row.os === parsed.os);
  if (os && parsed.osVersion) {
    const tooEarly = os.from && compareDotted(parsed.version, os.from) < 0;
    const tooLate = os.through && compareDotted(parsed.version, os.through) > 0;
    const ubuntu2404 = parsed.os === 'ubuntu' && parsed.osVersion === '24.04' && compareDotted(parsed.version, '12.5.1') < 0;
    if (tooEarly || tooLate || ubuntu2404) {
      const rule = ubuntu2404 ? 'ubuntu24.04 from 12.5.1' : tooEarly ? `${parsed.os} from ${os.from}` : `${parsed.os} up to ${os.through}`;
      report({ messageId: 'os', data: { cuda: parsed.version, os: parsed.os, osVersion: parsed.osVersion, rule }, file, span: image.span, severity: 'warning', unverified: os.confidence === 'unverified', help: `Source: ${cite(os)}` });
    }
  }
}

function versionFix(file: ParsedFile, image: ImageFact, parsed: NvidiaCudaTag, full: string, kb: KnowledgeBase): Fix | undefined {
  const span = image.tagMap?.origin(0, parsed.version.length);
  if (!span || file.source.text.slice(span.start, span.end) !== parsed.version) return undefined;
  if (parsed.cudnn && kb.cudnnSpelling(full)?.spelling !== parsed.cudnn) return undefined;
  return { title: `Use ${full}`, safety: 'safe', edits: [{ path: file.path, range: [span.start, span.end], text: full }] };
}

function spellingFix(file: ParsedFile, image: ImageFact, parsed: NvidiaCudaTag, spelling: string): Fix | undefined {
  const from = parsed.version.length + 1;
  const span = image.tagMap?.origin(from, from + parsed.cudnn!.length);
  if (!span || file.source.text.slice(span.start, span.end) !== parsed.cudnn) return undefined;
  return { title: `Spell it -${spelling}-`, safety: 'safe', edits: [{ path: file.path, range: [span.start, span.end], text: spelling }] };
}
