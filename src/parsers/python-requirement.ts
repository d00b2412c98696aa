import { packageFact, type PackageFact, type VersionClause } from './facts.js';
import type { Span } from './source.js';
import type { Mapped } from './mapped.js';

/**
 * The packages PyTorch publishes as `+cuXYZ` builds on its own index (download.pytorch.org/whl/<tag>): torch,
 * torchvision, torchaudio.
 */
export const TORCH_FAMILY: ReadonlySet<string> = new Set(['torch', 'torchvision', 'torchaudio']);

/**
 * Packages whose build carries CUDA code compiled against a torch and a CUDA: installed from a version-control
 * address (`git+https://github.com/vllm-project/vllm.git`), they are built from that repository's source when the
 * install runs, and which torch and CUDA they pin is only known then.
 */
export const BUILT_AGAINST_CUDA: ReadonlySet<string> = new Set([
  ...TORCH_FAMILY,
  'vllm',
  'sglang',
  'xformers',
  'flash-attn',
  'flashinfer-python',
  'triton',
  'deepspeed',
  'apex',
  'bitsandbytes',
  'mamba-ssm',
  'causal-conv1d',
  'transformer-engine',
  'torch-tensorrt',
  'tensorrt-llm',
]);

/**
 * Why what a requirement installs is not known, where it names a package built against CUDA by a version-control
 * address (pip's `git+`, `hg+`, `svn+`, `bzr+` URLs, `@<ref>` naming a revision:
 * pip.pypa.io/en/stable/topics/vcs-support/); else undefined. Its source is built when the install runs, against the
 * torch its requirements at that revision pin, which are not read here: a commit fixes them, a branch or a tag names
 * them (a branch moves; `@sangstar/tensorizer-update` is one), no revision takes the default branch's head.
 */
