import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';
import svelteConfig from './svelte.config.js';

// Import direction (docs/architecture.md): nothing outside src/ui imports Svelte; no .svelte file imports tfjs.
const svelteImports = {
  group: ['svelte', 'svelte/*'],
  message: 'Only src/ui may import Svelte (docs/architecture.md, import rules).',
};
const tfjsImports = {
  group: ['@tensorflow/*'],
  message: 'A .svelte component must not import tfjs; go through a *.svelte.ts state class and a worker.',
};

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'bench/results/', 'models/**/*.js', 'coverage/', '.device/', '.spindle/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...svelte.configs.recommended,
  {
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { patterns: [svelteImports] }],
    },
  },
  {
    files: ['**/*.svelte', '**/*.svelte.ts'],
    languageOptions: {
      parserOptions: { projectService: true, extraFileExtensions: ['.svelte'], parser: tseslint.parser, svelteConfig },
    },
  },
  { files: ['src/ui/**'], rules: { 'no-restricted-imports': 'off' } },
  { files: ['**/*.svelte'], rules: { 'no-restricted-imports': ['error', { patterns: [tfjsImports] }] } },
  // Test and config files may mount components or configure the Svelte plugin.
  { files: ['tests/**', 'vite.config.ts', 'svelte.config.js'], rules: { 'no-restricted-imports': 'off' } },
);
