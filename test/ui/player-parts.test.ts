// Listening while converting, in real VS Code with the real extension and its local engine: a 50,000-character
// document (the first half of test/fixtures/articles/long.md, about an hour of audio) converted with Pro opens in the
// player with its first part, plays before the job has finished (the status bar says "playing while converting"),
// plays on across a part boundary, shows the converted-so-far total, keeps the position when the player is closed and
// reopened mid-job, and is then heard from about 40 % to its end at 3× the way a listener skipping ahead does (issue
// 26): seek close to the live edge, play a few seconds, again, until the job finishes while it plays, then on to the
// end. The stream passes through the page's Media Source window, which holds a few minutes (the whole stream went
// into one SourceBuffer before, which filled at ~2,200 s: "The SourceBuffer is full"; the stream here is longer than
// that), the job's end must not stall playback (it reloaded the finished file before: ~38 s of silence), and
// reopening afterwards loads the finished file.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Frame } from 'playwright-core';
import { formatTime } from '../../src/webview/transcript';
import { audio, launchVSCode, repoRoot, type VSCodeSession, waitFor as waitUntil } from '../support/vscode-ui';

const TITLE = 'Article Audio Player';
/** The run from "40 %" starts once this much is converted (the article is about 3,700 s; checked at the end). */
const RUN_FROM_S = 1_200;
/** The stream must be longer than this: the whole stream in one SourceBuffer filled it at ~2,200 s (issue 26). */
const LONGER_THAN_S = 2_500;
/**
 * The first half of long.md, cut at a paragraph: the whole (99k characters, ~7,400 s of audio) proved nothing more
 * than half of it and made this the slowest file of the suite (the run waits for the whole Pro job).
 */
const ARTICLE = (() => {
  const text = readFileSync(path.join(repoRoot, 'test/fixtures/articles/long.md'), 'utf8');
  return text.slice(0, text.indexOf('\n\n', 50_000) + 1);
})();
/** A stall longer than this while the job finishes fails the test (issue 26: the switch to the finished file). */
const MAX_STALL_MS = 500;
const LONG_HEADING = 'A long article about patient work';

/**
 * Watches the page's audio every 50 ms (its own clock): stalls, meaning the playhead not moving while playing and
 * not in a seek the listener made (from `seeking` until it moves again), each with when it began and ended; the
 * longest the SourceBuffer held; whether the error box ever showed. Installed again on a reopened page.
 */
async function watch(frame: Frame): Promise<void> {
  await frame.evaluate(`(() => {
    const a = document.getElementById('audio');
    const error = document.getElementById('playback-error');
    const w = { stalls: [], mostBuffered: 0, errorShown: '', seeking: false, last: a.currentTime, stallFrom: undefined, atFinish: undefined };
    window.__watch = w;
    a.addEventListener('seeking', () => { w.seeking = true; w.stallFrom = undefined; });
    setInterval(() => {
      const now = performance.now();
      if (!error.hidden && !w.errorShown) w.errorShown = error.textContent;
      let held = 0;
      for (let i = 0; i < a.buffered.length; i++) held += a.buffered.end(i) - a.buffered.start(i);
      w.mostBuffered = Math.max(w.mostBuffered, held);
      // What the audio was doing when the page learnt that the job finished.
      if (a.dataset.liveEnded && !w.atFinish) w.atFinish = { paused: a.paused, ended: a.ended, seeking: w.seeking, t: a.currentTime };
      const moved = a.currentTime !== w.last;
      w.last = a.currentTime;
      if (moved) {
        w.seeking = false;
        if (w.stallFrom !== undefined) w.stalls.push([w.stallFrom, now]);
        w.stallFrom = undefined;
      } else if (!a.paused && !a.ended && !w.seeking && w.stallFrom === undefined) {
        w.stallFrom = now;
      } else if ((a.paused || a.ended) && w.stallFrom !== undefined) {
        w.stalls.push([w.stallFrom, now]);
        w.stallFrom = undefined;
      }
    }, 50);
  })()`);
}

interface Watched {
  stalls: [number, number][];
  mostBuffered: number;
  errorShown: string;
  stallFrom?: number;
  atFinish?: { paused: boolean; ended: boolean; seeking: boolean; t: number };
}

async function watched(frame: Frame): Promise<Watched> {
  return frame.evaluate<Watched>('window.__watch');
}

/** Moves the seek bar as a listener drags it (its input event; the page seeks there). */
async function seekBar(frame: Frame, time: number): Promise<void> {
  await frame.evaluate(
    `(() => { const seek = document.getElementById('seek'); seek.value = String(${time}); seek.dispatchEvent(new Event('input', { bubbles: true })); })()`,
  );
}

