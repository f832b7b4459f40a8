// Listening while converting, in real VS Code with the real extension and its local engine: a 99,000-character
// document converted with Pro opens in the player with its first part, plays before the job has finished (the status
// bar says "playing while converting"), plays on across a part boundary, and when the job ends moves to the finished
// file at the same position instead of starting over.
import * as assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Frame } from 'playwright-core';
import { launchVSCode, repoRoot, type VSCodeSession, waitFor as waitUntil } from '../support/vscode-ui';

const TITLE = 'Article Audio Player';
const LONG_HEADING = 'A long article about patient work';

async function audio(frame: Frame, expression: string): Promise<unknown> {
  return frame.evaluate(`(() => { const a = document.getElementById('audio'); return ${expression}; })()`);
}

/** Waits for a state; the limit only stops a hung run (a Pro job of 99k characters takes minutes on 2 busy cores). */
// This file's waits are for a job's audio on a loaded machine: 60 s unless a call says otherwise.
const waitFor = (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000) =>
  waitUntil(what, check, timeoutMs);

describe('Player plays a running job from its parts (UI)', () => {
  let vscode: VSCodeSession;
  let workspace: string;

  before(async () => {
    workspace = mkdtempSync(path.join(os.tmpdir(), 'article-audio-ui-parts-'));
    copyFileSync(path.join(repoRoot, 'test/fixtures/articles/long.md'), path.join(workspace, 'long.md'));
    vscode = await launchVSCode({
      workspace,
      settings: { 'articleAudio.model': 'article-audio-1-pro', 'articleAudio.openPlayerWhenDone': true },
    });
  });

  after(async () => {
    await vscode?.close();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  it('starts on the first part, crosses a part boundary, and moves to the finished file without starting over', async () => {
    const { page } = vscode;
    await vscode.openFile('long.md', LONG_HEADING);
    await vscode.runCommand('Article Audio: Convert Current Document to Audio');

    // The player opens with the first part, long before the job can be done.
    const frame = await vscode.webviewFrame(TITLE, 300_000);
    await frame.locator('#player').waitFor({ state: 'visible', timeout: 60_000 });
    await waitFor('the parts to play from a MediaSource', async () =>
      String(await audio(frame, 'a.src')).startsWith('blob:'),
    );
    await waitFor('the audio metadata of the first part', async () => Number(await audio(frame, 'a.duration')) > 0);
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
    await waitFor('a second part', async () => Number(await audio(frame, 'a.dataset.liveParts ?? 0')) >= 2, 600_000);
    const boundary = Number(await audio(frame, 'a.dataset.firstBoundary'));
    assert.ok(boundary > 0, `the first boundary is at ${boundary} s`);
    await waitFor(
      `playback past the boundary at ${boundary} s`,
      async () => Number(await audio(frame, 'a.currentTime')) > boundary + 1,
      120_000,
    );
    assert.ok(
      String(await audio(frame, 'a.src')).startsWith('blob:'),
      'still playing the parts: the job has not finished',
    );
    // Gapless: the parts in so far make one buffered range that ends where their own times say (MediaSource put no
    // gap and no overlap at the boundaries).
    await waitFor('the parts to be appended', async () =>
      Boolean(
        await audio(
          frame,
          'a.buffered.length === 1 && a.buffered.start(0) < 0.01 && Math.abs(a.buffered.end(0) - Number(a.dataset.liveEnd)) < 0.05',
        ),
      ),
    );
    const timeline = String(
      await audio(
        frame,
        '`${a.buffered.length} range(s), 0 to ${a.buffered.end(0)} s; parts end at ${a.dataset.liveEnd} s`',
      ),
    );
    const waits = String(await audio(frame, "a.dataset.waits ?? ''")).trim();
    console.log(`parts timeline: ${timeline}; stalls (waiting) at: ${waits || 'none'}`);

    // Seeking within what has arrived: back into the first part, and playing on from there.
    await frame.locator('.cue').nth(1).click();
    await waitFor(
      'the seek back into the first part',
      async () => Number(await audio(frame, 'a.currentTime')) < boundary,
    );
    const seekedTo = Number(await audio(frame, 'a.currentTime'));
    await waitFor(
      'playback to go on after the seek',
      async () =>
        Number(await audio(frame, 'a.currentTime')) > seekedTo + 0.5 && (await audio(frame, 'a.paused')) === false,
    );

    const cuesSoFar = await frame.locator('.cue').count();
    assert.ok(cuesSoFar > 1, 'the transcript holds the sentences that arrived');
    await waitFor('the transcript to grow', async () => (await frame.locator('.cue').count()) > cuesSoFar, 600_000);

    // The job ends: the finished file takes over where the parts were, and plays on, with the transcript where
    // the reader had it and the spoken sentence still marked.
    let lastLive = 0;
    let lastScroll = 0;
    const transcriptScroll = () => frame.evaluate<number>("document.getElementById('transcript').scrollTop");
    await waitFor(
      'the finished file',
      async () => {
        const src = String(await audio(frame, 'a.src'));
        if (src.startsWith('blob:')) {
          lastLive = Number(await audio(frame, 'a.currentTime'));
          lastScroll = await transcriptScroll();
        }
        return !src.startsWith('blob:') && src.length > 0;
      },
      3_600_000,
    );
    const scrollAfterSwitch = await transcriptScroll();
    assert.ok(lastScroll > 0, 'the transcript had scrolled along while the parts played');
    assert.ok(
      scrollAfterSwitch > 0 && Math.abs(scrollAfterSwitch - lastScroll) < 400,
      `the transcript jumped from ${lastScroll} px to ${scrollAfterSwitch} px on the switch`,
    );
    assert.equal(await frame.locator('.cue.current').count(), 1, 'the spoken sentence is still marked');
    await waitFor('the finished file to load', async () => Number(await audio(frame, 'a.duration')) > 3000);
    const afterSwitch = Number(await audio(frame, 'a.currentTime'));
    assert.ok(afterSwitch >= lastLive - 1, `the player went back from ${lastLive} s to ${afterSwitch} s`);
    assert.ok(afterSwitch > boundary, `the player started over (${afterSwitch} s)`);
    await waitFor(
      'playback to go on in the finished file',
      async () =>
        Number(await audio(frame, 'a.currentTime')) > afterSwitch + 1 && (await audio(frame, 'a.paused')) === false,
    );
    await page.screenshot({ path: path.join(repoRoot, 'test-results', 'player-parts.png') }).catch(() => undefined);
  });
});
