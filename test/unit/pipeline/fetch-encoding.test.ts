// Compressed answers: servers that send gzip, deflate or br although the engine asked for none (or that it now asks
// for) are decoded, never beyond the size limit once uncompressed (a small "zip bomb" is refused), and encodings the
// engine cannot read are refused with a message that says so, against a real loopback server.
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import zlib from 'node:zlib';
import { FetchError, fetchWithLimits } from '../../../src/speech/source/fetch-source';
import { FETCH_LIMITS, type PageServer, type Route, startPageServer } from '../../support/speech-support';

const PAGE = `<!doctype html><title>Compressed</title><article><h1>Compressed</h1>${'<p>A paragraph of the article, sent compressed.</p>'.repeat(50)}</article>`;

function encoded(body: Buffer, encoding: string): Route {
  return (_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': encoding }).end(body);
}

describe('pipeline: compressed answers', () => {
  let server: PageServer;
  before(async () => {
    const page = Buffer.from(PAGE);
    server = await startPageServer({
      '/gzip': encoded(zlib.gzipSync(page), 'gzip'),
      '/deflate': encoded(zlib.deflateSync(page), 'deflate'),
      '/raw-deflate': encoded(zlib.deflateRawSync(page), 'deflate'),
      '/br': encoded(zlib.brotliCompressSync(page), 'br'),
      '/stacked': encoded(zlib.gzipSync(zlib.deflateSync(page)), 'deflate, gzip'),
      // 64 MiB of zeros in about 64 KB.
      '/bomb': encoded(zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 }), 'gzip'),
      '/zstd': encoded(page, 'zstd'),
      '/broken': encoded(Buffer.from('this is not gzip at all'), 'gzip'),
      '/empty': encoded(Buffer.alloc(0), 'gzip'),
    });
  });
  after(() => server.close());

  const fetchPath = (route: string, maxBytes = FETCH_LIMITS.maxBytes) =>
    fetchWithLimits(server.url(route), { ...FETCH_LIMITS, maxBytes }, new AbortController().signal, 'text/html');

  it('decodes gzip, deflate (zlib or raw), br and stacked encodings', async () => {
    for (const route of ['/gzip', '/deflate', '/raw-deflate', '/br', '/stacked']) {
      const fetched = await fetchPath(route);
      assert.equal(fetched.body.toString('utf8'), PAGE, route);
      assert.equal(fetched.mediaType, 'text/html');
    }
    assert.equal((await fetchPath('/empty')).body.length, 0);
  });

  it('refuses a body that decompresses beyond the size limit', async () => {
    await assert.rejects(
      fetchPath('/bomb', 1024 * 1024),
      (error: Error) =>
        error instanceof FetchError && /larger than the limit of 1024 KB once uncompressed/.test(error.message),
    );
  });

  it('refuses encodings it cannot read, and bodies that do not decode, saying why', async () => {
    await assert.rejects(
      fetchPath('/zstd'),
      (error: Error) =>
        error instanceof FetchError && /Content-Encoding "zstd", which this engine cannot decode/.test(error.message),
    );
    await assert.rejects(
      fetchPath('/broken'),
      (error: Error) => error instanceof FetchError && /is sent as gzip but does not decompress/.test(error.message),
    );
  });
});