export function vcsBuild(fact: { readonly name: string; readonly url?: string }): string | undefined {
  if (!fact.url || !/^(?:git|hg|svn|bzr)\+/i.test(fact.url) || !BUILT_AGAINST_CUDA.has(fact.name)) return undefined;
  const ref = /^[a-z+]+:\/\/(?:[^@/#]*@)?[^/#]+\/[^@#]*?@([^#]+?)(?:#|$)/i.exec(fact.url)?.[1];
  if (ref === undefined)
    return `${fact.name} is built from the head of that repository's default branch when the install runs: which torch and CUDA it pins is only known then (pin a release, or a commit whose requirements you check)`;
  const what = /^[0-9a-f]{40}$/i.test(ref) ? `commit ${ref.slice(0, 12)}` : `the revision ${ref} (a branch or a tag)`;
  return `${fact.name} is built from ${what} of that repository when the install runs, against the torch and CUDA its requirements there pin, which are not read here (check them, or install a release from an index)`;
}

/**
 * Repositories whose project is named otherwise than the repository (the name their setup.py gives): a VCS URL of
 * one without `#egg=` installs that project.
 */
const REPOSITORY_PROJECTS: ReadonlyMap<string, string> = new Map([
  ['state-spaces/mamba', 'mamba_ssm'], // setup.py: PACKAGE_NAME = "mamba_ssm"
  ['dao-ailab/flash-attention', 'flash_attn'], // setup.py: PACKAGE_NAME = "flash_attn"
  ['nvidia/transformerengine', 'transformer_engine'], // setup.py: name="transformer_engine"
  ['pytorch/vision', 'torchvision'], // setup.py: package_name = "torchvision"
  ['pytorch/audio', 'torchaudio'], // setup.py: package_name = "torchaudio"
  ['pytorch/pytorch', 'torch'], // setup.py: package_name = "torch"
  ['pytorch/tensorrt', 'torch_tensorrt'], // setup.py: name="torch_tensorrt"
  ['nvidia/tensorrt-llm', 'tensorrt_llm'], // setup.py: name="tensorrt_llm"
]);

/** The project a VCS URL without `#egg=` installs: a known repository's (its root's), else the repository's name. */
function vcsProject(url: string): string | undefined {
  const repository = /^[a-z+]+:\/\/(?:[^@/]*@)?github\.com[/:]([^/]+\/[^/@#?]+?)(?:\.git)?(?:[@#?]|\/?$)/i.exec(
    url,
  )?.[1];
  // A subdirectory is another project of the repository (flash-attention's `hopper` builds flash_attn_3).
  const known =
    repository && !/[#&]subdirectory=/.test(url) ? REPOSITORY_PROJECTS.get(repository.toLowerCase()) : undefined;
  return known ?? /\/([A-Za-z0-9._-]+?)(?:\.git)?(?:@[^/#?]*)?(?:[#?].*)?$/.exec(url)?.[1];
}

/** PEP 503 normalisation: `Torch_Vision` and `torch.vision` both become `torch-vision`. */
export function normalizePythonName(name: string): string {
  // Most names are written normalised already; the test is cheaper than lower-casing and replacing.
  return NORMALISED.test(name) ? name : name.toLowerCase().replace(/[-_.]+/g, '-');
}

const NORMALISED = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export type RequirementResult =
  | { readonly ok: true; readonly fact: PackageFact }
  | { readonly ok: false; readonly message: string; readonly span: Span };

/**
 * The length of the name at the start of `text` (`/^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?/`, without
 * building a match): letters and digits, with `.`, `_` and `-` allowed inside. 0 when there is none.
 */
function nameAt(text: string): number {
  if (!isAlphanumeric(text.charCodeAt(0))) return 0;
  let length = 1;
  for (let i = 1; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (isAlphanumeric(code)) length = i + 1;
    else if (code !== 46 && code !== 95 && code !== 45) break;
  }
  return length;
}

function isAlphanumeric(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

/** The version operator at a position (`===`, `==`, `!=`, `~=`, `<=`, `>=`, `<`, `>`, longest first), if any. */
function operatorAt(text: string, i: number): string | undefined {
  const first = text[i];
  const equals = text[i + 1] === '=';
  switch (first) {
    case '=':
      return equals ? (text[i + 2] === '=' ? '===' : '==') : undefined;
    case '!':
      return equals ? '!=' : undefined;
    case '~':
      return equals ? '~=' : undefined;
    case '<':
      return equals ? '<=' : '<';
    case '>':
      return equals ? '>=' : '>';
    default:
      return undefined;
  }
}

/** The index after the spaces and tabs at `i`. */
function spacesEnd(text: string, i: number): number {
  while (i < text.length && (text[i] === ' ' || text[i] === '\t')) i++;
  return i;
}

/** `[A-Za-z0-9._*+!-]`: the characters of a version in a clause. */
function isVersionChar(code: number): boolean {
  return (
    (code >= 48 && code <= 57) ||
    (code >= 65 && code <= 90) ||
    (code >= 97 && code <= 122) ||
    code === 46 ||
    code === 95 ||
    code === 42 ||
    code === 43 ||
    code === 33 ||
    code === 45
  );
}
const WHEEL = /\.whl/i;
const URL_SCHEME = /^(?:[a-z][a-z0-9+.-]*:\/\/|git\+|hg\+|svn\+|bzr\+|file:)/i;

/**
 * `/\.whl(?:[#?].*)?$/i` without its backtracking: the text ends in `.whl`, or in `.whl#…` / `.whl?…` whose
 * tail has no line break. (The regular expression ran `.*` to the next line break for every `.whl#`, which
 * made a line of thousands of them quadratic.)
 */
export function endsInWheel(text: string): boolean {
  if (/\.whl$/i.test(text)) return true;
  const lastBreak = Math.max(
    text.lastIndexOf('\n'),
    text.lastIndexOf('\r'),
    text.lastIndexOf('\u2028'),
    text.lastIndexOf('\u2029'),
  );
  const wheel = /\.whl[#?]/gi;
  wheel.lastIndex = lastBreak + 1;
  return wheel.test(text);
}

/** Archives whose file name carries the version: a local file of one is a requirement, not a project. */
const ARCHIVE = /\.(?:whl|tar\.gz|tgz|tar\.bz2|tar\.xz|zip)$/i;

/**
 * A requirement that names a local project or directory, which pip installs with whatever its own metadata asks
 * for: `.`, `.[api]`, `./pkg`, `../lib[gpu]`, `/src/app`, `~/src`, `src/pkg`, `C:\pkg`, `file:///src/app`.
 * A path to a wheel or an archive is not one (its name carries the version).
 */
export function isLocalProject(text: string): boolean {
  // Most lines are `name==1.2.3`: a local project starts with `.` or names a path or a `file:` URL.
  if (!LOCAL_HINT.test(text)) return false;
  const head = text
    .split(';')[0]!
    .trim()
    .replace(/\[[^\]]*\]$/, '');
  if (head === '' || ARCHIVE.test(head.split(/[#?]/)[0]!)) return false;
  if (
    /^(?:\.{1,2}|~)(?:[/\\]|$)/.test(head) ||
    head.startsWith('/') ||
    /^[A-Za-z]:[\\/]/.test(head) ||
    /^file:/i.test(head)
  )
    return true;
  return /[/\\]/.test(head) && !/[<>=!~@:]/.test(head);
}

/**
 * A source archive named by its path (`dist/text_generation_server-2.0.tar.gz`, `pkg-1.0.zip`): pip installs any
 * argument that names an archive file as that file (pip's `_get_url_from_path`, `is_archive_file`), unless an `@`
 * makes it a `name @ url` requirement. (Wheels are read by the wheel test.)
 */
function isArchivePath(text: string): boolean {
  // An archive's name has one of ARCHIVE's extensions somewhere: most requirements (`numpy==1.26.4`) have none.
  return ARCHIVE_HINT.test(text) && !text.includes('@') && ARCHIVE.test(withoutExtras(text.split(';')[0]!.trim()));
}

const ARCHIVE_HINT = /\.(?:whl|tar|tgz|zip)/i;

/** A local path and the extras pip strips from it (`./pkg-1.0-py3-none-any.whl[all]`; pip's `_strip_extras`). */
function pathExtras(path: string): { path: string; extras?: string } {
  const match = path.endsWith(']') ? /\[([^\]]*)\]$/.exec(path) : null;
  return match ? { path: path.slice(0, match.index), extras: match[1]! } : { path };
}

/** A local path without the extras pip strips from it. */
function withoutExtras(path: string): string {
  return pathExtras(path).path;
}

/** Characters without which a requirement cannot be a local path (a leading `.` is checked by the pattern too). */
const LOCAL_HINT = /^\s*[.~]|[/\\:]/;

/**
 * Parse one PEP 508 requirement (`torch[extra]==2.3.0+cu121 ; python_version < "3.12"`), a `name @ url`
 * requirement, or a bare URL/path to a wheel. `m` holds the requirement only (options and comments removed).
 */
export function parsePythonRequirement(m: Mapped): RequirementResult {
  const text = m.text;
  const whole = m.site(0, text.length);
  // Every URL scheme form has a ":" or a "+", and a wheel a ".": most requirements need neither test.
  if (
    ((text.includes(':') || text.includes('+')) && URL_SCHEME.test(text)) ||
    (WHEEL.test(text) && endsInWheel(withoutExtras(text.split(';')[0]!.trim()))) ||
    isArchivePath(text)
  )
    return parseBareUrl(m, NAMED_URL.exec(text) ?? undefined);

  const nameLength = nameAt(text);
  if (nameLength === 0)
    return { ok: false, message: `expected a package name, found "${truncate(text)}"`, span: whole };
  const rawName = text.slice(0, nameLength);
  // `i = spacesEnd(text, i)` skips blanks (a closure over `i` would put it, and every use of it, on the heap).
  let i = spacesEnd(text, nameLength);

  const extras: string[] = [];
  if (text[i] === '[') {
    const close = text.indexOf(']', i);
    if (close < 0) return { ok: false, message: 'unclosed "[" in extras', span: m.site(i, text.length) };
    for (const extra of text.slice(i + 1, close).split(',')) if (extra.trim()) extras.push(extra.trim());
    i = close + 1;
    i = spacesEnd(text, i);
  }
  const afterName = i;

  let url: string | undefined;
  let urlSpan: Span | undefined;
  const clauses: VersionClause[] = [];
  let specStart: number;
  let specEnd = i;

  if (text[i] === '@') {
    i++;
    i = spacesEnd(text, i);
    const start = i;
    while (i < text.length && !/\s/.test(text[i]!)) i++;
    url = text.slice(start, i);
    urlSpan = m.origin(start, i) ?? m.site(start, i);
    i = spacesEnd(text, i);
    specStart = specEnd = afterName;
  } else {
    const paren = text[i] === '(';
    if (paren) i++;
    specStart = i;
    while (i < text.length) {
      i = spacesEnd(text, i);
      const op = operatorAt(text, i);
      if (!op) break;
      i += op.length;
      i = spacesEnd(text, i);
      const vStart = i;
      while (i < text.length && isVersionChar(text.charCodeAt(i))) i++;
      if (i === vStart)
        return {
          ok: false,
          message: `expected a version after "${op}"`,
          span: m.site(vStart - op.length, Math.max(i, vStart)),
        };
      clauses.push({
        operator: op,
        version: text.slice(vStart, i),
        versionSpan: m.origin(vStart, i) ?? m.site(vStart, i),
      });
      specEnd = i;
      i = spacesEnd(text, i);
      if (text[i] === ',') {
        i++;
        continue;
      }
      break;
    }
    if (paren) {
      i = spacesEnd(text, i);
      if (text[i] === ')') i++;
    }
    if (clauses.length === 0) specStart = specEnd = afterName;
    i = spacesEnd(text, i);
  }

  let markers: string | undefined;
  if (text[i] === ';') {
    markers = text.slice(i + 1).trim();
    i = text.length;
  }
  i = spacesEnd(text, i);
  if (i < text.length) {
    return {
      ok: false,
      message: `unexpected "${truncate(text.slice(i))}" after the requirement`,
      span: m.site(i, text.length),
    };
  }

  const exact = exactVersion(clauses);
  const localLabel = exact?.includes('+') ? exact.slice(exact.indexOf('+') + 1).toLowerCase() : undefined;
  const specifierSpan = m.origin(specStart, specEnd) ?? m.site(specStart, specEnd);
  const via = m.via(0, text.length);
  return {
    ok: true,
    fact: packageFact({
      ecosystem: 'pip',
      name: normalizePythonName(rawName),
      rawName,
      nameSpan: m.site(0, rawName.length),
      span: whole,
      via,
      extras,
      specifier: text.slice(specStart, specEnd),
      specifierSpan,
      clauses,
      exact,
      localLabel,
      url,
      urlSpan: url ? urlSpan : undefined,
      markers: markers || undefined,
    }),
  };
}

function exactVersion(clauses: readonly VersionClause[]): string | undefined {
  if (clauses.length !== 1) return undefined;
  const [clause] = clauses;
  if (!clause) return undefined;
  if (clause.operator === '===') return clause.version;
  if (clause.operator === '==' && !clause.version.includes('*')) return padRelease(clause.version);
  return undefined;
}

/**
 * `2.7` → `2.7.0` (and `2.7+cu126` → `2.7.0+cu126`): PEP 440 compares release segments padded with zeros, so
 * `torch==2.7` is `torch==2.7.0`, the form releases are known by. Other versions are left as written.
 */
function padRelease(version: string): string {
  const match = /^(\d+)(\.\d+)?(\+.*)?$/.exec(version);
  if (!match) return version;
  return `${match[1]}${match[2] ?? '.0'}.0${match[3] ?? ''}`;
}

/** A wheel's file name: `{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl`. */
export function parseWheelFileName(fileName: string): { name: string; version: string } | undefined {
  const decoded = safeDecode(fileName);
  const match = /^([A-Za-z0-9_.]+)-([^-]+)(?:-\d[^-]*)?-[^-]+-[^-]+-[^-]+\.whl$/i.exec(decoded);
  if (!match) return undefined;
  return { name: match[1]!, version: match[2]! };
}

/** PEP 508's `name [extras] @ url` before a wheel or archive URL: the name is the one written, not the file's. */
const NAMED_URL = /^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[([^\]]*)\])?\s*@\s*/;

/** A URL requirement: a bare URL (pip's requirements-file form) or `name @ url` (named, from NAMED_URL). */
function parseBareUrl(m: Mapped, named?: RegExpExecArray): RequirementResult {
  const text = m.text;
  const from = named ? named[0].length : 0;
  const semi = text.indexOf(';', from);
  const written = (semi >= 0 ? text.slice(from, semi) : text.slice(from)).trim();
  // A local path may carry extras (`./pkg.whl[all]`), which pip strips from it; a URL's `[` is part of it.
  const local = !named && !URL_SCHEME.test(written) ? pathExtras(written) : { path: written };
  const urlText = local.path;
  const markers = semi >= 0 ? text.slice(semi + 1).trim() : undefined;
  const urlStart = text.indexOf(urlText, from);
  const urlEnd = urlStart + urlText.length;
  const path = urlText.split(/[#?]/)[0]!;
  const fileName = path.slice(path.lastIndexOf('/') + 1);
  const wheel = parseWheelFileName(fileName);
  const egg = /[#&]egg=([A-Za-z0-9._-]+)/.exec(urlText)?.[1];
  // A VCS URL without #egg= names the project by its repository: git+https://github.com/org/xformers.git@v0.0.23,
  // or by the project a known repository builds (state-spaces/mamba builds mamba_ssm).
  const vcs = /^(?:git|hg|svn|bzr)\+/i.test(urlText) ? vcsProject(urlText) : undefined;
  const sdist = /^([A-Za-z0-9_.]+?)-(\d[^-]*)\.(?:tar\.gz|tgz|tar\.bz2|tar\.xz|zip)$/i.exec(safeDecode(fileName));
  const fileProject = wheel?.name ?? egg ?? vcs ?? sdist?.[1] ?? fileName;
  const rawName = named?.[1] ?? fileProject;
  const span = m.site(0, text.length);
  const urlSpan = m.origin(urlStart, urlEnd) ?? m.site(urlStart, urlEnd);
  // The file's version is the package's when the file is that package's (pip refuses a wheel whose name differs).
  const sameProject = normalizePythonName(rawName) === normalizePythonName(fileProject);
  const version = sameProject ? (wheel?.version ?? sdist?.[2]) : undefined;
  const localLabel = version?.includes('+') ? version.slice(version.indexOf('+') + 1).toLowerCase() : undefined;
  const via = m.via(0, text.length);
  return {
    ok: true,
    fact: packageFact({
      ecosystem: 'pip',
      name: normalizePythonName(rawName),
      rawName,
      nameSpan: named
        ? m.site(named.index + named[0].indexOf(named[1]!), named[0].indexOf(named[1]!) + named[1]!.length)
        : span,
      span,
      via,
      extras:
        (named?.[2] ?? local.extras)
          ? (named?.[2] ?? local.extras!).split(',').flatMap((extra) => (extra.trim() ? [extra.trim()] : []))
          : [],
      specifier: '',
      specifierSpan: { start: span.end, end: span.end },
      clauses: [],
      exact: version || undefined,
      localLabel,
      url: urlText,
      urlSpan,
      markers: markers || undefined,
    }),
  };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

export function truncate(text: string, max = 40): string {
  const oneLine = text.replace(/\s+/g, ' ');
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}
