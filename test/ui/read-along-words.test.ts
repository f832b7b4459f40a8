// Word-level read-along (issue 26) in real VS Code: a Markdown file converted with the real extension and its local
// engine; while the player plays, the highlighted word in its transcript moves forward word by word inside the
// highlighted sentence (which keeps aria-current), and the source editor marks the same word inside the sentence's
// highlight (a second decoration: its underline is an inline decoration on the word's own text).
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Frame } from 'playwright-core';
import { launchVSCode, type VSCodeSession, waitFor } from '../support/vscode-ui';

const ARTICLE = `# Reading Word by Word

The old library measured every shelf by hand before the winter came. Readers carried lamps between the long rows of
books, and the floors creaked under their careful steps.

## Small rooms

A quiet room at the back held maps of the coast, drawn in 1887 by a patient surveyor. Visitors paid $4.50 to see them.
`;

/** The cue and word index marked in the page, and the word's text ([-1, -1, ''] when none). */
async function markedWord(frame: Frame): Promise<[number, number, string]> {
  return frame.evaluate(`(() => {
    const word = document.querySelector('.cue.current .word.current-word');
    if (!word) return [-1, -1, ''];
    const cue = word.closest('.cue');
    return [Number(cue.dataset.index), [...cue.querySelectorAll('.word')].indexOf(word), word.textContent];
  })()`);
}

const key = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');

describe('Word-level read-along (UI)', () => {
  let vscode: VSCodeSession;

  before(async () => {
    vscode = await launchVSCode({
      files: {
        'words.md': ARTICLE,
      },
      colorScheme: 'dark',
      settings: {
        'articleAudio.model': 'article-audio-1-mini',
        'articleAudio.openPlayerWhenDone': true,
        'workbench.colorTheme': 'Default Dark Modern',
      },
    });
  });

  after(async () => {
    await vscode?.close();
  });

  it('moves the highlighted word while playing, in the player and in the source editor', async () => {
    const { page } = vscode;
    await vscode.openFile('words.md', 'Reading Word by Word');
    await vscode.convertCurrentDocument('Reading Word by Word');
    const frame = await vscode.webviewFrame('Article Audio Player', 180_000);
    await frame.locator('#player').waitFor({ state: 'visible', timeout: 20_000 });
    await waitFor(
      'the finished file in the player',
      async () => (await frame.locator('#transcript-note', { hasText: 'Still converting' }).count()) === 0,
      180_000,
    );
    // The transcript's sentences are drawn word by word.
    const words = await frame.locator('.cue .word').count();
    assert.ok(words >= 40, `${words} word spans in the transcript`);
    assert.equal(await frame.locator('.word.current-word').count(), 0, 'no word is marked before playback');

    await frame.locator('#play').click();
    // Watch the marked word: it moves forward (sentence by sentence, word by word), never back.
    const seen: [number, number, string][] = [];
    await waitFor(
      'the highlighted word to move through five words',
      async () => {
        const now = await markedWord(frame);
        const last = seen.at(-1);
        if (now[0] >= 0 && (!last || now[0] !== last[0] || now[1] !== last[1])) seen.push(now);
        return new Set(seen.map(([cue, word]) => `${cue}:${word}`)).size >= 5;
      },
      60_000,
    );
    for (let i = 1; i < seen.length; i++) {
      const [a, b] = [seen[i - 1]!, seen[i]!];
      assert.ok(b[0] > a[0] || (b[0] === a[0] && b[1] > a[1]), `the word went back: ${JSON.stringify(seen)}`);
    }
    // The sentence keeps aria-current; the word is marked by a class only, inside it.
    assert.equal(await frame.locator('.cue.current[aria-current="true"]').count(), 1);
    assert.equal(await frame.locator('.word[aria-current]').count(), 0);

    // Paused, the page and the editor mark the same word: the editor's word decoration underlines the word's own
    // text (an inline decoration in the view line), inside the sentence's highlight (an overlay).
    await frame.locator('#play').click();
    await waitFor('paused', async () => (await frame.locator('#play').getAttribute('aria-label')) === 'Play');
    const inlineMark = page.locator('.editor-instance .view-lines [class*="TextEditorDecorationType"]');
    const overlayMark = page.locator('.editor-instance .view-overlays [class*="TextEditorDecorationType"]');
    const editorWord = async () => key((await inlineMark.allInnerTexts()).join(''));
    const [, , pageWord] = await markedWord(frame);
    assert.ok(key(pageWord), `a word is marked in the page (${pageWord})`);
    await waitFor(
      `the editor to mark "${pageWord}"`,
      async () => (await editorWord()) === key(pageWord) && (await overlayMark.count()) >= 2,
      15_000,
    );
    const firstBox = await inlineMark.first().boundingBox();

    // Played on, the editor's word moves with the page's.
    await frame.locator('#play').click();
    await waitFor(
      'the page to mark a later word',
      async () => {
        const [cue, word] = await markedWord(frame);
        const [lastCue, lastWord] = seen.at(-1)!;
        return cue > lastCue || (cue === lastCue && word > lastWord + 1);
      },
      60_000,
    );
    await frame.locator('#play').click();
    await waitFor('paused again', async () => (await frame.locator('#play').getAttribute('aria-label')) === 'Play');
    const [, , laterWord] = await markedWord(frame);
    await waitFor(`the editor to mark "${laterWord}"`, async () => (await editorWord()) === key(laterWord), 15_000);
    const laterBox = await inlineMark.first().boundingBox();
    assert.ok(
      firstBox && laterBox && (firstBox.x !== laterBox.x || firstBox.y !== laterBox.y),
      `the editor's word mark moved: ${JSON.stringify({ firstBox, laterBox })}`,
    );
    await page.mouse.move(0, 0);
    console.log(`screenshot: ${await vscode.screenshot('player-words-dark')}`);
  });
});
