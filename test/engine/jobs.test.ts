// Black-box: the real `article-audio serve` process, driven over HTTP with plain fetch, through every endpoint:
// submission, status in every state, the stream (ids, replay, heartbeats), cancel, idempotency, per-token
// visibility, the queue limit, and output files with ETag and ranges. Jobs are held in `processing` by giving them a
// page on a loopback server that answers only when the test releases it.
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type EngineProcess, startEngineProcess } from '../support/engine-process';
import { type ServiceCalls, type WireJob, call, serviceCalls, waitForJob } from '../support/http-calls';
import { assertNotMoreOften, openStream } from '../support/sse-reader';
import { type ArticleServer, startArticleServer } from '../support/article-server';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ARTICLE_TEXT = readFileSync(path.join(__dirname, 'fixtures', 'article.md'), 'utf8');
const SPEC_FIELDS = ['id', 'status', 'created_at', 'progress', 'outputs', 'error'];
const mini = 'article-audio-1-mini';

function assertSpecFields(job: WireJob): void {
  for (const field of SPEC_FIELDS) assert.ok(field in job, `a ${job.status} job lacks ${field}`);
  assert.ok(typeof job.progress === 'number' && job.progress >= 0 && job.progress <= 1);
  assert.ok(!Number.isNaN(Date.parse(job.created_at)));
}

function isMp3(bytes: Buffer): boolean {
  return bytes.subarray(0, 3).toString('latin1') === 'ID3' || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0);
}

