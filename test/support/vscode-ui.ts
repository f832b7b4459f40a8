// Helpers for UI tests: real VS Code in headless Chromium, driven the way a person uses it (palette, clicks, keys).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Frame, Locator, Page } from 'playwright-core';
import { escapeRegExp } from './regexp';

export const repoRoot = path.resolve(__dirname, '..', '..');

/** Polls `check` until it holds; fails after `timeoutMs` naming what it waited for (UI state has no events to await). */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

/** `waitFor` with another default limit, for a file whose waits are all for a job on a loaded machine. */
export function waitForWithin(
  defaultMs: number,
): (what: string, check: () => boolean | Promise<boolean>, timeoutMs?: number) => Promise<void> {
  return (what, check, timeoutMs = defaultMs) => waitFor(what, check, timeoutMs);
}

/** Evaluates `expression` in the player's page with `a` bound to its <audio> element (`audio(frame, 'a.paused')`). */
export async function audio(frame: Frame, expression: string): Promise<unknown> {
  return frame.evaluate(`(() => { const a = document.getElementById('audio'); return ${expression}; })()`);
}

export interface VSCodeSession {
  page: Page;
  workspace: string;
  /**
   * Opens the command palette and runs the command with this title (as shown in the palette). `keepSelection`: no
   * Escape before F1 unless a picker is open (in an editor, Escape clears the selection the command is to act on).
   */
  runCommand(title: string, options?: { keepSelection?: boolean }): Promise<void>;
  /**
   * Runs a palette command that asks for a job (or shows any picker) and picks the row with this text, trying again
   * (the picker closed, before or under the click) until it is offered and clicked; a failure says what the picker
   * listed, with a screenshot.
   */
  runOnJob(command: string, job: string, timeoutMs?: number): Promise<void>;
  /**
   * Opens a workspace file with Quick Open (Ctrl+P), as a person does, and waits until an editor shows `text` from it.
   * Tries again while the file search has not listed the file yet or the editor did not come up.
   */
  openFile(name: string, text: string): Promise<void>;
  /**
   * The titles the Command Palette lists for a query, read once the row `present` is listed (so a list still being
   * filtered is never read); the palette is closed again.
   */
  paletteRows(query: string, present: string): Promise<string[]>;
  /** The webview content frame of the editor tab with this title. */
  webviewFrame(title: string, timeoutMs?: number): Promise<Frame>;
  screenshot(name: string): Promise<string>;
  /**
   * Convert Current Document to Audio from the palette, then waits until the extension's log says a job with this
   * title was submitted; if none is, fails at once naming what the window shows and the log (a convert that never
   * reached the service otherwise shows only as a job missing minutes later).
   */
  convertCurrentDocument(title: string, timeoutMs?: number): Promise<void>;
  /**
   * Convert Selection to Audio from the palette, keeping the editor's selection, then waits as convertCurrentDocument
   * does for a job with this title (a selection's first heading, else "Selection from <file>").
   */
  convertSelection(title: string, timeoutMs?: number): Promise<void>;
  /** The last `lines` lines of the extension's log (its "Article Audio" output channel, as VS Code writes it). */
  extensionLog(lines?: number): string;
  /**
   * The window's tabs, notifications and open picker, the extension's last log lines, and a screenshot: for the
   * message of a wait that failed.
   */
  whatIsShown(): Promise<string>;
  close(): Promise<void>;
}

export interface LaunchOptions {
  settings?: Record<string, unknown>;
  colorScheme?: 'light' | 'dark';
  /** A folder to open; without one, a new temp folder that close() removes. */
  workspace?: string;
  /** Files (name -> text) written into the workspace before VS Code starts. */
  files?: Record<string, string>;
  env?: Record<string, string>;
  /** The extension to run: this checkout (default), or another folder laid out the same (a benchmark's base build). */
  extensionPath?: string;
}

const ok = (): boolean => true;
const fail = (): boolean => false;

