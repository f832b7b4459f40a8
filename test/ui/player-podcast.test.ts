// The player with a two-host show made from a selection: speakers are named in the transcript, and read-along in the
// editor marks the article's own sentences (inside the selection) but nothing for the hosts' greeting or hand-overs.
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launchVSCode, type VSCodeSession, waitFor } from '../support/vscode-ui';

// The same sentence opens the document and the selected part: read-along must mark the one inside the selection.
const ARTICLE = `# Notes on Bees

Researchers counted colonies across three regions. This line is outside the selection.

## The quiet decline

Researchers counted colonies across three regions. The numbers fell by a third in ten years. Pesticides, mites and
lost meadows all played a part.

## What you can do

Plant flowers that bloom from spring to autumn. Leave a corner of the garden wild.
`;

describe('Player with a podcast made from a selection (UI)', () => {
  let vscode: VSCodeSession;

  before(async () => {
    vscode = await launchVSCode({
      files: {
        'notes.md': ARTICLE,
      },
      colorScheme: 'dark',
      settings: {
        'articleAudio.model': 'article-podcast-1-pro',
        'articleAudio.openPlayerWhenDone': true,
        'workbench.colorTheme': 'Default Dark Modern',
      },
    });
  });

  after(async () => {
    await vscode?.close();
  });

  it("names the speakers and marks only the article's sentences, inside the selection, in the editor", async () => {
    const { page } = vscode;
    await vscode.openFile('notes.md', 'Notes on Bees');
    // Select from "## The quiet decline" (line 5) to the end.
    await page.keyboard.press('Control+Home');
    for (let i = 0; i < 4; i += 1) await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Control+Shift+End');
    await page.locator('.editor-instance .selected-text').first().waitFor({ timeout: 10_000 });
    // The job is titled by the selection's first heading: a job of the whole document would be "Notes on Bees".
    await vscode.convertSelection('The quiet decline');

    const frame = await vscode.webviewFrame('Article Audio Player', 180_000);
    await frame.locator('#player').waitFor({ state: 'visible', timeout: 20_000 });
    // The player opens on the first part while the rest is converted; this test reads the whole transcript, so it
    // waits for the finished file (the "still converting" note goes away).
    const deadline = Date.now() + 180_000;
    while ((await frame.locator('#transcript-note', { hasText: 'Still converting' }).count()) > 0) {
      if (Date.now() > deadline) throw new Error('The job never finished in the player');
      await page.waitForTimeout(250);
    }
    assert.match(await frame.locator('#job-meta').innerText(), /article-podcast-1-pro .* selection in notes\.md/);
    const speakers = new Set(await frame.locator('.speaker').allInnerTexts());
    assert.deepEqual([...speakers].sort(), ['Alex', 'Sam'], 'both hosts are named');

    const marks = page.locator('.editor-instance .view-overlays [class*="TextEditorDecorationType"]');
    const sentence = frame.locator('.cue', { hasText: 'Researchers counted colonies across three regions.' });
    assert.equal(await sentence.count(), 1, 'the article sentence is spoken once (only the selection was converted)');
    await sentence.click();
    await marks.first().waitFor({ timeout: 30_000 });
    // Two lines start with the sentence; the mark must be on the second (line 7, inside the selection).
    // (A view-line is one visual line; the sentence may wrap, so look for its start only.)
    const lines = page.locator('.editor-instance .view-line', { hasText: 'Researchers counted colonies' });
    // Both lines' boxes, read again until both are shown: a line not shown at that moment has none, and a clean-clone
    // run once read none here after the mark had shown (why is not known; the editor may still have been revealing
    // the marked sentence).
    let boxes: { y: number }[] = [];
    await waitFor(
      'both lines with the sentence to be shown',
      async () => {
        const found = await Promise.all(
          [0, 1].map((i) =>
            lines
              .nth(i)
              .boundingBox({ timeout: 1_000 })
              .catch(() => null),
          ),
        );
        boxes = found.filter((box) => box !== null);
        return (await lines.count()) === 2 && boxes.length === 2;
      },
      10_000,
    );
    const [outside, inside] = boxes as [{ y: number }, { y: number }];
    const [first, second] = outside.y < inside.y ? [outside, inside] : [inside, outside];
    const mark = await marks.first().boundingBox();
    assert.ok(
      mark && Math.abs(mark.y - second.y) < 4 && Math.abs(mark.y - first.y) > 4,
      `marked inside the selection: ${JSON.stringify({ mark, first, second })}`,
    );

    // The greeting is the hosts' own line: nothing in the document to mark.
    await frame.locator('.cue').first().click();
    await page.waitForFunction(
      `document.querySelectorAll('.editor-instance .view-overlays [class*="TextEditorDecorationType"]').length === 0`,
      undefined,
      { timeout: 30_000 },
    );

    await sentence.click();
    await marks.first().waitFor({ timeout: 30_000 });
    await page.mouse.move(0, 0);
    console.log(`screenshot: ${await vscode.screenshot('player-podcast-dark')}`);
  });
});
