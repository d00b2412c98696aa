import { cudaFromLabel, cudaFromUrl, isPypiIndex, isPytorchIndex } from '../../src/analysis/cuda-labels.js';
import { newestOnPypi, pypiWins, releaseFor, servedVariant, stableCudaIndex } from '../../src/analysis/torch-build.js';
import { unknownCudaIndex } from '../../src/analysis/unpinned.js';
import { TORCH_FAMILY } from '../../src/parsers/python-requirement.js';
import {
  firstIndexStrategy,
  imageShipsNoTorch,
  installerOf,
  optionContexts,
  type Invocation,
  type Unit,
} from '../../src/analysis/units.js';
import { apexFromPypi } from '../../src/analysis/packages.js';
import { baseImage } from '../../src/analysis/stages.js';
import type { FileKind, IndexFact, InstallContext, PackageFact, ParsedFile } from '../../src/parsers/facts.js';
import { formatOf } from '../../src/parsers/formats.js';
import { PYG_DOCS, torchPage } from '../../src/analysis/torch-pages.js';
import type { Fix } from '../../src/finding.js';
import { cite, isUnverified, type KnowledgeBase } from '../../src/knowledge/index.js';
import { defineRule, type Reporter } from '../../src/rule.js';
import { cudaMajor, publicVersion, tagFromCuda } from '../../src/knowledge/versions.js';
import { compareDotted } from '../../src/util/dotted.js';
import { groupBy } from '../../src/util/collections.js';

/** The rule's messages, by id: `MessageId` types the helpers' reporter, so a misspelt id does not compile. */
const MESSAGES = {
  extraIndex:
    "{{subject}} installs PyPI's {{name}} {{newest}}{{withPip}}, not a {{tag}} build: {{url}} is an extra index, and pip takes the newest version any index has ({{onIndex}})",
  unknownExtraIndex:
    "{{subject}} may install PyPI's {{name}} {{newest}} rather than a build of {{url}}: that is an extra index, pip takes the newest version any index has, and which versions it has is not known here",
  noIndex:
    '{{name}}=={{version}} is a {{tag}} build, but no index of this install serves {{tag}} builds, so pip cannot find it',
  noLocalSource:
    '{{name}}=={{version}} is a +{{label}} build, but this install names no index or page beside PyPI, which has no local versions, so pip cannot find it',
  noPygPage:
    '{{name}}=={{version}} is a PyG build for torch {{torch}} ({{tag}}), but no find-links page of this install serves it: PyG publishes such wheels on data.pyg.org, not on PyPI or the PyTorch index',
  library:
    '{{name}}=={{version}} is a +{{label}} build, which PyPI never serves, so whoever installs this library must name an index or page that does',
  ignored: '{{option}} is written on a requirement line, where pip ignores it',
  unpublished:
    '{{url}} serves nothing: PyTorch publishes no {{tag}} builds (its CUDA {{major}} indexes: {{published}}), so pip finds no distribution for anything this install asks of it',
  autoBackend:
    '{{setting}} picks the PyTorch index from the NVIDIA driver of the machine that runs it; docker build runs without a GPU, so uv falls back to the CPU-only builds',
  pipEnvForUv: '{{setting}} is read by pip, not by uv: the uv command in this stage does not use it',
  notExplicit:
    'the index "{{name}}" ({{url}}) is not explicit, so uv takes every package it has from it, not only torch',
  pypiApex:
    '{{subject}} can only come from PyPI, whose apex is an unrelated Pyramid web toolkit, not NVIDIA Apex, and {{image}} does not ship NVIDIA Apex',
  pypiApexPinned:
    "{{subject}} is PyPI's apex, an unrelated Pyramid web toolkit, not NVIDIA Apex, which is not published on PyPI",
  pypiApexUnlessInstalled:
    '{{subject}} names no index but PyPI, whose apex is an unrelated Pyramid web toolkit, not NVIDIA Apex: it installs that toolkit wherever NVIDIA Apex is not installed already',
};
type MessageId = keyof typeof MESSAGES;

