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
//   npm test -- --file PATH       one test file of test/{unit,engine,fault,packaging,team,ui} (repeatable); no static
//                                 checks unless --only checks; the build only when the bundles are older than sources
//   npm test -- --sequential      the groups one after another (node, integration, ui) instead of side by side
//
// After the build, the static checks and two lanes run side by side: the plain-Node files, two at a time, and the VS Code
// lane, one at a time: the integration run, then the UI files (a VS Code test mostly waits on VS Code, the browser
// and a job, so it costs the node files little); when the VS Code lane is done, its slot takes node files too. Each
// lane starts its longest files first, by the times of earlier runs (node_modules/.cache/article-audio/file-times.json,
// written at the end of every run, over the committed scripts/test-times.json; a file with no time yet goes first),
// so that no long file starts last and runs alone.
//
// No file or suite has a wall-clock budget: a slow machine makes tests slower, not failed (tests bound their own
// waits). Only a file that hangs is ended: one still running after HUNG_FILE_S (far beyond any file's time on a
// loaded machine) has its process group killed and counts as failed, so that a hang shows as a failure with the
// file's output instead of a run that never ends. Each test file runs as its own `node --test` process in its own process group;
// every process the run starts carries AA_TEST_RUN_ID=<run id> in its environment (test/support/own-processes.mjs),
// and the run fails if one is still alive at the end (they are then killed: only those, never other people's).
// Every temp file and folder of the run (engines' data dirs, VS Code profiles, workspaces, logs) goes under one folder
// of its own (TMPDIR=/tmp/aa-tests-XXXXXX), removed at the end, interrupted or not: a file that was killed cannot
// clean up after itself, and a run beside it sees none of its files. What tests left there is named at the end.
// Failures are printed again before the summary, which gives each group's time, the ten slowest files and (on Linux)
// the ten that used the most CPU: on a 2-core machine the run is CPU-bound, and a file's wall time in a full run is
// mostly its neighbours' work, so CPU seconds say where the run's time goes.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const out = path.join(root, 'out');
const args = process.argv.slice(2);
const only = new Set(args.flatMap((a, i) => (a === '--only' ? [args[i + 1] === 'unit' ? 'node' : args[i + 1]] : [])));
const grep = args.includes('--grep') ? args[args.indexOf('--grep') + 1] : undefined;
const onlyFiles = args.flatMap((a, i) => (a === '--file' ? [path.resolve(args[i + 1] ?? '')] : []));
for (const file of onlyFiles) {
  if (!file.endsWith('.test.ts') || !existsSync(file) || !file.startsWith(path.join(root, 'test') + path.sep)) {
    console.error(`--file ${path.relative(root, file)}: not a test file under test/ (*.test.ts)`);
    process.exit(2);
  }
  if (file.startsWith(path.join(root, 'test', 'integration'))) {
    console.error(
      `--file ${path.relative(root, file)}: integration suites run together in VS Code (--only integration, --grep)`,
    );
    process.exit(2);
  }
}
const isUiFile = (file) => file.startsWith(path.join(root, 'test', 'ui') + path.sep);
const wants = (group) => {
  if (onlyFiles.length > 0 && !only.has(group)) {
    if (group === 'node') return onlyFiles.some((f) => !isUiFile(f));
    if (group === 'ui') return onlyFiles.some(isUiFile);
    return false;
  }
  return only.size === 0 || only.has(group);
};
// Every process this run starts inherits the marker; the check at the end finds them by it (and only them).
const runId = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
process.env.AA_TEST_RUN_ID = runId;
// Short (Unix socket paths under it, VS Code's and Postgres's, must stay under 108 bytes), and open to all like /tmp
// (1777): the test Postgres runs as another user when the run is root's, and its folder is under this one.
const runTemp = mkdtempSync(path.join(os.tmpdir(), 'aa-tests-'));
chmodSync(runTemp, 0o1777);
process.env.TMPDIR = runTemp;
const cache = path.join(root, 'node_modules', '.cache', 'article-audio');
mkdirSync(cache, { recursive: true });
const install = args.includes('--install') || process.env.CI === 'true';
const sequential = args.includes('--sequential');
/**
 * Seconds each file took in earlier runs (relative path -> seconds), for longest-first order: this clone's last
 * runs (the cache) over the times of a full run committed in scripts/test-times.json (a fresh clone has no cache).
 */
