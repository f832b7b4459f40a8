// Question and list intonation (src/speech/voice/pitch.ts): what a line's text asks for, and what the real
// synthesizer then says, measured with a pitch tracker of its own (test/support/pitch-track.ts, YIN) rather than
// the engine's. A yes/no question ends well above the rest of the line; a statement or a wh-question is left as
// Flite says it (it ends below); the items of a list before the last end higher, the last one lower.
import * as assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  HEADING_LIFT,
  intonationOf,
  type Intonation,
  LIST_FALL,
  LIST_RISE,
  QUESTION_RISE,
} from '../../../src/speech/text/intonation';
import { bendPitch, bendsFor, placeLastUtterance, utterancesOf } from '../../../src/speech/voice/pitch';
import { SynthesisPool } from '../../../src/speech/voice/synth-pool';
import type { Segment } from '../../../src/speech/voice/phones';
import type { FliteVoice } from '../../../src/speech/voice/synth-protocol';
import { endPitch, pitchContour, semitones } from '../../support/pitch-track';

/** A question's end above the rest of its line, in semitones, at the least (measured 2.8 to 5.2 for rms and slt). */
const MIN_QUESTION_RISE = 2;
/** A list item's end above the rest of it (measured 1.3 to 2.2), and above where Flite alone ends it (4+). */
const MIN_ITEM_RISE = 1;

describe('intonation: what the text asks for', () => {
  const cases: [string, Intonation | undefined][] = [
    ['Is the new version ready for everyone?', { rise: true, lastWord: 'everyone' }],
    ['Did it work?', { rise: true, lastWord: 'work' }],
    ['So, are you sure?', { rise: true, lastWord: 'sure' }],
    ['Sam, will you take us through the next part: Tests?', { rise: true, lastWord: 'tests' }],
    ["You're sure?", { rise: true, lastWord: 'sure' }],
    ['It works. Does it scale?', { rise: true, lastWord: 'scale' }],
    ['What is the new version called?', undefined],
    ['Alex, why does it matter?', undefined],
    ['And how does that work?', undefined],
    ['Would you like tea or coffee?', undefined],
    ['The new version is ready for everyone.', undefined],
    ['Ready, steady, go.', undefined],
    ['We bought apples, pears, and plums.', { listPauses: [2, 1], fall: true }],
    ['We need three things: eggs, milk, and bread.', { listPauses: [2, 1], fall: true }],
    ['It runs on Linux, macOS, Windows and BSD.', { listPauses: [2, 1], lastItem: 'and BSD', fall: true }],
    // Without the serial comma: the item before "and" has no pause of its own; it rises up to where "and" starts.
    ['We bought apples, pears and plums.', { listPauses: [1], lastItem: 'and plums', fall: true }],
    ['The colours are red, green and blue.', { listPauses: [1], lastItem: 'and blue', fall: true }],
    ['Apples, pears and plums.', { listPauses: [1], lastItem: 'and plums', fall: true }],
    ['Do you want red, green or blue?', { listPauses: [1], lastItem: 'or blue', fall: true }],
    // One comma before "and" that ends an opening phrase, a greeting or a clause: no list.
    ['In Paris, Berlin and Rome are big.', undefined],
    ['Yes, I think so and I agree.', undefined],
    ['However, cats and dogs differ.', undefined],
    ['Last year, Rust and Go grew.', undefined],
    ['In 2020, sales and profits grew.', undefined],
    ['Good morning, Sam and Alex.', undefined],
    ['If it rains, we stay in and read.', undefined],
    ['First, open the file and save it.', undefined],
    ['Sam, you and I know.', undefined],
    ['Honestly, cats and dogs.', undefined],
    ['After the update, the server and the client restart.', undefined],
    ['The results were clear, and nobody argued.', undefined],
    // An opening "Yes," or "Well," is no item.
    ['Yes, I think so, and I agree.', undefined],
    ['Well, it works, and it is fast.', undefined],
    ['No, red, green, and blue.', { listPauses: [2, 1], fall: true }],
    ['Select its text and paste it; for your own notes, remove the markup or convert a part.', undefined],
    // Items too long to tell from a clause without the serial comma: left as Flite says them.
    ['We bought apples, pears and plums from the market on Sunday.', undefined],
    ['Pick red, green, blue, or yellow.', { listPauses: [3, 2, 1], fall: true }],
    // A clause between commas is no list item; a comma inside a bracket would misplace the count back from the end.
    ['When it rains, which it often does here in the north of the country, we stay in and read.', undefined],
    ['We saw (briefly) red, green, and "blue".', undefined],
    ['Do you want red, green, or blue?', { listPauses: [2, 1], fall: true }],
  ];
  for (const [text, expected] of cases) {
    it(`${JSON.stringify(text)}`, () => {
      assert.deepEqual(intonationOf(text), expected);
    });
  }

  it('a heading is lifted, and a heading that is a question also rises', () => {
    assert.deepEqual(intonationOf('Section 2: Settings.', { heading: true }), { lift: HEADING_LIFT });
    assert.deepEqual(intonationOf('Why Rust?', { heading: true }), { lift: HEADING_LIFT });
    assert.deepEqual(intonationOf('Is it worth it?', { heading: true }), {
      lift: HEADING_LIFT,
      rise: true,
      lastWord: 'it',
    });
  });

  it('the end of a list item: before the last it continues (rises from its last word), the last falls', () => {
    assert.deepEqual(intonationOf('Fast startup.', { listItem: 'middle' }), { continues: true, lastWord: 'startup' });
    assert.deepEqual(intonationOf('Fast startup', { listItem: 'middle' }), { continues: true, lastWord: 'startup' });
    assert.deepEqual(intonationOf('Fast startup.', { listItem: 'last' }), { fall: true });
    // An item that holds a list of its own keeps its commas' rises; its end continues instead of falling.
    assert.deepEqual(intonationOf('Fruit: apples, pears, and plums.', { listItem: 'middle' }), {
      listPauses: [2, 1],
      continues: true,
      lastWord: 'plums',
    });
    // Questions keep their own rule: a yes/no question rises, a wh-question falls as Flite says it.
    assert.deepEqual(intonationOf('Is it fast?', { listItem: 'middle' }), { rise: true, lastWord: 'fast' });
    assert.deepEqual(intonationOf('Is it fast?', { listItem: 'last' }), { rise: true, lastWord: 'fast' });
    assert.equal(intonationOf('Why is it fast?', { listItem: 'middle' }), undefined);
    assert.equal(intonationOf('Why is it fast?', { listItem: 'last' }), undefined);
  });

  it('a huge line asks for nothing (no scan of it)', () => {
    assert.equal(intonationOf(`${'Is it '.repeat(2000)}done?`), undefined);
  });
});