const APEX_HELP =
  "PyPI's apex is a Pyramid toolkit whose only releases are development ones of 2013, so pip takes it for a bare `apex`, and `import apex.amp` (or apex.normalization) then fails. Build NVIDIA Apex from its repository against the installed torch (pip install -v --no-build-isolation with its C++/CUDA extension options, from a clone or git+https://github.com/NVIDIA/apex.git@<commit>), start from an NGC PyTorch image, which ships it, or drop it where torch.amp does its work. Sources: https://pypi.org/project/apex/; https://github.com/NVIDIA/apex#installation";

export default defineRule({
  id: 'index-url',
  description: 'CUDA wheels come from an index that serves them, and index options are where pip reads them',
  defaultSeverity: 'error',
  fix: 'safe',
  messages: MESSAGES,
  helps: {
    extraIndex:
      "pip takes the best matching version from every index, and a build with a +{{tag}} label wins only over the same version. PyPI's {{name}} {{newest}} is {{pypiBuild}}.{{uvNote}} Pin the build (=={{pinned}}+{{tag}}), or use --index-url for this install. Sources: https://pip.pypa.io/en/stable/cli/pip_install/#finding-packages; {{source}}",
    unknownExtraIndex:
      "PyPI's {{name}} {{newest}} is {{pypiBuild}} on Linux x86_64; {{url}} is named for CUDA {{cuda}}. Pin the version that index has, or make it this install's --index-url, so the build is certain. Sources: https://pip.pypa.io/en/stable/cli/pip_install/#finding-packages; {{source}}",
    noIndex: 'PyPI never serves local versions such as +{{tag}}; they live on the PyTorch index. {{addIndex}}',
    noLocalSource:
      'PyPI hosts no local versions (+{{label}}): Warehouse refuses their upload. Add the index or find-links page that publishes this build, or pin the version PyPI has. Source: https://packaging.python.org/en/latest/specifications/version-specifiers/#local-version-identifiers',
    noPygPage: `PyPI hosts no local versions (+{{label}}): Warehouse refuses their upload. PyG publishes +{{label}} wheels on {{page}} (one page per torch minor and CUDA): add --find-links {{page}}. Source: ${PYG_DOCS} Source: https://packaging.python.org/en/latest/specifications/version-specifiers/#local-version-identifiers`,
    library:
      'A library names no index for those who install it: their command must (pip install "<library>[<extra>]" --extra-index-url <index>). Say so in its install instructions, or depend on the public version (=={{version}}) and let the installer\'s index choose the build. Source: https://packaging.python.org/en/latest/specifications/version-specifiers/#local-version-identifiers',
    ignored:
      '{{reason}}. Source: https://pip.pypa.io/en/stable/reference/requirements-file-format/#per-requirement-options',
    unpublished:
      'PyTorch has one index per CUDA build it publishes (download.pytorch.org/whl/<tag>), and no torch release was built for {{tag}}. Name the index of a build it publishes, the nearest to CUDA {{cuda}} being {{nearest}}. Source: {{source}}',
    autoBackend:
      'Name the backend the image is for, e.g. --torch-backend=cu126 (or ENV UV_TORCH_BACKEND=cu126), matching the CUDA of the base image. Source: https://docs.astral.sh/uv/guides/integration/pytorch/#automatic-backend-selection',
    pipEnvForUv:
      'uv takes its indexes from its own settings ("uv does not read configuration files or environment variables that are specific to pip, like pip.conf or PIP_INDEX_URL"): set {{uvSetting}} for uv pip, or declare the index in pyproject.toml ([[tool.uv.index]] with [tool.uv.sources]) for uv sync and uv lock, whose uv.lock then records it. Sources: https://docs.astral.sh/uv/pip/compatibility/#configuration-files-and-environment-variables; https://docs.astral.sh/uv/reference/environment/',
    pypiApex: APEX_HELP,
    pypiApexPinned: APEX_HELP,
    pypiApexUnlessInstalled: APEX_HELP,
    notExplicit:
      "Add explicit = true to this [[tool.uv.index]] entry and route torch, torchvision and torchaudio to it in [tool.uv.sources], as uv's PyTorch guide does: https://docs.astral.sh/uv/guides/integration/pytorch/",
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
      checkUnservedLabels(unit, invocationsOf, kb, report);
    }
    checkPypiApex(units, kb, report);
    for (const file of new Set(units.flatMap((unit) => unit.files))) {
      // Each reads facts only one format writes: a Dockerfile's uv options and pip environment, a pyproject.toml's uv
      // indexes.
      checkIgnoredOptions(file, report);
      checkUnpublished(file, kb, report);
      checkAutoBackend(file, report);
      checkPipEnvForUv(file, report);
      checkExplicit(file, report);
    }
  },
});

