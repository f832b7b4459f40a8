// Lint: typescript-eslint's recommended type-aware rules over all TypeScript in the repo.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The layers of ARCHITECTURE.md's module table, lowest first: each folder may import only the layers before it (and
 * what its row allows), so an import that points the wrong way fails `npm run lint` (scripts/check-layers.mjs shows
 * it does). The composition root (extension.ts, src/commands/, notify.ts, job-notices.ts) may import everything.
 */
const LAYERS = [
  { folder: 'protocol', may: [], vscode: false, node: false },
  { folder: 'api', may: ['protocol'], vscode: false },
  { folder: 'speech', may: ['protocol'], vscode: false },
  { folder: 'engine', may: ['protocol', 'speech'], vscode: false },
  { folder: 'cli', may: ['protocol', 'api', 'speech', 'engine', 'error-advice'], vscode: false },
  { folder: 'jobs', may: ['protocol', 'api'], vscode: false },
  {
    folder: 'connection',
    may: ['protocol', 'api', 'engine/process-tuning', 'jobs', 'config', 'command-ids', 'disposable'],
    vscode: true,
  },
  { folder: 'views', may: ['protocol', 'api', 'jobs', 'config', 'command-ids', 'disposable'], vscode: true },
  { folder: 'webview', may: ['protocol', 'api', 'jobs', 'views', 'config', 'command-ids', 'disposable'], vscode: true },
];
/** Everything under src/ that a layer could name: the folders above, and the composition root's files. */
const MODULES = [
  'protocol',
  'api',
  'speech',
  'engine',
  'cli',
  'jobs',
  'connection',
  'views',
  'webview',
  'commands',
  'extension',
  'notify',
  'error-advice',
  'job-notices',
  'config',
  'command-ids',
  'disposable',
];

function escape(text) {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function layerRules() {
  return LAYERS.map(({ folder, may, vscode, node = true }) => {
    const allowedModules = may.filter((m) => !m.includes('/'));
    const allowedFiles = may.filter((m) => m.includes('/'));
    const forbidden = MODULES.filter((m) => m !== folder && !allowedModules.includes(m));
    // `../x`, `../../x/y` from anywhere inside the folder; one file of a folder may be allowed (engine/process-tuning).
    const except = allowedFiles.map((file) => `(?!${escape(file.slice(file.indexOf('/') + 1))}(\\.ts)?$)`);
    const patterns = forbidden.map((m) => ({
      regex: `^(\\.\\./)+${escape(m)}(${allowedFiles.some((f) => f.startsWith(`${m}/`)) ? `/${except.join('')}` : '(/|\\.ts$|$)'})`,
      message: `src/${folder} may import only ${[...may, vscode ? 'vscode' : undefined].filter(Boolean).join(', ') || 'zod'} (ARCHITECTURE.md, Modules): not src/${m}.`,
    }));
    if (!node)
      patterns.push({
        regex: '^node:',
        message: `src/${folder} is plain TypeScript shared by every side: no node:* modules.`,
      });
    return {
      files: [`src/${folder}/**/*.ts`],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            paths: vscode
              ? []
              : [
                  {
                    name: 'vscode',
                    message: `src/${folder} runs outside VS Code (engine, command line, tests): it must not import vscode.`,
                  },
                ],
            patterns,
          },
        ],
      },
    };
  }).concat({
    files: ['media/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'vscode',
              message: 'The player page runs in a webview: it talks to the extension by messages, never vscode.',
            },
          ],
        },
      ],
    },
  });
}

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'media/build/**', 'node_modules/**', '.vscode-test/**', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // node:test's describe/it return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            {
              from: 'package',
              package: 'node:test',
              name: ['describe', 'it', 'test', 'suite', 'before', 'after', 'beforeEach', 'afterEach'],
            },
          ],
        },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      eqeqeq: ['error', 'smart'],
      'no-console': 'off',
    },
  },
  {
    // Every notification goes through Notifier (src/notify.ts), which strips link syntax from the outside text that
    // messages quote (issue 12: `[x](command:…)` in a page title became a link that ran any command).
    files: ['src/**/*.ts'],
    ignores: ['src/notify.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'MemberExpression[property.name=/^show(Information|Warning|Error)Message$/]',
          message: 'Show notifications through Notifier (src/notify.ts), which neutralizes links in outside text.',
        },
      ],
    },
  },
  ...layerRules(),
  {
    files: ['**/*.mjs', '**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      parserOptions: { projectService: false, project: null },
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        Buffer: 'readonly',
        fetch: 'readonly',
        URLSearchParams: 'readonly',
      },
    },
  },
);
