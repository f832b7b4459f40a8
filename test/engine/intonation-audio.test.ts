// Intonation through the whole pipeline (src/engine/pipeline/pitch.ts, hooked in index.ts per voice): the MP3 a Pro
// or Podcast job writes, decoded, and each cue's pitch measured with the tests' YIN tracker. A yes/no question ends
// above the rest of its line, the statement beside it below. Lists and headings are measured on the synthesizer
// alone (test/unit/pipeline/intonation.test.ts).
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { createSpeechPipeline } from '../../src/engine/pipeline';
import { endPitch, pitchContour } from '../support/pitch-track';
import { decodeMp3, parseVtt, runJob } from '../support/speech-support';

const TEXT = `# Release notes

The new version is ready for everyone. Is the new version ready for everyone? Did it work?
`;

describe('pipeline: questions rise in the audio a job writes', () => {
  const pipeline = createSpeechPipeline({ workers: 2 });
  after(() => pipeline.close());

  for (const model of ['article-audio-1-pro', 'article-podcast-1-pro'] as const) {
    it(`${model}: the yes/no questions end above their line, the statement below`, async () => {
      const run = await runJob(pipeline, { modelId: model, text: TEXT });
      try {
        assert.equal(run.error, undefined, String(run.error?.stack ?? run.error));
        const audio = await decodeMp3(readFileSync(path.join(run.dir, 'audio.mp3')));
        const { cues } = parseVtt(readFileSync(path.join(run.dir, 'transcript.vtt'), 'utf8'));
        const endOf = (text: string) => {
          const cue = cues.find((c) => c.text.includes(text));
          assert.ok(cue, `no cue "${text}" in ${cues.map((c) => c.text).join(' | ')}`);
          return endPitch(pitchContour(audio.samples, audio.sampleRate, cue.start, cue.end));
        };
        const statement = endOf('is ready for everyone.');
        const questions = [endOf('Is the new version ready'), endOf('Did it work?')];
        const detail = `questions end ${questions.map((q) => q.toFixed(1)).join(', ')} st, the statement ${statement.toFixed(1)} st`;
        assert.ok(
          questions.every((q) => q >= 2),
          detail,
        );
        assert.ok(statement < 0, detail);
      } finally {
        run.dispose();
      }
    });
  }
});
