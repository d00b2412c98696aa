/**
 * The small, pure part of the shell that build files use to compute a CUDA tag from a version
 * (`$(echo $CUDA_VERSION | cut -d. -f1,2 | tr -d .)`, `$(echo ${CUDA} | sed 's/\.//g')`,
 * `$(echo $CUDA | awk -F. '{print $1$2}')`): a pipeline that starts with `echo` or `printf` and goes through `cut`,
 * `tr`, `sed s///`, `awk '{print …}'`, `head` or `rev`, evaluated as GNU coreutils, sed and POSIX awk do, when every
 * input is known. Anything else (another command, an option we do not model, a redirection) is not evaluated, and
 * says why; nothing is guessed.
 */

/** One stage of the pipeline: its words after quote removal and expansion. */
export interface Stage {
  readonly words: readonly string[];
}

export type Evaluated = { readonly value: string } | { readonly unsupported: string };

/** Pipelines this long or outputs this large are not evaluated. */
const MAX_STAGES = 8;
const MAX_OUTPUT = 4096;

/** The output of `stages` joined by `|`, with trailing newlines removed as command substitution does. */
export function evaluatePipeline(stages: readonly Stage[]): Evaluated {
  if (stages.length === 0) return { unsupported: 'the command substitution is empty' };
  if (stages.length > MAX_STAGES)
    return { unsupported: `a pipeline of more than ${MAX_STAGES} commands is not evaluated` };
  let output: string | undefined;
  for (const stage of stages) {
    const [name, ...args] = stage.words;
    if (!name) return { unsupported: 'an empty command in the pipeline' };
    const step = output === undefined ? produce(name, args) : filter(name, args, output);
    if ('unsupported' in step) return step;
    if (step.value.length > MAX_OUTPUT) return { unsupported: 'the output is too long to evaluate' };
    output = step.value;
  }
  return { value: output!.replace(/\n+$/, '') };
}

function produce(name: string, args: readonly string[]): Evaluated {
  if (name === 'echo') return echo(args);
  if (name === 'printf') return printf(args);
  return { unsupported: `${name} is not evaluated (only echo or printf start a pipeline that is)` };
}

function filter(name: string, args: readonly string[], input: string): Evaluated {
  switch (name) {
    case 'cut':
      return cut(args, input);
    case 'tr':
      return tr(args, input);
    case 'sed':
      return sed(args, input);
    case 'awk':
    case 'gawk':
    case 'mawk':
      return awk(args, input);
    case 'head':
      return head(args, input);
    case 'rev':
      return args.length === 0
        ? { value: mapLines(input, (line) => [...line].reverse().join('')) }
        : { unsupported: 'rev with arguments is not evaluated' };
    default:
      return { unsupported: `${name} is not evaluated in a pipeline` };
  }
}

/** Apply `f` to each line, keeping the line breaks (a final line without one stays without). */
function mapLines(input: string, f: (line: string) => string | undefined): string {
  const lines = input.split('\n');
  const last = lines.pop()!;
  const out = lines.map((line) => `${f(line) ?? ''}\n`);
  if (last !== '') {
    const mapped = f(last);
    if (mapped !== undefined) out.push(mapped);
  }
  return out.join('');
}

/** bash's builtin echo: `-n` drops the newline, `-e` reads backslash escapes, `-E` does not. */
function echo(args: readonly string[]): Evaluated {
  let newline = true;
  let escapes = false;
  let i = 0;
  for (; i < args.length && /^-[neE]+$/.test(args[i]!); i++) {
    for (const flag of args[i]!.slice(1)) {
      if (flag === 'n') newline = false;
      else escapes = flag === 'e';
    }
  }
  const text = args.slice(i).join(' ');
  return { value: (escapes ? backslashEscapes(text) : text) + (newline ? '\n' : '') };
}

function backslashEscapes(text: string): string {
  return text.replace(/\\([ntr\\])/g, (_, c: string) => ({ n: '\n', t: '\t', r: '\r', '\\': '\\' })[c]!);
}

/** printf FORMAT [ARG…]: %s, %d/%i (integers), %%, and \n \t escapes; the format is reused for extra arguments. */
function printf(args: readonly string[]): Evaluated {
  const [format, ...values] = args;
  if (format === undefined) return { unsupported: 'printf without a format' };
  if (format.startsWith('-')) return { unsupported: `printf ${format} is not evaluated` };
  let out = '';
  let next = 0;
  do {
    let used = 0;
    let failed: string | undefined;
    const text = format.replace(
      /%([%sdi])|\\([nt\\])/g,
      (whole, conversion: string | undefined, escape: string | undefined) => {
        if (escape) return escape === 'n' ? '\n' : escape === 't' ? '\t' : '\\';
        if (conversion === '%') return '%';
        used++;
        const value = values[next++] ?? '';
        if (conversion === 's') return value;
        if (value === '') return '0';
        if (!/^[+-]?\d+$/.test(value)) failed = `printf %${conversion} of "${value}"`;
        return String(Number.parseInt(value, 10));
      },
    );
    if (failed) return { unsupported: `${failed} is not a number` };
    if (/%[^%sdi]/.test(format.replace(/%%/g, '')))
      return { unsupported: 'printf conversions other than %s and %d are not evaluated' };
    out += text;
    if (used === 0) break;
  } while (next < values.length);
  return { value: out };
}

