// Mini's pace (issue 18): a Mini job over the listening bench's prose text (bench/listening/prose.md, 209 words),
// measured on what the pipeline wrote: words per minute from the transcript's words and cue times, and the silences a
// listener hears between sentences and between paragraphs, found in the decoded MP3 (not the profile's numbers).
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { createSpeechPipeline } from '../../src/speech';
import { parseWebVtt } from '../../src/webview/transcript';
import { type DecodedAudio, decodeMp3, median, rms, runJob, words } from '../support/speech-support';

const PROSE = readFileSync(path.join(__dirname, '..', '..', 'bench', 'listening', 'prose.md'), 'utf8');

/** The longest run of quiet 10 ms frames between two moments: the silence a listener hears there. */
function silenceBetween(audio: DecodedAudio, from: number, to: number): number {
  const frame = 0.01;
  let longest = 0;
  let run = 0;
  for (let t = from; t + frame <= to; t += frame) {
    run = rms(audio, t, t + frame) < 0.003 ? run + frame : 0;
    longest = Math.max(longest, run);
  }
  return longest;
}

describe('speech pipeline: Mini reads at a listener’s pace', () => {
  const pipeline = createSpeechPipeline({ workers: 2 });
  after(() => pipeline.close());

  it('mini: prose at 165-175 words a minute, with a reader’s pauses between sentences and between paragraphs', async (t) => {
    const run = await runJob(pipeline, { modelId: 'article-audio-1-mini', text: PROSE });
    try {
      assert.equal(run.error, undefined, String(run.error?.stack ?? run.error));
      const audio = await decodeMp3(readFileSync(path.join(run.dir, 'audio.mp3')));
      const cues = parseWebVtt(readFileSync(path.join(run.dir, 'transcript.vtt'), 'utf8'));
      const spokenWords = cues.reduce((sum, cue) => sum + words(cue.text).length, 0);
      const wpm = (spokenWords / cues[cues.length - 1]!.end) * 60;
      // Each silence is looked for from a little inside the cue before to a little inside the cue after, so the air
      // the pipeline keeps around each line counts, as a listener hears it.
      const sentences: number[] = [];
      const paragraphs: number[] = [];
      for (let i = 1; i < cues.length; i++) {
        const silence = silenceBetween(audio, cues[i - 1]!.end - 0.15, cues[i]!.start + 0.15);
        (cues[i]!.paragraph ? paragraphs : sentences).push(silence);
      }
      t.diagnostic(
        `mini prose: ${spokenWords} words in ${cues[cues.length - 1]!.end.toFixed(1)} s = ${wpm.toFixed(0)} wpm; ` +
          `silence between sentences (median) ${median(sentences).toFixed(2)} s of ${sentences.map((s) => s.toFixed(2)).join(', ')}; ` +
          `between paragraphs ${median(paragraphs).toFixed(2)} s of ${paragraphs.map((s) => s.toFixed(2)).join(', ')}`,
      );
      assert.ok(sentences.length >= 5 && paragraphs.length >= 3, `${sentences.length} and ${paragraphs.length} pauses`);
      assert.ok(wpm >= 165 && wpm <= 175, `${wpm.toFixed(1)} words a minute`);
      // A reader's pauses: about 0.4-0.7 s after a sentence, 0.8-1.2 s after a paragraph.
      assert.ok(
        sentences.every((s) => s >= 0.4 && s <= 0.8),
        `between sentences: ${sentences.map((s) => s.toFixed(2)).join(', ')} s`,
      );
      assert.ok(
        paragraphs.every((s) => s >= 0.8 && s <= 1.3),
        `between paragraphs: ${paragraphs.map((s) => s.toFixed(2)).join(', ')} s`,
      );
      assert.ok(median(paragraphs) > median(sentences) + 0.25, 'a paragraph ends with a clearly longer pause');
    } finally {
      run.dispose();
    }
  });
});
