// Following a job by its event stream: resume with Last-Event-ID after a cut, no event twice (with ids or without),
// the service's retry hint, stop at `end` or a terminal status, reconnect a silent stream, never spin.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import {
  AuthenticationError,
  NotFoundError,
  TimeoutError,
  type JobEvent,
  type JobServiceClient,
} from '../../../src/api';
import {
  jobBody,
  openSse,
  sendEnvelope,
  sendErrors,
  startFaultServer,
  whenClosed,
  type FaultServer,
  type SseEvent,
} from '../../support/fault-server';
import { clientFor, rejectionOf } from '../../support/api-client';

async function collect(iterable: AsyncIterable<JobEvent>): Promise<JobEvent[]> {
  const events: JobEvent[] = [];
  for await (const event of iterable) {
    events.push(event);
    assert.ok(events.length < 500, 'a bounded number of events');
  }
  return events;
}

const logsOf = (events: JobEvent[]) => events.flatMap((e) => (e.type === 'log' ? [e.message] : []));
const statusesOf = (events: JobEvent[]) =>
  events.flatMap((e) =>
    e.type === 'status' ? [`${e.status}${e.progress === undefined ? '' : `@${e.progress}`}`] : [],
  );
const typesOf = (events: JobEvent[]) => events.map((e) => (e.type === 'transport' ? `transport:${e.mode}` : e.type));

const status = (s: string, progress: number, id?: string): SseEvent => ({
  id,
  event: 'status',
  data: { status: s, output: null, progress },
});
const log = (message: string, id?: string): SseEvent => ({
  id,
  event: 'log',
  data: { level: 'info', message, created_at: '2025-01-01T00:00:00Z' },
});

/** A job whose status endpoint says `succeeded` with one MP3. */
function succeededJob(server: FaultServer, id: string): void {
  server.on('GET', `/v1/jobs/${id}`, (_req, res) =>
    sendEnvelope(
      res,
      200,
      jobBody(id, 'succeeded', {
        outputs: { results: [{ url: `/v1/jobs/${id}/outputs/audio.mp3`, content_type: 'audio/mpeg' }] },
      }),
    ),
  );
}

