// A first run, as a new user meets the extension: the Command Palette offers job commands only when there are jobs,
// the Get Started walkthrough shows its four steps, its sample article opens with a paragraph selected, and the
// default key (Ctrl+Alt+A) converts it.
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launchVSCode, type VSCodeSession } from '../support/vscode-ui';

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('First run: palette, walkthrough and keybinding (UI)', () => {
  let vscode: VSCodeSession;

  before(async () => {
    vscode = await launchVSCode({
      settings: { 'articleAudio.model': 'article-audio-1-mini', 'articleAudio.openPlayerWhenDone': false },
    });
  });
  after(async () => {
    await vscode?.close();
  });

  /** The titles the palette lists for a query (it is left open; Escape closes it). */
  async function paletteRows(query: string): Promise<string[]> {
    const { page } = vscode;
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ timeout: 10_000 });
    await input.fill(`>${query}`);
    await page.waitForTimeout(500);
    const rows = await page.locator('.quick-input-list .monaco-list-row .label-name').allInnerTexts();
    await page.keyboard.press('Escape');
    return rows;
  }

  it('offers job commands in the palette only once there are jobs, and Ctrl+Alt+A converts the walkthrough sample', async () => {
    const { page } = vscode;
    // Commands that need a job are hidden while the list is empty; the ones that start a job are there.
    await vscode.runCommand('Article Audio: Show Jobs');
    await waitFor('the palette to list Convert URL', async () =>
      (await paletteRows('Article Audio: ')).some((r) => r.includes('Convert URL')),
    );
    const empty = await paletteRows('Article Audio: ');
    for (const hidden of [
      'Cancel Job',
      'Retry Job',
      'Open Player',
      'Remove Job from List',
      'Copy Job ID',
      'Save Audio As',
    ]) {
      assert.ok(
        !empty.some((row) => row.includes(hidden)),
        `"${hidden}" is offered with no jobs: ${empty.join(' | ')}`,
      );
    }

    // The walkthrough lists its four steps.
    await vscode.runCommand('Welcome: Open Walkthrough...');
    const pick = page
      .locator('.quick-input-list .monaco-list-row', { hasText: 'Get Started with Article Audio' })
      .first();
    await pick.waitFor({ timeout: 20_000 });
    await pick.click();
    for (const step of ['Convert a selection', 'Listen with read-along', 'Choose a voice', 'Use a remote service']) {
      await page.locator('.getting-started-step', { hasText: step }).first().waitFor({ timeout: 20_000 });
    }
    await page.locator('.getting-started-step', { hasText: 'Convert a selection' }).first().click();
    await page.getByRole('button', { name: 'Open Sample Article' }).first().waitFor({ timeout: 10_000 });
    await vscode.screenshot('walkthrough');

    // Its sample opens with a paragraph selected, and the default key converts it.
    await page.getByRole('button', { name: 'Open Sample Article' }).first().click();
    await page
      .locator('.editor-instance .view-lines', { hasText: 'Why we listen' })
      .first()
      .waitFor({ timeout: 20_000 });
    await page.locator('.editor-instance .selected-text').first().waitFor({ timeout: 10_000 });
    // The editor has focus once the status bar counts the selected characters.
    await page
      .locator('.statusbar-item', { hasText: /\(\d+ selected\)/ })
      .first()
      .waitFor({ timeout: 20_000 });
    await page.keyboard.press('Control+Alt+A');
    const row = page.locator('.part.sidebar .monaco-list-row[aria-label*="Mini"]').first();
    await row.waitFor({ timeout: 60_000 });
    assert.match((await row.getAttribute('aria-label')) ?? '', /^Selection from Untitled-1, Mini, /);

    // Now there is a job: its commands are offered.
    await waitFor('Copy Job ID in the palette', async () =>
      (await paletteRows('Article Audio: Copy Job')).some((r) => r.includes('Copy Job ID')),
    );
  });
});
