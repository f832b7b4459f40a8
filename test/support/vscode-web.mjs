// Starts real VS Code (the server and web client shipped in code-server) on loopback and opens it in headless
// Chromium with Playwright. Used by the integration-test launcher (in place of the VS Code executable for
// @vscode/test-electron) and by the UI tests. See ARCHITECTURE.md, "Tests".
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { chromiumPath, vscodeServerMain } from '../../scripts/test-env.mjs';
import { ownProcess } from './own-processes.mjs';

export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitForHttp(url, timeoutMs, isAlive) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!isAlive()) throw new Error('The VS Code server exited before it was ready (see its output above).');
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`The VS Code server did not answer at ${url} within ${timeoutMs} ms.`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * @typedef {object} VSCodeWebOptions
 * @property {string} extensionDevelopmentPath absolute path of the extension under test
 * @property {string} [extensionTestsPath] absolute path of the test runner module (integration tests)
 * @property {string} [folder] workspace folder to open
 * @property {Record<string, string>} [env] extra environment for the server (and so the extension host)
 * @property {string} [userDataDir] VS Code user data folder (fresh temp folder by default)
 * @property {Record<string, unknown>} [settings] user settings written before start
 * @property {(line: string) => void} [onConsole] browser console lines (the extension host's log lands here)
 * @property {boolean} [verbose] echo the server's own output
 * @property {{width: number, height: number}} [viewport]
 * @property {string} [colorScheme] 'light' | 'dark'
 */

/** @param {VSCodeWebOptions} options */
export async function startVSCodeWeb(options) {
  const port = await freePort();
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'article-audio-vscode-'));
  const userDataDir = options.userDataDir ?? path.join(scratch, 'user-data');
  const serverDataDir = path.join(scratch, 'server-data');
  const extensionsDir = path.join(scratch, 'extensions');
  for (const dir of [userDataDir, serverDataDir, extensionsDir]) mkdirSync(dir, { recursive: true });
  const settings = {
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'update.mode': 'none',
    'telemetry.telemetryLevel': 'off',
    'security.workspace.trust.enabled': false,
    'chat.disableAIFeatures': true,
    ...options.settings,
  };
  // The web client keeps user settings under the server's data folder (User/settings.json).
  for (const dir of [path.join(serverDataDir, 'data', 'User'), path.join(userDataDir, 'User')]) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'settings.json'), JSON.stringify(settings, null, 2));
  }

  const serverArgs = [
    vscodeServerMain(),
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--without-connection-token',
    '--accept-server-license-terms',
    '--enable-smoke-test-driver',
    '--disable-telemetry',
    '--disable-workspace-trust',
    '--user-data-dir',
    userDataDir,
    '--server-data-dir',
    serverDataDir,
    '--extensions-dir',
    extensionsDir,
  ];
  const server = ownProcess(
    spawn(process.execPath, serverArgs, {
      detached: true, // its own process group, so the whole tree can be killed at the end
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...options.env, VSCODE_AGENT_FOLDER: serverDataDir },
    }),
    { group: true },
  );
  let serverAlive = true;
  server.on('exit', () => {
    serverAlive = false;
  });
  const serverOutput = [];
  const keep = (chunk) => {
    const text = chunk.toString();
    serverOutput.push(text);
    if (serverOutput.length > 400) serverOutput.shift();
    if (options.verbose) process.stderr.write(`[vscode-server] ${text}`);
  };
  server.stdout.on('data', keep);
  server.stderr.on('data', keep);

  const origin = `http://127.0.0.1:${port}`;
  let browser;
  try {
    await waitForHttp(`${origin}/version`, 60_000, () => serverAlive);
    browser = await chromium.launch({
      executablePath: chromiumPath(),
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--autoplay-policy=no-user-gesture-required',
      ],
    });
  } catch (error) {
    killTree(server);
    process.stderr.write(serverOutput.join(''));
    rmSync(scratch, { recursive: true, force: true });
    throw error;
  }
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1400, height: 900 },
    colorScheme: options.colorScheme ?? 'dark',
  });
  const page = await context.newPage();
  page.on('console', (message) => options.onConsole?.(message.text()));

  const remote = (p) => `vscode-remote://127.0.0.1:${port}${p}`;
  const payload = [['extensionDevelopmentPath', remote(options.extensionDevelopmentPath)]];
  if (options.extensionTestsPath) payload.push(['extensionTestsPath', remote(options.extensionTestsPath)]);
  const query = new URLSearchParams();
  if (options.folder) query.set('folder', options.folder);
  query.set('payload', JSON.stringify(payload));
  const url = `${origin}/?${query.toString()}`;

  let closed = false;
  return {
    origin,
    port,
    page,
    browser,
    url,
    userDataDir,
    serverOutput: () => serverOutput.join(''),
    async open() {
      await page.goto(url);
    },
    async close() {
      if (closed) return;
      closed = true;
      await browser.close().catch(() => {});
      killTree(server);
      rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}

function killTree(child) {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