const timesFile = path.join(cache, 'file-times.json');
function readTimes(file) {
  try {
    const times = JSON.parse(readFileSync(file, 'utf8'));
    return times && typeof times === 'object' && !Array.isArray(times) ? times : {};
  } catch {
    return {};
  }
}
const cachedTimes = readTimes(timesFile);
const recordedTimes = { ...readTimes(path.join(root, 'scripts', 'test-times.json')), ...cachedTimes };
/** Longest first by the recorded times; a file with none first of all (it may be long), then by name. */
function longestFirst(files) {
  const time = (file) => {
    const seconds = recordedTimes[path.relative(root, file)];
    return typeof seconds === 'number' ? seconds : Number.POSITIVE_INFINITY;
  };
  return [...files].sort((a, b) => time(b) - time(a) || a.localeCompare(b));
}
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

/** Children running now, ended with the run when it is interrupted. */
const children = new Set();

/**
 * CPU seconds (user + system) of this run's children that have ended and been reaped, with everything they reaped in
 * turn (Linux: /proc/self/stat's cutime and cstime, in the kernel's 100 ticks a second); undefined elsewhere. A
 * process whose parent ended first (killed with its process group, as VS Code's and the browser's are) is reaped by
 * init and counted nowhere.
 */
function reapedChildrenCpuS() {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return undefined;
  }
}
let cpuSeen = reapedChildrenCpuS();
/**
 * The CPU seconds of what was reaped since the last call: called as each child's exit is handled, it is that child's
 * (and its descendants'), unless two ended in the same turn of the event loop (the first then gets both).
 */
function cpuSinceLastCall() {
  const now = reapedChildrenCpuS();
  if (now === undefined || cpuSeen === undefined) return undefined;
  const delta = now - cpuSeen;
  cpuSeen = now;
  return Math.round(delta * 10) / 10;
}
/** The machine's busy and total CPU time so far (/proc/stat, all cores), for the run's share of it; Linux only. */
function machineCpuS() {
  try {
    const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
    const idle = ticks[3] + ticks[4];
    const total = ticks.slice(0, 8).reduce((sum, t) => sum + t, 0);
    return { busy: (total - idle) / 100, total: total / 100, system: ticks[2] / 100, faults: pageFaults() };
  } catch {
    return undefined;
  }
}

/** The machine's page faults since boot (NaN where /proc/vmstat cannot be read). */
function pageFaults() {
  try {
    return Number(/^pgfault (\d+)$/m.exec(readFileSync('/proc/vmstat', 'utf8'))?.[1] ?? NaN);
  } catch {
    return NaN;
  }
}
const machineAtStart = machineCpuS();

/**
 * Microseconds to write a 4 KB page of memory the process has not touched yet (each one a page fault). On some
 * virtual machines this is many times what it is elsewhere, and a run starts thousands of processes and threads:
 * printed at the end beside the run's page faults, so a slow run can be told from a slow machine (CONTRIBUTING.md).
 */
function freshPageMicros() {
  const bytes = 32 * 1024 * 1024;
  const start = process.hrtime.bigint();
  Buffer.alloc(bytes).fill(1); // calloc'd: its pages are first touched by fill
  return Number(process.hrtime.bigint() - start) / 1000 / (bytes / 4096);
}
const freshPageAtStart = freshPageMicros();

function run(command, commandArgs, options = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, commandArgs, { cwd: root, stdio: 'inherit', ...options });
    children.add(child);
    child.on('exit', (code, signal) => {
      children.delete(child);
      cpuSinceLastCall();
      resolve(code ?? (signal ? 128 : 1));
    });
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

/** tsc remembers what it checked (node_modules/.cache/article-audio/*.tsbuildinfo): a second run checks what changed. */
function incremental(name) {
  return ['--incremental', '--tsBuildInfoFile', path.join(cache, `tsc-${name}.tsbuildinfo`)];
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
      [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', '.', ...incremental('root')],
    ],
    [
      'types (tsc, player page)',
      process.execPath,
      [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'media', ...incremental('media')],
    ],
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

function newest(dir, skip = () => false) {
  if (!existsSync(dir)) return 0;
  const stat = statSync(dir);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = 0;
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (!skip(full)) latest = Math.max(latest, newest(full, skip));
  }
  return latest;
}

