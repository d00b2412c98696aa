import type { ArgOrigin } from './facts.js';
import type { Span } from './source.js';
import { MappedBuilder, type Mapped } from './mapped.js';
import { evaluatePipeline } from './shell-eval.js';

/** The characters the scanners compare by code (`text.charCodeAt(i)`, never a one-character string per step). */
const TAB = 9;
const LF = 10;
const CR = 13;
const SPACE = 32;
const DOUBLE_QUOTE = 34;
const HASH = 35;
const DOLLAR = 36;
const AMPERSAND = 38;
const SINGLE_QUOTE = 39;
const OPEN_PAREN = 40;
const CLOSE_PAREN = 41;
const DASH = 45;
const DIGIT_0 = 48;
const DIGIT_9 = 57;
const SEMICOLON = 59;
const LESS_THAN = 60;
const GREATER_THAN = 62;
const BACKSLASH = 92;
const BACKTICK = 96;
const PIPE = 124;

/** A shell word after quote removal and parameter expansion, still mapped to the file. */
export interface Word {
  readonly text: string;
  readonly mapped: Mapped;
  /** Where the word is written (annotation position). */
  readonly span: Span;
  /** Set when the word contains a `$VAR` whose value is not known at build-file level. */
  readonly unresolved?: string;
  /**
   * Set on the words of a command read once per value a conditional assignment gives (`when $X is 'torch'`): the
   * command runs with one of them, whichever path the build takes.
   */
  readonly alternative?: string;
}

export type Command = readonly Word[];

/** What a `$NAME` expands to, where it is known. */
export interface Variable {
  readonly value: Mapped;
  /** Where the value is defined (ARG/ENV), for edits that must go to the definition. */
  readonly defined?: Span;
  /** An ARG's default: `--build-arg` gives it another value in a build. */
  readonly buildArg?: boolean;
  /**
   * A build argument that also names the stage's base image (`FROM nvidia/cuda:${CUDA_VERSION}-devel`): a build that
   * gives it another value builds on another image, so with the image the stage is judged on, it has this value.
   */
  readonly choosesImage?: boolean;
}

export type Resolver = (name: string) => Variable | { readonly unresolved: string } | undefined;

/**
 * A variable a script sets on each of its paths (`[ -n "$V" ] && X=a || X=b`, an `if` with an `else` setting it in
 * every branch): not one value, but each of them is known.
 */
interface Alternatives {
  readonly unresolved: string;
  readonly alternatives: readonly Variable[];
}

/**
 * A variable set inside a block on the path a later command of the same branch takes (`then TAG=cu113 && pip install
 * torch==1.13.1+$TAG`): that command sees the value for certain (it runs only after the assignment did); a command
 * after the block, or in another branch, does not.
 */
interface Scoped {
  readonly unresolved: string;
  readonly within: { readonly value: Variable; readonly branch: object };
}

type Local = Variable | { readonly unresolved: string } | Alternatives | Scoped;

/** Commands are read once per combination of alternative values, up to this many; beyond, they are not checked. */
const MAX_ALTERNATIVES = 8;

/** `&`, `|`, `;`, `(`, `)` and a line break: they end a simple command. */
function isOperator(code: number): boolean {
  return (
    code === AMPERSAND ||
    code === PIPE ||
    code === SEMICOLON ||
    code === OPEN_PAREN ||
    code === CLOSE_PAREN ||
    code === LF
  );
}

/** What ends an unquoted word: a blank, an operator, or a redirection. */
function endsWord(code: number): boolean {
  return (
    code === SPACE || code === TAB || code === CR || isOperator(code) || code === GREATER_THAN || code === LESS_THAN
  );
}

function isDigit(code: number): boolean {
  return code >= DIGIT_0 && code <= DIGIT_9;
}

/**
 * Split a (continuation-joined) shell script into simple commands. Not a full POSIX parser: it knows quotes,
 * escapes, `$VAR`/`${VAR}`/`${VAR:-default}`, comments, command separators and redirections, which is what
 * package-manager invocations in build files use. It never throws.
 *
 * Variables the script sets itself (`CU=cu121 && pip install … /whl/$CU`, `export TAG=$(echo $CUDA | tr -d .)`) are
 * known to the commands after them when the assignment always runs: not inside `if`/`case`/loops, not beside `||`,
 * not in a pipeline. Otherwise the name is unresolved, with that reason.
 */
export function splitCommands(script: Mapped, resolve: Resolver): Command[] {
  return splitScript(script, resolve).commands;
}

/**
 * splitCommands, and for each command whether it runs inside an `if`, `case` or loop of the script (`then pip install
 * …`): on some of the script's paths only. A command keeps the reserved word it follows (`then`, `else`, `do`).
 */
export function readCommands(
  script: Mapped,
  resolve: Resolver,
): Pick<SplitScript, 'commands' | 'inBlock' | 'holding' | 'otherBuild' | 'stdout'> {
  const { commands, inBlock, holding, otherBuild, stdout } = splitScript(script, resolve);
  return { commands, inBlock, holding, otherBuild, stdout };
}

/**
 * The commands of a script with each command that runs a command string in a shell of its own (`bash -c "pip install
 * …"`, `sh -ec '…'`, `su user -c "…"`, `sudo -u user bash -lc "…"`) replaced by the commands of that string, read as a
 * script where it is written (the outer shell has already expanded what it quotes in double quotes; the inner one
 * expands what is left, from the same environment). A command inside a block keeps that for the commands it runs.
 */
export function withCommandStrings(
  read: Pick<SplitScript, 'commands' | 'inBlock' | 'holding' | 'otherBuild' | 'stdout'>,
  resolve: Resolver,
  depth = 0,
): Pick<SplitScript, 'commands' | 'inBlock' | 'holding' | 'otherBuild' | 'stdout'> {
  if (depth >= MAX_COMMAND_STRING_DEPTH) return read;
  const strings = read.commands.map((command) => shellRun(command)?.string);
  if (!strings.some((string) => string)) return read;
  const out: Pick<SplitScript, 'commands' | 'inBlock' | 'holding' | 'otherBuild' | 'stdout'> = {
    commands: [],
    inBlock: [],
    holding: [],
    otherBuild: [],
    stdout: [],
  };
  for (const [k, command] of read.commands.entries()) {
    const string = strings[k];
    if (!string) {
      out.commands.push(command);
      out.inBlock.push(read.inBlock[k]!);
      out.holding.push(read.holding[k]);
      out.otherBuild.push(read.otherBuild[k]);
      out.stdout.push(read.stdout[k]);
      continue;
    }
    const inner = withCommandStrings(readCommands(string.mapped, resolve), resolve, depth + 1);
    for (const [j, nested] of inner.commands.entries()) {
      out.commands.push(nested);
      out.inBlock.push(read.inBlock[k]! || inner.inBlock[j]!);
      const held = [...(read.holding[k] ?? []), ...(inner.holding[j] ?? [])];
      out.holding.push(held.length > 0 ? held : undefined);
      const other = [...(read.otherBuild[k] ?? []), ...(inner.otherBuild[j] ?? [])];
      out.otherBuild.push(other.length > 0 ? other : undefined);
      out.stdout.push(inner.stdout[j] ?? read.stdout[k]);
    }
  }
  return out;
}

/** Shells within shells read (`bash -c "sh -c \"…\""`). */
const MAX_COMMAND_STRING_DEPTH = 3;

const SHELLS = new Set(['bash', 'sh', 'dash', 'zsh', 'ash', 'ksh']);
/** What may come before the program: `sudo -u user`, `env A=b`, `time`, and the reserved words a command follows. */
const BEFORE_PROGRAM = new Set([
  ...['sudo', 'env', 'time', 'exec', 'nohup', 'command'],
  ...['then', 'else', 'elif', 'do', 'if', 'while', 'until', '!', '{'],
]);
const CONDA_RUNNERS = /(?:^|\/)(?:conda|mamba|micromamba)$/;
/** `conda run`'s options that take a value (docs.conda.io, "conda run": -n/--name, -p/--prefix, --cwd). */
const CONDA_RUN_VALUE_OPTIONS: ReadonlySet<string> = new Set(['-n', '--name', '-p', '--prefix', '--cwd']);
/** sudo's options that take a value (sudo(8)): `-u user`, `-g group`, … */
const SUDO_VALUE_OPTIONS = /^-[ugpCDhrtTU]$/;
/** A shell script's file name. */
const SCRIPT_FILE = /\.(?:sh|bash)$/;

/** A Python interpreter by name (`python`, `python3`, `python3.11`). */
const PYTHON = /^python(?:\d+(?:\.\d+)?)?$/;

