import { condaAdmits, parseCondaVersionSpec } from '../../src/analysis/conda-versions.js';
import { isPypiIndex, isPytorchIndex } from '../../src/analysis/cuda-labels.js';
import { projectName } from '../../src/analysis/packages.js';
import { compiledInputs } from '../../src/analysis/runs.js';
import { PYG_DOCS, torchPage } from '../../src/analysis/torch-pages.js';
import { imageTorch, type Unit, type UnitPackage } from '../../src/analysis/units.js';
import { servedVariant } from '../../src/analysis/torch-build.js';
import type { IndexFact, PackageFact, ParsedFile } from '../../src/parsers/facts.js';
import type { Fix } from '../../src/finding.js';
import { mayHoldTogether } from '../../src/parsers/markers.js';
import { cite, isUnverified, type KnowledgeBase } from '../../src/knowledge/index.js';
import { defineRule, type Draft, type Reporter } from '../../src/rule.js';
import { minorOf, publicVersion } from '../../src/knowledge/versions.js';
import { satisfiesPep440 } from '../../src/util/pep440.js';
import { compareDotted } from '../../src/util/dotted.js';

/** The rule's messages, by id: `MessageId` types the helpers' reporter, so a misspelt id does not compile. */
const MESSAGES = {
  companion: '{{name}} {{version}} does not belong to torch {{torch}} (it belongs to {{expected}})',
  noCompanion:
    '{{name}} {{version}} is installed with torch {{torch}}, for which PyTorch published no {{name}} release',
  pinnedTorch: '{{name}} {{version}} is built against torch {{expected}}, but torch {{torch}} is {{installed}}',
  pinnedElsewhere:
    "{{name}} {{version}} may come from {{url}}, whose builds are not known here: PyPI's is built against torch {{expected}}, but torch {{torch}} is {{installed}}",
  triton:
    'triton {{version}} is installed with torch {{torch}}, whose Linux wheel requires triton {{expected}}{{condition}}',
  extensionBuild: '{{subject}} is built for torch {{built}}, but torch {{torch}} is {{installed}}',
  torchPage: '{{url}} serves builds for torch {{built}}, but torch {{torch}} is {{installed}}',
  lockedRequirement: '{{subject}} requires pytorch {{requirement}}, but the lock installs pytorch {{torch}}',
  noLibrary: '{{name}} {{version}} ships no library for CUDA {{cuda}}, the CUDA of torch {{torch}}',
  noMinorLibrary:
    '{{name}} {{version}} ships no library for CUDA {{cuda}}, the CUDA of torch {{torch}}: {{consequence}}',
  wheelBuild: '{{subject}} is built for torch {{built}}, but torch {{torch}} is {{installed}}',
  wildcard:
    '{{subject}} admits no release that belongs to {{torch}}: its releases {{versions}} belong to torch {{owners}}',
};
type MessageId = keyof typeof MESSAGES;

/**
 * A wheel taken by URL from neither PyTorch's indexes nor PyPI: a vendor's build (AMD publishes torch 2.9.1 with
 * torchvision 0.24.0 on repo.radeon.com, built against each other), whose pairing is its vendor's. PyTorch's release
 * pairs say nothing of it, either way.
 */
function vendorBuild(url: string | undefined): boolean {
  return url !== undefined && /^https?:\/\//i.test(url) && !isPytorchIndex(url) && !isPypiIndex(url);
}

/** The companions whose pairing with torch is PyTorch's release pairing (torch's own Requires-Dist for triton). */
const VENDOR_PAIRED: ReadonlySet<string> = new Set(['torchvision', 'torchaudio', 'triton']);

/** A torch pinned to one version: what a stage's companions are compared with. */
function isPinnedTorch({ pkg }: UnitPackage): boolean {
  return projectName(pkg) === 'torch' && pkg.exact !== undefined;
}

/** A requirement of one PEP 440 prefix alone (`==2.8.0.*`, `==0.22.*`): the prefix, else undefined. */
function wildcardPrefix(pkg: PackageFact): string | undefined {
  return pkg.ecosystem === 'pip' && !pkg.exact && !pkg.url
    ? /^==\s*(\d+(?:\.\d+)*)\.\*$/.exec(pkg.specifier)?.[1]
    : undefined;
}

