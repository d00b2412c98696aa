import { describePackage } from '../../src/analysis/claims.js';
import { nearestCudaBuild, nearestReleaseWithCuda } from '../../src/analysis/nearest.js';
import type { TorchBuild } from '../../src/analysis/torch-build.js';
import type { Unit } from '../../src/analysis/units.js';
import type { PackageFact, ParsedFile } from '../../src/parsers/facts.js';
import type { Fix } from '../../src/finding.js';
import { cite, isUnverified, type KnowledgeBase, type TorchRelease } from '../../src/knowledge/index.js';
import { defineRule, type Reporter } from '../../src/rule.js';
import { compareDotted, cudaFromTag, cudaMajorMinor, minorOf, publicVersion, tagFromCuda } from '../../src/knowledge/versions.js';
import { cudaFromLabel } from '../../src/analysis/cuda-labels.js';

export default defineRule({
  id: 'wheel-missing',
  description: 'The requested build exists (torch/torchvision/torchaudio CUDA variants, conda pytorch-cuda/cudatoolkit builds)',
  defaultSeverity: 'error',
  fix: 'unsafe',
  messages: {
    noVariant: '{{name}} {{version}} has no {{tag}} build{{via}}',
    fallback: "{{name}} {{version}} has no {{tag}} build, so pip ignores {{url}} and installs PyPI's {{pypi}} build",
    unknownVersion: '{{name}} {{version}} is not a known release',
    noPytorchCuda: 'pytorch-cuda={{version}} does not exist (published: {{published}})',
    condaCombination: 'pytorch {{version}} was not published for {{what}} {{cuda}} (published: {{published}})',
    channelEnded: 'pytorch {{version}} is not on the pytorch conda channel: its last release there was {{last}}',
    condaLabel: '{{subject}} names a pip build: conda packages carry no +{{label}} label, so no such version exists',
    toolkitIgnored: 'cudatoolkit does not select the CUDA build of pytorch {{version}}: from 1.13 the pytorch channel selects it with pytorch-cuda',
  },
  check({ units, kb, report }) {
    for (const unit of units) {
      for (const { file, pkg, build } of unit.packages) {
        if (build) checkBuild(unit, file, pkg, build, kb, report);
        else if (pkg.ecosystem === 'pip' && pkg.exact && ['torch', 'torchvision', 'torchaudio'].includes(pkg.name)) checkUnknown(file, pkg, kb, report);
      }
      checkConda(unit, kb, report);
    }
  },
});

function checkBuild(unit: Unit, file: ParsedFile, pkg: PackageFact, build: TorchBuild, kb: KnowledgeBase, report: Reporter): void {
  if (!build.release) {
    checkUnknown(file, pkg, kb, report);
    return;
  }
  const missing = build.missing;
  if (!missing) return;
  const release = build.release;
  const lenient = release.variantsComplete === false || isUnverified(release);
  const suggestions = alternatives(file, pkg, build.version, release, missing.cuda ?? '', kb);
  const published = release.variants.join(', ');
  const help = `${pkg.rawName === 'torch' ? 'torch' : `${pkg.rawName} (torch ${release.version})`} ${release.version} is published for ${published}${release.pypiDefault ? ` (PyPI: ${release.pypiDefault})` : ''}.${suggestionText(suggestions)} Source: ${cite(release)}`;
  if (missing.via === 'extra-index-url' && missing.index) {
    report({
      messageId: 'fallback',
      data: { name: pkg.rawName, version: build.version, tag: missing.tag, url: missing.index.url, pypi: build.release.pypiDefault ?? 'default' },
      file,
      span: pkg.span,
      unverified: lenient,
      severity: lenient ? 'notice' : 'error',
      help,
      related: indexOwner(unit, missing.index).map((owner) => ({
        file: owner,
        span: missing.index!.span,
        message: `this index has no ${pkg.rawName} ${build.version}`,
      })),
      suggestions,
    });
    return;
  }
  report({
    messageId: 'noVariant',
    data: {
      name: pkg.rawName,
      version: build.version,
      tag: missing.tag,
      via: missing.via === 'index-url' ? ` on ${missing.index?.url}, so pip finds no matching distribution` : '',
    },
    file,
    span: pkg.span,
    unverified: lenient,
    help,
    suggestions,
  });
}

function indexOwner(unit: Unit, index: NonNullable<TorchBuild['index']>): ParsedFile[] {
  const owner = unit.invocations.flatMap((invocation) => invocation.members).find((member) => member.context.indexes.includes(index));
  return owner ? [owner.file] : [];
}

