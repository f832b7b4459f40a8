// Read-along matching: finding each spoken sentence in the Markdown it was made from. The cues come from the real
// engine pipeline's transcript writer, the document is the kind of Markdown users convert.
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { matchCues, wordsOf } from '../../../src/webview/text-match';

const doc = [
  '# Why Gardens *Need* Bees',
  '',
  'Bees carry pollen from **flower to flower**. Without them, many fruits would',
  'never form. In 1990, farmers noticed [fewer hives](https://example.com/hives "Hives") each spring.',
  '',
  '<!-- editor note: check figures -->',
  '## The quiet decline',
  '',
  'Researchers counted colonies. Bees carry pollen from flower to flower.',
  '',
  '[ref]: https://example.com/ref',
].join('\n');

const at = (span: { start: number; end: number } | undefined) => (span ? doc.slice(span.start, span.end) : undefined);

describe('player: read-along matching', () => {
  it('finds sentences across markup, line breaks and link targets', () => {
    const spans = matchCues(doc, [
      'Why Gardens Need Bees',
      'Bees carry pollen from flower to flower.',
      'Without them, many fruits would never form.',
      'In 1990, farmers noticed fewer hives each spring.',
      'The quiet decline',
    ]);
    assert.deepEqual(spans.map(at), [
      'Why Gardens *Need* Bees',
      'Bees carry pollen from **flower to flower',
      'Without them, many fruits would\nnever form',
      'In 1990, farmers noticed [fewer hives](https://example.com/hives "Hives") each spring',
      'The quiet decline',
    ]);
  });

  it('searches forward from the last match, so a repeated sentence is found in its second place', () => {
    const spans = matchCues(doc, [
      'Bees carry pollen from flower to flower.',
      'Researchers counted colonies.',
      'Bees carry pollen from flower to flower.',
    ]);
    assert.ok(spans[0] && spans[2]);
    assert.ok(spans[2].start > spans[0].start, 'the second occurrence comes later in the document');
    assert.equal(at(spans[2]), 'Bees carry pollen from flower to flower');
  });

  it('leaves sentences that are not in the document (a host hand-over line) unmatched, without losing its place', () => {
    const spans = matchCues(doc, [
      "Hello, and welcome to Article Audio. I'm Alex.",
      'Bees carry pollen from flower to flower.',
      'Sam, will you take us through the next part: The quiet decline?',
      'Researchers counted colonies.',
      '',
    ]);
    assert.equal(spans[0], undefined);
    assert.equal(at(spans[1]), 'Bees carry pollen from **flower to flower');
    assert.equal(spans[2], undefined);
    assert.equal(at(spans[3]), 'Researchers counted colonies');
    assert.equal(spans[4], undefined);
  });

  it('matches regardless of case, curly quotes and Unicode normalisation', () => {
    const text = 'She said “It’s ﬁne” — CAFÉ time.';
    const [span] = matchCues(text, ['she said "it\'s fine" - café time.']);
    assert.ok(span);
    assert.equal(text.slice(span.start, span.end), 'She said “It’s ﬁne” — CAFÉ time');
  });

  it('keeps to the region of a selection job', () => {
    const start = doc.indexOf('Researchers');
    const [span] = matchCues(doc, ['Bees carry pollen from flower to flower.'], { start, end: doc.length });
    assert.ok(span && span.start > start);
  });

  it('does not read link targets, HTML comments or reference definitions as words', () => {
    const words = wordsOf(doc).map((w) => w.text);
    assert.ok(!words.includes('https'));
    assert.ok(!words.includes('editor'));
    assert.ok(!words.includes('ref'));
    assert.ok(words.includes('hives'));
  });
});