/**
 * `uv pip install --torch-backend=auto` (or `ENV UV_TORCH_BACKEND=auto`) in a Dockerfile: uv "will query for the
 * installed CUDA driver version … If no such CUDA driver is found, uv will fall back to the CPU-only index"
 * (docs.astral.sh/uv/guides/integration/pytorch/#automatic-backend-selection), and a `docker build` RUN sees no
 * GPU unless the builder is given one. One finding per place it is set.
 */
function checkAutoBackend(file: ParsedFile, report: Reporter<MessageId>): void {
  const seen = new Set<number>();
  for (const option of file.options) {
    if (option.name !== 'torch-backend-auto' || seen.has(option.span.start)) continue;
    seen.add(option.span.start);
    report({
      messageId: 'autoBackend',
      data: {
        setting: file.source.text.slice(option.span.start, option.span.end).includes('UV_TORCH_BACKEND')
          ? 'UV_TORCH_BACKEND=auto'
          : '--torch-backend=auto',
      },
      file,
      span: option.span,
      severity: 'warning',
    });
  }
}

/**
 * `ENV PIP_INDEX_URL=…/whl/cu124` in a stage that installs with uv (lhakso/QAT_pipeline, fixtures/corpus-packaging/25):
 * uv has its own variables (UV_DEFAULT_INDEX, UV_INDEX, UV_INDEX_URL, UV_EXTRA_INDEX_URL) and reads no PIP_*
 * one, so the index does nothing there. Not reported when a pip command of the file uses the setting too.
 */
function checkPipEnvForUv(file: ParsedFile, report: Reporter<MessageId>): void {
  const usedByPip = new Set(
    file.indexes.filter((index) => file.contexts[index.context]?.tool === 'pip').map((index) => index.span.start),
  );
  const seen = new Set<number>();
  for (const option of file.options) {
    if (option.name !== 'pip-env-for-uv' || seen.has(option.span.start) || usedByPip.has(option.span.start)) continue;
    seen.add(option.span.start);
    const text = file.source.text.slice(option.span.start, option.span.end);
    const variable = /\b(PIP_[A-Z_]+)/.exec(text)?.[1] ?? 'this pip setting';
    const uv =
      variable === 'PIP_EXTRA_INDEX_URL'
        ? 'UV_INDEX'
        : variable === 'PIP_FIND_LINKS'
          ? 'UV_FIND_LINKS'
          : 'UV_DEFAULT_INDEX';
    report({
      messageId: 'pipEnvForUv',
      data: { setting: variable, uvSetting: uv },
      file,
      span: option.span,
      severity: 'warning',
    });
  }
}

/**
 * `apex` that only PyPI can serve (apexFromPypi): PyPI's apex is not NVIDIA's. Certain (an error) for a pin of one
 * of PyPI's releases (a lock's `0.9.10.dev0`), and in a stage whose
 * image ships no torch, or pytorch/pytorch's (which ships torch, torchvision and torchaudio only), where no NVIDIA
 * Apex can be installed already; elsewhere (a requirements file on its own, NGC's images, which ship NVIDIA Apex, an
 * image not known) pip keeps an NVIDIA Apex it finds, so a warning. One finding per requirement, the surest of the
 * units that install it.
 */
