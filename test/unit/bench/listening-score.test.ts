// How the listening bench counts word error: the strict figure, and the one with the recogniser's limits set apart
// (spelling variants as one word, meant words it cannot write left out and listed).
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  alignWords,
  commonSpelling,
  errorKinds,
  fairWordError,
  gapVerdict,
  pooledGap,
  spelledLetters,
  wordError,
  wordErrors,
  wordsOf,
} from '../../../bench/listening-score';

describe('bench: listening word error', () => {
  it('counts substitutions, misses and insertions over the meant words', () => {
    const meant = wordsOf('The old mill stood empty.');
    assert.equal(wordError(meant, wordsOf('the old mail stood empty')), 1 / 5);
    assert.equal(wordError(meant, wordsOf('the mill stood empty')), 1 / 5);
    assert.equal(wordError(meant, wordsOf('the old mill stood so empty')), 1 / 5);
    assert.equal(alignWords(meant, wordsOf('a old mill empty')), '[the->a] old mill [-stood] empty');
    assert.equal(alignWords(meant, wordsOf('the old mill stood so empty')), 'the old mill stood [+so] empty');
  });

  it('writes British and American spellings of a word one way', () => {
    const cases: [string, string][] = [
      ['harbour', 'harbor'],
      ['neighbours', 'neighbors'],
      ['centre', 'center'],
      ['organised', 'organized'],
      ['travelled', 'traveled'],
      ['catalogue', 'catalog'],
      ['grey', 'gray'],
      ['harbor', 'harbor'],
      ['hour', 'hour'],
      ['four', 'four'],
      ['genre', 'genre'],
      ['rise', 'rise'],
      ["miller's", 'millers'],
    ];
    for (const [word, common] of cases) assert.equal(commonSpelling(word), common, word);
  });

  it('sets apart spelling variants and words the recogniser cannot write, and says which', () => {
    const canWrite = (w: string) => !['kubernetes', 'config'].includes(w);
    const meant = wordsOf('the harbour and the kubernetes config');
    const heard = wordsOf('the harbor and the cooper needy is con fig');
    const fair = fairWordError(meant, heard, canWrite);
    assert.equal(wordError(meant, heard), 6 / 6);
    assert.equal(fair.variants, 1);
    assert.deepEqual(fair.unwritable, ['kubernetes', 'config']);
    assert.equal(fair.setAside, 2);
    // Four meant words count; "con fig" is joined into "config" (set aside), and the two words inserted around the
    // set-aside words still count as errors.
    assert.equal(fair.rate, 2 / 4);
  });

  it('counts a compound written apart as the word', () => {
    const meant = wordsOf('set the remote timeout now');
    const heard = wordsOf('set the remote time out now');
    assert.equal(wordError(meant, heard), 2 / 5);
    const fair = fairWordError(meant, heard, () => true);
    assert.equal(fair.compounds, 1);
    assert.equal(fair.rate, 0);
  });

  it('never sets aside a number the normalizer left as digits', () => {
    const fair = fairWordError(wordsOf('kubernetes 3'), wordsOf('three'), (w) => w !== 'kubernetes');
    assert.deepEqual(fair.unwritable, ['kubernetes']);
    assert.equal(fair.rate, 1);
  });

  it('sorts errors into spelled letters, homophones and the rest', () => {
    const phones = new Map([
      ['cache', new Set(['K AE SH'])],
      ['cash', new Set(['K AE SH'])],
      ['patience', new Set(['P EY SH AH N S'])],
      ['patients', new Set(['P EY SH AH N T S', 'P EY SH AH N S'])],
      ['run', new Set(['R AH N'])],
      ['brown', new Set(['B R AW N'])],
    ]);
    const meant = 'Run N P M C I again. The cache lives here with patience, a virtue.';
    const heard = wordsOf('brown m p m see i again the cash lives here now with patients the virtue');
    // run->brown sits next to "n", n->m is a letter, c->see is a letter; cache/cash and patience/patients sound the
    // same in the dictionary; the inserted "and" at the end is the only other error.
    assert.deepEqual(errorKinds(meant, heard, phones), {
      errors: 7,
      atLetters: 3,
      homophones: 2,
      other: 2,
      meant: 15,
    });
    assert.deepEqual(errorKinds(meant, wordsOf(meant), phones), {
      errors: 0,
      atLetters: 0,
      homophones: 0,
      other: 0,
      meant: 15,
    });
  });

  it('tells spelled letters from the words "a" and "I"', () => {
    const text = 'A test runs in C I. I said N, a B, and X-ray.';
    const spelled = wordsOf(text).filter((_, i) => spelledLetters(text)[i]);
    // "I" after "C I." starts a sentence: the full stop ends the run. The X of X-ray is said as a letter.
    assert.deepEqual(spelled, ['c', 'i', 'n', 'b', 'x']);
    assert.equal(spelledLetters(text).length, wordsOf(text).length);
  });

  it('counts word errors, so texts can be pooled by their words', () => {
    const meant = wordsOf('The old mill stood empty.');
    assert.equal(wordErrors(meant, wordsOf('a old mill empty')), 2);
    assert.equal(wordErrors(meant, meant), 0);
  });
});