/** One-letter options with a value, attached (`-d.`) or separate (`-d .`), and GNU long forms (`--fields=1,2`). */
function options(
  args: readonly string[],
  withValue: string,
  long: Readonly<Record<string, string>>,
  flags = '',
): { values: Map<string, string>; rest: string[] } | string {
  const values = new Map<string, string>();
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const longMatch = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (longMatch) {
      const short = long[longMatch[1]!];
      if (!short) return `${arg} is not evaluated`;
      if (flags.includes(short)) values.set(short, '');
      else values.set(short, longMatch[2] ?? args[++i] ?? '');
      continue;
    }
    if (arg.startsWith('-') && arg.length > 1) {
      for (let j = 1; j < arg.length; j++) {
        const letter = arg[j]!;
        if (flags.includes(letter)) {
          values.set(letter, '');
          continue;
        }
        if (!withValue.includes(letter)) return `the option -${letter} is not evaluated`;
        const attached = arg.slice(j + 1);
        values.set(letter, attached !== '' ? attached : (args[++i] ?? ''));
        break;
      }
      continue;
    }
    rest.push(arg);
  }
  return { values, rest };
}

/** A cut LIST (`1,2`, `1-3`, `2-`, `-2`): whether position n (1-based) is in it. */
function listOf(list: string): ((n: number) => boolean) | undefined {
  const ranges: [number, number][] = [];
  for (const part of list.split(',')) {
    const match = /^(\d*)(-?)(\d*)$/.exec(part);
    if (!match || (!match[1] && !match[3])) return undefined;
    const from = match[1] ? Number(match[1]) : 1;
    const to = match[2] ? (match[3] ? Number(match[3]) : Infinity) : from;
    if (from < 1 || to < from) return undefined;
    ranges.push([from, to]);
  }
  return (n) => ranges.some(([from, to]) => n >= from && n <= to);
}

/** GNU cut: -d DELIM -f LIST (lines without the delimiter pass whole, unless -s), or -c / -b LIST. */
function cut(args: readonly string[], input: string): Evaluated {
  const parsed = options(
    args,
    'dfcb',
    { delimiter: 'd', fields: 'f', characters: 'c', bytes: 'b', 'only-delimited': 's' },
    's',
  );
  if (typeof parsed === 'string') return { unsupported: `cut: ${parsed}` };
  if (parsed.rest.length > 0) return { unsupported: 'cut reading files is not evaluated' };
  const { values } = parsed;
  const chars = values.get('c') ?? values.get('b');
  if (chars !== undefined) {
    const keep = listOf(chars);
    if (!keep) return { unsupported: `cut -c ${chars} is not a list` };
    return { value: mapLines(input, (line) => [...line].filter((_, i) => keep(i + 1)).join('')) };
  }
  const fields = values.get('f');
  if (fields === undefined) return { unsupported: 'cut without -f or -c' };
  const keep = listOf(fields);
  const delimiter = values.get('d') ?? '\t';
  if (!keep || [...delimiter].length !== 1)
    return { unsupported: `cut -f ${fields} -d '${delimiter}' is not evaluated` };
  const only = values.has('s');
  return {
    value: mapLines(input, (line) => {
      if (!line.includes(delimiter)) return only ? undefined : line;
      return line
        .split(delimiter)
        .filter((_, i) => keep(i + 1))
        .join(delimiter);
    }),
  };
}

const DIGIT = '0123456789';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
/** POSIX character classes by name (a Map: `[:constructor:]` names nothing). */
const CLASSES: ReadonlyMap<string, string> = new Map([
  ['digit', DIGIT],
  ['lower', LOWER],
  ['upper', UPPER],
  ['alpha', LOWER + UPPER],
  ['alnum', DIGIT + LOWER + UPPER],
  ['space', ' \t\n\r\f\v'],
  ['blank', ' \t'],
  ['punct', '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~'],
]);

