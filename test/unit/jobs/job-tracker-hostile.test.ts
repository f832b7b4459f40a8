// The extension's JobTracker (plain Node, the code the extension runs) against a hostile service on loopback (issue
// 23): an endless audio body fails the job with download_too_large and leaves nothing in the cache; a status that
// goes back after the job ended does not keep the job running; an endless stream of log lines reaches the output
// channel bounded, and the job record keeps one short line.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { LOG_LINES_LEFT_OUT, MAX_LOG_LINES, type JobServiceClient } from '../../../src/api';
import { AudioCache } from '../../../src/jobs/audio-cache';
import { JobTracker } from '../../../src/jobs/job-tracker';
import { type FaultServer, jobBody, openSse, sendEnvelope, startFaultServer } from '../../support/fault-server';
import { MemoryStore, PlainEmitter, nextEvent } from '../../support/plain-node';
import { API_KEY, TEXT, clientFor } from '../../support/api-client';

function trackerFor(client: JobServiceClient, dir: string) {
  const logs: string[] = [];
  const cache = new AudioCache(path.join(dir, 'audio'));
  const tracker = new JobTracker({
    store: new MemoryStore(),
    cache,
    services: { current: () => 'remote', describe: () => 'the test service', client: () => Promise.resolve(client) },
    log: { log: (level, message) => logs.push(`${level}: ${message}`) },
    emitter: () => new PlainEmitter(),
  });
  return { tracker, logs, cache };
}

function job(server: FaultServer, id: string, status: string, durationS = 5): void {
  server.on('POST', '/v1/article-to-audio', (_req, res) => sendEnvelope(res, 202, { job_id: id }));
  const results = [{ url: `/v1/jobs/${id}/outputs/audio.mp3`, content_type: 'audio/mpeg', duration_s: durationS }];
  server.on('GET', `/v1/jobs/${id}`, (_req, res) =>
    sendEnvelope(res, 200, jobBody(id, status, status === 'succeeded' ? { outputs: { results } } : {})),
  );
}

function smallAudio(server: FaultServer, id: string): void {
  server.on('GET', `/v1/jobs/${id}/outputs/audio.mp3`, (_req, res) => {
    res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': '4' });
    res.end(Buffer.from([0xff, 0xfb, 0x90, 0x00]));
  });
}

const submit = (tracker: JobTracker) =>
  tracker.submit({ title: 'Hostile', modelId: 'article-audio-1-mini', source: { kind: 'selection' }, text: TEXT });

describe('JobTracker against a hostile service', () => {
  let server: FaultServer;
  let dir: string;
  const trackers: JobTracker[] = [];
  before(async () => {
    server = await startFaultServer();
    dir = mkdtempSync(path.join(os.tmpdir(), 'article-audio-tracker-hostile-'));
  });
  afterEach(() => {
    for (const tracker of trackers.splice(0)) tracker.dispose();
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an endless audio body fails the job with download_too_large, and nothing is left in its cache folder', async () => {
    job(server, 'x1', 'succeeded', 5);
    server.on('GET', '/v1/jobs/x1/stream', (_req, res) => {
      const sse = openSse(res);
      sse.send({ id: '1', event: 'status', data: { status: 'succeeded', progress: 1 } });
      sse.send({ id: '2', event: 'end', data: 'succeeded' });
      res.end();
    });
    let sent = 0;
    server.on('GET', '/v1/jobs/x1/outputs/audio.mp3', (_req, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      const chunk = Buffer.alloc(64 * 1024, 0xaa);
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) sent += chunk.length;
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    const { tracker, cache, logs } = trackerFor(clientFor(server).client, dir);
    trackers.push(tracker);
    const finished = nextEvent(tracker.onDidFinish);
    await submit(tracker);
    const { job: record } = await finished;
    assert.equal(record.status, 'failed');
    assert.equal(record.error?.code, 'download_too_large');
    assert.match(record.error?.message ?? '', /was stopped: the service sent more than the 2\.3 MB allowed/);
    assert.ok(sent < 20_000_000, `the server wrote ${sent} bytes`);
    assert.deepEqual(
      readdirSync(cache.dir('x1')).filter((name) => name !== 'input.txt'),
      [],
    );
    assert.ok(!logs.join('\n').includes(API_KEY));
  });

  it('a status that goes back after the job ended does not keep it running: it ends succeeded, with its audio', async () => {
    job(server, 'x2', 'processing');
    smallAudio(server, 'x2');
    const results = [{ url: '/v1/jobs/x2/outputs/audio.mp3', content_type: 'audio/mpeg', duration_s: 1 }];
    server.on('GET', '/v1/jobs/x2/stream', (_req, res) => {
      const sse = openSse(res);
      sse.send({ id: '1', event: 'status', data: { status: 'processing', progress: 0.7 } });
      sse.send({ id: '2', event: 'status', data: { status: 'succeeded', progress: 1 } });
      sse.send({ id: '3', event: 'result', data: { images: [], results } });
      sse.send({ id: '4', event: 'status', data: { status: 'processing', progress: 0.1 } });
    });
    const { tracker } = trackerFor(clientFor(server).client, dir);
    trackers.push(tracker);
    const seen: [string, number | undefined][] = [];
    tracker.onDidChange((record) => {
      if (record?.id === 'x2') seen.push([record.status, record.progress]);
    });
    const finished = nextEvent(tracker.onDidFinish);
    await submit(tracker);
    const { job: record } = await Promise.race([
      finished,
      new Promise<never>((_resolve, reject) =>
        setTimeout(() => reject(new Error(`still following: ${JSON.stringify(seen)}`)), 15_000),
      ),
    ]);
    assert.equal(record.status, 'succeeded');
    assert.ok(record.files?.audio);
    // Progress never went down on the way (0.7, then 1 for the download).
    const progress = seen.map(([, p]) => p ?? 0);
    for (let i = 1; i < progress.length; i++) assert.ok(progress[i]! >= progress[i - 1]!, JSON.stringify(seen));
  });

  it('an endless stream of log lines reaches the log bounded, and the job keeps one short line', async () => {
    job(server, 'x3', 'succeeded');
    smallAudio(server, 'x3');
    server.on('GET', '/v1/jobs/x3/stream', (_req, res) => {
      const sse = openSse(res);
      for (let i = 1; i <= 4000; i++)
        sse.send({ id: String(i), event: 'log', data: { level: 'info', message: `\u001b[31m${'z'.repeat(4000)}` } });
      sse.send({ id: 'a', event: 'status', data: { status: 'succeeded', progress: 1 } });
      sse.send({ id: 'b', event: 'end', data: 'succeeded' });
      res.end();
    });
    const { tracker, logs } = trackerFor(clientFor(server).client, dir);
    trackers.push(tracker);
    const finished = nextEvent(tracker.onDidFinish);
    await submit(tracker);
    const { job: record } = await finished;
    assert.equal(record.status, 'succeeded');
    const jobLines = logs.filter((line) => line.includes('[job x3]'));
    assert.equal(jobLines.length, MAX_LOG_LINES + 1);
    assert.match(jobLines.at(-1)!, new RegExp(LOG_LINES_LEFT_OUT));
    assert.ok(jobLines.every((line) => line.length < 1100 && !line.includes('\u001b')));
  });
});
