// Language detection (src/speech/text/language.ts): clear German, French, Spanish and Japanese are told; English
// with a foreign quote or with code stays English; too little text or text too close to call is no verdict; the
// transcript's NOTE and the ID3 TLAN frame carry the language.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import NodeID3 from 'node-id3';
import { id3Tag } from '../../../src/speech/audio/id3';
import { languageNote, toWebVtt } from '../../../src/speech/audio/transcript';
import { parseMarkdown } from '../../../src/speech/source/markdown';
import {
  CHUNK_CHARACTERS,
  describeLanguage,
  detectInChunks,
  detectLanguage,
  isClearlyNotEnglish,
  MIN_AGREEING_SHARE,
  MIN_SAMPLE_LETTERS,
  SAMPLE_CHUNKS,
  sampleChunks,
} from '../../../src/speech/text/language';

const fixtures = path.join(__dirname, '..', '..', 'engine', 'fixtures', 'languages');
const article = (name: string) => parseMarkdown(readFileSync(path.join(fixtures, name), 'utf8'));

describe('language detection', () => {
  for (const [file, tag, name] of [
    ['de.md', 'de', 'German'],
    ['fr.md', 'fr', 'French'],
    ['es.md', 'es', 'Spanish'],
  ] as const) {
    it(`tells ${name} (${file})`, () => {
      const verdict = detectLanguage(article(file));
      assert.ok(isClearlyNotEnglish(verdict), JSON.stringify(verdict));
      assert.equal(verdict.language.tag, tag);
      assert.equal(verdict.language.name, name);
    });
  }

  it('tells Japanese by its script', () => {
    const text =
      '市は昨年、川に架かる古い橋を建て替えることを決めた。多くの住民は当初、工事が長引くことを心配していた。';
    const verdict = detectInChunks(Array.from({ length: 6 }, () => text));
    assert.equal(verdict.language?.tag, 'ja');
    assert.equal(verdict.language?.iso639_3, 'jpn');
  });

  // Long English (12 chunks) too: franc's scores crowd together on long text, which a whole-sample verdict got wrong.
  for (const file of ['en-quote.md', 'en-code.md', '../article.md', '../../../fixtures/articles/long.md']) {
    it(`keeps English English (${file})`, () => {
      const verdict = detectLanguage(article(file));
      assert.ok(!isClearlyNotEnglish(verdict), JSON.stringify(verdict));
      assert.equal(verdict.language?.tag, 'en');
    });
  }

  it('gives no verdict on too little text', () => {
    const short = 'Die Stadt hat beschlossen, die Brücke zu erneuern.';
    assert.ok(short.length < MIN_SAMPLE_LETTERS);
    const verdict = detectInChunks([short]);
    assert.equal(verdict.language, undefined);
    assert.ok(!isClearlyNotEnglish(verdict));
  });

  it('gives no verdict when the chunks disagree (half English, half German)', () => {
    const de = readFileSync(path.join(fixtures, 'de.md'), 'utf8').split('\n\n').slice(1, 3);
    const en = readFileSync(path.join(fixtures, 'en-quote.md'), 'utf8').split('\n\n').slice(1, 3);
    const verdict = detectInChunks([de[0]!, en[0]!, de[1]!, en[1]!]);
    assert.equal(verdict.language, undefined, JSON.stringify(verdict));
    assert.ok(verdict.agreeing < MIN_AGREEING_SHARE, JSON.stringify(verdict));
  });

  it('judges a bounded sample however long the article', () => {
    const prose = Array.from({ length: 5000 }, (_, i) => `Paragraph ${i} says something in plain English words.`);
    const chunks = sampleChunks(prose);
    assert.ok(chunks.length <= SAMPLE_CHUNKS);
    for (const chunk of chunks) assert.ok(chunk.length <= CHUNK_CHARACTERS);
    // Spread over the article, not only its start.
    assert.ok(Number(/Paragraph (\d+)/.exec(chunks.at(-1)!)![1]) > 4000, chunks.at(-1));
  });

  it('names languages in English words', () => {
    assert.deepEqual(describeLanguage('deu'), { iso639_3: 'deu', tag: 'de', name: 'German' });
    assert.equal(describeLanguage('cmn').name, 'Chinese');
  });

  it('carries the language in the transcript and the ID3 tag', () => {
    const vtt = toWebVtt([{ start: 0, end: 1, text: 'Hallo.' }], 'Titel', ['the built-in voice rms (Flite)'], 'de');
    assert.match(vtt, /^WEBVTT - Titel\n\nNOTE voice: [^\n]+\n\nNOTE language: de\n\n1\n/);
    assert.equal(languageNote('de\n\n00:00.000 --> 00:01.000'), undefined, 'only a tag is written');
    const tag = NodeID3.read(Buffer.from(id3Tag({ encoder: 'x', chapters: [], durationS: 1, language: 'deu' })));
    assert.equal(tag.language, 'deu');
  });
});
