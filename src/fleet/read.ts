/**
 * The fleet as the nodes report it, read from where platform teams already collect it (pure: text in, nodes and
 * positioned problems out; never throws):
 * - `nvidia-smi --query-gpu=name,driver_version,compute_cap,pci.bus_id --format=csv` of one or many nodes (each
 *   node's output starts with its header line; "comma + one space" separated; `[N/A]`-style cells are unknown);
 * - `nvidia-smi -q -x` XML of one or many nodes (one `<nvidia_smi_log>` each: the root `driver_version`, and per
 *   `<gpu>` its `product_name`, `product_brand`, MIG mode); the XML has no compute capability;
 * - `kubectl get nodes -o json` with NVIDIA GPU Feature Discovery labels (`nvidia.com/gpu.product`,
 *   `nvidia.com/cuda.driver.major/.minor/.rev`, `nvidia.com/gpu.count`, `nvidia.com/gpu.compute.major/.minor`).
 * Formats: NVIDIA's nvidia-smi documentation (docs.nvidia.com/deploy/nvidia-smi) and GFD's README
 * (github.com/NVIDIA/k8s-device-plugin, "GPU Feature Discovery"); real outputs are the tests' fixtures.
 */
import { SourceText } from '../parsers/source.js';

export interface FleetGpu {
  /** Product name without the `NVIDIA ` prefix newer drivers print: `A100-SXM4-80GB`, `GeForce RTX 4090`. */
  readonly product: string;
  readonly computeCapability?: string;
  /** nvidia-smi's product_brand (`NVIDIA`, `Tesla`, `GeForce`, `NVIDIA RTX`, …), when the input says it. */
  readonly brand?: string;
  readonly mig?: boolean;
}

export interface FleetNode {
  /** The node's name (kubectl), or `<file> node N` for nvidia-smi outputs. */
  readonly name: string;
  readonly driver: string;
  readonly gpus: readonly FleetGpu[];
  readonly labels: Readonly<Record<string, string>>;
}

