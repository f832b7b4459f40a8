// The job lifecycle through the engine's HTTP API, in process with the test pipeline: submission, status bodies in
// every state, the stream, cancel, failures, idempotency, per-token visibility, the queue limit and retention.
import * as assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { articleText, waitForJob } from '../../support/http-calls';
import { openStream } from '../../support/sse-reader';
import { type EngineFixture, TOKEN, gate, startFixture } from './engine-fixture';

const SPEC_FIELDS = ['id', 'status', 'created_at', 'progress', 'outputs', 'error'];

describe('engine: job lifecycle', () => {
  let fixture: EngineFixture | undefined;
  afterEach(async () => {
    await fixture?.dispose();
    fixture = undefined;
  });

  it('accepts a job with 202, Location and the accepted envelope, and runs it to success', async () => {
    fixture = await startFixture();
    const answer = await fixture.calls.submit({ model_id: 'article-audio-1-pro', text: articleText() });
    assert.equal(answer.status, 202);
    const id = answer.jobId;
    assert.match(id, /^[0-9a-f-]{36}$/);
    assert.equal(answer.headers.get('location'), `/v1/jobs/${id}`);
    assert.deepEqual(answer.body, {
      data: { job_id: id, links: { self: `/v1/jobs/${id}`, stream: `/v1/jobs/${id}/stream` } },
      errors: null,
    });

    const job = await waitForJob(fixture.calls, id, (job) => job.status === 'succeeded');
    for (const field of SPEC_FIELDS) assert.ok(field in job, `succeeded body lacks ${field}`);
    assert.equal(job.progress, 1);
    assert.equal(job.error, null);
    assert.deepEqual(
      job.outputs?.results.map((r) => r.content_type),
      ['audio/mpeg', 'text/vtt', 'application/json', 'text/markdown'],
    );
    for (const result of job.outputs?.results ?? [])
      assert.ok(result.url.startsWith(`${fixture.engine.url}/v1/jobs/${id}/outputs/`));
    assert.equal(job.outputs?.results[0]?.duration_s, 2);
    assert.equal(answer.headers.get('x-request-id')?.length, 12);
    // The text leaves memory when the job ends, but stays in the record on disk.
    const onDisk = JSON.parse(readFileSync(path.join(fixture.dataDir, 'jobs', id, 'job.json'), 'utf8')) as {
      request: { text: string };
    };
    assert.equal(onDisk.request.text, articleText());
    assert.equal(((await fixture.calls.get(`/v1/jobs/${id}`)).body as { errors: unknown }).errors, null);
  });

  it('carries every spec field in the queued, processing and failed states', async () => {
    const hold = gate();
    fixture = await startFixture({ concurrency: 1, pipelineOptions: { hold: () => hold.promise } });
    const first = (await fixture.calls.submit({ model_id: 'article-audio-1-mini', text: articleText() })).jobId;
    const second = (
      await fixture.calls.submit({ model_id: 'article-audio-1-mini', text: `${articleText()} FAIL:too_long` })
    ).jobId;
    const processing = await waitForJob(fixture.calls, first, (job) => job.status === 'processing');
    const queued = (await fixture.calls.get(`/v1/jobs/${second}`)).job;
    assert.equal(queued.status, 'queued');
    for (const body of [processing, queued]) {
      for (const field of SPEC_FIELDS) assert.ok(field in body, `${body.status} body lacks ${field}`);
      assert.equal(body.outputs, null);
      assert.equal(body.error, null);
      assert.ok(body.progress >= 0 && body.progress < 1);
    }
    hold.open();
    const failed = await waitForJob(fixture.calls, second, (job) => job.status === 'failed');
    for (const field of SPEC_FIELDS) assert.ok(field in failed, `failed body lacks ${field}`);
    assert.deepEqual(failed.error, { code: 'too_long', message: 'Failing on request (too_long).' });
    assert.equal(failed.outputs, null);
  });

  it('streams the history in the spec order with increasing ids, sends retry once, and closes after end', async () => {
    fixture = await startFixture({ pipelineOptions: { steps: 6, stepMs: 30 }, progressIntervalMs: 20 });
    const id = (await fixture.calls.submit({ model_id: 'article-audio-1-mini', text: articleText() })).jobId;
    const stream = await openStream(`${fixture.engine.url}/v1/jobs/${id}/stream`, TOKEN);
    assert.equal(stream.response.status, 200);
    assert.match(stream.response.headers.get('content-type') ?? '', /^text\/event-stream/);
    await stream.done;
    assert.equal(stream.error, undefined);
    assert.equal(stream.retries.length, 1);
    const events = stream.events;
    assert.deepEqual(
      events.map((e) => Number(e.id)),
      events.map((_, i) => i + 1),
    );
    assert.equal(events[0]?.event, 'status');
    assert.deepEqual(
      events.slice(-3).map((e) => e.event),
      ['log', 'result', 'end'],
    );
    assert.equal(events.at(-1)?.data, 'succeeded');
    const statuses = events
      .filter((e) => e.event === 'status')
      .map((e) => JSON.parse(e.data) as { status: string; progress: number; output: unknown });
    assert.deepEqual([...new Set(statuses.map((s) => s.status))], ['queued', 'processing', 'succeeded']);
    const progress = statuses.map((s) => s.progress);
    assert.deepEqual(
      progress,
      [...progress].sort((a, b) => a - b),
      'progress went backwards',
    );
    assert.ok(progress.filter((p) => p > 0 && p < 1).length >= 2, 'expected intermediate progress events');
    assert.equal(statuses.at(-1)?.progress, 1);
    for (const s of statuses.slice(0, -1)) assert.equal(s.output, null);
    const log = JSON.parse(events.find((e) => e.event === 'log')?.data ?? '{}') as Record<string, unknown>;
    assert.deepEqual(Object.keys(log).sort(), ['created_at', 'level', 'message']);
    const result = JSON.parse(events.find((e) => e.event === 'result')?.data ?? '{}') as Record<string, unknown>;
    assert.deepEqual(result.images, []);
    assert.equal(result.model_id, 'article-audio-1-mini');
    assert.equal(typeof result.style_id, 'number');
    assert.equal(typeof result.request_duration_s, 'number');
    assert.equal((result.results as unknown[]).length, 4);
  });

  it('rate-limits progress: a pipeline reporting on every tick yields few, monotonic events below 1', async () => {
    fixture = await startFixture({ pipelineOptions: { steps: 200, stepMs: 1 }, progressIntervalMs: 100 });
    const id = (await fixture.calls.submit({ model_id: 'article-audio-1-mini', text: articleText() })).jobId;
    const stream = await openStream(`${fixture.engine.url}/v1/jobs/${id}/stream`, TOKEN);
    await stream.done;
    const processing = stream.events
      .filter((e) => e.event === 'status')
      .map((e) => JSON.parse(e.data) as { status: string; progress: number });
    const during = processing.filter((s) => s.status === 'processing');
    assert.ok(during.length >= 1 && during.length < 40, `expected few progress events, got ${during.length}`);
    for (const s of during) assert.ok(s.progress < 1);
    const values = processing.map((s) => s.progress);
    assert.deepEqual(
      values,
      [...values].sort((a, b) => a - b),
    );
  });

  it('cancels a queued job and a processing job; a finished job stays as it is', async () => {
    const hold = gate();
    fixture = await startFixture({ concurrency: 1, pipelineOptions: { hold: () => hold.promise } });
    const running = (await fixture.calls.submit({ model_id: 'article-audio-1-mini', text: articleText() })).jobId;
    const waiting = (await fixture.calls.submit({ model_id: 'article-audio-1-mini', text: articleText() })).jobId;
    await waitForJob(fixture.calls, running, (job) => job.status === 'processing');
    const stream = await openStream(`${fixture.engine.url}/v1/jobs/${running}/stream`, TOKEN);

    const cancelWaiting = await fixture.calls.post(`/v1/jobs/${waiting}/cancel`);
    assert.equal(cancelWaiting.status, 200);
    assert.equal(cancelWaiting.job.status, 'failed');
    assert.deepEqual(cancelWaiting.job.error, { code: 'cancelled', message: 'The job was cancelled.' });

    const cancelRunning = await fixture.calls.post(`/v1/jobs/${running}/cancel`);
    assert.equal(cancelRunning.status, 200);
    assert.equal(cancelRunning.job.error?.code, 'cancelled');
    await stream.done;
    assert.equal(stream.events.at(-1)?.event, 'end');
    assert.equal(stream.events.at(-1)?.data, 'failed');
    const failedStatus = JSON.parse(stream.events.at(-3)?.data ?? '{}') as { status: string; error: { code: string } };
    assert.equal(failedStatus.status, 'failed');
    assert.equal(failedStatus.error.code, 'cancelled');

    // The slot is free again: a new job runs to the end.
    hold.open();
    const next = (await fixture.calls.submit({ model_id: 'article-audio-1-mini', text: articleText() })).jobId;
    await waitForJob(fixture.calls, next, (job) => job.status === 'succeeded');
    const again = await fixture.calls.post(`/v1/jobs/${next}/cancel`);
    assert.equal(again.status, 200);
    assert.equal(again.job.status, 'succeeded');
    const stillCancelled = await fixture.calls.get(`/v1/jobs/${waiting}`);
    assert.equal(stillCancelled.job.error?.code, 'cancelled');
  });

  it('fails a job whose pipeline throws unexpectedly with code internal, and one with a bad output name without touching files outside', async () => {
    fixture = await startFixture({
      pipeline: {
        run(input, context) {
          if (input.text?.includes('THROW')) return Promise.reject(new TypeError('boom'));
          context.log('info', 'about to name a file outside the job');
          return Promise.resolve({ durationS: 1, files: [{ name: '../../escape.mp3', contentType: 'audio/mpeg' }] });
        },
        close: () => Promise.resolve(),
      },
    });
    const thrown = (await fixture.calls.submit({ model_id: 'article-audio-1-mini', text: `${articleText()} THROW` }))
      .jobId;
    const escaping = (await fixture.calls.submit({ model_id: 'article-audio-1-mini', text: articleText() })).jobId;
    const a = await waitForJob(fixture.calls, thrown, (job) => job.status === 'failed');
    assert.equal(a.error?.code, 'internal');
    assert.match(a.error?.message ?? '', /boom/);
    const b = await waitForJob(fixture.calls, escaping, (job) => job.status === 'failed');
    assert.equal(b.error?.code, 'internal');
    assert.equal(existsSync(path.join(fixture.dataDir, 'escape.mp3')), false);
  });

  it('returns the original job for a repeated Idempotency-Key of the same token, and refuses the key for another request', async () => {
    fixture = await startFixture();
    const body = { model_id: 'article-audio-1-mini', text: articleText() };
    const [one, two] = await Promise.all([
      fixture.calls.submit(body, { 'idempotency-key': 'key-1' }),
      fixture.calls.submit(body, { 'idempotency-key': 'key-1' }),
    ]);
    assert.equal(one.status, 202);
    assert.equal(two.status, 202);
    assert.equal(one.jobId, two.jobId, 'two concurrent submissions with one key made two jobs');
    const later = await fixture.calls.submit(body, { 'idempotency-key': 'key-1' });
    assert.equal(later.jobId, one.jobId);
    assert.equal(later.headers.get('idempotent-replayed'), 'true');

    const otherToken = await fixture.other.submit(body, { 'idempotency-key': 'key-1' });
    assert.equal(otherToken.status, 202);
    assert.notEqual(otherToken.jobId, one.jobId);

    const different = await fixture.calls.submit(
      { ...body, model_id: 'article-audio-1-pro' },
      { 'idempotency-key': 'key-1' },
    );
    assert.equal(different.status, 422);
    assert.equal(different.errors[0]?.field, 'Idempotency-Key');

    const bad = await fixture.calls.submit(body, { 'idempotency-key': 'has space' });
    assert.equal(bad.status, 422);
    assert.equal(bad.errors[0]?.field, 'Idempotency-Key');
  });

  it('shows a job only to the token that created it', async () => {
    fixture = await startFixture();
    const id = (await fixture.calls.submit({ model_id: 'article-audio-1-mini', text: articleText() })).jobId;
    const done = await waitForJob(fixture.calls, id, (job) => job.status === 'succeeded');
    const audio = done.outputs?.results[0]?.url ?? '';
    for (const answer of [
      await fixture.other.get(`/v1/jobs/${id}`),
      await fixture.other.get(`/v1/jobs/${id}/stream`),
      await fixture.other.post(`/v1/jobs/${id}/cancel`),
      await fixture.other.get(audio),
    ]) {
      assert.equal(answer.status, 404);
      assert.equal(answer.errors[0]?.code, 'not_found');
    }
  });

  it('answers 429 with Retry-After once the queue is full, counting submissions in flight', async () => {
    const hold = gate();
    fixture = await startFixture({ concurrency: 1, queueDepth: 3, pipelineOptions: { hold: () => hold.promise } });
    const first = (await fixture.calls.submit({ model_id: 'article-audio-1-mini', text: articleText() })).jobId;
    await waitForJob(fixture.calls, first, (job) => job.status === 'processing');
    const calls = fixture.calls;
    const burst = await Promise.all(
      Array.from({ length: 10 }, () => calls.submit({ model_id: 'article-audio-1-mini', text: articleText() })),
    );
    const statuses = burst.map((a) => a.status).sort();
    assert.deepEqual(statuses, [202, 202, 202, 429, 429, 429, 429, 429, 429, 429]);
    const refused = burst.find((a) => a.status === 429);
    assert.ok(refused);
    assert.equal(refused.errors[0]?.code, 'too_many_jobs');
    assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    hold.open();
  });

  it('forgets finished jobs after the retention time: 404 and files removed', async () => {
    fixture = await startFixture({ retentionMs: 600 });
    const id = (await fixture.calls.submit({ model_id: 'article-audio-1-mini', text: articleText() })).jobId;
    await waitForJob(fixture.calls, id, (job) => job.status === 'succeeded');
    const jobDir = path.join(fixture.dataDir, 'jobs', id);
    assert.ok(existsSync(jobDir));
    await new Promise((resolve) => setTimeout(resolve, 700));
    const gone = await fixture.calls.get(`/v1/jobs/${id}`);
    assert.equal(gone.status, 404);
    const deadline = Date.now() + 3000;
    while (existsSync(jobDir) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(existsSync(jobDir), false, 'the expired job folder is still there');
  });
});
