// The listening queue and play/pause from the editor, as a listener uses them in real VS Code with the real local
// engine: queue a second article, see it under "Up next" in the player, play the first with Ctrl+Alt+Space from the
// editor, and hear the player go on to the queued article by itself when the first ends.
import * as assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { audio, launchVSCode, type VSCodeSession, waitForWithin } from '../support/vscode-ui';

const FIRST = '# First Story\n\nThe first story is short. It has two sentences only.\n';
const SECOND = '# Second Story\n\nThe second story follows the first. It plays when the first one ends.\n';
const THIRD = `# Third Story\n\n${Array.from({ length: 24 }, (_, i) => `Sentence ${i + 1} of the third story goes on for a while, slowly and calmly.`).join(' ')}\n`;
const FOURTH = '# Fourth Story\n\nThe fourth story is converted while the third one plays.\n';
const FIFTH = '# Fifth Story\n\nThe fifth story is converted while the third one is paused.\n';

// This file's waits are for a job's audio on a loaded machine: 30 s unless a call says otherwise.
const waitFor = waitForWithin(30_000);

describe('Listening queue (UI)', () => {
  let vscode: VSCodeSession;

  before(async () => {
    vscode = await launchVSCode({
      files: {
        'first.md': FIRST,
        'second.md': SECOND,
        'third.md': THIRD,
        'fourth.md': FOURTH,
        'fifth.md': FIFTH,
        // There from the start, so that the second case's write is a change to a file VS Code watches: a
        // `.vscode` folder made while VS Code runs, with the file written at once, was once missed (the setting
        // never applied, the job said "ready to play" instead of queueing itself).
        '.vscode/settings.json': '{}',
      },
      settings: { 'articleAudio.model': 'article-audio-1-mini', 'articleAudio.openPlayerWhenDone': false },
    });
  });

  after(async () => {
    await vscode?.close();
  });

  it('shows the queue in the player, plays from the editor key, and goes on to the queued article when the first ends', async () => {
    const { page } = vscode;
    await vscode.openFile('first.md', 'First Story');
    await vscode.convertCurrentDocument('First Story');
    await vscode.openFile('second.md', 'Second Story');
    await vscode.convertCurrentDocument('Second Story');

    await vscode.runOnJob('Article Audio: Add to Queue', 'Second Story');
    await vscode.runOnJob('Article Audio: Open Player', 'First Story');
    const frame = await vscode.webviewFrame('Article Audio Player', 120_000);
    await frame.locator('#player').waitFor({ state: 'visible', timeout: 20_000 });
    assert.equal(await frame.locator('#job-title').innerText(), 'First Story');
    const upNext = frame.locator('#up-next .up-next-title', { hasText: 'Second Story' });
    await upNext.waitFor({ timeout: 20_000 });
    await waitFor('the queued job to be ready', async () => !(await upNext.isDisabled()), 180_000);
    await vscode.screenshot('player-queue');
    assert.equal(await audio(frame, 'a.paused'), true, 'nothing plays before the listener asks');

    // Play from the editor: the key works while the focus is in the source, not in the player.
    await vscode.openFile('first.md', 'First Story');
    await page.keyboard.press('Control+Alt+Space');
    await waitFor(
      'the audio to play',
      async () => (await audio(frame, 'a.paused')) === false && Number(await audio(frame, 'a.currentTime')) > 0,
    );
    await page.keyboard.press('Control+Alt+Space');
    await waitFor('the audio to pause', async () => (await audio(frame, 'a.paused')) === true);

    // Near the end of the first story, play on: the queue takes over when it ends.
    await audio(frame, 'Number.isFinite(a.duration) && (a.currentTime = Math.max(0, a.duration - 1.5))');
    await page.keyboard.press('Control+Alt+Space');
    await waitFor(
      'the player to go on to the queued article',
      async () =>
        (await frame
          .locator('#job-title')
          .innerText()
          .catch(() => '')) === 'Second Story',
      60_000,
    );
    await waitFor(
      'the second article to play',
      async () => (await audio(frame, 'a.paused')) === false && Number(await audio(frame, 'a.currentTime')) > 0.3,
      30_000,
    );
    assert.equal(await frame.locator('#up-next').isHidden(), true, 'the queue is empty once its last article plays');
  });

  it('never replaces the article being heard, playing or paused: a job done in the background queues itself and says so once, and the status bar names what plays', async () => {
    const { page } = vscode;
    const player = () => vscode.webviewFrame('Article Audio Player', 120_000);
    // The first case ends with the second story playing. Until it ends, the player would put a job finishing in the
    // background into the listening queue and play it by itself after the second story: whether the third story below
    // would already be playing when this test opens it would then depend on how long the test took to get there.
    // Nothing plays when this case starts.
    const before = await player();
    await waitFor('the second story to end', async () => (await audio(before, 'a.ended')) === true, 60_000);
    // From now on a finished job opens the player by itself (a workspace setting, written first: VS Code applies a
    // changed settings file a moment later, long before the fourth story is converted below).
    writeFileSync(
      path.join(vscode.workspace, '.vscode', 'settings.json'),
      JSON.stringify({ 'articleAudio.openPlayerWhenDone': true }),
    );
    await vscode.openFile('third.md', 'Third Story');
    await vscode.convertCurrentDocument('Third Story');
    await vscode.runOnJob('Article Audio: Open Player', 'Third Story');
    const frame = await player();
    const toasts = (title: string) =>
      page.locator('.notifications-toasts .notification-list-item-message', { hasText: title });
    const state = async () =>
      `player on "${await frame
        .locator('#job-title')
        .innerText()
        .catch(
          () => '?',
        )}" (paused ${String(await audio(frame, 'a.paused'))}, ended ${String(await audio(frame, 'a.ended'))}, at ${String(await audio(frame, 'a.currentTime'))} of ${String(await audio(frame, 'a.duration'))}), up next: ${(
        await frame
          .locator('#up-next')
          .innerText()
          .catch(() => '')
      ).replace(/\s+/g, ' ')}; status bar: ${(
        await Promise.all(
          (await page.locator('.statusbar-item[aria-label^="Article Audio"]').all()).map((item) =>
            item.getAttribute('aria-label'),
          ),
        )
      ).join(
        ' | ',
      )}; notices: ${(await page.locator('.notifications-toasts .notification-list-item-message').allInnerTexts()).join(' | ')}; the extension's log ends:\n${vscode.extensionLog()}`;
    /** The status bar names the third story as playing (it does once no job runs: while one does, it shows that). */
    const statusBarPlaysThird = (when: string) =>
      page
        .locator('.statusbar-item[aria-label="Article Audio: playing Third Story"]')
        .first()
        .waitFor({ timeout: 120_000 })
        .catch(async (error: unknown) => {
          await vscode.screenshot(`queue-status-bar-${when}`);
          throw new Error(`The status bar never named the third story as playing (${when}): ${await state()}`, {
            cause: error,
          });
        });
    await waitFor(
      'the player on the third story',
      async () =>
        (await frame
          .locator('#job-title')
          .innerText()
          .catch(() => '')) === 'Third Story',
    );
    // Finished: opened while it converted, the player plays its parts, and their length grows as they come.
    await waitFor(
      'the third story to be finished',
      async () =>
        Number(await audio(frame, 'a.duration')) > 30 &&
        !/converted so far/.test(await frame.locator('#job-meta').innerText()),
      180_000,
    );
    // Play is a toggle: press it only while paused (pressed on audio that plays, it would pause it).
    if ((await audio(frame, 'a.paused')) === true) await frame.locator('#play').click();
    await waitFor(
      'the third story to play',
      async () => (await audio(frame, 'a.paused')) === false && Number(await audio(frame, 'a.currentTime')) > 0.5,
    );
    // The status bar names what plays (not the last job that finished).
    await statusBarPlaysThird('once it played');

    // (openPlayerWhenDone is on since the start of this test: with an article being heard, a new job must not open.)

    // While it plays: a job finishing in the background queues itself.
    await vscode.openFile('fourth.md', 'Fourth Story');
    await vscode.convertCurrentDocument('Fourth Story');
    await frame
      .locator('#up-next .up-next-title', { hasText: 'Fourth Story' })
      .waitFor({ timeout: 120_000 })
      .catch(async (error: unknown) => {
        await vscode.screenshot('queue-fourth-missing');
        throw new Error(`The fourth story never joined the queue: ${await state()}`, { cause: error });
      });
    await waitFor(
      'the fourth story to be ready',
      async () => !(await frame.locator('#up-next .up-next-title', { hasText: 'Fourth Story' }).isDisabled()),
      120_000,
    );
    assert.equal(await frame.locator('#job-title').innerText(), 'Third Story', 'a finished job replaced what plays');
    assert.equal(await audio(frame, 'a.paused'), false, 'a finished job stopped what plays');
    await statusBarPlaysThird('after the fourth story');

    // Paused mid-way (from the editor, where the listener is): still the listener's article.
    await page.keyboard.press('Control+Alt+Space');
    await waitFor('the pause', async () => (await audio(frame, 'a.paused')) === true);
    const pausedAt = Number(await audio(frame, 'a.currentTime'));
    await vscode.openFile('fifth.md', 'Fifth Story');
    await vscode.convertCurrentDocument('Fifth Story');
    const fifth = frame.locator('#up-next .up-next-title', { hasText: 'Fifth Story' });
    await fifth.waitFor({ timeout: 120_000 });
    await waitFor('the fifth story to be ready', async () => !(await fifth.isDisabled()), 120_000);
    // Time for a wrong switch to show (the job's finish comes after its first part).
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    assert.equal(
      await frame.locator('#job-title').innerText(),
      'Third Story',
      'a finished job replaced the paused article',
    );
    assert.equal(Number(await audio(frame, 'a.currentTime')), pausedAt, 'the paused article lost its place');
    assert.deepEqual(
      await frame.locator('#up-next .up-next-title').allInnerTexts(),
      ['Fourth Story', 'Fifth Story'],
      'the new jobs wait in the listening queue, in order',
    );
    // Said once per job (not at its first part and again when it finished).
    await toasts('Fifth Story').first().waitFor({ timeout: 20_000 });
    assert.match(await toasts('Fifth Story').first().innerText(), /Fifth Story.*listening queue/);
    assert.equal(await toasts('Fifth Story').count(), 1, 'the fifth story was announced more than once');
  });

  // The queue goes on at an article's end once; a listener who plays an ended article again gets the queue's next
  // article at its second end too (the flag that it went on was never reset, so the queue stopped there).
  it('goes on with the queue again when an ended article is played again', async () => {
    const frame = await vscode.webviewFrame('Article Audio Player', 120_000);
    const title = () =>
      frame
        .locator('#job-title')
        .innerText()
        .catch(() => '');
    // The third story (paused mid-way by the case before) to its end: the queue goes on to the fourth, then the fifth.
    await audio(frame, '(a.currentTime = Math.max(0, a.duration - 0.5), true)');
    // Play from the editor (the fifth story's source is in front since the case before), as a listener does.
    await vscode.openFile('fifth.md', 'Fifth Story');
    if ((await audio(frame, 'a.paused')) === true) await vscode.page.keyboard.press('Control+Alt+Space');
    await waitFor('the queue to go on to the fourth story', async () => (await title()) === 'Fourth Story', 60_000);
    await waitFor('the queue to go on to the fifth story', async () => (await title()) === 'Fifth Story', 60_000);
    await waitFor('the fifth story to end', async () => (await audio(frame, 'a.ended')) === true, 60_000);
    assert.deepEqual(await frame.locator('#up-next .up-next-title').allInnerTexts(), [], 'nothing is left queued');

    // Queued after the end, nothing plays it yet; the listener plays the fifth story again, to its end.
    await vscode.runOnJob('Article Audio: Add to Queue', 'First Story');
    const first = frame.locator('#up-next .up-next-title', { hasText: 'First Story' });
    await first.waitFor({ timeout: 20_000 });
    await waitFor('the first story to be ready', async () => !(await first.isDisabled()));
    assert.equal(await title(), 'Fifth Story', 'adding to the queue replaced the ended article');
    await vscode.openFile('fifth.md', 'Fifth Story');
    await vscode.page.keyboard.press('Control+Alt+Space');
    await waitFor('the fifth story to play again', async () => (await audio(frame, 'a.paused')) === false);
    await waitFor(
      'the queue to go on to the first story at its second end',
      async () => (await title()) === 'First Story',
      60_000,
    );
  });
});
