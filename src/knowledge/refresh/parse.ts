/**
 * Parsers for upstream sources of the knowledge base (used by `npm run kb:refresh`). Pure functions over the
 * text of a page, tested on saved excerpts in fixtures/kb/.
 */
import { compareDotted } from '../../util/dotted.js';

export interface DriverRow {
  readonly label: string;
  readonly version: string;
  readonly linux?: string;
  readonly windows?: string;
}

/** NVIDIA CUDA release notes, Table 3 "CUDA Toolkit and Corresponding Driver Versions". */
export function parseDriverTable(html: string): DriverRow[] {
  const rows: DriverRow[] = [];
  const rowRe = /<tr[^>]*>([\s\S]*?)<\/tr>/gi;
  for (let row = rowRe.exec(html); row; row = rowRe.exec(html)) {
    const cells = [...row[1]!.matchAll(/<t[dh][^>]*>([\s\S]*?)<\/t[dh]>/gi)].map((cell) => textOf(cell[1]!));
    if (cells.length < 2) continue;
    const label = cells[0]!.replace(/\s+/g, ' ').trim();
    const version = toolkitVersion(label);
    if (!version) continue;
    const linux = driverOf(cells[1]!);
    const windows = cells[2] ? driverOf(cells[2]) : undefined;
    if (!linux && !windows) continue;
    rows.push({
      label: label.replace(/^CUDA\s+/i, ''),
      version,
      ...(linux ? { linux } : {}),
      ...(windows ? { windows } : {}),
    });
  }
  return rows.sort((a, b) => compareDotted(a.version, b.version));
}

/**
 * `CUDA 12.4 Update 1` → 12.4.1, `CUDA 12.8 GA` → 12.8.0, `CUDA 11.0.3 Update 1` → 11.0.3; before 11.0 NVIDIA writes
 * the build in parentheses (`CUDA 9.2 (9.2.148 Update 1)` → 9.2.148, `CUDA 7.0 (7.0.28)` → 7.0.28).
 */
export function toolkitVersion(label: string): string | undefined {
  const build = /CUDA\s+\d+\.\d+\s*\((\d+\.\d+\.\d+)/i.exec(label);
  if (build) return build[1];
  const match = /CUDA\s+(\d+)\.(\d+)(?:\.(\d+))?\s*(?:(GA|RC)|Update\s+(\d+))?/i.exec(label);
  if (!match) return undefined;
  const [, major, minor, patch, , update] = match;
  if (patch !== undefined) return `${major}.${minor}.${patch}`;
  return `${major}.${minor}.${update ?? 0}`;
}

function driverOf(cell: string): string | undefined {
  return /(\d{3}\.\d{1,3}(?:\.\d{1,3})?)/.exec(cell)?.[1];
}

function textOf(html: string): string {
  return html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&gt;/g, '>')
    .replace(/&lt;/g, '<')
    .replace(/&amp;/g, '&')
    .replace(/&nbsp;|&#160;/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Docker Hub tag list JSON (`/v2/repositories/nvidia/cuda/tags?page_size=100`): tag names. */
export function parseDockerHubTags(json: string): string[] {
  const data = JSON.parse(json) as { results?: { name?: unknown }[] };
  return (data.results ?? []).map((entry) => entry.name).filter((name): name is string => typeof name === 'string');
}
