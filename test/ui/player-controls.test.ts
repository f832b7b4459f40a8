// The player's controls in real VS Code, with the real extension and its local engine: a 300 px wide panel that
// neither scrolls sideways nor squashes Play; the transcript reached and played by keyboard alone; speeds up to 4×;
// the OS media session (title, state) and the media keys as the page receives them (play/pause, next in the queue);
// and the sleep timer, at the end of an article (the queue does not go on) and after a number of minutes (it fades
// out and pauses, and carries on across a switch of job).
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Frame } from 'playwright-core';
import { audio, launchVSCode, repoRoot, type VSCodeSession, waitForWithin } from '../support/vscode-ui';

const TITLE = 'Article Audio Player';

const BEES = readFileSync(path.join(repoRoot, 'test/fixtures/articles/bees.md'), 'utf8');
const FIRST = '# First Story\n\nThe first story is short. It has two sentences only.\n';
const SECOND = '# Second Story\n\nThe second story follows the first. It plays when the first one ends.\n';

// This file's waits are for a job's audio on a loaded machine: 30 s unless a call says otherwise.
const waitFor = waitForWithin(30_000);

async function title(frame: Frame): Promise<string> {
  return frame
    .locator('#job-title')
    .innerText()
    .catch(() => '');
}

describe('Player controls (UI)', () => {
  let vscode: VSCodeSession;
  let frame: Frame;

  before(async () => {
    vscode = await launchVSCode({
      files: {
        'bees.md': BEES,
        'first.md': FIRST,
        'second.md': SECOND,
      },
      settings: { 'articleAudio.model': 'article-audio-1-mini', 'articleAudio.openPlayerWhenDone': false },
    });
  });

  after(async () => {
    await vscode?.close();
  });

  async function openJob(job: string): Promise<void> {
    await vscode.runOnJob('Article Audio: Open Player', job);
    frame = await vscode.webviewFrame(TITLE, 120_000);
    await frame.locator('#player').waitFor({ state: 'visible', timeout: 20_000 });
    await waitFor(`the player on "${job}"`, async () => (await title(frame)) === job);
    await waitFor('the audio metadata', async () => Number(await audio(frame, 'a.duration')) > 0);
  }

  /** Tab and Shift+Tab as a keyboard user presses them, inside the player page. */
  async function focused(): Promise<string> {
    return String(
      await frame.evaluate(
        `(() => { const e = document.activeElement; return e ? e.id || (e.matches('.cue') ? 'cue:' + e.dataset.index : e.tagName + '.' + e.className) : ''; })()`,
      ),
    );
  }

  it(
    'fits a 300 and a 280 px wide panel: no sideways scroll, Play round and usable',
    { timeout: 600_000 },
    async () => {
      const { page } = vscode;
      for (const [file, job] of [
        ['bees.md', 'Why Gardens Need Bees'],
        ['first.md', 'First Story'],
        ['second.md', 'Second Story'],
      ] as const) {
        await vscode.openFile(file, job);
        await vscode.convertCurrentDocument(job);
      }
      await vscode.runOnJob('Article Audio: Add to Queue', 'Second Story');
      // The player alone in the window, no side bar, and the window narrowed until the panel is 300 px wide.
      await vscode.runCommand('View: Close All Editor Groups');
      await openJob('Why Gardens Need Bees');
      await vscode.runCommand('View: Close Primary Side Bar');
      await waitFor('the side bar to close', async () => (await page.locator('.part.sidebar').isVisible()) === false);
      await waitFor('the up-next list', async () => await frame.locator('#up-next').isVisible());
      type Layout = {
        scroll: number;
        client: number;
        playerScroll: number;
        playerClient: number;
        outside: string[];
        play: [number, number];
      };
      for (const target of [300, 280]) {
        for (let i = 0; i < 6; i++) {
          const inner = Number(await frame.evaluate('window.innerWidth'));
          if (Math.abs(inner - target) <= 2) break;
          const size = page.viewportSize() ?? { width: 1400, height: 900 };
          await page.setViewportSize({ width: size.width - (inner - target), height: size.height });
          await waitFor(
            'the panel to be resized',
            async () => Number(await frame.evaluate('window.innerWidth')) !== inner,
          );
        }
        const width = Number(await frame.evaluate('window.innerWidth'));
        assert.ok(Math.abs(width - target) <= 10, `the panel is ${width} px wide (${target} wanted)`);
        await vscode.screenshot(`player-${target}px`);

        const layout = await frame.evaluate<Layout>(`(() => {
        const root = document.scrollingElement;
        const outside = [...document.querySelectorAll('#player *')]
          .filter((e) => e.getClientRects().length > 0 && !e.closest('.visually-hidden'))
          .map((e) => [e.id || e.tagName + '.' + e.className, e.getBoundingClientRect()])
          .filter(([, r]) => r.width > 0 && (r.left < -0.5 || r.right > innerWidth + 0.5))
          .map(([name, r]) => name + ' ' + Math.round(r.left) + '..' + Math.round(r.right));
        const play = document.getElementById('play').getBoundingClientRect();
        const player = document.getElementById('player');
        return { scroll: root.scrollWidth, client: root.clientWidth, playerScroll: player.scrollWidth,
          playerClient: player.clientWidth, outside, play: [play.width, play.height] };
      })()`);
        const at = `at ${width} px: ${JSON.stringify(layout)}`;
        assert.ok(layout.scroll <= layout.client, `the page does not scroll sideways ${at}`);
        assert.ok(layout.playerScroll <= layout.playerClient, `nor does the player ${at}`);
        assert.deepEqual(layout.outside, [], `nothing sticks out of the panel ${at}`);
        const [playWidth, playHeight] = layout.play;
        assert.ok(Math.abs(playWidth - playHeight) < 1 && playWidth >= 28, `Play is round and big enough ${at}`);
      }
      await frame.locator('#play').click();
      await waitFor('playing at 280 px', async () => (await audio(frame, 'a.paused')) === false);
      await frame.locator('#play').click();
      await waitFor('paused', async () => (await audio(frame, 'a.paused')) === true);
      await page.setViewportSize({ width: 1400, height: 900 });
    },
  );

  it('reaches the transcript with Tab, moves with the arrows and plays a sentence with Enter', async () => {
    await frame.locator('#job-title').click();
    let reached = '';
    for (let i = 0; i < 40 && !reached.startsWith('cue:'); i++) {
      await frame.locator('body').press('Tab');
      reached = await focused();
    }
    assert.match(reached, /^cue:\d+$/, 'Tab reaches a sentence of the transcript');
    const outline = String(await frame.evaluate(`getComputedStyle(document.activeElement).outlineStyle`));
    assert.notEqual(outline, 'none', 'the focused sentence shows the focus');
    const start = Number(reached.slice(4));
    await frame.locator('body').press('ArrowDown');
    await frame.locator('body').press('ArrowDown');
    await frame.locator('body').press('ArrowUp');
    assert.equal(await focused(), `cue:${start + 1}`, 'the arrows move between sentences');
    assert.equal(await audio(frame, 'a.paused'), true, 'moving the focus does not play');
    // One Tab stop for the transcript: Shift+Tab leaves it for the control before it, Tab comes back to the same
    // sentence.
    await frame.locator('body').press('Shift+Tab');
    assert.doesNotMatch(await focused(), /^cue:/);
    await frame.locator('body').press('Tab');
    assert.equal(await focused(), `cue:${start + 1}`);

    const cueStart = Number(
      await frame.evaluate(
        `Number(document.querySelector('.cue[data-index="${start + 1}"]').title.replace(/^Play from /, '').split(':').reduce((t, p) => t * 60 + Number(p), 0))`,
      ),
    );
    await frame.locator('body').press('Enter');
    await waitFor('playback from the sentence', async () => (await audio(frame, 'a.paused')) === false);
    const now = Number(await audio(frame, 'a.currentTime'));
    assert.ok(now >= cueStart && now < cueStart + 4, `playing from the sentence at ${cueStart} s (at ${now} s)`);
    await frame.locator('body').press('k');
    await waitFor('paused', async () => (await audio(frame, 'a.paused')) === true);
  });

  it('plays at up to 4× from the keyboard and the list', async () => {
    await frame.locator('#job-title').click();
    for (let i = 0; i < 12; i++) await frame.locator('body').press(']');
    await waitFor('playbackRate 4', async () => (await audio(frame, 'a.playbackRate')) === 4);
    assert.equal(await frame.locator('#rate').inputValue(), '4');
    assert.equal(await frame.locator('#rate option:checked').innerText(), '4×');
    await frame.locator('body').press('[');
    await waitFor('playbackRate 3.5', async () => (await audio(frame, 'a.playbackRate')) === 3.5);
    await frame.locator('#rate').selectOption('4');
    await waitFor('playbackRate 4 from the list', async () => (await audio(frame, 'a.playbackRate')) === 4);
    // Remembered as the listener's speed: the next job opened plays at 4× too.
    await openJob('First Story');
    await waitFor('4× on the next job', async () => (await audio(frame, 'a.playbackRate')) === 4);
    await frame.locator('#rate').selectOption('1');
    await waitFor('playbackRate 1', async () => (await audio(frame, 'a.playbackRate')) === 1);
  });

  it('tells the OS media session what plays, and answers the media keys (play/pause, next in the queue)', async () => {
    const metadata = await frame.evaluate<{ title: string; artist: string; artwork: string[] } | null>(
      `(() => { const m = navigator.mediaSession.metadata; return m && { title: m.title, artist: m.artist, artwork: [...m.artwork].map((a) => a.src) }; })()`,
    );
    assert.equal(metadata?.title, 'First Story');
    assert.equal(metadata?.artist, 'Article Audio');
    assert.ok(
      metadata?.artwork.some((src) => src.includes('icon.png')),
      JSON.stringify(metadata),
    );
    assert.equal(await frame.evaluate('navigator.mediaSession.playbackState'), 'paused');

    // The keys as Chromium hands them to a focused page (the key path; see the notes for the OS path).
    await frame.locator('#job-title').click();
    await frame.locator('body').press('MediaPlayPause');
    await waitFor('the media key to play', async () => (await audio(frame, 'a.paused')) === false);
    // play() clears `paused` at once; the page tells the OS from the `play` event, a task later.
    await waitFor('the OS to be told it plays', async () => {
      return (await frame.evaluate('navigator.mediaSession.playbackState')) === 'playing';
    });
    await frame.locator('body').press('MediaPlayPause');
    await waitFor('the media key to pause', async () => (await audio(frame, 'a.paused')) === true);

    const upNext = frame.locator('#up-next .up-next-title', { hasText: 'Second Story' });
    await upNext.waitFor({ timeout: 20_000 });
    await waitFor('the queued job to be ready', async () => !(await upNext.isDisabled()), 180_000);
    await frame.locator('body').press('MediaTrackNext');
    await waitFor('the next article of the queue', async () => (await title(frame)) === 'Second Story');
    await waitFor('it to play', async () => (await audio(frame, 'a.paused')) === false);
    await waitFor('the OS to be told', async () => {
      const now = await frame.evaluate('navigator.mediaSession.metadata && navigator.mediaSession.metadata.title');
      return now === 'Second Story';
    });
    await frame.locator('body').press('MediaPlayPause');
    await waitFor('paused', async () => (await audio(frame, 'a.paused')) === true);
  });

  it('stops at the end of the article with the sleep timer, and the queue does not go on', async () => {
    await vscode.runOnJob('Article Audio: Add to Queue', 'First Story');
    await waitFor(
      'First Story up next',
      async () => (await frame.locator('#up-next .up-next-title', { hasText: 'First Story' }).count()) === 1,
    );
    await frame.locator('#sleep').selectOption('end');
    await waitFor('the timer shown', async () => (await frame.locator('#sleep-left').innerText()) === 'at article end');
    // From paused, whatever the case before left, so that Play starts it.
    if ((await audio(frame, 'a.paused')) === false) await frame.locator('#play').click();
    await waitFor('paused before', async () => (await audio(frame, 'a.paused')) === true);
    await audio(frame, 'Number.isFinite(a.duration) && (a.currentTime = Math.max(0, a.duration - 1.5))');
    await frame.locator('#play').click();
    await waitFor('the end of the article', async () => (await audio(frame, 'a.ended')) === true, 60_000);
    await waitFor('the timer to say so', async () =>
      (await frame.locator('#announcer').innerText()).includes('end of the article'),
    );
    assert.equal(await frame.locator('#sleep').inputValue(), 'off', 'the timer is off once it has stopped playback');
    // The queue would go on within a moment of the end; it must not.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    assert.equal(await title(frame), 'Second Story', 'still on the article that ended');
    assert.equal(await audio(frame, 'a.paused'), true);
    assert.equal(await frame.locator('#up-next .up-next-title', { hasText: 'First Story' }).count(), 1, 'still queued');
  });

  it(
    'fades out and pauses after a number of minutes of listening, across a switch of job',
    { timeout: 300_000 },
    async () => {
      await frame.locator('#sleep').selectOption('custom');
      const minutes = frame.locator('#sleep-minutes');
      await minutes.waitFor({ state: 'visible' });
      assert.equal(
        await frame.evaluate('document.activeElement.id'),
        'sleep-minutes',
        'the minutes field has the focus',
      );
      await minutes.fill('1');
      await minutes.press('Enter');
      await waitFor('the countdown', async () =>
        /^(1:00|0:59) left$/.test(await frame.locator('#sleep-left').innerText()),
      );
      assert.match(await frame.locator('#announcer').innerText(), /after 1 minutes? of listening/);
      // Paused time does not count.
      const held = await frame.locator('#sleep-left').innerText();
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      assert.equal(await frame.locator('#sleep-left').innerText(), held, 'the countdown waits while paused');

      // The timer stays set when the player switches to another article (the bees, long enough at 0.5×).
      await openJob('Why Gardens Need Bees');
      assert.equal(await frame.locator('#sleep-left').innerText(), held, 'still set after the switch');
      await frame.locator('#rate').selectOption('0.5');
      await waitFor('playbackRate 0.5', async () => (await audio(frame, 'a.playbackRate')) === 0.5);
      await frame.locator('#volume').fill('0.8');
      await waitFor('volume 0.8', async () => (await audio(frame, 'a.volume')) === 0.8);
      await audio(frame, '(a.currentTime = 0)');
      await frame.locator('#play').click();
      await waitFor('playing', async () => (await audio(frame, 'a.paused')) === false);

      let faded = 1;
      await waitFor(
        'the sleep timer to pause playback',
        async () => {
          const [paused, volume] = (await audio(frame, '[a.paused, a.volume]')) as [boolean, number];
          if (!paused) faded = Math.min(faded, volume);
          return paused;
        },
        180_000,
      );
      assert.ok(faded < 0.6, `the volume faded before the pause (lowest seen ${faded})`);
      assert.ok(Number(await audio(frame, 'a.currentTime')) > 20, 'it played for a while (0.5× for a minute)');
      await waitFor('the volume given back', async () => (await audio(frame, 'a.volume')) === 0.8);
      await waitFor(
        'the timer to say so',
        async () => (await frame.locator('#announcer').innerText()) === 'Sleep timer: paused',
      );
      assert.equal(await frame.locator('#sleep').inputValue(), 'off');
      assert.equal(await frame.locator('#sleep-left').isVisible(), false);
      assert.equal(await frame.locator('#volume').inputValue(), '0.8', 'the slider never showed the fade');
    },
  );
});
