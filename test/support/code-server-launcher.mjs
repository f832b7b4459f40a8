#!/usr/bin/env node
// Stands in for the VS Code executable that @vscode/test-electron launches (`vscodeExecutablePath`): desktop VS Code
// cannot be downloaded offline, so this starts the same VS Code from code-server, opens it in headless Chromium with
// the extension under development and its tests, and exits with the code the test run reports.
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startVSCodeWeb } from './vscode-web.mjs';

const args = process.argv.slice(2);
const option = (name) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const extensionTestsPath = option('extensionTestsPath');
const extensionDevelopmentPath = option('extensionDevelopmentPath');
const folder = args.find((a) => !a.startsWith('--'));
if (!extensionTestsPath || !extensionDevelopmentPath) {
  console.error(
    'code-server-launcher: expected --extensionTestsPath=… and --extensionDevelopmentPath=… (as @vscode/test-electron passes them)',
  );
  process.exit(2);
}
const timeoutMs = Number(process.env.ARTICLE_AUDIO_INTEGRATION_TIMEOUT_MS ?? 20 * 60_000);
const verbose = process.env.ARTICLE_AUDIO_TEST_VERBOSE === '1';

// The test runner in the extension host appends its progress to this file; print it as it grows.
const logDir = mkdtempSync(path.join(os.tmpdir(), 'article-audio-test-log-'));
const logFile = path.join(logDir, 'progress.log');
writeFileSync(logFile, '');
let printed = 0;
function printProgress() {
  const fd = openSync(logFile, 'r');
  try {
    const buffer = Buffer.alloc(64 * 1024);
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, printed);
      if (n === 0) break;
      process.stdout.write(buffer.subarray(0, n));
      printed += n;
    }
  } finally {
    closeSync(fd);
  }
}
const follower = setInterval(printProgress, 250);
const onConsole = verbose ? (text) => console.log(`[browser] ${text}`) : undefined;

const vscode = await startVSCodeWeb({
  extensionDevelopmentPath,
  extensionTestsPath,
  folder,
  onConsole,
  verbose,
  env: { ARTICLE_AUDIO_TEST: '1', ARTICLE_AUDIO_TEST_LOG: logFile },
});

let finish;
const exitCode = new Promise((resolve) => {
  finish = resolve;
});
await vscode.page.exposeFunction('codeAutomationExit', (code) => finish(Number(code)));
const timer = setTimeout(() => {
  console.error(`code-server-launcher: no result after ${timeoutMs / 1000} s; giving up.`);
  if (!verbose) console.error(vscode.serverOutput().slice(-4000));
  finish(3);
}, timeoutMs);

const onSignal = () => finish(130);
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

await vscode.open();
const code = await exitCode;
clearTimeout(timer);
clearInterval(follower);
printProgress();
await vscode.close();
rmSync(logDir, { recursive: true, force: true });
process.exit(code);