function checkPypiApex(units: readonly Unit[], kb: KnowledgeBase, report: Reporter<MessageId>): void {
  const found = new Map<PackageFact, { file: ParsedFile; image?: string }>();
  for (const unit of units) {
    for (const entry of unit.packages) {
      if (entry.pkg.name !== 'apex') continue;
      // The file's own word (a warning wherever it is installed), and what the stage that installs it makes certain:
      // the command that installs a file may add an index or a clone of NVIDIA Apex, which makes nothing less true
      // of the file.
      const image =
        unit.stage !== undefined && apexFromPypi(entry, unit.files)
          ? withoutApex(unit.root, unit.stage, kb)
          : undefined;
      if (!image && !apexFromPypi(entry, [entry.file], true)) continue;
      const seen = found.get(entry.pkg);
      if (!seen || (image && !seen.image)) found.set(entry.pkg, { file: entry.file, ...(image ? { image } : {}) });
    }
  }
  for (const [pkg, { file, image }] of found) {
    const subject = `${pkg.rawName}${pkg.specifier}`;
    // A pin of one of PyPI's releases (0.9.x development ones) replaces any apex installed: certain on every image.
    report(
      pkg.exact && /^0\.9(?:\.|$)/.test(pkg.exact)
        ? { messageId: 'pypiApexPinned', data: { subject }, file, span: pkg.span }
        : image
          ? { messageId: 'pypiApex', data: { subject, image }, file, span: pkg.span }
          : { messageId: 'pypiApexUnlessInstalled', data: { subject }, file, span: pkg.span, severity: 'warning' },
    );
  }
}

/** A stage's image, named, where it is known to hold no NVIDIA Apex: one that ships no torch, or pytorch/pytorch. */
function withoutApex(root: ParsedFile, stage: number, kb: KnowledgeBase): string | undefined {
  const image = baseImage(root, stage);
  if (!image || image.unresolved) return undefined;
  if (!imageShipsNoTorch(root, stage, kb) && (image.registry || image.repository !== 'pytorch/pytorch'))
    return undefined;
  return image.reference;
}

/**
 * An extra PyTorch index beside PyPI decides nothing when PyPI has a newer release than the index: pip takes the
 * newest allowed version from any index, so an unpinned `torch` gets PyPI's newest build. A pin the index has
 * (`torch==2.3.0` with `/whl/cu118`) is fine: `2.3.0+cu118` sorts above PyPI's `2.3.0`, so pip takes it.
 */
function checkExtraIndexes(unit: Unit, kb: KnowledgeBase, report: Reporter<MessageId>): void {
  // The pins an extra index may lose to PyPI, by install context, found once: each invocation reads its own contexts'
  // (a stage of thousands of `pip install` commands would otherwise read every pin once per command).
  // Not what the image (or an earlier command) has already and pip keeps: it installs nothing from any index.
  const torchPins = unit.packages.filter(({ pkg, kept }) => !pkg.exact && !kept && TORCH_FAMILY.has(pkg.name));
  const order = new Map(torchPins.map((entry, i) => [entry, i]));
  const pinsOf = groupBy(torchPins, ({ file, pkg }) => file.contexts[pkg.context]);
  // The install contexts that pin torch exactly, found once (asked for every command of the unit).
  const torchPinnedIn = new Set(
    unit.packages
      .filter(({ pkg }) => pkg.name === 'torch' && pkg.exact !== undefined)
      .map(({ file, pkg }) => file.contexts[pkg.context]),
  );
  for (const invocation of unit.invocations) {
    if (invocation.members.some((member) => member.context.hiddenIndexes)) continue;
    // uv's default strategy (first-index) takes a package from the first index that has it, and extra indexes come
    // before the default one: the PyTorch index wins for everything it hosts. Only unsafe-best-match is pip's rule
    // (docs.astral.sh/uv/concepts/indexes/#searching-across-multiple-indexes).
    if (firstIndexStrategy(invocation)) continue;
    // One index per URL, the first that names it: a URL given again says nothing new, so each pin is judged once per
    // URL, not once per line that repeats it.
    const urls = new Set<string>();
    const extras = invocation.indexes.filter(
      (index) =>
        (index.kind === 'extra-index-url' || index.kind === 'find-links') &&
        isPytorchIndex(index.url) &&
        !urls.has(index.url) &&
        urls.add(index.url),
    );
    const unknown = invocation.indexes.filter(
      (index) => unknownCudaIndex(index) && !urls.has(index.url) && urls.add(index.url),
    );
    if (extras.length + unknown.length === 0 || extras.some((index) => servedVariant(index.url) === 'all')) continue;
    const contexts = new Set(invocation.members.map((member) => member.context));
    // torchvision and torchaudio pin the torch they belong to exactly: beside `torch==2.9.1` pip takes the companion
    // release of 2.9.1 (torchvision 0.24.1), whose build the index has where it has torch's (LocalAI's sglang file).
    const torchPinned = [...contexts].some((context) => torchPinnedIn.has(context));
    const pins = [...contexts]
      .flatMap((context) => pinsOf.get(context) ?? [])
      .filter(({ pkg }) => !torchPinned || pkg.name === 'torch')
      .sort((a, b) => order.get(a)! - order.get(b)!);
    const pythons = unit.pythonsRun?.()?.versions;
    // A file on its own: no Dockerfile stage, no project tool's command installs it.
    const standalone = unit.stage === undefined && formatOf(unit.root.kind).units === 'file';
    const ownerOf = (index: IndexFact): ParsedFile =>
      invocation.members.find((member) => member.context.indexes.includes(index))?.file ?? unit.root;
    for (const index of unknown) reportUnknownExtra(index, ownerOf(index), pins, kb, report);
    for (const { file, pkg } of pins) {
      for (const index of extras) {
        const variant = servedVariant(index.url);
        if (!variant || variant === 'all') continue;
        const wins = pypiWins(pkg, variant.tag, kb, pythons);
        if (!wins) continue;
        const owner = ownerOf(index);
        const onIndex = wins.newestOnIndex
          ? `the newest ${pkg.rawName} it has as ${variant.tag} is ${wins.newestOnIndex}`
          : `it has no ${pkg.rawName} that ${pkg.specifier || 'the requirement'} allows`;
        report({
          messageId: 'extraIndex',
          data: {
            subject: `${pkg.rawName}${pkg.specifier}`,
            name: pkg.rawName,
            newest: wins.newest,
            tag: variant.tag,
            url: index.url,
            onIndex,
            pypiBuild: wins.release.pypiDefault ? `the ${wins.release.pypiDefault} build` : 'its default build',
            pinned: wins.newestOnIndex ?? 'X.Y.Z',
            source: cite(wins.release),
            // A file installed by no command the check reads (a script's `uv pip install -r`, LocalAI's): which
            // installer runs it is not known, and uv's default strategy takes the extra index's build.
            withPip: standalone ? ' when pip installs it' : '',
            uvNote: standalone
              ? " uv's default index strategy (first-index) would take the extra index's build instead (docs.astral.sh/uv/concepts/indexes/#searching-across-multiple-indexes)."
              : '',
          },
          file,
          span: pkg.span,
          severity: 'warning',
          unverified: isUnverified(wins.release),
          related: [{ file: owner, span: index.span, message: `the extra index serves ${variant.tag} builds` }],
        });
      }
    }
  }
}