/**
 * torch and torchvision or torchaudio of one unit where one of them is pinned to a prefix (`torch==2.8.0.*` beside
 * `torchvision==0.22.*`, kohya_ss' macOS requirements): every pair the two admit is compared, and an error says that
 * none belongs together. Where the knowledge has no release a prefix admits, nothing is said.
 */
function checkWildcards(unit: Unit, kb: KnowledgeBase, report: Reporter<MessageId>): void {
  // Most units pin no prefix: a test of the specifier's end first, before any list is made.
  if (!unit.packages.some(({ pkg }) => pkg.specifier.endsWith('.*') && wildcardPrefix(pkg) !== undefined)) return;
  const pip = unit.packages.filter(({ pkg }) => pkg.ecosystem === 'pip' && !pkg.url);
  const torch = pip.find(({ pkg }) => pkg.name === 'torch' && (pkg.exact || wildcardPrefix(pkg)));
  if (!torch) return;
  const admits = (pkg: PackageFact, version: string): boolean =>
    pkg.exact ? publicVersion(pkg.exact) === version : satisfiesPep440(version, pkg.specifier) === true;
  const torches = kb.torchReleases().filter((release) => admits(torch.pkg, release.version));
  if (torches.length === 0) return;
  for (const { file, pkg } of pip) {
    const name = pkg.name;
    if ((name !== 'torchvision' && name !== 'torchaudio') || !(wildcardPrefix(pkg) || wildcardPrefix(torch.pkg)))
      continue;
    if (!pkg.exact && !wildcardPrefix(pkg)) continue;
    if (!mayHoldTogether(pkg.markers, torch.pkg.markers)) continue;
    if (torches.some((release) => release[name].some((version) => admits(pkg, version)))) continue;
    // The companion's releases the requirement admits, and the torch each belongs to.
    const versions = [...new Set(kb.torchReleases().flatMap((release) => release[name]))].filter((version) =>
      admits(pkg, version),
    );
    if (versions.length === 0) continue;
    const owners = [
      ...new Set(versions.flatMap((version) => kb.torchForCompanion(name, version).map((r) => r.version))),
    ];
    if (owners.length === 0) continue;
    const pairs = torches.map(
      (release) => `torch ${release.version} pairs with ${name} ${release[name].join(' or ') || 'none'}.`,
    );
    report({
      messageId: 'wildcard',
      data: {
        subject: `${pkg.rawName}${pkg.specifier}`,
        torch: `${torch.pkg.rawName}${torch.pkg.specifier}`,
        versions: versions.join(', '),
        owners: owners.join(', '),
        pairs: pairs.join(' '),
        source: cite(torches[0]!),
      },
      file,
      span: pkg.span,
      related: [
        {
          file: torch.file,
          span: torch.pkg.span,
          message: `torch is pinned here: ${torch.pkg.rawName}${torch.pkg.specifier}`,
        },
      ],
    });
  }
}

/**
 * pip-compile's input beside its output (aphrodite-engine's requirements/test.in and test.txt): the output is what
 * is installed, with the builds the compile resolved (`--torch-backend cu129`), and it is judged on its own. What the
 * input pairs is said as a notice that names the output, never dropped.
 */
function compiledReporter(
  unit: Unit,
  compiled: ReadonlyMap<string, string>,
  files: readonly ParsedFile[],
  report: Reporter<MessageId>,
): Reporter<MessageId> {
  const output = unit.stage === undefined ? compiled.get(unit.root.path) : undefined;
  const file = output ? files.find((each) => each.path === output) : undefined;
  if (!file) return report;
  const related = {
    file,
    span: { start: 0, end: 0 },
    message: `pip-compile's output: ${file.path} is compiled from ${unit.root.path} and is what is installed (judged on its own)`,
  };
  return (draft) => report({ ...draft, severity: 'notice', related: [...(draft.related ?? []), related] });
}