describe('intonation: where the bends go', () => {
  // "Hello there: is it done ?" as rms says it: two utterances, each timed from its own start.
  const psdur =
    'pau:0.174 hh:0.25 ax:0.3 l:0.4 ow:0.6 dh:0.7 eh:0.9 r:1.0 pau:1.131\npau:0.174 ih:0.268 z:0.345 ih:0.416 t:0.480 d:0.588 ah:0.713 n:0.832 pau:1.017\n';

  it('the last utterance is placed where the others end, or not at all when the lengths disagree (kal16)', () => {
    const utterances = utterancesOf(psdur);
    assert.equal(utterances.length, 2);
    const placed = placeLastUtterance(utterances, 2.148)!;
    assert.ok(Math.abs(placed[0]!.end - (2.148 - 1.017 + 0.174)) < 1e-9);
    // kal16 trims each utterance's final pause: 0.2 s shorter than its segments say.
    assert.equal(placeLastUtterance(utterances, 1.95), undefined);
    assert.deepEqual(placeLastUtterance(utterances.slice(1), 0.9), utterances[1]);
  });

  it("a question rises from its last word's first full vowel to the end of the utterance", () => {
    const segments = utterancesOf(psdur)[1]!;
    // "done" is d ah n: three phones.
    assert.deepEqual(bendsFor({ rise: true, lastWord: 'done' }, segments, 3, 1.017), [
      { start: 0.588, end: 1.017, kind: 'rise', semitones: QUESTION_RISE },
    ]);
    // Without the word's phones (it could not be said alone) or the segments, nothing is bent.
    assert.deepEqual(bendsFor({ rise: true, lastWord: 'done' }, segments, undefined, 1.017), []);
    assert.deepEqual(bendsFor({ rise: true, lastWord: 'done' }, undefined, 3, 1.017), []);
  });

  it('list items rise from their last full vowel to the pause, counted back from the end', () => {
    // "We bought apples, pears, and plums ." as rms says it.
    const [segments] = utterancesOf(
      'pau:0.142 w:0.250 iy:0.336 b:0.414 aa:0.533 t:0.620 ae:0.754 p:0.818 ax:0.856 l:1.008 z:1.132 pau:1.186 p:1.288 eh:1.375 r:1.506 z:1.637 pau:1.768 ae:1.908 n:1.966 d:2.022 p:2.163 l:2.216 ah:2.312 m:2.430 z:2.589 pau:2.771',
    );
    const bends = bendsFor({ listPauses: [2, 1], fall: true }, segments, undefined, 2.771);
    assert.deepEqual(
      bends.map((b) => [b.start, b.end, b.semitones]),
      [
        [0.62, 1.132, LIST_RISE],
        [1.288, 1.637, LIST_RISE],
        [2.216, 2.771, LIST_FALL],
      ],
    );
    // A count back past the line's pauses finds nothing to bend.
    assert.equal(bendsFor({ listPauses: [5] }, segments, undefined, 2.771).length, 0);
  });

  it('without the serial comma, the item before "and" rises up to where the last item\'s phones start', () => {
    // "We bought apples, pears and plums ." as rms says it; "and plums" alone is ae n d p l ah m z.
    const [segments] = utterancesOf(
      'pau:0.142 w:0.250 iy:0.336 b:0.414 aa:0.533 t:0.620 ae:0.754 p:0.818 ax:0.856 l:1.008 z:1.132 pau:1.186 p:1.288 eh:1.375 r:1.506 z:1.637 ae:1.777 n:1.835 d:1.891 p:2.032 l:2.085 ah:2.181 m:2.299 z:2.458 pau:2.640',
    );
    const andPlums = ['ae', 'n', 'd', 'p', 'l', 'ah', 'm', 'z'];
    const intonation: Intonation = { listPauses: [1], lastItem: 'and plums', fall: true };
    assert.deepEqual(
      bendsFor(intonation, segments, undefined, 2.64, andPlums).map((b) => [b.start, b.end, b.semitones]),
      [
        [0.62, 1.132, LIST_RISE],
        [1.288, 1.637, LIST_RISE],
        [2.085, 2.64, LIST_FALL],
      ],
    );
    // Said differently in the line than alone: no rise on "pears" (the count back could land mid-word).
    const other = ['ax', 'n', 'd', 'p', 'l', 'ah', 'm', 'z'];
    assert.equal(bendsFor(intonation, segments, undefined, 2.64, other).length, 2);
    assert.equal(bendsFor(intonation, segments, undefined, 2.64, undefined).length, 2);
  });

  it("a list item's continuation rise spreads over 0.15 s of voice or more, from an earlier vowel if need be", () => {
    // "It keeps every job on disk ." as rms says it: the "ih" of "disk" alone is 60 ms of voice.
    const [segments] = utterancesOf(
      'pau:0.17 ih:0.28 t:0.34 k:0.48 iy:0.59 p:0.72 s:0.99 eh:1.08 v:1.13 er:1.25 iy:1.35 jh:1.46 aa:1.54 b:1.67 aa:1.82 n:1.92 d:1.96 ih:2.02 s:2.11 k:2.23 pau:2.39',
    );
    assert.deepEqual(bendsFor({ continues: true, lastWord: 'disk' }, segments, 4, 2.39), [
      { start: 1.67, end: 2.39, kind: 'rise', semitones: LIST_RISE },
    ]);
    // A question's rise stays on the last word.
    assert.deepEqual(bendsFor({ rise: true, lastWord: 'disk' }, segments, 4, 2.39), [
      { start: 1.96, end: 2.39, kind: 'rise', semitones: QUESTION_RISE },
    ]);
  });

  it('silence, noise and bends outside the samples leave the samples as they are', () => {
    const silence = new Int16Array(16_000);
    assert.equal(bendPitch(silence, 16_000, [{ start: 0, end: 1, kind: 'lift', semitones: 2 }]), silence);
    let seed = 1;
    const noise = Int16Array.from({ length: 16_000 }, () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return (seed % 20_000) - 10_000;
    });
    assert.equal(bendPitch(noise, 16_000, [{ start: 0, end: 1, kind: 'rise', semitones: 6 }]), noise);
    assert.equal(bendPitch(noise, 16_000, [{ start: 5, end: 9, kind: 'lift', semitones: 2 }]), noise);
    assert.equal(bendPitch(noise, 16_000, []), noise);
  });
});

