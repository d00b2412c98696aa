import { imageFullName } from '../../src/parsers/image-ref.js';
import type { ImageFact, ParsedFile } from '../../src/parsers/facts.js';
import { impossibleNgcTag } from '../../src/analysis/claims.js';
import type { Fix } from '../../src/finding.js';
import {
  cite,
  latestCudaPatch,
  latestImagePatch,
  type KnowledgeBase,
  type NvidiaCudaTag,
} from '../../src/knowledge/index.js';
import { defineRule, type Reporter } from '../../src/rule.js';
import { cudaMajorMinor, minorOf } from '../../src/knowledge/versions.js';
import { compareDotted } from '../../src/util/dotted.js';

/** NVIDIA's policy of deleting end-of-life nvidia/cuda tags. */
const POLICY = 'https://gitlab.com/nvidia/container-images/cuda/-/issues/177';

/** The rule's messages, by id: `MessageId` types the helpers' reporter, so a misspelt id does not compile. */
const MESSAGES = {
  grammar:
    'nvidia/cuda has no tag "{{tag}}": tags are <major>.<minor>.<patch>-[cudnn-]<base|runtime|devel>-<os><version>',
  shortVersion: 'nvidia/cuda has no tag "{{tag}}": from CUDA 11.2 on every tag names the full version ({{full}})',
  gone: 'nvidia/cuda:{{tag}} no longer exists: NVIDIA deleted the end-of-life CUDA {{version}} tags from Docker Hub',
  noRelease: 'nvidia/cuda:{{tag}} names CUDA {{cuda}}, which NVIDIA never released',
  noUpdate: 'nvidia/cuda:{{tag}} names CUDA {{cuda}}, an update CUDA {{minor}} never had (its updates: {{updates}})',
  noTags: 'nvidia/cuda:{{tag}} does not exist: NVIDIA published no nvidia/cuda images for CUDA {{cuda}}',
  unknownPatch:
    'nvidia/cuda:{{tag}} names CUDA {{cuda}}, newer than the knowledge base knows (newest {{minor}} release: {{latest}})',
  newerCuda:
    'nvidia/cuda:{{tag}} names CUDA {{cuda}}, newer than the knowledge base knows (newest release: {{newest}})',
  cudnnSpelling: 'nvidia/cuda tags for CUDA {{cuda}} spell cuDNN as "-{{expected}}-", not "-{{found}}-"',
  deleted: 'nvidia/cuda:{{tag}} is end-of-life; NVIDIA deletes such tags six months after end of life',
  os: 'nvidia/cuda {{cuda}} images are not published for {{os}}{{osVersion}} ({{rule}})',
  ngcMonth: '{{image}} does not exist: NGC tags are YY.MM-… (the release month), and there is no month {{month}}',
  registry: '{{image}} does not exist: {{reason}}',
  cogCuda:
    '{{image}} does not exist: it names CUDA {{cuda}}, which NVIDIA never released, so Cog has no base image for it',
};
type MessageId = keyof typeof MESSAGES;