export interface FleetProblem {
  readonly path: string;
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

export interface FleetRead {
  readonly nodes: readonly FleetNode[];
  readonly problems: readonly FleetProblem[];
}

export const DRIVER = /^\d{3}(?:\.\d{1,3}){1,2}$/;

/** The product name as matched against the knowledge base: no `NVIDIA ` prefix, no GFD `-MIG-…`/`-SHARED` suffix. */
export function productName(raw: string): string {
  return raw
    .trim()
    .replace(/^NVIDIA[ -]/, '')
    .replace(/-(?:MIG-.*|SHARED)$/, '')
    .trim();
}

/** Which of the three formats a text is, by its first non-blank characters. */
export function fleetFormat(text: string): 'csv' | 'xml' | 'kubectl' | undefined {
  const start = text.trimStart();
  if (start.startsWith('<')) return 'xml';
  if (start.startsWith('{')) return 'kubectl';
  if (/^name\s*,/i.test(start) || /,\s*driver_version/i.test(start.split('\n')[0] ?? '')) return 'csv';
  return undefined;
}

export function readFleet(path: string, text: string): FleetRead {
  const format = fleetFormat(text);
  if (format === 'csv') return readSmiCsv(path, text);
  if (format === 'xml') return readSmiXml(path, text);
  if (format === 'kubectl') return readKubeNodes(path, text);
  return {
    nodes: [],
    problems: [
      {
        path,
        line: 1,
        column: 1,
        message:
          'not an nvidia-smi CSV (--query-gpu=name,driver_version,… --format=csv), nvidia-smi -q -x XML or kubectl get nodes -o json output',
      },
    ],
  };
}

/** Each header line starts a node; its columns are named by the header, so their order does not matter. */
export function readSmiCsv(path: string, text: string): FleetRead {
  const nodes: FleetNode[] = [];
  const problems: FleetProblem[] = [];
  const lines = text.split(/\r?\n/);
  let columns: string[] | undefined;
  let current: { driver?: string; gpus: FleetGpu[]; line: number } | undefined;
  const finish = (): void => {
    if (current?.driver && current.gpus.length > 0)
      nodes.push({ name: `${path} node ${nodes.length + 1}`, driver: current.driver, gpus: current.gpus, labels: {} });
    current = undefined;
  };
  lines.forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === '') return;
    const cells = raw.split(',').map((cell) => cell.trim());
    if (/^name$|^gpu_name$/i.test(cells[0] ?? '') || cells.some((cell) => /^driver_version$/i.test(cell))) {
      finish();
      columns = cells.map((cell) => cell.replace(/\s*\[.*\]$/, '').toLowerCase());
      for (const needed of ['driver_version'])
        if (!columns.includes(needed))
          problems.push({ path, line, column: 1, message: `the header has no ${needed} column` });
      if (!columns.includes('name') && !columns.includes('gpu_name'))
        problems.push({ path, line, column: 1, message: 'the header has no name column' });
      current = { gpus: [], line };
      return;
    }
    if (!columns || !current) {
      problems.push({
        path,
        line,
        column: 1,
        message: 'a GPU line before any header line (run nvidia-smi with --format=csv, not csv,noheader)',
      });
      return;
    }
    if (cells.length !== columns.length) {
      problems.push({
        path,
        line,
        column: 1,
        message: `${cells.length} values for the ${columns.length} columns of the header on line ${current.line}`,
      });
      return;
    }
    const value = (name: string): string | undefined => {
      const at = columns!.indexOf(name);
      const cell = at >= 0 ? cells[at] : undefined;
      return cell === undefined || /^\[.*\]$/.test(cell) ? undefined : cell;
    };
    const driver = value('driver_version');
    const name = value('name') ?? value('gpu_name');
    if (!driver || !DRIVER.test(driver)) {
      problems.push({
        path,
        line,
        column: raw.indexOf(driver ?? '') + 1 || 1,
        message: `"${driver ?? ''}" is not a Linux driver version such as 580.159.04`,
      });
      return;
    }
    if (!name) {
      problems.push({ path, line, column: 1, message: 'no product name on this line' });
      return;
    }
    if (current.driver && current.driver !== driver)
      problems.push({
        path,
        line,
        column: raw.indexOf(driver) + 1,
        message: `driver ${driver} differs from ${current.driver} on the same node`,
      });
    current.driver ??= driver;
    const cc = value('compute_cap');
    current.gpus.push({
      product: productName(name),
      ...(cc && /^\d+\.\d+$/.test(cc) ? { computeCapability: cc } : {}),
    });
  });
  finish();
  return { nodes, problems };
}

/** Text of the first `<tag>` inside `xml`, entities decoded; undefined when absent or N/A. */
function element(xml: string, tag: string): string | undefined {
  const match = new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml);
  const text = match?.[1]
    ?.trim()
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
  return text === undefined || text === '' || text === 'N/A' ? undefined : text;
}

/** One `<nvidia_smi_log>` per node; several may follow each other in one file (collected from many nodes). */
export function readSmiXml(path: string, text: string): FleetRead {
  const nodes: FleetNode[] = [];
  const problems: FleetProblem[] = [];
  // Lines by binary search over the line starts, found once (40,000 malformed logs were quadratic by re-splitting).
  const source = new SourceText(path, text);
  const lineOf = (offset: number): number => source.position(offset).line;
  const logs = [...text.matchAll(/<nvidia_smi_log>([\s\S]*?)<\/nvidia_smi_log>/g)];
  if (logs.length === 0)
    problems.push({
      path,
      line: 1,
      column: 1,
      message: 'no <nvidia_smi_log> element: not the output of nvidia-smi -q -x',
    });
  for (const log of logs) {
    const body = log[1]!;
    const at = log.index!;
    const driver = element(body.split('<gpu ')[0] ?? '', 'driver_version');
    if (!driver || !DRIVER.test(driver)) {
      problems.push({
        path,
        line: lineOf(at),
        column: 1,
        message: `this log's <driver_version> is ${driver ? `"${driver}", not a Linux driver version` : 'missing'}`,
      });
      continue;
    }
    const gpus: FleetGpu[] = [];
    for (const gpu of body.matchAll(/<gpu id="[^"]*">([\s\S]*?)\n\t<\/gpu>/g)) {
      const product = element(gpu[1]!, 'product_name');
      if (!product) {
        problems.push({ path, line: lineOf(at + gpu.index!), column: 1, message: 'a <gpu> without <product_name>' });
        continue;
      }
      const brand = element(gpu[1]!, 'product_brand');
      const mig = element(/<mig_mode>([\s\S]*?)<\/mig_mode>/.exec(gpu[1]!)?.[1] ?? '', 'current_mig');
      gpus.push({
        product: productName(product),
        ...(brand ? { brand } : {}),
        ...(mig ? { mig: mig === 'Enabled' } : {}),
      });
    }
    if (gpus.length === 0) problems.push({ path, line: lineOf(at), column: 1, message: 'this log lists no <gpu>' });
    else nodes.push({ name: `${path} node ${nodes.length + 1}`, driver, gpus, labels: {} });
  }
  return { nodes, problems };
}

