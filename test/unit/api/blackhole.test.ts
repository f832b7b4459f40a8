// A service host that drops packets (no answer to a connection attempt, not even a reset), made on loopback by
// test/support/blackhole-server.ts. The client's request timeout is left at its default (30 s), as in the extension,
// so what ends an attempt is the connection's own limit: the error must say the service could not be reached (the
// "Cannot reach" notice), not that it stopped answering, and must count as never sent, so that even a submission
// is safe to repeat. How long it takes is measured in bench/service-down.ts, not here.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConnectionError } from '../../../src/api';
import { type Blackhole, startBlackhole } from '../../support/blackhole-server';
import { TEXT, clientFor, rejectionOf } from '../../support/api-client';

const UNREACHABLE =
  /^Could not reach the job service at http:\/\/127\.0\.0\.1:\d+ while .+ \(connecting timed out\)\.$/;

// Concurrently: each test waits out a connection attempt (several seconds, no CPU), and the blackhole drops them all.
describe('a service host that drops packets', { concurrency: true }, () => {
  let hole: Blackhole;
  before(async () => {
    hole = await startBlackhole();
  });
  after(() => hole.close());

  it('a request fails as a connection error that never reached the service', async () => {
    const { client } = clientFor(hole.url, { requestTimeoutMs: 30_000, maxRetries: 0 });
    const { error } = await rejectionOf(client.getJob('j1'));
    assert.ok(error instanceof ConnectionError, `a ConnectionError, not ${String(error)}`);
    assert.equal(error.code, 'UND_ERR_CONNECT_TIMEOUT');
    assert.equal(error.mayHaveReachedService, false);
    assert.match(error.message, UNREACHABLE);
    assert.match(error.message, /while reading job j1/);
  });

  it('a submission fails the same way', async () => {
    const { client } = clientFor(hole.url, { requestTimeoutMs: 30_000, maxRetries: 0 });
    const { error } = await rejectionOf(client.submitArticle({ model_id: 'article-audio-1-mini', text: TEXT }));
    assert.ok(error instanceof ConnectionError, `a ConnectionError, not ${String(error)}`);
    assert.match(error.message, UNREACHABLE);
    assert.match(error.message, /while submitting the article/);
    // Never sent, so repeating it cannot make a second job, with or without an Idempotency-Key.
    assert.equal(error.mayHaveReachedService, false);
  });

  it('following a job tells the consumer once that the service cannot be reached, and goes on', async () => {
    const { client } = clientFor(hole.url, { requestTimeoutMs: 30_000 });
    const stop = new AbortController();
    const events = [];
    try {
      for await (const event of client.followJob('j1', { signal: stop.signal })) {
        events.push(event);
        if (event.type === 'unreachable') {
          assert.match(event.message, UNREACHABLE);
          assert.match(event.message, /while opening the event stream of job j1/);
          assert.ok(event.retryInMs > 0, 'it says when it tries again');
          stop.abort();
        }
      }
    } catch (error) {
      if (!stop.signal.aborted) throw error;
    }
    assert.deepEqual(
      events.map((event) => event.type),
      ['unreachable'],
    );
  });
});