export default defineRule({
  id: 'image-missing',
  description: "nvidia/cuda base image tags follow NVIDIA's tag grammar and name a CUDA release that exists",
  defaultSeverity: 'error',
  fix: 'safe',
  messages: MESSAGES,
  // `source` cites the knowledge record a finding rests on; `note` is that record's own words.
  helps: {
    grammar: 'Flavours: base, runtime, devel; e.g. nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04. Source: {{source}}',
    noRelease: '{{note}}. Source: {{source}}',
    noUpdate: '{{note}}; the tags that exist name {{existing}}. Source: {{source}}',
    noTags: '{{note}}{{alternative}}. Source: {{source}}',
    gone: `{{policy}}{{move}} Sources: {{source}}; ${POLICY}`,
    shortVersion: 'Source: {{source}}',
    unknownPatch:
      "NVIDIA's release table as the knowledge base has it (retrieved {{retrieved}}) has no CUDA {{cuda}} yet; check the tag, or update cuda-gatekeeper. Source: {{source}}",
    newerCuda:
      "NVIDIA's release table as the knowledge base has it (retrieved {{retrieved}}) ends at CUDA {{newest}}, so this image's tags, drivers and builds are not checked; update cuda-gatekeeper, or check the tag. Source: {{source}}",
    cudnnSpelling:
      'cuDNN tags are -cudnn8- up to 12.2.2, -cudnn9- for 12.3.2 and version-less -cudnn- (cuDNN 9) from 12.4.1. Source: {{source}}',
    deleted: `{{policy}}{{move}} Sources: {{source}}; ${POLICY}`,
    os: '{{note}}Source: {{source}}',
    cogCuda:
      'Cog builds a GPU image on its base for `build.cuda` and refuses a CUDA it has none for ("CUDA {{cuda}} is not supported by Cog", github.com/replicate/cog/blob/6110c912377d4ded0f57165d305821a14a9a4418/pkg/config/compatibility.go, latestCuDNNForCUDA). {{note}}. Source: {{source}}',
    ngcMonth: 'NGC containers are released monthly and tagged by year and month.{{nearest}} Source: {{source}}',
    registry:
      'The registry was asked for this image during the check and answers that it has no such manifest, so every pull of it fails. Pick a tag the registry lists (`crane ls {{name}}`, or its web page).{{nearest}}',
  },
  check({ files, kb, report }) {
    for (const file of files) {
      // A Dockerfile's FROM lines and a manifest's container images alike: a tag that does not exist fails the pull.
      for (const image of [...file.images, ...file.containers.map((container) => container.image)]) {
        // Only a fully resolved tag can be judged: anything still holding a variable is known only at build time.
        if (image.unresolved || /[$`{}]/.test(image.reference)) continue;
        if (kb.isNvidiaCuda(image.registry, image.repository)) {
          if (image.tag && !image.digest) checkTag(file, image, kb, report);
        } else if (image.registry === 'r8.im' && image.repository === 'cog-base') {
          checkCogBase(file, image, kb, report);
        } else if (
          !(image.registry === 'nvcr.io' && image.tag && !image.digest && checkNgcTag(file, image, kb, report))
        )
          checkRegistry(file, image, kb, report);
      }
    }
  },
});

/**
 * Replicate's Cog base image (`r8.im/cog-base:cuda12.7-python3.11`, what a cog.yaml's `build.cuda` names): a CUDA that
 * NVIDIA never released has no nvidia/cuda image to build one from (Cog's cuda_compatibility.json lists those it has).
 */
function checkCogBase(file: ParsedFile, image: ImageFact, kb: KnowledgeBase, report: Reporter<MessageId>): void {
  const minor = /^cuda(\d+\.\d+)(?:-|$)/.exec(image.tag ?? '')?.[1];
  if (!minor || kb.cudaExists(minor) !== 'no') return;
  const record = kb.noReleaseRecord(minor)!;
  report({
    messageId: 'cogCuda',
    data: {
      image: image.reference,
      cuda: minor,
      note: record.note ?? 'NVIDIA never released it',
      source: cite(record),
    },
    file,
    span: image.span,
  });
}

/** An nvidia/cuda tag being checked: where it is written, the tag, and what the rule reports with. */
interface TagSite {
  readonly file: ParsedFile;
  readonly image: ImageFact;
  readonly tag: string;
  readonly kb: KnowledgeBase;
  readonly report: Reporter<MessageId>;
}

/**
 * An nvidia/cuda tag against NVIDIA's tag grammar and releases, in order: the grammar, then the version (a release
 * or update that never came, one without tags, tags that are gone, a short version: each says only that), then the
 * cuDNN spelling, a deletion, and the OS.
 */
function checkTag(file: ParsedFile, image: ImageFact, kb: KnowledgeBase, report: Reporter<MessageId>): void {
  const tag = image.tag!;
  const parsed = kb.nvidiaCudaTag(tag);
  const policy = kb.nvidiaCudaSupportPolicy();
  if (!parsed || !parsed.flavour || !parsed.os) {
    report({ messageId: 'grammar', data: { tag, source: cite(policy) }, file, span: image.span });
    return;
  }
  const site: TagSite = { file, image, tag, kb, report };
  if (checkVersion(site, parsed)) return;
  checkCudnn(site, parsed);
  checkDeletion(site, parsed);
  checkOs(site, parsed);
}

/** The tag's version: true where a finding about it is all there is to say of the tag. */
function checkVersion({ file, image, tag, kb, report }: TagSite, parsed: NvidiaCudaTag): boolean {
  const policy = kb.nvidiaCudaSupportPolicy();
  const minor = cudaMajorMinor(parsed.version);
  if (minor && kb.cudaExists(minor) === 'no') {
    const record = kb.noReleaseRecord(parsed.version)!;
    report({
      messageId: 'noRelease',
      data: { tag, cuda: minor, note: record.note ?? '', source: cite(record) },
      file,
      span: image.span,
    });
    return true;
  }
  if (minor && parsed.version.split('.').length === 3 && kb.cudaExists(parsed.version) === 'no') {
    // An update that never came: the minor is finished, and the knowledge base lists every update it had.
    const record = kb.noReleaseRecord(parsed.version)!;
    const updates = kb.cudaReleasesOf(minor).filter((version) => !kb.nvidiaCudaWithoutTags(version));
    const latest = latestImagePatch(kb, minor);
    const fix = latest && !kb.nvidiaCudaTagDeleted(latest) ? versionFix(file, image, parsed, latest, kb) : undefined;
    report({
      messageId: 'noUpdate',
      data: {
        tag,
        cuda: parsed.version,
        minor,
        updates: kb.cudaReleasesOf(minor).join(', '),
        note: String(record.note),
        existing: updates.map((version) => tag.replace(parsed.version, version)).join(' or '),
        source: cite(record),
      },
      file,
      span: image.span,
      ...(fix ? { fix } : {}),
      suggestions: updates
        .filter((version) => version !== latest)
        .map((version) => ({
          title: `Use ${version}`,
          safety: 'unsafe' as const,
          edits: versionFix(file, image, parsed, version, kb)?.edits ?? [],
        }))
        .filter((suggestion) => suggestion.edits.length > 0),
    });
    return true;
  }
  const withoutTags = kb.nvidiaCudaWithoutTags(parsed.version);
  if (minor && withoutTags) {
    const latest = latestImagePatch(kb, minor);
    const fix =
      latest && latest !== parsed.version && !kb.nvidiaCudaWithoutTags(latest)
        ? versionFix(file, image, parsed, latest, kb)
        : undefined;
    report({
      messageId: 'noTags',
      data: {
        tag,
        cuda: parsed.version,
        note: String(withoutTags.note),
        alternative: fix ? `; ${latest} has images` : '',
        source: cite(withoutTags),
      },
      file,
      span: image.span,
      ...(fix ? { fix } : {}),
    });
    return true;
  }
  const parts = parsed.version.split('.');
  const deleted = kb.nvidiaCudaTagDeleted(parsed.version);
  if (deleted && deleted.confidence !== 'unverified') {
    // Two-part tags were the spelling up to 11.0 (10.2-cudnn7-devel-ubuntu18.04, 11.0-base): those are gone with
    // the rest of their CUDA's tags, and the message says so rather than blaming the spelling.
    const latest = minor ? latestImagePatch(kb, minor) : undefined;
    const fix = latest && !kb.nvidiaCudaTagDeleted(latest) ? versionFix(file, image, parsed, latest, kb) : undefined;
    report({
      messageId: 'gone',
      data: {
        tag,
        version: parsed.version,
        policy: policy.text,
        move: fix
          ? ` ${latest} is the last update of CUDA ${minor} and its tags remain.`
          : ' Move to a supported CUDA.',
        source: cite(deleted),
      },
      file,
      span: image.span,
      ...(fix ? { fix } : {}),
    });
    return true;
  }
  if (parts.length === 2 && minor) {
    const full = latestImagePatch(kb, minor);
    const fix = full ? versionFix(file, image, parsed, full, kb) : undefined;
    report({
      messageId: 'shortVersion',
      data: { tag, full: full ? `e.g. ${tag.replace(parsed.version, full)}` : 'X.Y.Z', source: cite(policy) },
      file,
      span: image.span,
      ...(fix ? { fix } : {}),
    });
    return true;
  }
  if (minor && kb.cudaExists(parsed.version) === 'unknown') {
    // A later update of the newest CUDA than the knowledge base knows: said, at notice, with the data's date.
    // The newest update with a driver row, else the newest the release notes record (13.5.0, whose Table 3 row was
    // not read): an update after it is still one the data does not know, never a pass in silence.
    const recorded = kb.cudaReleases().filter((row) => minorOf(row.version) === minor);
    const latest = latestCudaPatch(kb, minor) ?? recorded.at(-1)?.version;
    if (latest && compareDotted(parsed.version, latest) > 0) {
      const row = kb.minDriver(latest)?.row ?? recorded.find((candidate) => candidate.version === latest)!;
      report({
        messageId: 'unknownPatch',
        data: { tag, cuda: parsed.version, minor, latest, retrieved: row.retrieved, source: cite(row) },
        file,
        span: image.span,
        severity: 'notice',
      });
    } else if (!latest && compareDotted(minor, kb.newestCuda()) > 0) {
      // A CUDA minor after the newest the knowledge base knows: not checked, and said so with the data's date.
      const row = kb.newestCudaRelease();
      const newest = row.version;
      report({
        messageId: 'newerCuda',
        data: { tag, cuda: minor, newest, retrieved: row.retrieved, source: cite(row) },
        file,
        span: image.span,
        severity: 'notice',
      });
    }
  }
  return false;
}

/** The cuDNN part of the tag, spelled as NVIDIA spells it for that CUDA (`cudnn8`, `cudnn`). */
function checkCudnn({ file, image, kb, report }: TagSite, parsed: NvidiaCudaTag): void {
  if (parsed.cudnn) {
    const expected = kb.cudnnSpelling(parsed.version);
    if (expected && expected.spelling !== parsed.cudnn) {
      const fix = spellingFix(file, image, parsed, expected.spelling);
      report({
        messageId: 'cudnnSpelling',
        data: { cuda: parsed.version, expected: expected.spelling, found: parsed.cudnn, source: cite(expected.record) },
        file,
        span: image.span,
        ...(fix ? { fix } : {}),
      });
    }
  }
}

/** Tags of a CUDA that NVIDIA deletes (a record not yet confirmed: the confirmed ones are `gone`). */
function checkDeletion({ file, image, tag, kb, report }: TagSite, parsed: NvidiaCudaTag): void {
  const policy = kb.nvidiaCudaSupportPolicy();
  const minor = cudaMajorMinor(parsed.version);
  const deleted = kb.nvidiaCudaTagDeleted(parsed.version);
  if (deleted) {
    const latest = minor ? latestCudaPatch(kb, minor) : undefined;
    report({
      messageId: 'deleted',
      data: {
        tag,
        policy: policy.text,
        move: latest && latest !== parsed.version ? ` Use ${latest} or a newer, supported CUDA.` : '',
        source: cite(deleted),
      },
      file,
      span: image.span,
      severity: 'warning',
      unverified: deleted.confidence === 'unverified',
    });
  }
}

/** The OS of the tag: NVIDIA publishes each OS version for a range of CUDA releases. */
function checkOs({ file, image, kb, report }: TagSite, parsed: NvidiaCudaTag): void {
  // The row for this OS and version (NVIDIA publishes each OS version for a range of CUDA releases).
  const os = parsed.os && parsed.osVersion ? kb.nvidiaCudaOs(parsed.os, parsed.osVersion, parsed.version) : undefined;
  if (os && !os.published) {
    const { row } = os;
    const rule =
      row.from && compareDotted(parsed.version, row.from) < 0
        ? `${parsed.os}${parsed.osVersion} from ${row.from}`
        : `${parsed.os}${parsed.osVersion} up to ${row.through}`;
    report({
      messageId: 'os',
      data: {
        cuda: parsed.version,
        os: parsed.os!,
        osVersion: parsed.osVersion!,
        rule,
        note: row.note ? `${row.note}. ` : '',
        source: cite(row),
      },
      file,
      span: image.span,
      severity: 'warning',
      unverified: row.confidence === 'unverified',
    });
  }
}

/** NGC's release notes: every container is tagged `YY.MM-<variant>` by its release month. */
const NGC_TAGS = 'https://docs.nvidia.com/deeplearning/frameworks/support-matrix/index.html';

/**
 * An NGC tag whose month cannot be (`pytorch:25.13-py3`): the registry cannot have it. The nearest tags of the same
 * variant the knowledge base has are offered as unsafe suggestions (which month was meant is the author's call).
 */
function checkNgcTag(file: ParsedFile, image: ImageFact, kb: KnowledgeBase, report: Reporter<MessageId>): boolean {
  const tag = image.tag!;
  const monthly = /^(\d{2})\.(\d{2})(?=[.-]|$)/.exec(tag);
  if (!monthly || !impossibleNgcTag(image)) return false;
  const month = Number(monthly[2]);
  const variant = tag.slice(monthly[0].length);
  const when = (t: string) => Number(t.slice(0, 2)) * 12 + Number(t.slice(3, 5));
  const wanted = Number(monthly[1]) * 12 + Math.min(Math.max(month, 1), 12);
  const nearest = kb
    .ngcTags(image.repository)
    .filter((known) => /^\d{2}\.\d{2}/.test(known) && known.slice(5) === variant)
    .sort((a, b) => Math.abs(when(a) - wanted) - Math.abs(when(b) - wanted) || when(b) - when(a))
    .slice(0, 2);
  const span = image.tagSpan;
  report({
    messageId: 'ngcMonth',
    data: {
      image: image.reference,
      month: monthly[2]!,
      nearest: nearest.length ? ` The nearest tags the knowledge base knows: ${nearest.join(', ')}.` : '',
      source: NGC_TAGS,
    },
    file,
    span: image.span,
    suggestions:
      span && file.source.text.slice(span.start, span.end) === tag
        ? nearest.map((known) => ({
            title: `Use ${known}`,
            safety: 'unsafe' as const,
            edits: [{ path: file.path, range: [span.start, span.end] as const, text: known }],
          }))
        : [],
  });
  return true;
}

/** An image its registry, asked during this check, says it does not have (404 MANIFEST_UNKNOWN or NAME_UNKNOWN). */
function checkRegistry(file: ParsedFile, image: ImageFact, kb: KnowledgeBase, report: Reporter<MessageId>): void {
  const lookup = kb.imageLookup(image);
  if (lookup?.state !== 'missing') return;
  const name = imageFullName(image);
  const known = image.registry === 'nvcr.io' ? kb.ngcTags(image.repository) : [];
  report({
    messageId: 'registry',
    data: {
      image: image.reference,
      reason: lookup.reason,
      name,
      nearest: known.length ? ` Tags the knowledge base knows: ${known.slice(-3).join(', ')}.` : '',
    },
    file,
    span: image.span,
  });
}

function versionFix(
  file: ParsedFile,
  image: ImageFact,
  parsed: NvidiaCudaTag,
  full: string,
  kb: KnowledgeBase,
): Fix | undefined {
  const span = image.tagMap?.origin(0, parsed.version.length);
  if (!span || file.source.text.slice(span.start, span.end) !== parsed.version) return undefined;
  if (parsed.cudnn && kb.cudnnSpelling(full)?.spelling !== parsed.cudnn) return undefined;
  return {
    title: `Use ${full}`,
    safety: 'safe',
    edits: [{ path: file.path, range: [span.start, span.end], text: full }],
  };
}

function spellingFix(file: ParsedFile, image: ImageFact, parsed: NvidiaCudaTag, spelling: string): Fix | undefined {
  const from = parsed.version.length + 1;
  const span = image.tagMap?.origin(from, from + parsed.cudnn!.length);
  if (!span || file.source.text.slice(span.start, span.end) !== parsed.cudnn) return undefined;
  return {
    title: `Spell it -${spelling}-`,
    safety: 'safe',
    edits: [{ path: file.path, range: [span.start, span.end], text: spelling }],
  };
}