/**
 * An extra index named for a CUDA build that is not PyTorch's (Jetson AI Lab's `jp6/cu129`, a mirror): pip takes an
 * unpinned torch from whichever index has the newest version, and which versions this one has is not known, so
 * PyPI's newest build may be installed instead of the index's. Not certain either way: a warning per pin.
 */
function reportUnknownExtra(
  index: IndexFact,
  owner: ParsedFile,
  pins: readonly { readonly file: ParsedFile; readonly pkg: PackageFact }[],
  kb: KnowledgeBase,
  report: Reporter<MessageId>,
): void {
  for (const { file, pkg } of pins) {
    if (pkg.localLabel || pkg.url) continue;
    const pypi = newestOnPypi(pkg, kb);
    if (!pypi) continue;
    report({
      messageId: 'unknownExtraIndex',
      data: {
        subject: `${pkg.rawName}${pkg.specifier}`,
        name: pkg.rawName,
        newest: pypi.version,
        url: index.url,
        cuda: cudaFromUrl(index.url)!.cuda,
        pypiBuild: pypi.release.pypiDefault ? `the ${pypi.release.pypiDefault} build` : 'its default build',
        source: cite(pypi.release),
      },
      file,
      span: pkg.span,
      severity: 'warning',
      unverified: isUnverified(pypi.release),
      related: [{ file: owner, span: index.span, message: 'the extra index, whose versions are not known here' }],
    });
  }
}

function serves(index: IndexFact, tag: string): boolean {
  // A PyG (or mmcv, detectron2) wheel page serves its project's wheels only, never torch itself.
  if (torchPage(index.url)) return false;
  const variant = servedVariant(index.url);
  if (variant === 'all') return true; // torch_stable.html lists every variant
  if (variant) return variant.tag === tag;
  const found = cudaFromUrl(index.url);
  if (found) return found.precision === 'minor' && tagFromCuda(found.cuda) === tag;
  // PyPI named explicitly is PyPI: it holds no local versions.
  if (isPypiIndex(index.url)) return false;
  // A private mirror or a flat find-links page may serve anything: do not claim it does not.
  return !isPytorchIndex(index.url) && index.kind !== 'conda-channel';
}