/** A tr SET as its characters: ranges `a-z`, classes `[:digit:]`, escapes `\.` `\n`. */
function trSet(set: string): string[] | undefined {
  const out: string[] = [];
  for (let i = 0; i < set.length; ) {
    const cls = /^\[:([a-z]+):\]/.exec(set.slice(i));
    if (cls) {
      const chars = CLASSES.get(cls[1]!);
      if (!chars) return undefined;
      out.push(...chars);
      i += cls[0].length;
      continue;
    }
    let c = set[i]!;
    if (c === '\\' && i + 1 < set.length) {
      const e = set[i + 1]!;
      c = e === 'n' ? '\n' : e === 't' ? '\t' : e;
      i += 2;
    } else i++;
    if (set[i] === '-' && i + 1 < set.length) {
      const end = set[i + 1]!;
      if (end.charCodeAt(0) < c.charCodeAt(0)) return undefined;
      for (let code = c.charCodeAt(0); code <= end.charCodeAt(0); code++) out.push(String.fromCharCode(code));
      i += 2;
      continue;
    }
    out.push(c);
  }
  return out;
}

/** tr -d SET, tr SET1 SET2 (SET2 padded with its last character), tr -s is not evaluated. */
function tr(args: readonly string[], input: string): Evaluated {
  if (args[0] === '-d' && args.length === 2) {
    const drop = trSet(args[1]!);
    if (!drop) return { unsupported: `tr -d '${args[1]}' is not evaluated` };
    const set = new Set(drop);
    return { value: [...input].filter((c) => !set.has(c)).join('') };
  }
  if (args.length === 2 && !args[0]!.startsWith('-')) {
    const from = trSet(args[0]!);
    const to = trSet(args[1]!);
    if (!from || !to || to.length === 0) return { unsupported: `tr '${args[0]}' '${args[1]}' is not evaluated` };
    const map = new Map<string, string>();
    from.forEach((c, i) => map.set(c, to[Math.min(i, to.length - 1)]!));
    return { value: [...input].map((c) => map.get(c) ?? c).join('') };
  }
  return { unsupported: `tr ${args.join(' ')} is not evaluated` };
}

/** A POSIX basic (or, with -E, extended) regular expression as a JavaScript one; undefined when it uses more. */
function sedRegex(re: string, extended: boolean): string | undefined {
  let out = '';
  for (let i = 0; i < re.length; i++) {
    const c = re[i]!;
    if (c === '\\') {
      const e = re[++i];
      if (e === undefined) return undefined;
      if (!extended && '(){}+?|'.includes(e))
        out += e; // BRE's \( \) \{ \} (and GNU's \+ \? \|) are operators
      else if (/[1-9]/.test(e)) out += `\\${e}`;
      else if (e === 'n') out += '\\n';
      else if (e === 't') out += '\\t';
      else if (/[.*[\]^$\\/]/.test(e) || !/[A-Za-z0-9]/.test(e)) out += `\\${e}`;
      else return undefined; // \w, \s, \b …: GNU extensions left alone
      continue;
    }
    if (c === '[') {
      const close = re.indexOf(']', re[i + 1] === ']' ? i + 2 : re[i + 1] === '^' && re[i + 2] === ']' ? i + 3 : i + 1);
      if (close < 0) return undefined;
      let body = re.slice(i + 1, close);
      // Inside brackets a backslash is literal in POSIX.
      body = body
        .replace(/\\/g, '\\\\')
        .replace(/\[:([a-z]+):\]/g, (whole, name: string) => CLASSES.get(name)?.replace(/[\\\]^-]/g, '\\$&') ?? whole);
      out += `[${body}]`;
      i = close;
      continue;
    }
    if (!extended && '(){}+?|'.includes(c)) out += `\\${c}`;
    else out += c;
  }
  try {
    new RegExp(out);
  } catch {
    return undefined;
  }
  return out;
}

