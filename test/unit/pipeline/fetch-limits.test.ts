// Getting an article by URL, against real loopback web servers: the size, time and redirect limits, content types
// the pipeline refuses (an image) and the ones it reads (HTML, plain text in its declared charset, Markdown).
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FetchError, fetchWithLimits } from '../../../src/speech/source/fetch-source';
import { createSpeechPipeline } from '../../../src/speech';
import { FETCH_LIMITS, type PageServer, runJob, serve, startPageServer } from '../../support/speech-support';

const ACCEPT = 'text/html';
const KB = 1024;

function redirectTo(target: string): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  return (_req, res) => res.writeHead(302, { location: target }).end();
}

describe('pipeline: fetching within limits', () => {
  let server: PageServer;
  const held: http.ServerResponse[] = [];
  const page = '<!doctype html><title>t</title><p>Hello.</p>';
  before(async () => {
    server = await startPageServer({
      '/page': serve(page, 'text/html; charset=utf-8'),
      '/big-declared': (_req, res) =>
        res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(64 * KB) }).end('x'.repeat(64 * KB)),
      // No length announced: the limit must hold while the body streams.
      '/big-streamed': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        const chunk = 'y'.repeat(8 * KB);
        let sent = 0;
        const more = () => {
          let room = true;
          while (sent < 64 && room) {
            room = res.write(chunk);
            sent++;
          }
          if (sent >= 64) res.end();
          else res.once('drain', more);
        };
        more();
      },
      '/never': (_req, res) => void held.push(res),
      '/slow-body': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.write('<p>first bytes');
        held.push(res);
      },
      '/r1': redirectTo('/r2'),
      '/r2': redirectTo('/r3'),
      '/r3': redirectTo('/r4'),
      '/r4': redirectTo('/r5'),
      '/r5': redirectTo('/page'),
      '/r0': redirectTo('/r1'),
      '/to-ftp': redirectTo('ftp://127.0.0.1/file'),
      '/loop': redirectTo('/loop'),
      '/gone': (_req, res) => res.writeHead(410, { 'content-type': 'text/plain' }).end('gone'),
    });
  });
  after(async () => {
    for (const res of held) res.destroy();
    await server.close();
  });

  const fetchPage = (route: string, limits: Partial<typeof FETCH_LIMITS> = {}, signal = new AbortController().signal) =>
    fetchWithLimits(server.url(route), { ...FETCH_LIMITS, ...limits }, signal, ACCEPT);

  it('returns the body, media type, charset and final address', async () => {
    const fetched = await fetchPage('/page');
    assert.equal(fetched.body.toString('utf8'), page);
    assert.equal(fetched.mediaType, 'text/html');
    assert.equal(fetched.charset, 'utf-8');
    assert.equal(fetched.finalUrl, server.url('/page'));
  });

  it('refuses a body larger than the size limit, whether announced or streamed', async () => {
    await assert.rejects(
      fetchPage('/big-declared', { maxBytes: 16 * KB }),
      (error: Error) => error instanceof FetchError && /64 KB; the limit is 16 KB/.test(error.message),
    );
    await assert.rejects(
      fetchPage('/big-streamed', { maxBytes: 16 * KB }),
      (error: Error) => error instanceof FetchError && /larger than the limit of 16 KB/.test(error.message),
    );
    // The same pages within a larger limit arrive whole.
    assert.equal((await fetchPage('/big-streamed', { maxBytes: 1024 * KB })).body.length, 64 * 8 * KB);
  });

  it('gives up at the time limit when the server sends no answer, or stalls in the body', async () => {
    for (const route of ['/never', '/slow-body']) {
      const started = Date.now();
      await assert.rejects(
        fetchPage(route, { timeoutMs: 400 }),
        (error: Error) => error instanceof FetchError && /did not send .* within/.test(error.message),
      );
      const took = Date.now() - started;
      assert.ok(took >= 350, `${route}: gave up after ${took} ms, before its time limit`);
    }
  });

  it('follows up to the redirect limit and no further; never to a non-http address', async () => {
    const five = await fetchPage('/r1', { maxRedirects: 5 });
    assert.equal(five.finalUrl, server.url('/page'));
    await assert.rejects(fetchPage('/r0', { maxRedirects: 5 }), /redirects more than 5 times/);
    await assert.rejects(fetchPage('/loop', { maxRedirects: 3 }), /redirects more than 3 times/);
    await assert.rejects(fetchPage('/to-ftp'), /redirected to a non-http address/);
  });

  it('reports error statuses and refused connections with the host and what to do', async () => {
    await assert.rejects(
      fetchPage('/gone'),
      (error: Error) =>
        error instanceof FetchError && error.message.includes(`${new URL(server.base).host} answered 410`),
    );
    const closed = await startPageServer({});
    const url = closed.url('/x');
    await closed.close();
    await assert.rejects(
      fetchWithLimits(url, FETCH_LIMITS, new AbortController().signal, ACCEPT),
      /connection was refused/,
    );
    // A redirect to that closed address: the error names the hop that failed, not the address the user gave.
    const hop = await startPageServer({ '/moved': redirectTo(url) });
    try {
      await assert.rejects(
        fetchWithLimits(hop.url('/moved'), FETCH_LIMITS, new AbortController().signal, ACCEPT),
        (error: Error) =>
          error instanceof FetchError && error.message === `Could not fetch ${url}: the connection was refused.`,
      );
    } finally {
      await hop.close();
    }
  });

  it('stops at once when the job is cancelled, with the cancellation as the reason (not a fetch failure)', async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled by the test');
    setTimeout(() => controller.abort(reason), 100);
    await assert.rejects(fetchPage('/never', {}, controller.signal), (error: Error) => error === reason);
  });
});

