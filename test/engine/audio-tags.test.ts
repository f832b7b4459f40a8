// The tags of a real job's audio.mp3, read back with a small ID3v2.3 reader written here (not the library that wrote
// them): title, source, encoder and chapters (CHAP under a CTOC) against chapters.json, from a page whose title and
// headings are hostile (control characters, a lone surrogate, a right-to-left override, a 400-character heading).
// The Info frame after the tag declares LAME's delay, and a gapless decoder returns the job's exact duration. The
// intro's 10 kHz tone is still there (the stream is at 24 kHz when there is music).
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createSpeechPipeline } from '../../src/speech';
import { MAX_CHAPTER_TITLE_CHARS, MAX_TITLE_CHARS } from '../../src/speech/audio/id3';
import { frameAt, id3Length } from '../../src/speech/audio/mp3-frames';
import { LAME_ENCODER_DELAY } from '../../src/speech/audio/mp3-writer';
import {
  type PageServer,
  decodeMp3,
  runJob,
  serve,
  startPageServer,
  toneShare,
  toneWav,
} from '../support/speech-support';

interface Frame {
  id: string;
  body: Uint8Array;
}

/** The frames of an ID3v2.3 tag (or of a CHAP/CTOC frame's sub-frames). */
function readFrames(bytes: Uint8Array, from: number, to: number): Frame[] {
  const frames: Frame[] = [];
  let at = from;
  while (at + 10 <= to && bytes[at] !== 0) {
    const id = String.fromCharCode(...bytes.subarray(at, at + 4));
    const size = new DataView(bytes.buffer, bytes.byteOffset + at + 4, 4).getUint32(0);
    assert.ok(at + 10 + size <= to, `frame ${id} runs past its tag`);
    frames.push({ id, body: bytes.subarray(at + 10, at + 10 + size) });
    at += 10 + size;
  }
  return frames;
}

/** A string in an ID3 encoding (0: Latin-1, 1: UTF-16 with BOM); returns it and where it ended (after its NUL). */
function readString(body: Uint8Array, at: number, encoding: number): { text: string; next: number } {
  if (encoding === 0) {
    let end = at;
    while (end < body.length && body[end] !== 0) end++;
    return { text: Buffer.from(body.subarray(at, end)).toString('latin1'), next: end + 1 };
  }
  assert.equal(encoding, 1, 'text is Latin-1 or UTF-16');
  let end = at;
  while (end + 1 < body.length && !(body[end] === 0 && body[end + 1] === 0)) end += 2;
  const raw = Buffer.from(body.subarray(at, end));
  const bigEndian = raw[0] === 0xfe && raw[1] === 0xff;
  assert.ok(bigEndian || (raw[0] === 0xff && raw[1] === 0xfe), 'UTF-16 text starts with its byte order mark');
  const units = raw.subarray(2);
  if (bigEndian) units.swap16();
  return { text: new TextDecoder('utf-16le', { fatal: true }).decode(units), next: end + 2 };
}

function text(frame: Frame | undefined): string | undefined {
  return frame ? readString(frame.body, 1, frame.body[0]!).text : undefined;
}

interface Chap {
  id: string;
  startMs: number;
  endMs: number;
  title?: string;
}

function readTag(bytes: Uint8Array) {
  assert.equal(String.fromCharCode(...bytes.subarray(0, 3)), 'ID3', 'the file starts with an ID3 tag');
  assert.equal(bytes[3], 3, 'ID3v2.3');
  const end = id3Length(bytes);
  const frames = readFrames(bytes, 10, end);
  const find = (id: string) => frames.find((f) => f.id === id);
  const chapters: Chap[] = frames
    .filter((f) => f.id === 'CHAP')
    .map(({ body }) => {
      const id = readString(body, 0, 0);
      const view = new DataView(body.buffer, body.byteOffset + id.next, 16);
      const sub = readFrames(body, id.next + 16, body.length);
      return {
        id: id.text,
        startMs: view.getUint32(0),
        endMs: view.getUint32(4),
        title: text(sub.find((f) => f.id === 'TIT2')),
      };
    });
  const toc = find('CTOC');
  assert.ok(toc, 'a table of contents');
  const tocId = readString(toc.body, 0, 0);
  const flags = toc.body[tocId.next]!;
  const count = toc.body[tocId.next + 1]!;
  const children: string[] = [];
  let at = tocId.next + 2;
  for (let i = 0; i < count; i++) {
    const child = readString(toc.body, at, 0);
    children.push(child.text);
    at = child.next;
  }
  const wxxx = find('WXXX');
  let sourceUrl: string | undefined;
  if (wxxx) {
    const description = readString(wxxx.body, 1, wxxx.body[0]!);
    sourceUrl = readString(wxxx.body, description.next, 0).text;
  }
  return {
    end,
    title: text(find('TIT2')),
    artist: text(find('TPE1')),
    encoder: text(find('TSSE')),
    sourceUrl,
    chapters,
    toc: { flags, children },
  };
}