/** The stretches between Flite's pauses, in seconds (one per phrase: a list item ends at each). */
function phrases(segments: Segment[]): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  let start = 0;
  segments.forEach((s, i) => {
    const begin = i > 0 ? segments[i - 1]!.end : 0;
    if (s.phone === 'pau') {
      if (begin > start) out.push({ start, end: begin });
      start = s.end;
    }
  });
  return out;
}

/** Where a stretch's pitch ends, in Hz: the median of its last three voiced frames. */
function endHz(frames: { f0: number }[]): number {
  return frames
    .slice(-3)
    .map((f) => f.f0)
    .sort((a, b) => a - b)[1]!;
}

/** The largest step between neighbouring samples: a click is a step far larger than the voice makes. */
function largestStep(samples: Int16Array): number {
  let largest = 0;
  for (let i = 1; i < samples.length; i++) largest = Math.max(largest, Math.abs(samples[i]! - samples[i - 1]!));
  return largest;
}

describe('intonation: what the synthesizer says', () => {
  const pool = new SynthesisPool(1);
  after(() => pool.close());

  const say = async (text: string, voice: FliteVoice, heading = false) => {
    const plain = await pool.synthesize(text, voice, { segments: true });
    const intonation = intonationOf(text, { heading });
    const bent = await pool.synthesize(text, voice, intonation ? { intonation } : {});
    return { plain, bent };
  };

  for (const voice of ['rms', 'slt'] as const) {
    for (const question of ['Is the new version ready for everyone?', 'Are you sure?', 'Did it work?']) {
      it(`${voice}: ${JSON.stringify(question)} ends on a rise of ${MIN_QUESTION_RISE}+ semitones`, async () => {
        const { plain, bent } = await say(question, voice);
        const before = endPitch(pitchContour(plain.samples, plain.sampleRate));
        const rise = endPitch(pitchContour(bent.samples, bent.sampleRate));
        assert.ok(
          rise >= MIN_QUESTION_RISE,
          `ends ${rise.toFixed(1)} st above the line (Flite alone: ${before.toFixed(1)})`,
        );
        assert.ok(rise - before >= MIN_QUESTION_RISE, `${rise.toFixed(1)} st against ${before.toFixed(1)} st`);
        assert.equal(bent.samples.length, plain.samples.length, 'the duration is unchanged');
        // The rise starts on the last word: the line before it is untouched.
        const word = await pool.synthesize(question.split(' ').at(-1)!.replace('?', ''), voice, { segments: true });
        const phones = word.segments!.filter((s) => s.phone !== 'pau').length;
        const spoken = plain.segments!.filter((s) => s.phone !== 'pau');
        const untouched = Math.floor(spoken[spoken.length - phones - 1]!.end * plain.sampleRate);
        assert.deepEqual(bent.samples.subarray(0, untouched), plain.samples.subarray(0, untouched));
        assert.notDeepEqual(bent.samples.subarray(untouched), plain.samples.subarray(untouched));
        assert.ok(
          largestStep(bent.samples) <= largestStep(plain.samples) * 1.25,
          `largest step ${largestStep(bent.samples)} against ${largestStep(plain.samples)} in Flite's own`,
        );
      });
    }

    for (const line of ['The new version is ready for everyone.', 'What is the new version called?']) {
      it(`${voice}: ${JSON.stringify(line)} is said as Flite says it, ending below the line`, async () => {
        const { plain, bent } = await say(line, voice);
        assert.deepEqual(bent.samples, plain.samples);
        const end = endPitch(pitchContour(bent.samples, bent.sampleRate));
        assert.ok(end < 0, `ends ${end.toFixed(1)} st against the line`);
      });
    }

    it(`${voice}: in "apples, pears, and plums" the first two items end higher, the last lower`, async () => {
      const { plain, bent } = await say('We bought apples, pears, and plums.', voice);
      const items = phrases(plain.segments!);
      assert.equal(items.length, 3, 'Flite pauses after each item but the last');
      const moves = items.map(({ start, end }) => endPitch(pitchContour(bent.samples, bent.sampleRate, start, end)));
      const flite = items.map(({ start, end }) => endPitch(pitchContour(plain.samples, plain.sampleRate, start, end)));
      const detail = `ends ${moves.map((m) => m.toFixed(1)).join(', ')} st (Flite alone: ${flite.map((m) => m.toFixed(1)).join(', ')})`;
      assert.ok(moves[0]! >= MIN_ITEM_RISE && moves[1]! >= MIN_ITEM_RISE, detail);
      assert.ok(moves[0]! - flite[0]! >= 2 * MIN_ITEM_RISE && moves[1]! - flite[1]! >= 2 * MIN_ITEM_RISE, detail);
      assert.ok(moves[2]! < 0, detail);
      assert.equal(bent.samples.length, plain.samples.length);
    });

    it(`${voice}: in "apples, pears and plums" (no serial comma) the first two items end higher, the last lower`, async () => {
      const { plain, bent } = await say('We bought apples, pears and plums.', voice);
      const [apples, rest] = phrases(plain.segments!);
      assert.ok(apples && rest, 'Flite pauses after "apples"');
      // "pears" ends where "and" (ae n d) starts; there is no pause between them.
      const segments = plain.segments!;
      const and = segments.findIndex(
        (s, i) => s.phone === 'ae' && segments[i + 1]?.phone === 'n' && s.end > rest.start,
      );
      assert.ok(and > 0, segments.map((s) => s.phone).join(' '));
      const pears = { start: rest.start, end: segments[and - 1]!.end };
      const items = [apples, pears, { start: pears.end, end: rest.end }];
      const moves = items.map(({ start, end }) => endPitch(pitchContour(bent.samples, bent.sampleRate, start, end)));
      const flite = items.map(({ start, end }) => endPitch(pitchContour(plain.samples, plain.sampleRate, start, end)));
      // Flite's slt already lifts "pears" a little before "and": the bend is measured against where Flite ends it.
      const above = semitones(
        endHz(pitchContour(plain.samples, plain.sampleRate, pears.start, pears.end)),
        endHz(pitchContour(bent.samples, bent.sampleRate, pears.start, pears.end)),
      );
      const detail = `ends ${moves.map((m) => m.toFixed(1)).join(', ')} st (Flite alone: ${flite.map((m) => m.toFixed(1)).join(', ')}); "pears" ends ${above.toFixed(1)} st above Flite's`;
      assert.ok(moves[0]! >= MIN_ITEM_RISE && moves[1]! >= MIN_ITEM_RISE, detail);
      assert.ok(moves[0]! - flite[0]! >= 2 * MIN_ITEM_RISE && above >= MIN_ITEM_RISE, detail);
      assert.ok(moves[2]! < 0, detail);
      assert.equal(bent.samples.length, plain.samples.length);
      assert.ok(
        largestStep(bent.samples) <= largestStep(plain.samples) * 1.25,
        `largest step ${largestStep(bent.samples)} against ${largestStep(plain.samples)} in Flite's own`,
      );
    });

    it(`${voice}: "In Paris, Berlin and Rome are big." only looks like a list and is said as Flite says it`, async () => {
      const { plain, bent } = await say('In Paris, Berlin and Rome are big.', voice);
      assert.deepEqual(bent.samples, plain.samples);
    });

    for (const item of ['Fast startup.', 'It keeps every job on disk.', 'Chapters and tags in the file.']) {
      it(`${voice}: the list item ${JSON.stringify(item)} ends higher before the last item, lower as the last`, async () => {
        const plain = await pool.synthesize(item, voice, {});
        const middle = await pool.synthesize(item, voice, { intonation: intonationOf(item, { listItem: 'middle' }) });
        const last = await pool.synthesize(item, voice, { intonation: intonationOf(item, { listItem: 'last' }) });
        const [flite, up, down] = [plain, middle, last].map((u) => endPitch(pitchContour(u.samples, u.sampleRate)));
        const detail = `ends ${up!.toFixed(1)} st before the last, ${down!.toFixed(1)} st as the last (Flite alone: ${flite!.toFixed(1)})`;
        assert.ok(up! >= MIN_ITEM_RISE && up! - flite! >= 2 * MIN_ITEM_RISE, detail);
        assert.ok(down! < 0 && down! <= flite! + 0.5, detail);
        assert.equal(middle.samples.length, plain.samples.length);
        assert.ok(
          largestStep(middle.samples) <= largestStep(plain.samples) * 1.25,
          `largest step ${largestStep(middle.samples)} against ${largestStep(plain.samples)} in Flite's own`,
        );
      });
    }

    it(`${voice}: a heading is said higher, as long as before`, async () => {
      const { plain, bent } = await say('Section two: Settings.', voice, true);
      const median = (samples: Int16Array) => {
        const f0 = pitchContour(samples, plain.sampleRate)
          .map((f) => f.f0)
          .sort((a, b) => a - b);
        return f0[f0.length >> 1]!;
      };
      const lift = semitones(median(plain.samples), median(bent.samples));
      assert.ok(Math.abs(lift - HEADING_LIFT) < 0.6, `lifted ${lift.toFixed(2)} st (asked ${HEADING_LIFT})`);
      assert.equal(bent.samples.length, plain.samples.length);
    });
  }
});
