// The job tracker in plain Node (no VS Code): its emitters and store are plain ones, its services a real client
// against the fault server. Finishing with the engine's title, a transcript that fails to download while the audio
// does not, a job the service no longer knows, an outage reported once while following goes on, an error that stops
// following, and the list pruned past 200 jobs.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import type { JobServiceClient } from '../../../src/api';
import { AudioCache } from '../../../src/jobs/audio-cache';
import { JobTracker } from '../../../src/jobs/job-tracker';
import type { JobRecord } from '../../../src/jobs/types';
import {
  type FaultServer,
  jobBody,
  openSse,
  sendEnvelope,
  sendErrors,
  startFaultServer,
} from '../../support/fault-server';
import { MemoryStore, PlainEmitter, nextEvent } from '../../support/plain-node';
import { TEXT, clientFor } from '../../support/api-client';

const STORAGE_KEY = 'articleAudio.jobs.v1';

/** Waits for a state the test cannot subscribe to (what the client logged), checking as the event loop turns. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 20));
}

function trackerFor(client: JobServiceClient, dir: string, store = new MemoryStore()) {
  const logs: string[] = [];
  const tracker = new JobTracker({
    store,
    cache: new AudioCache(path.join(dir, 'audio')),
    services: { current: () => 'remote', describe: () => 'the test service', client: () => Promise.resolve(client) },
    log: { log: (level, message) => logs.push(`${level}: ${message}`) },
    emitter: () => new PlainEmitter(),
  });
  return { tracker, logs, store };
}

function acceptsJob(server: FaultServer, id: string): void {
  server.on('POST', '/v1/article-to-audio', (_req, res) =>
    sendEnvelope(res, 202, { job_id: id, links: { self: `/v1/jobs/${id}`, stream: `/v1/jobs/${id}/stream` } }),
  );
}

function streamsToEnd(server: FaultServer, id: string): void {
  server.on('GET', `/v1/jobs/${id}/stream`, (_req, res) => {
    const sse = openSse(res);
    sse.send({ id: '1', event: 'status', data: { status: 'processing', progress: 0.5 } });
    sse.send({ id: '2', event: 'status', data: { status: 'succeeded', progress: 1 } });
    sse.send({ id: '3', event: 'end', data: 'succeeded' });
    res.end();
  });
}

function succeeds(server: FaultServer, id: string, title: string): void {
  const outputs = {
    results: [
      { url: `/v1/jobs/${id}/outputs/audio.mp3`, content_type: 'audio/mpeg', duration_s: 3 },
      { url: `/v1/jobs/${id}/outputs/transcript.vtt`, content_type: 'text/vtt' },
    ],
  };
  server.on('GET', `/v1/jobs/${id}`, (_req, res) =>
    sendEnvelope(res, 200, jobBody(id, 'succeeded', { title, outputs })),
  );
  server.on('GET', `/v1/jobs/${id}/outputs/audio.mp3`, (_req, res) => {
    res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': '4' });
    res.end(Buffer.from([0xff, 0xfb, 0x90, 0x00]));
  });
}

describe('JobTracker in plain Node, against the fault server', () => {
  let server: FaultServer;
  let dir: string;
  const trackers: JobTracker[] = [];
  before(async () => {
    server = await startFaultServer();
    dir = mkdtempSync(path.join(os.tmpdir(), 'article-audio-tracker-'));
  });
  afterEach(() => {
    for (const tracker of trackers.splice(0)) tracker.dispose();
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("finishes with the engine's title; a transcript that fails to download leaves the audio playable", async () => {
    acceptsJob(server, 't1');
    streamsToEnd(server, 't1');
    succeeds(server, 't1', 'The Title the Engine Found');
    server.on('GET', '/v1/jobs/t1/outputs/transcript.vtt', (_req, res) =>
      sendErrors(res, 403, [{ code: 'forbidden', message: 'no' }]),
    );
    const { tracker, logs } = trackerFor(clientFor(server).client, dir);
    trackers.push(tracker);
    const finished = nextEvent(tracker.onDidFinish);
    await tracker.submit({
      title: 'Selection in notes.md',
      modelId: 'article-audio-1-mini',
      source: { kind: 'selection' },
      text: TEXT,
    });
    const { job, startedHere } = await finished;
    assert.equal(startedHere, true);
    assert.equal(job.status, 'succeeded');
    assert.equal(job.title, 'The Title the Engine Found');
    assert.ok(job.files?.audio && existsSync(job.files.audio));
    assert.equal(job.files.transcript, undefined);
    assert.ok(
      logs.some((line) => /could not download its transcript/.test(line)),
      logs.join('\n'),
    );
  });

  it('fails a job the service no longer knows with not_found', async () => {
    acceptsJob(server, 't2');
    server.on('GET', '/v1/jobs/t2/stream', (_req, res) =>
      sendErrors(res, 404, [{ code: 'not_found', message: 'No such job.' }]),
    );
    server.on('GET', '/v1/jobs/t2', (_req, res) =>
      sendErrors(res, 404, [{ code: 'not_found', message: 'No such job.' }]),
    );
    const { tracker } = trackerFor(clientFor(server).client, dir);
    trackers.push(tracker);
    const finished = nextEvent(tracker.onDidFinish);
    await tracker.submit({ title: 'Gone', modelId: 'article-audio-1-mini', source: { kind: 'selection' }, text: TEXT });
    const { job } = await finished;
    assert.equal(job.status, 'failed');
    assert.equal(job.error?.code, 'not_found');
    assert.match(job.error?.message ?? '', /the test service no longer knows this job/);
  });

  it('never shows a failed job without its reason: the failed status event waits for the job with its error', async () => {
    acceptsJob(server, 't5');
    server.on('GET', '/v1/jobs/t5/stream', (_req, res) => {
      const sse = openSse(res);
      sse.send({ id: '1', event: 'status', data: { status: 'processing', progress: 0.2 } });
      sse.send({ id: '2', event: 'status', data: { status: 'failed', progress: 0.2 } });
      sse.send({ id: '3', event: 'end', data: 'failed' });
      res.end();
    });
    server.on('GET', '/v1/jobs/t5', (_req, res) =>
      sendEnvelope(
        res,
        200,
        jobBody('t5', 'failed', { error: { code: 'fetch_failed', message: 'The page answered 404 Not Found.' } }),
      ),
    );
    const { tracker } = trackerFor(clientFor(server).client, dir);
    trackers.push(tracker);
    // Every state anyone could see (the tree, the status bar, a test waiting for the end) as the tracker announces it.
    const seen: { status: string; code?: string }[] = [];
    tracker.onDidChange((job) => {
      if (job?.id) seen.push({ status: job.status, ...(job.error?.code ? { code: job.error.code } : {}) });
    });
    const finished = nextEvent(tracker.onDidFinish);
    await tracker.submit({ title: 'Gone', modelId: 'article-audio-1-mini', source: { kind: 'selection' }, text: TEXT });
    const { job } = await finished;
    assert.equal(job.status, 'failed');
    assert.equal(job.error?.code, 'fetch_failed');
    assert.ok(
      seen.some((state) => state.status === 'processing'),
      JSON.stringify(seen),
    );
    assert.deepEqual(
      seen.filter((state) => state.status === 'failed'),
      seen.filter((state) => state.status === 'failed' && state.code === 'fetch_failed'),
      `a failed state without its error was shown: ${JSON.stringify(seen)}`,
    );
  });
  it('an outage is reported once, and following goes on until the service answers again', async () => {
    const down = await startFaultServer();
    const downUrl = down.url;
    acceptsJob(down, 't3');
    down.on('GET', '/v1/jobs/t3/stream', (_req, res) => {
      openSse(res).send({ id: '1', event: 'status', data: { status: 'processing', progress: 0.2 } });
    });
    const { client, logs } = clientFor(downUrl);
    const { tracker } = trackerFor(client, dir);
    trackers.push(tracker);
    const processing = nextEvent(tracker.onDidChange, (job) => job?.status === 'processing');
    const record = await tracker.submit({
      title: 'Long one',
      modelId: 'article-audio-1-pro',
      source: { kind: 'url', url: 'https://example.com/a' },
      url: 'https://example.com/a',
    });
    await processing;
    const contacts: string[] = [];
    tracker.onDidLoseContact(({ message }) => contacts.push(message));
    const lost = nextEvent(tracker.onDidLoseContact);
    await down.close();
    const problem = await lost;
    assert.equal(problem.job.id, record.id);
    assert.match(problem.message, /Could not reach the job service/);
    assert.equal(tracker.isFollowing(record.id), true, 'still following in the background');
    assert.match(tracker.get(record.id)?.lastMessage ?? '', /Cannot reach the test service; still trying/);
    // Several failed reconnections and status checks later, still one notice.
    await until(() => logs.filter((line) => /checking the status failed/.test(line)).length >= 2);
    assert.equal(contacts.length, 1);
    assert.equal(tracker.isFollowing(record.id), true);
  });

  it('stops following on an error that does not pass by itself (a rejected key), and says so', async () => {
    acceptsJob(server, 't4');
    server.on('GET', '/v1/jobs/t4/stream', (_req, res) =>
      sendErrors(res, 401, [{ code: 'unauthorized', message: 'Wrong key.' }]),
    );
    const { tracker } = trackerFor(clientFor(server).client, dir);
    trackers.push(tracker);
    const lost = nextEvent(tracker.onDidLoseTrack);
    const record = await tracker.submit({
      title: 'Key',
      modelId: 'article-audio-1-mini',
      source: { kind: 'selection' },
      text: TEXT,
    });
    const { job, error } = await lost;
    assert.equal(job.id, record.id);
    assert.equal((error as Error).name, 'AuthenticationError');
    assert.match(job.lastMessage ?? '', /^Stopped following: /);
  });

  it('keeps at most 200 jobs: the oldest finished ones are dropped first, unfinished ones never', async () => {
    const store = new MemoryStore();
    const records: JobRecord[] = [];
    for (let i = 0; i < 200; i++) {
      const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
      records.push({
        id: `old-${i}`,
        title: `Old ${i}`,
        modelId: 'article-audio-1-mini',
        service: 'elsewhere',
        source: { kind: 'selection' },
        status: i === 0 ? 'processing' : 'failed',
        createdAt: at,
        updatedAt: at,
      });
    }
    await store.update(STORAGE_KEY, records);
    acceptsJob(server, 't5');
    streamsToEnd(server, 't5');
    succeeds(server, 't5', 'New');
    server.on('GET', '/v1/jobs/t5/outputs/transcript.vtt', (_req, res) =>
      sendErrors(res, 404, [{ code: 'not_found', message: 'none' }]),
    );
    const { tracker } = trackerFor(clientFor(server).client, dir, store);
    trackers.push(tracker);
    const finished = nextEvent(tracker.onDidFinish);
    await tracker.submit({ title: 'New', modelId: 'article-audio-1-mini', source: { kind: 'selection' }, text: TEXT });
    await finished;
    const ids = tracker.all().map((job) => job.id);
    assert.equal(ids.length, 200);
    assert.equal(ids[0], 't5');
    assert.ok(ids.includes('old-0'), 'the unfinished oldest job stays');
    assert.ok(!ids.includes('old-1'), 'the oldest finished job is dropped');
    tracker.dispose();
    const saved = store.get<JobRecord[]>(STORAGE_KEY) ?? [];
    assert.equal(saved.length, 200, 'the list is saved as it is kept');
  });
});
