import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

export default tseslint.config(
  { ignores: ['dist/', 'bundle/', 'node_modules/', 'coverage/', 'bench-results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', TextDecoder: 'readonly' },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      // Prettier prints code at 120 columns but never breaks a string, a template literal or a comment: prose in
      // strings may run on (messages, helps, HTML), comments may not.
      'max-len': [
        'error',
        {
          code: 120,
          ignoreStrings: true,
          ignoreTemplateLiterals: true,
          ignoreRegExpLiterals: true,
          ignoreUrls: true,
        },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['probot', '@octokit/*'],
              message: 'Only src/github, src/app.ts and the Action (src/action) talk to GitHub.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/github/**', 'src/action/**', 'src/app.ts', 'src/main.ts', 'test/**'],
    rules: { 'no-restricted-imports': 'off' },
  },
  // The engine is pure (ARCHITECTURE.md): parsing, analysis, the baseline layer, the plan, rules and renderers take
  // texts and data; the hosts (CLI, App, Action, page, gate threads) read the disk, processes and the network.
  {
    files: [
      'src/baseline/**/*.ts',
      'src/analysis/**/*.ts',
      'src/parsers/**/*.ts',
      'src/plan/**/*.ts',
      'src/render/**/*.ts',
      'rules/**/*.ts',
      'src/gate.ts',
      'src/rule.ts',
      'src/finding.ts',
      'src/verify.ts',
      'src/reader.ts',
      'src/stream.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['probot', '@octokit/*'],
              message: 'Only src/github, src/app.ts and the Action (src/action) talk to GitHub.',
            },
            {
              group: ['node:fs', 'node:fs/*', 'fs', 'node:child_process', 'node:net', 'node:http', 'node:https'],
              message: 'The engine is pure: the hosts read files, processes and the network and hand them in.',
            },
          ],
        },
      ],
    },
  },
  // No import circles in the product code: a module's dependencies never lead back to it (type-only imports too).
  {
    files: ['src/**/*.ts', 'rules/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
      // The plugin reads imported modules with this parser; without it no dependency is followed and no cycle found.
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/extensions': ['.ts', '.js'],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // The pipeline's boundaries (ARCHITECTURE.md): the engine never reaches a host; only the CLI imports src/cli;
      // rules reach the knowledge base through its queries (src/knowledge/index.ts), never its data or schema.
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            {
              target: [
                './src/parsers',
                './src/knowledge',
                './src/analysis',
                './src/baseline',
                './src/render',
                './src/plan',
                './src/util',
                './src/fleet',
                './src/images',
                './rules',
                './src/gate.ts',
                './src/rule.ts',
                './src/finding.ts',
                './src/verify.ts',
                './src/reader.ts',
                './src/stream.ts',
              ],
              from: [
                './src/github',
                './src/cli',
                './src/action',
                './src/web',
                './src/sandbox',
                './src/app.ts',
                './src/main.ts',
              ],
              message:
                'The engine (parsers, knowledge, analysis, rules, renderers, gate, the fleet and image readers) never imports a host (src/github, src/cli, src/action, src/web, src/sandbox).',
            },
            {
              target: [
                './src/parsers',
                './src/knowledge',
                './src/analysis',
                './src/baseline',
                './src/render',
                './src/plan',
                './src/util',
                './src/fleet',
                './src/images',
                './src/github',
                './src/web',
                './src/sandbox',
                './rules',
                './src/app.ts',
                './src/main.ts',
                './src/gate.ts',
                './src/rule.ts',
                './src/finding.ts',
                './src/verify.ts',
                './src/reader.ts',
                './src/stream.ts',
              ],
              from: './src/cli',
              message: 'Nothing imports src/cli but the CLI itself (bin/cuda-gatekeeper.js).',
            },
            {
              target: './rules',
              from: ['./src/knowledge/data', './src/knowledge/schema.ts', './src/knowledge/refresh'],
              message: 'Rules read knowledge through its queries (src/knowledge/index.ts).',
            },
            {
              target: ['./src/parsers'],
              from: [
                './src/knowledge',
                './src/analysis',
                './rules',
                './src/baseline',
                './src/render',
                './src/plan',
                './src/fleet',
                './src/gate.ts',
                './src/rule.ts',
              ],
              message: 'Parsers come first in the pipeline: they read files into facts and import nothing after them.',
            },
            {
              target: ['./src/baseline', './src/web', './src/parsers', './src/knowledge'],
              from: './rules',
              except: ['./ids.ts'],
              message:
                'The baseline layer, the page, the parsers and the knowledge base know the rules as data (rules/ids.ts), not by loading their code.',
            },
            {
              target: './src/action',
              from: ['./src/github', './src/web', './src/sandbox', './src/app.ts', './src/main.ts'],
              message:
                "The GitHub Action runs the CLI's check (src/cli); it never imports the App's or the server's code.",
            },
            {
              target: ['./src/sandbox', './src/web'],
              from: ['./src/github', './src/app.ts', './src/main.ts'],
              message:
                "The gate threads and the self-service page run the engine; they never import the App's GitHub code.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ['rules/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[property.name='data'][object.name='kb']",
          message: 'Rules read knowledge through its queries, not kb.data.',
        },
      ],
    },
  },
);
