// Words Flite says wrong on its own: British spellings (its lexicon is American) are said as the American word, and
// a lexicon addendum gives Flite the pronunciation of words it guesses wrongly ("timeout" as "tim-out"). Checked on
// the real synthesizer: the phones Flite says for the word in the engine's spoken text.
import * as assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { LEXICON } from '../../../src/speech/text/normalize/lexicon';
import { americanSpelling } from '../../../src/speech/text/normalize/spelling';
import { toSpoken } from '../../../src/speech/text/spoken';
import { SynthesisPool } from '../../../src/speech/voice/synth-pool';

describe('pipeline: British spellings and the lexicon addendum', () => {
  const pool = new SynthesisPool(1);
  after(() => pool.close());
  const phones = async (text: string) =>
    ((await pool.synthesize(text, 'rms', { segments: true })).segments ?? [])
      .map((s) => s.phone)
      .filter((p) => p !== 'pau')
      .join(' ');

  const SPELLINGS: [string, string][] = [
    ['neighbours', 'neighbors'],
    ['harbours', 'harbors'],
    ['colourful', 'colorful'],
    ['favourite', 'favorite'],
    ['humour', 'humor'],
    ['metres', 'meters'],
    ['centre', 'center'],
    ['centred', 'centered'],
    ['organise', 'organize'],
    ['organisation', 'organization'],
    ['prioritised', 'prioritized'],
    ['analysed', 'analyzed'],
    ['travelled', 'traveled'],
    ['modelling', 'modeling'],
    ['catalogue', 'catalog'],
    ['defence', 'defense'],
    ['grey', 'gray'],
    ['programmes', 'programs'],
    ['tyres', 'tires'],
    // Words that only look British stay as they are.
    ['hour', 'hour'],
    ['flour', 'flour'],
    ['detour', 'detour'],
    ['genre', 'genre'],
    ['acre', 'acre'],
    ['promise', 'promise'],
    ['exercise', 'exercise'],
    ['surprised', 'surprised'],
    ['analyses', 'analyses'],
    ['economies', 'economies'],
    ['programmed', 'programmed'],
  ];
  for (const [british, american] of SPELLINGS)
    it(`${british} -> ${american}`, () => assert.equal(americanSpelling(british), american));

  it('the spoken text says British spellings the American way; the capital stays, words in capitals stay', () => {
    assert.equal(
      toSpoken('The Neighbours organised a colourful festival in the centre.'),
      'The Neighbors organized a colorful festival in the center.',
    );
    assert.equal(
      toSpoken('Set colourMode and read the HARBOUR notice.'),
      'Set color mode and read the harbour notice.',
    );
  });

  it('Flite says each British spelling in the spoken text as the American word (and not as written)', async () => {
    for (const british of ['neighbours', 'metres', 'organise', 'humour', 'analysed', 'modelled']) {
      const american = americanSpelling(british);
      const [asSpoken, asAmerican, asWritten] = await Promise.all([
        phones(toSpoken(british)),
        phones(american),
        phones(british),
      ]);
      assert.equal(asSpoken, asAmerican, british);
      // Each of these was mispronounced as written: the case is worth having.
      assert.notEqual(asWritten, asAmerican, `${british}: ${asWritten}`);
    }
  });

  it('Flite says every word of the lexicon addendum with its phones', async () => {
    for (const [word, entry] of Object.entries(LEXICON)) {
      const expected = entry.replace(/[012]/g, '');
      assert.equal(await phones(word), expected, word);
    }
  });

  it('the addendum changes what Flite says: "timeout" has the vowel of "time"', async () => {
    assert.equal(await phones('remote timeout'), 'r ih m ow t t ay m aw t');
  });
});
