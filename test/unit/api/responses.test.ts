// What the service answers becomes a job (leniently: fields vary by state) or one typed error that says what happened.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ArticleAudioError,
  AuthenticationError,
  ConnectionError,
  InvalidResponseError,
  NotFoundError,
  ServerError,
} from '../../../src/api';
import { sendEnvelope, sendErrors, sendJson, startFaultServer, type FaultServer } from '../../support/fault-server';
import { clientFor, rejectionOf } from '../../support/api-client';

describe('job status answers', () => {
  let server: FaultServer;
  before(async () => {
    server = await startFaultServer();
  });
  after(() => server.close());

  it('reads the processing response, which has no id and no progress (spec 2.3 rule 1)', async () => {
    server.on('GET', '/v1/jobs/p1', (_req, res) =>
      sendEnvelope(res, 200, { status: 'processing', created_at: '2025-05-01T10:00:00Z', outputs: null, error: null }),
    );
    const job = await clientFor(server).client.getJob('p1');
    assert.deepEqual(job, {
      id: 'p1',
      status: 'processing',
      createdAt: '2025-05-01T10:00:00Z',
      outputs: null,
      error: null,
    });
  });

  it('reads the succeeded response, which has no created_at, and resolves relative output URLs', async () => {
    server.on('GET', '/v1/jobs/s1', (_req, res) =>
      sendEnvelope(res, 200, {
        id: 's1',
        status: 'succeeded',
        outputs: {
          results: [
            { url: '/v1/jobs/s1/outputs/audio.mp3', content_type: 'audio/mpeg', duration_s: 12.5 },
            { url: 'https://cdn.example.com/t.vtt', content_type: 42 },
            { no_url: true },
          ],
        },
        error: null,
      }),
    );
    const job = await clientFor(server).client.getJob('s1');
    assert.equal(job.status, 'succeeded');
    assert.equal(job.progress, 1, 'the spec: progress is 1.0 when the job has succeeded');
    assert.equal(job.createdAt, undefined);
    assert.deepEqual(job.outputs, {
      results: [
        { url: `${server.url}/v1/jobs/s1/outputs/audio.mp3`, contentType: 'audio/mpeg', durationS: 12.5 },
        { url: 'https://cdn.example.com/t.vtt' },
      ],
    });
  });

  it('ignores extra fields, drops optional fields of the wrong type, and keeps an unknown status', async () => {
    server.on('GET', '/v1/jobs/x1', (_req, res) =>
      sendEnvelope(
        res,
        200,
        { id: 'x1', status: 'paused', progress: 'half', created_at: 7, outputs: 'soon', error: null, priority: 3 },
        { 'x-request-id': 'req-1' },
      ),
    );
    const job = await clientFor(server).client.getJob('x1');
    assert.deepEqual(job, { id: 'x1', status: 'paused', outputs: null, error: null });
  });

  it('reads a failed job whose error is an object, or only a string', async () => {
    server.on('GET', '/v1/jobs/f1', (_req, res) =>
      sendEnvelope(res, 200, {
        id: 'f1',
        status: 'failed',
        outputs: null,
        error: { code: 'fetch_failed', message: 'The page answered 403.', hint: 'x' },
      }),
    );
    server.on('GET', '/v1/jobs/f2', (_req, res) =>
      sendEnvelope(res, 200, { id: 'f2', status: 'failed', outputs: null, error: 'boom' }),
    );
    const { client } = clientFor(server);
    assert.deepEqual((await client.getJob('f1')).error, {
      code: 'fetch_failed',
      message: 'The page answered 403.',
      raw: { code: 'fetch_failed', message: 'The page answered 403.', hint: 'x' },
    });
    assert.deepEqual((await client.getJob('f2')).error, { message: 'boom', raw: 'boom' });
  });

  it('turns truncated JSON into an InvalidResponseError, without retrying', async () => {
    server.on('GET', '/v1/jobs/t1', (_req, res) => sendJson(res, 200, '{"data":{"id":"t1","status":"proc'));
    const { error } = await rejectionOf(clientFor(server).client.getJob('t1'));
    assert.ok(error instanceof InvalidResponseError, String(error));
    assert.equal(error.status, 200);
    assert.match(error.message, /reading job t1 .*not valid JSON/);
    assert.match(error.message, /the body is not valid JSON/);
    assert.equal(server.requestsTo('GET', '/v1/jobs/t1').length, 1);
  });

  it('says when the address answers with a web page, and when a job has no status', async () => {
    server.on('GET', '/v1/jobs/h1', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Sign in</body></html>');
    });
    server.on('GET', '/v1/jobs/n1', (_req, res) => sendEnvelope(res, 200, { id: 'n1', progress: 0.5 }));
    server.on('GET', '/v1/jobs/e1', (_req, res) => sendJson(res, 200, { data: null, errors: null }));
    const { client } = clientFor(server);
    const page = (await rejectionOf(client.getJob('h1'))).error;
    assert.ok(page instanceof InvalidResponseError);
    assert.match(page.message, /web page/);
    const noStatus = (await rejectionOf(client.getJob('n1'))).error;
    assert.ok(noStatus instanceof InvalidResponseError);
    assert.match(noStatus.message, /no status/);
    assert.ok((await rejectionOf(client.getJob('e1'))).error instanceof InvalidResponseError);
  });
});

