// Black-box: bad input of every kind against the real `article-audio serve` process gets the documented error in
// the envelope, and changes nothing (no job appears in the data dir, or in Postgres mode in the database).
import * as assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type EngineProcess, startEngineProcess } from '../support/engine-process';
import { Answer, type ServiceCalls, articleText, serviceCalls } from '../support/http-calls';

/** A request with the path exactly as given (fetch would normalise `..` and the like). */
function rawRequest(
  base: string,
  method: string,
  rawPath: string,
  headers: Record<string, string> = {},
  body?: Buffer | string,
): Promise<Answer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, method, path: rawPath, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const flat: Record<string, string> = {};
        for (const [key, value] of Object.entries(res.headers))
          if (value !== undefined) flat[key] = Array.isArray(value) ? value.join(', ') : value;
        resolve(new Answer(res.statusCode ?? 0, new Headers(flat), Buffer.concat(chunks).toString('utf8')));
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Writes raw bytes on a TCP connection and returns what came back. */
function rawExchange(base: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.end(bytes));
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
}

function assertError(answer: Answer, status: number, code: string): void {
  assert.equal(answer.status, status, `expected ${status} ${code}, got ${answer.status}: ${answer.text.slice(0, 300)}`);
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(Object.keys(answer.body as object).sort(), ['data', 'errors']);
  assert.equal((answer.body as { data: unknown }).data, null);
  assert.ok(answer.errors.length >= 1);
  for (const entry of answer.errors) {
    assert.equal(entry.code, code);
    assert.equal(typeof entry.message, 'string');
    assert.ok(entry.message.length > 5);
  }
}

