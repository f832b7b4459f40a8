// Jobs, used like a person would in real VS Code: convert a document from the palette, watch the status bar and the
// Jobs view follow it, reload the window while it runs, and see the job picked up again and finished (the issue's
// "reload the window in the middle of a job and see it resume"). The reload also ends the local engine (it exits
// with the extension host that started it); the new window starts it again on the same data dir, where the
// unfinished job is waiting.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { launchVSCode, repoRoot, type VSCodeSession, waitFor } from '../support/vscode-ui';

const TITLE = 'A medium article about patient work';

describe('Jobs view and status bar (UI)', () => {
  let vscode: VSCodeSession;

  before(async () => {
    // Twice the medium article with the slowest model: long enough (tens of seconds on 2 cores) to reload mid-job.
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

  function statusItem() {
    return vscode.page.locator('.statusbar-item', { hasText: TITLE.slice(0, 20) }).first();
  }

  function jobRow() {
    return vscode.page.locator(`.part.sidebar .monaco-list-row[aria-label^="${TITLE}"]`).first();
  }

  async function percentShown(): Promise<number | undefined> {
    const text = await statusItem()
      .innerText({ timeout: 1_000 })
      .catch(() => '');
    const match = /(\d+)%/.exec(text);
    return match ? Number(match[1]) : undefined;
  }

  it('follows a running job in the status bar and the Jobs view, resumes it after a window reload, and finishes it', async () => {
    const { page } = vscode;
    await vscode.openFile('patient-work.md', TITLE);

    await vscode.convertCurrentDocument(TITLE);
    await vscode.runCommand('Article Audio: Show Jobs');

    // The status bar shows the percentage and the title; the Jobs view has the job with model and progress.
    await waitFor('a percentage in the status bar', async () => (await percentShown()) !== undefined, 60_000);
    await jobRow().waitFor({ timeout: 20_000 });
    assert.match((await jobRow().getAttribute('aria-label')) ?? '', /, Pro, (Queued|Processing|\d+%)/);
    const before = await percentShown();
    assert.ok(
      before !== undefined && before < 60,
      `the job is ${before}% done before the reload: too late to test a resume`,
    );
    await vscode.screenshot('jobs-running');

    const reloaded = page.waitForEvent('framenavigated', {
      predicate: (frame) => frame === page.mainFrame(),
      timeout: 30_000,
    });
    await vscode.runCommand('Developer: Reload Window');
    await reloaded;
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });

    // The new window finds the job in its stored list and follows it again: it runs on (the status bar shows its
    // progress once more) and ends finished, with its audio downloaded into the cache.
    await waitFor('the resumed job in the status bar', async () => (await percentShown()) !== undefined, 90_000);
    await vscode.runCommand('Article Audio: Show Jobs');
    await jobRow().waitFor({ timeout: 30_000 });
    await waitFor(
      'the job to be ready in the Jobs view',
      async () => /, Ready,/.test((await jobRow().getAttribute('aria-label')) ?? ''),
      240_000,
    ).catch(async (error: unknown) => {
      const label = await jobRow()
        .getAttribute('aria-label', { timeout: 1_000 })
        .catch(() => null);
      const status = await statusItem()
        .innerText({ timeout: 1_000 })
        .catch(() => null);
      await statusItem()
        .hover()
        .catch(() => undefined);
      const hover = await vscode.page
        .locator('.monaco-hover')
        .first()
        .innerText({ timeout: 5_000 })
        .catch(() => null);
      const shot = await vscode.screenshot('jobs-not-ready');
      if (hover) throw new Error(`${(error as Error).message}: the status bar says "${status}": ${hover} (${shot})`);
      throw new Error(`${(error as Error).message}: the job shows "${label}", the status bar "${status}" (${shot})`);
    });
    // Submitted before the reload, so it ends like any job started here: with its "ready" notification (the player
    // does not open by itself here: openPlayerWhenDone is off).
    await page
      .locator('.notification-toast', { hasText: `"${TITLE}" is ready to play.` })
      .first()
      .waitFor({ timeout: 30_000 })
      .catch(async (error: unknown) => {
        throw new Error(
          `The resumed job ended without its notification (${await vscode.screenshot('jobs-no-ready-toast')})`,
          { cause: error },
        );
      });
    assert.equal(
      await page.locator('.part.sidebar .monaco-list-row[aria-label*=", Pro, "]').count(),
      1,
      'one job, not a second submission',
    );
    // Ready: the status bar offers to play it, and clicking the job opens the player on it.
    await waitFor(
      'the status bar to say the audio is ready',
      async () =>
        !/%/.test(
          await statusItem()
            .innerText()
            .catch(() => '%'),
        ),
      10_000,
    );
    await vscode.screenshot('jobs-ready');
    await jobRow().click();
    const frame = await vscode.webviewFrame('Article Audio Player', 120_000);
    await frame.locator('#job-title', { hasText: TITLE }).waitFor({ timeout: 20_000 });
  });
});