/**
 * Whether one of the installs of a file serves a build tag (or reads indexes the gate cannot see), asked once per
 * file and tag: every stage that installs one requirements file asks it of the same installs.
 */
function anyServes(invocations: readonly Invocation[], tag: string): boolean {
  let answers = servedBy.get(invocations);
  if (!answers) servedBy.set(invocations, (answers = new Map()));
  let answer = answers.get(tag);
  if (answer === undefined) {
    answer = invocations.some(
      (invocation) =>
        invocation.members.some((member) => member.context.hiddenIndexes) ||
        invocation.indexes.some((index) => serves(index, tag)),
    );
    answers.set(tag, answer);
  }
  return answer;
}

const servedBy = new WeakMap<readonly Invocation[], Map<string, boolean>>();

function checkUnservedLabels(
  unit: Unit,
  invocationsOf: ReadonlyMap<InstallContext, Invocation[]>,
  kb: KnowledgeBase,
  report: Reporter<MessageId>,
): void {
  for (const { file, pkg } of unit.packages) {
    if (pkg.ecosystem !== 'pip' || pkg.url || !pkg.localLabel || !pkg.exact) continue;
    // A library's pyproject.toml checked on its own: the index is its installer's to name, not the file's.
    if (file.library && unit.root === file && unit.stage === undefined) {
      report({
        messageId: 'library',
        data: { name: pkg.rawName, version: publicVersion(pkg.exact), label: pkg.localLabel },
        file,
        span: pkg.span,
        severity: 'warning',
      });
      continue;
    }
    const installs = (file.contexts[pkg.context] && invocationsOf.get(file.contexts[pkg.context]!)) ?? [];
    // Cog takes a torch pin's label off and adds the index of the build it picks itself.
    if (TORCH_FAMILY.has(pkg.name) && installs.some((invocation) => installerOf(invocation).upTo)) continue;
    if (!TORCH_FAMILY.has(pkg.name)) {
      checkOtherLocalLabel(
        file,
        pkg,
        (file.contexts[pkg.context] && invocationsOf.get(file.contexts[pkg.context]!)) ?? [],
        report,
      );
      continue;
    }
    // `+cpu` builds live on PyTorch's CPU index as `+cuXYZ` ones on theirs: PyPI has neither.
    const cpu = pkg.localLabel === 'cpu';
    const cuda = cpu ? undefined : cudaFromLabel(pkg.localLabel);
    if (!cpu && (!cuda || cuda.precision !== 'minor')) continue;
    const tag = cpu ? 'cpu' : tagFromCuda(cuda!.cuda);
    const context = file.contexts[pkg.context];
    const invocations = (context && invocationsOf.get(context)) ?? [];
    if (anyServes(invocations, tag)) continue;
    // A nightly (`2.4.0.dev20240328+cpu`) is on the nightly index, and only for weeks: no fix adds it.
    const nightly = /\.dev\d/.test(pkg.exact);
    const url = `https://download.pytorch.org/whl/${nightly ? 'nightly/' : ''}${tag}`;
    const insertAt = file.source.text.charCodeAt(0) === 0xfeff ? 1 : 0;
    // Only for a build the index has: torch 1.8.1 has no cu92 build, so adding the cu92 index installs nothing
    // (wheel-missing says so), and a release the knowledge base does not record cannot be checked. The CPU index
    // has every release.
    const release = nightly ? undefined : releaseFor(kb, pkg, publicVersion(pkg.exact));
    const built = release !== undefined && (cpu || kb.torchBuilds(release).has(tag));
    // A CPU build where the unit runs CUDA is cpu-wheel's mistake: making it installable is no fix of it.
    const fix: Fix | undefined =
      formatOf(file.kind).optionLines && built && !(cpu && unit.target)
        ? {
            title: `Add ${url} as an index`,
            safety: 'safe',
            edits: [{ path: file.path, range: [insertAt, insertAt], text: `--extra-index-url ${url}\n` }],
          }
        : undefined;
    report({
      messageId: 'noIndex',
      data: {
        name: pkg.rawName,
        version: publicVersion(pkg.exact),
        tag,
        addIndex:
          release && !built
            ? `The builds of torch ${release.version} are ${[...kb.torchBuilds(release)].join(', ')} (${cite(release)}), none for ${tag}: pin one of those, with its index.`
            : (ADD_INDEX[file.kind] ?? ADD_INDEX_TO_COMMAND)(url, pkg, file),
      },
      file,
      span: pkg.span,
      severity: 'error',
      ...(fix ? { fix } : {}),
    });
  }
}