/**
 * A Python script whose name says it installs (`install_dependencies.py`, pytorch/serve's way to install torch, an
 * `install.py`, `setup_env.py`), run as `python <script> …`: a script not read. Other scripts (a model download, a
 * test) are not said: most Python a RUN runs installs nothing.
 */
const INSTALL_SCRIPT = /(?:^|[_-])(?:install|requirements?|dependencies|deps|setup_env|bootstrap)(?:[_-]|\.py$)/i;

function installScript(command: Command, from: number): { readonly script: Word } | undefined {
  for (let j = from; j < command.length; j++) {
    const word = command[j]!;
    if (word.text === '-m' || word.text === '-c') return undefined;
    if (word.text.startsWith('-')) continue;
    const base = word.text.slice(word.text.lastIndexOf('/') + 1);
    return base.endsWith('.py') && INSTALL_SCRIPT.test(base) ? { script: word } : undefined;
  }
  return undefined;
}

/**
 * What a command hands to a shell of its own, if it does: a command string (`string`: a shell's `-c`, bash(1): "-c  If
 * the -c option is present, then commands are read from the first non-option argument command_string", in any cluster
 * of options such as `-lc` or `-ceuxo pipefail`; su's and runuser's `-c COMMAND`, su(1)), or a script file (`script`:
 * `bash /tmp/install_deps.sh`, `./scripts/setup.sh`, `sudo sh install.sh cu121`, `bash $DIR/setup.sh`), whose commands
 * are in a file the Dockerfile's reader does not follow. Not `source`/`.` (they set the shell's environment).
 */
export function shellRun(command: Command): { readonly string?: Word; readonly script?: Word } | undefined {
  let i = 0;
  let sudo = false;
  for (; i < command.length; i++) {
    const text = command[i]!.text;
    if (BEFORE_PROGRAM.has(text) || ASSIGNMENT.test(text)) {
      sudo ||= text === 'sudo';
      continue;
    }
    if (sudo && text.startsWith('-')) {
      if (SUDO_VALUE_OPTIONS.test(text)) i++;
      continue;
    }
    break;
  }
  // `conda run -n env /bin/bash -c "pip install …"`: the shell runs in the environment.
  if (CONDA_RUNNERS.test(command[i]?.text ?? '') && command[i + 1]?.text === 'run')
    for (i += 2; i < command.length && command[i]!.text.startsWith('-'); i++)
      if (CONDA_RUN_VALUE_OPTIONS.has(command[i]!.text)) i++;
  const program = command[i];
  if (program === undefined) return undefined;
  const name = program.text.slice(program.text.lastIndexOf('/') + 1);
  if (SCRIPT_FILE.test(name)) return { script: program };
  if (program.unresolved) return undefined;
  if (PYTHON.test(name)) return installScript(command, i + 1);
  if (name === 'su' || name === 'runuser') {
    for (let j = i + 1; j < command.length; j++) {
      const text = command[j]!.text;
      if (text === '-c' || text === '--command') return command[j + 1] ? { string: command[j + 1] } : undefined;
      if (text.startsWith('--command=')) return undefined; // the value shares the option's word
    }
    return undefined;
  }
  if (!SHELLS.has(name)) return undefined;
  let string = false;
  for (let j = i + 1; j < command.length; j++) {
    const text = command[j]!.text;
    if (text === '--') continue;
    if (/^[-+]-?[A-Za-z]/.test(text)) {
      if (text.startsWith('--')) continue; // --login, --norc, --noprofile
      if (text.slice(1).includes('c')) string = true;
      if (/[oO]/.test(text)) j++; // -o pipefail, -O extglob: the option's name is the next word
      continue;
    }
    if (string) return { string: command[j]! };
    return SCRIPT_FILE.test(text) ? { script: command[j]! } : undefined;
  }
  return undefined;
}

interface SplitScript {
  readonly commands: Command[];
  /** The operator after each command (`&&`, `||`, `|`, `;`, a line break, `&`, `(`, `)`), '' at the end. */
  readonly operators: string[];
  /** Whether a command had a redirection. */
  readonly redirected: boolean[];
  /** Whether a command runs inside an `if`, `case` or loop (on some paths only). */
  readonly inBlock: boolean[];
  /** For a command inside `if`s that the script's known values make true: their conditions, as written. */
  readonly holding: (readonly string[] | undefined)[];
  /**
   * For a command on a branch that runs only in another build (`then` of `if [ "$USE_CUDA" = true ]` after `ARG
   * USE_CUDA=false`): the conditions, as written in `holding`, of the branches that run instead with the known values.
   * A command that holds one of them and this one never run in the same build.
   */
  readonly otherBuild: (readonly string[] | undefined)[];
  /** The file a command's standard output is redirected to (`> FILE`, `>> FILE`, `1> FILE`), as written. */
  readonly stdout: (string | undefined)[];
}

const BLOCK_OPEN = new Set(['if', 'case', 'for', 'while', 'until', 'select']);
const BLOCK_CLOSE = new Set(['fi', 'esac', 'done']);
const BLOCK_INNER = new Set(['then', 'else', 'elif', 'do']);
/** The reserved words that end the branch of an `if` being read. */
const LEAVES_BRANCH = new Set(['else', 'elif']);
const DECLARE = new Set(['export', 'readonly', 'declare', 'typeset', 'local']);
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=/;

function splitScript(script: Mapped, outer: Resolver): SplitScript {
  const text = script.text;
  const commands: Command[] = [];
  const operators: string[] = [];
  const redirected: boolean[] = [];
  const inBlock: boolean[] = [];
  const holding: (readonly string[] | undefined)[] = [];
  const otherBuild: (readonly string[] | undefined)[] = [];
  const stdout: (string | undefined)[] = [];
  const locals = new Map<string, Local>();
  /** The variables with alternative values the command being read refers to. */
  let referenced: Set<string> | undefined;
  const resolve: Resolver = (name) => {
    const local = locals.get(name);
    if (local && 'alternatives' in local) (referenced ??= new Set()).add(name);
    // A command that starts with `else`/`elif` is read before its branch starts (track): the branch it leaves is over.
    if (local && 'within' in local && paths.inBranch(local.within.branch, LEAVES_BRANCH.has(current[0]?.text ?? '')))
      return local.within.value;
    return local ?? outer(name);
  };
  /** Commands to read again once per alternative: where they are, and the variables as they were there. */
  const rereads: { index: number; start: number; end: number; names: string[]; scope: Map<string, Local> }[] = [];
  const paths = new Paths();
  let current: Word[] = [];
  let commandStart = 0;
  let redirect = false;
  /** Whether the word being skipped is the target of a redirection of standard output, and the current command's. */
  let toStdout = false;
  let stdoutTarget: string | undefined;
  let before = '';
  let blocks = 0;
  let i = 0;
  let skipNextWord = false;
  const braces = new ClosingBraces(text);
  const read: WordEnd = { next: 0, split: undefined };

  const endCommand = (operator: string): void => {
    if (current.length > 0) {
      if (referenced && current.some((word) => word.unresolved))
        rereads.push({
          index: commands.length,
          start: commandStart,
          end: i,
          names: [...referenced],
          scope: new Map(locals),
        });
      commands.push(current);
      operators.push(operator);
      redirected.push(redirect);
      stdout.push(stdoutTarget);
      const depth = blocks;
      blocks = track(current, {
        before,
        after: operator,
        blocks,
        locals,
        paths,
        text,
        start: commandStart,
        end: i,
        resolve,
      });
      // `then …` after `if a` is inside the block; `if a` itself (its condition runs) and `fi` are not. A branch the
      // script's own values decide runs for certain (`then` of `if [ "$FLAG" = true ]` with FLAG=true): not in a block.
      const within = depth > 0 && !BLOCK_CLOSE.has(current[0]!.text);
      if (within && paths.dead(depth)) {
        // `elif`/`else` of an `if` the script's own values make true (`if [ "${CUDA_VERSION%%.*}" = "12" ]` under a
        // CUDA 12 image): it never runs with them, so nothing of it is installed.
        commands.pop();
        operators.pop();
        redirected.pop();
        stdout.pop();
        if (rereads.at(-1)?.index === commands.length) rereads.pop();
      } else {
        const held = within ? paths.certain(depth) : undefined;
        inBlock.push(within && !held);
        holding.push(held?.length ? held : undefined);
        otherBuild.push(within ? paths.otherBuild(depth) : undefined);
      }
      before = operator;
    } else if (operator !== '\n' && operator !== ';') before = operator;
    current = [];
    redirect = false;
    stdoutTarget = undefined;
    referenced = undefined;
  };

  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code === SPACE || code === TAB || code === CR) {
      i++;
      continue;
    }
    if (
      code === BACKSLASH &&
      (text.charCodeAt(i + 1) === LF || (text.charCodeAt(i + 1) === CR && text.charCodeAt(i + 2) === LF))
    ) {
      // A backslash before a line break joins the lines (heredoc scripts keep them): it separates nothing.
      i += text.charCodeAt(i + 1) === CR ? 3 : 2;
      continue;
    }
    if (isOperator(code)) {
      const double = (code === AMPERSAND || code === PIPE || code === SEMICOLON) && text.charCodeAt(i + 1) === code;
      endCommand(double ? text.slice(i, i + 2) : text[i]!);
      i += double ? 2 : 1;
      continue;
    }
    if (code === HASH) {
      // `#`: a comment to the end of the line.
      while (i < text.length && text.charCodeAt(i) !== LF) i++;
      continue;
    }
    const following = text.charCodeAt(i + 1);
    if (
      code === GREATER_THAN ||
      code === LESS_THAN ||
      (isDigit(code) && (following === GREATER_THAN || following === LESS_THAN))
    ) {
      // Redirection (`>`, `2>`, `&>`, `<`): skip the operator; its target word is not an argument.
      const operatorStart = i;
      while (i < text.length && isRedirectionChar(text.charCodeAt(i))) i++;
      toStdout = STDOUT_REDIRECTION.test(text.slice(operatorStart, i));
      skipNextWord = true;
      redirect = true;
      continue;
    }
    if (current.length === 0 && !skipNextWord) commandStart = i;
    const word = readWord(script, i, resolve, braces, read);
    i = read.next;
    if (skipNextWord) {
      skipNextWord = false;
      if (toStdout && word && !word.unresolved) stdoutTarget = word.text;
      toStdout = false;
      continue;
    }
    if (!word) continue;
    if (read.split) for (const piece of fieldSplit(word, read.split)) current.push(piece);
    else current.push(word);
  }
  endCommand('');
  // Last first, so the indexes of the earlier ones stay put.
  for (const reread of rereads.reverse()) {
    const expanded = readEachAlternative(script, reread, outer);
    if (expanded) commands.splice(reread.index, 1, ...expanded);
    if (expanded) {
      operators.splice(reread.index, 1, ...expanded.map(() => operators[reread.index]!));
      redirected.splice(reread.index, 1, ...expanded.map(() => redirected[reread.index]!));
      stdout.splice(reread.index, 1, ...expanded.map(() => stdout[reread.index]));
      inBlock.splice(reread.index, 1, ...expanded.map(() => inBlock[reread.index]!));
      holding.splice(reread.index, 1, ...expanded.map(() => holding[reread.index]));
      otherBuild.splice(reread.index, 1, ...expanded.map(() => otherBuild[reread.index]));
    }
  }
  return { commands, operators, redirected, inBlock, holding, otherBuild, stdout };
}

