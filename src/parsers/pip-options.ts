/** pip's command-line and requirements-file options that matter for where packages come from. */

export type OptionRole =
  | 'index-url'
  | 'extra-index-url'
  | 'find-links'
  | 'no-index'
  | 'requirement'
  | 'constraint'
  | 'editable'
  | 'pre'
  | 'torch-backend'
  | 'other';

export interface OptionSpec {
  readonly role: OptionRole;
  readonly takesValue: boolean;
}

const spec = (role: OptionRole, takesValue: boolean): OptionSpec => ({ role, takesValue });

/** Long and short spellings; pip accepts `--opt=value` and `--opt value`, short options also `-rfile`. */
export const PIP_OPTIONS: ReadonlyMap<string, OptionSpec> = new Map([
  ['-i', spec('index-url', true)],
  ['--index-url', spec('index-url', true)],
  ['--default-index', spec('index-url', true)], // uv
  ['--extra-index-url', spec('extra-index-url', true)],
  ['--index', spec('extra-index-url', true)], // uv
  ['-f', spec('find-links', true)],
  ['--find-links', spec('find-links', true)],
  ['--no-index', spec('no-index', false)],
  ['-r', spec('requirement', true)],
  ['--requirement', spec('requirement', true)],
  ['-c', spec('constraint', true)],
  ['--constraint', spec('constraint', true)],
  ['-e', spec('editable', true)],
  ['--editable', spec('editable', true)],
  ['--pre', spec('pre', false)],
  ['--prerelease', spec('pre', true)], // uv: --prerelease=allow
  ['--torch-backend', spec('torch-backend', true)], // uv
  // Options that take a value we do not need, listed so the value is not mistaken for a requirement.
  ...[
    '-t',
    '--target',
    '--prefix',
    '--root',
    '--upgrade-strategy',
    '--python-version',
    '--platform',
    '--implementation',
    '--abi',
    '--only-binary',
    '--no-binary',
    '--progress-bar',
    '--cache-dir',
    '--src',
    '--log',
    '--proxy',
    '--retries',
    '--timeout',
    '--default-timeout',
    '--trusted-host',
    '--cert',
    '--client-cert',
    '--exists-action',
    '--global-option',
    '--config-settings',
    '-C',
    '--report',
    '--root-user-action',
    '--python',
    '-p',
    '--hash',
    '--use-feature',
    '--keyring-provider',
    '--index-strategy',
    '--resolution',
    '--extra',
    '--link-mode',
    '--group',
    '-b',
    '--build',
    // uv pip's options that take a value (`--compile-bytecode`, `--system`, `--no-deps` are flags).
    '--upgrade-package',
    '-P',
    '--reinstall-package',
    '--no-build-isolation-package',
    '--refresh-package',
    '--exclude-newer',
    '--python-platform',
    '--override',
    '--overrides',
    '--build-constraint',
    '--build-constraints',
    '--config-file',
    '--cache-dir',
    '--prerelease-mode',
    '--fork-strategy',
    '--only-group',
    '--no-group',
    '--dependency-metadata',
  ].map((name): [string, OptionSpec] => [name, spec('other', true)]),
]);

/** Flags without a value (anything else starting with `-` is treated as a flag too). */
export function optionSpec(name: string): OptionSpec {
  return PIP_OPTIONS.get(name) ?? spec('other', false);
}

/** Split `--index-url=URL` and `-rfile` forms. */
export function splitOption(token: string): { name: string; inlineValue?: string; valueOffset: number } {
  if (token.startsWith('--')) {
    const eq = token.indexOf('=');
    return eq < 0
      ? { name: token, valueOffset: token.length }
      : { name: token.slice(0, eq), inlineValue: token.slice(eq + 1), valueOffset: eq + 1 };
  }
  if (token.length > 2 && PIP_OPTIONS.get(token.slice(0, 2))?.takesValue) {
    const rest = token.slice(2);
    const skip = rest.startsWith('=') ? 3 : 2;
    return { name: token.slice(0, 2), inlineValue: token.slice(skip), valueOffset: skip };
  }
  return { name: token, valueOffset: token.length };
}

/**
 * The options pip accepts in a requirements file (pip.pypa.io/en/stable/reference/requirements-file-format/,
 * "Global options" and "Per-requirement options"); any other makes pip stop with "no such option".
 */
export const REQUIREMENTS_FILE_OPTIONS: ReadonlySet<string> = new Set([
  '-i',
  '--index-url',
  '--extra-index-url',
  '--no-index',
  '-c',
  '--constraint',
  '-r',
  '--requirement',
  '-e',
  '--editable',
  '-f',
  '--find-links',
  '--no-binary',
  '--only-binary',
  '--prefer-binary',
  '--require-hashes',
  '--pre',
  '--trusted-host',
  '--use-feature',
  '--global-option',
  '--config-settings',
  '-C',
  '--hash',
]);