export default defineRule({
  id: 'companion-mismatch',
  description:
    'torch and its companions (torchvision, torchaudio, torchtext, torchdata, xformers, vllm, vllm-flash-attn, triton, torch-tensorrt, flash-attn, bitsandbytes, PyG and mmcv builds) belong together',
  defaultSeverity: 'error',
  fix: 'safe',
  messages: MESSAGES,
  // `source` cites the record the finding rests on.
  helps: {
    wildcard:
      "A version with `.*` admits every release of that prefix (PEP 440), and torchvision's and torchaudio's wheels each require the one torch release they belong to, so no pair of the two can be installed together: pip stops with ResolutionImpossible. {{pairs}} Source: {{source}}",
    companion:
      'Each torch release has one matching {{name}} release, built against its C++ ABI; mixing them fails at import ("undefined symbol") or pulls another torch. torch {{torch}} pairs with {{name}} {{pairs}}. Source: {{source}}',
    noCompanion: '{{note}} Source: {{source}}',
    pinnedTorch: '{{why}} {{note}} Source: {{source}}',
    pinnedElsewhere:
      "The torch a wheel is built against is that index's build of it, which may not be PyPI's (opendatahub's images take xformers and torch from Red Hat's index, built against each other): check what that index's {{name}} {{version}} requires (its Requires-Dist). PyPI's: {{why}} Source: {{source}}",
    extensionBuild: `PyG's extension wheels are compiled against one torch minor; with another the import fails with "undefined symbol". Source: ${PYG_DOCS}`,
    triton:
      'The torch wheel pins triton exactly (Requires-Dist: triton=={{expected}}; {{marker}}), so pip either refuses the combination or replaces one of them.{{pythonNote}} Source: {{source}}',
    lockedRequirement:
      "The lock records this build's dependencies: it needs pytorch {{requirement}}, so the environment cannot be installed as locked (or it was edited by hand). Source: https://docs.conda.io/projects/conda/en/latest/user-guide/concepts/pkg-specs.html#package-match-specifications",
    wheelBuild:
      'flash-attn publishes its wheels per torch minor, CUDA major and C++ ABI, named in the local version (+cu12torch2.6cxx11abiFALSE); compiled against torch {{built}}, the extension fails to import with torch {{torch}} ("undefined symbol"). Take the wheel named for torch {{torchMinor}}, or build flash-attn against this torch. Source: https://github.com/Dao-AILab/flash-attention/blob/main/.github/workflows/publish.yml (the build matrix and wheel names of each release)',
    noLibrary:
      '{{name}} loads the library built for the CUDA of the torch at hand, and {{version}} ships libraries for CUDA {{majors}}.x only, so its import or its first GPU call fails. Move it to a release that ships CUDA {{cuda}} libraries. Source: {{source}}',
    noMinorLibrary:
      '{{name}} loads the library built for the CUDA major and minor of the torch at hand (libbitsandbytes_cuda<major><minor>), and {{version}} ships libraries for CUDA {{minors}}. Move it to a release that ships a CUDA {{cuda}} library{{release}}, or pin torch to a build of one of those CUDAs. Source: {{source}}',
    torchPage:
      'The wheels on this page are compiled against torch {{built}}; with torch {{torchMinor}} their import fails ("undefined symbol"), or pip finds none. Use the page for torch {{torchMinor}}. Source: {{source}}',
  },
  check({ files, units, kb, report: reportAll }) {
    const compiled = compiledInputs(files);
    for (const unit of units) {
      const report = compiledReporter(unit, compiled, files, reportAll);
      checkWildcards(unit, kb, report);
      // A stage built FROM another runs with the torch the stages above it installed, unless it installs its own.
      const own = unit.packages.filter(isPinnedTorch);
      const above = own.length > 0 ? undefined : unit.inherited?.findLast(isPinnedTorch);
      // A stage that names no torch runs its image's, where the tag says which (pytorch/pytorch's).
      const shipped = own.length > 0 || above ? undefined : imageTorch(unit, kb);
      const torches = above ? [above] : shipped ? [shipped.torch] : own;
      if (torches.length === 0) continue;
      const installed = shipped ? `the one ${shipped.image} ships` : 'pinned';
      const here = (version: string): string =>
        shipped ? `${shipped.image} ships torch ${version}` : `torch ${version} is pinned here`;
      checkTorchPages(unit, torches[0]!, publicVersion(torches[0]!.pkg.exact!), { installed, here }, report);
      // What each torch of the unit is compared as, worked out once per torch rather than once per package.
      const pinned = new Map(
        torches.map((torch) => {
          const version = publicVersion(torch.pkg.exact!);
          const related = [{ file: torch.file, span: torch.pkg.span, message: here(version) }];
          return [torch, { version, release: kb.torchRelease(version), related }] as const;
        }),
      );
      for (const entry of unit.packages) {
        const { file, pkg } = entry;
        if (!pkg.exact || pinned.has(entry)) continue;
        const name = projectName(pkg);
        // The torch installed with it: alternatives by marker (one torch per Python version) are not compared. One
        // the same command installs first (lorax: pip's torch==2.6.0 and triton==3.0.0 replace the pytorch=2.4.0 an
        // earlier conda install put in the same environment).
        const together = (candidate: UnitPackage): boolean => mayHoldTogether(candidate.pkg.markers, pkg.markers);
        const torch =
          torches.find(
            (candidate) => entry.invocation && candidate.invocation === entry.invocation && together(candidate),
          ) ?? torches.find(together);
        if (!torch) continue;
        const { version: torchVersion, release, related } = pinned.get(torch)!;
        const version = publicVersion(pkg.exact);
        // A vendor's build (AMD's torch and torchvision wheels on repo.radeon.com) pairs with torchvision, torchaudio
        // and triton as its vendor built it, not as PyTorch's releases do.
        if (VENDOR_PAIRED.has(name) && (vendorBuild(pkg.url) || vendorBuild(torch.pkg.url))) continue;
        if (pkg.torchRequirement !== undefined && torch.pkg.ecosystem === 'conda') {
          // A lock records what this very build requires of pytorch: that decides, not PyPI's pairing (conda-forge's
          // torchvision 0.15.2 is built for pytorch >=2.0.0,<2.1.0a0, PyPI's for torch 2.0.1 only).
          checkLockedRequirement(entry, torch, torchVersion, report);
          continue;
        }
        if ((name === 'torchvision' || name === 'torchaudio') && release) {
          const allowed = release[name];
          if (allowed.includes(version)) continue;
          if (allowed.length === 0) {
            report({
              messageId: 'noCompanion',
              data: { name, version, torch: torchVersion, note: release.note ?? '', source: cite(release) },
              file,
              span: pkg.span,
              related,
              severity: 'notice',
            });
            continue;
          }
          const owner = kb.torchForCompanion(name, version)[0];
          // The companion's own index must have the new version's build (torchvision 0.22.1 from /whl/cu124: torch
          // 2.7.1's releases have no cu124 build), else the version alone is no safe fix.
          const served = entry.build?.index ? servedVariant(entry.build.index.url) : undefined;
          const reachable =
            !served || served === 'all' || served.tag === 'cpu' || kb.torchBuilds(release).has(served.tag);
          const found = companionFix(entry, allowed[0]!, torch.pkg.localLabel);
          const fix = found && !reachable ? { ...found, safety: 'unsafe' as const } : found;
          report({
            messageId: 'companion',
            data: {
              name,
              version,
              torch: torchVersion,
              expected: owner ? `torch ${owner.version}` : 'no torch release in the knowledge base',
              pairs: allowed.join(' or '),
              source: cite(release),
            },
            file,
            span: pkg.span,
            related,
            unverified: isUnverified(release),
            ...(fix ? { fix } : {}),
          });
        } else if (EXACT_PINS.has(name)) {
          // A build from source names its commit and date (`xformers-0.0.23+b4c853d.d20231107`, xformers' setup.py
          // get_local_version_suffix): built against the torch at hand, not the release's exact pin.
          if (SOURCE_BUILD_LABEL.test(pkg.localLabel ?? wheelLabel(pkg) ?? '')) continue;
          const pin = kb.companionPin(name, version, pkg.extras);
          if (
            !pin ||
            pin.torch === torchVersion ||
            (pin.requires !== undefined && satisfiesPep440(torchVersion, pin.requires) !== false) ||
            (pin.requires === undefined && pin.abi === 'minor' && minorOf(pin.torch) === minorOf(torchVersion))
          )
            continue;
          const expected = pin.requires ? pin.torch : pin.abi === 'minor' ? minorOf(pin.torch) : pin.torch;
          // From an index other than PyPI and PyTorch's (a vendor's, a private one), the wheel is that index's build,
          // whose torch is not PyPI's pin: said, not failed.
          const elsewhere = entry.invocation?.indexes.find(
            (index) => index.kind !== 'conda-channel' && !isPypiIndex(index.url) && !isPytorchIndex(index.url),
          );
          report({
            messageId: elsewhere ? 'pinnedElsewhere' : 'pinnedTorch',
            data: {
              name,
              version,
              expected,
              torch: torchVersion,
              installed,
              why: pin.requires
                ? `${name} ${version} is built against torch ${pin.torch}, and its wheel requires torch${pin.requires} (Requires-Dist); pip would refuse torch ${torchVersion} or replace it.`
                : pin.abi === 'minor'
                  ? `${name} ${version} is compiled against torch ${expected}: pip installs it beside torch ${torchVersion} (its wheel does not require that torch minor), but the import fails ("undefined symbol").`
                  : `${name} ${version} is built against torch ${pin.torch} and its wheel requires exactly that torch; pip would replace torch ${torchVersion} or the import fails ("undefined symbol").`,
              note: pin.note ?? '',
              source: cite(pin),
              url: elsewhere?.url ?? '',
            },
            file,
            span: pkg.span,
            related,
            unverified: isUnverified(pin),
            ...(elsewhere ? { severity: 'notice' as const } : {}),
          });
        } else if (name === 'flash-attn' && FLASH_ATTN_LABEL.test(wheelLabel(pkg) ?? '')) {
          const built = FLASH_ATTN_LABEL.exec(wheelLabel(pkg)!)![1]!;
          if (built === minorOf(torchVersion)) continue;
          report({
            messageId: 'wheelBuild',
            data: {
              subject: `${pkg.rawName} ${pkg.exact}`,
              built,
              torch: torchVersion,
              installed,
              torchMinor: minorOf(torchVersion),
            },
            file,
            span: pkg.span,
            related,
          });
        } else if (name === 'bitsandbytes' && pkg.ecosystem === 'pip') {
          checkLibraries(entry, torch, { version, torchVersion, related }, kb, report);
        } else if (pkg.localLabel && /^pt\d+(cu\d+|cpu)$/.test(pkg.localLabel)) {
          // PyG's extension wheels (torch-scatter==2.1.2+pt21cu121) are built against one torch minor.
          const digits = /^pt(\d)(\d+)/.exec(pkg.localLabel)!;
          const built = `${digits[1]}.${digits[2]}`;
          if (built === minorOf(torchVersion)) continue;
          report({
            messageId: 'extensionBuild',
            data: { subject: `${pkg.rawName}==${pkg.exact}`, built, torch: torchVersion, installed },
            file,
            span: pkg.span,
            related,
          });
        } else if (name === 'triton' && pkg.ecosystem === 'pip' && !torch.build?.cpu) {
          // Only the CUDA (and ROCm) wheels require triton: pytorch's setup.py adds the requirements of
          // PYTORCH_EXTRA_INSTALL_REQUIREMENTS, which .github/scripts/generate_binary_build_matrix.py sets for the
          // accelerator builds only (a CPU wheel from /whl/cpu requires no triton).
          const pin = kb.companionPins('triton').find((row) => row.torch === torchVersion);
          if (!pin || pin.version === version) continue;
          // torch 2.2–2.5 pin triton only below a Python version (Requires-Dist marker): on a newer Python, or a
          // Python we cannot see, the pin may not apply.
          const below = pin.marker ? /python_version\s*<\s*"(\d+\.\d+)"/.exec(pin.marker)?.[1] : undefined;
          const python = below ? unitPython(unit) : undefined;
          if (below && python && compareDotted(python, below) >= 0) continue;
          const condition = below && !python ? ` on Python < ${below}` : '';
          report({
            messageId: 'triton',
            data: {
              version,
              torch: torchVersion,
              expected: pin.version,
              condition,
              marker: pin.marker ?? 'platform_system == "Linux"',
              pythonNote: condition
                ? ` The pin holds only on Python < ${below}, and this unit does not say which Python it runs.`
                : '',
              source: cite(pin),
            },
            file,
            span: pkg.span,
            related,
            unverified: isUnverified(pin),
            ...(condition ? { severity: 'warning' as const } : {}),
          });
        }
      }
    }
  },
});