describe('bench: the engine against its raw voice, pooled over texts and perturbations', () => {
  it('pools texts by their words, not by averaging their rates', () => {
    // 10 of 100 words and 0 of 10: pooled 10/110 = 9.1 %, where the mean of the rates would say 5 %.
    const summary = pooledGap([
      {
        label: '0 dB',
        engine: [
          { errors: 10, words: 100 },
          { errors: 0, words: 10 },
        ],
        raw: [
          { errors: 5, words: 100 },
          { errors: 1, words: 10 },
        ],
      },
    ]);
    assert.equal(summary.words, 110);
    assert.ok(Math.abs(summary.runs[0]!.engine - (100 * 10) / 110) < 1e-9);
    assert.ok(Math.abs(summary.runs[0]!.raw - (100 * 6) / 110) < 1e-9);
    assert.ok(Math.abs(summary.mean - (100 * 4) / 110) < 1e-9);
    assert.equal(summary.sd, 0);
  });

  it('gives the mean, sample standard deviation and range of engine minus raw over the perturbations', () => {
    const run = (label: string, engineErrors: number, rawErrors: number) => ({
      label,
      engine: [{ errors: engineErrors, words: 100 }],
      raw: [{ errors: rawErrors, words: 100 }],
    });
    // Gaps of +1, +3 and +5 points: mean 3, sample sd 2.
    const summary = pooledGap([run('-0.2 dB', 21, 20), run('0 dB', 23, 20), run('+0.2 dB', 24, 19)]);
    assert.deepEqual(
      summary.runs.map((r) => r.gap),
      [1, 3, 5],
    );
    assert.equal(summary.mean, 3);
    assert.equal(summary.sd, 2);
    assert.equal(summary.min, 1);
    assert.equal(summary.max, 5);
    assert.throws(() => pooledGap([]));
  });

  it('judges "within 2 points" on the mean, and says when the range straddles the limit', () => {
    const summary = (gaps: number[]) =>
      pooledGap(
        gaps.map((gap, i) => ({
          label: String(i),
          engine: [{ errors: 20 + gap, words: 100 }],
          raw: [{ errors: 20, words: 100 }],
        })),
      );
    assert.deepEqual(gapVerdict(summary([0, 1, 1.5]), 2), { verdict: 'meets', clear: true });
    assert.deepEqual(gapVerdict(summary([0, 1, 3]), 2), { verdict: 'meets', clear: false });
    assert.deepEqual(gapVerdict(summary([1, 3, 4]), 2), { verdict: 'misses', clear: false });
    assert.deepEqual(gapVerdict(summary([3, 4, 5]), 2), { verdict: 'misses', clear: true });
    // Better than the raw voice is within 2 points too.
    assert.deepEqual(gapVerdict(summary([-3, -1, -2]), 2), { verdict: 'meets', clear: true });
  });
});
