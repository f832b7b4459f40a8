// How the listening bench counts word error: the strict figure, and the one with the recogniser's limits set apart
// (spelling variants as one word, meant words it cannot write left out and listed).
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  alignWords,
  commonSpelling,
  errorKinds,
  fairWordError,
  spelledLetters,
  wordError,
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
});