const INTRO_HZ = 10_000;
const LONG_HEADING = `A heading that goes on ${'and on '.repeat(60)}forever`;
const PAGE = `# Tides \u0001and\u0007 mills \u202e\ud800 at night

Water is trapped behind a dam at high tide. It is let out through the wheel as the tide falls.

## How a tide mill works

The mill grinds grain for a few hours twice a day.

## ${LONG_HEADING}

Steam engines did not wait for the tide. By 1900 most tide mills had stopped.
`;

describe('audio.mp3 tags', () => {
  const pipeline = createSpeechPipeline({ workers: 2 });
  let pages: PageServer;
  before(async () => {
    pages = await startPageServer({
      '/article.md': serve(PAGE, 'text/markdown; charset=utf-8'),
      // Above 8 kHz: gone if the music were cut to the voices' 16 kHz, as it was.
      '/intro.wav': serve(toneWav(INTRO_HZ, 1.5, 44_100, 0.5), 'audio/wav'),
    });
  });
  after(async () => {
    await pages.close();
    await pipeline.close();
  });

  it('title, source, encoder and chapters (CHAP + CTOC) read back as chapters.json says, after an intro kept bright', async () => {
    const url = pages.url('/article.md');
    const run = await runJob(pipeline, {
      url,
      modelId: 'article-audio-1-mini',
      introAudioUrl: pages.url('/intro.wav'),
    });
    try {
      assert.equal(run.error, undefined, String(run.error?.stack ?? run.error));
      const bytes = new Uint8Array(readFileSync(path.join(run.dir, 'audio.mp3')));
      const chapters = JSON.parse(readFileSync(path.join(run.dir, 'chapters.json'), 'utf8')) as {
        duration_s: number;
        chapters: { title: string; start_s: number; end_s: number }[];
      };
      const tag = readTag(bytes);

      // Hostile text made plain: no control or format characters, no lone surrogate, bounded.
      assert.ok(tag.title, 'a title');
      assert.doesNotMatch(tag.title, /[\p{Cc}\p{Cf}\p{Cs}]/u);
      assert.match(tag.title, /^Tides and mills/);
      assert.ok(tag.title.length <= MAX_TITLE_CHARS);
      assert.equal(tag.sourceUrl, url);
      assert.equal(tag.artist, '127.0.0.1');
      // With intro music the stream is 24 kHz at 64 kbps (Mini alone is 16 kHz at 32 kbps).
      assert.match(tag.encoder ?? '', /^Article Audio, article-audio-1-mini \(LAME 3\.100, 64 kbps\)$/);

      // Chapters: one per entry of chapters.json, same order, same times (ms), titles bounded.
      assert.equal(tag.chapters.length, chapters.chapters.length);
      assert.ok(chapters.chapters.length >= 3, `${chapters.chapters.length} chapters`);
      assert.ok(chapters.chapters[0]!.start_s >= 1.5, 'the first chapter starts after the 1.5 s intro');
      for (const [i, chap] of tag.chapters.entries()) {
        const expected = chapters.chapters[i]!;
        assert.equal(chap.startMs, Math.round(expected.start_s * 1000), `chapter ${i} start`);
        assert.ok(Math.abs(chap.endMs - expected.end_s * 1000) <= 1, `chapter ${i} ends at ${chap.endMs} ms`);
        assert.ok(chap.title && Array.from(chap.title).length <= MAX_CHAPTER_TITLE_CHARS, `chapter ${i} title`);
      }
      assert.match(tag.chapters[1]!.title!, /^How a tide mill works$/);
      assert.match(tag.chapters[2]!.title!, /^A heading that goes on and on .*…$/);
      assert.equal(tag.toc.flags & 3, 3, 'the table of contents is top level and ordered');
      assert.deepEqual(
        tag.toc.children,
        tag.chapters.map((c) => c.id),
      );

      // The Info frame follows the tag; a gapless decoder gives back exactly the job's duration.
      const info = frameAt(bytes, tag.end);
      assert.ok(info?.info, 'the Info frame comes right after the tag');
      const lame = tag.end + 4 + 9 + 120;
      assert.equal(String.fromCharCode(...bytes.subarray(lame, lame + 9)), 'LAME3.100');
      assert.equal((bytes[lame + 21]! << 4) | (bytes[lame + 22]! >> 4), LAME_ENCODER_DELAY);
      const decoded = await decodeMp3(Buffer.from(bytes));
      assert.equal(decoded.sampleRate, 24_000);
      const share = toneShare(decoded, 0.2, 1.1, INTRO_HZ);
      assert.ok(share > 0.8, `the ${INTRO_HZ} Hz intro holds ${(share * 100).toFixed(0)}% of its part's energy`);
      assert.ok(
        Math.abs(decoded.durationS - chapters.duration_s) < 0.002,
        `decoded ${decoded.durationS} s, the job says ${chapters.duration_s} s`,
      );
    } finally {
      run.dispose();
    }
  });
});
