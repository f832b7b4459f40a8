// The client against the real local engine (src/engine, over HTTP on loopback): submit, follow by the stream, resume
// a stream, download the MP3, idempotent resubmission, cancel, failures, and the engine's own error answers.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  AuthenticationError,
  JobFailedError,
  JobServiceClient,
  NotFoundError,
  RateLimitError,
  type JobEvent,
} from '../../../src/api';
import { startEngine, type RunningEngine } from '../../../src/engine';
import { createTestPipeline } from '../../support/test-pipeline';
import { TEXT } from '../../support/api-client';

const TOKEN = randomBytes(18).toString('base64url');

async function collect(iterable: AsyncIterable<JobEvent>): Promise<JobEvent[]> {
  const events: JobEvent[] = [];
  for await (const event of iterable) events.push(event);
  return events;
}

const server = (events: JobEvent[]) => (events[0]?.type === 'transport' ? events[0].mode : undefined);

/** MPEG audio frames start with 11 set bits. */
function startsWithMpegFrame(file: Buffer): boolean {
  const start =
    file.subarray(0, 3).toString('latin1') === 'ID3'
      ? 10 + ((file[6]! << 21) | (file[7]! << 14) | (file[8]! << 7) | file[9]!)
      : 0;
  return file[start] === 0xff && (file[start + 1]! & 0xe0) === 0xe0;
}

