// Everything is cancellable with an AbortSignal (requests, streams, every wait) and bounded by the caller's deadline.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { TimeoutError } from '../../../src/api';
import {
  jobBody,
  openSse,
  sendEnvelope,
  sendErrors,
  startFaultServer,
  whenClosed,
  type FaultServer,
} from '../../support/fault-server';
import { clientFor, rejectionOf } from '../../support/api-client';

describe('cancelling and deadlines', () => {
  let server: FaultServer;
  before(async () => {
    server = await startFaultServer();
  });
  after(() => server.close());

  it('an abort ends a pending waitForJob promptly, in the middle of a polling wait', async () => {
    const controller = new AbortController();
    server.on('GET', '/v1/jobs/a1', (_req, res) => {
      sendEnvelope(res, 200, jobBody('a1', 'processing'));
      // Aborted once the first check is answered: during the 10 s wait before the next one.
      res.once('finish', () => setImmediate(() => controller.abort()));
    });
    const { client } = clientFor(server, { polling: { initialMs: 10_000, factor: 2, maxMs: 20_000 } });
    const pending = client.waitForJob('a1', { transport: 'poll', signal: controller.signal });
    const { error } = await rejectionOf(pending);
    assert.equal((error as Error).name, 'AbortError');
    assert.equal(server.requestsTo('GET', '/v1/jobs/a1').length, 1);
  });

  it("an abort ends a stream being read, closes the connection, and rejects with the signal's reason", async () => {
    let response: ServerResponse | undefined;
    server.on('GET', '/v1/jobs/a2/stream', (_req, res) => {
      response = res;
      openSse(res).send({ id: '1', event: 'status', data: { status: 'processing', output: null, progress: 0.1 } });
    });
    const { client } = clientFor(server);
    const controller = new AbortController();
    const reason = new Error('the user closed the job');
    const pending = client.waitForJob('a2', {
      signal: controller.signal,
      onEvent: (event) => event.type === 'status' && controller.abort(reason),
    });
    const { error } = await rejectionOf(pending);
    assert.equal(error, reason);
    await whenClosed(response!, 2000);
    assert.ok(response!.destroyed, 'the stream connection was closed');
  });

  it('an abort ends a retry wait (Retry-After) at once', async () => {
    server.on('GET', '/v1/jobs/a3', (_req, res) =>
      sendErrors(res, 503, [{ code: 'unavailable', message: 'later' }], { 'retry-after': '30' }),
    );
    const { client } = clientFor(server);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    const { error } = await rejectionOf(client.getJob('a3', { signal: controller.signal }));
    assert.equal((error as Error).name, 'AbortError');
  });

  it('an already aborted signal sends nothing', async () => {
    const before = server.requests.length;
    const { error } = await rejectionOf(clientFor(server).client.getJob('a4', { signal: AbortSignal.abort() }));
    assert.equal((error as Error).name, 'AbortError');
    assert.equal(server.requests.length, before);
  });

  it('a slow server past the deadline: TimeoutError at the deadline, not at the request timeout', async () => {
    server.on('GET', '/v1/jobs/a5', () => {
      // never answers
    });
    const { client } = clientFor(server, { requestTimeoutMs: 30_000 });
    const deadline = Date.now() + 400;
    const { error } = await rejectionOf(client.getJob('a5', { deadline }));
    // Not before the deadline (measured against the deadline itself: a busy machine may start the clock late).
    const early = deadline - Date.now();
    assert.ok(error instanceof TimeoutError, String(error));
    assert.equal(error.kind, 'deadline');
    assert.match(error.message, /Stopped reading job a5: its time limit of .* passed/);
    assert.ok(early <= 2, `ended ${early} ms before the deadline`);
  });

  it('a request that takes longer than requestTimeoutMs is retried, then fails with a TimeoutError', async () => {
    server.on('GET', '/v1/jobs/a6', () => {
      // never answers
    });
    const { client } = clientFor(server, { requestTimeoutMs: 200, maxRetries: 1 });
    const { error, ms } = await rejectionOf(client.getJob('a6'));
    assert.ok(error instanceof TimeoutError, String(error));
    assert.equal(error.kind, 'request');
    assert.match(error.message, /did not answer within 200 ms while reading job a6/);
    assert.equal(server.requestsTo('GET', '/v1/jobs/a6').length, 2);
    assert.ok(ms >= 380, `took ${ms} ms`);
  });

  it('a timed-out request is not tried again when another attempt would end past the retry budget', async () => {
    server.on('GET', '/v1/jobs/a9', () => {
      // never answers
    });
    // One attempt takes 300 ms; a second would end at 600 ms or later, past the 500 ms budget, so the user hears of
    // the failure after one attempt whatever the retry count allows. The count cannot change with the machine's load:
    // a slower attempt only ends later.
    const { client } = clientFor(server, { requestTimeoutMs: 300, maxRetries: 5, timeoutRetryBudgetMs: 500 });
    const { error } = await rejectionOf(client.getJob('a9'));
    assert.ok(error instanceof TimeoutError, String(error));
    assert.equal(error.kind, 'request');
    assert.equal(server.requestsTo('GET', '/v1/jobs/a9').length, 1);
  });

  it('a key store that never answers is bounded by the request timeout', async () => {
    const before = server.requests.length;
    const { client } = clientFor(server, {
      apiKey: () => new Promise<string>(() => undefined),
      requestTimeoutMs: 200,
      maxRetries: 0,
    });
    const { error, ms } = await rejectionOf(client.getJob('a8'));
    assert.ok(error instanceof TimeoutError, String(error));
    assert.equal(error.kind, 'request');
    assert.ok(ms >= 180, `took ${ms} ms`);
    assert.equal(server.requests.length, before);
  });

  it('a deadline already past fails at once', async () => {
    const { error } = await rejectionOf(clientFor(server).client.getJob('a7', { deadline: Date.now() - 1 }));
    assert.ok(error instanceof TimeoutError);
  });
});