/** The bundles are newer than everything they are built from (only asked with --only or --file). */
function bundlesCurrent() {
  const outputs = [
    'dist/extension.js',
    'dist/engine.js',
    'dist/cli.js',
    'dist/synth-worker.js',
    'dist/parse-worker.js',
    'dist/pdfjs.js',
    'dist/audio-worker.js',
    'media/build/player.js',
    ...(wants('integration') ? ['out/integration/index.js'] : []),
  ].map((f) => path.join(root, f));
  if (!outputs.every((f) => existsSync(f))) return false;
  const oldestOutput = Math.min(...outputs.map((f) => statSync(f).mtimeMs));
  const inputs = ['src', 'media/player', 'vendor', 'esbuild.mjs', 'package.json', 'package-lock.json'];
  if (wants('integration')) inputs.push('test/integration', 'test/support');
  const newestInput = Math.max(...inputs.map((f) => newest(path.join(root, f))));
  return newestInput < oldestOutput;
}

async function build() {
  heading('build');
  if ((only.size > 0 || onlyFiles.length > 0) && bundlesCurrent()) {
    console.log('bundles are newer than their sources: not rebuilt (a full `npm test` always builds)');
    return true;
  }
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
  // esbuild's service process would otherwise live on with this run's marker.
  await esbuild.stop();
  return true;
}

/** Seconds each test file took (wall, and CPU where it can be read), for the ten slowest at the end. */
const fileTimes = [];
/** CPU seconds of what is not a test file (the integration lane), listed with the files that used the most. */
const otherCpu = [];
/**
 * What each failed file or suite said of its failures, printed again just before the summary: a file's report is
 * printed when it ends, in the middle of a long log, and CI's excerpt of a failed run is its end.
 */
const failures = [];
/** Lines of a failure kept for the end of the run (the whole report is above, with the file). */
const FAILURE_LINES = 60;

