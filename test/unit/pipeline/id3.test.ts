// ID3 tag text and chapters from hostile input: bounded, well-formed, and at most what a table of contents can list.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import NodeID3 from 'node-id3';
import {
  id3Tag,
  MAX_CHAPTER_TITLE_CHARS,
  MAX_TAG_CHAPTERS,
  MAX_TITLE_CHARS,
  tagChapters,
  tagText,
} from '../../../src/speech/audio/id3';
import { id3Length } from '../../../src/speech/audio/mp3-frames';

describe('ID3 tag', () => {
  it('makes hostile text plain, well-formed and bounded', () => {
    assert.equal(tagText('  A\u0000B\tC\r\nD\u202eE\u200bF  ', 100), 'A B C D E F');
    assert.equal(tagText('lone \ud800 surrogate \udc00', 100), 'lone \ufffd surrogate \ufffd');
    assert.equal(tagText('emoji 🌊🌊🌊', 8), 'emoji 🌊…', 'cut between code points, never inside a pair');
    const long = tagText('x'.repeat(100_000), MAX_TITLE_CHARS);
    assert.equal(Array.from(long).length, MAX_TITLE_CHARS);
  });

  it('keeps the highest-level chapters when there are more than a table of contents holds', () => {
    const few = Array.from({ length: 10 }, (_, i) => ({ level: 1 + (i % 2) }));
    assert.deepEqual(tagChapters(few), [...few.keys()]);
    // 200 sections with 3 subsections each: 800 chapters; the 200 sections fit.
    const many = Array.from({ length: 800 }, (_, i) => ({ level: i % 4 === 0 ? 2 : 3 }));
    const kept = tagChapters(many);
    assert.equal(kept.length, 200);
    assert.ok(kept.every((i) => many[i]!.level === 2));
    // 1,000 chapters of one level: the first 255.
    const flat = Array.from({ length: 1000 }, () => ({ level: 2 }));
    assert.deepEqual(tagChapters(flat), [...Array(MAX_TAG_CHAPTERS).keys()]);
  });

  it('stays small for a hostile article: thousands of long headings, a huge title and a huge URL', () => {
    const tag = id3Tag({
      title: '💥'.repeat(50_000),
      sourceUrl: `https://example.com/${'a'.repeat(100_000)}`,
      site: 'example.com',
      encoder: 'test',
      chapters: Array.from({ length: 5000 }, (_, i) => ({ title: 'Heading '.repeat(1000), level: 2, startS: i })),
      durationS: 5000,
    });
    assert.equal(id3Length(tag), tag.length);
    const perChapter = 200 + MAX_CHAPTER_TITLE_CHARS * 4;
    assert.ok(tag.length < 2000 + MAX_TAG_CHAPTERS * perChapter, `${tag.length} bytes`);
    assert.ok(!Buffer.from(tag).includes('aaaaaaaaaa'), 'a URL too long to keep whole is left out');
  });

  it('says who read it in a TXXX frame "Voice", one line and bounded', () => {
    const tag = id3Tag({
      encoder: 'test',
      voice: 'the voice af_heart\n(kokoro at 127.0.0.1:8880, an OpenAI-compatible speech API)',
      chapters: [],
      durationS: 10,
    });
    const read = NodeID3.read(Buffer.from(tag));
    assert.deepEqual(read.userDefinedText, [
      { description: 'Voice', value: 'the voice af_heart (kokoro at 127.0.0.1:8880, an OpenAI-compatible speech API)' },
    ]);
    const none = NodeID3.read(Buffer.from(id3Tag({ encoder: 'test', chapters: [], durationS: 1 })));
    assert.equal(none.userDefinedText, undefined);
    const long = NodeID3.read(
      Buffer.from(id3Tag({ encoder: 't', voice: 'v'.repeat(5000), chapters: [], durationS: 1 })),
    );
    assert.ok(Array.from(long.userDefinedText?.[0]?.value ?? '').length <= 700);
  });
});
