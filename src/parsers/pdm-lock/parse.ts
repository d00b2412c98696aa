/**
 * pdm.lock: what `pdm sync` and `pdm install` install, resolved (pdm-project.org/latest/usage/lockfile/: "PDM
 * installs packages exclusively from the existing lock file named pdm.lock"):
 *
 *   [metadata]
 *   groups = ["default", "dev"]
 *   [[package]]
 *   name = "torch"
 *   version = "2.1.2+cu121"
 *   groups = ["default"]                 # with the inherit_metadata strategy (lock_version 4.4 and later)
 *   marker = "platform_system == \"Linux\""
 *   files = [{file = "torch-2.1.2+cu121-cp310-cp310-linux_x86_64.whl", hash = "sha256:…"}, …]
 *
 * Selections: "the project" (the `default` group) and "group G" (`default` and G, as `pdm install -G G` installs
 * them); a package the lock gives no groups belongs to every selection. The lock does not say which index served a
 * package (pyproject.toml's `[[tool.pdm.source]]` does, read with it): a version without a local label whose wheels
 * all carry one (`version = "0.16.2"` with only `torchvision-0.16.2+cu121-…whl` files, as PDM locks from PyTorch's
 * index) is read with the wheels' label. Packages whose marker cannot hold on Linux are left out, and a name locked
 * twice in one selection (told apart by markers this does not judge) is left out of it rather than guessed. A git,
 * path or URL package is built from there, not taken from an index. The lock is never edited (gate.ts).
 */
import { FactSink, type PackageFact, type ParsedFile } from '../facts.js';
import { holdsOnLinux } from '../markers.js';
import { SourceText } from '../source.js';
import { addSelection, lockedPip } from '../locked.js';
import { lookup, readTomlRoot, stringAt, textSpan, type TomlTable } from '../toml.js';

const UNRECORDED =
  "pdm.lock does not record the index each package came from (pyproject.toml's [[tool.pdm.source]] does)";

interface Locked {
  readonly fact: PackageFact;
  /** Its groups; undefined where the lock does not say (every selection has it). */
  readonly groups?: readonly string[];
}

export function parsePdmLock(path: string, text: string): ParsedFile {
  const source = new SourceText(path, text);
  const sink = new FactSink();
  const root = readTomlRoot(text, sink.problems);
  if (!root) return sink.finish(path, 'pdm-lock', source);
  const list = lookup(root, 'package');
  const locked: Locked[] = [];
  for (const table of list?.kind === 'array' ? list.items : []) {
    if (table.kind !== 'table') continue;
    const entry = readEntry(table);
    if (entry) locked.push(entry);
  }
  const declared = lookup(root, 'metadata', 'groups');
  const groups = new Set(
    [
      ...(declared?.kind === 'array' ? declared.items : []).flatMap((item) =>
        item.kind === 'string' ? [item.value] : [],
      ),
      ...locked.flatMap((entry) => entry.groups ?? []),
    ].filter((group) => group !== 'default'),
  );
  const inGroup = (entry: Locked, group: string) => !entry.groups || entry.groups.includes(group);
  const selections: [string, (entry: Locked) => boolean][] = [
    ['the project', (entry) => inGroup(entry, 'default')],
    ...[...groups].map((group): [string, (entry: Locked) => boolean] => [
      `group ${group}`,
      (entry) => inGroup(entry, 'default') || inGroup(entry, group),
    ]),
  ];
  for (const [selection, holds] of selections) {
    const chosen = locked.filter(holds);
    const count = new Map<string, number>();
    for (const entry of chosen) count.set(entry.fact.name, (count.get(entry.fact.name) ?? 0) + 1);
    // Which index served a package is pyproject.toml's to say (its sources), not the lock's: only a build its own
    // label gives is read here, and no index is judged.
    for (const id of addSelection(
      sink,
      selection,
      chosen.filter((entry) => count.get(entry.fact.name) === 1),
    ))
      (sink.contexts[id] as { hiddenIndexes?: string }).hiddenIndexes = UNRECORDED;
  }
  return sink.finish(path, 'pdm-lock', source);
}

/** A wheel file's local version label (`torch-2.1.2+cu121-cp310-…whl` → cu121). */
const WHEEL_LABEL = /^[^-]+-[^-+]+\+([A-Za-z0-9.]+)-[^/]*\.whl$/;

function readEntry(table: TomlTable): Locked | undefined {
  const name = stringAt(table, 'name');
  const version = stringAt(table, 'version');
  if (!name || !version) return undefined;
  if (['git', 'path', 'url', 'revision'].some((key) => table.entries.has(key))) return undefined;
  if (!holdsOnLinux(stringAt(table, 'marker')?.value)) return undefined;
  const groupList = table.entries.get('groups');
  const groups =
    groupList?.kind === 'array'
      ? groupList.items.flatMap((item) => (item.kind === 'string' ? [item.value] : []))
      : undefined;
  const value = version.value;
  return {
    fact: lockedPip(
      name.value,
      textSpan(name),
      value,
      textSpan(version),
      value.includes('+') ? {} : { localLabel: wheelsLabel(table) },
    ),
    ...(groups ? { groups } : {}),
  };
}

/**
 * The one local label every Linux x86_64 wheel of a package carries, if they all carry the same one (the machine a
 * file that names none is read for; PyTorch's aarch64 and Windows wheels of one release are other builds).
 */
function wheelsLabel(table: TomlTable): string | undefined {
  const files = table.entries.get('files');
  let label: string | undefined;
  for (const item of files?.kind === 'array' ? files.items : []) {
    if (item.kind !== 'table') continue;
    const written = stringAt(item, 'file')?.value ?? stringAt(item, 'url')?.value.split('/').pop();
    const file = written === undefined ? undefined : decodeURIComponentSafe(written);
    if (!file?.endsWith('.whl')) continue;
    const platform = file.slice(file.lastIndexOf('-') + 1, -'.whl'.length);
    if (!/linux.*x86_64|^any$/.test(platform)) continue;
    const found = WHEEL_LABEL.exec(file)?.[1]?.toLowerCase();
    if (!found || (label !== undefined && found !== label)) return undefined;
    label = found;
  }
  return label;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