describe('pipeline: what a URL may hold', () => {
  let server: PageServer;
  const pipeline = createSpeechPipeline({ workers: 1 });
  const markdown = `# Notes on tides\n\nThe tide comes in twice a day, and the harbour fills in about six hours.\n\n## Spring tides\n\nAt new and full moon the range is largest.\n`;
  const latin1 = Buffer.from(
    'Le café était fermé, alors nous avons marché jusqu’au port pour voir les bateaux rentrer.',
    'latin1',
  );
  before(async () => {
    // A 1×1 PNG.
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
      'base64',
    );
    server = await startPageServer({
      '/image': serve(png, 'image/png'),
      '/notes.md': serve(markdown, 'text/markdown; charset=utf-8'),
      '/plain': serve(latin1, 'text/plain; charset=iso-8859-1'),
      '/slow': (_req, res) =>
        void setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('late'), 2000),
    });
  });
  after(async () => {
    await server.close();
    await pipeline.close();
  });

  it('refuses an image with fetch_failed, naming its type', async () => {
    const run = await runJob(pipeline, { modelId: 'article-audio-1-mini', url: server.url('/image') });
    run.dispose();
    assert.equal(run.error?.code, 'fetch_failed', String(run.error));
    assert.match(run.error.message, /is image\/png, not a web page, Markdown or plain text/);
  });

  it('fails with fetch_failed when the page is slower than the time limit', async () => {
    const run = await runJob(
      pipeline,
      { modelId: 'article-audio-1-mini', url: server.url('/slow') },
      { fetchLimits: { timeoutMs: 300 } },
    );
    run.dispose();
    assert.equal(run.error?.code, 'fetch_failed', String(run.error));
    assert.match(run.error.message, /did not send/);
  });

  it('reads Markdown by URL: its title, headings as chapters, the article as read', async () => {
    const run = await runJob(pipeline, { modelId: 'article-audio-1-mini', url: server.url('/notes.md') });
    try {
      assert.equal(run.error, undefined, String(run.error));
      assert.equal(run.output?.title, 'Notes on tides');
      const read = readFileSync(path.join(run.dir, 'article.md'), 'utf8');
      assert.equal(
        read,
        '# Notes on tides\n\nThe tide comes in twice a day, and the harbour fills in about six hours.\n\n## Spring tides\n\nAt new and full moon the range is largest.\n',
      );
      const chapters = JSON.parse(readFileSync(path.join(run.dir, 'chapters.json'), 'utf8')) as {
        chapters: { title: string }[];
      };
      assert.deepEqual(
        chapters.chapters.map((c) => c.title),
        ['Notes on tides', 'Spring tides'],
      );
      assert.ok(
        run.logs.some((line) => /^Fetched \d+ bytes from 127\.0\.0\.1\.$/.test(line)),
        run.logs.join('\n'),
      );
    } finally {
      run.dispose();
    }
  });

  it('reads plain text by URL in the charset the server declares', async () => {
    const run = await runJob(pipeline, { modelId: 'article-audio-1-mini', url: server.url('/plain') });
    try {
      assert.equal(run.error, undefined, String(run.error));
      const read = readFileSync(path.join(run.dir, 'article.md'), 'utf8');
      assert.equal(read, `${latin1.toString('latin1')}\n`);
      assert.match(
        readFileSync(path.join(run.dir, 'transcript.vtt'), 'utf8').replace(/<[\d:.]+>/g, ''),
        /Le café était fermé/,
      );
    } finally {
      run.dispose();
    }
  });
});
