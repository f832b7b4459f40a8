// Every word of a line reaches the voice: Flite splits a line at ".", ":" and "?" and used to drop a last piece of a
// single word. Measured on the real synthesizer (the worker pool the engine uses): a line must last longer than the
// same line without its last word by at least a short word's worth of speech.
import * as assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { SynthesisPool } from '../../../src/engine/pipeline/synth-pool';
import type { FliteVoice } from '../../../src/engine/pipeline/synth-protocol';

/** A one-syllable word takes Flite at least this long (measured: "yes" about 0.35 s in rms and kal16). */
const SHORT_WORD_S = 0.2;

describe('pipeline: every word of a line is synthesized', () => {
  const pool = new SynthesisPool(1);
  after(() => pool.close());

  const seconds = async (text: string, voice: FliteVoice) => {
    const utterance = await pool.synthesize(text, voice);
    return utterance.samples.length / utterance.sampleRate;
  };

  const cases: [string, string][] = [
    ['Result: yes.', 'Result:'],
    ['The answer is simple: patience.', 'The answer is simple:'],
    ['Section four: Settings.', 'Section four:'],
    ['Will you take us through the next part: Tests?', 'Will you take us through the next part:'],
    ['Is it done? Yes.', 'Is it done?'],
  ];
  for (const voice of ['kal16', 'rms', 'slt'] as const) {
    for (const [line, withoutLast] of cases) {
      it(`${voice}: ${JSON.stringify(line)} is longer than ${JSON.stringify(withoutLast)}`, async () => {
        const full = await seconds(line, voice);
        const cut = await seconds(withoutLast, voice);
        assert.ok(full - cut >= SHORT_WORD_S, `${full.toFixed(3)} s vs ${cut.toFixed(3)} s without the last word`);
      });
    }
  }

  it('a line with newlines inside is said as one line, every word of it', async () => {
    const full = await seconds('Settings:\nUse\n', 'rms');
    const cut = await seconds('Settings:', 'rms');
    assert.ok(full - cut >= SHORT_WORD_S, `${full.toFixed(3)} vs ${cut.toFixed(3)}`);
  });
});
