// Play from Here: the sentence the cursor is in (cueAtOffset over matchCues' spans) and where a sentence starts in
// the editor's text (sentenceStart), for converting from there.
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cueAtOffset, sentenceStart } from '../../../src/webview/play-from';
import { matchCues } from '../../../src/webview/text-match';

const DOC =
  '# The Title\n\nFirst sentence here. Second one follows!\n\n```\ncode is not read\n```\n\nThird, after the code.\n';
const CUES = ['The Title', 'First sentence here.', 'Second one follows!', 'Third, after the code.'];

describe('Play from Here: the sentence at the cursor', () => {
  const spans = matchCues(DOC, CUES);

  it('is the sentence that contains the cursor', () => {
    assert.equal(cueAtOffset(spans, DOC.indexOf('sentence here')), 1);
    assert.equal(cueAtOffset(spans, DOC.indexOf('one follows')), 2);
    assert.equal(cueAtOffset(spans, DOC.indexOf('Title')), 0);
  });

  it('is the next spoken one when the cursor is on markup, between sentences or in code', () => {
    assert.equal(cueAtOffset(spans, 0), 0, 'on the heading mark');
    assert.equal(cueAtOffset(spans, DOC.indexOf(' Second')), 2, 'on the space between two sentences');
    assert.equal(cueAtOffset(spans, DOC.indexOf('code is')), 3, 'in a code block');
  });

  it('is none after the last sentence, or before a selection job starts', () => {
    assert.equal(cueAtOffset(spans, DOC.length), undefined);
    assert.equal(cueAtOffset(spans, 2, DOC.indexOf('First')), undefined);
  });

  it('skips sentences that are not in the document (a host line of a podcast)', () => {
    const withHost = matchCues(DOC, ['Welcome to the show.', ...CUES]);
    assert.equal(withHost[0], undefined);
    assert.equal(cueAtOffset(withHost, DOC.indexOf('First')), 2);
  });
});

describe('Play from Here: where the sentence at the cursor starts (to convert from there)', () => {
  const text = 'Intro line.\nOne sentence. "Quoted end." Then this one goes on.\nNext line.';
  it('is after the last sentence end on the line before the cursor', () => {
    assert.equal(sentenceStart(text, text.indexOf('this one')), text.indexOf('Then'));
    assert.equal(sentenceStart(text, text.indexOf('end."')), text.indexOf('"Quoted'));
  });
  it('is the line start when the line has no sentence end before the cursor', () => {
    assert.equal(sentenceStart(text, text.indexOf('sentence.')), text.indexOf('One'));
    assert.equal(sentenceStart(text, text.indexOf('Next')), text.indexOf('Next'));
    assert.equal(sentenceStart(text, 0), 0);
  });
});