interface KubeNode {
  readonly metadata?: { readonly name?: string; readonly labels?: Readonly<Record<string, string>> };
}

/** `kubectl get nodes -o json` (a List) or one node: nodes with GFD labels; the others are not GPU nodes. */
export function readKubeNodes(path: string, text: string): FleetRead {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    const position = /position (\d+)/.exec((error as Error).message)?.[1];
    const offset = position ? Number(position) : 0;
    const before = text.slice(0, offset).split('\n');
    return {
      nodes: [],
      problems: [
        {
          path,
          line: before.length,
          column: before.at(-1)!.length + 1,
          message: `not JSON: ${(error as Error).message}`,
        },
      ],
    };
  }
  const items = (parsed as { items?: unknown }).items;
  const list: KubeNode[] = Array.isArray(items) ? (items as KubeNode[]) : [parsed as KubeNode];
  const nodes: FleetNode[] = [];
  const problems: FleetProblem[] = [];
  for (const [index, item] of list.entries()) {
    const raw = item?.metadata?.labels;
    // Labels are strings in Kubernetes; anything else in a hand-edited file is left out.
    const labels: Record<string, string> = {};
    if (raw && typeof raw === 'object')
      for (const [key, value] of Object.entries(raw)) if (typeof value === 'string') labels[key] = value;
    const product = labels['nvidia.com/gpu.product'];
    if (!product) continue;
    const major = labels['nvidia.com/cuda.driver.major'] ?? labels['nvidia.com/cuda.driver-version.major'];
    const minor = labels['nvidia.com/cuda.driver.minor'] ?? labels['nvidia.com/cuda.driver-version.minor'];
    const rev = labels['nvidia.com/cuda.driver.rev'] ?? labels['nvidia.com/cuda.driver-version.revision'];
    const driver =
      labels['nvidia.com/cuda.driver-version.full'] ??
      [major, minor, rev].filter((part) => part !== undefined && part !== '').join('.');
    const name = typeof item?.metadata?.name === 'string' ? item.metadata.name : `node ${index + 1}`;
    if (!DRIVER.test(driver)) {
      problems.push({
        path,
        line: 1,
        column: 1,
        message: `node ${name}: no driver version in its nvidia.com/cuda.driver.* labels`,
      });
      continue;
    }
    const count = Math.max(1, Number.parseInt(labels['nvidia.com/gpu.count'] ?? '1', 10) || 1);
    const ccMajor = labels['nvidia.com/gpu.compute.major'];
    const ccMinor = labels['nvidia.com/gpu.compute.minor'];
    const gpu: FleetGpu = {
      // GFD writes the NVML name with "-" for spaces (NVIDIA-H100-80GB-HBM3); the knowledge base reads either.
      product: productName(product),
      ...(ccMajor && ccMinor ? { computeCapability: `${ccMajor}.${ccMinor}` } : {}),
      ...(/-MIG-/.test(product) ? { mig: true } : {}),
    };
    nodes.push({ name, driver, gpus: Array.from({ length: count }, () => gpu), labels });
  }
  return { nodes, problems };
}