/** The redirections of standard output to a file: `>`, `>>`, `>|`, `1>`, `&>` (not `2>`, `>&2`, `<`). */
const STDOUT_REDIRECTION = /^[1&]?>(?:>|\|)?$/;

/**
 * A command that refers to variables with alternative values, read once per combination of them (at most
 * MAX_ALTERNATIVES), each reading marked with the values it used; undefined when there are more, or a reading is
 * still not known.
 */
function readEachAlternative(
  script: Mapped,
  reread: {
    readonly start: number;
    readonly end: number;
    readonly names: readonly string[];
    readonly scope: ReadonlyMap<string, Local>;
  },
  outer: Resolver,
): Command[] | undefined {
  let combinations: Map<string, Variable>[] = [new Map()];
  for (const name of reread.names) {
    const local = reread.scope.get(name);
    if (!local || !('alternatives' in local)) return undefined;
    combinations = combinations.flatMap((combination) =>
      local.alternatives.map((value) => new Map([...combination, [name, value]])),
    );
    if (combinations.length > MAX_ALTERNATIVES) return undefined;
  }
  const slice = script.slice(reread.start, reread.end);
  const out: Command[] = [];
  for (const combination of combinations) {
    const bound: Resolver = (name) => {
      const value = combination.get(name);
      if (value) return value;
      const local = reread.scope.get(name);
      return local && 'alternatives' in local ? { unresolved: local.unresolved } : (local ?? outer(name));
    };
    const read = splitScript(slice, bound).commands;
    if (read.length !== 1 || read[0]!.some((word) => word.unresolved)) return undefined;
    const alternative = `when ${[...combination].map(([name, value]) => `$${name} is '${value.value.text}'`).join(' and ')}`;
    out.push(read[0]!.map((word) => wordUnder(word, alternative)));
  }
  return out;
}

/**
 * The paths a script's assignments lie on, to tell when every path sets a variable: the `then`, `elif` and `else`
 * branches of each open `if` (and the other blocks, whose paths are not followed), and an `a && X=1 || X=2` pair.
 */
class Paths {
  private readonly open: {
    readonly kind: 'if' | 'other';
    readonly branches: Map<string, Variable | null>[];
    complete: boolean;
    /** The condition of the `if` or `elif` just read, where the script's known values decide it. */
    condition: Condition | undefined;
    /** Whether every condition of the chain so far is false with the file's values: the next one is tested. */
    reached: boolean;
    /** Whether those conditions are false whatever the build arguments. */
    reachedFixed: boolean;
    /** Whether a branch of the chain ran with the file's values: the shell tests and runs nothing after it. */
    settled: boolean;
    /** Whether that branch runs whatever the build arguments: then nothing after it ever runs. */
    settledFixed: boolean;
    /** The condition, as written, of the branch being read where it runs whatever the build. */
    holds: string | undefined;
    /** A `for` loop over known words: its body runs, once with each (loopVariable), said as this. */
    readonly loop?: string;
    /** Whether the branch being read never runs with the script's values. */
    dead: boolean;
    /** The branch being read (a new object at each `then`, `elif`, `else`, `do`), for variables set on it. */
    branch: object;
    /** Which of `branches` runs with the script's values (a build argument may pick another), where one does. */
    held: number | undefined;
    /** The condition, as written in `holds`, of the branch the values pick where a build argument does (not fixed). */
    picked: string | undefined;
    /** The branch being read runs only in another build: conditions, as `holds` writes them, it never runs with. */
    other: string[] | undefined;
  }[] = [];
  /** The assignment of `cmd && X=1` waiting for its `|| X=2`. */
  pendingOr: { readonly name: string; readonly value: Variable | null; readonly test?: Condition } | undefined;
  /**
   * A test command before `&&` (`[ ${#PYTORCH} -gt 0 ] && V=… || V=…`), where the known values decide it: which of the
   * two assignments runs (an assignment alone exits 0, so `||` runs only after a false test).
   */
  pendingTest: Condition | undefined;

  /** A block opens; `condition` is an `if`'s, where the known values decide it. */
  opened(keyword: string, condition?: Condition, loop?: string): void {
    this.open.push({
      kind: keyword === 'if' ? 'if' : 'other',
      ...(loop ? { loop } : {}),
      branches: [],
      complete: false,
      condition,
      reached: true,
      reachedFixed: true,
      settled: false,
      settledFixed: false,
      holds: undefined,
      dead: false,
      branch: {},
      held: undefined,
      picked: undefined,
      other: undefined,
    });
  }

  /**
   * An `if` whose condition goes on after `&&` or `||` (`if [ "$A" = 2 ] && [ "$B" = 7 ]; then`): the next command,
   * a test, is part of it. Undefined where the condition so far is not known: the whole is not.
   */
  chain: { readonly operator: string; readonly so: Condition | undefined } | undefined;

  /** A test of an `if`'s condition after `&&` or `||`: the condition so far with it (`false && x` is false). */
  chained(test: Condition | undefined, after: string): void {
    const top = this.open.at(-1);
    const chain = this.chain;
    this.chain = undefined;
    if (!top || top.kind !== 'if' || !chain) return;
    const so = chain.so;
    let whole: Condition | undefined;
    if (so && (chain.operator === '&&' ? !so.value : so.value)) whole = so;
    else if (so && test)
      whole = {
        value: test.value,
        written: `${so.written} ${chain.operator} ${test.written}`,
        fixed: so.fixed && test.fixed,
      };
    top.condition = after === ';' || after === '\n' ? whole : undefined;
    if (after === '&&' || after === '||') this.chain = { operator: after, so: whole };
  }

  /** The innermost block's branch being read, where it is an `if`'s (a `case` arm is not told from the next). */
  currentBranch(): object | undefined {
    const top = this.open.at(-1);
    return top?.kind === 'if' ? top.branch : undefined;
  }

  /**
   * Whether the commands being read are on that branch (it is still being read, or a block inside it is); `leaving`:
   * the command being read starts the innermost block's next branch.
   */
  inBranch(branch: object, leaving: boolean): boolean {
    const last = this.open.length - 1;
    return this.open.some((block, i) => block.branch === branch && !(leaving && i === last));
  }