function alternatives(file: ParsedFile, pkg: PackageFact, version: string, release: TorchRelease, wantedCuda: string, kb: KnowledgeBase): Fix[] {
  const fixes: Fix[] = [];
  const clause = pkg.clauses[0];
  const editable = clause && file.source.text.slice(clause.versionSpan.start, clause.versionSpan.end) === clause.version;
  const nearestTag = wantedCuda ? nearestCudaBuild(release, wantedCuda) : undefined;
  if (nearestTag) {
    const text = pkg.localLabel && editable ? `${publicVersion(clause!.version)}+${nearestTag}` : undefined;
    fixes.push({
      title: `${pkg.rawName} ${version}+${nearestTag} (same version, CUDA ${cudaFromTag(nearestTag)})`,
      safety: 'unsafe',
      edits: text ? [{ path: file.path, range: [clause!.versionSpan.start, clause!.versionSpan.end], text }] : [],
    });
  }
  const torchVersion = pkg.name === 'torch' ? version : release.version;
  const other = wantedCuda ? nearestReleaseWithCuda(kb, torchVersion, wantedCuda) : undefined;
  if (other) {
    const wanted = pkg.name === 'torch' ? other.version : pkg.name === 'torchvision' ? other.torchvision[0] : other.torchaudio[0];
    if (wanted) {
      const label = pkg.localLabel ? `+${pkg.localLabel}` : '';
      fixes.push({
        title: `${pkg.rawName} ${wanted}${label} (nearest release with a ${tagFromCuda(wantedCuda)} build)`,
        safety: 'unsafe',
        edits: editable ? [{ path: file.path, range: [clause!.versionSpan.start, clause!.versionSpan.end], text: `${wanted}${label}` }] : [],
      });
    }
  }
  return fixes;
}

function suggestionText(fixes: readonly Fix[]): string {
  return fixes.length === 0 ? '' : ` Builds that exist: ${fixes.map((fix) => fix.title).join('; ')}.`;
}

function checkUnknown(file: ParsedFile, pkg: PackageFact, kb: KnowledgeBase, report: Reporter): void {
  const version = publicVersion(pkg.exact ?? '');
  const line = kb.releaseLine(pkg.name as 'torch' | 'torchvision' | 'torchaudio');
  if (line.versions.has(version) || !/^\d+\.\d+\.\d+$/.test(version)) return;
  const minor = minorOf(version);
  const newestOfMinor = line.newestOfMinor.get(minor);
  // A version newer than every known one is newer than our data: nothing to say.
  if (newestOfMinor === undefined && compareDotted(version, line.newest ?? '0') > 0) return;
  const staleMinor = newestOfMinor !== undefined && compareDotted(version, newestOfMinor) > 0 && compareDotted(minorOf(line.newest ?? '0'), minor) > 0;
  const newest = kb
    .torchReleases()
    .filter((release) => release.confidence !== 'unverified')
    .at(-1)!;
  report({
    messageId: 'unknownVersion',
    data: { name: pkg.rawName, version },
    file,
    span: pkg.span,
    severity: staleMinor ? 'warning' : 'notice',
    help: `The knowledge base (PyTorch data retrieved ${newest.retrieved}) lists ${newestOfMinor ? `${pkg.rawName} ${minor} releases up to ${newestOfMinor}` : `no ${pkg.rawName} ${minor} release`}; check the version. Source: ${cite(newest)}`,
  });
}

