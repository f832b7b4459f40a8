// Word timings (issue 26) in their pieces: Flite's phones grouped by word (word-times.ts), the spoken words matched
// back to the sentence as written (word-map.ts), and the editor's word spans inside a matched sentence
// (text-match.ts). The engine test (test/engine/word-timings.test.ts) runs them on a real article.
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { timeWrittenWords } from '../../../src/speech/text/word-map';
import {
  groupingInput,
  PhoneCounts,
  phoneGroups,
  placeUtterances,
  spokenTokens,
  wordTimes,
} from '../../../src/speech/voice/word-times';
import { matchCues, pieceWordRanges } from '../../../src/webview/text-match';

const seg = (text: string) =>
  text
    .split(' ')
    .map((pair) => pair.split(':'))
    .map(([phone, end]) => ({ phone: phone!, end: Number(end) }));

describe('word timings: Flite phones grouped by word', () => {
  it('deals the line’s phones out by the grouping run’s counts', () => {
    const tokens = spokenTokens('The cat — sat.');
    assert.deepEqual(tokens, ['The', 'cat', 'sat.']);
    assert.equal(groupingInput(tokens), 'The, cat, sat,\n');
    const groups = phoneGroups([
      seg('pau:0.01 dh:0.02 ax:0.03 pau:0.04 k:0.05 ae:0.06 t:0.07 pau:0.08 s:0.09 ae:0.1 t:0.11 pau:0.12'),
    ]);
    assert.deepEqual(groups, [
      ['dh', 'ax'],
      ['k', 'ae', 't'],
      ['s', 'ae', 't'],
    ]);
    // The line itself: "the" said "dh iy", a pause inside the line, which belongs to no word.
    const line = seg('pau:0.15 dh:0.2 iy:0.3 k:0.4 ae:0.5 t:0.6 pau:0.8 s:0.9 ae:1.0 t:1.1 pau:1.3');
    const counts = groups.map((g) => g.length);
    assert.deepEqual(wordTimes(tokens, counts, placeUtterances([line], 1.3)), [
      { word: 'The', start: 0.15, end: 0.3 },
      { word: 'cat', start: 0.3, end: 0.6 },
      { word: 'sat.', start: 0.8, end: 1.1 },
    ]);
    // Counts that do not agree give no timings rather than wrong ones.
    assert.equal(wordTimes(tokens, counts.slice(1), placeUtterances([line], 1.3)), undefined);
    assert.equal(wordTimes(tokens, [1, ...counts.slice(1)], placeUtterances([line], 1.3)), undefined);
  });

  it('remembers the tokens it grouped and groups only the new ones', async () => {
    const counts = new PhoneCounts();
    const inputs: string[] = [];
    // A stand-in for the grouping run: one phone per letter, a pause after each token.
    const group = (input: string) => {
      inputs.push(input);
      const phones = input
        .trim()
        .split(' ')
        .flatMap((token) => [...token.replace(/,$/, '')].map((c) => `${c}:1`).concat('pau:1'));
      return Promise.resolve([seg(`pau:1 ${phones.join(' ')}`)]);
    };
    assert.deepEqual(await counts.of(['the', 'cat.', 'the'], group), [3, 3, 3]);
    assert.deepEqual(await counts.of(['The', 'cat', 'sat.'], group), [3, 3, 3]);
    assert.deepEqual(await counts.of(['the', 'sat'], group), [3, 3]);
    assert.deepEqual(inputs, ['the, cat,\n', 'The, sat,\n']);
    // A run whose groups do not match the tokens asked for gives nothing.
    assert.equal(await counts.of(['new', 'words'], () => Promise.resolve([seg('pau:1 n:1 pau:1')])), undefined);
  });

  it('places a line of several utterances only when their lengths add up to the audio', () => {
    const first = seg('pau:0.1 ay:0.3 pau:0.5');
    const second = seg('pau:0.1 n:0.2 ow:0.4 pau:0.6');
    assert.deepEqual(
      placeUtterances([first, second], 1.1)?.map((s) => Number(s.end.toFixed(3))),
      [0.1, 0.3, 0.5, 0.6, 0.7, 0.9, 1.1],
    );
    assert.equal(placeUtterances([first, second], 1.0), undefined);
    assert.equal(placeUtterances([], 1), undefined);
  });
});

describe('word timings: the spoken words matched back to the sentence as written', () => {
  const timed = (words: string) => words.split(' ').map((word, i) => ({ word, start: i }));

  it('anchors on the words that read the same and gives each written run the spoken run between anchors', () => {
    const written = timeWrittenWords(
      'It cost $4.50 on March 5, 2019, in the colour red.',
      timed('It cost four dollars and fifty cents on March fifth, twenty nineteen, in the color red.'),
    );
    assert.deepEqual(
      written.map((w) => [w.text, w.start]),
      [
        ['It', 0],
        ['cost', 1],
        ['$4.50', 2], // one written word takes the whole spoken run
        ['on', 7],
        ['March', 8],
        ['5,', 9], // two written words for three spoken: the first takes the run's start, the other none
        ['2019,', undefined],
        ['in', 12],
        ['the', 13],
        ['colour', 14], // as many written as spoken words pair up
        ['red.', 15],
      ],
    );
  });

  it('leaves everything untimed without spoken words, and times repeated words in order', () => {
    assert.deepEqual(timeWrittenWords('A b.', []), [{ text: 'A' }, { text: 'b.' }]);
    assert.deepEqual(
      timeWrittenWords('the cat and the hat', timed('the cat and the hat')).map((w) => w.start),
      [0, 1, 2, 3, 4],
    );
  });
});

describe('word timings: the word’s span in the source document', () => {
  it('finds each piece’s words inside the matched sentence, whatever the markup between them', () => {
    const doc = 'Intro.\n\nIt **cost** [$4.50](http://x) today, said _Ann_.';
    const [, span] = matchCues(doc, ['Intro.', 'It cost $4.50 today, said Ann.']);
    const pieces = ['It ', 'cost $4.50 ', 'today, ', 'said Ann.'];
    const ranges = pieceWordRanges(pieces);
    assert.deepEqual(ranges, [
      [0, 1],
      [1, 4],
      [4, 5],
      [5, 7],
    ]);
    const words = span!.words;
    const text = (range: [number, number]) => doc.slice(words[range[0]]!.start, words[range[1] - 1]!.end);
    assert.deepEqual(ranges.map(text), ['It', 'cost** [$4.50', 'today', 'said _Ann']);
    // A timestamp inside a word ("ab<t>cd"): the word belongs to the piece it starts in.
    assert.deepEqual(pieceWordRanges(['ab', 'cd ef', '—']), [
      [0, 1],
      [1, 2],
      [2, 2],
    ]);
  });
});
