// The API key never appears in an error (message, stack, fields, cause, anything inspect shows) or a log line, even
// when a hostile or buggy service echoes it back in every answer.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { inspect } from 'node:util';
import { JobServiceClient, redact, type JobEvent } from '../../../src/api';
import {
  jobBody,
  openSse,
  sendEnvelope,
  sendErrors,
  sendJson,
  startFaultServer,
  type FaultServer,
} from '../../support/fault-server';
import { API_KEY, TEXT, clientFor } from '../../support/api-client';

/** What the service got in the Authorization header, to echo back. */
const echo = (req: IncomingMessage) =>
  `token ${String(req.headers.authorization)} (key ${String(req.headers.authorization).replace(/^Bearer /, '')})`;

describe('the API key stays secret', () => {
  let server: FaultServer;
  before(async () => {
    server = await startFaultServer();
    server.on('GET', '/v1/jobs/k401', (req, res) =>
      sendErrors(res, 401, [{ code: 'unauthorized', message: `Rejected ${echo(req)}` }]),
    );
    server.on('GET', '/v1/jobs/k403', (req, res) =>
      sendErrors(res, 403, [{ code: `forbidden ${echo(req)}`, message: 'no' }]),
    );
    server.on('GET', '/v1/jobs/k404', (req, res) => sendErrors(res, 404, [{ code: 'not_found', message: echo(req) }]));
    server.on('GET', '/v1/jobs/k429', (req, res) =>
      sendErrors(res, 429, [{ code: 'busy', message: echo(req) }], { 'retry-after': '3600' }),
    );
    server.on('GET', '/v1/jobs/k500', (req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`crash while handling ${echo(req)}`);
    });
    server.on('GET', '/v1/jobs/kjson', (req, res) => sendJson(res, 200, `{"data":{"status":"${echo(req)}`));
    server.on('GET', '/v1/jobs/kredirect', (req, res) => {
      res.writeHead(307, {
        location: `https://elsewhere.example/${String(req.headers.authorization).replace(/^Bearer /, '')}?k=1`,
      });
      res.end();
    });
    server.on('POST', '/v1/article-to-audio', (req, res) =>
      sendErrors(res, 422, [{ code: 'validation_failed', message: `bad ${echo(req)}`, field: `text ${echo(req)}` }]),
    );
    server.on('GET', '/v1/jobs/kfail', (req, res) =>
      sendEnvelope(
        res,
        200,
        jobBody('kfail', 'failed', {
          error: { code: 'synthesis_failed', message: echo(req), detail: { header: echo(req) } },
        }),
      ),
    );
    server.on('GET', '/v1/jobs/kfail/stream', (req, res) => {
      const sse = openSse(res);
      sse.send({
        id: '1',
        event: 'log',
        data: { level: 'info', message: `working for ${echo(req)}`, created_at: 'now' },
      });
      sse.send({ id: '2', event: 'status', data: { status: 'failed', output: null, progress: 0 } });
      sse.end();
    });
    server.on('GET', '/v1/jobs/kslow', () => {
      // never answers
    });
  });
  after(() => server.close());

  it('appears in no error, stack, cause, field or log line, whatever goes wrong', async () => {
    const captured: string[] = [];
    const record = (error: unknown) => {
      assert.ok(error instanceof Error, `expected an error, got ${String(error)}`);
      captured.push(error.message, String(error.stack), inspect(error, { depth: 10 }), JSON.stringify(error));
    };
    const keyAsFunction = () => Promise.resolve(API_KEY);
    const { client, logs } = clientFor(server, { apiKey: keyAsFunction, maxRetries: 1, requestTimeoutMs: 300 });
    for (const id of ['k401', 'k403', 'k404', 'k429', 'k500', 'kjson', 'kredirect', 'kslow']) {
      await client.getJob(id).then(() => assert.fail(`${id} should fail`), record);
    }
    await client
      .submitArticle({ model_id: 'article-audio-1-mini', text: TEXT })
      .then(() => assert.fail('submit should fail'), record);
    const events: JobEvent[] = [];
    await client
      .waitForJob('kfail', { onEvent: (event) => events.push(event) })
      .then(() => assert.fail('the job failed'), record);
    captured.push(JSON.stringify(events));
    captured.push(...logs);

    // A key read from a keyring that fails, and a key that cannot be sent.
    let reads = 0;
    const flaky = new JobServiceClient({
      baseUrl: server.url,
      apiKey: () =>
        reads++ === 0 ? Promise.resolve(API_KEY) : Promise.reject(new Error(`keyring locked, last key ${API_KEY}`)),
    });
    await flaky.getJob('k404').then(() => assert.fail('unknown job'), record);
    await flaky.getJob('k404').then(() => assert.fail('no key'), record);
    const multiline = new JobServiceClient({ baseUrl: server.url, apiKey: `${API_KEY}\nX-Injected: 1` });
    await multiline.getJob('x').then(() => assert.fail('bad key'), record);
    // A service that cannot be reached.
    const closed = await startFaultServer();
    await closed.close();
    await clientFor(closed.url, { maxRetries: 0 })
      .client.getJob('x')
      .then(() => assert.fail('unreachable'), record);

    // The service did get the key (so the echoes above carried it)...
    assert.ok(server.requests.some((request) => request.headers.authorization === `Bearer ${API_KEY}`));
    assert.ok(captured.join('\n').includes('[redacted]'), 'and the echoes were masked');
    // ...and nothing the client produced holds it.
    for (const text of captured) assert.ok(!text.includes(API_KEY), `the key leaked into: ${text.slice(0, 400)}`);
    // Part of the key is not enough either: the last 8 characters.
    for (const text of captured)
      assert.ok(!text.includes(API_KEY.slice(-8)), `part of the key leaked into: ${text.slice(0, 400)}`);
  });

  it('redact() masks the given secrets and credential-shaped text', () => {
    assert.equal(redact(`key ${API_KEY} again ${API_KEY}`, [API_KEY]), 'key [redacted] again [redacted]');
    assert.equal(redact('Authorization: Bearer abc.def-123'), 'Authorization: Bearer [redacted]');
    assert.equal(redact('{"api_key":"s3cr3t","x":1}'), '{"api_key":"[redacted]","x":1}');
    assert.equal(redact('see https://user:pa55@example.com/x'), 'see https://[redacted]@example.com/x');
    assert.equal(
      redact('a job about bears, and the bearer of bad news.'),
      'a job about bears, and the bearer of bad news.',
    );
    assert.equal(redact('(HTTP 401: Bearer abcdefgh123).'), '(HTTP 401: Bearer [redacted]).');
    assert.equal(redact('Proxy-Authorization: Basic dXNlcjpwYXNz'), 'Proxy-Authorization: Basic [redacted]');
  });

  it('is masked in job log lines the service streams', async () => {
    const { client } = clientFor(server);
    const events: JobEvent[] = [];
    await client.waitForJob('kfail', { onEvent: (event) => events.push(event) }).catch(() => undefined);
    const log = events.find((event) => event.type === 'log');
    assert.ok(log?.type === 'log');
    assert.equal(log.message, 'working for token Bearer [redacted] (key [redacted])');
  });
});

describe('redact() keeps ordinary words (issue 16)', () => {
  it('leaves the words of real service messages alone', () => {
    for (const message of [
      'Missing or wrong API token: send `Authorization: Bearer <token>`',
      'The job service rejected the API key while reading job 42 (HTTP 401: unauthorized: Missing or wrong API token: send `Authorization: Bearer <token>`).',
      'Bearer authentication is required; the token: expired.',
      'Set the token: paste it into the box.',
      'api_key: missing',
    ]) {
      assert.equal(redact(message), message);
    }
  });

  it('still masks what looks like a credential after the same words', () => {
    assert.equal(redact('token: 9f8e7d6c5b4a'), 'token: [redacted]');
    assert.equal(redact('token=abcdefghijklmnopqrstuvwxyz'), 'token=[redacted]');
    assert.equal(redact('Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.x'), 'Authorization: Bearer [redacted]');
    assert.equal(redact('send `Authorization: Bearer sk-live-12345678`'), 'send `Authorization: Bearer [redacted]`');
  });
});
