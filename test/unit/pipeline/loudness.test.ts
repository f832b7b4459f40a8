// Loudness per ITU-R BS.1770 (K-weighted, gated), and levelling to the podcast target: -19 LUFS for mono with the
// peak under -1 dBFS. The reference point of the standard: a full-scale 997 Hz sine reads -3.01 LUFS.
import * as assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { integratedLoudness, levelToLoudness, PEAK_CEILING, TARGET_LUFS } from '../../../src/speech/audio/loudness';
import { SynthesisPool } from '../../../src/speech/voice/synth-pool';

function sine(frequency: number, amplitude: number, seconds: number, sampleRate: number): Float32Array {
  return Float32Array.from(
    { length: Math.round(seconds * sampleRate) },
    (_, i) => amplitude * Math.sin((2 * Math.PI * frequency * i) / sampleRate),
  );
}

describe('pipeline: loudness (BS.1770)', () => {
  for (const rate of [16_000, 44_100, 48_000]) {
    it(`a full-scale 997 Hz sine at ${rate} Hz reads -3.01 LUFS, and -23 dBFS reads -23 LUFS`, () => {
      assert.ok(
        Math.abs(integratedLoudness(sine(997, 1, 3, rate), rate) + 3.01) < 0.1,
        String(integratedLoudness(sine(997, 1, 3, rate), rate)),
      );
      const quiet = integratedLoudness(sine(997, 10 ** (-20 / 20), 3, rate), rate);
      assert.ok(Math.abs(quiet + 23.01) < 0.1, String(quiet));
    });
  }

  it('the gates leave out silence: a tone with long pauses reads as the tone', () => {
    const rate = 16_000;
    const tone = sine(997, 0.1, 2, rate);
    const withPauses = new Float32Array(tone.length * 3);
    withPauses.set(tone, tone.length);
    // Blocks that straddle the edges of the tone pass the relative gate, as the standard has it: within 1 LU.
    assert.ok(Math.abs(integratedLoudness(withPauses, rate) - integratedLoudness(tone, rate)) < 1);
    assert.equal(integratedLoudness(new Float32Array(rate), rate), Number.NEGATIVE_INFINITY);
  });

  it('a reused scratch buffer (longer, holding an earlier line) gives exactly the same loudness and levelling', () => {
    const rate = 16_000;
    const scratch = new Float64Array(rate * 4);
    integratedLoudness(sine(440, 0.9, 4, rate), rate, scratch); // leaves a louder line's filtered samples behind
    const line = sine(997, 0.05, 1.5, rate);
    assert.equal(integratedLoudness(line, rate, scratch), integratedLoudness(line, rate));
    const fresh = levelToLoudness(line.slice(), rate);
    const reused = levelToLoudness(line.slice(), rate, TARGET_LUFS, scratch);
    assert.deepEqual(reused, fresh);
    // Too short a scratch is not used (and not overrun).
    assert.equal(integratedLoudness(line, rate, new Float64Array(10)), integratedLoudness(line, rate));
  });

  it('brings a line with a few loud peaks to the target by limiting the peaks, smoothly, not by lowering it all', () => {
    const rate = 16_000;
    const line = sine(300, 0.05, 2, rate);
    // Clicks 17 dB above the line, as a diphone join can make: levelled, they would pass the ceiling by 2.4 dB.
    for (const at of [0.3, 0.9, 1.5]) for (let i = 0; i < 8; i++) line[Math.round(at * rate) + i] = 0.35;
    const levelled = levelToLoudness(line.slice(), rate);
    const lufs = integratedLoudness(levelled, rate);
    assert.ok(Math.abs(lufs - TARGET_LUFS) <= 0.5, `${lufs.toFixed(2)} LUFS`);
    let peak = 0;
    for (const s of levelled) peak = Math.max(peak, Math.abs(s));
    assert.ok(peak <= PEAK_CEILING + 1e-6, `peak ${(20 * Math.log10(peak)).toFixed(2)} dBFS`);
    // Smooth: from one sample to the next the gain applied never changes by more than a few per cent.
    let largestStep = 0;
    for (let i = 1; i < line.length; i++) {
      if (Math.abs(line[i]!) < 0.01 || Math.abs(line[i - 1]!) < 0.01) continue;
      const step = Math.abs(levelled[i]! / line[i]! - levelled[i - 1]! / line[i - 1]!);
      largestStep = Math.max(largestStep, step / (levelled[i - 1]! / line[i - 1]!));
    }
    assert.ok(largestStep < 0.05, `gain step ${largestStep.toFixed(3)}`);
  });

  const pool = new SynthesisPool(1);
  after(() => pool.close());

  for (const voice of ['kal16', 'rms', 'slt'] as const) {
    it(`${voice}: speech is levelled to ${TARGET_LUFS} LUFS with its peak under -1 dBFS`, async () => {
      const utterance = await pool.synthesize(
        'The mill stood empty at the edge of the harbour for most of the last century.',
        voice,
      );
      const samples = Float32Array.from(utterance.samples, (s) => s / 32768);
      levelToLoudness(samples, utterance.sampleRate);
      const lufs = integratedLoudness(samples, utterance.sampleRate);
      let peak = 0;
      for (const s of samples) peak = Math.max(peak, Math.abs(s));
      assert.ok(peak <= 10 ** (-1 / 20), `peak ${(20 * Math.log10(peak)).toFixed(1)} dBFS`);
      // Peaks are limited rather than the line lowered: kal16's diphone peaks held it 2.5 LU under before.
      assert.ok(Math.abs(lufs - TARGET_LUFS) <= 0.5, `${lufs.toFixed(2)} LUFS`);
    });
  }
});
