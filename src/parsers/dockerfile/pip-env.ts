/**
 * Where pip and uv look for packages besides their command line, as a Dockerfile sets it up: `ENV
 * PIP_INDEX_URL=…` (pip reads every option from `PIP_<OPTION>`: pip.pypa.io/en/stable/topics/configuration/
 * #environment-variables), `pip config set global.extra-index-url …` (written to the image's pip.conf), uv's
 * `UV_INDEX_URL`, `UV_DEFAULT_INDEX`, `UV_EXTRA_INDEX_URL`, `UV_INDEX`, `UV_FIND_LINKS` and `UV_TORCH_BACKEND`
 * (docs.astral.sh/uv/reference/environment/), and `VAR=value pip install …` for one command. An option given on
 * the command line replaces the environment's value of that option. A pip configuration the file does not show
 * (a copied pip.conf, PIP_CONFIG_FILE) makes the indexes unknown.
 */
import type { CopyFact, FactSink, IndexFact, IndexKind, ContextDraft } from '../facts.js';
import type { Span } from '../source.js';
import type { Word } from '../shell.js';
import { isPrefix } from '../installers.js';

interface Setting {
  readonly kind: IndexKind;
  readonly url: string;
  readonly urlSpan: Span;
  readonly span: Span;
  /** As IndexFact's: `UV_TORCH_BACKEND=cu130`, which names no URL. */
  readonly written?: string;
}

type Tool = 'pip' | 'uv';

// Maps, not objects: `ENV constructor=…` must not find Object.prototype.constructor (it once made an index of it).
const PIP_VARIABLES: ReadonlyMap<string, IndexKind> = new Map([
  ['PIP_INDEX_URL', 'index-url'],
  ['PIP_EXTRA_INDEX_URL', 'extra-index-url'],
  ['PIP_FIND_LINKS', 'find-links'],
]);
const UV_VARIABLES: ReadonlyMap<string, IndexKind> = new Map([
  ['UV_INDEX_URL', 'index-url'],
  ['UV_DEFAULT_INDEX', 'index-url'],
  ['UV_EXTRA_INDEX_URL', 'extra-index-url'],
  ['UV_INDEX', 'extra-index-url'],
  ['UV_FIND_LINKS', 'find-links'],
]);
const PIP_CONFIG_KEYS: ReadonlyMap<string, IndexKind> = new Map([
  ['index-url', 'index-url'],
  ['extra-index-url', 'extra-index-url'],
  ['find-links', 'find-links'],
]);

/** Whether the command just recorded as `context` has the option: its options are the last ones of the sink. */
function hasOption(sink: FactSink, context: ContextDraft, name: string): boolean {
  for (let i = sink.options.length - 1; i >= 0 && sink.options[i]!.context === context.id; i--)
    if (sink.options[i]!.name === name) return true;
  return false;
}

/** The URLs of a space-separated list, each with its span in the file. */
function urls(value: string, valueSpan: Span, span: Span, kind: IndexKind): Setting[] {
  const out: Setting[] = [];
  const re = /\S+/g;
  const offset = valueSpan.end - valueSpan.start === value.length ? valueSpan.start : -1;
  for (let match = re.exec(value); match; match = re.exec(value)) {
    const url = match[0].replace(/^[A-Za-z0-9_.-]+=(?=[a-z][a-z0-9+.-]*:\/\/)/i, ''); // uv: name=url
    const start = offset >= 0 ? offset + match.index + (match[0].length - url.length) : valueSpan.start;
    out.push({ kind, url, urlSpan: offset >= 0 ? { start, end: start + url.length } : valueSpan, span });
  }
  return out;
}

export class PipEnv {
  private readonly settings: Record<Tool, Map<IndexKind, Setting[]>> = { pip: new Map(), uv: new Map() };
  private hidden: string | undefined;
  /** Where `ENV UV_TORCH_BACKEND=auto` is set: uv pip then picks the PyTorch index from the build machine's driver. */
  private autoBackend: Span | undefined;

  constructor(parent: PipEnv | undefined) {
    if (!parent) return;
    for (const tool of ['pip', 'uv'] as const)
      for (const [kind, list] of parent.settings[tool]) this.settings[tool].set(kind, list);
    this.hidden = parent.hidden;
    this.autoBackend = parent.autoBackend;
  }

