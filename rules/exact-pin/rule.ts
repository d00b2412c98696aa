import { compactSpec } from '../../src/analysis/claims.js';
import { apexFromPypi, CONDA_MINOR_PINS, isCudaRelevant, projectName } from '../../src/analysis/packages.js';
import type { Unit } from '../../src/analysis/units.js';
import type { PackageFact, ParsedFile } from '../../src/parsers/facts.js';
import type { Fix } from '../../src/finding.js';
import type { KnowledgeBase } from '../../src/knowledge/index.js';
import { formatOf, lockCommands } from '../../src/parsers/formats.js';
import { lockCompanions } from '../../src/parsers/index.js';
import { defineRule } from '../../src/rule.js';
import { cudaMajorMinor, publicVersion } from '../../src/knowledge/versions.js';

/** Every message's help: why the version decides the CUDA build, and how to pin it (`lock`: commit the lock or pin). */
const HELP =
  'The CUDA build of {{name}} changes with its version, so an unpinned install can silently pull a build for another CUDA. {{how}} ({{pin}}){{implied}}.';

export default defineRule({
  id: 'exact-pin',
  description: 'CUDA-relevant Python and conda packages are pinned to one exact version',
  defaultSeverity: 'error',
  fix: 'safe',
  about: 'written',
  messages: {
    unpinned: '{{name}} is not pinned: any version may be installed',
    range: '{{name}}{{spec}} is a range, not an exact pin',
    wildcard: '{{name}}{{spec}} is a wildcard, not an exact pin',
    prefix: '{{name}}{{spec}} matches any {{version}}.* release, not one exact version',
  },
  helps: {
    unpinned: HELP,
    range: HELP,
    wildcard: HELP,
    prefix: HELP,
  },

  check({ units, files, baseline, kb, report }) {
    if (baseline.pinning.python !== 'exact') return;
    const extra = extraNames(baseline);
    // pyproject.toml and pixi.toml declare ranges by design: a lock file beside them (uv.lock, poetry.lock,
    // pixi.lock, read as exact versions) is the pin. Without one, their ranges are what is installed — unless the
    // project is a library others install (ParsedFile.library): its ranges are its users' to resolve.
    const paths = new Set(files.map((file) => file.path));
    const locked = (file: ParsedFile): boolean => lockCompanions(file.path, file.kind).some((lock) => paths.has(lock));
    for (const unit of units) {
      for (const entry of unit.packages) {
        const { file, pkg } = entry;
        const manifest = (formatOf(file.kind).companions ?? []).length > 0;
        if (manifest && (locked(file) || file.library)) continue;
        if (!isCudaRelevant(pkg, extra) || isPinned(pkg)) continue;
        // Pinning PyPI's apex pins an unrelated package: index-url says what to install instead, wherever the file
        // itself names no other source (its own warning stands whatever installs the file).
        if (pkg.name === 'apex' && apexFromPypi(entry, [file], true)) continue;
        const implied = impliedVersion(unit, pkg, kb);
        const fix = implied ? pinFix(file, pkg, implied.version, implied.why) : undefined;
        const prefix =
          pkg.ecosystem === 'conda' &&
          pkg.clauses.length === 1 &&
          pkg.clauses[0]!.operator === '=' &&
          !/\*/.test(pkg.specifier)
            ? pkg.clauses[0]!.version
            : undefined;
        const messageId =
          pkg.specifier.trim() === ''
            ? 'unpinned'
            : prefix
              ? 'prefix'
              : /\*/.test(pkg.specifier)
                ? 'wildcard'
                : 'range';
        report({
          messageId,
          data: {
            name: pkg.rawName,
            spec: compactSpec(pkg.specifier),
            version: prefix ?? '',
            how: manifest
              ? `No lock file beside ${file.path} pins it: commit the lock (${orList(lockCommands(file.kind))}) and install from it, or pin it here`
              : 'Pin it',
            pin: pkg.ecosystem === 'conda' ? `${pkg.rawName}=X.Y.Z` : `${pkg.rawName}==X.Y.Z`,
            implied: implied ? `; ${implied.why}` : '',
          },
          file,
          span: pkg.span,
          ...(fix ? { fix } : {}),
        });
      }
    }
  },
});

