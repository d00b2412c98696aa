import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'bench-results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', TextDecoder: 'readonly' } },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { patterns: [{ group: ['probot', '@octokit/*'], message: 'Only src/github and src/app.ts talk to GitHub.' }] }],
    },
  },
  {
    files: ['src/github/**', 'src/app.ts', 'src/main.ts', 'test/**'],
    rules: { 'no-restricted-imports': 'off' },
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
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
);