describe('following a job by its event stream', () => {
  let server: FaultServer;
  let client: JobServiceClient;
  before(async () => {
    server = await startFaultServer();
    client = clientFor(server).client;
  });
  after(() => server.close());

  it('resumes a stream cut mid-event with Last-Event-ID, without duplicates or half events', async () => {
    succeededJob(server, 's1');
    const history: SseEvent[] = [
      status('processing', 0.1, '1'),
      log('one', '2'),
      log('two', '3'),
      status('succeeded', 1, '4'),
      { id: '5', event: 'end', data: 'succeeded' },
    ];
    server.on(
      'GET',
      '/v1/jobs/s1/stream',
      (_req, res) => {
        const sse = openSse(res);
        sse.send(history[0]!);
        sse.send(history[1]!);
        sse.raw('id: 3\nevent: log\ndata: {"level":"info","mess'); // cut in the middle of event 3
        setTimeout(() => sse.drop(), 50);
      },
      (req, res) => {
        const after = Number(req.headers['last-event-id'] ?? 0);
        const sse = openSse(res);
        for (const event of history.filter((e) => Number(e.id) > after)) sse.send(event);
        sse.end();
      },
    );
    const events = await collect(client.followJob('s1'));
    const streams = server.requestsTo('GET', '/v1/jobs/s1/stream');
    assert.equal(streams.length, 2);
    assert.equal(streams[0]!.headers['last-event-id'], undefined);
    assert.equal(streams[1]!.headers['last-event-id'], '2');
    assert.deepEqual(logsOf(events), ['one', 'two']);
    assert.deepEqual(statusesOf(events), ['processing@0.1', 'succeeded@1']);
    assert.deepEqual(typesOf(events), [
      'transport:stream',
      'status',
      'log',
      'transport:stream',
      'log',
      'status',
      'end',
    ]);
    const last = events.at(-1)!;
    assert.ok(last.type === 'end');
    assert.deepEqual(last.job.outputs?.results, [
      { url: `${server.url}/v1/jobs/s1/outputs/audio.mp3`, contentType: 'audio/mpeg' },
    ]);
  });

  it('does not repeat events when a service ignores Last-Event-ID and replays them', async () => {
    succeededJob(server, 's2');
    server.on(
      'GET',
      '/v1/jobs/s2/stream',
      (_req, res) => {
        const sse = openSse(res);
        sse.send(status('processing', 0.2, 'a'));
        sse.send(log('one', 'b'));
        sse.end();
      },
      (_req, res) => {
        const sse = openSse(res);
        for (const event of [
          status('processing', 0.2, 'a'),
          log('one', 'b'),
          log('two', 'c'),
          { id: 'd', event: 'end', data: 'succeeded' },
        ])
          sse.send(event);
        sse.end();
      },
    );
    const events = await collect(client.followJob('s2'));
    assert.deepEqual(logsOf(events), ['one', 'two']);
    assert.deepEqual(statusesOf(events), ['processing@0.2', 'succeeded@1']);
  });

  it('events without ids: a replay from the start is skipped, a continuation is kept', async () => {
    succeededJob(server, 's3');
    const all = [
      status('processing', 0.5),
      log('one'),
      log('two'),
      status('succeeded', 1),
      { event: 'end', data: 'succeeded' },
    ];
    server.on(
      'GET',
      '/v1/jobs/s3/stream',
      (_req, res) => {
        const sse = openSse(res);
        sse.send(all[0]!);
        sse.send(all[1]!);
        sse.end();
      },
      (_req, res) => {
        const sse = openSse(res);
        for (const event of all) sse.send(event);
        sse.end();
      },
    );
    const replayed = await collect(client.followJob('s3'));
    assert.equal(server.requestsTo('GET', '/v1/jobs/s3/stream').length, 2);
    assert.equal(server.requestsTo('GET', '/v1/jobs/s3/stream')[1]!.headers['last-event-id'], undefined);
    assert.deepEqual(logsOf(replayed), ['one', 'two']);
    assert.deepEqual(statusesOf(replayed), ['processing@0.5', 'succeeded@1']);

    // A service that carries on where it stopped instead: nothing may be dropped.
    succeededJob(server, 's4');
    server.on(
      'GET',
      '/v1/jobs/s4/stream',
      (_req, res) => {
        const sse = openSse(res);
        sse.send(all[0]!);
        sse.send(all[1]!);
        sse.end();
      },
      (_req, res) => {
        const sse = openSse(res);
        for (const event of all.slice(2)) sse.send(event);
        sse.end();
      },
    );
    const continued = await collect(client.followJob('s4'));
    assert.deepEqual(logsOf(continued), ['one', 'two']);
  });

  it("waits the service's retry: hint before reconnecting", async () => {
    succeededJob(server, 's5');
    let firstClosedAt = 0;
    server.on(
      'GET',
      '/v1/jobs/s5/stream',
      (_req, res) => {
        const sse = openSse(res);
        sse.send({ retry: 700, id: '1', event: 'status', data: { status: 'processing', output: null, progress: 0 } });
        sse.end();
        firstClosedAt = Date.now();
      },
      (_req, res) => {
        const sse = openSse(res);
        sse.send({ id: '2', event: 'end', data: 'succeeded' });
        sse.end();
      },
    );
    await collect(client.followJob('s5'));
    const second = server.requestsTo('GET', '/v1/jobs/s5/stream')[1]!;
    // Without the hint the client would reconnect after its own 20 ms.
    assert.ok(second.at - firstClosedAt >= 650, `reconnected after ${second.at - firstClosedAt} ms`);
  });

  it('stops at `end` even when the service keeps the stream open, and closes it', async () => {
    succeededJob(server, 's6');
    let response: ServerResponse | undefined;
    server.on('GET', '/v1/jobs/s6/stream', (_req, res) => {
      response = res;
      const sse = openSse(res);
      sse.send(status('processing', 0.3, '1'));
      sse.send({ id: '2', event: 'end', data: 'succeeded' });
      const beat = setInterval(() => sse.comment(), 50);
      res.on('close', () => clearInterval(beat));
    });
    const events = await collect(client.followJob('s6'));
    assert.equal(events.at(-1)!.type, 'end');
    await whenClosed(response!, 2000);
    assert.ok(response!.destroyed || response!.writableEnded, 'the client closed the stream');
  });

  it('stops at a terminal status even when no `end` ever comes', async () => {
    server.on('GET', '/v1/jobs/s7', (_req, res) =>
      sendEnvelope(res, 200, jobBody('s7', 'failed', { error: { code: 'too_short', message: 'Too short.' } })),
    );
    server.on('GET', '/v1/jobs/s7/stream', (_req, res) => {
      const sse = openSse(res);
      sse.send(status('processing', 0.3, '1'));
      sse.send(status('failed', 0.3, '2'));
      const beat = setInterval(() => sse.comment(), 50);
      res.on('close', () => clearInterval(beat));
    });
    const events = await collect(client.followJob('s7', { deadline: Date.now() + 5000 }));
    const end = events.at(-1)!;
    assert.ok(end.type === 'end');
    assert.equal(end.job.status, 'failed');
    assert.deepEqual(end.job.error, {
      code: 'too_short',
      message: 'Too short.',
      raw: { code: 'too_short', message: 'Too short.' },
    });
  });

  it('reads on after a terminal status for the result that follows it, then stops without `end`', async () => {
    succeededJob(server, 's17');
    server.on('GET', '/v1/jobs/s17/stream', (_req, res) => {
      const sse = openSse(res);
      sse.send(status('succeeded', 1, '1'));
      sse.send({
        id: '2',
        event: 'result',
        data: { images: [], results: [{ url: '/v1/jobs/s17/outputs/audio.mp3' }] },
      });
      const beat = setInterval(() => sse.comment(), 50);
      res.on('close', () => clearInterval(beat));
    });
    const events = await collect(client.followJob('s17', { deadline: Date.now() + 8000 }));
    assert.deepEqual(typesOf(events), ['transport:stream', 'status', 'result', 'end']);
  });

  it('keeps unknown statuses as they are, without stopping or crashing', async () => {
    succeededJob(server, 's8');
    server.on('GET', '/v1/jobs/s8/stream', (_req, res) => {
      const sse = openSse(res);
      sse.send(status('warming_up', 0, '1'));
      sse.send({ id: '2', event: 'status', data: '{"no":"status"}' });
      sse.send({ id: '3', event: 'log', data: 'a plain text line' });
      sse.send({ id: '4', event: 'mystery', data: '{}' });
      sse.send(status('paused', 0.4, '5'));
      sse.send({
        id: '6',
        event: 'result',
        data: {
          images: [],
          results: [{ url: '/v1/jobs/s8/outputs/audio.mp3', content_type: 'audio/mpeg', duration_s: 3 }],
          request_duration_s: 1.5,
          model_id: 'article-audio-1-mini',
          style_id: 0,
          extra: true,
        },
      });
      sse.send({ id: '7', event: 'end', data: 'succeeded' });
      sse.end();
    });
    const events = await collect(client.followJob('s8'));
    assert.deepEqual(statusesOf(events), ['warming_up@0', 'paused@0.4', 'succeeded@1']);
    assert.deepEqual(logsOf(events), ['a plain text line']);
    const result = events.find((e) => e.type === 'result');
    assert.ok(result?.type === 'result');
    assert.deepEqual(result.results, [
      { url: `${server.url}/v1/jobs/s8/outputs/audio.mp3`, contentType: 'audio/mpeg', durationS: 3 },
    ]);
    assert.equal(result.modelId, 'article-audio-1-mini');
    assert.equal(result.requestDurationS, 1.5);
  });

  it('reconnects a stream that goes silent, after the idle timeout', async () => {
    succeededJob(server, 's9');
    server.on(
      'GET',
      '/v1/jobs/s9/stream',
      (_req, res) => {
        const sse = openSse(res);
        sse.send(status('processing', 0.1, '1')); // then nothing at all
      },
      (_req, res) => {
        const sse = openSse(res);
        sse.send({ id: '2', event: 'end', data: 'succeeded' });
        sse.end();
      },
    );
    const { client: idleClient } = clientFor(server, { stream: { idleTimeoutMs: 300, reconnectMs: 20 } });
    const started = Date.now();
    const events = await collect(idleClient.followJob('s9', { deadline: Date.now() + 10_000 }));
    const streams = server.requestsTo('GET', '/v1/jobs/s9/stream');
    assert.equal(streams.length, 2);
    assert.equal(streams[1]!.headers['last-event-id'], '1');
    assert.ok(Date.now() - started >= 280);
    assert.equal(events.at(-1)!.type, 'end');
  });

  it('a stream that never ends ends at the deadline with a TimeoutError', async () => {
    server.on('GET', '/v1/jobs/s10', (_req, res) => sendEnvelope(res, 200, jobBody('s10', 'processing')));
    server.on('GET', '/v1/jobs/s10/stream', (_req, res) => {
      const sse = openSse(res);
      sse.send(status('processing', 0.1, '1'));
      const beat = setInterval(() => sse.comment(), 30);
      res.on('close', () => clearInterval(beat));
    });
    const started = Date.now();
    const { error } = await rejectionOf(collect(client.followJob('s10', { deadline: Date.now() + 800 })));
    assert.ok(error instanceof TimeoutError, String(error));
    assert.equal(error.kind, 'deadline');
    assert.match(error.message, /Stopped following job s10: its time limit of .* passed/);
    const took = Date.now() - started;
    assert.ok(took >= 750, `took ${took} ms`);
    assert.equal(server.requestsTo('GET', '/v1/jobs/s10/stream').length, 1, 'heartbeats kept the one connection');
  });

  it('notices a finished job whose stream only sends heartbeats, by checking its status', async () => {
    succeededJob(server, 's11');
    server.on('GET', '/v1/jobs/s11/stream', (_req, res) => {
      const sse = openSse(res);
      sse.send(status('processing', 0.9, '1'));
      const beat = setInterval(() => sse.comment(), 40);
      res.on('close', () => clearInterval(beat));
    });
    const { client: watchful } = clientFor(server, { stream: { statusCheckMs: 300 } });
    const events = await collect(watchful.followJob('s11', { deadline: Date.now() + 4000 }));
    assert.deepEqual(statusesOf(events), ['processing@0.9', 'succeeded@1']);
    assert.equal(events.at(-1)!.type, 'end');
  });

  it('falls back to polling when the stream keeps dropping, heartbeats or not, without spinning', async () => {
    server.on('GET', '/v1/jobs/s12', (_req, res) => sendEnvelope(res, 200, jobBody('s12', 'succeeded')));
    server.on('GET', '/v1/jobs/s12/stream', (_req, res) => {
      const sse = openSse(res);
      sse.send({ retry: 10, data: '', event: 'noop' }); // a retry hint of 10 ms must not make it spin either
      sse.comment();
      sse.send(status('processing', 0.1, '1')); // replayed on every connection: nothing new after the first
      sse.end();
    });
    const { client: dropping } = clientFor(server, { stream: { maxFailures: 3, reconnectMs: 20 } });
    const events = await collect(dropping.followJob('s12', { deadline: Date.now() + 5000 }));
    // The first connection brought an event; three more brought nothing new, then polling took over.
    assert.equal(server.requestsTo('GET', '/v1/jobs/s12/stream').length, 4);
    const fallback = events.find((e) => e.type === 'transport' && e.mode === 'poll');
    assert.ok(fallback?.type === 'transport');
    assert.match(fallback.reason ?? '', /failed 3 times in a row/);
    assert.deepEqual(statusesOf(events), ['processing@0.1', 'succeeded@1']);
  });

  it('falls back to polling when the stream cannot be opened (503 every time), honouring its Retry-After', async () => {
    server.on('GET', '/v1/jobs/s18', (_req, res) => sendEnvelope(res, 200, jobBody('s18', 'succeeded')));
    server.on('GET', '/v1/jobs/s18/stream', (_req, res) =>
      sendErrors(res, 503, [{ code: 'unavailable', message: 'busy' }], { 'retry-after': '0.3' }),
    );
    const { client: patient } = clientFor(server, { stream: { maxFailures: 3, reconnectMs: 20 } });
    const events = await collect(patient.followJob('s18', { deadline: Date.now() + 8000 }));
    const opens = server.requestsTo('GET', '/v1/jobs/s18/stream');
    assert.equal(opens.length, 3);
    for (let i = 1; i < opens.length; i++)
      assert.ok(opens[i]!.at - opens[i - 1]!.at >= 280, 'waited as the service asked');
    assert.deepEqual(typesOf(events), ['unreachable', 'transport:poll', 'status', 'end']);
    assert.match((events[0] as { message: string }).message, /HTTP 503/, 'the first failure is told at once');
    assert.match((events[1] as { reason: string }).reason, /failed 3 times in a row .*HTTP 503/);
  });

  it('falls back to polling when the stream is not an event stream (404, JSON)', async () => {
    server.on('GET', '/v1/jobs/s13', (_req, res) => sendEnvelope(res, 200, jobBody('s13', 'succeeded')));
    server.on('GET', '/v1/jobs/s13/stream', (_req, res) => sendEnvelope(res, 200, { status: 'processing' }));
    const events = await collect(client.followJob('s13'));
    assert.deepEqual(typesOf(events), ['transport:poll', 'status', 'end']);
    assert.equal(server.requestsTo('GET', '/v1/jobs/s13/stream').length, 1);

    // With transport 'stream' the caller gets the error instead.
    server.on('GET', '/v1/jobs/s14/stream', (_req, res) =>
      sendErrors(res, 404, [{ code: 'not_found', message: 'no' }]),
    );
    const { error } = await rejectionOf(collect(client.followJob('s14', { transport: 'stream' })));
    assert.ok(error instanceof NotFoundError);
  });

  it('does not fall back when the key is rejected', async () => {
    server.on('GET', '/v1/jobs/s15/stream', (_req, res) =>
      sendErrors(res, 401, [{ code: 'unauthorized', message: 'no' }]),
    );
    const { error } = await rejectionOf(collect(client.followJob('s15')));
    assert.ok(error instanceof AuthenticationError);
    assert.equal(server.requestsTo('GET', '/v1/jobs/s15').length, 0);
  });

  it('sends the lastEventId it was given on the first connection', async () => {
    succeededJob(server, 's16');
    server.on('GET', '/v1/jobs/s16/stream', (_req, res) => {
      const sse = openSse(res);
      sse.send({ id: '9', event: 'end', data: 'succeeded' });
      sse.end();
    });
    await collect(client.followJob('s16', { lastEventId: '8' }));
    assert.equal(server.requestsTo('GET', '/v1/jobs/s16/stream')[0]!.headers['last-event-id'], '8');
  });
});
