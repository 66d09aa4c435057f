// ESLint: a short rule set, each rule here for a reason this codebase has met.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.cts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A promise nobody awaits loses its rejection: in a scheduler, a worker pool and a
      // container lifecycle that is a call that never ends or a container never removed.
      '@typescript-eslint/no-floating-promises': 'error',
      // Awaiting a non-promise hides a missing call (`await session.close` without the parentheses).
      '@typescript-eslint/await-thenable': 'error',
      // `==` coerces; every comparison here means `===` (`== null` for both null and undefined is allowed).
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // A closure may read a binding that is assigned once, later (a server's guard after listen()).
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Unused names are tsc's job (noUnusedLocals/noUnusedParameters); `_`-prefixed ones are intended.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // On Node 20 a timeout signal inside AbortSignal.any can be garbage-collected before it
      // fires, so the limit never ends the work (nodejs/node#57736: web_fetch hung this way).
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "CallExpression[callee.object.name='AbortSignal'][callee.property.name='any'] CallExpression[callee.object.name='AbortSignal'][callee.property.name='timeout']",
          message: 'A timeout inside AbortSignal.any can be collected before it fires on Node 20: use deadline() from src/deadline.ts.',
        },
      ],
    },
  },
  {
    // Tests walk arbitrary JSON (schemas, protocol replies) where `any` reads best; src/ may not.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
);