function keepFailure(what, text) {
  // Frames inside Node's test runner and async hooks say nothing of the failure.
  const lines = text
    .trimEnd()
    .split('\n')
    .filter((line) => !/^\s*at .*\(?node:(internal|async_hooks)/.test(line));
  const kept = lines.slice(0, FAILURE_LINES);
  if (lines.length > FAILURE_LINES) kept.push(`  … ${lines.length - FAILURE_LINES} more lines in its report above`);
  failures.push({ what, text: kept.join('\n') });
}
/** A test file still running after this long hangs (the slowest took 4 minutes at load 25-40): it is ended, and fails. */
const HUNG_FILE_S = Number(process.env.ARTICLE_AUDIO_TEST_HUNG_FILE_S ?? 1500);

/**
 * Runs each file as its own `node --test` process (its own process group, so an interrupted run ends it and all it
 * started), `concurrency` at a time, and prints each file's report when it ends. No time limit: tests set their own.
 */
/** Lets one more worker take files from a running group's queue (the VS Code lane, once it is done: see below). */
const joinGroup = new Map();

async function runFiles(suite, files, concurrency) {
  const totals = { passed: 0, failed: 0, skipped: 0 };
  const tapDir = path.join(out, 'tap', suite.replace(/[^a-z]+/gi, '-'));
  rmSync(tapDir, { recursive: true, force: true });
  mkdirSync(tapDir, { recursive: true });
  const queue = longestFirst(files);
  async function worker() {
    for (let file = queue.shift(); file !== undefined && !interrupted; file = queue.shift()) {
      const rel = path.relative(root, file);
      const tap = path.join(tapDir, `${rel.replace(/[\\/]/g, '__')}.tap`);
      const t0 = Date.now();
      let output = '';
      let cpuSeconds;
      const code = await new Promise((resolve) => {
        const child = spawn(
          process.execPath,
          [
            '--import',
            'tsx',
            '--test',
            '--test-reporter=spec',
            '--test-reporter-destination=stdout',
            '--test-reporter=tap',
            `--test-reporter-destination=${tap}`,
            ...(grep ? ['--test-name-pattern', grep] : []),
            rel,
          ],
          { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
        );
        child.group = true;
        children.add(child);
        child.stdout.on('data', (chunk) => (output += chunk));
        child.stderr.on('data', (chunk) => (output += chunk));
        const watchdog = setTimeout(() => {
          output += `\n✖ ${rel} was still running after ${HUNG_FILE_S} s: it hangs, and was ended.\n`;
          try {
            process.kill(-child.pid, 'SIGKILL');
          } catch {
            child.kill('SIGKILL');
          }
        }, HUNG_FILE_S * 1000);
        child.on('exit', (exitCode, signal) => {
          clearTimeout(watchdog);
          children.delete(child);
          cpuSeconds = cpuSinceLastCall();
          resolve(exitCode ?? (signal ? 128 : 1));
        });
      });
      const seconds = Math.round((Date.now() - t0) / 100) / 10;
      const result = tapTotals(tap);
      // A file that ended badly without reporting a failed test (a crash outside any test) still fails the run.
      if (code !== 0 && result.failed === 0) result.failed = 1;
      if (result.failed > 0) {
        // Node's spec reporter ends a file's report with its failed tests and their errors.
        const at = output.lastIndexOf('failing tests:');
        keepFailure(rel, at >= 0 ? output.slice(at) : output.split('\n').slice(-FAILURE_LINES).join('\n'));
      }
      totals.passed += result.passed;
      totals.failed += result.failed;
      totals.skipped += result.skipped;
      fileTimes.push({ file: rel, seconds, ...(cpuSeconds !== undefined ? { cpuSeconds } : {}) });
      const cpu = cpuSeconds !== undefined ? `, ${cpuSeconds} s CPU` : '';
      console.log(
        `\n── ${result.failed > 0 ? '✖' : '✔'} ${rel} (${seconds} s${cpu}: ${result.passed} passed, ${result.failed} failed, ${result.skipped} skipped${code !== 0 ? `, exit ${code}` : ''})`,
      );
      process.stdout.write(output);
    }
  }
  const workers = new Set(Array.from({ length: Math.min(concurrency, files.length) }, worker));
  joinGroup.set(suite, () => {
    if (queue.length === 0) return;
    console.log(`\n(the VS Code lane is done: its slot takes ${suite} files too, ${queue.length} left)`);
    workers.add(worker());
  });
  // A worker that joins while these run is waited for too (its file counts in this group).
  while (workers.size > 0) {
    const now = [...workers];
    await Promise.all(now);
    for (const w of now) workers.delete(w);
  }
  joinGroup.delete(suite);
  return totals;
}

async function nodeSuites() {
  const files =
    onlyFiles.length > 0
      ? onlyFiles.filter((f) => !isUiFile(f))
      : ['unit', 'engine', 'fault', 'packaging', 'team'].flatMap((dir) => testFiles(path.join(root, 'test', dir)));
  heading(`node test runner: ${files.length} files (test/unit, test/engine, test/fault, test/packaging, test/team)`);
  // Two at a time: the machine's two cores are busy with them and the VS Code lane. Three at a time made the run
  // slower on a quiet 2-core machine (resource-leaks 444 s instead of 235, suites-postgres 383 instead of 237).
  await timed('node: unit, engine, fault, packaging, team', () => runFiles('node', files, 2));
}

/** What is missing for the VS Code and browser suites (undefined: nothing), asked once. */
let testEnvironmentProblem;
/**
 * Makes sure the VS Code and browser suites can run (downloads, apt-get: synchronous, so asked before the lanes
 * start, not while node files write to their pipes); `prepareOnly` only asks.
 */
async function testEnvironmentReady(suite, prepareOnly = false) {
  if (testEnvironmentProblem === undefined) {
    const { ensureTestEnvironment } = await import('./test-env.mjs');
    try {
      ensureTestEnvironment({ install });
      testEnvironmentProblem = '';
    } catch (error) {
      testEnvironmentProblem = error instanceof Error ? error.message : String(error);
    }
  }
  if (testEnvironmentProblem === '' || prepareOnly) return testEnvironmentProblem === '';
  console.log(`✖ ${testEnvironmentProblem}`);
  summary.push({ suite, passed: 0, failed: 1, seconds: 0, note: testEnvironmentProblem });
  return false;
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
    // VS Code ended and was reaped inside runTests: its CPU (with code-server's and the engine's) is what came since.
    const cpuSeconds = cpuSinceLastCall();
    if (cpuSeconds !== undefined) otherCpu.push({ what: 'integration: VS Code (the whole lane)', cpuSeconds });
    if (!existsSync(resultsFile))
      return { passed: 0, failed: 1, note: `no results (${note ?? 'the run ended before reporting'})` };
    const { passed, failed, results = [] } = JSON.parse(readFileSync(resultsFile, 'utf8'));
    for (const result of results.filter((r) => r.state === 'failed'))
      keepFailure(`integration: ${result.title}`, String(result.error));
    return { passed, failed, note };
  });
}