describe('failures by status', () => {
  let server: FaultServer;
  before(async () => {
    server = await startFaultServer();
  });
  after(() => server.close());

  it('401 and 403 are AuthenticationErrors that say to set the key, and are not retried', async () => {
    server.on('GET', '/v1/jobs/a401', (_req, res) =>
      sendErrors(res, 401, [{ code: 'unauthorized', message: 'Missing or wrong token.' }]),
    );
    server.on('GET', '/v1/jobs/a403', (_req, res) =>
      sendErrors(res, 403, [{ code: 'forbidden', message: 'Not yours.' }]),
    );
    const { client } = clientFor(server);
    const e401 = (await rejectionOf(client.getJob('a401'))).error;
    assert.ok(e401 instanceof AuthenticationError);
    assert.equal(e401.status, 401);
    assert.equal(e401.code, 'unauthorized');
    assert.match(e401.message, /rejected the API key .*\(HTTP 401: unauthorized: Missing or wrong token\.\)\.$/);
    const e403 = (await rejectionOf(client.getJob('a403'))).error;
    assert.ok(e403 instanceof AuthenticationError);
    assert.equal(e403.status, 403);
    assert.equal(server.requestsTo('GET', '/v1/jobs/a401').length, 1);
    assert.equal(server.requestsTo('GET', '/v1/jobs/a403').length, 1);
  });

  it('a missing API key fails before anything is sent', async () => {
    const before = server.requests.length;
    const { client } = clientFor(server, { apiKey: () => Promise.resolve(undefined) });
    const { error } = await rejectionOf(client.getJob('j1'));
    assert.ok(error instanceof AuthenticationError);
    assert.equal(error.code, 'missing_api_key');
    assert.match(error.message, /^No API key is set for the job service at http:\/\/127\.0\.0\.1:\d+\.$/);
    const blank = (await rejectionOf(clientFor(server, { apiKey: '  ' }).client.getJob('j1'))).error;
    assert.ok(blank instanceof AuthenticationError);
    assert.equal(server.requests.length, before);
  });

  it('404 is a NotFoundError that names the job', async () => {
    server.on('GET', '/v1/jobs/gone', (_req, res) =>
      sendErrors(res, 404, [{ code: 'not_found', message: 'No such job.' }], { 'x-request-id': 'req-404' }),
    );
    const { error } = await rejectionOf(clientFor(server).client.getJob('gone'));
    assert.ok(error instanceof NotFoundError);
    assert.equal(error.requestId, 'req-404');
    assert.match(error.message, /^The job service does not know job gone \(HTTP 404: not_found: No such job\.\)\.$/);
  });

  it('5xx is a ServerError after the retries, with what to do', async () => {
    server.on('GET', '/v1/jobs/down', (_req, res) =>
      sendErrors(res, 500, [{ code: 'internal', message: 'Something broke.' }]),
    );
    const { error } = await rejectionOf(clientFor(server, { maxRetries: 2 }).client.getJob('down'));
    assert.ok(error instanceof ServerError);
    assert.equal(error.status, 500);
    assert.match(
      error.message,
      /^The job service failed while reading job down \(HTTP 500: internal: Something broke\.\)\.$/,
    );
    assert.equal(server.requestsTo('GET', '/v1/jobs/down').length, 3);
  });

  it('a redirect is an error that says where the service moved', async () => {
    server.on('GET', '/v1/jobs/moved', (_req, res) => {
      res.writeHead(301, { location: 'https://audio.example.com/v1/jobs/moved' });
      res.end();
    });
    const { error } = await rejectionOf(clientFor(server).client.getJob('moved'));
    assert.ok(error instanceof ArticleAudioError);
    assert.equal(error.code, 'redirect');
    assert.match(error.message, /redirected .* to https:\/\/audio\.example\.com\/v1\/jobs\/moved \(HTTP 301\)\.$/);
  });

  it('a refused connection is a ConnectionError that names the address, retried and then reported', async () => {
    const closed = await startFaultServer();
    const url = closed.url;
    await closed.close();
    const { client, logs } = clientFor(url, { maxRetries: 1 });
    const { error } = await rejectionOf(client.getJob('j1'));
    assert.ok(error instanceof ConnectionError, String(error));
    assert.equal(error.code, 'ECONNREFUSED');
    assert.equal(error.mayHaveReachedService, false);
    assert.match(
      error.message,
      new RegExp(`^Could not reach the job service at ${url.replace(/\./g, '\\.')} .*\\(connection refused\\)\\.$`),
    );
    assert.equal(logs.filter((line) => line.startsWith('warn: GET')).length, 1, 'one retry was logged');
  });
});
