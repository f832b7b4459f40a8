// Input that is not text (src/protocol/binary.ts): real files of the repo and archives made here by real code are
// recognized by their bytes and as a decoded string (as a client that read them as UTF-8 would send them); prose,
// code and Markdown in several languages and encodings are not.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, it } from 'node:test';
import { binaryKind, binaryProblem, textProblem } from '../../../src/protocol';
import { repoRoot } from '../../support/engine-process';
import { zipOf } from '../../support/zip-file';

/** A PDF with a page and no text (a scanned page has an image and no text; this one has nothing). */
const EMPTY_PDF = Buffer.from(
  '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n' +
    '3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 612 792]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n',
);

const PROSE = 'The river town woke early. Boats left before the sun rose, and the market filled with bread. '.repeat(
  20,
);

describe('input that is not text', () => {
  const files: [string, Buffer, RegExp][] = [
    ['media/icon.png', readFileSync(path.join(repoRoot, 'media/icon.png')), /PNG image/],
    ['dist/flite.wasm', readFileSync(path.join(repoRoot, 'dist/flite.wasm')).subarray(0, 4000), /WebAssembly/],
    ['a zip of README.md', zipOf({ 'README.md': readFileSync(path.join(repoRoot, 'README.md'), 'utf8') }), /ZIP/],
    ['a PDF without text', EMPTY_PDF, /PDF/],
    ['gzip of prose', gzipSync(Buffer.from(PROSE)), /gzip|binary/],
    ['random bytes', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256)), /binary data/],
  ];
  for (const [name, bytes, kind] of files) {
    it(`${name} is not text, as bytes and as the UTF-8 string a client would read`, () => {
      assert.match(binaryKind(bytes) ?? 'text', kind);
      const decoded = new TextDecoder().decode(bytes);
      assert.ok(binaryKind(decoded), `decoded ${name} is recognized too`);
      assert.match(binaryProblem(bytes) ?? '', /^looks like .*, not text$/);
    });
  }

  it('a submitted text that is a decoded PNG is refused with what it looks like', () => {
    const decoded = new TextDecoder().decode(readFileSync(path.join(repoRoot, 'media/icon.png')));
    assert.match(textProblem(decoded.slice(0, 5000)) ?? '', /looks like a PNG image, not text/);
  });

  const texts: [string, Buffer | string][] = [
    ['English prose', PROSE],
    ['this repo’s README', readFileSync(path.join(repoRoot, 'README.md'))],
    ['TypeScript source', readFileSync(path.join(repoRoot, 'src/protocol/binary.ts'))],
    [
      'German in UTF-8',
      'Über die Brücke gingen früh am Morgen die Händler zum Markt. Straße, Größe, Fähre. '.repeat(30),
    ],
    [
      'German in Latin-1',
      Buffer.from('Über die Brücke gingen früh am Morgen die Händler zum Markt. '.repeat(30), 'latin1'),
    ],
    ['Japanese', '川沿いの町は早く目覚めた。日の出前に船が出て、市場はパンで満ちた。'.repeat(30)],
    ['a log with tabs and form feeds', 'time\tlevel\tmessage\n12:00\tinfo\tstarted\f\n'.repeat(50)],
    ['an article about ID3 tags', 'ID3 tags hold the title of an MP3 file. '.repeat(10)],
    ['UTF-16 text with its byte order mark', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(PROSE, 'utf16le')])],
    ['an article about GIF', 'GIF89a is the version of the format that added animation. '.repeat(10)],
  ];
  for (const [name, content] of texts) {
    it(`${name} is text`, () => {
      assert.equal(binaryKind(content), undefined);
      if (typeof content === 'string') assert.equal(binaryKind(Buffer.from(content)), undefined);
    });
  }
});
