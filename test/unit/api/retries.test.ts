// Retries: what is safe to repeat is repeated (connection errors, 408, 429, 5xx), Retry-After is honoured up to a cap,
// and a submission is repeated only with the same Idempotency-Key, so that a retried POST never makes a second job.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RateLimitError, ServerError, ValidationError, parseRetryAfter } from '../../../src/api';
import { jobBody, sendEnvelope, sendErrors, startFaultServer, type FaultServer } from '../../support/fault-server';
import { TEXT, clientFor, rejectionOf } from '../../support/api-client';

const accepted = (id: string) => ({ job_id: id, links: { self: `/v1/jobs/${id}`, stream: `/v1/jobs/${id}/stream` } });

describe('retries', () => {
  let server: FaultServer;
  before(async () => {
    server = await startFaultServer();
  });
  after(() => server.close());

  it('500 then 200: the second answer is used', async () => {
    server.on(
      'GET',
      '/v1/jobs/r1',
      (_req, res) => sendErrors(res, 500, [{ code: 'internal', message: 'oops' }]),
      (_req, res) => sendEnvelope(res, 200, jobBody('r1', 'queued')),
    );
    const job = await clientFor(server).client.getJob('r1');
    assert.equal(job.status, 'queued');
    assert.equal(server.requestsTo('GET', '/v1/jobs/r1').length, 2);
  });

  it('retries a submission after 503 and after a cut connection with the same Idempotency-Key', async () => {
    server.on(
      'POST',
      '/v1/article-to-audio',
      (_req, res) => sendErrors(res, 503, [{ code: 'unavailable', message: 'restarting' }]),
      (_req, res) => void res.socket?.destroy(),
      (_req, res) => sendEnvelope(res, 202, accepted('r2')),
    );
    const before = server.requestsTo('POST', '/v1/article-to-audio').length;
    const result = await clientFor(server).client.submitArticle({ model_id: 'article-audio-1-mini', text: TEXT });
    assert.equal(result.jobId, 'r2');
    const posts = server.requestsTo('POST', '/v1/article-to-audio').slice(before);
    assert.equal(posts.length, 3);
    const keys = posts.map((post) => post.headers['idempotency-key']);
    assert.match(String(keys[0]), /^[0-9a-f-]{36}$/, 'a key is generated');
    assert.deepEqual(keys, [keys[0], keys[0], keys[0]], 'one key for every attempt of one submission');
    assert.deepEqual(
      posts.map((post) => post.body),
      [posts[0]!.body, posts[0]!.body, posts[0]!.body],
    );

    // Another submission gets another key.
    await clientFor(server).client.submitArticle({ model_id: 'article-audio-1-mini', text: TEXT });
    assert.notEqual(server.requestsTo('POST', '/v1/article-to-audio').at(-1)!.headers['idempotency-key'], keys[0]);
  });

  it('retries 409 (the same Idempotency-Key still in progress) with the same key', async () => {
    server.on(
      'POST',
      '/v1/article-to-audio',
      (_req, res) => sendErrors(res, 409, [{ code: 'conflict', message: 'A request with this key is in progress.' }]),
      (_req, res) => sendEnvelope(res, 202, accepted('r409')),
    );
    const before = server.requestsTo('POST', '/v1/article-to-audio').length;
    const result = await clientFor(server).client.submitArticle({ model_id: 'article-audio-1-mini', text: TEXT });
    assert.equal(result.jobId, 'r409');
    const posts = server.requestsTo('POST', '/v1/article-to-audio').slice(before);
    assert.equal(posts.length, 2);
    assert.equal(posts[1]!.headers['idempotency-key'], posts[0]!.headers['idempotency-key']);
  });

  it("sends the caller's Idempotency-Key as given", async () => {
    server.on('POST', '/v1/article-to-audio', (_req, res) => sendEnvelope(res, 202, accepted('r3')));
    await clientFor(server).client.submitArticle(
      { model_id: 'article-audio-1-mini', text: TEXT },
      { idempotencyKey: 'doc-42-v1' },
    );
    assert.equal(server.requestsTo('POST', '/v1/article-to-audio').at(-1)!.headers['idempotency-key'], 'doc-42-v1');
    const { error } = await rejectionOf(
      clientFor(server).client.submitArticle(
        { model_id: 'article-audio-1-mini', text: TEXT },
        { idempotencyKey: 'has space' },
      ),
    );
    assert.ok(error instanceof ValidationError);
    assert.equal(error.fields[0]!.field, 'idempotencyKey');
  });

  it('does not retry a submission without an Idempotency-Key', async () => {
    server.on(
      'POST',
      '/v1/article-to-audio',
      (_req, res) => sendErrors(res, 500, [{ code: 'internal', message: 'oops' }]),
      (_req, res) => sendEnvelope(res, 202, accepted('r4')),
    );
    const before = server.requestsTo('POST', '/v1/article-to-audio').length;
    const { error } = await rejectionOf(
      clientFor(server).client.submitArticle(
        { model_id: 'article-audio-1-mini', text: TEXT },
        { idempotencyKey: null },
      ),
    );
    assert.ok(error instanceof ServerError);
    const posts = server.requestsTo('POST', '/v1/article-to-audio').slice(before);
    assert.equal(posts.length, 1);
    assert.equal(posts[0]!.headers['idempotency-key'], undefined);
  });

  it('does not retry what a retry cannot fix (400, 404, 422)', async () => {
    server.on('GET', '/v1/jobs/r5', (_req, res) => sendErrors(res, 400, [{ code: 'invalid_json', message: 'bad' }]));
    const { client } = clientFor(server);
    assert.ok((await rejectionOf(client.getJob('r5'))).error instanceof ValidationError);
    assert.equal(server.requestsTo('GET', '/v1/jobs/r5').length, 1);
  });

  it('retries 408 and stops after maxRetries', async () => {
    server.on('GET', '/v1/jobs/r6', (_req, res) => sendErrors(res, 408, [{ code: 'timeout', message: 'slow' }]));
    await rejectionOf(clientFor(server, { maxRetries: 3 }).client.getJob('r6'));
    assert.equal(server.requestsTo('GET', '/v1/jobs/r6').length, 4);
    await rejectionOf(clientFor(server, { maxRetries: 0 }).client.getJob('r6'));
    assert.equal(server.requestsTo('GET', '/v1/jobs/r6').length, 5);
  });

  it('429 with Retry-After: waits as long as the service asked', async () => {
    server.on(
      'GET',
      '/v1/jobs/r7',
      (_req, res) => sendErrors(res, 429, [{ code: 'too_many_jobs', message: 'busy' }], { 'retry-after': '1' }),
      (_req, res) => sendEnvelope(res, 200, jobBody('r7', 'processing')),
    );
    // The client's own backoff is 20 ms: only the header can make it wait a second.
    const job = await clientFor(server).client.getJob('r7');
    assert.equal(job.status, 'processing');
    const [first, second] = server.requestsTo('GET', '/v1/jobs/r7');
    assert.ok(second!.at - first!.at >= 950, `waited ${second!.at - first!.at} ms`);
  });

  it('429 with a Retry-After beyond the cap: a RateLimitError at once that says when to retry', async () => {
    server.on('GET', '/v1/jobs/r8', (_req, res) =>
      sendErrors(res, 429, [{ code: 'too_many_jobs', message: 'busy' }], { 'retry-after': '3600' }),
    );
    const { client } = clientFor(server, { retryAfterCapMs: 60_000 });
    const { error } = await rejectionOf(client.getJob('r8', { signal: AbortSignal.timeout(10_000) }));
    assert.ok(error instanceof RateLimitError, String(error));
    assert.equal(error.retryAfterMs, 3_600_000);
    assert.match(error.message, /limiting requests \(HTTP 429: too_many_jobs: busy\)\. It asked to wait 1 h\.$/);
    assert.equal(server.requestsTo('GET', '/v1/jobs/r8').length, 1);

    // The cap is the caller's: 2 s is too long for a 1 s cap.
    server.on('GET', '/v1/jobs/r9', (_req, res) =>
      sendErrors(res, 503, [{ code: 'unavailable', message: 'x' }], { 'retry-after': '2' }),
    );
    const capped = await rejectionOf(clientFor(server, { retryAfterCapMs: 1000 }).client.getJob('r9'));
    assert.ok(capped.error instanceof ServerError);
    assert.equal(capped.error.retryAfterMs, 2000);
    assert.equal(server.requestsTo('GET', '/v1/jobs/r9').length, 1);
  });

  it('does not start a retry wait that would pass the deadline', async () => {
    server.on('GET', '/v1/jobs/r10', (_req, res) =>
      sendErrors(res, 503, [{ code: 'unavailable', message: 'x' }], { 'retry-after': '5' }),
    );
    const { error } = await rejectionOf(clientFor(server).client.getJob('r10', { deadline: Date.now() + 1000 }));
    assert.ok(error instanceof ServerError, String(error));
    assert.equal(server.requestsTo('GET', '/v1/jobs/r10').length, 1, 'no retry wait past the deadline');
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds, milliseconds and HTTP dates', () => {
    assert.equal(parseRetryAfter({ 'retry-after': '2' }), 2000);
    assert.equal(parseRetryAfter({ 'retry-after': '0.5' }), 500);
    assert.equal(parseRetryAfter({ 'retry-after-ms': '250', 'retry-after': '9' }), 250);
    const now = Date.parse('2025-01-01T00:00:00Z');
    assert.equal(parseRetryAfter({ 'retry-after': 'Wed, 01 Jan 2025 00:00:30 GMT' }, now), 30_000);
    assert.equal(parseRetryAfter({ 'retry-after': 'soon' }), undefined);
    assert.equal(parseRetryAfter({}), undefined);
  });
});