  /** An ENV instruction's variable. */
  setFromEnv(key: string, value: string, valueSpan: Span, span: Span): void {
    if (key === 'PIP_CONFIG_FILE')
      this.hidden = `ENV PIP_CONFIG_FILE points pip at a configuration file (${value}) this check cannot read`;
    const pip = PIP_VARIABLES.get(key);
    if (pip) this.settings.pip.set(pip, urls(value, valueSpan, span, pip));
    const uv = UV_VARIABLES.get(key);
    if (uv) this.settings.uv.set(uv, urls(value, valueSpan, span, uv));
    if (key === 'UV_TORCH_BACKEND') this.autoBackend = value === 'auto' ? span : undefined;
    const backend = key === 'UV_TORCH_BACKEND' ? torchBackendIndex(value, valueSpan, span) : undefined;
    if (backend) this.settings.uv.set('index-url', [backend]);
  }

  /**
   * A RUN that writes a pip configuration file (`printf '[global]\\n…' > /etc/pip.conf`, `… | tee ~/.pip/pip.conf`):
   * from then on pip reads indexes this check does not see.
   */
  noteScript(script: string): void {
    const match = PIP_CONFIG_WRITE.exec(script);
    const written = match?.[1];
    if (!written || writesNoIndex(script.slice(0, match.index))) return;
    this.hidden = `a RUN writes a pip configuration file (${written}), which this check cannot read`;
  }

  /** A COPY of a pip configuration file into the image. */
  noteCopy(copy: CopyFact | undefined): void {
    if (!copy) return;
    const target = copy.destination;
    if (
      copy.sources.some((source) => /(^|\/)pip\.(conf|ini)$/.test(source.path)) ||
      /(^|\/)pip\.(conf|ini)$|\/\.config\/pip\/?$|^\/etc\/pip/.test(target)
    )
      this.hidden = `a pip configuration file is copied into the image (${target}), which this check cannot read`;
  }

  /** `pip config set global.extra-index-url URL` (and `pip config --global set …`): true when the command was one. */
  configure(command: readonly Word[]): boolean {
    const texts = command.map((word) => word.text);
    const pip = texts.findIndex((text) => /(^|\/)pip(\d+(\.\d+)?)?$/.test(text));
    if (pip < 0 || texts[pip + 1] !== 'config') return false;
    const set = texts.indexOf('set', pip + 2);
    if (set < 0) return true;
    const key = texts[set + 1]?.replace(/^[a-z]+\./, '');
    const value = command[set + 2];
    const kind = key ? PIP_CONFIG_KEYS.get(key) : undefined;
    if (kind && value) {
      const span = { start: command[0]!.span.start, end: value.span.end };
      this.settings.pip.set(
        kind,
        urls(value.text, value.mapped.origin(0, value.text.length) ?? value.span, span, kind),
      );
    }
    return true;
  }

