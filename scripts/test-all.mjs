// The test command (`npm test`): static checks, the build, then every suite: plain-Node tests (unit, engine
// black-box, fault), integration tests in real VS Code, and UI tests in a real browser. Installs what the VS Code
// and browser suites need on first run (scripts/test-env.mjs, cached): Debian packages only in CI (CI=true) or with
// --install; otherwise it says which are missing and how to install them. Ends with one line
// `N passed, N failed, N skipped` that totals every suite; exits non-zero when anything failed, when no test ran, or
// when a test was skipped for a reason not in ALLOWED_SKIPS below (a skipped test must not hide a regression).
//
//   npm test                      everything
//   npm test -- --install         also install missing Debian packages (apt-get, as root)
//   npm test -- --only unit       one group: checks | node | integration | ui (repeatable; `unit` = node)
//   npm test -- --grep TEXT       only tests whose name contains TEXT (node and integration suites)
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const out = path.join(root, 'out');
const args = process.argv.slice(2);
const only = new Set(args.flatMap((a, i) => (a === '--only' ? [args[i + 1] === 'unit' ? 'node' : args[i + 1]] : [])));
const grep = args.includes('--grep') ? args[args.indexOf('--grep') + 1] : undefined;
const wants = (group) => only.size === 0 || only.has(group);
const install = args.includes('--install') || process.env.CI === 'true';
// Child processes (the team tests' Postgres) read the same permission.
if (install) process.env.ARTICLE_AUDIO_TEST_INSTALL = '1';

/**
 * The only reasons a test may skip itself: what this machine cannot do, never what the code does. Each entry says
 * why it is allowed. Tests left out by --grep are skipped by the runner and allowed too.
 */
const ALLOWED_SKIPS = [
  {
    reason: /^cannot mount a small tmpfs here/,
    why: 'mounting needs root with CAP_SYS_ADMIN (a container may not have it)',
  },
  { reason: /^reads \/proc$/, why: 'only Linux has /proc' },
  {
    reason: /^embedded engine only: /,
    why: 'the same test runs in embedded mode from its own file; only the Postgres pass of that file (test/team/suites-postgres.test.ts) leaves it out',
  },
  ...(grep ? [{ reason: /does not match pattern|test name does not match/, why: '--grep left it out' }] : []),
];

/** @type {{suite: string, passed: number, failed: number, skipped?: number, seconds: number, note?: string}[]} */
const summary = [];
/** Skipped tests whose reason is not allowed: "file or suite › name: reason". */
const unexpectedSkips = [];
const started = Date.now();

function run(command, commandArgs, options = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, commandArgs, { cwd: root, stdio: 'inherit', ...options });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
    child.on('error', (error) => {
      console.error(error);
      resolve(1);
    });
  });
}

function heading(text) {
  console.log(`\n━━ ${text} ${'━'.repeat(Math.max(0, 70 - text.length))}`);
}

function testFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .flatMap((name) => {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) return testFiles(full);
      return name.endsWith('.test.ts') ? [full] : [];
    })
    .sort();
}

/**
 * Totals from a TAP stream written by Node's test runner (`# pass N`, `# fail N`, `# cancelled N`, `# skipped N`,
 * `# todo N`), and every skipped test (`ok N - name # SKIP reason`) whose reason is not allowed.
 */
