// Polling follows the spec (4.2): first wait 2-3 s, doubled after each check, capped at 30-60 s, jittered; an unknown
// status keeps the schedule (no hot loop); the deadline ends it with a TimeoutError.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_POLLING, JobFailedError, PollingSchedule, TimeoutError, type JobEvent } from '../../../src/api';
import { jobBody, sendEnvelope, sendErrors, startFaultServer, type FaultServer } from '../../support/fault-server';
import { clientFor, rejectionOf } from '../../support/api-client';

describe('the polling schedule', () => {
  it('defaults to the spec: first 2-3 s, doubling, capped within 30-60 s, whatever the jitter', () => {
    for (const random of [() => 0, () => 0.5, () => 0.999999]) {
      const schedule = new PollingSchedule(DEFAULT_POLLING, random);
      const waits = Array.from({ length: 10 }, () => schedule.next());
      assert.ok(waits[0]! >= 2000 && waits[0]! <= 3000, `first wait ${waits[0]}`);
      for (const wait of waits.slice(6)) assert.ok(wait >= 30_000 && wait <= 60_000, `capped wait ${wait}`);
    }
    const exact = new PollingSchedule({ ...DEFAULT_POLLING, jitter: 0 });
    assert.deepEqual(
      Array.from({ length: 7 }, () => exact.next()),
      [2500, 5000, 10_000, 20_000, 40_000, 40_000, 40_000],
    );
  });

  it('jitters each wait within ±jitter and never above the cap', () => {
    const schedule = new PollingSchedule({ initialMs: 1000, factor: 2, maxMs: 4000, jitter: 0.2 }, () => 0);
    assert.deepEqual(
      Array.from({ length: 4 }, () => schedule.next()),
      [800, 1600, 3200, 3200],
    );
    const high = new PollingSchedule({ initialMs: 1000, factor: 2, maxMs: 4000, jitter: 0.2 }, () => 1);
    assert.deepEqual(
      Array.from({ length: 4 }, () => high.next()),
      [1200, 2400, 4000, 4000],
    );
  });
});

