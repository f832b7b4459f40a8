// Output files are downloaded to disk: streamed to a .part file, resumed with Range after a cut (undici's retry
// interceptor), checked by length, renamed into place; and the API key never goes to another origin, even through a
// redirect (undici's redirect interceptor).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants, existsSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConnectionError, NotFoundError } from '../../../src/api';
import { sendErrors, sleep, startFaultServer, type FaultServer } from '../../support/fault-server';
import { API_KEY, clientFor, rejectionOf } from '../../support/api-client';

const SIZE = 200_000;

/**
 * Serves `content` with ETag and Range support, like the engine's output files; with `ifMatch`, a resume whose
 * If-Match names another ETag gets 412 (as RFC 9110 asks), else If-Match is ignored, as the engine does.
 */
function serveFile(content: Buffer, etag: string, { ifMatch = false } = {}) {
  return (req: IncomingMessage, res: ServerResponse) => {
    if (ifMatch && req.headers['if-match'] !== undefined && req.headers['if-match'] !== etag) {
      res.writeHead(412);
      res.end();
      return;
    }
    const range = /^bytes=(\d+)-(\d*)$/.exec(String(req.headers.range ?? ''));
    const ifRange = req.headers['if-range'];
    if (range && (ifRange === undefined || ifRange === etag)) {
      const start = Number(range[1]);
      res.writeHead(206, {
        'content-type': 'audio/mpeg',
        etag,
        'content-length': String(content.length - start),
        'content-range': `bytes ${start}-${content.length - 1}/${content.length}`,
      });
      res.end(content.subarray(start));
      return;
    }
    res.writeHead(200, { 'content-type': 'audio/mpeg', etag, 'content-length': String(content.length) });
    res.end(content);
  };
}

/** Sends the headers for the whole file and `cutAt` bytes of it, then cuts the connection. */
function serveCut(content: Buffer, etag: string, cutAt: number) {
  return async (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'audio/mpeg', etag, 'content-length': String(content.length) });
    res.write(content.subarray(0, cutAt));
    await sleep(150);
    res.socket?.destroy();
  };
}

