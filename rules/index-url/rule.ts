import { cudaFromLabel, cudaFromUrl, isPytorchIndex } from '../../src/analysis/cuda-labels.js';
import { groupBy, positions } from '../../src/collections.js';
import { PYTORCH_INDEX_PACKAGES } from '../../src/analysis/torch-build.js';
import type { Invocation, Unit } from '../../src/analysis/units.js';
import type { IndexFact, InstallContext, PackageFact, ParsedFile } from '../../src/facts.js';
import type { Fix, TextEdit } from '../../src/finding.js';
import type { KnowledgeBase } from '../../src/knowledge/index.js';
import { defineRule } from '../../src/rule.js';
import { cudaMajorMinor, publicVersion, tagFromCuda } from '../../src/versions.js';

export default defineRule({
  id: 'index-url',
  description: 'CUDA wheels come from an index that serves them, and index options are where pip reads them',
  defaultSeverity: 'warning',
  fix: 'safe',
  messages: {
    extraIndex: '{{url}} is an extra index: pip compares it with PyPI and may install PyPI\'s {{packages}} instead of the {{tag}} build',
    noIndex: '{{name}}=={{version}} is a {{tag}} build, but no index of this install serves {{tag}} builds, so pip cannot find it',
    ignored: '{{option}} is written on a requirement line, where pip ignores it',
  },
  check({ units, kb, report }) {
    const invocationsOf = new Map<InstallContext, Invocation[]>();
    for (const unit of units) {
      for (const invocation of unit.invocations) {
        for (const member of invocation.members) {
          const list = invocationsOf.get(member.context);
          if (list) list.push(invocation);
          else invocationsOf.set(member.context, [invocation]);
        }
      }
    }
    for (const unit of units) {
      checkExtraIndexes(unit, kb, report);
      checkUnservedLabels(unit, invocationsOf, report);
    }
    for (const file of new Set(units.flatMap((unit) => unit.files))) checkIgnoredOptions(file, report);
  },
});

type Report = Parameters<Parameters<typeof defineRule>[0]['check']>[0]['report'];

function checkExtraIndexes(unit: Unit, kb: KnowledgeBase, report: Report): void {
  // The unit's unlabelled PyTorch-index packages by `path#context`, built once for all invocations (filtering
  // the unit's packages per invocation was quadratic in a stage with many pip commands).
  let candidates: Map<string, number[]> | undefined;
  for (const invocation of unit.invocations) {
    const extras = invocation.indexes.filter((index) => index.kind === 'extra-index-url' && isPytorchIndex(index.url) && cudaFromUrl(index.url)?.precision === 'minor');
    if (extras.length === 0) continue;
    candidates ??= groupBy(positions(unit.packages.length), (i) => {
      const { file, pkg } = unit.packages[i]!;
      return pkg.ecosystem === 'pip' && PYTORCH_INDEX_PACKAGES.has(pkg.name) && !pkg.localLabel && !pkg.url ? `${file.path}#${pkg.context}` : undefined;
    });
    const memberKeys = new Set(invocation.members.map((member) => `${member.file.path}#${member.context.id}`));
    const picked = [...memberKeys].flatMap((key) => candidates!.get(key) ?? []).sort((a, b) => a - b);
    const torchPackages = picked.map((i) => unit.packages[i]!);
    if (torchPackages.length === 0) continue;
    for (const index of extras) {
      const cuda = cudaFromUrl(index.url)!.cuda;
      const tag = tagFromCuda(cuda);
      const edits: TextEdit[] = [];
      let complete = true;
      for (const { file, pkg } of torchPackages) {
        const edit = pkg.exact ? addLabel(file, pkg, tag, kb) : undefined;
        if (edit) edits.push(edit);
        else complete = false;
      }
      // When the index itself disagrees with the unit's CUDA target, cuda-mismatch rewrites it first; pinning
      // its labels now would fight that fix.
      const target = unit.target && unit.target.precision === 'minor' ? cudaMajorMinor(unit.target.cuda) : undefined;
      const agrees = target === undefined || target === cuda;
      const fix: Fix | undefined = complete && agrees && edits.length > 0 ? { title: `Pin the ${tag} builds explicitly`, safety: 'safe', edits } : undefined;
      const owner = invocation.members.find((member) => member.context.indexes.includes(index))?.file ?? unit.root;
      report({
        messageId: 'extraIndex',
        data: { url: index.url, packages: [...new Set(torchPackages.map(({ pkg }) => pkg.rawName))].join(', '), tag },
        file: owner,
        span: index.span,
        help: `pip takes the best matching version from every index: an unpinned requirement gets PyPI's newest build, and a package name on PyPI can shadow the one you meant (dependency confusion). Pin the builds with a local label (torch==X.Y.Z+${tag}), which PyPI never serves, or use --index-url for a dedicated install step. Source: https://pip.pypa.io/en/stable/cli/pip_install/#finding-packages`,
        related: torchPackages.map(({ file, pkg }) => ({ file, span: pkg.span, message: pkg.exact ? `${pkg.rawName}==${pkg.exact} has no +${tag} label` : `${pkg.rawName}${pkg.specifier} is not pinned to a build` })),
        ...(fix ? { fix } : {}),
      });
    }
  }
}

