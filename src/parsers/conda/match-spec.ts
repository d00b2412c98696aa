import { packageFact, type PackageFact, type VersionClause } from '../facts.js';
import type { Span } from '../source.js';
import type { Mapped } from '../mapped.js';
import { truncate } from '../python-requirement.js';

export type MatchSpecResult =
  | { readonly ok: true; readonly fact: PackageFact }
  | { readonly ok: false; readonly message: string; readonly span: Span };

const OPERATOR = /^(==|>=|<=|!=|~=|=|>|<)/;
/** A package name and an operator, read at an index (sticky: no copy of the rest of the text). */
const NAME_AT = /[A-Za-z0-9_][A-Za-z0-9_.+-]*/y;
const OPERATOR_AT = /==|>=|<=|!=|~=|=|>|</y;

const isBlank = (code: number): boolean => code === 0x20 || code === 0x09;
/** Where the blanks (spaces and tabs) from `i` end. */
function blanksEnd(text: string, i: number): number {
  while (i < text.length && isBlank(text.charCodeAt(i))) i++;
  return i;
}

/** JavaScript's \s, as the spec's words are split. */
const isSpace = (code: number): boolean =>
  code === 0x20 || (code >= 0x09 && code <= 0x0d) || (code > 0x7f && /\s/.test(String.fromCharCode(code)));

/**
 * Parse a conda MatchSpec as written in environment files and `conda install` arguments:
 * `pytorch`, `pytorch=2.1.0`, `pytorch==2.1.0`, `pytorch=2.1.0=py3.10_cuda12.1_cudnn8.9.2_0`,
 * `pytorch 2.1.0 py3.10_cuda12.1_0`, `pytorch >= 2.0`, `pytorch::pytorch-mutex = *=*cuda*`,
 * `nvidia/label/cuda-12.1.0::cuda-toolkit = 12.1`, `pytorch[version='>=2']`.
 */
export function parseMatchSpec(m: Mapped): MatchSpecResult {
  const text = m.text;
  const whole = m.site(0, text.length);
  let i = 0;
  let channel: string | undefined;
  const sep = text.indexOf('::');
  if (sep > 0 && !/\s/.test(text.slice(0, sep))) {
    channel = text.slice(0, sep);
    i = sep + 2;
  }
  NAME_AT.lastIndex = i;
  const nameMatch = NAME_AT.exec(text);
  if (!nameMatch)
    return { ok: false, message: `expected a conda package name, found "${truncate(text)}"`, span: whole };
  const rawName = nameMatch[0];
  const nameStart = i;
  i += rawName.length;
  const afterName = i;
  // `i = blanksEnd(text, i)` skips blanks (a closure over `i` would put it, and every use of it, on the heap).
  i = blanksEnd(text, i);

  const clauses: VersionClause[] = [];
  let specStart = afterName;
  let specEnd = afterName;
  let build: string | undefined;
  let buildSpan: Span | undefined;
  let fuzzy = false;

  if (text[i] === '[') {
    const close = text.lastIndexOf(']');
    const body = text.slice(i + 1, close < 0 ? text.length : close);
    const version = /version\s*=\s*['"]?([^'",\]]+)/.exec(body)?.[1];
    const buildValue = /build\s*=\s*['"]?([^'",\]]+)/.exec(body)?.[1];
    if (version) clauses.push(...splitVersion(m, version, i + 1 + body.indexOf(version)));
    if (buildValue) build = buildValue;
  } else if (i < text.length) {
    specStart = i;
    OPERATOR_AT.lastIndex = i;
    const op = OPERATOR_AT.exec(text);
    let operator = op?.[0] ?? '';
    if (op) {
      i += operator.length;
      i = blanksEnd(text, i);
    }
    const versionStart = i;
    // The version runs to whitespace, or to an `=` that separates it from a build string.
    while (i < text.length && !isSpace(text.charCodeAt(i))) {
      if (text[i] === '=' && i > versionStart && /[A-Za-z0-9*.]/.test(text[i - 1]!) && text[i + 1] !== '=') break;
      i++;
    }
    const versionText = text.slice(versionStart, i);
    specEnd = i;
    if (operator === '=') {
      fuzzy = true;
      operator = '=';
    }
    if (versionText) clauses.push(...splitVersion(m, versionText, versionStart, operator));
    i = blanksEnd(text, i);
    if (text[i] === '=') {
      i++;
      i = blanksEnd(text, i);
    }
    const buildStart = i;
    while (i < text.length && !isSpace(text.charCodeAt(i))) i++;
    if (i > buildStart) {
      build = text.slice(buildStart, i);
      buildSpan = m.origin(buildStart, i) ?? m.site(buildStart, i);
    }
    i = blanksEnd(text, i);
    if (i < text.length)
      return {
        ok: false,
        message: `unexpected "${truncate(text.slice(i))}" in conda spec`,
        span: m.site(i, text.length),
      };
    if (!versionText) specStart = specEnd = afterName;
  }

  const exact = exactVersion(clauses, fuzzy);
  const label = build ? cudaLabelFromBuild(build) : undefined;
  const via = m.via(0, text.length);
  return {
    ok: true,
    fact: packageFact({
      ecosystem: 'conda',
      name: rawName.toLowerCase(),
      rawName,
      nameSpan: m.site(nameStart, afterName),
      span: whole,
      via,
      extras: [],
      specifier: text.slice(specStart, specEnd),
      specifierSpan: m.origin(specStart, specEnd) ?? m.site(specStart, specEnd),
      clauses,
      exact: exact || undefined,
      localLabel: label || undefined,
      channel: channel || undefined,
      build: build || undefined,
      buildSpan,
    }),
  };
}

function splitVersion(m: Mapped, versionText: string, offset: number, firstOperator = ''): VersionClause[] {
  const clauses: VersionClause[] = [];
  let position = offset;
  for (const part of versionText.split(/[,|]/)) {
    const op = OPERATOR.exec(part);
    const operator = op ? op[0] : firstOperator;
    const versionOffset = position + (op ? op[0].length : 0);
    const version = part.slice(op ? op[0].length : 0);
    if (version)
      clauses.push({
        operator: operator || '=',
        version,
        versionSpan:
          m.origin(versionOffset, versionOffset + version.length) ??
          m.site(versionOffset, versionOffset + version.length),
      });
    position += part.length + 1;
    firstOperator = '';
  }
  return clauses;
}

function exactVersion(clauses: readonly VersionClause[], _fuzzy: boolean): string | undefined {
  if (clauses.length !== 1) return undefined;
  const clause = clauses[0]!;
  if ((clause.operator === '=' || clause.operator === '==') && !/[*?]/.test(clause.version)) return clause.version;
  return undefined;
}

/**
 * `py3.10_cuda12.1_cudnn8.9.2_0` → `cuda12.1`; `py39_cu118` → `cu118`; `cuda120_py312h…` → `cuda120`; `cpu_…` →
 * `cpu`; and in build globs (`*cuda118*`, `cuda124*`, pixi's `{ build = "cuda126*" }`) the same.
 */
export function cudaLabelFromBuild(build: string): string | undefined {
  // `cuda11.8`, `cuda10.1.243` (the pytorch channel's 1.x builds name the full CUDA), `cuda118`, `cu121`.
  const cuda = /(?:^|[_*])(cuda\d+(?:\.\d+)?|cu\d{2,3})(?:\.\d+)*(?:[_*]|$|[a-z])/i.exec(build);
  if (cuda) return cuda[1]!.toLowerCase();
  if (/(?:^|[_*])cpu(?:[_*]|$)/i.test(build)) return 'cpu';
  return undefined;
}