async function ui() {
  const files = onlyFiles.length > 0 ? onlyFiles.filter(isUiFile) : testFiles(path.join(root, 'test', 'ui'));
  heading(`UI tests in a real browser (Playwright + Chromium): ${files.length} files`);
  if (!(await testEnvironmentReady('ui: browser'))) return;
  // One at a time: each file runs its own VS Code, browser and engine.
  await timed('ui: browser', () => runFiles('ui', files, 1));
}

/** Processes alive now that carry this run's marker (Linux /proc; each one's environment names the run). */
function processesOfThisRun() {
  if (!existsSync('/proc/self/environ')) return [];
  const found = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    let environ;
    try {
      environ = readFileSync(`/proc/${name}/environ`, 'latin1');
    } catch {
      continue; // gone, or someone else's
    }
    if (!environ.split('\0').includes(`AA_TEST_RUN_ID=${runId}`)) continue;
    let command = '';
    try {
      command = readFileSync(`/proc/${name}/cmdline`, 'latin1').split('\0').join(' ').trim();
    } catch {
      // gone meanwhile
    }
    if (command !== '') found.push({ pid: Number(name), command });
  }
  return found;
}

/** Fails the run if a process it started (engine, VS Code, browser, Postgres) is still alive, and ends those. */
async function leftoverCheck() {
  let left = processesOfThisRun();
  // One that is just exiting gets a moment.
  for (let i = 0; i < 10 && left.length > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    left = processesOfThisRun();
  }
  if (left.length === 0) {
    console.log(`✔ no process of this run (AA_TEST_RUN_ID=${runId}) is left`);
    return;
  }
  console.log(`✖ ${left.length} process(es) of this run outlived their test (now killed):`);
  for (const { pid, command } of left) {
    console.log(`  ${pid} ${command.slice(0, 200)}`);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  summary.push({ suite: 'leftover processes', passed: 0, failed: 1, seconds: 0, note: `${left.length} left running` });
}

/** Removes the run's temp folder; names what tests left in it (a passing test should leave nothing). */
function removeRunTemp() {
  let left = [];
  try {
    // tsx-<uid> is tsx's compile cache, shared by the run's test processes: not something a test left.
    left = readdirSync(runTemp).filter((name) => !/^tsx-\d+$/.test(name));
  } catch {
    return;
  }
  // VS Code's sockets and Chromium's profiles are theirs (a window that is closed does not remove them all).
  const theirs = left.filter((name) => /^(vscode-|\.org\.chromium\.)/.test(name));
  const ours = left.filter((name) => !theirs.includes(name));
  if (ours.length > 0) {
    const shown = ours.slice(0, 10).join(', ') + (ours.length > 10 ? `, and ${ours.length - 10} more` : '');
    console.log(`temp entries the tests left (removed with ${runTemp}): ${shown}`);
  }
  if (theirs.length > 0) console.log(`${theirs.length} temp entries of VS Code and Chromium removed with ${runTemp}`);
  rmSync(runTemp, { recursive: true, force: true, maxRetries: 3 });
}

let interrupted = false;
for (const [signal, number] of [
  ['SIGINT', 2],
  ['SIGTERM', 15],
  ['SIGHUP', 1],
]) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    console.log(`\n${signal}: ending this run's processes`);
    for (const child of children) {
      try {
        if (child.group) process.kill(-child.pid, 'SIGTERM');
        else child.kill('SIGTERM');
      } catch {
        // gone
      }
    }
    // Normally the run ends by itself (its files are ended, the rest skipped); this is the fallback.
    setTimeout(() => {
      for (const { pid } of processesOfThisRun()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      removeRunTemp();
      console.log('interrupted: 0 passed, 1 failed, 0 skipped');
      process.exit(128 + number);
    }, 20_000).unref();
  });
}

mkdirSync(out, { recursive: true });
console.log(`run ${runId} (processes it starts carry AA_TEST_RUN_ID=${runId})`);
// The static checks (about a minute of eslint, prettier and tsc on a fresh clone) run beside the tests unless
// --sequential: the node lane's first files mostly wait on Postgres and engines, so they take little from each other.
let checking = Promise.resolve();
if (wants('checks')) {
  if (sequential) await checks();
  else checking = checks();
}
const built = await build();
if (built) {
  const nodeLane = async () => {
    if (wants('node')) await nodeSuites();
  };
  const vscodeLane = async () => {
    if (wants('integration') && !interrupted) await integration();
    if (wants('ui') && !interrupted) await ui();
    // Done before the node files: its slot takes node files from their queue (three at a time from here on).
    joinGroup.get('node')?.();
  };
  if (wants('integration') || wants('ui')) await testEnvironmentReady('VS Code and browser', true);
  if (sequential) {
    await nodeLane();
    await vscodeLane();
  } else {
    await Promise.all([nodeLane(), vscodeLane()]);
  }
}

