// Issue 23, the client half: a service (or the host its output addresses name) that attacks the client. Real HTTP on
// 127.0.0.1 (the fault server), no mocks: an endless download body, a size announced beyond the cap, an endless
// stream of log events, a status that goes back after the job ended, progress that goes down, output addresses that
// are not http(s), one on another origin, and a job whose stream is busy with log lines while it never moves.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  InvalidResponseError,
  LOG_LINES_LEFT_OUT,
  MAX_LOG_LINES,
  MAX_LAST_EVENT_ID_CHARS,
  MAX_LOG_MESSAGE_CHARS,
  TimeoutError,
  type JobEvent,
} from '../../../src/api';
import { jobBody, openSse, sendEnvelope, startFaultServer, type FaultServer } from '../../support/fault-server';
import { API_KEY, clientFor, rejectionOf } from '../../support/api-client';

/** Writes audio-looking bytes as fast as the client reads them, for ever; counts what it sent. */
function endlessBody(sent: { bytes: number }, headers: Record<string, string> = {}) {
  return (_req: unknown, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'audio/mpeg', ...headers });
    const chunk = Buffer.alloc(64 * 1024, 0xaa);
    const pump = () => {
      while (!res.destroyed && res.write(chunk)) sent.bytes += chunk.length;
      if (!res.destroyed) res.once('drain', pump);
    };
    res.on('close', () => res.removeListener('drain', pump));
    pump();
  };
}