function addLabel(file: ParsedFile, pkg: PackageFact, tag: string, kb: KnowledgeBase): TextEdit | undefined {
  const clause = pkg.clauses[0];
  if (!clause || file.source.text.slice(clause.versionSpan.start, clause.versionSpan.end) !== clause.version) return undefined;
  const version = publicVersion(clause.version);
  const release = pkg.name === 'torch' ? kb.torchRelease(version) : kb.torchForCompanion(pkg.name as 'torchvision' | 'torchaudio', version)[0];
  if (!release || !release.variants.includes(tag)) return undefined;
  return { path: file.path, range: [clause.versionSpan.end, clause.versionSpan.end], text: `+${tag}` };
}

function serves(index: IndexFact, tag: string): boolean {
  const found = cudaFromUrl(index.url);
  if (found) return found.precision === 'minor' && tagFromCuda(found.cuda) === tag;
  // A private mirror or a flat find-links page may serve anything: do not claim it does not.
  return !isPytorchIndex(index.url) && index.kind !== 'conda-channel';
}

function checkUnservedLabels(unit: Unit, invocationsOf: ReadonlyMap<InstallContext, Invocation[]>, report: Report): void {
  for (const { file, pkg } of unit.packages) {
    if (pkg.ecosystem !== 'pip' || pkg.url || !pkg.localLabel || !pkg.exact || !PYTORCH_INDEX_PACKAGES.has(pkg.name)) continue;
    const cuda = cudaFromLabel(pkg.localLabel);
    if (!cuda || cuda.precision !== 'minor') continue;
    const tag = tagFromCuda(cuda.cuda);
    const context = file.contexts[pkg.context];
    const invocations = (context && invocationsOf.get(context)) ?? [];
    if (invocations.some((invocation) => invocation.indexes.some((index) => serves(index, tag)))) continue;
    const url = `https://download.pytorch.org/whl/${tag}`;
    const insertAt = file.source.text.charCodeAt(0) === 0xfeff ? 1 : 0;
    const fix: Fix | undefined = file.kind === 'requirements' ? { title: `Add ${url} as an index`, safety: 'safe', edits: [{ path: file.path, range: [insertAt, insertAt], text: `--extra-index-url ${url}\n` }] } : undefined;
    report({
      messageId: 'noIndex',
      data: { name: pkg.rawName, version: publicVersion(pkg.exact), tag },
      file,
      span: pkg.span,
      severity: 'error',
      help: `PyPI never serves local versions such as +${tag}; they live on the PyTorch index. Add ${file.kind === 'requirements' ? `--extra-index-url ${url} to this file` : `--index-url ${url} (or --extra-index-url) to the install command`}.`,
      ...(fix ? { fix } : {}),
    });
  }
}

function checkIgnoredOptions(file: ParsedFile, report: Report): void {
  for (const index of file.indexes) {
    if (!index.ignoredReason) continue;
    const optionText = file.source.text.slice(index.span.start, index.span.end);
    const position = file.source.position(index.span.start);
    const lineStart = file.source.lineStart(position.line);
    let removeFrom = index.span.start;
    while (removeFrom > lineStart && /[ \t]/.test(file.source.text[removeFrom - 1]!)) removeFrom--;
    const fix: Fix = {
      title: `Move ${optionText} to a line of its own`,
      safety: 'safe',
      edits: [
        { path: file.path, range: [lineStart, lineStart], text: `${optionText}\n` },
        { path: file.path, range: [removeFrom, index.span.end], text: '' },
      ],
    };
    report({
      messageId: 'ignored',
      data: { option: optionText },
      file,
      span: index.span,
      help: `${index.ignoredReason}. Source: https://pip.pypa.io/en/stable/reference/requirements-file-format/#per-requirement-options`,
      fix,
    });
  }
}