/**
 * A package that loads the library of torch's CUDA (bitsandbytes: `libbitsandbytes_cuda<XY>`) in a release that
 * ships none for that CUDA major: the import fails.
 */
function checkLibraries(
  entry: UnitPackage,
  torch: UnitPackage,
  pinned: { readonly version: string; readonly torchVersion: string; readonly related: Draft<MessageId>['related'] },
  kb: KnowledgeBase,
  report: Reporter<MessageId>,
): void {
  const { file, pkg } = entry;
  const cuda = torch.build?.cuda;
  const libraries = kb.cudaLibraries(pkg.name, pinned.version);
  if (!cuda || !libraries) return;
  const major = Number.parseInt(cuda, 10);
  if (libraries.cudaMajors.includes(major)) {
    const minor = cuda.split('.').slice(0, 2).join('.');
    const minors = libraries.cudaMinors;
    if (!minors || !/^\d+\.\d+$/.test(minor) || minors.includes(minor) || libraries.missingMinor === 'nearest') return;
    const releases = kb.releasesLoadingLibrary(pkg.name, minor);
    const release = !releases ? '' : 'since' in releases ? ` (from ${releases.since})` : ` (${releases.versions})`;
    report({
      messageId: 'noMinorLibrary',
      data: {
        name: pkg.rawName,
        version: pinned.version,
        cuda: minor,
        torch: `${pinned.torchVersion}${torch.pkg.localLabel ? `+${torch.pkg.localLabel}` : ''}`,
        consequence:
          libraries.missingMinor === 'cpu'
            ? 'it loads its CPU library instead, and its GPU functions (8-bit optimizers, 4-bit quantization) fail'
            : 'its import or its first GPU call fails',
        minors: minors.join(', '),
        release,
        source: cite(libraries),
      },
      file,
      span: pkg.span,
      related: pinned.related,
      unverified: isUnverified(libraries),
    });
    return;
  }
  report({
    messageId: 'noLibrary',
    data: {
      name: pkg.rawName,
      version: pinned.version,
      cuda,
      torch: `${pinned.torchVersion}${torch.pkg.localLabel ? `+${torch.pkg.localLabel}` : ''}`,
      majors: libraries.cudaMajors.join(', '),
      source: cite(libraries),
    },
    file,
    span: pkg.span,
    related: pinned.related,
    unverified: isUnverified(libraries),
  });
}