/** How each format adds the PyTorch index for one package; the others add it to the install command. */
const ADD_INDEX: Partial<Record<FileKind, (url: string, pkg: PackageFact, file: ParsedFile) => string>> = {
  requirements: (url) => `Add --extra-index-url ${url} to this file.`,
  pixi: (url, pkg) =>
    `Give ${pkg.rawName} its index in [pypi-dependencies]: ${pkg.rawName} = { version = "==${pkg.exact}", index = "${url}" } (pixi's PyTorch guide: https://pixi.sh/latest/python/pytorch/).`,
  pyproject: (url, pkg, file) =>
    // A Poetry project routes a package with its own tables.
    file.source.text.includes('[tool.poetry')
      ? `Add a [[tool.poetry.source]] with url = "${url}" and priority = "explicit", and name it for ${pkg.rawName} in [tool.poetry.dependencies] (${pkg.rawName} = { source = "<its name>" }; Poetry's docs: https://python-poetry.org/docs/repositories/).`
      : `Add a [[tool.uv.index]] with url = "${url}" and explicit = true, and route ${pkg.rawName} to it in [tool.uv.sources] (uv's PyTorch guide: https://docs.astral.sh/uv/guides/integration/pytorch/).`,
};
const ADD_INDEX_TO_COMMAND = (url: string): string =>
  `Add --index-url ${url} (or --extra-index-url) to the install command.`;

const PYG_LABEL = /^pt(\d)(\d{1,2})(cu\d{2,3}|cpu)$/;

/**
 * A local version label on another package (`torch-scatter==2.1.2+pt24cu121`, `jaxlib==0.4.23+cuda12.cudnn89`):
 * PyPI refuses local versions ("Can't use PEP 440 local versions", Warehouse's upload check), so only another index
 * or a find-links page can serve one. With PyPI alone pip cannot install it. A PyG label names its page exactly:
 * `data.pyg.org/whl/torch-X.Y.0+<tag>.html` serves `+ptXY<tag>` wheels (PyG's installation guide), so the fix adds it.
 * A page of another torch or CUDA is companion-mismatch's and cuda-mismatch's to report; here it counts as a source.
 */
function checkOtherLocalLabel(
  file: ParsedFile,
  pkg: PackageFact,
  invocations: readonly Invocation[],
  report: Reporter<MessageId>,
): void {
  if (invocations.length === 0) return;
  // PyG's wheels are on its own pages: the PyTorch index serves none of them.
  const pyg = PYG_LABEL.exec(pkg.localLabel!);
  const sourced = invocations.some(
    (invocation) =>
      invocation.members.some((member) => member.context.hiddenIndexes) ||
      invocation.indexes.some(
        (index) =>
          index.kind !== 'conda-channel' &&
          index.kind !== 'no-index' &&
          !isPypiIndex(index.url) &&
          !(pyg && isPytorchIndex(index.url)),
      ),
  );
  if (sourced) return;
  const page = pyg ? `https://data.pyg.org/whl/torch-${pyg[1]}.${pyg[2]}.0+${pyg[3]}.html` : undefined;
  const insertAt = file.source.text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const fix: Fix | undefined =
    page && formatOf(file.kind).optionLines
      ? {
          title: `Add ${page} as a find-links page`,
          safety: 'safe',
          edits: [{ path: file.path, range: [insertAt, insertAt], text: `--find-links ${page}\n` }],
        }
      : undefined;
  report({
    messageId: pyg ? 'noPygPage' : 'noLocalSource',
    data: {
      name: pkg.rawName,
      version: publicVersion(pkg.exact!),
      label: pkg.localLabel!,
      torch: pyg ? `${pyg[1]}.${pyg[2]}` : '',
      tag: pyg?.[3] ?? '',
      page: page ?? '',
    },
    file,
    span: pkg.span,
    severity: 'error',
    ...(fix ? { fix } : {}),
  });
}