const extraByBaseline = new WeakMap<object, ReadonlySet<string>>();

/** Names the baseline adds to the CUDA-relevant list (one set per baseline, so answers can be cached). */
function extraNames(baseline: {
  readonly packages: Readonly<Record<string, readonly string[]>>;
  readonly pinning: { readonly packages: readonly string[] };
}): ReadonlySet<string> {
  let names = extraByBaseline.get(baseline);
  if (!names)
    extraByBaseline.set(baseline, (names = new Set([...Object.keys(baseline.packages), ...baseline.pinning.packages])));
  return names;
}

function isPinned(pkg: PackageFact): boolean {
  // A VCS install is pinned by its ref (git+https://…/xformers.git@v0.0.28); without one it takes the default branch.
  if (pkg.url)
    return (
      !/^(?:git|hg|svn|bzr)\+/i.test(pkg.url) ||
      /@[^/@#?]+(?:[#?].*)?$/.test(pkg.url.replace(/^[a-z+]+:\/\/[^/]*@/i, ''))
    );
  if (!pkg.exact) return false;
  if (pkg.ecosystem !== 'conda') return true;
  if (CONDA_MINOR_PINS.has(pkg.name)) return true;
  return pkg.exact.split('.').length >= 3 || pkg.build !== undefined;
}

/** The unit's first exactly pinned torch, looked up once per unit rather than once per unpinned package. */
const pinnedTorch = new WeakMap<Unit, PackageFact | null>();

function pinnedTorchOf(unit: Unit): PackageFact | undefined {
  let torch = pinnedTorch.get(unit);
  if (torch === undefined)
    pinnedTorch.set(
      unit,
      (torch = unit.packages.find((other) => projectName(other.pkg) === 'torch' && other.pkg.exact)?.pkg ?? null),
    );
  return torch ?? undefined;
}

/**
 * A version the rest of the unit implies: a companion of the pinned torch, or the unit's CUDA for conda metapackages.
 */
function impliedVersion(unit: Unit, pkg: PackageFact, kb: KnowledgeBase): { version: string; why: string } | undefined {
  const name = projectName(pkg);
  const torch = name === 'torchvision' || name === 'torchaudio' ? pinnedTorchOf(unit) : undefined;
  if (torch && (name === 'torchvision' || name === 'torchaudio')) {
    const version = kb.companions(torch.exact!)?.[name][0];
    if (version)
      return { version, why: `${name} ${version} is the release that belongs to torch ${publicVersion(torch.exact!)}` };
  }
  const target = unit.target;
  if (target && target.precision === 'minor' && (pkg.name === 'pytorch-cuda' || pkg.name === 'cuda-version')) {
    const minor = cudaMajorMinor(target.cuda);
    if (minor && (pkg.name !== 'pytorch-cuda' || kb.condaPytorchCudaVersions().includes(minor)))
      return { version: minor, why: `the target CUDA is ${minor} (${target.subject})` };
  }
  return undefined;
}

function pinFix(file: ParsedFile, pkg: PackageFact, version: string, why: string): Fix | undefined {
  const span = pkg.specifierSpan;
  const current = file.source.text.slice(span.start, span.end);
  if (current !== pkg.specifier) return undefined;
  const label = pkg.ecosystem === 'pip' && pkg.localLabel ? `+${pkg.localLabel}` : '';
  const text = pkg.ecosystem === 'conda' ? `=${version}` : `==${version}${label}`;
  return {
    title: `Pin ${pkg.rawName} to ${version} (${why})`,
    safety: 'safe',
    edits: [{ path: file.path, range: [span.start, span.end], text }],
  };
}

/** `a`, `a or b`, `a, b or c`. */
function orList(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)!}`;
}
