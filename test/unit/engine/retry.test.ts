// The one retry policy of a run's writes (src/engine/core/retry.ts): what counts as a failure that passes, and how
// withRetry spends its budget. Plain Node; the delays are a few milliseconds.
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DependencyDown, isTransient, withRetry } from '../../../src/engine/core/retry';

const fast = { budgetMs: 200, firstDelayMs: 1, maxDelayMs: 5 };
const errno = (code: string, message = code) => Object.assign(new Error(message), { code });

describe('retry policy of a run’s writes', () => {
  it('tells failures that pass (connections, a database restarting, storage 5xx and throttling) from those that do not', () => {
    for (const error of [
      errno('ECONNREFUSED'),
      errno('ECONNRESET'),
      errno('57P01', 'terminating connection due to administrator command'),
      errno('57P03', 'the database system is starting up'),
      new Error('Connection terminated unexpectedly'),
      new Error('socket hang up'),
      Object.assign(new Error('ServiceUnavailable'), { $metadata: { httpStatusCode: 503 } }),
      Object.assign(new Error('slow down'), { $metadata: { httpStatusCode: 429 } }),
      new Error('wrapped', { cause: errno('ECONNREFUSED') }),
    ])
      assert.equal(isTransient(error), true, String(error));
    for (const error of [
      errno('ENOSPC'),
      errno('EACCES'),
      errno('23505', 'duplicate key value violates unique constraint'),
      Object.assign(new Error('AccessDenied'), { $metadata: { httpStatusCode: 403 } }),
      new TypeError('x is not a function'),
      'a string',
    ])
      assert.equal(isTransient(error), false, String(error));
  });

  it('tries a call that fails for a passing reason again until it succeeds, and says so each time', async () => {
    let calls = 0;
    const retries: number[] = [];
    const value = await withRetry(
      'storing part 3',
      () => (++calls < 4 ? Promise.reject(errno('ECONNREFUSED')) : Promise.resolve('stored')),
      { policy: fast, onRetry: (_error, delay) => retries.push(delay) },
    );
    assert.equal(value, 'stored');
    assert.equal(calls, 4);
    assert.equal(retries.length, 3);
  });

  it('throws a failure that does not pass at once, untouched', async () => {
    let calls = 0;
    const full = errno('ENOSPC');
    await assert.rejects(
      withRetry(
        'writing',
        () => {
          calls++;
          return Promise.reject(full);
        },
        { policy: fast },
      ),
      (error) => error === full,
    );
    assert.equal(calls, 1);
  });

  it('gives up with DependencyDown, naming the call and the last failure, once the budget is spent', async () => {
    let calls = 0;
    await assert.rejects(
      withRetry(
        'writing a log line',
        () => {
          calls++;
          return Promise.reject(new Error('Connection terminated unexpectedly'));
        },
        { policy: { budgetMs: 30, firstDelayMs: 2, maxDelayMs: 4 } },
      ),
      (error) =>
        error instanceof DependencyDown &&
        error.what === 'writing a log line' &&
        /Connection terminated/.test(error.message) &&
        error.triesMade === calls,
    );
    assert.ok(calls > 1, `${calls} tries`);
  });
});