describe('the client against the real engine with its own speech pipeline', () => {
  it('turns a short text into a real MP3 with article-audio-1-mini', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'article-audio-client-speech-'));
    const engine = await startEngine({ dataDir, tokens: [TOKEN] });
    try {
      const client = new JobServiceClient({ baseUrl: engine.url, apiKey: TOKEN });
      const { jobId } = await client.submitArticle({ model_id: 'article-audio-1-mini', text: TEXT });
      const job = await client.waitForJob(jobId, { deadline: Date.now() + 120_000 });
      const audio = job.outputs?.results.find((file) => file.contentType === 'audio/mpeg');
      assert.ok(audio, 'an MP3 among the outputs');
      const mp3 = path.join(dataDir, 'speech.mp3');
      const { bytes } = await client.downloadOutput(audio.url, mp3);
      assert.ok(bytes > 4000, `${bytes} bytes of audio`);
      const file = readFileSync(mp3);
      assert.ok(startsWithMpegFrame(file));
      assert.ok((audio.durationS ?? 0) > 1, `${audio.durationS} s of speech`);
      // Encoded speech varies from frame to frame; encoded silence repeats one frame.
      const chunks = new Set<string>();
      for (let at = 0; at + 256 <= file.length; at += 256) chunks.add(file.subarray(at, at + 256).toString('base64'));
      const variety = chunks.size / Math.floor(file.length / 256);
      assert.ok(variety >= 0.2, `the MP3 holds sound, not silence (${variety.toFixed(2)} distinct)`);
    } finally {
      await engine.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('gives one answer for emoji at submission: the client and the engine refuse text with nothing to read alike, and accept long text with emoji that the pipeline then takes', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'article-audio-client-emoji-'));
    const engine = await startEngine({ dataDir, tokens: [TOKEN] });
    try {
      const client = new JobServiceClient({ baseUrl: engine.url, apiKey: TOKEN });
      const post = async (body: unknown) => {
        const response = await fetch(`${engine.url}/v1/article-to-audio`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        return {
          status: response.status,
          body: (await response.json()) as {
            data?: { job_id: string };
            errors?: { field?: string; message: string }[];
          },
        };
      };

      // 60,000 emoji and no words: 120,000 UTF-16 units, 60,000 characters, nothing to read.
      const emoji = { model_id: 'article-audio-1-mini', text: '😀'.repeat(60_000) } as const;
      const local = client.validateArticleRequest(emoji);
      const remote = await post(emoji);
      assert.equal(remote.status, 422);
      assert.deepEqual(
        remote.body.errors?.map(({ field, message }) => ({ field, message })),
        local,
      );
      assert.match(local[0]?.message ?? '', /^text has nothing to read aloud/);

      // Words among many emoji: 95,400 characters (167,400 UTF-16 units) pass both, and the pipeline counts the same.
      const mixed = {
        model_id: 'article-audio-1-mini',
        text: `Read this. ${'😀'.repeat(40)}\n\n`.repeat(1800),
      } as const;
      assert.ok(mixed.text.length > 100_000);
      assert.deepEqual(client.validateArticleRequest(mixed), []);
      const { jobId } = await client.submitArticle(mixed);
      const events: JobEvent[] = [];
      for await (const event of client.followJob(jobId)) {
        events.push(event);
        // Past the length check (the pipeline logs the words it extracted): stop, the rest is the speech tests' job.
        if (event.type === 'log' && event.message.startsWith('Extracted')) await client.cancelJob(jobId);
      }
      const end = events.at(-1);
      assert.equal(end?.type, 'end');
      assert.ok(
        events.some((event) => event.type === 'log' && event.message.startsWith('Extracted')),
        JSON.stringify(events.slice(-5)),
      );
      assert.notEqual(end.type === 'end' ? end.job.error?.code : undefined, 'too_long');
    } finally {
      await engine.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('the client against the real engine', () => {
  let engine: RunningEngine;
  let dataDir: string;
  let downloads: string;
  let client: JobServiceClient;
  let release: () => void = () => undefined;
  const logs: string[] = [];

  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'article-audio-client-engine-'));
    downloads = mkdtempSync(path.join(os.tmpdir(), 'article-audio-client-downloads-'));
    const held = new Promise<void>((resolve) => (release = resolve));
    engine = await startEngine({
      dataDir,
      tokens: [TOKEN],
      concurrency: 1,
      queueDepth: 1,
      heartbeatMs: 200,
      progressIntervalMs: 10,
      pipeline: createTestPipeline({
        steps: 6,
        stepMs: 40,
        // Texts that ask for it stay in `processing` until the test releases them.
        hold: (input) => (input.text?.includes('HOLD') ? held : undefined),
      }),
    });
    client = new JobServiceClient({
      baseUrl: engine.url,
      apiKey: () => Promise.resolve(TOKEN),
      polling: { initialMs: 50, factor: 2, maxMs: 400 },
      log: (level, message) => logs.push(`${level}: ${message}`),
    });
  });

  after(async () => {
    release();
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(downloads, { recursive: true, force: true });
  });

  it('submits a short text with article-audio-1-mini, follows it by the stream, and downloads the MP3', async () => {
    const accepted = await client.submitArticle({ model_id: 'article-audio-1-mini', text: TEXT });
    assert.equal(accepted.links.self, `${engine.url}/v1/jobs/${accepted.jobId}`);
    assert.equal(accepted.links.stream, `${engine.url}/v1/jobs/${accepted.jobId}/stream`);

    const events = await collect(client.followJob(accepted.jobId, { deadline: Date.now() + 30_000 }));
    assert.deepEqual(events[0], { type: 'transport', mode: 'stream', reason: 'connected' });
    assert.ok(!events.some((e) => e.type === 'transport' && e.mode === 'poll'), 'the engine streams');
    const statuses = events.flatMap((e) => (e.type === 'status' ? [e.status] : []));
    assert.equal(statuses.at(-1), 'succeeded');
    assert.ok(statuses.includes('processing'));
    const progress = events.flatMap((e) => (e.type === 'status' && e.progress !== undefined ? [e.progress] : []));
    assert.deepEqual(
      progress,
      [...progress].sort((a, b) => a - b),
      'progress only grows',
    );
    assert.ok(events.some((e) => e.type === 'log'));
    const ids = events.flatMap((e) => ('eventId' in e && e.eventId ? [e.eventId] : []));
    assert.equal(new Set(ids).size, ids.length, 'no event twice');
    const result = events.find((e) => e.type === 'result');
    assert.ok(result?.type === 'result');
    assert.equal(result.results[0]?.contentType, 'audio/mpeg');

    const end = events.at(-1)!;
    assert.ok(end.type === 'end');
    assert.equal(end.job.status, 'succeeded');
    assert.equal(end.job.progress, 1);
    const files = end.job.outputs?.results ?? [];
    assert.deepEqual(
      files.map((f) => f.contentType),
      ['audio/mpeg', 'text/vtt', 'application/json', 'text/markdown'],
    );

    const mp3 = path.join(downloads, `${accepted.jobId}.mp3`);
    const downloaded = await client.downloadOutput(files[0]!.url, mp3);
    assert.equal(downloaded.contentType, 'audio/mpeg');
    const bytes = readFileSync(mp3);
    assert.equal(bytes.length, downloaded.bytes);
    assert.ok(bytes.length > 1000);
    assert.ok(startsWithMpegFrame(bytes), 'an MP3');
    const vtt = await client.downloadOutput(files[1]!.url, path.join(downloads, `${accepted.jobId}.vtt`));
    assert.match(readFileSync(vtt.path, 'utf8'), /^WEBVTT/);
  });

  it('resumes the stream after a given event with Last-Event-ID: only later events come', async () => {
    const { jobId } = await client.submitArticle({ model_id: 'article-audio-1-mini', text: TEXT });
    const all = await collect(client.followJob(jobId, { transport: 'stream' }));
    const withIds = all.filter((e) => 'eventId' in e && e.eventId);
    assert.ok(withIds.length >= 3);
    const from = withIds[1]!;
    const rest = await collect(
      client.followJob(jobId, { transport: 'stream', lastEventId: (from as { eventId: string }).eventId }),
    );
    const restIds = rest.flatMap((e) => ('eventId' in e && e.eventId ? [e.eventId] : []));
    assert.deepEqual(
      restIds,
      withIds.slice(2).map((e) => (e as { eventId: string }).eventId),
    );
    assert.equal(server(rest), 'stream');
    assert.equal(rest.at(-1)!.type, 'end');
  });

  it('an Idempotency-Key submitted twice gives the same job', async () => {
    const key = `client-engine-${randomBytes(6).toString('hex')}`;
    const first = await client.submitArticle({ model_id: 'article-audio-1-mini', text: TEXT }, { idempotencyKey: key });
    const second = await client.submitArticle(
      { model_id: 'article-audio-1-mini', text: TEXT },
      { idempotencyKey: key },
    );
    assert.equal(second.jobId, first.jobId);
    await client.waitForJob(first.jobId, { deadline: Date.now() + 30_000 });
  });

  it('a failed job rejects waitForJob with its error details', async () => {
    const { jobId } = await client.submitArticle({ model_id: 'article-audio-1-pro', text: `${TEXT} FAIL:too_short` });
    const { error } = await client.waitForJob(jobId, { deadline: Date.now() + 30_000 }).then(
      () => assert.fail('the job should fail'),
      (e: unknown) => ({ error: e }),
    );
    assert.ok(error instanceof JobFailedError);
    assert.equal(error.jobError.code, 'too_short');
    assert.match(error.message, new RegExp(`^Job ${jobId} failed \\(too_short\\): `));
  });

  it("cancels a running job; a full queue is the engine's 429, a RateLimitError with Retry-After", async () => {
    const held = await client.submitArticle({ model_id: 'article-audio-1-mini', text: `HOLD ${TEXT}` });
    // One job runs (held), one may wait (queue depth 1), the next is refused.
    const waiting = await client.submitArticle({ model_id: 'article-audio-1-mini', text: `HOLD ${TEXT} 2` });
    const impatient = new JobServiceClient({ baseUrl: engine.url, apiKey: TOKEN, retryAfterCapMs: 1 });
    const refused = await impatient.submitArticle({ model_id: 'article-audio-1-mini', text: TEXT }).then(
      () => assert.fail('the queue is full'),
      (e: unknown) => e,
    );
    assert.ok(refused instanceof RateLimitError, String(refused));
    assert.equal(refused.status, 429);
    assert.ok((refused.retryAfterMs ?? 0) > 0);

    for (const id of [held.jobId, waiting.jobId]) {
      const cancelled = await client.cancelJob(id);
      assert.equal(cancelled.supported, true);
      const { error } = await client.waitForJob(id, { deadline: Date.now() + 30_000 }).then(
        () => assert.fail('cancelled'),
        (e: unknown) => ({ error: e }),
      );
      assert.ok(error instanceof JobFailedError);
      assert.equal(error.jobError.code, 'cancelled');
    }
  });

  it("maps the engine's errors: a wrong key is an AuthenticationError, an unknown job a NotFoundError", async () => {
    const stranger = new JobServiceClient({ baseUrl: engine.url, apiKey: 'not-the-token' });
    const denied = await stranger.getJob('anything').then(
      () => assert.fail('denied'),
      (e: unknown) => e,
    );
    assert.ok(denied instanceof AuthenticationError);
    assert.equal(denied.status, 401);
    const unknown = await client.getJob('no-such-job').then(
      () => assert.fail('unknown'),
      (e: unknown) => e,
    );
    assert.ok(unknown instanceof NotFoundError);
    const followUnknown = await collect(client.followJob('no-such-job')).then(
      () => assert.fail('unknown'),
      (e: unknown) => e,
    );
    assert.ok(followUnknown instanceof NotFoundError, String(followUnknown));
    for (const line of logs) assert.ok(!line.includes(TOKEN), 'no token in the log');
  });
});