describe('downloadOutput', () => {
  let server: FaultServer;
  let foreign: FaultServer;
  let dir: string;
  before(async () => {
    server = await startFaultServer();
    // Another origin: same host, another port.
    foreign = await startFaultServer();
    dir = mkdtempSync(path.join(os.tmpdir(), 'article-audio-download-'));
  });
  after(async () => {
    await server.close();
    await foreign.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('streams the file to disk through .part, reports progress, and returns its type', async () => {
    const content = randomBytes(SIZE);
    server.on('GET', '/v1/jobs/d1/outputs/audio.mp3', serveFile(content, '"d1"'));
    const { client } = clientFor(server);
    const destination = path.join(dir, 'nested', 'd1.mp3');
    const progress: [number, number | undefined][] = [];
    const result = await client.downloadOutput('/v1/jobs/d1/outputs/audio.mp3', destination, {
      onProgress: (bytes, total) => progress.push([bytes, total]),
    });
    assert.deepEqual(result, { path: destination, bytes: SIZE, contentType: 'audio/mpeg' });
    assert.ok(readFileSync(destination).equals(content));
    assert.equal(existsSync(`${destination}.part`), false);
    assert.deepEqual(progress.at(-1), [SIZE, SIZE]);
    assert.equal(
      server.requestsTo('GET', '/v1/jobs/d1/outputs/audio.mp3')[0]!.headers.authorization,
      `Bearer ${API_KEY}`,
    );
  });

  it('resumes after a cut in the middle of the body, with Range and If-Match', async () => {
    const content = randomBytes(SIZE);
    server.on('GET', '/v1/jobs/d2/outputs/audio.mp3', serveCut(content, '"v1"', 80_000), serveFile(content, '"v1"'));
    const { client, logs } = clientFor(server);
    const destination = path.join(dir, 'd2.mp3');
    const result = await client.downloadOutput(`${server.url}/v1/jobs/d2/outputs/audio.mp3`, destination);
    assert.equal(result.bytes, SIZE);
    assert.ok(readFileSync(destination).equals(content));
    const [first, second] = server.requestsTo('GET', '/v1/jobs/d2/outputs/audio.mp3');
    assert.equal(first!.headers.range, undefined);
    const resumedAt = Number(/^bytes=(\d+)-199999$/.exec(String(second!.headers.range))?.[1]);
    assert.ok(resumedAt > 0 && resumedAt <= 80_000, `resumed at ${second!.headers.range}`);
    assert.equal(second!.headers['if-match'], '"v1"');
    assert.equal(second!.headers.authorization, `Bearer ${API_KEY}`);
    assert.ok(
      logs.some((line) => /downloading .* failed .*; resuming after \d+ bytes/.test(line)),
      logs.join('\n'),
    );
  });

  it('starts over when the file changed between the cut and the resume (another ETag, or 412 to If-Match)', async () => {
    for (const [name, ifMatch] of [
      ['d3', false],
      ['d3b', true],
    ] as const) {
      const old = randomBytes(SIZE);
      const changed = randomBytes(SIZE + 10);
      const route = `/v1/jobs/${name}/outputs/audio.mp3`;
      server.on('GET', route, serveCut(old, '"old"', 50_000), serveFile(changed, '"new"', { ifMatch }));
      const { client, logs } = clientFor(server);
      const destination = path.join(dir, `${name}.mp3`);
      const result = await client.downloadOutput(route, destination);
      assert.equal(result.bytes, SIZE + 10);
      assert.ok(readFileSync(destination).equals(changed));
      const requests = server.requestsTo('GET', route);
      assert.equal(requests.length, 3, `${name}: cut, refused resume, whole again`);
      assert.equal(requests[2]!.headers.range, undefined);
      assert.ok(
        logs.some((line) => line.includes('downloading the file whole again')),
        logs.join('\n'),
      );
    }
  });

  it('fails, and leaves nothing behind, when the file never arrives whole', async () => {
    const content = randomBytes(SIZE);
    // No Range support, and every answer is cut: no attempt can finish.
    server.on('GET', '/v1/jobs/d4/outputs/audio.mp3', serveCut(content, '"x"', 60_000));
    const { client } = clientFor(server, { maxRetries: 2 });
    const destination = path.join(dir, 'd4.mp3');
    const { error } = await rejectionOf(client.downloadOutput('/v1/jobs/d4/outputs/audio.mp3', destination));
    assert.ok(error instanceof ConnectionError, String(error));
    assert.equal(existsSync(destination), false);
    assert.equal(existsSync(`${destination}.part`), false);
    assert.equal(server.requestsTo('GET', '/v1/jobs/d4/outputs/audio.mp3').length, 4);
  });

  it('checks the length: a body shorter than announced is not accepted', async () => {
    // A 206 that claims the whole file but sends less, cleanly: only the length check can catch it.
    const content = randomBytes(1000);
    server.on('GET', '/v1/jobs/d5/outputs/audio.mp3', (_req, res) => {
      res.writeHead(206, {
        'content-type': 'audio/mpeg',
        'content-range': `bytes 0-1999/2000`,
        'content-length': '1000',
      });
      res.end(content);
    });
    const { client } = clientFor(server, { maxRetries: 0 });
    const destination = path.join(dir, 'd5.mp3');
    const { error } = await rejectionOf(client.downloadOutput('/v1/jobs/d5/outputs/audio.mp3', destination));
    assert.ok(error instanceof ConnectionError, String(error));
    assert.match(error.message, /could not resume .*Content-Length mismatch/);
    assert.equal(existsSync(destination), false);
  });

  it('never sends the API key to another origin, directly or through a redirect', async () => {
    const content = randomBytes(1000);
    foreign.on('GET', '/cdn/audio.mp3', serveFile(content, '"cdn"'));
    server.on('GET', '/v1/jobs/d6/outputs/audio.mp3', (_req, res) => {
      res.writeHead(302, { location: `${foreign.url}/cdn/audio.mp3?signature=abc` });
      res.end();
    });
    const { client } = clientFor(server);
    await client.downloadOutput(`${foreign.url}/cdn/audio.mp3`, path.join(dir, 'd6a.mp3'));
    await client.downloadOutput('/v1/jobs/d6/outputs/audio.mp3', path.join(dir, 'd6b.mp3'));
    assert.ok(readFileSync(path.join(dir, 'd6b.mp3')).equals(content));
    const atForeign = foreign.requestsTo('GET', '/cdn/audio.mp3');
    assert.equal(atForeign.length, 2);
    for (const request of atForeign) assert.equal(request.headers.authorization, undefined);
    assert.equal(
      server.requestsTo('GET', '/v1/jobs/d6/outputs/audio.mp3')[0]!.headers.authorization,
      `Bearer ${API_KEY}`,
    );
    // "localhost" is another origin than "127.0.0.1", even on the same port.
    const sameHostOtherName = server.url.replace('127.0.0.1', 'localhost');
    server.on('GET', '/v1/jobs/d7/outputs/audio.mp3', serveFile(content, '"d7"'));
    await client.downloadOutput(`${sameHostOtherName}/v1/jobs/d7/outputs/audio.mp3`, path.join(dir, 'd7.mp3'));
    assert.equal(server.requestsTo('GET', '/v1/jobs/d7/outputs/audio.mp3')[0]!.headers.authorization, undefined);
  });

  it('a missing file is a NotFoundError; an abort stops the download and removes the .part file', async () => {
    server.on('GET', '/v1/jobs/d8/outputs/audio.mp3', (_req, res) =>
      sendErrors(res, 404, [{ code: 'not_found', message: 'gone' }]),
    );
    const { client } = clientFor(server);
    const missing = await rejectionOf(client.downloadOutput('/v1/jobs/d8/outputs/audio.mp3', path.join(dir, 'd8.mp3')));
    assert.ok(missing.error instanceof NotFoundError);

    server.on('GET', '/v1/jobs/d9/outputs/audio.mp3', (_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': String(SIZE) });
      res.write(randomBytes(1000)); // and then nothing
    });
    const controller = new AbortController();
    const destination = path.join(dir, 'd9.mp3');
    const pending = client.downloadOutput('/v1/jobs/d9/outputs/audio.mp3', destination, {
      signal: controller.signal,
      onProgress: () => controller.abort(),
    });
    const { error } = await rejectionOf(pending);
    assert.equal((error as Error).name, 'AbortError');
    assert.equal(existsSync(`${destination}.part`), false);
    assert.equal(existsSync(destination), false);
  });

  it('a cancelled download settles only once its file is closed, so no .part is created after it', async () => {
    // Seen under load: the body failed while the .part file was still being opened, the download removed the file
    // and settled, and the open created it afterwards. Here the open cannot finish until the test lets it: the .part
    // is a FIFO (made once the client has removed any leftover, when its request arrives), whose opening for writing
    // waits for a reader.
    const destination = path.join(dir, 'd10.mp3');
    const part = `${destination}.part`;
    server.on('GET', '/v1/jobs/d10/outputs/audio.mp3', (_req, res) => {
      execFileSync('mkfifo', [part]);
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': String(SIZE) });
      res.write(randomBytes(1000)); // and then nothing
    });
    const controller = new AbortController();
    const { client } = clientFor(server);
    let settled = false;
    const pending = rejectionOf(
      client.downloadOutput('/v1/jobs/d10/outputs/audio.mp3', destination, {
        signal: controller.signal,
        onProgress: () => controller.abort(),
      }),
    ).finally(() => (settled = true));
    while (!controller.signal.aborted) await sleep(10);
    await sleep(300);
    assert.equal(settled, false, 'the download settled while its .part file was still being opened');
    const reader = openSync(part, constants.O_RDONLY | constants.O_NONBLOCK); // lets the open finish
    try {
      const { error } = await pending;
      assert.equal((error as Error).name, 'AbortError');
      assert.equal(existsSync(part), false);
      assert.equal(existsSync(destination), false);
    } finally {
      closeSync(reader);
    }
  });
});