function tapTotals(file) {
  if (!existsSync(file)) return { passed: 0, failed: 0, skipped: 0 };
  const tap = readFileSync(file, 'utf8');
  const count = (name) =>
    [...tap.matchAll(new RegExp(`^# ${name} (\\d+)$`, 'gm'))].reduce((sum, m) => sum + Number(m[1]), 0);
  for (const match of tap.matchAll(/^\s*ok \d+ - (.*?) # (?:SKIP|TODO)\b ?(.*)$/gm)) {
    const [, name, reason = ''] = match;
    if (!ALLOWED_SKIPS.some((allowed) => allowed.reason.test(reason.trim())))
      unexpectedSkips.push(`${name}: ${reason.trim() || '(no reason given)'}`);
  }
  return {
    passed: count('pass'),
    failed: count('fail') + count('cancelled'),
    skipped: count('skipped') + count('todo'),
  };
}

async function timed(suite, body) {
  const t0 = Date.now();
  const result = await body();
  summary.push({ suite, ...result, seconds: Math.round((Date.now() - t0) / 100) / 10 });
  return result;
}

async function checks() {
  heading('static checks: lint, layers, format, types, command table, F5');
  for (const [name, command, commandArgs] of [
    ['lint (eslint)', process.execPath, [path.join(root, 'node_modules/eslint/bin/eslint.js'), '.']],
    ['layers: a wrong-layer import fails lint', process.execPath, ['scripts/check-layers.mjs']],
    ['imports: no circles, engine folders the right way', process.execPath, ['scripts/check-imports.mjs']],
    [
      'format (prettier --check)',
      process.execPath,
      [path.join(root, 'node_modules/prettier/bin/prettier.cjs'), '--check', '.'],
    ],
    [
      'types (tsc, extension and engine)',
      process.execPath,
      [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', '.'],
    ],
    ['types (tsc, player page)', process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'media']],
    ['commands: contributed = table = registered', process.execPath, ['scripts/check-commands.mjs']],
    [
      'F5: launch.json -> tasks.json -> build -> package.json main',
      process.execPath,
      ['--disable-warning=ExperimentalWarning', 'scripts/check-launch.mjs'],
    ],
  ]) {
    await timed(`check: ${name}`, async () => {
      const code = await run(command, commandArgs);
      console.log(code === 0 ? `✔ ${name}` : `✖ ${name} (exit ${code})`);
      return code === 0 ? { passed: 1, failed: 0 } : { passed: 0, failed: 1 };
    });
  }
}

async function build() {
  heading('build');
  const code = await run(process.execPath, ['esbuild.mjs']);
  if (code !== 0) {
    summary.push({ suite: 'build', passed: 0, failed: 1, seconds: 0, note: 'esbuild failed; suites skipped' });
    return false;
  }
  // The integration test runner and its suites, bundled for the extension host (mocha and vscode stay external).
  await esbuild.build({
    entryPoints: { index: 'test/integration/index.ts' },
    outdir: path.join(out, 'integration'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: 'inline',
    external: ['vscode', 'mocha'],
    logLevel: 'warning',
  });
  return true;
}

async function nodeSuites() {
  const files = ['unit', 'engine', 'fault', 'packaging', 'team'].flatMap((dir) =>
    testFiles(path.join(root, 'test', dir)),
  );
  heading(`node test runner: ${files.length} files (test/unit, test/engine, test/fault, test/packaging, test/team)`);
  if (files.length === 0) return timed('node: unit, engine, fault, packaging', async () => ({ passed: 0, failed: 0 }));
  const tap = path.join(out, 'node.tap');
  rmSync(tap, { force: true });
  await timed('node: unit, engine, fault, packaging', async () => {
    await run(process.execPath, [
      '--import',
      'tsx',
      '--test',
      '--test-concurrency=2',
      '--test-timeout=300000',
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      '--test-reporter=tap',
      `--test-reporter-destination=${tap}`,
      ...(grep ? ['--test-name-pattern', grep] : []),
      ...files.map((f) => path.relative(root, f)),
    ]);
    return tapTotals(tap);
  });
}

/** Makes sure the VS Code and browser suites can run; records the suite as failed, with what to do, when not. */
async function testEnvironmentReady(suite) {
  const { ensureTestEnvironment } = await import('./test-env.mjs');
  try {
    ensureTestEnvironment({ install });
    return true;
  } catch (error) {
    const note = error instanceof Error ? error.message : String(error);
    console.log(`✖ ${note}`);
    summary.push({ suite, passed: 0, failed: 1, seconds: 0, note });
    return false;
  }
}

async function integration() {
  heading('integration tests in real VS Code (code-server + @vscode/test-electron)');
  if (!(await testEnvironmentReady('integration: VS Code'))) return;
  const { runTests } = await import('@vscode/test-electron');
  const resultsFile = path.join(out, 'integration-results.json');
  rmSync(resultsFile, { force: true });
  const workspace = path.join(out, 'integration-workspace');
  rmSync(workspace, { recursive: true, force: true });
  mkdirSync(workspace, { recursive: true });
  await timed('integration: VS Code', async () => {
    let note;
    try {
      await runTests({
        vscodeExecutablePath: path.join(root, 'test/support/code-server-launcher.mjs'),
        extensionDevelopmentPath: root,
        extensionTestsPath: path.join(out, 'integration', 'index.js'),
        launchArgs: [workspace],
        extensionTestsEnv: {
          ARTICLE_AUDIO_TEST_RESULTS: resultsFile,
          ARTICLE_AUDIO_TEST_WORKSPACE: workspace,
          ...(grep ? { ARTICLE_AUDIO_TEST_GREP: grep } : {}),
        },
      });
    } catch (error) {
      note = error instanceof Error ? error.message : String(error);
    }
    if (!existsSync(resultsFile))
      return { passed: 0, failed: 1, note: `no results (${note ?? 'the run ended before reporting'})` };
    const { passed, failed } = JSON.parse(readFileSync(resultsFile, 'utf8'));
    return { passed, failed, note };
  });
}

async function ui() {
  const files = testFiles(path.join(root, 'test', 'ui'));
  heading(`UI tests in a real browser (Playwright + Chromium): ${files.length} files`);
  if (!(await testEnvironmentReady('ui: browser'))) return;
  const tap = path.join(out, 'ui.tap');
  rmSync(tap, { force: true });
  await timed('ui: browser', async () => {
    if (files.length === 0) return { passed: 0, failed: 0 };
    await run(process.execPath, [
      '--import',
      'tsx',
      '--test',
      '--test-concurrency=1',
      // Only a guard against a hung run: a Pro job of 99k characters (player-parts) takes many minutes on busy cores.
      '--test-timeout=3600000',
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      '--test-reporter=tap',
      `--test-reporter-destination=${tap}`,
      ...(grep ? ['--test-name-pattern', grep] : []),
      ...files.map((f) => path.relative(root, f)),
    ]);
    return tapTotals(tap);
  });
}

mkdirSync(out, { recursive: true });
if (wants('checks')) await checks();
const built = await build();
if (built) {
  if (wants('node')) await nodeSuites();
  if (wants('integration')) await integration();
  if (wants('ui')) await ui();
}

const passed = summary.reduce((sum, s) => sum + s.passed, 0);
const failed = summary.reduce((sum, s) => sum + s.failed, 0);
const skipped = summary.reduce((sum, s) => sum + (s.skipped ?? 0), 0);
heading('summary');
for (const s of summary) {
  console.log(
    `${s.failed > 0 ? '✖' : '✔'} ${s.suite.padEnd(48)} ${String(s.passed).padStart(4)} passed ${String(s.failed).padStart(3)} failed ${String(s.skipped ?? 0).padStart(3)} skipped ${String(s.seconds).padStart(7)} s${s.note ? `  (${s.note})` : ''}`,
  );
}
console.log(`total time ${Math.round((Date.now() - started) / 1000)} s`);
if (passed + failed === 0) console.log('No test ran: that is a failure.');
if (unexpectedSkips.length > 0) {
  console.log(`Skipped for a reason that is not allowed (scripts/test-all.mjs, ALLOWED_SKIPS), which fails the run:`);
  for (const line of unexpectedSkips) console.log(`  - ${line}`);
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || passed === 0 || unexpectedSkips.length > 0 ? 1 : 0);