export async function launchVSCode(options: LaunchOptions = {}): Promise<VSCodeSession> {
  // vscode-web.mjs is an ES module (the launcher runs it without a TypeScript loader); this file is CommonJS.
  const { startVSCodeWeb } = await import('./vscode-web.mjs');
  const workspace = options.workspace ?? mkdtempSync(path.join(os.tmpdir(), 'article-audio-ui-ws-'));
  const removeWorkspace = () => {
    if (!options.workspace) rmSync(workspace, { recursive: true, force: true });
  };
  for (const [name, text] of Object.entries(options.files ?? {})) {
    mkdirSync(path.dirname(path.join(workspace, name)), { recursive: true });
    writeFileSync(path.join(workspace, name), text);
  }
  let vscode: Awaited<ReturnType<typeof startVSCodeWeb>>;
  try {
    vscode = await startVSCodeWeb({
      extensionDevelopmentPath: options.extensionPath ?? repoRoot,
      folder: workspace,
      settings: options.settings,
      colorScheme: options.colorScheme,
      env: { ARTICLE_AUDIO_TEST: '1', ...options.env },
      verbose: process.env.ARTICLE_AUDIO_TEST_VERBOSE === '1',
    });
  } catch (error) {
    removeWorkspace();
    throw error;
  }
  const { page } = vscode;
  /** The Command Palette, Quick Open and every other picker or input box (VS Code reuses one widget). */
  const quickInput = page.locator('.quick-input-widget');
  try {
    await vscode.open();
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    await page.locator('.statusbar').waitFor({ timeout: 60_000 });
  } catch (error) {
    await vscode.close();
    removeWorkspace();
    throw error;
  }

  /**
   * Opens the Command Palette (F1) or Quick Open (Ctrl+P) and types `text`; undefined if the picker closed meanwhile,
   * so the caller tries again. A key pressed while the previous picker is still closing is lost (so wait for it to
   * go), and a picker closes whenever something takes the focus (a view, an editor or a walkthrough opening).
   * `keepSelection`: Escape only if a picker shows (in an editor, Escape clears the selection).
   */
  async function typeInPicker(
    key: 'F1' | 'Control+P',
    text: string,
    keepSelection = false,
  ): Promise<Locator | undefined> {
    const input = quickInput.locator('input').first();
    if (!keepSelection || (await quickInput.isVisible().catch(() => false))) await page.keyboard.press('Escape');
    await quickInput.waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => undefined);
    await page.keyboard.press(key);
    if (!(await input.waitFor({ state: 'visible', timeout: 10_000 }).then(ok, fail))) return undefined;
    return (await input.fill(text, { timeout: 3_000 }).then(ok, fail)) ? input : undefined;
  }

  /**
   * Runs a command from the Command Palette. Not by clicking its row: the palette lists the recently used commands
   * first and then the filtered ones, in the same (reused) row elements, so a click aimed at a row can land on
   * another command (at load 25-30 "Open Player" was clicked twice and no player opened, a picker left open instead:
   * stress runs A1 and B1). Here the list must be the filtered one (the same rows twice, 300 ms apart, this
   * command's among them), the focus is moved to this command's row with the arrow keys (the best match is not
   * always first: "View: Close Editor" comes after "View: Close All Editor Groups"), Enter runs it, and the palette
   * must then give way (close, or turn into the command's own picker or input box).
   */
  async function runCommand(title: string, options: { keepSelection?: boolean } = {}): Promise<void> {
    // A palette opened before the extension has registered its commands misses them: retry until it lists it.
    const deadline = Date.now() + 60_000;
    const exact = new RegExp(`^\\s*${escapeRegExp(title)}\\s*$`);
    const labels = page.locator('.quick-input-list .monaco-list-row .label-name');
    const focused = page.locator('.quick-input-list .monaco-list-row.focused .label-name').filter({ hasText: exact });
    const shown = () => labels.allInnerTexts().catch((): string[] => []);
    for (;;) {
      const input = await typeInPicker('F1', `>${title}`, options.keepSelection);
      // The palette closes when something takes the focus (a view or editor opening): then open it again.
      let ready = false;
      // Settled: the same rows twice, 300 ms apart, this command's among them.
      let before = input ? await shown() : [];
      for (let wait = 0; input && !ready && wait < 20; wait++) {
        await page.waitForTimeout(300);
        const now = await shown();
        ready = now.join('\n') === before.join('\n') && now.some((label) => exact.test(label));
        before = now;
      }
      for (let step = 0; input && ready && step < 20; step++) {
        if (await focused.waitFor({ timeout: 500 }).then(ok, fail)) {
          await input.press('Enter');
          if (await gaveWay(input, `>${title}`)) return;
          break;
        }
        await input.press('ArrowDown');
      }
      if (Date.now() > deadline) throw new Error(`The command palette never listed "${title}"; ${await whatIsShown()}`);
    }
  }

  /** How the last Enter in the palette was taken (for the message of a convert that made no job). */
  let lastEnter = 'none yet';

  /** Whether the picker closed or shows something else than `typed` within 30 s (Enter was taken). */
  async function gaveWay(input: Locator, typed: string): Promise<boolean> {
    const start = Date.now();
    while (Date.now() < start + 30_000) {
      if (!(await quickInput.isVisible().catch(() => false))) {
        lastEnter = `Enter on "${typed}": the palette closed within ${Date.now() - start} ms`;
        return true;
      }
      const value = await input.inputValue({ timeout: 1_000 }).catch(() => typed);
      if (value !== typed) {
        lastEnter = `Enter on "${typed}": the picker showed "${value}" within ${Date.now() - start} ms`;
        return true;
      }
      await page.waitForTimeout(100);
    }
    lastEnter = `Enter on "${typed}": the palette stayed 30 s`;
    return false;
  }

  async function paletteRows(query: string, present: string): Promise<string[]> {
    const rows = page.locator('.quick-input-list .monaco-list-row .label-name');
    const deadline = Date.now() + 60_000;
    for (;;) {
      const input = await typeInPicker('F1', `>${query}`);
      // The list is filtered as the query is typed: read it once the row that must be there is.
      const listed =
        input !== undefined &&
        (await page
          .locator('.quick-input-list .monaco-list-row', { hasText: present })
          .first()
          .waitFor({ timeout: 3_000 })
          .then(ok, fail));
      const titles = listed ? await rows.allInnerTexts() : [];
      await page.keyboard.press('Escape');
      // Read whole only if the row is among what was read (the palette closes if something takes the focus).
      if (titles.some((title) => title.includes(present))) return titles;
      if (Date.now() > deadline) throw new Error(`The command palette never listed "${present}" for "${query}"`);
    }
  }

  async function openFile(name: string, text: string): Promise<void> {
    // The focused row, which Enter opens. Quick Open lists the recently opened editors until the typed name has
    // filtered them: a wait for any row with the name passed on that list, Enter left the editor in front as it was,
    // and each such miss cost the 15 s wait below (five misses, 75 s, in one queue test run alone).
    const row = page.locator('.quick-input-list .monaco-list-row.focused', { hasText: name }).first();
    // Shown in the active group, as its active tab (what Convert Current Document reads): the same text may show in
    // another group, and a check of any visible editor passed on that one.
    const group = page.locator('.editor-group-container.active');
    const shown = group.locator('.editor-instance .view-lines', { hasText: text }).filter({ visible: true }).first();
    const front = group.locator('.tabs-container .tab.active', { hasText: name });
    const inFront = async (timeout: number) =>
      (await shown.waitFor({ timeout }).then(ok, fail)) &&
      (await front.first().waitFor({ timeout: 5_000 }).then(ok, fail));
    const deadline = Date.now() + 120_000;
    let last = 'Quick Open never listed it';
    while (Date.now() < deadline) {
      const input = await typeInPicker('Control+P', name);
      // Quick Open finds a file once the workspace is indexed, which takes a while on a busy machine.
      if (!input || !(await row.waitFor({ timeout: 5_000 }).then(ok, fail))) continue;
      if (!(await input.press('Enter', { timeout: 3_000 }).then(ok, fail))) continue;
      if (await inFront(15_000)) return;
      // Open but scrolled away from the text (the read-along follows the sentence being spoken): to the top.
      if ((await front.count()) > 0) {
        await group.locator('.editor-instance .view-lines').first().click().catch(fail);
        await page.keyboard.press('Control+Home');
        if (await inFront(5_000)) return;
      }
      const tabs = await page.locator('.tabs-container .tab').allInnerTexts();
      const active = await group.locator('.tabs-container .tab.active').allInnerTexts();
      last = `Enter in Quick Open showed no editor with "${text}"; tabs: ${tabs.join(' | ')}; active: ${active.join(' | ')}`;
    }
    await screenshot(`open-file-${name.replace(/[^\w.-]/g, '_')}`).catch(() => undefined);
    throw new Error(`Could not open ${name}: ${last}`);
  }

  /**
   * The frame of the webview titled `title`, once it shows. A wait, not a bound: at load 25-30 (two full test runs
   * side by side) a player opened again did not show within 60 s; a wait that runs out says what the window shows.
   */
  async function webviewFrame(title: string, timeoutMs = 120_000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const frame of page.frames()) {
        if (frame.name() !== 'active-frame' && !frame.url().includes('fake.html')) continue;
        const parentUrl = frame.parentFrame()?.url() ?? '';
        if (!parentUrl.includes('webview')) continue;
        const documentTitle = await frame.title().catch(() => '');
        if (documentTitle === title) return frame;
      }
      if (Date.now() > deadline)
        throw new Error(`No webview titled "${title}" appeared within ${timeoutMs} ms; ${await whatIsShown()}`);
      await page.waitForTimeout(250);
    }
  }

  /** The window's tabs, notifications and open picker, and a screenshot of it: for the message of a wait that failed. */
  async function whatIsShown(): Promise<string> {
    const texts = (locator: Locator) =>
      locator
        .allInnerTexts()
        .then((all) => all.map((text) => text.replace(/\s+/g, ' ').trim()).filter(Boolean))
        .catch(() => []);
    // A tab's dirty mark is a class, not text: an Enter that reached an editor instead of a picker shows there.
    const tabs: string[] = [];
    for (const tab of await page
      .locator('.tabs-container .tab')
      .all()
      .catch(() => [])) {
      const text = (await tab.innerText().catch(() => '')).replace(/\s+/g, ' ').trim();
      const classes = ` ${(await tab.getAttribute('class').catch(() => '')) ?? ''} `;
      tabs.push(
        `${text}${classes.includes(' active ') ? ' (active)' : ''}${classes.includes(' dirty ') ? ' (unsaved)' : ''}`,
      );
    }
    const notifications = await texts(page.locator('.notifications-toasts .notification-toast'));
    const picker = await texts(quickInput.filter({ visible: true }).locator('.quick-input-list .monaco-list-row'));
    const shot = await screenshot(`shown-${Date.now()}`).catch(() => 'none');
    return `tabs: ${tabs.join(' | ') || 'none'}; notifications: ${notifications.join(' | ') || 'none'}; picker: ${picker.slice(0, 5).join(' | ') || 'closed'}; screenshot: ${shot}; the extension's log ends:\n${extensionLog()}`;
  }

  function extensionLog(lines = 20): string {
    const all = extensionLogLines();
    return all.length === 0 ? '(no log written)' : all.slice(-lines).join('\n');
  }

  function extensionLogLines(): string[] {
    // <user data>/logs/<start time>/exthost<N>/article-audio.article-audio/Article Audio.log (a window reload starts
    // another exthost folder; the newest is read).
    const logs = path.join(vscode.userDataDir, 'logs');
    const files: string[] = [];
    const ordered = (names: string[]) => names.sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    for (const session of existsSync(logs) ? ordered(readdirSync(logs)) : [])
      for (const host of ordered(readdirSync(path.join(logs, session)).filter((name) => name.startsWith('exthost')))) {
        const file = path.join(logs, session, host, 'article-audio.article-audio', 'Article Audio.log');
        if (existsSync(file)) files.push(file);
      }
    const newest = files.at(-1);
    return newest ? readFileSync(newest, 'utf8').trimEnd().split('\n') : [];
  }

  /** Runs a convert command and waits until the extension's log says a job with this title was submitted. */
  async function convert(command: string, title: string, timeoutMs: number, keepSelection = false): Promise<void> {
    const submitted = () =>
      extensionLogLines().filter((line) => line.includes(' submitted to ') && line.includes(`: "${title}" (`)).length;
    const before = submitted();
    await runCommand(command, { keepSelection });
    try {
      await waitFor(`a job "${title}" submitted`, () => submitted() > before, timeoutMs);
    } catch (error) {
      const shown = await whatIsShown();
      throw new Error(`${(error as Error).message}; ${lastEnter}; ${shown}\n${await recentCommands()}`);
    }
  }

  /**
   * The palette's first rows with nothing typed: its recently used commands, newest first. VS Code adds a command
   * there when the palette accepts it, so this tells whether an Enter in the palette ran the command at all.
   */
  async function recentCommands(): Promise<string> {
    const input = await typeInPicker('F1', '>');
    const rows = page.locator('.quick-input-list .monaco-list-row');
    const listed = input ? await rows.first().waitFor({ timeout: 5_000 }).then(ok, fail) : false;
    const texts = listed ? await rows.allInnerTexts().catch((): string[] => []) : [];
    await page.keyboard.press('Escape');
    return `the palette's first rows (recently used first): ${
      texts
        .slice(0, 4)
        .map((text) => text.replace(/\s+/g, ' ').trim())
        .join(' | ') || 'none'
    }`;
  }

  async function screenshot(name: string): Promise<string> {
    const dir = path.join(repoRoot, 'test-results');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${name}.png`);
    await page.screenshot({ path: file });
    return file;
  }

  async function runOnJob(command: string, job: string, timeoutMs = 240_000): Promise<void> {
    const rows = page.locator('.quick-input-list .monaco-list-row');
    let seen: string[] = [];
    try {
      await waitFor(
        `"${job}" offered by ${command}`,
        async () => {
          await runCommand(command);
          const row = rows.filter({ hasText: job }).first();
          const found = await row.waitFor({ timeout: 5_000 }).then(ok, fail);
          // A picker closes when anything takes the focus: its rows stay in the page, hidden, and a click on one
          // waits for it to show again. Then the command is run again (a closed picker chose nothing).
          const clicked = found && (await row.click({ timeout: 5_000 }).then(ok, fail));
          if (!clicked) {
            seen = await rows.allInnerTexts().catch(() => []);
            if (found) seen.unshift(`(the picker closed before "${job}" could be clicked)`);
            if (await quickInput.isVisible().catch(() => false)) await page.keyboard.press('Escape');
          }
          return clicked;
        },
        timeoutMs,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}; the picker listed: ${seen.join(' | ')}; ${await whatIsShown()}`);
    }
  }

  return {
    page,
    workspace,
    runCommand,
    runOnJob,
    openFile,
    paletteRows,
    webviewFrame,
    screenshot,
    whatIsShown,
    extensionLog,
    convertCurrentDocument: (title, timeoutMs = 60_000) =>
      convert('Article Audio: Convert Current Document to Audio', title, timeoutMs),
    convertSelection: (title, timeoutMs = 60_000) =>
      convert('Article Audio: Convert Selection to Audio', title, timeoutMs, true),
    async close() {
      await vscode.close();
      removeWorkspace();
    },
  };
}