/** A locked conda build's own pytorch requirement against the locked pytorch: the lock itself is inconsistent. */
function checkLockedRequirement(
  entry: UnitPackage,
  torch: UnitPackage,
  torchVersion: string,
  report: Reporter<MessageId>,
): void {
  const { file, pkg } = entry;
  const spec = parseCondaVersionSpec(pkg.torchRequirement!, 'exact');
  if (!spec || condaAdmits(spec, torchVersion)) return;
  report({
    messageId: 'lockedRequirement',
    data: {
      subject: `${pkg.rawName} ${pkg.exact}${pkg.build ? ` (${pkg.build})` : ''}`,
      requirement: pkg.torchRequirement!,
      torch: torchVersion,
    },
    file,
    span: pkg.span,
    related: [{ file: torch.file, span: torch.pkg.span, message: `pytorch ${torchVersion} is locked here` }],
  });
}

/** The local version of a wheel built from a git checkout: `+<commit>.d<yyyymmdd>` (xformers', setuptools-scm's). */
const SOURCE_BUILD_LABEL = /^g?[0-9a-f]{7,40}(?:\.d\d{8})?$/i;

/** Packages whose release wheels require one exact torch (companions.json). */
const EXACT_PINS: ReadonlySet<string> = new Set([
  'xformers',
  'torchcodec',
  'sglang',
  'torchtext',
  'torchdata',
  'vllm-flash-attn',
  'vllm',
  'torch-tensorrt',
]);

