// Intonation through the whole pipeline (src/speech/voice/pitch.ts, hooked in index.ts per voice): the MP3 a Pro
// or Podcast job writes, decoded, and each cue's pitch measured with the tests' YIN tracker. A yes/no question ends
// above the rest of its line, the statement beside it below; the items of a Markdown bullet list before the last end
// above their line, the last below. Inline lists and headings are measured on the synthesizer alone
// (test/unit/pipeline/intonation.test.ts).
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { createSpeechPipeline } from '../../src/speech';
import { endPitch, pitchContour } from '../support/pitch-track';
import { decodeMp3, parseVtt, runJob } from '../support/speech-support';

const TEXT = `# Release notes

The new version is ready for everyone. Is the new version ready for everyone? Did it work?

What the new version brings:

- Fast startup.
- It keeps every job on disk.
- Chapters and tags in the file.
`;

/** A list item's end above the rest of its line, in semitones, at the least (the unit tests measure 2.5 to 4.4). */
const MIN_ITEM_RISE = 1;

describe('pipeline: questions and list items in the audio a job writes', () => {
  const pipeline = createSpeechPipeline({ workers: 2 });
  after(() => pipeline.close());

  for (const model of ['article-audio-1-pro', 'article-podcast-1-pro'] as const) {
    // One job per model, measured by both tests.
    let job: Promise<(text: string) => number> | undefined;
    const endOf = () =>
      (job ??= (async () => {
        const run = await runJob(pipeline, { modelId: model, text: TEXT });
        try {
          assert.equal(run.error, undefined, String(run.error?.stack ?? run.error));
          const audio = await decodeMp3(readFileSync(path.join(run.dir, 'audio.mp3')));
          const { cues } = parseVtt(readFileSync(path.join(run.dir, 'transcript.vtt'), 'utf8'));
          return (text: string) => {
            const cue = cues.find((c) => c.text.includes(text));
            assert.ok(cue, `no cue "${text}" in ${cues.map((c) => c.text).join(' | ')}`);
            return endPitch(pitchContour(audio.samples, audio.sampleRate, cue.start, cue.end));
          };
        } finally {
          run.dispose();
        }
      })());

    it(`${model}: the yes/no questions end above their line, the statement below`, async () => {
      const end = await endOf();
      const statement = end('is ready for everyone.');
      const questions = [end('Is the new version ready'), end('Did it work?')];
      const detail = `questions end ${questions.map((q) => q.toFixed(1)).join(', ')} st, the statement ${statement.toFixed(1)} st`;
      assert.ok(
        questions.every((q) => q >= 2),
        detail,
      );
      assert.ok(statement < 0, detail);
    });

    it(`${model}: the bullet list's items before the last end above their line, the last below`, async () => {
      const end = await endOf();
      const items = ['Fast startup.', 'It keeps every job on disk.', 'Chapters and tags in the file.'].map(end);
      const detail = `items end ${items.map((q) => q.toFixed(1)).join(', ')} st`;
      assert.ok(items[0]! >= MIN_ITEM_RISE && items[1]! >= MIN_ITEM_RISE, detail);
      assert.ok(items[2]! < 0, detail);
    });
  }
});