describe('engine process: jobs over HTTP', () => {
  let pages: ArticleServer;
  let engine: EngineProcess;
  let calls: ServiceCalls;
  let other: ServiceCalls;
  let token: string;
  /** A finished job shared by the replay and file tests. */
  let finished: WireJob;

  before(async () => {
    pages = await startArticleServer();
    engine = await startEngineProcess({ args: ['--concurrency', '1', '--queue-depth', '2', '--heartbeat-s', '0.2'] });
    token = engine.tokens[0] as string;
    calls = serviceCalls(engine.url, token);
    other = serviceCalls(engine.url, engine.tokens[1] as string);
  });
  after(async () => {
    await engine.dispose();
    await pages.close();
  });

  it('runs jobs through queued, processing and succeeded, every spec field in every state, events in order', async () => {
    const page = pages.hold('lifecycle');
    const first = await calls.submit({ model_id: mini, url: page.url });
    assert.equal(first.status, 202);
    const held = first.jobId;
    assert.equal(first.headers.get('location'), `/v1/jobs/${held}`);
    assert.deepEqual(first.body, {
      data: { job_id: held, links: { self: `/v1/jobs/${held}`, stream: `/v1/jobs/${held}/stream` } },
      errors: null,
    });
    await page.requested;
    const processing = await waitForJob(calls, held, (j) => j.status === 'processing');
    assertSpecFields(processing);
    assert.equal(processing.outputs, null);
    assert.equal(processing.error, null);

    const second = (await calls.submit({ model_id: mini, text: ARTICLE_TEXT })).jobId;
    const queued = (await calls.get(`/v1/jobs/${second}`)).job;
    assert.equal(queued.status, 'queued');
    assertSpecFields(queued);
    assert.equal(queued.outputs, null);
    assert.equal(queued.error, null);

    const stream = await openStream(`${engine.url}/v1/jobs/${second}/stream`, token);
    assert.equal(stream.response.status, 200);
    assert.match(stream.response.headers.get('content-type') ?? '', /^text\/event-stream/);
    page.release();
    await stream.done;
    assert.equal(stream.error, undefined);
    assert.equal(stream.retries.length, 1, 'retry: should be sent exactly once');
    assert.deepEqual(
      stream.events.map((e) => Number(e.id)),
      stream.events.map((_, i) => i + 1),
    );
    const names = stream.events.map((e) => e.event);
    assert.equal(names[0], 'status');
    assert.deepEqual(names.slice(-2), ['result', 'end']);
    assert.equal(stream.events.at(-1)?.data, 'succeeded');
    assert.ok(names.includes('log'));
    const statuses = stream.events
      .filter((e) => e.event === 'status')
      .map((e) => JSON.parse(e.data) as { status: string; progress: number; output: unknown });
    const progress = statuses.map((s) => s.progress);
    assert.deepEqual(
      progress,
      [...progress].sort((a, b) => a - b),
      'progress went backwards',
    );
    assert.equal(statuses.at(-1)?.status, 'succeeded');
    assert.equal(statuses.at(-1)?.progress, 1);
    for (const s of statuses.filter((x) => x.status !== 'succeeded')) assert.equal(s.output, null);
    for (const log of stream.events.filter((e) => e.event === 'log')) {
      const data = JSON.parse(log.data) as { level: string; message: string; created_at: string };
      assert.ok(['debug', 'info', 'warn', 'error'].includes(data.level));
      assert.equal(typeof data.message, 'string');
      assert.ok(!Number.isNaN(Date.parse(data.created_at)));
    }
    const result = JSON.parse(stream.events.at(-2)?.data ?? '{}') as Record<string, unknown>;
    assert.deepEqual(result.images, []);
    assert.equal(result.model_id, mini);
    assert.equal(typeof result.style_id, 'number');
    assert.equal(typeof result.request_duration_s, 'number');

    finished = await waitForJob(calls, second, (j) => j.status === 'succeeded');
    assertSpecFields(finished);
    assert.equal(finished.progress, 1);
    assert.equal(finished.error, null);
    assert.deepEqual(
      finished.outputs?.results.map((r) => r.content_type),
      ['audio/mpeg', 'text/vtt', 'application/json', 'text/markdown'],
    );
    assert.deepEqual(result.results, finished.outputs?.results);
    const audio = Buffer.from(
      await (
        await fetch(finished.outputs?.results[0]?.url ?? '', { headers: { authorization: `Bearer ${token}` } })
      ).arrayBuffer(),
    );
    assert.ok(audio.length > 2000 && isMp3(audio), `not an MP3 (${audio.length} bytes)`);
    assert.ok((finished.outputs?.results[0]?.duration_s ?? 0) > 1);
    // Additive: the article's language as the pipeline told it (issue 27), beside the title and duration.
    assert.equal((finished as unknown as { language?: unknown }).language, 'en');
    const transcript = await (
      await fetch(finished.outputs?.results[1]?.url ?? '', { headers: { authorization: `Bearer ${token}` } })
    ).text();
    assert.match(transcript, /^WEBVTT/);
    assert.match(transcript, /-->/);
    const chapters = JSON.parse(
      await (
        await fetch(finished.outputs?.results[2]?.url ?? '', { headers: { authorization: `Bearer ${token}` } })
      ).text(),
    ) as { chapters?: unknown };
    assert.ok(
      Array.isArray(chapters.chapters) && chapters.chapters.length > 0,
      'the chapter list is {duration_s, chapters: [...]}',
    );
    const fromPage = await waitForJob(calls, held, (j) => j.status === 'succeeded');
    assert.equal(fromPage.outputs?.results.length, 4);
  });

  it('replays only later events after Last-Event-ID, everything to a new connection, and 204 when nothing is left', async () => {
    const url = `${engine.url}/v1/jobs/${finished.id}/stream`;
    const all = await openStream(url, token);
    await all.done;
    const middle = Math.floor(all.events.length / 2);
    const resumed = await openStream(url, token, all.events[middle - 1]?.id);
    await resumed.done;
    assert.deepEqual(
      resumed.events.map((e) => `${e.id} ${e.event} ${e.data}`),
      all.events.slice(middle).map((e) => `${e.id} ${e.event} ${e.data}`),
    );
    const again = await openStream(url, token);
    await again.done;
    assert.deepEqual(
      again.events.map((e) => `${e.id} ${e.event} ${e.data}`),
      all.events.map((e) => `${e.id} ${e.event} ${e.data}`),
    );
    const none = await openStream(url, token, all.lastId);
    await none.done;
    assert.equal(none.response.status, 204);
  });

  it('sends a comment heartbeat every 0.2 s (--heartbeat-s) while the job waits', async () => {
    const page = pages.hold('heartbeat');
    const id = (await calls.submit({ model_id: mini, url: page.url })).jobId;
    const opened = performance.now();
    const stream = await openStream(`${engine.url}/v1/jobs/${id}/stream`, token);
    // At the default (15 s) five would take a minute. No bound on single gaps: at load 20-25 a late timer and the
    // next one on time arrived 67 ms apart (stress run A3).
    await stream.until(() => stream.comments.length >= 5, 'five heartbeats', 20_000);
    assert.ok(stream.comments.every((c) => c.text.trim() === 'heartbeat'));
    assertNotMoreOften(stream.comments, opened, 200);
    page.release();
    await stream.done;
    assert.equal(stream.events.at(-1)?.event, 'end');
  });

  it('cancels a queued and a processing job: failed with code cancelled, streams end, the slot frees up', async () => {
    const page = pages.hold('cancel');
    const running = (await calls.submit({ model_id: mini, url: page.url })).jobId;
    await page.requested;
    const waiting = (await calls.submit({ model_id: mini, text: ARTICLE_TEXT })).jobId;
    assert.equal((await calls.get(`/v1/jobs/${waiting}`)).job.status, 'queued');
    const runningStream = await openStream(`${engine.url}/v1/jobs/${running}/stream`, token);
    const waitingStream = await openStream(`${engine.url}/v1/jobs/${waiting}/stream`, token);

    const cancelledWaiting = await calls.post(`/v1/jobs/${waiting}/cancel`);
    assert.equal(cancelledWaiting.status, 200);
    assert.equal(cancelledWaiting.job.status, 'failed');
    assert.equal(cancelledWaiting.job.error?.code, 'cancelled');
    const cancelledRunning = await calls.post(`/v1/jobs/${running}/cancel`);
    assert.equal(cancelledRunning.status, 200);
    assert.equal(cancelledRunning.job.error?.code, 'cancelled');
    for (const stream of [runningStream, waitingStream]) {
      await stream.done;
      assert.equal(stream.events.at(-1)?.data, 'failed');
    }
    assert.equal((await calls.get(`/v1/jobs/${running}`)).job.error?.code, 'cancelled');
    const again = await calls.post(`/v1/jobs/${running}/cancel`);
    assert.equal(again.status, 200);
    assert.equal(again.job.error?.code, 'cancelled');

    const next = (await calls.submit({ model_id: mini, text: ARTICLE_TEXT })).jobId;
    await waitForJob(calls, next, (j) => j.status === 'succeeded', 60_000);
    page.release();
  });

  it('returns the original job for a repeated Idempotency-Key, and shows jobs only to their token', async () => {
    const body = { model_id: mini, text: ARTICLE_TEXT };
    const [a, b] = await Promise.all([
      calls.submit(body, { 'idempotency-key': 'retry-1' }),
      calls.submit(body, { 'idempotency-key': 'retry-1' }),
    ]);
    assert.equal(a.status, 202);
    assert.equal(a.jobId, b.jobId);
    const conflict = await calls.submit({ ...body, model_id: 'article-audio-1-pro' }, { 'idempotency-key': 'retry-1' });
    assert.equal(conflict.status, 422);
    assert.equal(conflict.errors[0]?.field, 'Idempotency-Key');
    const theirs = await other.submit(body, { 'idempotency-key': 'retry-1' });
    assert.notEqual(theirs.jobId, a.jobId);

    const done = await waitForJob(calls, a.jobId, (j) => j.status === 'succeeded', 60_000);
    for (const answer of [
      await other.get(`/v1/jobs/${a.jobId}`),
      await other.get(`/v1/jobs/${a.jobId}/stream`),
      await other.post(`/v1/jobs/${a.jobId}/cancel`),
      await other.get(done.outputs?.results[0]?.url ?? ''),
    ]) {
      assert.equal(answer.status, 404);
      assert.equal(answer.errors[0]?.code, 'not_found');
    }
    await waitForJob(other, theirs.jobId, (j) => j.status === 'succeeded', 60_000);
  });

  it('answers 429 too_many_jobs with Retry-After when the queue (--queue-depth 2) is full', async () => {
    const page = pages.hold('queue');
    const held = (await calls.submit({ model_id: mini, url: page.url })).jobId;
    await page.requested;
    const accepted = [held];
    for (let i = 0; i < 2; i++) {
      const answer = await calls.submit({ model_id: mini, text: ARTICLE_TEXT });
      assert.equal(answer.status, 202);
      accepted.push(answer.jobId);
    }
    const refused = await calls.submit({ model_id: mini, text: ARTICLE_TEXT });
    assert.equal(refused.status, 429);
    assert.equal(refused.errors[0]?.code, 'too_many_jobs');
    assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    page.release();
    for (const id of accepted) await waitForJob(calls, id, (j) => j.status === 'succeeded', 60_000);
    assert.equal(
      (await calls.submit({ model_id: mini, text: ARTICLE_TEXT }, { 'idempotency-key': 'after-queue' })).status,
      202,
    );
  });

  it('serves output files with ETag, Range (206), 416, If-Range, If-None-Match (304) and HEAD', async () => {
    const url = finished.outputs?.results[0]?.url ?? '';
    const auth = { authorization: `Bearer ${token}` };
    const whole = await fetch(url, { headers: auth });
    const bytes = Buffer.from(await whole.arrayBuffer());
    const etag = whole.headers.get('etag') ?? '';
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('content-type'), 'audio/mpeg');
    assert.equal(whole.headers.get('accept-ranges'), 'bytes');
    assert.match(etag, /^"[^"]+"$/);

    const part = await fetch(url, { headers: { ...auth, range: 'bytes=10-1033' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 10-1033/${bytes.length}`);
    assert.ok(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(10, 1034)));
    const tail = await fetch(url, { headers: { ...auth, range: 'bytes=-100' } });
    assert.ok(Buffer.from(await tail.arrayBuffer()).equals(bytes.subarray(bytes.length - 100)));

    const outside = await call(url, { headers: { ...auth, range: `bytes=${bytes.length + 5}-` } });
    assert.equal(outside.status, 416);
    assert.equal(outside.headers.get('content-range'), `bytes */${bytes.length}`);
    assert.equal(outside.errors[0]?.code, 'range_not_satisfiable');

    const changed = await fetch(url, { headers: { ...auth, range: 'bytes=0-99', 'if-range': '"something-else"' } });
    assert.equal(changed.status, 200);
    assert.equal(Buffer.from(await changed.arrayBuffer()).length, bytes.length);
    const same = await fetch(url, { headers: { ...auth, range: 'bytes=0-99', 'if-range': etag } });
    assert.equal(same.status, 206);
    await same.arrayBuffer();

    assert.equal((await fetch(url, { headers: { ...auth, 'if-none-match': etag } })).status, 304);
    const head = await fetch(url, { method: 'HEAD', headers: auth });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), String(bytes.length));
    assert.equal(head.headers.get('etag'), etag);
  });
});

describe('engine process: per-token limit of unfinished jobs (--token-max-jobs)', () => {
  it('answers 429 too_many_jobs with Retry-After at the limit, to that token only, and admits again once a job ends', async () => {
    const pages = await startArticleServer();
    const engine = await startEngineProcess({ args: ['--concurrency', '1', '--token-max-jobs', '2'] });
    try {
      const calls = serviceCalls(engine.url, engine.tokens[0] as string);
      const other = serviceCalls(engine.url, engine.tokens[1] as string);
      const page = pages.hold('quota');
      const held = (await calls.submit({ model_id: mini, url: page.url })).jobId;
      await page.requested;
      const queued = await calls.submit({ model_id: mini, text: ARTICLE_TEXT });
      assert.equal(queued.status, 202);
      const refused = await calls.submit({ model_id: mini, text: ARTICLE_TEXT });
      assert.equal(refused.status, 429);
      assert.deepEqual(refused.body, {
        data: null,
        errors: [{ code: 'too_many_jobs', message: refused.errors[0]?.message }],
      });
      assert.match(refused.errors[0]?.message ?? '', /2 unfinished jobs, its limit is 2/);
      assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      // Another token has its own allowance.
      assert.equal((await other.submit({ model_id: mini, text: ARTICLE_TEXT })).status, 202);
      assert.equal((await calls.post(`/v1/jobs/${held}/cancel`)).status, 200);
      assert.equal((await calls.submit({ model_id: mini, text: ARTICLE_TEXT })).status, 202);
      page.release();
    } finally {
      await engine.dispose();
      await pages.close();
    }
  });
});
