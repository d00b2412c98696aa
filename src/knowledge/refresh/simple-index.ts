/**
 * A Python package index's project page, read as `pip` reads it, for `npm run kb:refresh`: which wheels each variant
 * index of download.pytorch.org lists, by version, build tag and platform. Pure functions over a page's text.
 *
 * - The Simple API serves a project page as JSON (PEP 691: `{"meta": {"api-version": "1.x"}, "files": [{"filename":
 *   …, "url": …}]}`, media type `application/vnd.pypi.simple.v1+json`) when the client asks for it in `Accept`, or
 *   as HTML (PEP 503: one `<a href="…">filename</a>` anchor per file; the anchor's text is the file name). An index
 *   that knows no JSON answers HTML whatever the client asks (PEP 691, "Content negotiation"): download.pytorch.org
 *   does. Both are read here, decided by the page itself.
 * - A wheel's file name is `{distribution}-{version}(-{build tag})?-{python tag}-{abi tag}-{platform tag}.whl`
 *   (PEP 427; the "Binary distribution format" specification), the version with `+` (or `%2B` in a URL) before its
 *   local label.
 * - Platform tags: `manylinux_2_28_x86_64`, `manylinux2014_aarch64`, `linux_x86_64` (PEP 600 / PEP 599) are Linux;
 *   `win_amd64` is 64-bit Windows; a compressed tag set (`manylinux_2_17_x86_64.manylinux2014_x86_64`) names one
 *   platform several ways (PEP 425).
 */
import type { WheelPlatform } from '../schema.js';

/** One wheel of a project page. */
export interface IndexedWheel {
  /** The public version (`2.9.0`). */
  readonly version: string;
  /** The local label (`cu129`, `cpu`), or undefined for a wheel without one. */
  readonly label?: string;
  readonly platform: WheelPlatform;
}

/** The Accept header that asks for PEP 691 JSON first and takes HTML otherwise. */
export const SIMPLE_ACCEPT =
  'application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01';

/** The file names a project page lists, from its JSON (PEP 691) or HTML (PEP 503) form. */
export function pageFileNames(page: string): string[] {
  const text = page.trimStart();
  if (text.startsWith('{')) {
    const data = JSON.parse(text) as { files?: { filename?: unknown }[] };
    return (data.files ?? []).map((file) => file.filename).filter((name): name is string => typeof name === 'string');
  }
  const names: string[] = [];
  const anchor = /<a\b[^>]*>([^<]*)<\/a\s*>/gi;
  for (let match = anchor.exec(text); match; match = anchor.exec(text)) names.push(decodeEntities(match[1]!.trim()));
  return names;
}

/** The wheels of `project` a page lists (other files, sdists and other projects' wheels are left out). */
export function parseProjectPage(page: string, project: string): IndexedWheel[] {
  const wheels: IndexedWheel[] = [];
  const normalized = normalizeName(project);
  for (const name of pageFileNames(page)) {
    const wheel = parseWheelName(name);
    if (wheel && normalizeName(wheel.distribution) === normalized) wheels.push(wheel.indexed);
  }
  return wheels;
}

/** A wheel file name's parts, or undefined for a file that is not a wheel (PEP 427). */
export function parseWheelName(name: string): { distribution: string; indexed: IndexedWheel } | undefined {
  const decoded = name.replace(/%2B/gi, '+');
  const match = /^([^-]+)-([^-]+)(?:-\d[^-]*)?-[^-]+-[^-]+-([^-]+)\.whl$/i.exec(decoded);
  if (!match) return undefined;
  const [, distribution, fullVersion, platformTags] = match;
  const platform = platformOf(platformTags!);
  if (!platform) return undefined;
  const [version, label] = fullVersion!.split('+', 2) as [string, string | undefined];
  return {
    distribution: distribution!,
    indexed: { version, ...(label ? { label: label.toLowerCase() } : {}), platform },
  };
}

/** The platform a (possibly compressed) platform tag names, where it is one the checks tell apart. */
function platformOf(tags: string): WheelPlatform | undefined {
  for (const tag of tags.toLowerCase().split('.')) {
    if (/^(?:many|musl)?linux(?:\d+|_\d+_\d+)?_x86_64$/.test(tag)) return 'linux_x86_64';
    if (/^(?:many|musl)?linux(?:\d+|_\d+_\d+)?_aarch64$/.test(tag)) return 'linux_aarch64';
    if (tag === 'win_amd64') return 'win_amd64';
  }
  return undefined;
}

/** PEP 503's normalized project name: runs of `-`, `_` and `.` are one `-`, lower case. */
function normalizeName(name: string): string {
  return name.replace(/[-_.]+/g, '-').toLowerCase();
}

function decodeEntities(text: string): string {
  return text
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCodePoint(Number(code)))
    .replace(/&#x([0-9a-f]+);/gi, (_, code: string) => String.fromCodePoint(Number.parseInt(code, 16)))
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');
}

/** What the variant indexes list for a project: version → build tag → platforms. */
export type IndexListing = Map<string, Map<string, Set<WheelPlatform>>>;

/**
 * Adds a variant index's page to a listing. A wheel's build tag is its local label (`+cu129`), or, for a wheel
 * without one, the variant of the index that lists it (the CUDA index serves it as its build).
 */
export function addVariantPage(listing: IndexListing, variant: string, wheels: readonly IndexedWheel[]): void {
  for (const wheel of wheels) {
    const tag = wheel.label ?? variant;
    let tags = listing.get(wheel.version);
    if (!tags) listing.set(wheel.version, (tags = new Map()));
    let platforms = tags.get(tag);
    if (!platforms) tags.set(tag, (platforms = new Set()));
    platforms.add(wheel.platform);
  }
}