/** One `s<d>RE<d>REPL<d>FLAGS` command: the regex source, the replacement (JavaScript form) and whether g. */
function sedSubstitution(command: string, extended: boolean): { regex: RegExp; replacement: string } | undefined {
  if (command[0] !== 's' || command.length < 4) return undefined;
  const delimiter = command[1]!;
  const parts: string[] = [];
  let current = '';
  for (let i = 2; i < command.length; i++) {
    const c = command[i]!;
    if (c === '\\' && i + 1 < command.length) {
      const e = command[i + 1]!;
      current += e === delimiter ? e : `\\${e}`;
      i++;
    } else if (c === delimiter && parts.length < 2) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  if (parts.length !== 2) return undefined;
  const [pattern, rawReplacement] = parts as [string, string];
  const flags = current;
  if (!/^g?$/.test(flags)) return undefined;
  const source = sedRegex(pattern, extended);
  if (source === undefined || pattern === '') return undefined;
  let replacement = '';
  for (let i = 0; i < rawReplacement.length; i++) {
    const c = rawReplacement[i]!;
    if (c === '\\' && i + 1 < rawReplacement.length) {
      const e = rawReplacement[++i]!;
      replacement += /[1-9]/.test(e) ? `$${e}` : e === 'n' ? '\n' : e === '$' ? '$$' : e;
    } else if (c === '&') replacement += '$&';
    else if (c === '$') replacement += '$$';
    else replacement += c;
  }
  return { regex: new RegExp(source, flags === 'g' ? 'g' : ''), replacement };
}

/** sed [-E|-r] [-e] 's/…/…/[g]' [; 's/…/…/'…], line by line. */
function sed(args: readonly string[], input: string): Evaluated {
  let extended = false;
  const scripts: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '-E' || arg === '-r' || arg === '--regexp-extended') extended = true;
    else if (arg === '-e' || arg === '--expression') scripts.push(args[++i] ?? '');
    else if (arg.startsWith('--expression=')) scripts.push(arg.slice('--expression='.length));
    else if (arg.startsWith('-')) return { unsupported: `sed ${arg} is not evaluated` };
    else if (scripts.length === 0 && i === args.length - 1) scripts.push(arg);
    else return { unsupported: 'sed reading files is not evaluated' };
  }
  const commands = scripts.flatMap((script) => script.split(/;\s*(?=s)/).map((command) => command.trim()));
  const substitutions = commands.map((command) => sedSubstitution(command, extended));
  if (commands.length === 0 || substitutions.some((substitution) => !substitution))
    return { unsupported: `sed ${scripts.join('; ')} is not a substitution we evaluate` };
  return {
    value: mapLines(input, (line) =>
      substitutions.reduce((text, substitution) => text.replace(substitution!.regex, substitution!.replacement), line),
    ),
  };
}

/** awk [-F SEP] '{print ITEM…}' with ITEMs $N, $0, NF-free string literals; `,` joins with a space. */
function awk(args: readonly string[], input: string): Evaluated {
  let separator: string | undefined;
  let program: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '-F') separator = args[++i];
    else if (arg.startsWith('-F')) separator = arg.slice(2);
    else if (arg.startsWith('-')) return { unsupported: `awk ${arg} is not evaluated` };
    else if (program === undefined) program = arg;
    else return { unsupported: 'awk reading files is not evaluated' };
  }
  const body = program ? /^\s*\{\s*print\s+(.*?)\s*;?\s*\}\s*$/s.exec(program)?.[1] : undefined;
  if (!body) return { unsupported: `awk '${program ?? ''}' is not a print we evaluate` };
  const items: ({ field: number } | { text: string } | { comma: true })[] = [];
  const token = /\s*(?:\$(\d+)|"((?:[^"\\]|\\.)*)"|(,))/y;
  let at = 0;
  while (at < body.length) {
    token.lastIndex = at;
    const match = token.exec(body);
    if (!match) return { unsupported: `awk print ${body} is not evaluated` };
    if (match[1] !== undefined) items.push({ field: Number(match[1]) });
    else if (match[2] !== undefined) items.push({ text: backslashEscapes(match[2]) });
    else items.push({ comma: true });
    at = token.lastIndex;
    if (/^\s*$/.test(body.slice(at))) break;
  }
  // -F: one character is literal (a blank means the default); `\.` and `[.]` are that character; other regexes are
  // not read.
  const sep = separator === undefined || separator === ' ' ? undefined : /^(?:\\(.)|\[(.)\]|([^\\[]))$/.exec(separator);
  if (separator !== undefined && separator !== ' ' && !sep)
    return { unsupported: `awk -F '${separator}' is not evaluated` };
  const literal = sep ? (sep[1] ?? sep[2] ?? sep[3])! : undefined;
  return {
    value: mapLines(input, (line) => {
      const fields =
        literal === undefined
          ? line
              .trim()
              .split(/[ \t]+/)
              .filter(Boolean)
          : line.split(literal);
      return items
        .map((item) =>
          'field' in item
            ? item.field === 0
              ? line
              : (fields[item.field - 1] ?? '')
            : 'text' in item
              ? item.text
              : ' ',
        )
        .join('');
    }),
  };
}

/** head -c N (bytes, ASCII here) or head -n N / -N (lines). */
function head(args: readonly string[], input: string): Evaluated {
  const joined = args.join(' ');
  const chars = /^-c\s*(\d+)$/.exec(joined);
  if (chars) return { value: input.slice(0, Number(chars[1])) };
  const lines = /^(?:-n\s*(\d+)|-(\d+))$/.exec(joined);
  if (lines) {
    const count = Number(lines[1] ?? lines[2]);
    const kept = input.split('\n').slice(0, count);
    return { value: kept.join('\n') + (input.split('\n').length > count ? '\n' : '') };
  }
  return { unsupported: `head ${joined} is not evaluated` };
}