  /**
   * `then` and `else` start a branch of the innermost `if`; `elif` tests its own condition, followed by its `then`.
   * A branch runs for certain where its condition holds and every one before it is false; it never runs where its
   * condition is false, or after a branch that ran for certain (`if [ "${CUDA_VERSION%%.*}" = "12" ] … elif … = "13"`
   * under a CUDA 12 image: the `elif` never runs).
   */
  branch(keyword: string, condition?: Condition): void {
    const top = this.open.at(-1);
    if (!top) return;
    top.holds = keyword === 'do' ? top.loop : undefined;
    top.dead = false;
    top.branch = {};
    top.other = undefined;
    if (top.kind !== 'if') return;
    if (keyword === 'elif') {
      // The chain reaches this test only while every condition before it was false.
      const before = top.condition;
      top.reachedFixed = top.reachedFixed && top.reached && before?.value === false && before.fixed;
      top.reached = top.reached && before?.value === false;
      top.condition = condition;
      top.dead = top.settledFixed;
      return;
    }
    top.branches.push(new Map());
    const tested = top.condition;
    // The branch that runs with the script's values: the `then` whose condition holds, or the `else` after every
    // condition of the chain is false (`if [ -n "$URL" ]` after `ARG URL=""`).
    const runs = keyword === 'then' ? tested?.value === true : tested?.value === false;
    if (keyword === 'else') {
      top.complete = true;
      top.dead = top.settledFixed;
    } else if (top.settledFixed || (tested?.value === false && tested.fixed)) {
      // A branch whose condition is false, or after one that ran, never runs; where a build argument decides that
      // (its default makes the condition false), another build may run it: it may or may not run.
      top.dead = true;
      return;
    }
    // A branch that runs only where a build argument changes what the values pick: a `then` whose condition its default
    // makes false runs only where that condition holds, so never with a command that holds `! condition` (the `else`);
    // a branch after the one the values pick, only where that one's condition is false.
    if (keyword === 'then' && tested?.value === false && !tested.fixed) (top.other ??= []).push(`! ${tested.written}`);
    if (top.picked !== undefined) (top.other ??= []).push(top.picked);
    if (runs && top.reached && !top.settled) {
      top.holds = keyword === 'then' ? tested!.written : `! ${tested!.written}`;
      top.settled = true;
      top.settledFixed = tested!.fixed && top.reachedFixed;
      top.held = top.branches.length - 1;
      if (!top.settledFixed) top.picked = top.holds;
    }
  }

  /**
   * The conditions, as `holds` writes them, of the branches that run instead of those of the outermost `depth` blocks
   * being read, where those run only in another build (undefined where none does).
   */
  otherBuild(depth: number): string[] | undefined {
    let other: string[] | undefined;
    for (let k = 0; k < depth && k < this.open.length; k++) {
      const conditions = this.open[k]!.other;
      if (conditions) (other ??= []).push(...conditions);
    }
    return other;
  }

  /**
   * Whether the outermost `depth` blocks are all on branches that run for certain, and then the conditions that make
   * them so (undefined where one may not run).
   */
  certain(depth: number): string[] | undefined {
    const held: string[] = [];
    for (let k = 0; k < depth && k < this.open.length; k++) {
      const block = this.open[k]!;
      if (block.holds === undefined) return undefined;
      held.push(block.holds);
    }
    return held;
  }

  /** Whether one of the outermost `depth` blocks is on a branch that never runs with the script's values. */
  dead(depth: number): boolean {
    for (let k = 0; k < depth && k < this.open.length; k++) if (this.open[k]!.dead) return true;
    return false;
  }

  /** An assignment on the innermost block's current branch; false when it lies on no branch this class follows. */
  assigned(name: string, value: Variable | null): boolean {
    const top = this.open.at(-1);
    const branch = top?.kind === 'if' ? top.branches.at(-1) : undefined;
    if (!branch) return false;
    branch.set(name, value);
    return true;
  }

  /** The variables set on every branch of a block that closes, with their values (an `if` with an `else` only). */
  closed(): Map<string, Variable[]> {
    const block = this.open.pop();
    const set = new Map<string, Variable[]>();
    if (block?.kind !== 'if') return set;
    // A branch the script's values pick (`else` of `if [ "$MAJOR" = "2" ]` where MAJOR is 1 by an ARG's default): the
    // value its own values give, as an ARG's default is (another build argument may give another).
    const held = block.held === undefined ? undefined : block.branches[block.held];
    if (held) {
      for (const [name, value] of held) if (value) set.set(name, [{ ...value, buildArg: true }]);
      return set;
    }
    if (!block.complete || block.branches.length < 2) return set;
    for (const name of block.branches[0]!.keys()) {
      const values = block.branches.map((branch) => branch.get(name));
      if (values.every((value): value is Variable => value !== undefined && value !== null)) set.set(name, values);
    }
    return set;
  }
}

/** Distinct values, by text, in the order first met. */
function distinct(values: readonly Variable[]): Variable[] {
  const seen = new Set<string>();
  return values.filter((value) => !seen.has(value.value.text) && (seen.add(value.value.text), true));
}

/** Where a command stands: the operators around it, the block depth, the variables so far, the paths open. */
interface Surroundings {
  readonly before: string;
  readonly after: string;
  readonly blocks: number;
  readonly locals: Map<string, Local>;
  readonly paths: Paths;
  /** The script, and where the command is written in it (for the condition an `if` is decided by). */
  readonly text: string;
  readonly start: number;
  readonly end: number;
  /** How the script reads a variable there. */
  readonly resolve: Resolver;
}

/** A condition of an `if` or `elif` the script's known values decide: true or false, and as written. */
interface Condition {
  readonly value: boolean;
  readonly written: string;
  /**
   * Whether no build argument decides it: its values are ENV's, the image's or the script's own. One an ARG's
   * default decides (`[ "$FLAG" = true ]` with `ARG FLAG=false`) goes the other way with `--build-arg FLAG=true`.
   */
  readonly fixed: boolean;
}

/**
 * The condition of an `if` or `elif` (the words after the keyword), where the values the script knows decide it:
 * `[ "$FLAG" = "true" ]`, `[[ $X == 1 ]]`, `test -n "$X"`, `$FLAG` (the command `true` or `false`), each maybe after
 * `!`. Only a condition that ends at `;` or a line break (no `&&`, `||` or pipeline) and whose every word is known;
 * anything else is undefined: its branch may or may not run.
 */