describe('engine process: every bad request gets the documented error and changes nothing', () => {
  let engine: EngineProcess;
  let calls: ServiceCalls;
  let base: string;
  let auth: Record<string, string>;
  const good = { model_id: 'article-audio-1-mini', text: articleText() };

  before(async () => {
    engine = await startEngineProcess({ args: ['--max-body-bytes', '1048576'] });
    base = engine.url;
    calls = serviceCalls(base, engine.tokens[0] as string);
    auth = { authorization: `Bearer ${engine.tokens[0]}` };
  });
  after(async () => {
    await engine.dispose();
  });

  it('401 for a missing or wrong token on every endpoint, compared exactly', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    const badHeaders: (Record<string, string> | undefined)[] = [
      undefined,
      { authorization: '' },
      { authorization: 'Bearer' },
      { authorization: 'Bearer wrong-token' },
      { authorization: `Bearer ${engine.tokens[0]}x` },
      { authorization: `Bearer ${(engine.tokens[0] as string).slice(0, -1)}` },
      { authorization: `Basic ${Buffer.from(`user:${engine.tokens[0]}`).toString('base64')}` },
      { authorization: `${engine.tokens[0]}` },
    ];
    for (const headers of badHeaders) {
      const h = headers ?? {};
      for (const answer of [
        await rawRequest(
          base,
          'POST',
          '/v1/article-to-audio',
          { ...h, 'content-type': 'application/json' },
          JSON.stringify(good),
        ),
        await rawRequest(base, 'GET', `/v1/jobs/${id}`, h),
        await rawRequest(base, 'GET', `/v1/jobs/${id}/stream`, h),
        await rawRequest(base, 'POST', `/v1/jobs/${id}/cancel`, h),
        await rawRequest(base, 'GET', `/v1/jobs/${id}/outputs/audio.mp3`, h),
      ]) {
        assertError(answer, 401, 'unauthorized');
        assert.equal(answer.headers.get('www-authenticate'), 'Bearer');
      }
    }
    // The scheme is case-insensitive (RFC 9110).
    const lower = await rawRequest(base, 'GET', `/v1/jobs/${id}`, { authorization: `bearer ${engine.tokens[0]}` });
    assertError(lower, 404, 'not_found');
  });

  it('400 invalid_json for broken, empty or non-UTF-8 bodies', async () => {
    for (const body of [
      '{"model_id": "article-audio-1-mini",',
      '{model_id: 1}',
      "{'a': 1}",
      '',
      '   ',
      '{"a":1}}',
      'NaN',
    ]) {
      assertError(await calls.submit(body), 400, 'invalid_json');
    }
    const latin1 = Buffer.concat([
      Buffer.from('{"model_id":"article-audio-1-mini","text":"caf'),
      Buffer.from([0xe9]),
      Buffer.from(`${'x'.repeat(60)}"}`),
    ]);
    assertError(
      await rawRequest(base, 'POST', '/v1/article-to-audio', { ...auth, 'content-type': 'application/json' }, latin1),
      400,
      'invalid_json',
    );
  });

  it('413 for bodies over the limit, declared or streamed, and the answer arrives', async () => {
    const huge = JSON.stringify({ ...good, text: 'a'.repeat(2 * 1024 * 1024) });
    assertError(await calls.submit(huge), 413, 'payload_too_large');
    // Chunked, without a length: refused once the limit is passed.
    const chunks = Array.from({ length: 40 }, () => Buffer.alloc(64 * 1024, 0x61));
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    const answer = await fetch(`${base}/v1/article-to-audio`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    });
    assertError(new Answer(answer.status, answer.headers, await answer.text()), 413, 'payload_too_large');
    // A body just under the limit is read (and then judged on its content).
    const near = JSON.stringify({ ...good, text: 'b'.repeat(1024 * 1024 - 100) });
    assertError(await calls.submit(near), 422, 'validation_failed');
  });

  it('415 for a missing or wrong content type, 2xx for JSON with a UTF-8 charset', async () => {
    const body = JSON.stringify(good);
    for (const type of [
      undefined,
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/json; charset=iso-8859-1',
      'application/jsonx',
      'json',
    ]) {
      const headers: Record<string, string> = { ...auth };
      if (type !== undefined) headers['content-type'] = type;
      assertError(await rawRequest(base, 'POST', '/v1/article-to-audio', headers, body), 415, 'unsupported_media_type');
    }
    const accepted = await rawRequest(
      base,
      'POST',
      '/v1/article-to-audio',
      { ...auth, 'content-type': 'Application/JSON; charset="UTF-8"' },
      body,
    );
    assert.equal(accepted.status, 202, accepted.text);
    acceptedIds.push(accepted.jobId);
  });

  const acceptedIds: string[] = [];

  it('422 validation_failed with one entry per bad field and its JSON path', async () => {
    const cases: [unknown, string[]][] = [
      [{ ...good, voice: 'x', speed: 2 }, ['speed', 'voice']],
      [{ model_id: 42, text: 7 }, ['model_id', 'text']],
      [{ model_id: 'article-audio-2', url: ['https://example.com'] }, ['model_id', 'url']],
      [{ model_id: 'article-audio-1-mini', url: 'ftp://example.com/a' }, ['url']],
      [{ model_id: 'article-audio-1-mini', url: 'javascript:alert(1)' }, ['url']],
      [{ model_id: 'article-audio-1-mini', url: '/just/a/path' }, ['url']],
      [{ model_id: 'article-audio-1-mini', url: 'https://user:secret@example.com/' }, ['url']],
      [{ model_id: 'article-audio-1-mini', url: `https://example.com/${'a'.repeat(3000)}` }, ['url']],
      [{ ...good, intro_audio_url: 'file:///etc/passwd', outro_audio_url: 12 }, ['intro_audio_url', 'outro_audio_url']],
      [{ model_id: 'article-audio-1-mini', text: `   ${'short '.repeat(5)}   ` }, ['text']],
      [{ model_id: 'article-audio-1-mini', text: 'x'.repeat(100_001) }, ['text']],
      [{ model_id: 'article-audio-1-mini' }, ['text']],
      [{ ...good, url: 'https://example.com/a' }, ['url']],
      [{ text: articleText() }, ['model_id']],
      [{ ...good, text: null }, ['text']],
    ];
    for (const [body, fields] of cases) {
      const answer = await calls.submit(body);
      assertError(answer, 422, 'validation_failed');
      assert.deepEqual(answer.errors.map((e) => e.field).sort(), fields, JSON.stringify(body).slice(0, 120));
    }
    for (const body of [[], 'text', 42, null, true, [good]]) {
      const answer = await calls.submit(JSON.stringify(body));
      assertError(answer, 422, 'validation_failed');
      assert.equal(answer.errors.length, 1);
    }
  });

  it('404 for unknown routes, and for job ids and file names that are not exactly what the engine made', async () => {
    const real = acceptedIds[0] as string;
    const tricks = [
      '/',
      '/v1',
      '/v2/article-to-audio',
      '/v1/article-to-audio/',
      '/v1/jobs',
      '/v1/jobs/',
      `/v1/jobs/${real}/`,
      `/v1/jobs//${real}`,
      '/v1/jobs/..%2F..%2Fengine.lock',
      '/v1/jobs/..%2f..',
      '/v1/jobs/%2e%2e/%2e%2e/engine.lock',
      '/v1/jobs/../jobs',
      `/v1/jobs/../jobs/${real}`,
      '/v1/jobs/..%252F..%252Fetc%252Fpasswd',
      `/v1/jobs/${real}%2Fstream`,
      `/v1/jobs/${real.toUpperCase()}`,
      `/v1/jobs/${real}%00`,
      `/v1/jobs/${real}.json`,
      `/v1/jobs/${'a'.repeat(5000)}`,
      '/v1/jobs/00000000-0000-4000-8000-000000000000',
      `/v1/jobs/${real}/outputs/..%2Fjob.json`,
      `/v1/jobs/${real}/outputs/%2e%2e%2fjob.json`,
      `/v1/jobs/${real}/outputs/..%5Cjob.json`,
      `/v1/jobs/${real}/outputs/job.json`,
      `/v1/jobs/${real}/outputs/events.ndjson`,
      `/v1/jobs/${real}/outputs/`,
      `/v1/jobs/${real}/outputs/audio.mp3/x`,
    ];
    for (const trick of tricks) {
      const answer = await rawRequest(base, 'GET', trick, auth);
      assertError(answer, 404, 'not_found');
    }
  });

  it('405 with Allow for a known path and the wrong method', async () => {
    const id = acceptedIds[0] as string;
    const cases: [string, string, string][] = [
      ['GET', '/v1/article-to-audio', 'POST'],
      ['PUT', '/v1/article-to-audio', 'POST'],
      ['DELETE', `/v1/jobs/${id}`, 'GET, HEAD'],
      ['POST', `/v1/jobs/${id}`, 'GET, HEAD'],
      ['GET', `/v1/jobs/${id}/cancel`, 'POST'],
      ['POST', `/v1/jobs/${id}/stream`, 'GET'],
      ['PUT', `/v1/jobs/${id}/outputs/audio.mp3`, 'GET, HEAD'],
    ];
    for (const [method, target, allow] of cases) {
      const answer = await rawRequest(
        base,
        method,
        target,
        { ...auth, 'content-type': 'application/json' },
        method === 'POST' || method === 'PUT' ? '{}' : undefined,
      );
      assertError(answer, 405, 'method_not_allowed');
      assert.equal(answer.headers.get('allow'), allow);
    }
  });

  it('answers requests Node cannot parse with the envelope too (400, 431)', async () => {
    const malformed = await rawExchange(base, 'GET /v1/jobs HTTP/1.1\r\nHost: x\r\nThis is not a header\r\n\r\n');
    assert.match(malformed, /^HTTP\/1\.1 400 /);
    assert.match(malformed, /"code":"bad_request"/);
    const oversized = await rawExchange(
      base,
      `GET /v1/jobs HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    assert.match(oversized, /^HTTP\/1\.1 431 /);
    assert.match(oversized, /"code":"headers_too_large"/);
  });

  it('changed nothing: the only job on disk is the one valid submission', async () => {
    // The data dir's job folders, or in Postgres mode the database's job rows.
    assert.deepEqual(await engine.storedJobIds(), acceptedIds);
    const still = await calls.get(`/v1/jobs/${acceptedIds[0]}`);
    assert.equal(still.status, 200);
  });
});