describe('following a job by polling', () => {
  let server: FaultServer;
  before(async () => {
    server = await startFaultServer();
  });
  after(() => server.close());

  it('falls back to polling when the stream is missing (404), with waits that double up to the cap', async () => {
    server.on('GET', '/v1/jobs/p1/stream', (_req, res) =>
      sendErrors(res, 404, [{ code: 'not_found', message: 'no streams here' }]),
    );
    let checks = 0;
    server.on('GET', '/v1/jobs/p1', (_req, res) => {
      checks++;
      sendEnvelope(
        res,
        200,
        jobBody('p1', checks < 7 ? 'processing' : 'succeeded', { progress: checks < 7 ? checks / 10 : 1 }),
      );
    });
    const { client } = clientFor(server, { polling: { initialMs: 100, factor: 2, maxMs: 800, jitter: 0 } });
    const events: JobEvent[] = [];
    for await (const event of client.followJob('p1', { deadline: Date.now() + 20_000 })) events.push(event);
    assert.deepEqual(events[0], {
      type: 'transport',
      mode: 'poll',
      reason: 'the event stream is not available (HTTP 404)',
    });
    const times = server.requestsTo('GET', '/v1/jobs/p1').map((request) => request.at);
    assert.equal(times.length, 7);
    // A gap is the wait plus a check's round trip, which a busy machine stretches by hundreds of ms (gaps of 251
    // and then 201 ms at load 20): only the waits' lower bounds hold at any load, and they show the doubling (a fixed
    // wait fails the second gap). The waits' exact values and the cap are the schedule's, tested above.
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    const expected = [100, 200, 400, 800, 800, 800];
    gaps.forEach((gap, i) =>
      assert.ok(
        gap >= expected[i]! - 15,
        `gap ${i} was ${gap} ms, at least ${expected[i]} expected: ${gaps.join(', ')}`,
      ),
    );
    assert.equal(events.filter((e) => e.type === 'status').length, 7);
    assert.equal(events.at(-1)!.type, 'end');
  });

  it('an unknown status: no crash, no spin, and the deadline ends it with a TimeoutError', async () => {
    server.on('GET', '/v1/jobs/p2', (_req, res) => sendEnvelope(res, 200, jobBody('p2', 'on_hold', { progress: 0.5 })));
    const { client } = clientFor(server, { polling: { initialMs: 50, factor: 2, maxMs: 400, jitter: 0 } });
    const events: JobEvent[] = [];
    const started = Date.now();
    const { error } = await rejectionOf(
      (async () => {
        for await (const event of client.followJob('p2', { transport: 'poll', deadline: Date.now() + 1500 }))
          events.push(event);
      })(),
    );
    const took = Date.now() - started;
    assert.ok(error instanceof TimeoutError, String(error));
    assert.equal(error.kind, 'deadline');
    assert.ok(took >= 1450, `took ${took} ms`);
    // Checks at 0, 50, 150, 350, 750, 1150 (and maybe 1550 ms): a hot loop would make hundreds.
    const checks = server.requestsTo('GET', '/v1/jobs/p2').length;
    assert.ok(checks >= 3 && checks <= 8, `${checks} checks`);
    assert.deepEqual(events, [
      { type: 'transport', mode: 'poll', reason: 'polling was requested' },
      { type: 'status', status: 'on_hold', progress: 0.5 },
    ]);
  });

  it('rides out a few failed checks, then goes on', async () => {
    server.on(
      'GET',
      '/v1/jobs/p3',
      (_req, res) => sendEnvelope(res, 200, jobBody('p3', 'processing')),
      (_req, res) => sendErrors(res, 502, [{ code: 'bad_gateway', message: 'proxy' }]),
      (_req, res) => sendEnvelope(res, 200, jobBody('p3', 'succeeded')),
    );
    const { client, logs } = clientFor(server, { maxRetries: 0, polling: { initialMs: 20, factor: 2, maxMs: 100 } });
    const job = await client.waitForJob('p3', { transport: 'poll', deadline: Date.now() + 5000 });
    assert.equal(job.status, 'succeeded');
    assert.ok(
      logs.some((line) => /warn: job p3: checking the status failed .*HTTP 502/.test(line)),
      logs.join('\n'),
    );

    // A service that stays down is waited for on the polling schedule until the deadline, and said once.
    server.on('GET', '/v1/jobs/p4', (_req, res) => sendErrors(res, 500, [{ code: 'internal', message: 'down' }]));
    const events: JobEvent[] = [];
    const { error } = await rejectionOf(
      client.waitForJob('p4', {
        transport: 'poll',
        deadline: Date.now() + 1000,
        onEvent: (event) => events.push(event),
      }),
    );
    assert.ok(error instanceof TimeoutError, String(error));
    assert.equal(error.kind, 'deadline');
    assert.ok(server.requestsTo('GET', '/v1/jobs/p4').length >= 3);
    const unreachable = events.filter((event) => event.type === 'unreachable');
    assert.equal(unreachable.length, 1);
    assert.match(unreachable[0]!.message, /HTTP 500/);
  });

  it('waitForJob resolves with a succeeded job and rejects a failed one with its error details', async () => {
    server.on('GET', '/v1/jobs/p5', (_req, res) =>
      sendEnvelope(
        res,
        200,
        jobBody('p5', 'succeeded', { outputs: { results: [{ url: 'https://cdn.example.com/a.mp3' }] } }),
      ),
    );
    server.on('GET', '/v1/jobs/p6', (_req, res) =>
      sendEnvelope(
        res,
        200,
        jobBody('p6', 'failed', { error: { code: 'fetch_failed', message: 'The page answered HTTP 403.' } }),
      ),
    );
    const { client } = clientFor(server);
    const seen: string[] = [];
    const job = await client.waitForJob('p5', { transport: 'poll', onEvent: (event) => seen.push(event.type) });
    assert.deepEqual(job.outputs, { results: [{ url: 'https://cdn.example.com/a.mp3' }] });
    assert.deepEqual(seen, ['transport', 'status', 'end']);

    const { error } = await rejectionOf(client.waitForJob('p6', { transport: 'poll' }));
    assert.ok(error instanceof JobFailedError);
    assert.deepEqual(error.jobError, {
      code: 'fetch_failed',
      message: 'The page answered HTTP 403.',
      raw: { code: 'fetch_failed', message: 'The page answered HTTP 403.' },
    });
    assert.equal(error.job.id, 'p6');
    assert.equal(error.code, 'fetch_failed');
    assert.match(error.message, /^Job p6 failed \(fetch_failed\): The page answered HTTP 403\.$/);
  });
});