/**
 * flash-attn's prebuilt wheels name the torch and CUDA they are compiled for in their local version
 * (`flash_attn-2.7.4.post1+cu12torch2.6cxx11abiFALSE-cp311-cp311-linux_x86_64.whl`; the publish workflow of
 * Dao-AILab/flash-attention at each tag): `torch2.6` is the torch minor.
 */
const FLASH_ATTN_LABEL = /^cu\d+torch(\d+\.\d+)cxx11abi(?:true|false)$/i;

/** The local label of a requirement, or of the wheel file its URL names. */
function wheelLabel(pkg: { readonly localLabel?: string; readonly url?: string }): string | undefined {
  if (pkg.localLabel) return pkg.localLabel;
  const file = pkg.url?.split(/[?#]/)[0]?.split('/').pop();
  return file ? /^[^-]+-[^-+]+(?:\+|%2B)([^-]+)-/i.exec(file)?.[1] : undefined;
}

/** A wheel page (find-links, or an index built per torch minor) that serves builds for another torch minor. */
function checkTorchPages(
  unit: Unit,
  torch: UnitPackage,
  torchVersion: string,
  how: { readonly installed: string; readonly here: (version: string) => string },
  report: Reporter<MessageId>,
): void {
  const seen = new Set<IndexFact>();
  for (const invocation of unit.invocations) {
    for (const index of invocation.indexes) {
      if (seen.has(index)) continue;
      seen.add(index);
      const page = torchPage(index.url);
      // A page is read as what pip reads it as: a find-links page, or an index where it is one (FlashInfer's).
      if (index.kind !== 'find-links' && !page?.index) continue;
      const built = page?.torch;
      if (page && built && built !== minorOf(torchVersion)) {
        const file = invocation.members.find((member) => member.context.indexes.includes(index))?.file ?? unit.root;
        report({
          messageId: 'torchPage',
          data: {
            url: index.url,
            built,
            torch: torchVersion,
            installed: how.installed,
            torchMinor: minorOf(torchVersion),
            source: page.source,
          },
          file,
          span: index.span,
          related: [{ file: torch.file, span: torch.pkg.span, message: how.here(torchVersion) }],
        });
      }
    }
  }
}

/**
 * The companion's version for the pinned torch. A labelled companion takes torch's label too (torchvision 0.17.0+cu118
 * beside torch 2.5.1+cu124 becomes 0.20.1+cu124): the pair is one build.
 */
function companionFix({ file, pkg }: UnitPackage, version: string, torchLabel: string | undefined): Fix | undefined {
  const clause = pkg.clauses[0];
  if (!clause || file.source.text.slice(clause.versionSpan.start, clause.versionSpan.end) !== clause.version)
    return undefined;
  const current = publicVersion(clause.version);
  const relabel = pkg.localLabel && torchLabel && pkg.localLabel !== torchLabel;
  const text = relabel ? `${version}+${torchLabel}` : version;
  const end = relabel ? clause.versionSpan.end : clause.versionSpan.start + current.length;
  return {
    title: `Use ${pkg.rawName} ${text}`,
    safety: 'safe',
    edits: [{ path: file.path, range: [clause.versionSpan.start, end], text }],
  };
}

/**
 * The Python a unit runs, where it says so: a conda `python=3.12` pin, or a `python:3.12-slim` base image.
 * Returns major.minor, or undefined when the unit does not say.
 */
function unitPython(unit: Unit): string | undefined {
  for (const { pkg } of unit.packages) {
    if (pkg.ecosystem !== 'conda' || pkg.name !== 'python') continue;
    const version = pkg.exact ?? /^\s*(?:==?|>=)?\s*(\d+\.\d+)/.exec(pkg.specifier)?.[1];
    const minor = version ? minorOf(version) : undefined;
    if (minor) return minor;
  }
  for (const file of unit.files) {
    for (const image of file.images) {
      if (
        (file === unit.root && unit.stage !== undefined && image.stage !== unit.stage) ||
        image.unresolved ||
        !image.tag ||
        !/^(?:docker\.io\/)?(?:library\/)?python$/.test(
          `${image.registry ? `${image.registry}/` : ''}${image.repository}`,
        )
      )
        continue;
      const minor = /^(\d+\.\d+)/.exec(image.tag)?.[1];
      if (minor) return minor;
    }
  }
  return undefined;
}
