// Helpers for UI tests: real VS Code in headless Chromium, driven the way a person uses it (palette, clicks, keys).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Frame, Page } from 'playwright-core';

export const repoRoot = path.resolve(__dirname, '..', '..');

export interface VSCodeSession {
  page: Page;
  workspace: string;
  /** Opens the command palette and runs the command with this title (as shown in the palette). */
  runCommand(title: string): Promise<void>;
  /** The webview content frame of the editor tab with this title. */
  webviewFrame(title: string, timeoutMs?: number): Promise<Frame>;
  screenshot(name: string): Promise<string>;
  close(): Promise<void>;
}

export interface LaunchOptions {
  settings?: Record<string, unknown>;
  colorScheme?: 'light' | 'dark';
  workspace?: string;
  env?: Record<string, string>;
}

export async function launchVSCode(options: LaunchOptions = {}): Promise<VSCodeSession> {
  // vscode-web.mjs is an ES module (the launcher runs it without a TypeScript loader); this file is CommonJS.
  const { startVSCodeWeb } = await import('./vscode-web.mjs');
  const workspace = options.workspace ?? mkdtempSync(path.join(os.tmpdir(), 'article-audio-ui-ws-'));
  const vscode = await startVSCodeWeb({
    extensionDevelopmentPath: repoRoot,
    folder: workspace,
    settings: options.settings,
    colorScheme: options.colorScheme,
    env: { ARTICLE_AUDIO_TEST: '1', ...options.env },
    verbose: process.env.ARTICLE_AUDIO_TEST_VERBOSE === '1',
  });
  const { page } = vscode;
  try {
    await vscode.open();
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    await page.locator('.statusbar').waitFor({ timeout: 60_000 });
  } catch (error) {
    await vscode.close();
    throw error;
  }

  async function runCommand(title: string): Promise<void> {
    // A palette opened before the extension has registered its commands misses them: retry until it lists it.
    const deadline = Date.now() + 60_000;
    for (;;) {
      await page.keyboard.press('Escape');
      await page.keyboard.press('F1');
      const input = page.locator('.quick-input-widget input');
      await input.waitFor({ timeout: 10_000 });
      await input.fill(`>${title}`);
      const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
      try {
        await row.waitFor({ timeout: 3_000 });
        await input.press('Enter');
        return;
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`The command palette never listed "${title}"`, { cause: error });
      }
    }
  }

  async function webviewFrame(title: string, timeoutMs = 30_000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const frame of page.frames()) {
        if (frame.name() !== 'active-frame' && !frame.url().includes('fake.html')) continue;
        const parentUrl = frame.parentFrame()?.url() ?? '';
        if (!parentUrl.includes('webview')) continue;
        const documentTitle = await frame.title().catch(() => '');
        if (documentTitle === title) return frame;
      }
      if (Date.now() > deadline) throw new Error(`No webview titled "${title}" appeared within ${timeoutMs} ms`);
      await page.waitForTimeout(250);
    }
  }

  async function screenshot(name: string): Promise<string> {
    const dir = path.join(repoRoot, 'test-results');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${name}.png`);
    await page.screenshot({ path: file });
    return file;
  }

  return {
    page,
    workspace,
    runCommand,
    webviewFrame,
    screenshot,
    async close() {
      await vscode.close();
      if (!options.workspace) rmSync(workspace, { recursive: true, force: true });
    },
  };
}