async function collect(events: AsyncIterable<JobEvent>): Promise<JobEvent[]> {
  const all: JobEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

describe('a client no service can hurt', () => {
  let server: FaultServer;
  let foreign: FaultServer;
  let dir: string;
  before(async () => {
    server = await startFaultServer();
    foreign = await startFaultServer();
    dir = mkdtempSync(path.join(os.tmpdir(), 'article-audio-hostile-'));
  });
  after(async () => {
    await server.close();
    await foreign.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an endless audio body stops at the cap derived from the job (duration_s at 320 kbps + margin), leaving nothing', async () => {
    const sent = { bytes: 0 };
    server.on('GET', '/v1/jobs/e1/outputs/audio.mp3', endlessBody(sent));
    const { client, logs } = clientFor(server);
    const destination = path.join(dir, 'e1', 'audio.mp3');
    const started = Date.now();
    const { error } = await rejectionOf(
      client.downloadOutput(
        { url: '/v1/jobs/e1/outputs/audio.mp3', contentType: 'audio/mpeg', durationS: 10 },
        destination,
      ),
    );
    assert.ok(error instanceof InvalidResponseError, String(error));
    assert.equal(error.code, 'download_too_large');
    assert.match(error.message, /was stopped: the service sent more than the 2\.6 MB allowed \(10 s of audio/);
    assert.match(error.message, /nothing was kept/);
    assert.ok(Date.now() - started < 10_000);
    // Stopped near the cap (what sits in socket buffers aside), not at the disk's end.
    assert.ok(sent.bytes < 20_000_000, `the server wrote ${sent.bytes} bytes`);
    assert.deepEqual(readdirSync(path.dirname(destination)), []);
    assert.ok(!logs.join('\n').includes(API_KEY));
  });

  it('an endless transcript stops at the small cap for text, and only one request is made (no retry of a refusal)', async () => {
    const sent = { bytes: 0 };
    server.on('GET', '/v1/jobs/e2/outputs/transcript.vtt', endlessBody(sent, { 'content-type': 'text/vtt' }));
    const { client } = clientFor(server);
    const destination = path.join(dir, 'e2.vtt');
    const { error } = await rejectionOf(client.downloadOutput('/v1/jobs/e2/outputs/transcript.vtt', destination));
    assert.ok(error instanceof InvalidResponseError, String(error));
    assert.equal(error.code, 'download_too_large');
    assert.match(error.message, /more than the 16\.8 MB allowed \(the limit for a transcript\)/);
    assert.equal(existsSync(destination), false);
    assert.equal(existsSync(`${destination}.part`), false);
    assert.equal(server.requestsTo('GET', '/v1/jobs/e2/outputs/transcript.vtt').length, 1);
  });

  it('a size announced beyond the cap is refused before the body is read', async () => {
    server.on('GET', '/v1/jobs/e3/outputs/audio.mp3', (_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': String(50_000_000_000) });
      res.write(Buffer.alloc(1000));
    });
    const { client } = clientFor(server);
    const destination = path.join(dir, 'e3.mp3');
    const { error } = await rejectionOf(
      client.downloadOutput({ url: '/v1/jobs/e3/outputs/audio.mp3', durationS: 60 }, destination),
    );
    assert.ok(error instanceof InvalidResponseError, String(error));
    // Refused on the announced size (the body never ends: reading it would end only at the stall limit, 20 s).
    assert.match(error.message, /the service announced 50000 MB, more than the 5\.1 MB allowed/);
    assert.equal(existsSync(`${destination}.part`), false);
  });

  it('refuses javascript:, data: and file: output addresses by their scheme, without any request', async () => {
    const { client } = clientFor(server);
    const before = server.requests.length;
    for (const url of ['javascript:alert(document.cookie)', 'data:audio/mpeg;base64,AAAA', 'file:///etc/passwd']) {
      const destination = path.join(dir, 'scheme.mp3');
      const { error } = await rejectionOf(client.downloadOutput({ url, contentType: 'audio/mpeg' }, destination));
      assert.ok(error instanceof InvalidResponseError, `${url}: ${String(error)}`);
      assert.equal(error.code, 'unsupported_url');
      const scheme = url.slice(0, url.indexOf(':') + 1);
      assert.match(error.message, new RegExp(`scheme "${scheme}"; only http:// and https:// addresses are downloaded`));
      assert.ok(!error.message.includes('alert') && !error.message.includes('passwd'), error.message);
      assert.equal(existsSync(destination), false);
    }
    assert.equal(server.requests.length, before);
  });

  it('an output on another origin, named by the job, is fetched without the API key', async () => {
    foreign.on('GET', '/cdn/e5.mp3', (_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': '4' });
      res.end(Buffer.from([0xff, 0xfb, 0x90, 0x00]));
    });
    server.on('GET', '/v1/jobs/e5', (_req, res) =>
      sendEnvelope(
        res,
        200,
        jobBody('e5', 'succeeded', { outputs: { results: [{ url: `${foreign.url}/cdn/e5.mp3`, duration_s: 1 }] } }),
      ),
    );
    const { client } = clientFor(server);
    const job = await client.getJob('e5');
    await client.downloadOutput(job.outputs!.results[0]!, path.join(dir, 'e5.mp3'));
    const [request] = foreign.requestsTo('GET', '/cdn/e5.mp3');
    assert.ok(request);
    assert.equal(request.headers.authorization, undefined);
    assert.equal(server.requestsTo('GET', '/v1/jobs/e5')[0]!.headers.authorization, `Bearer ${API_KEY}`);
  });

  it('an endless stream of log events: lines are cut short and capped, then one line says the rest were left out', async () => {
    const long = `\u001b]0;owned\u0007${'x'.repeat(5000)}`;
    server.on('GET', '/v1/jobs/l1/stream', (_req, res) => {
      const sse = openSse(res);
      sse.send({ id: '0', event: 'status', data: { status: 'processing', progress: 0.1 } });
      for (let i = 1; i <= 3000; i++) sse.send({ id: String(i), event: 'log', data: { level: 'info', message: long } });
      sse.send({ id: 'a', event: 'status', data: { status: 'succeeded', progress: 1 } });
      sse.send({ id: 'b', event: 'end', data: 'succeeded' });
      res.end();
    });
    server.on('GET', '/v1/jobs/l1', (_req, res) => sendEnvelope(res, 200, jobBody('l1', 'succeeded')));
    const { client } = clientFor(server);
    const events = await collect(client.followJob('l1', { deadline: Date.now() + 20_000 }));
    const logs = events.filter((event) => event.type === 'log');
    assert.equal(logs.length, MAX_LOG_LINES + 1);
    assert.equal(logs.at(-1)!.message, LOG_LINES_LEFT_OUT);
    for (const log of logs) {
      assert.ok(log.message.length <= MAX_LOG_MESSAGE_CHARS, `a log line of ${log.message.length} characters`);
      // eslint-disable-next-line no-control-regex
      assert.doesNotMatch(log.message, /[\u0000-\u001f\u007f-\u009f]/);
    }
    assert.equal(events.at(-1)!.type, 'end');
  });

  it('a status that goes back after the job ended is ignored, and following ends with the finished job', async () => {
    const results = [{ url: '/v1/jobs/b1/outputs/audio.mp3', content_type: 'audio/mpeg', duration_s: 3 }];
    server.on('GET', '/v1/jobs/b1/stream', (_req, res) => {
      const sse = openSse(res);
      sse.send({ id: '1', event: 'status', data: { status: 'processing', progress: 0.6 } });
      sse.send({ id: '2', event: 'status', data: { status: 'processing', progress: 0.3 } });
      sse.send({ id: '3', event: 'status', data: { status: 'succeeded', progress: 1 } });
      sse.send({ id: '4', event: 'result', data: { images: [], results } });
      sse.send({ id: '5', event: 'status', data: { status: 'processing', progress: 0.2 } });
      // …and the stream stays open, with no `end`.
    });
    // The status endpoint keeps saying the job is running again.
    server.on('GET', '/v1/jobs/b1', (_req, res) =>
      sendEnvelope(res, 200, jobBody('b1', 'processing', { progress: 0.2 })),
    );
    const { client, logs } = clientFor(server);
    const events = await collect(client.followJob('b1', { deadline: Date.now() + 15_000 }));
    const statuses = events.filter((event) => event.type === 'status');
    assert.deepEqual(
      statuses.map((event) => [event.status, event.progress]),
      [
        ['processing', 0.6],
        ['succeeded', 1],
      ],
    );
    const end = events.at(-1)!;
    assert.equal(end.type, 'end');
    assert.equal(end.job.status, 'succeeded');
    assert.equal(end.job.outputs?.results[0]?.durationS, 3);
    assert.equal(logs.filter((line) => line.includes('ignored the status "processing"')).length, 1);
  });

  it('a very long or unsendable event id is not sent back as Last-Event-ID: the last sendable one is, and nothing repeats', async () => {
    const long = 'x'.repeat(100_000);
    const justFits = 'y'.repeat(MAX_LAST_EVENT_ID_CHARS);
    const events = [
      { id: '1', event: 'log', data: { level: 'info', message: 'one' } },
      { id: justFits, event: 'log', data: { level: 'info', message: 'two' } },
      { id: long, event: 'log', data: { level: 'info', message: 'three' } },
      { id: 'with a space at the end ', event: 'log', data: { level: 'info', message: 'four' } },
      { id: 'caf\u00e9', event: 'log', data: { level: 'info', message: 'five' } },
    ];
    server.on('GET', '/v1/jobs/id1', (_req, res) => sendEnvelope(res, 200, jobBody('id1', 'succeeded')));
    server.on(
      'GET',
      '/v1/jobs/id1/stream',
      // Each connection replays everything and drops, as a service that ignores Last-Event-ID would…
      (_req, res) => {
        const sse = openSse(res);
        for (const event of events) sse.send(event);
        setTimeout(() => sse.drop(), 20);
      },
      (_req, res) => {
        const sse = openSse(res);
        for (const event of events) sse.send(event);
        setTimeout(() => sse.drop(), 20);
      },
      // …until the job ends.
      (_req, res) => {
        const sse = openSse(res);
        for (const event of events) sse.send(event);
        sse.send({ id: '9', event: 'status', data: { status: 'succeeded', progress: 1 } });
        sse.send({ id: '10', event: 'end', data: 'succeeded' });
        sse.end();
      },
    );
    const { client } = clientFor(server);
    const seen = await collect(client.followJob('id1', { deadline: Date.now() + 15_000 }));
    const streams = server.requestsTo('GET', '/v1/jobs/id1/stream');
    assert.equal(streams.length, 3);
    assert.equal(streams[0]!.headers['last-event-id'], undefined);
    // The 256-character id was the last one that could be sent; the 100,000-character one and the others were not.
    for (const stream of streams.slice(1)) assert.equal(stream.headers['last-event-id'], justFits);
    // Each line once, whatever its id; events carry only ids that can be resumed from.
    const logs = seen.filter((event) => event.type === 'log');
    assert.deepEqual(
      logs.map((event) => event.message),
      ['one', 'two', 'three', 'four', 'five'],
    );
    assert.deepEqual(
      logs.map((event) => event.eventId),
      ['1', justFits, undefined, undefined, undefined],
    );
    assert.equal(seen.at(-1)!.type, 'end');
  });

  it('a stream busy with log lines for a job that never moves stops being followed at the stall limit', async () => {
    server.on('GET', '/v1/jobs/s1/stream', (_req, res) => {
      const sse = openSse(res);
      let n = 0;
      const timer = setInterval(
        () => sse.send({ id: String(++n), event: 'log', data: { level: 'info', message: `still busy ${n}` } }),
        20,
      );
      res.on('close', () => clearInterval(timer));
    });
    server.on('GET', '/v1/jobs/s1', (_req, res) =>
      sendEnvelope(res, 200, jobBody('s1', 'processing', { progress: 0.5 })),
    );
    const { client } = clientFor(server, { stallTimeoutMs: 1500, stream: { statusCheckMs: 300 } });
    const { error } = await rejectionOf(collect(client.followJob('s1', { deadline: Date.now() + 8000 })));
    assert.ok(error instanceof TimeoutError, String(error));
    assert.equal(error.code, 'job_stalled');
    assert.match(error.message, /reported no progress for 1\.5 s/);
    // The status was checked beside the busy stream (log lines say nothing of the job's state).
    assert.ok(server.requestsTo('GET', '/v1/jobs/s1').length >= 1);
  });
});