function checkConda(unit: Unit, kb: KnowledgeBase, report: Reporter): void {
  const conda = unit.packages.filter(({ pkg }) => pkg.ecosystem === 'conda');
  const pytorch = conda.find(({ pkg }) => pkg.name === 'pytorch' && pkg.exact);
  const pytorchCuda = conda.find(({ pkg }) => pkg.name === 'pytorch-cuda' && pkg.exact);
  const cudatoolkit = conda.find(({ pkg }) => pkg.name === 'cudatoolkit' && pkg.exact);
  const published = kb.condaPytorchCudaVersions();
  const source = cite(kb.condaPytorchCuda());
  if (pytorchCuda) {
    const version = cudaMajorMinor(pytorchCuda.pkg.exact!.split('.').slice(0, 2).join('.')) ?? pytorchCuda.pkg.exact!;
    if (!published.includes(version)) {
      report({
        messageId: 'noPytorchCuda',
        data: { version: pytorchCuda.pkg.exact!, published: published.join(', ') },
        file: pytorchCuda.file,
        span: pytorchCuda.pkg.span,
        help: `The pytorch-cuda metapackage exists only for ${published.join(', ')}; from torch 2.6 PyTorch publishes no conda packages (use pip wheels). Source: ${source}`,
      });
    }
  }
  if (!pytorch) return;
  if (pytorch.pkg.exact!.includes('+')) {
    const label = pytorch.pkg.exact!.slice(pytorch.pkg.exact!.indexOf('+') + 1);
    report({
      messageId: 'condaLabel',
      data: { subject: describePackage(pytorch.pkg), label },
      file: pytorch.file,
      span: pytorch.pkg.span,
      help: `+${label} is how PyPI-style wheels name a CUDA build; conda names it in the build string or with pytorch-cuda. Write pytorch=${publicVersion(pytorch.pkg.exact!)} with ${cudaFromLabel(label) ? `pytorch-cuda=${cudaFromLabel(label)!.cuda}` : 'the CUDA package of your channel'}. Source: ${source}`,
    });
    return;
  }
  const version = pytorch.pkg.exact!;
  const release = kb.torchRelease(version);
  const channel =
    pytorch.pkg.channel ??
    (pytorch.file.contexts[pytorch.pkg.context]?.channels.includes('conda-forge')
      ? undefined
      : pytorch.file.contexts[pytorch.pkg.context]?.channels.includes('pytorch')
        ? 'pytorch'
        : undefined);
  const last = kb.pytorchChannel().lastVersion;
  if (channel === 'pytorch' && compareDotted(version, last) > 0) {
    report({
      messageId: 'channelEnded',
      data: { version, last },
      file: pytorch.file,
      span: pytorch.pkg.span,
      help: `The pytorch channel is deprecated; install torch ${version} with pip, or take pytorch from conda-forge. Source: ${cite(kb.pytorchChannel())}`,
    });
    return;
  }
  if (!release || channel === 'conda-forge' || pytorch.pkg.channel === 'conda-forge') return;
  const lenient = isUnverified(release);
  if (channel === 'pytorch' && cudatoolkit && !pytorchCuda && release.condaPytorchCuda?.length && !release.condaCudatoolkit?.length) {
    report({
      messageId: 'toolkitIgnored',
      data: { version },
      file: cudatoolkit.file,
      span: cudatoolkit.pkg.span,
      // The solver may still take a CUDA build of the same version: what it takes is not certain, so a warning.
      severity: 'warning',
      unverified: lenient,
      help: `The pytorch channel's builds of ${version} depend on pytorch-cuda (${release.condaPytorchCuda.join(', ')}), not on cudatoolkit, so the solver may pick a CPU build or another CUDA. Replace cudatoolkit with pytorch-cuda=X.Y from the nvidia channel. Source: ${cite(release)}`,
      related: [{ file: pytorch.file, span: pytorch.pkg.span, message: `pytorch ${version} is pinned here` }],
    });
  }
  const buildCuda = pytorch.pkg.localLabel ? cudaFromLabel(pytorch.pkg.localLabel)?.cuda : undefined;
  const checks: { what: string; cuda: string | undefined; list: readonly string[] | undefined; at: { file: ParsedFile; pkg: PackageFact } }[] = [
    {
      what: 'pytorch-cuda',
      cuda: pytorchCuda ? cudaMajorMinor(pytorchCuda.pkg.exact!.split('.').slice(0, 2).join('.')) : undefined,
      list: release.condaPytorchCuda,
      at: pytorchCuda ?? pytorch,
    },
    {
      what: 'cudatoolkit',
      cuda: cudatoolkit ? cudaMajorMinor(cudatoolkit.pkg.exact!.split('.').slice(0, 2).join('.')) : undefined,
      list: release.condaCudatoolkit,
      at: cudatoolkit ?? pytorch,
    },
    {
      what: 'CUDA (build string)',
      cuda: buildCuda && buildCuda.includes('.') ? buildCuda : undefined,
      list: release.condaPytorchCuda?.length ? release.condaPytorchCuda : release.condaCudatoolkit,
      at: pytorch,
    },
  ];
  for (const check of checks) {
    if (!check.cuda || !check.list || check.list.length === 0 || check.list.includes(check.cuda)) continue;
    if (check.what === 'pytorch-cuda' && !published.includes(check.cuda)) continue; // already reported above
    report({
      messageId: 'condaCombination',
      data: { version, what: check.what, cuda: check.cuda, published: check.list.join(', ') },
      file: check.at.file,
      span: check.at.pkg.span,
      unverified: lenient,
      help: `conda cannot solve ${describePackage(pytorch.pkg)} with ${check.what} ${check.cuda}: the pytorch channel has builds for ${check.list.join(', ')} only. Source: ${cite(release)}`,
      related: check.at.pkg === pytorch.pkg ? [] : [{ file: pytorch.file, span: pytorch.pkg.span, message: `pytorch ${version} is pinned here` }],
    });
  }
}