function conditionOf(condition: readonly Word[], where: Surroundings, chained = false): Condition | undefined {
  if (!chained && where.after !== ';' && where.after !== '\n') return undefined;
  if (condition.length === 0 || condition.some((word) => word.unresolved)) return undefined;
  const texts = condition.map((word) => word.text);
  const negated = texts[0] === '!';
  const words = negated ? texts.slice(1) : texts;
  let holds: boolean | undefined;
  if (words.length === 1 && (words[0] === 'true' || words[0] === 'false')) holds = words[0] === 'true';
  else if (words[0] === '[' && words.at(-1) === ']') holds = testHolds(words.slice(1, -1), false);
  else if (words[0] === '[[' && words.at(-1) === ']]') holds = testHolds(words.slice(1, -1), true);
  else if (words[0] === 'test') holds = testHolds(words.slice(1), false);
  if (holds === undefined) return undefined;
  const written = where.text
    .slice(where.start, where.end)
    .replace(/^\s*(?:(?:then|else|do)\s+)?(?:el)?if\s+/, '')
    .trim();
  const names = [...where.text.slice(where.start, where.end).matchAll(/\$\{?([A-Za-z_]\w*)/g)].map((m) => m[1]!);
  // A build argument decides it for the image it names too (`if [ "${CUDA_VERSION%%.*}" = "12" ]` in a stage FROM
  // nvidia/cuda:${CUDA_VERSION}-…): judged with that image, it goes the way the ARG's default takes it.
  const fixed = names.every((name) => fixedForImage(where.resolve(name)));
  return { value: holds !== negated, written: written.length > 60 ? `${written.slice(0, 57)}...` : written, fixed };
}

/**
 * Whether a variable's value is the one the judged image is built with: known, and not a build argument's default
 * that another build may replace (unless that argument names the image too, Variable.choosesImage).
 */
function fixedForImage(variable: ReturnType<Resolver>): boolean {
  return variable !== undefined && 'value' in variable && (!variable.buildArg || variable.choosesImage === true);
}

/** What `test` gives for these operands: only the string and integer comparisons (POSIX test), else undefined. */
function testHolds(operands: readonly string[], doubleBracket: boolean): boolean | undefined {
  const [a, operator, b] = operands;
  if (operands.length === 1) return a !== '';
  if (operands.length === 2 && a === '-n') return operator !== '';
  if (operands.length === 2 && a === '-z') return operator === '';
  if (operands.length !== 3 || a === undefined || b === undefined) return undefined;
  // In `[[ … ]]` the right side of `==` is a pattern: one with pattern characters is not compared here.
  if (doubleBracket && /[*?[]/.test(b)) return undefined;
  if (operator === '=' || operator === '==') return a === b;
  if (operator === '!=') return a !== b;
  const integer = /^-?\d+$/;
  if (!integer.test(a) || !integer.test(b)) return undefined;
  const [x, y] = [Number(a), Number(b)];
  if (operator === '-eq') return x === y;
  if (operator === '-ne') return x !== y;
  if (operator === '-gt') return x > y;
  if (operator === '-ge') return x >= y;
  if (operator === '-lt') return x < y;
  if (operator === '-le') return x <= y;
  return undefined;
}

const CONDITIONAL = (name: string): string =>
  `$${name} is set conditionally in this RUN (in an if, case or loop, or beside || or |), so its value depends on the build`;

/**
 * After a command: the block depth it leaves, and the variables it sets. `NAME=value` alone (or after `export`) sets
 * a shell variable; before a command it is that command's environment only, which sets nothing here. A variable set
 * on every path of an `if … else … fi`, or by `cmd && X=1 || X=2`, has each of those values (Alternatives).
 */
function track(command: Command, where: Surroundings): number {
  const { before, after, blocks, locals, paths } = where;
  let words = command;
  const depth = blocks;
  const first = words[0]!.text;
  const test = paths.pendingTest;
  paths.pendingTest = undefined;
  if (paths.chain && !BLOCK_INNER.has(first) && !BLOCK_OPEN.has(first) && !BLOCK_CLOSE.has(first)) {
    paths.chained(conditionOf(words, where, true), after);
    return depth;
  }
  paths.chain = undefined;
  if (BLOCK_OPEN.has(first)) {
    const loop = first === 'for' ? loopVariable(words, locals) : undefined;
    // `while read line; do …`: the loop's variable is each line read.
    if ((first === 'while' || first === 'until') && words[1]?.text === 'read') readVariables(words.slice(1), locals);
    const chained = first === 'if' && (after === '&&' || after === '||');
    const condition = first === 'if' ? conditionOf(words.slice(1), where, chained) : undefined;
    paths.opened(first, condition, loop);
    if (chained) paths.chain = { operator: after, so: condition };
    paths.pendingOr = undefined;
    return depth + 1;
  }
  if (BLOCK_CLOSE.has(first)) {
    for (const [name, values] of paths.closed())
      locals.set(
        name,
        values.length === 1 ? values[0]! : { unresolved: CONDITIONAL(name), alternatives: distinct(values) },
      );
    paths.pendingOr = undefined;
    return Math.max(0, depth - 1);
  }
  if (BLOCK_INNER.has(first)) {
    paths.branch(first, first === 'elif' ? conditionOf(words.slice(1), where) : undefined);
    words = words.slice(1);
    // `then if b` opens a block inside the branch.
    if (words.length > 0 && BLOCK_OPEN.has(words[0]!.text)) {
      paths.opened(words[0]!.text, words[0]!.text === 'if' ? conditionOf(words.slice(1), where) : undefined);
      paths.pendingOr = undefined;
      return depth + 1;
    }
  }
  if (words.length === 0) return depth;
  if (DECLARE.has(words[0]!.text)) words = words.slice(1).filter((word) => !word.text.startsWith('-'));
  else if (!words.every((word) => ASSIGNMENT.test(word.text))) {
    if (words[0]!.text === 'read') readVariables(words, locals);
    paths.pendingOr = undefined;
    if (depth === 0 && after === '&&' && before !== '&&' && before !== '||' && before !== '|')
      paths.pendingTest = conditionOf(words, where, true);
    return depth;
  }
  const unsure =
    before === '||' || after === '||' || before === '|' || after === '|' || after === '&' || before === '(';
  const conditional = depth > 0 || unsure;
  const pending = paths.pendingOr;
  paths.pendingOr = undefined;
  // A value read from a variable (`V=$FLAG`, `V=$(…)`) may come from a build argument: an `if` it decides is not
  // taken to be decided whatever the build (Condition.fixed).
  const written = where.text.slice(where.start, where.end);
  const expanded = /[$`]/.test(written);
  // Unless every variable it reads names the stage's image too (`MAJOR=${CUDA_VERSION%%.*}`), and it runs nothing:
  // worked out for the first assignment, as most commands assign nothing.
  let tied: boolean | undefined;
  const tiedToImage = (): boolean => {
    if (tied !== undefined) return tied;
    const read = expanded && !/`|\$\(/.test(written) ? [...written.matchAll(/\$\{?([A-Za-z_]\w*)/g)] : [];
    return (tied = read.length > 0 && read.every((match) => fixedForImage(where.resolve(match[1]!))));
  };
  for (const word of words) {
    const match = ASSIGNMENT.exec(word.text);
    if (!match) continue;
    const name = match[1]!;
    const value: Variable | null = word.unresolved
      ? null
      : {
          value: word.mapped.slice(match[0].length),
          defined: word.span,
          ...(expanded ? { buildArg: true, ...(tiedToImage() ? { choosesImage: true } : {}) } : {}),
        };
    if (conditional) {
      // Inside a block, not beside `||`, `|` or `&`: a later command of the branch sees the value.
      const branch = depth > 0 && !unsure ? paths.currentBranch() : undefined;
      locals.set(name, {
        unresolved: CONDITIONAL(name),
        ...(branch && value ? { within: { value, branch } } : {}),
      });
      const single = words.length === 1;
      if (depth > 0 && single) paths.assigned(name, value);
      else if (depth === 0 && single && before === '&&' && after === '||')
        paths.pendingOr = { name, value, ...(test ? { test } : {}) };
      else if (
        depth === 0 &&
        single &&
        before === '||' &&
        after !== '||' &&
        after !== '&&' &&
        after !== '|' &&
        after !== '&' &&
        pending?.name === name &&
        pending.value &&
        value
      )
        locals.set(
          name,
          pending.test
            ? // The test's known values pick one, as an ARG's default does (another build argument may pick the other).
              { ...(pending.test.value ? pending.value : value), buildArg: true }
            : { unresolved: CONDITIONAL(name), alternatives: distinct([pending.value, value]) },
        );
    } else if (word.unresolved)
      locals.set(name, {
        unresolved: `$${name} is set from a value only known when the build runs: ${word.unresolved.replace(/, only known when the build runs$/, '')}`,
      });
    else locals.set(name, value!);
  }
  return depth;
}

/** `read` options whose value is the next word (bash's `read [-ers] [-a aname] [-d delim] [-i text] [-n nchars] …`). */
const READ_VALUES = /^-[a-zA-Z]*[adinNptu]$/;

/**
 * `read [options] NAME…` (and `read -a NAME`): the variables it sets from its input (`<<< "$TORCH"`, a pipe, a file),
 * which is read when the build runs: said so where a command reads them, rather than that nothing defines them.
 */
function readVariables(words: Command, locals: Map<string, Local>): void {
  const names: string[] = [];
  for (let at = 1; at < words.length; at++) {
    const text = words[at]!.text;
    if (text.startsWith('-')) {
      const option = READ_VALUES.exec(text);
      if (option && text.endsWith('a')) names.push(words[at + 1]?.text ?? '');
      if (option) at++;
      continue;
    }
    names.push(text);
  }
  for (const name of names)
    if (/^[A-Za-z_]\w*$/.test(name))
      locals.set(name, {
        unresolved: `$${name} is set by read in this RUN, from input only known when the build runs`,
      });
}

/**
 * `for NAME in WORD…`: the loop runs its body once with each word, so a command that reads `$NAME` is read once per
 * value where every word is known and no pattern (`for f in requirements-a.txt requirements-b.txt`), and the body runs
 * for certain (what it returns says so); otherwise `$NAME` is said to be the loop's, whose values are only known when
 * the build runs (a command's output, a pattern of files, a variable not known), rather than not defined.
 */
function loopVariable(words: Command, locals: Map<string, Local>): string | undefined {
  const name = words[1]?.text;
  if (name === undefined || !/^[A-Za-z_]\w*$/.test(name)) return undefined;
  const list = words[2]?.text === 'in' ? words.slice(3) : undefined;
  const values = list?.filter((word) => word.text !== '');
  if (
    values &&
    values.length > 0 &&
    values.length <= MAX_ALTERNATIVES &&
    values.every((word) => !word.unresolved && !/[*?[]/.test(word.text))
  ) {
    locals.set(name, {
      unresolved: `$${name} is the variable of a for loop of this RUN`,
      alternatives: distinct(values.map((word) => ({ value: word.mapped, defined: word.span }))),
    });
    const over = values.map((word) => word.text).join(' ');
    return `for ${name} in ${over.length > 50 ? `${over.slice(0, 47)}...` : over}`;
  }
  const over = list ? list.map((word) => word.text).join(' ') : '"$@"';
  const shown = over.length > 60 ? `${over.slice(0, 57)}...` : over;
  // Known words past the budget of alternatives are known, but not read each: said so, not called unknown.
  const many = values !== undefined && values.length > MAX_ALTERNATIVES && values.every((word) => !word.unresolved);
  locals.set(name, {
    unresolved: many
      ? `$${name} is the variable of a for loop of this RUN over ${values.length} values, more than the ${MAX_ALTERNATIVES} a command is read with`
      : `$${name} is the variable of a for loop of this RUN over ${shown}, whose values are only known when the build runs`,
  });
  return undefined;
}

/**
 * The value of `$(…)` or `` `…` `` where it is a pure pipeline of known values (shell-eval.ts), as text computed
 * at the reference; otherwise why not.
 */
function commandOutput(
  inner: Mapped,
  resolve: Resolver,
  reference: Span,
  quote: 'dollar' | 'backquote' = 'dollar',
): { value: Mapped } | { unresolved: string } {
  const written = inner.text.trim();
  const shown = quote === 'backquote' ? `\`${written}\`` : `$(${written})`;
  const runtime = `${shown} is the output of a command, only known when the build runs`;
  if (/^\(/.test(shown) || shown.length > 1000) return { unresolved: runtime };
  const split = splitScript(inner, resolve);
  if (split.commands.length === 0) return { unresolved: runtime };
  const unresolved = split.commands.flat().find((word) => word.unresolved);
  if (unresolved)
    return { unresolved: `${shown} is computed from a value only known when the build runs: ${unresolved.unresolved}` };
  if (split.operators.slice(0, -1).some((operator) => operator !== '|') || split.redirected.some(Boolean))
    return { unresolved: `${shown} is not a plain pipeline, so it is only known when the build runs` };
  const result = evaluatePipeline(split.commands.map((command) => ({ words: command.map((word) => word.text) })));
  if ('unsupported' in result)
    return { unresolved: `${shown} is only known when the build runs (not evaluated: ${result.unsupported})` };
  return { value: synthetic(result.value, reference, '$(…)') };
}

/** Where the word readWord read ends, and the ranges of it that unquoted expansions brought in. */
interface WordEnd {
  next: number;
  split: [number, number][] | undefined;
}

/**
 * The word at `startIndex` (undefined when there is none: an empty word at an operator), with where it ends and
 * its expansions' ranges written to `wordEnd` (a record the caller reuses: a script has thousands of words).
 */
function readWord(
  script: Mapped,
  startIndex: number,
  resolve: Resolver,
  braces: ClosingBraces,
  wordEnd: WordEnd,
): Word | undefined {
  const text = script.text;
  // Built only for words with quotes, escapes or expansions; a plain word is a slice of the script.
  let out: MappedBuilder | undefined;
  /** Where unquoted expansions landed in the word: the shell splits their values at blanks (`pip install $PKGS`). */
  let split: [number, number][] | undefined;
  let i = startIndex;
  let quote = 0; // the open quote (DOUBLE_QUOTE or SINGLE_QUOTE), 0 outside quotes
  let unresolved: string | undefined;
  // Runs of ordinary characters are copied as one piece; only quotes, escapes and `$` break a run. (No closures
  // here: they would be allocated for every word of the script.)
  let runStart = i;

  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (quote === 0) {
      if (endsWord(code)) break;
      if (code === DOUBLE_QUOTE || code === SINGLE_QUOTE) {
        out = flushRun(script, out, runStart, i);
        quote = code;
        runStart = ++i;
        continue;
      }
      if (code === BACKSLASH && i + 1 < text.length) {
        out = flushRun(script, out, runStart, i);
        const joined = lineBreakAfter(text, i);
        // `\` + line break is removed (a continued line); `\x` is x.
        runStart = joined > 0 ? i + joined : i + 1;
        i += joined > 0 ? joined : 2;
        continue;
      }
      if (code === BACKTICK) {
        // `…` command substitution: evaluated when it is a pure pipeline of known values, else only known when the
        // build runs.
        const close = text.indexOf('`', i + 1);
        const end = close < 0 ? text.length : close + 1;
        out = flushRun(script, out, runStart, i);
        const output =
          close < 0 ? undefined : commandOutput(script.slice(i + 1, close), resolve, script.site(i, end), 'backquote');
        if (output && 'value' in output) out = pushPiece(out, output.value);
        else {
          unresolved ??=
            output?.unresolved ??
            `\`${text.slice(i + 1, end)}\` is the output of a command, only known when the build runs`;
          out = pushPiece(out, script.slice(i, end));
        }
        i = end;
        runStart = i;
        continue;
      }
    } else if (code === quote) {
      out = flushRun(script, out, runStart, i);
      quote = 0;
      runStart = ++i;
      continue;
    } else if (
      quote === DOUBLE_QUOTE &&
      code === BACKSLASH &&
      i + 1 < text.length &&
      (escapableInDoubleQuotes(text.charCodeAt(i + 1)) || lineBreakAfter(text, i) > 0)
    ) {
      out = flushRun(script, out, runStart, i);
      const joined = lineBreakAfter(text, i);
      runStart = joined > 0 ? i + joined : i + 1;
      i += joined > 0 ? joined : 2;
      continue;
    }
    if (code === DOLLAR && quote !== SINGLE_QUOTE) {
      const expansion = readExpansion(script, i, resolve, braces);
      if (expansion) {
        out = flushRun(script, out, runStart, i);
        if ('unresolved' in expansion) {
          unresolved ??= expansion.unresolved;
          out = pushPiece(out, script.slice(i, expansion.next));
        } else {
          const at = out?.length ?? 0;
          out = pushPiece(out, expansion.value);
          if (quote === 0 && /[ \t\n]/.test(expansion.value.text))
            (split ??= []).push([at, at + expansion.value.length]);
        }
        i = expansion.next;
        runStart = i;
        continue;
      }
    }
    i++;
  }
  wordEnd.split = split;
  if (i === startIndex) {
    wordEnd.next = i + 1;
    return undefined;
  }
  wordEnd.next = i;
  const plain = out === undefined && runStart === startIndex;
  if (plain) return new ScriptWord(text.slice(startIndex, i), script, startIndex, i, undefined, unresolved);
  const mapped = (flushRun(script, out, runStart, i) ?? new MappedBuilder()).build();
  return new ScriptWord(mapped.text, script, startIndex, i, mapped, unresolved);
}

/**
 * A word as readWord read it: its text at once, and where it lives in the file (`mapped`, `span`) when first asked.
 * Most words of a script are never asked (`mkdir -p /src`, the options of `apt-get`), and a script has thousands:
 * making both for each (Mapped's `site` and `slice`) was about 3 % of a check of Dockerfiles alone (a CPU profile of
 * `test/bench/steady.ts`). A plain word's mapping is the script's own, from `from` to `to`.
 */
class ScriptWord implements Word {
  private spanOf: Span | undefined;

  constructor(
    readonly text: string,
    private readonly script: Mapped,
    private readonly from: number,
    private readonly to: number,
    private mappedOf: Mapped | undefined,
    readonly unresolved: string | undefined,
  ) {}

  get mapped(): Mapped {
    return (this.mappedOf ??= this.script.slice(this.from, this.to));
  }

  get span(): Span {
    return (this.spanOf ??= this.script.site(this.from, this.to));
  }
}

/** A word with the alternative it is read under (`when $X is 'torch'`): its text, mapping and site as they are. */
function wordUnder(word: Word, alternative: string): Word {
  return {
    text: word.text,
    mapped: word.mapped,
    span: word.span,
    ...(word.unresolved ? { unresolved: word.unresolved } : {}),
    alternative,
  };
}

/** `piece` added to a word being built (started here when it is the word's first piece). */
function pushPiece(out: MappedBuilder | undefined, piece: Mapped): MappedBuilder {
  (out ??= new MappedBuilder()).pushMapped(piece);
  return out;
}

/** The run of ordinary characters from `runStart` to `to` added to a word being built, if there is one. */
function flushRun(
  script: Mapped,
  out: MappedBuilder | undefined,
  runStart: number,
  to: number,
): MappedBuilder | undefined {
  return to > runStart ? pushPiece(out, script.slice(runStart, to)) : out;
}

/** A word cut at the blanks its unquoted expansions brought in (`$PKGS` = "torch==2.3.0 torchvision" is two words). */
function fieldSplit(word: Word, ranges: readonly (readonly [number, number])[]): Word[] {
  const text = word.text;
  const cuts: number[] = [];
  for (const [from, to] of ranges)
    for (let i = from; i < to; i++) if (text[i] === ' ' || text[i] === '\t' || text[i] === '\n') cuts.push(i);
  const words: Word[] = [];
  let start = 0;
  for (const cut of [...cuts, text.length]) {
    if (cut > start) {
      const mapped = word.mapped.slice(start, cut);
      words.push({
        text: mapped.text,
        mapped,
        span: mapped.site(0, mapped.length),
        ...(word.unresolved ? { unresolved: word.unresolved } : {}),
      });
    }
    start = cut + 1;
  }
  return words;
}

type Expansion = { value: Mapped; next: number } | { unresolved: string; next: number };

/**
 * The `}` that closes a `${` at or after a position. It remembers its last answer: a search from `from` that
 * found the first `}` at `close` answers every position between them, so a script full of unclosed `${` is
 * searched once rather than once per `${`.
 */
class ClosingBraces {
  private from = -1;
  private close = -1;

  constructor(private readonly text: string) {}

  after(from: number): number {
    if (this.from < 0 || from < this.from || (this.close >= 0 && from > this.close)) {
      this.from = from;
      this.close = this.text.indexOf('}', from);
    }
    return this.close;
  }
}

/** 2 or 3 when a backslash at `at` is followed by a line break (`\n` or `\r\n`), else 0. */
function lineBreakAfter(text: string, at: number): number {
  const next = text.charCodeAt(at + 1);
  if (next === LF) return 2;
  if (next === CR && text.charCodeAt(at + 2) === LF) return 3;
  return 0;
}

/** The `)` that closes the `(` at `open` (quotes and nesting followed), or -1. */
function closingParen(text: string, open: number): number {
  let depth = 0;
  let quote = 0;
  for (let i = open; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (quote !== 0) {
      if (code === quote) quote = 0;
      else if (code === BACKSLASH && quote === DOUBLE_QUOTE) i++;
      continue;
    }
    if (code === SINGLE_QUOTE || code === DOUBLE_QUOTE) quote = code;
    else if (code === BACKSLASH) i++;
    else if (code === OPEN_PAREN) depth++;
    else if (code === CLOSE_PAREN && --depth === 0) return i;
  }
  return -1;
}

/** The `}` closing a `${` whose body starts at `from`, with `${…}` nested in it; -1 when there is none. */
function closingBrace(text: string, from: number, braces: ClosingBraces): number {
  let close = braces.after(from);
  // A nested `${…}` (a default such as `${A:-${B}}`) closes first: take the next `}` for each one opened inside.
  for (
    let open = text.indexOf('${', from);
    close >= 0 && open >= 0 && open < close;
    open = text.indexOf('${', open + 2)
  )
    close = text.indexOf('}', close + 1);
  return close;
}

const PARAMETER = /^([A-Za-z_][A-Za-z0-9_]*)([\s\S]*)$/;
/** A variable's name where `lastIndex` points (`$NAME`), up to 64 characters. */
const NAME_AT = /[A-Za-z_][A-Za-z0-9_]{0,63}/y;

/**
 * `$NAME`, `${NAME}` and the bash parameter expansions people put in build files: defaults (`${A:-x}`, `${A-x}`,
 * `${A:=x}`), alternatives (`${A:+x}`), prefix and suffix removal (`${A#p}`, `${A##p}`, `${A%p}`, `${A%%p}`),
 * substitution (`${A/p/r}`, `${A//p/r}`, `${A/#p/r}`, `${A/%p/r}`), substrings (`${A:1:3}`), case (`${A^^}`) and
 * length (`${#A}`). Each is evaluated when the value is known; otherwise the word is unresolved, with the reason,
 * and nothing is made up from the unexpanded text. `$(…)` is a command's output: always unresolved.
 */
function readExpansion(script: Mapped, at: number, resolve: Resolver, braces: ClosingBraces): Expansion | undefined {
  const text = script.text;
  if (text[at + 1] === '(') {
    const close = closingParen(text, at + 1);
    const next = close < 0 ? text.length : close + 1;
    const inner = text.slice(at + 2, close < 0 ? next : close).replace(/^\(|\)$/g, '');
    if (close < 0 || text[at + 2] === '(')
      return { unresolved: `$(${inner}) is the output of a command, only known when the build runs`, next };
    const output = commandOutput(script.slice(at + 2, close), resolve, script.site(at, next));
    return { ...output, next };
  }
  if (text[at + 1] !== '{') {
    // A positional or special parameter (`"$1"` after `set -- /tmp/wheels/triton-*.whl`, `$@`, `$?`): its value is the
    // script's own, only known when the build runs.
    const special = /^[0-9@*#?$!-]/.exec(text[at + 1] ?? '')?.[0];
    if (special)
      return {
        unresolved: `$${special} is a parameter of the running script (its arguments, \`set --\`), only known when the build runs`,
        next: at + 2,
      };
    NAME_AT.lastIndex = at + 1;
    const match = NAME_AT.exec(text);
    if (!match) return undefined;
    const name = match[0];
    const next = at + 1 + name.length;
    const value = known(resolve, name);
    if ('value' in value) return { value: viaArg(value.value, { name, reference: script.site(at, next) }), next };
    return { unresolved: value.unresolved, next };
  }
  const close = closingBrace(text, at + 2, braces);
  if (close < 0) return undefined;
  const next = close + 1;
  const body = text.slice(at + 2, close);
  const reference = script.site(at, next);
  const length = /^#([A-Za-z_][A-Za-z0-9_]*)$/.exec(body);
  if (length) {
    const value = known(resolve, length[1]!);
    return 'value' in value
      ? { value: synthetic(String(value.value.length), reference, length[1]!), next }
      : { unresolved: value.unresolved, next };
  }
  const match = PARAMETER.exec(body);
  if (!match) return { unresolved: `\${${body}} uses shell features that are only evaluated at build time`, next };
  const name = match[1]!;
  const rest = match[2]!;
  const bodyStart = at + 2 + name.length;
  const value = known(resolve, name);
  const origin = { name, reference };
  const fromValue = (mapped: Mapped): Expansion => ({ value: viaArg(mapped, origin), next });
  if (rest === '') return 'value' in value ? fromValue(value.value) : { unresolved: value.unresolved, next };

  const operator = /^(:?[-=+?])/.exec(rest)?.[1];
  if (operator) {
    // The word after the operator has its quotes removed (`${V:+"nvidia/cuda:${V}-devel"}`), as the shell and
    // BuildKit's lexer (processDollar, then processStopOn with quote handling) both do.
    const word = expandWord(script.slice(bodyStart + operator.length, close), resolve, true);
    const colon = operator.startsWith(':');
    const set = 'value' in value && (!colon || value.value.length > 0);
    const kind = operator.slice(-1);
    if (kind === '+') {
      if (set) return 'unresolved' in word ? { unresolved: word.unresolved, next } : { value: word.value, next };
      return 'value' in value ? { value: script.slice(close, close), next } : { unresolved: value.unresolved, next };
    }
    if (set) return fromValue((value as { value: Mapped }).value);
    if (kind === '?') return { unresolved: `\${${body}} stops the build when ${name} is not set`, next };
    // A default applies when the value is unset (or empty, with a colon), and documents what the build means when
    // an ARG has no default (`--build-arg` not given).
    return 'unresolved' in word ? { unresolved: word.unresolved, next } : { value: word.value, next };
  }
  if (!('value' in value)) return { unresolved: value.unresolved, next };
  const current = value.value;
  if (current.length > MAX_EVALUATED) return { unresolved: `\${${body}} is not evaluated on a value this long`, next };
  const removal = /^(##?|%%?)([\s\S]*)$/.exec(rest);
  if (removal) {
    const pattern = globRegex(quotedLiterally(removal[2]!));
    if (!pattern) return { unresolved: `\${${body}} uses a pattern that is only evaluated at build time`, next };
    const [from, to] = removeMatch(current.text, pattern, removal[1]!);
    return fromValue(current.slice(from, to));
  }
  const substitution = /^\/(\/|#|%)?((?:\\.|'[^']*'|"(?:\\.|[^"\\])*"|[^/])*)(?:\/([\s\S]*))?$/.exec(rest);
  if (substitution) {
    const pattern = globRegex(quotedLiterally(substitution[2]!));
    const replacement = substitution[3] ?? '';
    if (!pattern || replacement.includes('$'))
      return { unresolved: `\${${body}} uses a pattern that is only evaluated at build time`, next };
    return {
      value: synthetic(substitute(current.text, pattern, withoutQuotes(replacement), substitution[1]), reference, name),
      next,
    };
  }
  const substring = /^:\s*(-?\d+)(?::\s*(-?\d+))?$/.exec(rest);
  if (substring) {
    const size = current.length;
    const offset = Number(substring[1]);
    const from = offset < 0 ? Math.max(0, size + offset) : Math.min(size, offset);
    const count = substring[2] === undefined ? size - from : Number(substring[2]);
    const to = count < 0 ? Math.max(from, size + count) : Math.min(size, from + count);
    return fromValue(current.slice(from, to));
  }
  const casing = /^(\^\^?|,,?)$/.exec(rest);
  if (casing) {
    const op = casing[1]!;
    const upper = op.startsWith('^');
    const all = op.length === 2;
    const changed = all
      ? upper
        ? current.text.toUpperCase()
        : current.text.toLowerCase()
      : (upper ? current.text.charAt(0).toUpperCase() : current.text.charAt(0).toLowerCase()) + current.text.slice(1);
    return { value: synthetic(changed, reference, name), next };
  }
  return { unresolved: `\${${body}} uses shell features that are only evaluated at build time`, next };
}

/** Longer values are not pattern-matched (the patterns are tried at every position). */
const MAX_EVALUATED = 4096;

type Known = { readonly value: Mapped } | { readonly unresolved: string };

/** What a name expands to, or why it is not known (a shell variable of the script, an ARG without default). */
function known(resolve: Resolver, name: string): Known {
  const found = resolve(name);
  if (found && 'value' in found) return { value: found.value };
  if (found && 'unresolved' in found) return { unresolved: found.unresolved };
  return { unresolved: `$${name} is not defined by an ARG or ENV in this build stage` };
}

/** The expansions in a word of a `${…}` (a default or alternative), without quote removal or splitting. */
function expandWord(word: Mapped, resolve: Resolver, quotes = false): { value: Mapped } | { unresolved: string } {
  const text = word.text;
  if (!text.includes('$') && !(quotes && /["'\\]/.test(text))) return { value: word };
  const builder = new MappedBuilder();
  const braces = new ClosingBraces(text);
  let runStart = 0;
  let quote = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (quotes) {
      // Quote removal: the quotes go, what they hold stays (with no expansion inside '…').
      const closes = quote !== 0 && code === quote;
      const opens = quote === 0 && (code === DOUBLE_QUOTE || code === SINGLE_QUOTE);
      const escapes =
        code === BACKSLASH &&
        i + 1 < text.length &&
        (quote === 0 || (quote === DOUBLE_QUOTE && escapableInDoubleQuotes(text.charCodeAt(i + 1))));
      if (closes || opens || escapes) {
        if (i > runStart) builder.pushMapped(word.slice(runStart, i));
        quote = closes ? 0 : opens ? code : quote;
        runStart = i + 1;
        if (escapes) i++; // the escaped character starts the next run
        continue;
      }
      if (quote === SINGLE_QUOTE) continue;
    }
    if (code !== DOLLAR) continue;
    const expansion = readExpansion(word, i, resolve, braces);
    if (!expansion) continue;
    if ('unresolved' in expansion) return { unresolved: expansion.unresolved };
    if (i > runStart) builder.pushMapped(word.slice(runStart, i));
    builder.pushMapped(expansion.value);
    runStart = expansion.next;
    i = expansion.next - 1;
  }
  if (runStart < text.length) builder.pushMapped(word.slice(runStart));
  return { value: builder.build() };
}

/**
 * Expand the `$NAME` / `${…}` references in an ARG or ENV value (Docker substitutes them, using the ARGs and ENVs
 * defined before): `ARG BASE=nvidia/cuda:${CUDA}-devel-ubuntu${UBUNTU}`. No quote removal, no splitting.
 */
export function expandValue(value: Mapped, resolve: Resolver): { value: Mapped } | { unresolved: string } {
  return expandWord(value, resolve);
}

/** Text an expansion computed (a substitution, a case change): not editable, seen at the reference. */
function synthetic(text: string, reference: Span, name: string): Mapped {
  const builder = new MappedBuilder();
  if (text.length === 0) return builder.build();
  builder.pushSegment(text, -1, reference, { name, reference });
  return builder.build();
}

/** A shell glob (`*`, `?`, `[…]`, `\x`) as a regular expression source; undefined when it has expansions. */
export function globRegex(pattern: string): string | undefined {
  if (pattern.includes('$') || pattern.includes('`')) return undefined;
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) out += escapeRegex(pattern[++i]!);
    else if (c === '*') out += '[\\s\\S]*';
    else if (c === '?') out += '[\\s\\S]';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) out += '\\[';
      else {
        const inner = pattern
          .slice(i + 1, end)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\');
        out += `[${inner}]`;
        i = end;
      }
    } else out += escapeRegex(c);
  }
  return out;
}

/**
 * A parameter expansion's pattern with its quoted parts made literal, as bash reads them (`${V//'.'/}` and `${V//"."/}`
 * remove every dot, as `${V//./}` does; a quoted `*` is a star): each quoted character escaped with a backslash.
 */
function quotedLiterally(pattern: string): string {
  return pattern.replace(/\\.|'([^']*)'|"((?:\\.|[^"\\])*)"/g, (whole, single?: string, double?: string) => {
    if (single === undefined && double === undefined) return whole;
    const literal = single ?? double!.replace(/\\([$`"\\])/g, '$1');
    return literal.replace(/[\s\S]/g, '\\$&');
  });
}

/** A replacement's text after quote removal (`${V//./''}` replaces with nothing; `\/` is a slash). */
function withoutQuotes(text: string): string {
  return text.replace(
    /\\(.)|'([^']*)'|"((?:\\.|[^"\\])*)"/g,
    (_whole, escaped?: string, single?: string, double?: string) =>
      escaped ?? single ?? double!.replace(/\\([$`"\\])/g, '$1'),
  );
}

function escapeRegex(c: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(c) ? `\\${c}` : c;
}

/** The range of `value` left after removing the shortest/longest prefix (#, ##) or suffix (%, %%) matching. */
function removeMatch(value: string, pattern: string, op: string): [number, number] {
  const whole = new RegExp(`^(?:${pattern})$`);
  const size = value.length;
  if (op === '#') {
    for (let end = 0; end <= size; end++) if (whole.test(value.slice(0, end))) return [end, size];
  } else if (op === '##') {
    for (let end = size; end >= 0; end--) if (whole.test(value.slice(0, end))) return [end, size];
  } else if (op === '%') {
    for (let start = size; start >= 0; start--) if (whole.test(value.slice(start))) return [0, start];
  } else {
    for (let start = 0; start <= size; start++) if (whole.test(value.slice(start))) return [0, start];
  }
  return [0, size];
}

/** `${A/p/r}` (first, longest match), `${A//p/r}` (every match), `${A/#p/r}` (prefix), `${A/%p/r}` (suffix). */
function substitute(value: string, pattern: string, replacement: string, mode: string | undefined): string {
  if (pattern === '') return value;
  const whole = new RegExp(`^(?:${pattern})$`);
  const size = value.length;
  if (mode === '#') {
    for (let end = size; end >= 0; end--) if (whole.test(value.slice(0, end))) return replacement + value.slice(end);
    return value;
  }
  if (mode === '%') {
    for (let start = 0; start <= size; start++)
      if (whole.test(value.slice(start))) return value.slice(0, start) + replacement;
    return value;
  }
  let out = '';
  let i = 0;
  let replaced = false;
  while (i < size) {
    let matched = -1;
    if (!replaced || mode === '/')
      for (let end = size; end > i; end--)
        if (whole.test(value.slice(i, end))) {
          matched = end;
          break;
        }
    if (matched < 0) {
      out += value[i];
      i++;
      continue;
    }
    out += replacement;
    i = matched;
    replaced = true;
  }
  return out;
}

function viaArg(value: Mapped, origin: ArgOrigin): Mapped {
  const builder = new MappedBuilder();
  for (const seg of value.pieces()) {
    builder.pushSegment(value.text.slice(seg.from, seg.to), seg.origin, origin.reference, origin);
  }
  return builder.build();
}

/** `0-9 < > & | -`: the characters of a redirection operator. */
function isRedirectionChar(code: number): boolean {
  return (
    isDigit(code) || code === LESS_THAN || code === GREATER_THAN || code === AMPERSAND || code === PIPE || code === DASH
  );
}

/** `"`, `\\`, `$` and a backquote: what a backslash escapes inside double quotes. */
function escapableInDoubleQuotes(code: number): boolean {
  return code === DOUBLE_QUOTE || code === BACKSLASH || code === DOLLAR || code === BACKTICK;
}