/**
 * A PyTorch index in [[tool.uv.index]] without `explicit = true`: uv's default strategy takes each package from the
 * first index that has it, and the PyTorch index also hosts numpy, pillow, jinja2 and more, often older releases
 * (docs.astral.sh/uv/guides/integration/pytorch: "explicit = true ... ensures that the index is only used for
 * torch, torchvision, or other PyTorch-related packages"). No edit: once explicit, torch comes from the index only
 * when [tool.uv.sources] routes it there, which the fix cannot decide alone.
 */
function checkExplicit(file: ParsedFile, report: Reporter<MessageId>): void {
  const seen = new Set<number>();
  // Under `index-strategy = "unsafe-best-match"` uv compares every index's versions, as pip does (docs.astral.sh/uv/
  // reference/settings/#index-strategy): it takes no package from an index only because the index has it.
  const bestMatch = file.kind === 'pyproject' ? optionContexts(file, 'unsafe-best-match') : undefined;
  for (const index of file.indexes) {
    if (
      !index.uvIndex ||
      index.uvIndex.explicit ||
      index.kind !== 'extra-index-url' ||
      !isPytorchIndex(index.url) ||
      bestMatch?.has(index.context) ||
      seen.has(index.span.start)
    )
      continue;
    seen.add(index.span.start);
    report({
      messageId: 'notExplicit',
      data: { name: index.uvIndex.name, url: index.url },
      file,
      span: index.span,
      severity: 'warning',
    });
  }
}

/**
 * A PyTorch index named for a CUDA build no torch release has (`--index-url https://download.pytorch.org/whl/cu131`:
 * PyTorch went from cu130 to cu132): the folder does not exist, so an install that reads only it finds nothing (an
 * error; one that reads it beside PyPI takes PyPI's builds, which checkExtraIndexes says). Judged for the CUDA
 * versions from the oldest of the first release whose builds the knowledge base lists completely to the newest: an
 * index for an older CUDA (cu100) may be of a release before them, and one for a newer CUDA of a release after its
 * snapshot. Stable indexes only: nightly and test builds come and go.
 */
function checkUnpublished(file: ParsedFile, kb: KnowledgeBase, report: Reporter<MessageId>): void {
  for (const index of file.indexes) {
    // Beside PyPI it installs PyPI's builds, which checkExtraIndexes says of each requirement it serves.
    if (index.kind !== 'index-url' || index.ignoredReason || index.addedBy) continue;
    const served = stableCudaIndex(index.url);
    if (!served || kb.publishesTorchBuild(served.tag)) continue;
    const published = kb.publishedCudaBuilds();
    const { cuda } = served;
    const from = kb.completeBuildsFrom();
    if (!from || compareDotted(cuda, from) < 0 || compareDotted(cuda, published.at(-1)!.cuda) > 0) continue;
    const major = cudaMajor(cuda);
    const sameMajor = published.filter((entry) => cudaMajor(entry.cuda) === major);
    const below = published.filter((entry) => compareDotted(entry.cuda, cuda) < 0).at(-1);
    const above = published.find((entry) => compareDotted(entry.cuda, cuda) > 0);
    const nearest = [below, above]
      .filter((entry) => entry !== undefined)
      .map((entry) => `${entry.tag}: ${index.url.replace(served.tag, entry.tag)}`)
      .join(', or ');
    report({
      messageId: 'unpublished',
      data: {
        url: index.url,
        tag: served.tag,
        cuda,
        major: String(major),
        published: sameMajor.length > 0 ? sameMajor.map((entry) => entry.tag).join(', ') : 'none',
        nearest,
        source: cite(kb.pytorchIndex()),
      },
      file,
      span: index.urlSpan,
    });
  }
}

function checkIgnoredOptions(file: ParsedFile, report: Reporter<MessageId>): void {
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
      severity: 'warning',
      data: { option: optionText, reason: index.ignoredReason ?? '' },
      file,
      span: index.span,
      fix,
    });
  }
}