/** The page's audio as a line of text, said when a wait fails (what the audio did, not only that it did not). */
let describePage: () => Promise<string> = () => Promise.resolve('');

/** Waits for a state; the limit only stops a hung run (a Pro job of 50k characters takes minutes on 2 busy cores). */
// This file's waits are for a job's audio on a loaded machine: 60 s unless a call says otherwise.
const waitFor = async (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000) => {
  try {
    await waitUntil(what, check, timeoutMs);
  } catch (error) {
    console.log(`page when waiting for ${what} failed: ${await describePage().catch((e: unknown) => String(e))}`);
    throw error;
  }
};

describe('Player plays a running job from its parts (UI)', () => {
  let vscode: VSCodeSession;

  before(async () => {
    vscode = await launchVSCode({
      files: {
        'long.md': ARTICLE,
      },
      settings: { 'articleAudio.model': 'article-audio-1-pro', 'articleAudio.openPlayerWhenDone': true },
    });
  });

  after(async () => {
    await vscode?.close();
  });

  let frame: Frame;
  const num = async (expression: string): Promise<number> => Number(await audio(frame, expression));
  describePage = async () =>
    String(
      await audio(
        frame,
        `JSON.stringify({ t: a.currentTime, paused: a.paused, ended: a.ended, readyState: a.readyState, duration: a.duration, src: a.src.slice(0, 12), rate: a.playbackRate, buffered: Array.from({ length: a.buffered.length }, (_, i) => [a.buffered.start(i), a.buffered.end(i)]), data: { ...a.dataset }, error: document.getElementById('playback-error').hidden ? '' : document.getElementById('playback-error').textContent, note: document.getElementById('transcript-note').textContent, watch: window.__watch })`,
      ),
    );

  it('starts on the first part, crosses a part boundary, and seeks within what has arrived', async () => {
    const { page } = vscode;
    await vscode.openFile('long.md', LONG_HEADING);
    await vscode.runCommand('Article Audio: Convert Current Document to Audio');

    // The player opens with the first part, long before the job can be done.
    frame = await vscode.webviewFrame(TITLE, 300_000);
    await frame.locator('#player').waitFor({ state: 'visible', timeout: 60_000 });
    await waitFor('the parts to play from a MediaSource', async () =>
      String(await audio(frame, 'a.src')).startsWith('blob:'),
    );
    await waitFor('the audio metadata of the first part', async () => (await num('a.duration')) > 0);
    await watch(frame);
    // Stalls while playing (the page waiting for data), with where they happened: reported, since on a loaded
    // machine the next part can come late; a seam in the audio shows as a gap in the buffered timeline instead.
    await audio(
      frame,
      `(a.addEventListener('waiting', () => { a.dataset.waits = (a.dataset.waits ?? '') + a.currentTime.toFixed(2) + ' '; }), 0)`,
    );
    await frame.locator('#play').click();
    await waitFor('playback', async () => (await audio(frame, 'a.paused')) === false);
    const statusBar = page.locator('.statusbar-item', { hasText: 'playing while converting' }).first();
    await statusBar.waitFor({ timeout: 60_000 });

    // Across the first boundary: the second part is in and the time goes on past where it starts.
    await waitFor('a second part', async () => (await num('a.dataset.liveParts ?? 0')) >= 2, 600_000);
    const boundary = await num('a.dataset.firstBoundary');
    assert.ok(boundary > 0, `the first boundary is at ${boundary} s`);
    await waitFor(
      `playback past the boundary at ${boundary} s`,
      async () => (await num('a.currentTime')) > boundary + 1,
      120_000,
    );
    assert.ok(
      String(await audio(frame, 'a.src')).startsWith('blob:'),
      'still playing the parts: the job has not finished',
    );
    // Gapless: the parts appended so far make one buffered range from 0 that ends where their own times say
    // (MediaSource put no gap and no overlap at the boundaries).
    await waitFor('the parts to be appended', async () =>
      Boolean(
        await audio(
          frame,
          'a.buffered.length === 1 && a.buffered.start(0) < 0.01 && Math.abs(a.buffered.end(0) - Number(a.dataset.appendedEnd)) < 0.05',
        ),
      ),
    );
    const timeline = String(
      await audio(
        frame,
        '`${a.buffered.length} range(s), 0 to ${a.buffered.end(0)} s; appended parts end at ${a.dataset.appendedEnd} s, arrived ones at ${a.dataset.liveEnd} s`',
      ),
    );
    const waits = String(await audio(frame, "a.dataset.waits ?? ''")).trim();
    console.log(`parts timeline: ${timeline}; stalls (waiting) at: ${waits || 'none'}`);

    // Seeking within what has arrived: back into the first part, and playing on from there.
    await frame.locator('.cue').first().click();
    await waitFor('the seek back into the first part', async () => (await num('a.currentTime')) < boundary);
    const seekedTo = await num('a.currentTime');
    await waitFor(
      'playback to go on after the seek',
      async () => (await num('a.currentTime')) > seekedTo + 0.5 && (await audio(frame, 'a.paused')) === false,
    );
    const cuesSoFar = await frame.locator('.cue').count();
    assert.ok(cuesSoFar > 1, 'the transcript holds the sentences that arrived');
    // A part adds its sentences after those drawn: the sentences shown before stay the same elements (drawing the
    // whole transcript again for every part grew with the square of a long article's length).
    await frame.evaluate("document.querySelector('.cue').dataset.drawnBefore = 'yes'");
    await waitFor('the transcript to grow', async () => (await frame.locator('.cue').count()) > cuesSoFar, 600_000);
    const after = JSON.parse(
      String(
        await frame.evaluate(
          "JSON.stringify({ kept: document.querySelector('.cue').dataset.drawnBefore === 'yes', indexes: [...document.querySelectorAll('.cue')].every((cue, i) => cue.dataset.index === String(i)), ended: document.getElementById('audio').dataset.liveEnded ?? 'no' })",
        ),
      ),
    ) as { kept: boolean; indexes: boolean; ended: string };
    assert.ok(after.kept, `the first sentence was drawn again as the transcript grew (job ended: ${after.ended})`);
    assert.ok(after.indexes, 'the grown transcript numbers its sentences in order');
  });

  it('shows the converted-so-far total and moves the progress dot, and keeps the position when reopened mid-job', async () => {
    const { page } = vscode;
    // Issue 26, 9: the total was 0:00 and the dot stayed at the start.
    await waitFor('a total of what has been converted', async () => {
      const total = await frame.locator('#time-total').innerText();
      return total !== '0:00' && total === formatTime(await num('a.dataset.liveEnd'));
    });
    assert.equal(
      await frame.locator('#time-total').getAttribute('data-live'),
      'so-far',
      'the total is marked as so far',
    );
    assert.match(await frame.locator('#job-meta').innerText(), /converted so far/);
    // Somewhere well inside what has arrived, so that the dot is visibly off the start.
    const edge = await num('a.dataset.liveEnd');
    await seekBar(frame, edge / 2);
    await waitFor('playing after the seek', async () => (await num('a.currentTime')) > edge / 2 + 0.5);
    const progress = Number.parseFloat(
      await frame.evaluate<string>("document.getElementById('seek').style.getPropertyValue('--progress')"),
    );
    assert.ok(progress > 10, `the progress dot is at ${progress} %`);

    // Issue 26, 4: closing the player and opening it again on the running job starts where the listener was.
    await frame.locator('#play').click();
    await waitFor('paused', async () => (await audio(frame, 'a.paused')) === true);
    const paused = await num('a.currentTime');
    assert.equal(await audio(frame, 'a.dataset.liveComplete'), 'false', 'the job is still converting');
    const tab = page.locator('.tab', { hasText: LONG_HEADING }).first();
    await tab.hover();
    await tab.locator('.tab-actions .action-label').click();
    await tab.waitFor({ state: 'detached', timeout: 10_000 });
    const old = frame;
    await waitFor('the old page to go', () => old.isDetached(), 30_000);

    await vscode.runCommand('Article Audio: Open Player');
    frame = await vscode.webviewFrame(TITLE, 300_000);
    await waitFor('the parts to play from a MediaSource again', async () =>
      String(await audio(frame, 'a.src')).startsWith('blob:'),
    );
    await waitFor(
      `the remembered position ${paused.toFixed(1)} s`,
      async () => Math.abs((await num('a.currentTime')) - paused) < 0.5,
    );
    assert.equal(await audio(frame, 'a.paused'), true, 'reopening does not start playback');
    await watch(frame);
    await frame.locator('#play').click();
    await waitFor('playing from there', async () => (await num('a.currentTime')) > paused + 0.5);
  });

  it('plays from about 40 % to the end at 3× through the window, with no stall when the job finishes', async () => {
    await frame.locator('#rate').selectOption('3');
    await waitFor('3×', async () => (await num('a.playbackRate')) === 3);
    await waitFor(`${RUN_FROM_S} s converted`, async () => (await num('a.dataset.liveEnd')) >= RUN_FROM_S, 1_200_000);

    // Skipping ahead like a listener: to 20 s before the live edge, a few seconds of listening, again; until the job
    // finishes while it plays. Each seek's wait for data is the listener's doing and is not counted as a stall.
    const startedAt = (await num('a.dataset.liveEnd')) - 20;
    let seeks = 0;
    for (;;) {
      if ((await audio(frame, 'a.dataset.liveEnded')) === 'finished') break;
      // The page must play the parts to the end (it reloaded the finished file when the job ended before).
      assert.ok(String(await audio(frame, 'a.src')).startsWith('blob:'), 'the player left the parts while playing');
      const edge = await num('a.dataset.liveEnd');
      const now = await num('a.currentTime');
      if (edge - now > 40) {
        const target = edge - 20;
        await seekBar(frame, target);
        seeks++;
        await waitFor(
          `playback at ${target.toFixed(0)} s (seek ${seeks})`,
          async () => (await num('a.currentTime')) > target + 1 && (await audio(frame, 'a.paused')) === false,
          120_000,
        );
      }
      // A few seconds of listening at 3× (the job converts faster than that, so the edge runs ahead again).
      const from = await num('a.currentTime');
      await waitFor(
        'a few seconds of listening',
        async () =>
          (await num('a.currentTime')) > from + 6 || (await audio(frame, 'a.dataset.liveEnded')) === 'finished',
        120_000,
      );
      const shown = (await watched(frame)).errorShown;
      assert.equal(shown, '', `an error box: ${shown}`);
    }

    // The job finished while the parts played: they play on, and nothing stalls around that moment.
    const finishedAt = await num('a.dataset.liveEndedAt');
    const playingAtFinish = await num('a.currentTime');
    // Five seconds of listening after it (or the end, when the listener was that close to it).
    await waitFor(
      'listening on after the job finished',
      async () => (await audio(frame, 'a.ended')) === true || (await num('a.currentTime')) > playingAtFinish + 15,
      120_000,
    );
    const atFinish = (await watched(frame)).atFinish;
    assert.ok(
      atFinish && !atFinish.paused && !atFinish.ended,
      `playing when the job finished: ${JSON.stringify(atFinish)}`,
    );
    assert.ok(String(await audio(frame, 'a.src')).startsWith('blob:'), 'the parts play on: no reload');
    const around = (await watched(frame)).stalls.filter(
      ([from, to]) => to > finishedAt - 3_000 && from < finishedAt + 10_000,
    );
    const longest = Math.max(0, ...around.map(([from, to]) => to - from));
    // On a busy machine the page stalls now and then anyway (a 1.7 s stall at load 20-25): the finish may stall no
    // longer than MAX_STALL_MS or three times the longest stall of the playback before it, whichever is more.
    const before = (await watched(frame)).stalls.filter(([, to]) => to <= finishedAt - 3_000);
    const usual = Math.max(0, ...before.map(([from, to]) => to - from));
    const allowed = Math.max(MAX_STALL_MS, 3 * usual);
    console.log(
      `job finished at ${playingAtFinish.toFixed(1)} s of audio after ${seeks} seeks from ${startedAt.toFixed(0)} s; stalls around it: ${around.length}, longest ${longest.toFixed(0)} ms (before it: ${before.length}, longest ${usual.toFixed(0)} ms)`,
    );
    assert.ok(
      longest <= allowed,
      `a stall of ${longest.toFixed(0)} ms when the job finished (allowed ${allowed.toFixed(0)} ms; longest before ${usual.toFixed(0)} ms)`,
    );
    assert.equal(await frame.locator('.cue.current').count(), 1, 'the spoken sentence is still marked');

    // On to the end: the total is now the finished job's length, no longer marked "so far".
    const total = await num('a.dataset.liveEnd');
    assert.equal(await audio(frame, 'a.dataset.liveComplete'), 'true');
    assert.ok(total > LONGER_THAN_S, `the stream is ${total.toFixed(0)} s long (more than ${LONGER_THAN_S} s)`);
    await waitFor(
      'the finished total',
      async () => (await frame.locator('#time-total').innerText()) === formatTime(total),
    );
    assert.equal(await frame.locator('#time-total').getAttribute('data-live'), null);
    assert.ok(
      startedAt <= 0.4 * total,
      `the run started at ${startedAt.toFixed(0)} s of ${total.toFixed(0)} s (≤ 40 %)`,
    );
    if ((await audio(frame, 'a.ended')) !== true) await seekBar(frame, total - 15);
    await waitFor('the end of the audio', async () => (await audio(frame, 'a.ended')) === true, 120_000);
    const end = await num('a.currentTime');
    assert.ok(Math.abs(end - total) < 1, `ended at ${end} s of ${total} s`);
    const seen = await watched(frame);
    assert.equal(seen.errorShown, '', `an error box: ${seen.errorShown}`);
    // The window: the stream went through the buffer a few minutes at a time, never all of it at once.
    const removes = await num('a.dataset.liveRemoves');
    assert.ok(removes > 0, 'parts far behind were removed');
    assert.ok(seen.mostBuffered < 1_000, `the buffer held at most ${seen.mostBuffered.toFixed(0)} s`);
    console.log(
      `to the end: ${total.toFixed(0)} s, ${await num('a.dataset.liveAppends')} appends, ${removes} removes, at most ${seen.mostBuffered.toFixed(0)} s buffered`,
    );
  });

  it('loads the finished file when the player is opened again', async () => {
    const { page } = vscode;
    const tab = page.locator('.tab', { hasText: LONG_HEADING }).first();
    await tab.hover();
    await tab.locator('.tab-actions .action-label').click();
    await tab.waitFor({ state: 'detached', timeout: 10_000 });
    await vscode.runCommand('Article Audio: Open Player');
    frame = await vscode.webviewFrame(TITLE, 300_000);
    await waitFor('the finished file', async () => {
      const src = String(await audio(frame, 'a.src'));
      return src.length > 0 && !src.startsWith('blob:');
    });
    await waitFor('the finished file to load', async () => (await num('a.duration')) > LONGER_THAN_S);
    await frame.locator('#play').click();
    const from = await num('a.currentTime');
    await waitFor('playback of the finished file', async () => (await num('a.currentTime')) > from + 1);
    await page.screenshot({ path: path.join(repoRoot, 'test-results', 'player-parts.png') }).catch(() => undefined);
    await frame.locator('#play').click();
    await waitFor('paused', async () => (await audio(frame, 'a.paused')) === true);
  });

  it('says so when the job being played is cancelled, and plays what was converted', async () => {
    // Issue 26, 5: after Cancel Job the player still said "Still converting…" at 0:00 / 0:00.
    // The keyboard goes to the workbench, not to the player's page (which had it since its Play button was clicked).
    const { page } = vscode;
    await page.locator('.monaco-editor .view-lines').first().click();
    await vscode.openFile('long.md', LONG_HEADING);
    await vscode.runCommand('Article Audio: Convert Current Document to Audio');
    // Two jobs can be played now (the finished one and the new one with its first part): the newest is listed first.
    await waitFor(
      'the new job to have parts',
      async () => {
        await vscode.runCommand('Article Audio: Open Player');
        const pick = page.locator('.quick-input-widget .quick-input-list .monaco-list-row');
        const rows = await pick
          .first()
          .waitFor({ timeout: 5_000 })
          .then(() => pick.count())
          .catch(() => 0);
        if (rows < 2) {
          await page.keyboard.press('Escape');
          return false;
        }
        await page.keyboard.press('Enter');
        return true;
      },
      300_000,
    );
    frame = await vscode.webviewFrame(TITLE, 300_000);
    await waitFor('the new job playing from its parts', async () =>
      String(await audio(frame, 'a.src')).startsWith('blob:'),
    );
    await waitFor('its first parts', async () => (await num('a.duration')) > 2);
    await watch(frame);
    await frame.locator('#play').click();
    await waitFor('playback', async () => (await audio(frame, 'a.paused')) === false);

    await vscode.runCommand('Article Audio: Cancel Job');
    const note = frame.locator('#transcript-note');
    await waitFor(
      'the player to say the job was cancelled',
      async () => (await note.getAttribute('data-live-state')) === 'cancelled',
    );
    assert.match(await note.innerText(), /Conversion cancelled: the \d+:\d\d converted before plays/);
    await frame.locator('#transcript-note button', { hasText: 'Convert Again' }).waitFor({ timeout: 10_000 });
    assert.doesNotMatch(await frame.locator('#job-meta').innerText(), /converted so far/);
    const total = await frame.locator('#time-total').innerText();
    assert.notEqual(total, '0:00', 'the total is what was converted');
    assert.equal(total, formatTime(await num('a.dataset.liveEnd')));
    assert.equal(await frame.locator('#time-total').getAttribute('data-live'), null, 'no longer "so far"');
    // What was converted still plays.
    const now = await num('a.currentTime');
    await waitFor('playback to go on after the cancel', async () => (await num('a.currentTime')) > now + 1);
    const seen = await watched(frame);
    assert.equal(seen.errorShown, '', `an error box: ${seen.errorShown}`);
  });
});
