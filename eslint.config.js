import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
);
