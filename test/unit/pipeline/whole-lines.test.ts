// Every word of a line reaches the voice: Flite splits a line at ".", ":" and "?" and used to drop a last piece of a
// single word. Measured on the real synthesizer (the worker pool the engine uses): a line must last longer than the
// same line without its last word by at least a short word's worth of speech.
import * as assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { SynthesisPool } from '../../../src/speech/voice/synth-pool';
import type { FliteVoice } from '../../../src/speech/voice/synth-protocol';
import { endsWithWord, lastWordSaid } from '../../support/last-word';

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

  // A spelled acronym at the end of a line: "open the U R L." gave the L a 38 ms vowel before Flite got the period as
  // a token of its own (synth-worker.ts); "… V P N." is barely longer than "… V P." though the N is said in full,
  // so these are read from Flite's segments (test/support/last-word.ts), not from the length.
  for (const voice of ['rms', 'kal16', 'slt'] as const) {
    for (const line of [
      'Open the U R L.',
      'Check it opens without a login or V P N.',
      'Did you set the A P I?',
      'Set the key from the A P I K.',
      'There is one player: opening another job switches it.',
    ]) {
      it(`${voice}: the last word of ${JSON.stringify(line)} is said in full`, async () => {
        const result = await lastWordSaid(pool, line, voice);
        assert.ok(result?.said, result?.detail);
      });
    }
  }

  it('the check finds a missing or swallowed last word', async () => {
    // What Flite made of "The answer is simple: patience." before lines were ended: the line without its last word.
    const cut = await pool.synthesize('The answer is simple:', 'rms', { segments: true });
    const word = await pool.synthesize('patience', 'rms', { segments: true });
    assert.equal(endsWithWord(cut.segments!, word.segments!).said, false);
    const full = await pool.synthesize('The answer is simple: patience.', 'rms', { segments: true });
    assert.equal(endsWithWord(full.segments!, word.segments!).said, true);
    // "open the U R L." before the period was split off: the L's vowel lasted 38 ms (Flite's segments then).
    const swallowed = [
      { phone: 'pau', end: 0.168 },
      { phone: 'r', end: 1.016 },
      { phone: 'eh', end: 1.054 },
      { phone: 'l', end: 1.201 },
      { phone: 'pau', end: 1.384 },
    ];
    const letter = [
      { phone: 'pau', end: 0.1 },
      { phone: 'eh', end: 0.25 },
      { phone: 'l', end: 0.4 },
      { phone: 'pau', end: 0.6 },
    ];
    assert.equal(endsWithWord(swallowed, letter).said, false);
    // "M: does, mute." (README's keyboard table): rms gives "mute" y 86 ms, uw 39 ms after the comma pause, and
    // pocketsphinx hears "mute"; the glide is part of the vowel /juː/, so the word counts as said.
    const mute = await lastWordSaid(pool, 'M: does, mute.', 'rms');
    assert.ok(mute?.said, mute?.detail);
    // A glide and a vowel that together last 30 ms are still a swallowed word.
    const muteAlone = await pool.synthesize('mute', 'rms', { segments: true });
    const swallowedMute = [
      { phone: 'pau', end: 0.1 },
      { phone: 'm', end: 0.166 },
      { phone: 'y', end: 0.186 },
      { phone: 'uw', end: 0.196 },
      { phone: 't', end: 0.286 },
      { phone: 'pau', end: 0.4 },
    ];
    assert.equal(endsWithWord(swallowedMute, muteAlone.segments!).said, false);
    // rms says "marks" with "aa" 34 ms and a long "r" after it, alone as in the line (ARCHITECTURE.md: "…unsteady
    // pitch marks."), and pocketsphinx hears "marks": a vowel as long as in the word alone counts as said.
    const marks = await lastWordSaid(pool, 'Its diphones gave unsteady pitch marks.', 'rms');
    assert.ok(marks?.said, marks?.detail);
    // The same word with its vowel cut to 20 ms is still swallowed.
    const marksAlone = await pool.synthesize('marks', 'rms', { segments: true });
    const swallowedMarks = [
      { phone: 'pau', end: 0.1 },
      { phone: 'm', end: 0.17 },
      { phone: 'aa', end: 0.19 },
      { phone: 'r', end: 0.22 },
      { phone: 'k', end: 0.26 },
      { phone: 's', end: 0.4 },
      { phone: 'pau', end: 0.5 },
    ];
    assert.equal(endsWithWord(swallowedMarks, marksAlone.segments!).said, false);
    assert.equal(await lastWordSaid(pool, 'Yes.', 'rms'), undefined, 'one word: nothing to compare');
  });

  it('a line with newlines inside is said as one line, every word of it', async () => {
    const full = await seconds('Settings:\nUse\n', 'rms');
    const cut = await seconds('Settings:', 'rms');
    assert.ok(full - cut >= SHORT_WORD_S, `${full.toFixed(3)} vs ${cut.toFixed(3)}`);
  });
});
