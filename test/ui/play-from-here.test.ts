// Play from Here (issue 26), as a listener uses it in real VS Code with the real local engine: the cursor in a
// converted document plays its job from that sentence (the transcript marks it, the time is that sentence's); in a
// document not converted yet, it converts from the cursor's sentence to the end and plays as soon as the first part
// is in.
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { audio, launchVSCode, type VSCodeSession, waitForWithin } from '../support/vscode-ui';

const SENTENCES = [
  'The harbour was quiet before dawn.',
  'Boats rocked gently against the pier.',
  'A gull called once and then fell silent.',
  'The baker on the corner lit his ovens.',
  'Smoke rose straight up into the still air.',
  'The lighthouse keeper climbed down for breakfast.',
  'Fishermen checked their nets in the grey light.',
  'By six the first ferry sounded its horn.',
];
const HARBOUR = `# Morning Harbour\n\n${SENTENCES.slice(0, 4).join(' ')}\n\n${SENTENCES.slice(4).join(' ')}\n`;
const GARDEN = `# The Garden\n\nThe garden woke slowly after the rain.\n\nThe roses leaned on the fence. Snails crossed the path with great patience.\n\nA blackbird watched them from the wall and sang.\n`;

const waitFor = waitForWithin(60_000);

describe('Play from Here (UI)', () => {
  let vscode: VSCodeSession;

  before(async () => {
    vscode = await launchVSCode({
      files: {
        'harbour.md': HARBOUR,
        'garden.md': GARDEN,
      },
      settings: { 'articleAudio.model': 'article-audio-1-mini', 'articleAudio.openPlayerWhenDone': false },
    });
  });

  after(async () => {
    await vscode?.close();
  });

  /** Puts the cursor at line:column (1-based) with Go to Line. */
  async function cursorAt(line: number, column: number): Promise<void> {
    const { page } = vscode;
    await page.keyboard.press('Control+G');
    const input = page.locator('.quick-input-widget input').first();
    await input.waitFor({ timeout: 10_000 });
    await input.fill(`:${line}:${column}`);
    await input.press('Enter');
    await page
      .locator('.statusbar-item', { hasText: `Ln ${line}, Col ${column}` })
      .first()
      .waitFor({ timeout: 10_000 });
  }

  it('plays a converted document from the sentence at the cursor', async () => {
    const { page } = vscode;
    await vscode.openFile('harbour.md', 'Morning Harbour');
    await vscode.convertCurrentDocument('Morning Harbour');
    await vscode.runCommand('Article Audio: Show Jobs');
    const row = page.locator('.part.sidebar .monaco-list-row[aria-label*="Morning Harbour"]').first();
    await waitFor(
      'the job to finish',
      async () => /Ready|finished|succeeded/i.test((await row.getAttribute('aria-label').catch(() => '')) ?? ''),
      180_000,
    );

    // The cursor in the middle of the sixth sentence ("The lighthouse keeper…"), on line 5.
    await vscode.openFile('harbour.md', 'Morning Harbour');
    const column = SENTENCES.slice(4, 5).join(' ').length + 1 + 'The light'.length + 1;
    await cursorAt(5, column);
    await vscode.runCommand('Article Audio: Play from Here');

    const frame = await vscode.webviewFrame('Article Audio Player', 120_000);
    await waitFor('playback', async () => (await audio(frame, 'a.paused')) === false);
    const current = frame.locator('.cue.current').first();
    await waitFor('the sentence marked', async () => (await current.count()) > 0);
    assert.match(await current.innerText(), /^(The lighthouse keeper|Fishermen)/);
    const cueStart = Number(
      await frame.evaluate(`(() => {
        const cues = [...document.querySelectorAll('.cue')];
        const six = cues.find((c) => c.textContent.startsWith('The lighthouse keeper'));
        return six ? cues.indexOf(six) : -1;
      })()`),
    );
    assert.ok(cueStart > 0, 'the sixth sentence is in the transcript');
    // It started at that sentence, not at the start (the first five sentences take several seconds).
    const time = Number(await audio(frame, 'a.currentTime'));
    assert.ok(time > 3, `playing at ${time} s: not from the sentence at the cursor`);
  });

  it('converts a document from the sentence at the cursor and plays when the first part is in', async () => {
    const { page } = vscode;
    await vscode.openFile('garden.md', 'The Garden');
    // Line 5: "The roses leaned on the fence. Snails crossed…": the cursor in the second sentence.
    await cursorAt(5, 'The roses leaned on the fence. Snai'.length + 1);
    await vscode.runCommand('Article Audio: Play from Here');
    await vscode.runCommand('Article Audio: Show Jobs');
    const row = page.locator('.part.sidebar .monaco-list-row[aria-label*="from"]', { hasText: 'Snails' }).first();
    await row.waitFor({ timeout: 60_000 });
    const frame = await vscode.webviewFrame('Article Audio Player', 120_000);
    await waitFor(
      'the player on the new job',
      async () =>
        /The Garden \(from "Snails crossed/.test(
          await frame
            .locator('#job-title')
            .innerText()
            .catch(() => ''),
        ),
      180_000,
    );
    await waitFor('playback', async () => (await audio(frame, 'a.paused')) === false, 60_000);
    const first = frame.locator('.cue').first();
    assert.match(await first.innerText(), /^Snails crossed the path/, 'the job starts at the sentence at the cursor');
  });
});