await checking;
await leftoverCheck();
removeRunTemp();
if (interrupted) summary.push({ suite: 'interrupted', passed: 0, failed: 1, seconds: 0 });

const passed = summary.reduce((sum, s) => sum + s.passed, 0);
const failed = summary.reduce((sum, s) => sum + s.failed, 0);
const skipped = summary.reduce((sum, s) => sum + (s.skipped ?? 0), 0);
if (failures.length > 0) {
  heading(`failures (${failures.length}), again`);
  for (const { what, text } of failures) console.log(`✖ ${what}\n${text}\n`);
}
heading('summary');
for (const s of summary) {
  console.log(
    `${s.failed > 0 ? '✖' : '✔'} ${s.suite.padEnd(48)} ${String(s.passed).padStart(4)} passed ${String(s.failed).padStart(3)} failed ${String(s.skipped ?? 0).padStart(3)} skipped ${String(s.seconds).padStart(7)} s${s.note ? `  (${s.note})` : ''}`,
  );
}
if (
  !sequential &&
  summary.some((s) => s.suite.startsWith('node')) &&
  summary.some((s) => /^(ui|integration)/.test(s.suite))
)
  console.log('(the node files and the VS Code lane, integration then ui, ran side by side: their times overlap)');
console.log(
  `total time ${Math.round((Date.now() - started) / 1000)} s (load average at the end ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}, ${os.availableParallelism()} cores)`,
);
if (fileTimes.length > 1) {
  console.log('slowest files:');
  for (const { file, seconds } of [...fileTimes].sort((a, b) => b.seconds - a.seconds).slice(0, 10))
    console.log(`  ${String(seconds).padStart(7)} s  ${file}`);
}
const byCpu = [
  ...fileTimes.filter((f) => f.cpuSeconds !== undefined).map((f) => ({ what: f.file, cpuSeconds: f.cpuSeconds })),
  ...otherCpu,
].sort((a, b) => b.cpuSeconds - a.cpuSeconds);
const machineAtEnd = machineCpuS();
if (byCpu.length > 1 && machineAtStart && machineAtEnd) {
  const busy = machineAtEnd.busy - machineAtStart.busy;
  const total = machineAtEnd.total - machineAtStart.total;
  const ours = (reapedChildrenCpuS() ?? 0) + process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6;
  console.log(
    `most CPU (user + system of the file's processes; the machine was busy ${Math.round((100 * busy) / total)} % of the run, ${Math.round(busy)} s of ${Math.round(total)} s, this run's processes ${Math.round(ours)} s of it that could be counted: not those killed with their process group, such as VS Code's and the browser's):`,
  );
  for (const { what, cpuSeconds } of byCpu.slice(0, 10)) console.log(`  ${String(cpuSeconds).padStart(7)} s  ${what}`);
  const faults = machineAtEnd.faults - machineAtStart.faults;
  if (Number.isFinite(faults))
    console.log(
      `the machine: ${Math.round(machineAtEnd.system - machineAtStart.system)} s of the busy ${Math.round(busy)} s in the kernel; ${(faults / 1e6).toFixed(1)} M page faults, and a fresh page took ${freshPageAtStart.toFixed(1)} µs to write at the start (up to about ${Math.round((faults * freshPageAtStart) / 1e6)} s at that cost: not every fault is a fresh page)`,
    );
}
writeFileSync(path.join(out, 'file-times.json'), JSON.stringify(fileTimes, null, 1));
// For the next run's order: this run's times over the earlier ones (files not run keep theirs).
if (!interrupted && fileTimes.length > 0) {
  for (const { file, seconds } of fileTimes) cachedTimes[file] = seconds;
  writeFileSync(timesFile, JSON.stringify(cachedTimes, null, 1));
}
if (passed + failed === 0) console.log('No test ran: that is a failure.');
if (unexpectedSkips.length > 0) {
  console.log(`Skipped for a reason that is not allowed (scripts/test-all.mjs, ALLOWED_SKIPS), which fails the run:`);
  for (const line of unexpectedSkips) console.log(`  - ${line}`);
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || passed === 0 || unexpectedSkips.length > 0 ? 1 : 0);
