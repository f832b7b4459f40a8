// Remove Job from List on a running job (issue 16, item 1), clicked as a person would: the question says
// the job will be cancelled, its button says so too, and after it the job is gone from the list and the status bar.
// (That the engine really ends the job is checked in test/integration/suites/ux.test.ts, which can ask the engine.)
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { launchVSCode, repoRoot, type VSCodeSession, waitFor } from '../support/vscode-ui';

const TITLE = 'A medium article about patient work';

describe('Removing a running job (UI)', () => {
  let vscode: VSCodeSession;

  before(async () => {
    const medium = readFileSync(path.join(repoRoot, 'test/fixtures/articles/medium.md'), 'utf8');
    vscode = await launchVSCode({
      files: {
        'patient-work.md': `${medium}\n\n${medium.replace(/^# .*$/m, '## Once more')}`,
      },
      settings: { 'articleAudio.model': 'article-audio-1-pro', 'articleAudio.openPlayerWhenDone': false },
    });
  });

  after(async () => {
    await vscode?.close();
  });

  it('asks to cancel it, cancels it, and it leaves the list and the status bar', async () => {
    const { page } = vscode;
    await vscode.openFile('patient-work.md', TITLE);

    await vscode.convertCurrentDocument(TITLE);
    await vscode.runCommand('Article Audio: Show Jobs');
    const status = page.locator('.statusbar-item', { hasText: TITLE.slice(0, 20) }).first();
    await waitFor(
      'the running job in the status bar',
      async () => /\d+%|queued/.test(await status.innerText({ timeout: 1_000 }).catch(() => '')),
      90_000,
    );
    const row = page.locator(`.part.sidebar .monaco-list-row[aria-label^="${TITLE}"]`).first();
    await row.waitFor({ timeout: 20_000 });

    await row.click({ button: 'right' });
    const menuItem = page.locator('.context-view .action-label', { hasText: 'Remove Job from List' }).first();
    const question = page.locator('.notification-toast', { hasText: 'is still running' }).first();
    // A click that lands while the menu is still being laid out is lost (the menu stays open): click again then.
    for (let attempt = 0; attempt < 3; attempt++) {
      if (await menuItem.isVisible()) await menuItem.click({ timeout: 10_000 }).catch(() => undefined);
      else if (attempt > 0) await row.click({ button: 'right' });
      const asked = await question.waitFor({ timeout: 8_000 }).then(
        () => true,
        () => false,
      );
      if (asked) break;
    }
    await question.waitFor({ timeout: 20_000 }).catch(async (error: unknown) => {
      const found = await page.getByText('still running', { exact: false }).count();
      const palette = await page.locator('.quick-input-widget').isVisible();
      throw new Error(
        `No question (text found ${found}, palette open ${palette}) (${await vscode.screenshot('remove-running-no-question')})`,
        { cause: error },
      );
    });
    await vscode.screenshot('remove-running-question');
    const text = await question.innerText();
    assert.match(text, /is still running\. Cancel it and remove it from the list\?/, text);
    assert.match(text, /stops working on it/, text);
    await question.locator('.monaco-button', { hasText: 'Cancel Job and Remove' }).first().click();

    await waitFor('the job to leave the Jobs view', async () => (await row.count()) === 0, 30_000);
    await waitFor(
      'the status bar to stop showing it',
      async () => (await status.count()) === 0 || !(await status.isVisible()),
      30_000,
    );
  });
});