  /**
   * Add the environment's indexes to a context just recorded (an option on the command line replaces the
   * environment's value of that option); `VAR=value` before the command counts for that command only.
   */
  apply(sink: FactSink, context: ContextDraft, command: readonly Word[]): void {
    if (context.tool !== 'pip' && context.tool !== 'uv') return;
    const tool: Tool = context.tool;
    const own = new Map(this.settings[tool]);
    const variables = tool === 'pip' ? PIP_VARIABLES : UV_VARIABLES;
    for (let i = 0; i < command.length; i++) {
      const word = command[i]!;
      const eq = word.text.indexOf('=');
      if (eq <= 0 || !/^[A-Z_][A-Z0-9_]*$/.test(word.text.slice(0, eq))) {
        // The words before the assignments: the reserved word a branch's command follows (`then VAR=… pip`), `env`.
        if (isPrefix(command, i)) continue;
        break;
      }
      const key = word.text.slice(0, eq);
      const kind = variables.get(key);
      const value = word.mapped.slice(eq + 1);
      if (kind) own.set(kind, urls(value.text, value.origin(0, value.length) ?? word.span, word.span, kind));
      // `UV_TORCH_BACKEND=cu126 uv pip install torch` (axolotl's Dockerfile-uv-base): as --torch-backend=cu126.
      if (tool === 'uv' && key === 'UV_TORCH_BACKEND') {
        const backend = torchBackendIndex(value.text, value.origin(0, value.length) ?? word.span, word.span);
        if (backend) own.set('index-url', [backend]);
        else if (value.text === 'auto' && !hasOption(sink, context, 'torch-backend-auto'))
          sink.options.push({ name: 'torch-backend-auto', span: word.span, context: context.id });
      }
    }
    const given = new Set(context.indexes.map((index) => index.kind));
    for (const [kind, settings] of own) {
      if (given.has(kind)) continue;
      for (const setting of settings) {
        const fact: IndexFact = {
          kind: setting.kind,
          url: setting.url,
          urlSpan: setting.urlSpan,
          span: setting.span,
          context: context.id,
          ...(setting.written ? { written: setting.written } : {}),
        };
        sink.addIndex(context, fact);
      }
    }
    // uv reads no pip configuration file (docs.astral.sh/uv/pip/compatibility/, "Configuration files and
    // environment variables").
    if (this.hidden && tool === 'pip') {
      (context as { hiddenIndexes?: string }).hiddenIndexes = this.hidden;
      // Said, not silent: which index serves what this command installs is not known (unless it names its own).
      if (!context.indexes.some((index) => index.kind === 'index-url'))
        sink.unresolved.push({ span: context.span, text: 'which builds this pip install takes', reason: this.hidden });
    }
    // uv reads none of pip's variables (docs.astral.sh/uv/reference/environment/): a PIP_INDEX_URL set for a
    // uv command is dead configuration. Noted on the uv context; index-url reports it unless pip uses it too.
    if (tool !== 'uv') return;
    const noted = new Set<number>(); // one ENV of several URLs is one setting
    // A URL the stage also gives uv (`ENV PIP_EXTRA_INDEX_URL=$X` beside `ENV UV_EXTRA_INDEX_URL=$X`, aphrodite's CPU
    // and XPU images, for the pip and the uv commands alike) reaches uv all the same.
    const bare = (url: string): string => url.replace(/\/+$/, '');
    const forUv = new Set([...this.settings.uv.values()].flat().map((setting) => bare(setting.url)));
    for (const settings of this.settings.pip.values())
      for (const setting of settings)
        if (!noted.has(setting.span.start) && !forUv.has(bare(setting.url))) {
          noted.add(setting.span.start);
          sink.options.push({ name: 'pip-env-for-uv', span: setting.span, context: context.id });
        }
    // `uv pip` reads UV_TORCH_BACKEND (docs.astral.sh/uv/guides/integration/pytorch/#automatic-backend-selection);
    // `uv sync` does not, and `--torch-backend` on the command line has said it already.
    if (
      this.autoBackend &&
      !context.includes.some((include) => include.selects) &&
      !hasOption(sink, context, 'torch-backend-auto')
    )
      sink.options.push({ name: 'torch-backend-auto', span: this.autoBackend, context: context.id });
  }
}

/** uv's `--torch-backend`/`UV_TORCH_BACKEND` value `cu126` or `cpu`: the PyTorch index it installs from. */
function torchBackendIndex(value: string, urlSpan: Span, span: Span): Setting | undefined {
  if (!/^(cu\d+|cpu)$/.test(value)) return undefined;
  return {
    kind: 'index-url',
    url: `https://download.pytorch.org/whl/${value}`,
    urlSpan,
    span,
    written: `UV_TORCH_BACKEND=${value}`,
  };
}

/**
 * A redirection or `tee` into a pip configuration file, and its path: a file named pip.conf or pip.ini, the names pip
 * reads (pip.pypa.io/en/stable/topics/configuration/#location). `/etc/ld.so.conf.d/nvidia-pip.conf` is the dynamic
 * linker's.
 */
/**
 * Whether the command that writes a pip configuration file (the text before its redirect) is an `echo` or `printf` of
 * literal text that sets no index option (`echo -e "[global]\nbreak-system-packages = true" > /etc/pip.conf`,
 * lightning-thunder's CUDA image): the file is then known, and changes no build pip takes. pip's index settings are
 * the options' long names (`index-url`, `extra-index-url`, `find-links`, `no-index`; pip.pypa.io/en/stable/topics/
 * configuration/), also written with underscores.
 */
function writesNoIndex(before: string): boolean {
  const command = before.split(/&&|\|\||;|\n/).at(-1)!;
  const words = /^\s*(?:echo|printf)\s(.*)$/s.exec(command)?.[1];
  return words !== undefined && !/[$`]/.test(words) && !/index|find[-_]links/i.test(words);
}

const PIP_CONFIG_WRITE = /(?:>>?|\btee\s+(?:-a\s+)?)\s*["']?((?:[^\s"';&|<>]*\/)?pip\.(?:conf|ini))(?![\w.-])/;
