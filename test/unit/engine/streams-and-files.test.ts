// Stream replay and heartbeats, and output files with ETag and ranges, through the engine's HTTP API in process.
import * as assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { parseRange, rangeStillValid } from '../../../src/engine/http/output-file';
import { articleText, call, waitForJob } from '../../support/http-calls';
import { assertNotMoreOften, openStream } from '../../support/sse-reader';
import { silentMp3 } from '../../support/test-pipeline';
import { type EngineFixture, TOKEN, gate, startFixture } from './engine-fixture';

describe('engine: stream replay and heartbeats', () => {
  let fixture: EngineFixture | undefined;
  afterEach(async () => {
    await fixture?.dispose();
    fixture = undefined;
  });

  it('replays only later events after Last-Event-ID, the whole history to a new connection, and 204 when nothing is left', async () => {
    fixture = await startFixture();
    const id = (await fixture.calls.submit({ model_id: 'article-audio-1-mini', text: articleText() })).jobId;
    const first = await openStream(`${fixture.engine.url}/v1/jobs/${id}/stream`, TOKEN);
    await first.done;
    const all = first.events;
    assert.ok(all.length >= 8);

    const resumed = await openStream(`${fixture.engine.url}/v1/jobs/${id}/stream`, TOKEN, '3');
    await resumed.done;
    assert.deepEqual(
      resumed.events.map((e) => e.id),
      all.slice(3).map((e) => e.id),
    );
    assert.deepEqual(
      resumed.events.map((e) => e.data),
      all.slice(3).map((e) => e.data),
    );

    const fresh = await openStream(`${fixture.engine.url}/v1/jobs/${id}/stream`, TOKEN);
    await fresh.done;
    assert.deepEqual(
      fresh.events.map((e) => `${e.id}${e.event}${e.data}`),
      all.map((e) => `${e.id}${e.event}${e.data}`),
    );

    const garbage = await openStream(`${fixture.engine.url}/v1/jobs/${id}/stream`, TOKEN, 'not-a-number');
    await garbage.done;
    assert.equal(garbage.events.length, all.length);

    const nothingLeft = await openStream(`${fixture.engine.url}/v1/jobs/${id}/stream`, TOKEN, all.at(-1)?.id);
    await nothingLeft.done;
    assert.equal(nothingLeft.response.status, 204);
    assert.equal(nothingLeft.events.length, 0);
  });

  it('delivers live events to a follower that joined mid-job, after its backlog, without duplicates', async () => {
    const hold = gate();
    fixture = await startFixture({
      pipelineOptions: { hold: () => hold.promise, steps: 4, stepMs: 20 },
      progressIntervalMs: 10,
    });
    const id = (await fixture.calls.submit({ model_id: 'article-audio-1-mini', text: articleText() })).jobId;
    await waitForJob(fixture.calls, id, (job) => job.status === 'processing');
    const early = await openStream(`${fixture.engine.url}/v1/jobs/${id}/stream`, TOKEN);
    await early.next((e) => e.event === 'log' && e.data.includes('Reading'), 'the pipeline log line');
    const since = Number(early.lastId);
    const middle = await openStream(`${fixture.engine.url}/v1/jobs/${id}/stream`, TOKEN, String(since));
    hold.open();
    await Promise.all([early.done, middle.done]);
    const ids = early.events.map((e) => Number(e.id));
    assert.deepEqual(
      ids,
      [...new Set(ids)].sort((a, b) => a - b),
    );
    assert.deepEqual(
      middle.events.map((e) => e.id),
      early.events.filter((e) => Number(e.id) > since).map((e) => e.id),
    );
    assert.equal(middle.events.at(-1)?.event, 'end');
  });

  it('sends a comment heartbeat at the configured interval while a job is running', async () => {
    const hold = gate();
    fixture = await startFixture({ heartbeatMs: 100, pipelineOptions: { hold: () => hold.promise } });
    const id = (await fixture.calls.submit({ model_id: 'article-audio-1-mini', text: articleText() })).jobId;
    const opened = performance.now();
    const stream = await openStream(`${fixture.engine.url}/v1/jobs/${id}/stream`, TOKEN);
    // At the default (15 s) five would take a minute; no bound on single gaps (a late timer and the next on time).
    await stream.until(() => stream.comments.length >= 5, 'five heartbeats', 20_000);
    assert.ok(stream.comments.every((c) => c.text.trim() === 'heartbeat'));
    assertNotMoreOften(stream.comments, opened, 100);
    hold.open();
    await stream.done;
  });

  it('ends open streams with a final event when the engine stops, and the job continues after a restart', async () => {
    const hold = gate();
    fixture = await startFixture({ pipelineOptions: { hold: () => hold.promise } });
    const id = (await fixture.calls.submit({ model_id: 'article-audio-1-mini', text: articleText() })).jobId;
    await waitForJob(fixture.calls, id, (job) => job.status === 'processing');
    const stream = await openStream(`${fixture.engine.url}/v1/jobs/${id}/stream`, TOKEN);
    await stream.next((e) => e.data.includes('Reading'), 'the pipeline log line');
    const closing = fixture.engine.close();
    await stream.done;
    await closing;
    assert.equal(stream.error, undefined, 'the stream broke instead of ending');
    const last = stream.events.at(-1);
    assert.equal(last?.event, 'status');
    assert.equal((JSON.parse(last?.data ?? '{}') as { status: string }).status, 'queued');
    assert.match(stream.events.at(-2)?.data ?? '', /engine is stopping/);

    hold.open();
    const again = await fixture.restart();
    try {
      await waitForJob(again.calls, id, (job) => job.status === 'succeeded');
      const resumed = await openStream(`${again.engine.url}/v1/jobs/${id}/stream`, TOKEN, last?.id);
      await resumed.done;
      assert.equal(Number(resumed.events[0]?.id), Number(last?.id) + 1);
      assert.equal(resumed.events.at(-1)?.data, 'succeeded');
    } finally {
      await again.engine.close();
    }
  });

  it('answers 503 to requests that arrive while it stops', async () => {
    const hold = gate();
    fixture = await startFixture({
      pipelineOptions: { hold: () => hold.promise, ignoreAbort: true },
      stopTimeoutMs: 400,
    });
    const id = (await fixture.calls.submit({ model_id: 'article-audio-1-mini', text: articleText() })).jobId;
    await waitForJob(fixture.calls, id, (job) => job.status === 'processing');
    // Keep one connection open so the request travels over it after the listener closed.
    const { Agent, fetch: fetchVia } = await import('undici');
    const agent = new Agent({ connections: 1 });
    const url = `${fixture.engine.url}/v1/jobs/${id}`;
    const viaAgent = () => fetchVia(url, { headers: { authorization: `Bearer ${TOKEN}` }, dispatcher: agent });
    assert.equal((await viaAgent()).status, 200);
    const closing = fixture.engine.close();
    const during = await viaAgent();
    assert.equal(during.status, 503);
    assert.equal(((await during.json()) as { errors: { code: string }[] }).errors[0]?.code, 'unavailable');
    await closing;
    await agent.close();
    hold.open();
  });
});

describe('engine: output files', () => {
  let fixture: EngineFixture | undefined;
  afterEach(async () => {
    await fixture?.dispose();
    fixture = undefined;
  });

  it('serves outputs with ETag, Range (206), 416, If-Range, If-None-Match (304) and HEAD', async () => {
    fixture = await startFixture({ pipelineOptions: { audioSeconds: 3 } });
    const id = (await fixture.calls.submit({ model_id: 'article-audio-1-mini', text: articleText() })).jobId;
    const job = await waitForJob(fixture.calls, id, (j) => j.status === 'succeeded');
    const url = job.outputs?.results[0]?.url ?? '';
    const expected = silentMp3(3);
    const auth = { authorization: `Bearer ${TOKEN}` };

    const whole = await fetch(url, { headers: auth });
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('content-type'), 'audio/mpeg');
    assert.equal(whole.headers.get('accept-ranges'), 'bytes');
    const etag = whole.headers.get('etag') ?? '';
    assert.match(etag, /^"[A-Za-z0-9_-]+"$/);
    assert.ok(Buffer.from(await whole.arrayBuffer()).equals(expected));

    const part = await fetch(url, { headers: { ...auth, range: 'bytes=100-199' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes 100-199/${expected.length}`);
    assert.ok(Buffer.from(await part.arrayBuffer()).equals(expected.subarray(100, 200)));

    const tail = await fetch(url, { headers: { ...auth, range: 'bytes=-10' } });
    assert.equal(tail.status, 206);
    assert.ok(Buffer.from(await tail.arrayBuffer()).equals(expected.subarray(expected.length - 10)));

    const outside = await call(url, { headers: { ...auth, range: `bytes=${expected.length}-` } });
    assert.equal(outside.status, 416);
    assert.equal(outside.headers.get('content-range'), `bytes */${expected.length}`);
    assert.equal(outside.errors[0]?.code, 'range_not_satisfiable');

    const stale = await fetch(url, { headers: { ...auth, range: 'bytes=0-9', 'if-range': '"other"' } });
    assert.equal(stale.status, 200);
    assert.equal((await stale.arrayBuffer()).byteLength, expected.length);
    const current = await fetch(url, { headers: { ...auth, range: 'bytes=0-9', 'if-range': etag } });
    assert.equal(current.status, 206);
    await current.arrayBuffer();

    const cached = await fetch(url, { headers: { ...auth, 'if-none-match': etag } });
    assert.equal(cached.status, 304);

    const head = await fetch(url, { method: 'HEAD', headers: auth });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), String(expected.length));

    const transcript = await fetch(job.outputs?.results[1]?.url ?? '', { headers: auth });
    assert.match(await transcript.text(), /^WEBVTT/);
    assert.equal(
      (await fixture.calls.get(`/v1/jobs/${id}/outputs/scratch.tmp`)).status,
      404,
      'a file the pipeline did not list was served',
    );
    assert.equal((await fixture.calls.get(`/v1/jobs/${id}/outputs/..%2Fjob.json`)).status, 404);
  });

  it('does not serve outputs of a job that has not succeeded', async () => {
    const hold = gate();
    fixture = await startFixture({ pipelineOptions: { hold: () => hold.promise } });
    const id = (await fixture.calls.submit({ model_id: 'article-audio-1-mini', text: articleText() })).jobId;
    assert.equal((await fixture.calls.get(`/v1/jobs/${id}/outputs/audio.mp3`)).status, 404);
    hold.open();
  });
});

describe('engine: range parsing', () => {
  it('parses single byte ranges and rejects or ignores the rest as RFC 9110 says', () => {
    assert.deepEqual(parseRange('bytes=0-0', 10), { start: 0, end: 0 });
    assert.deepEqual(parseRange('bytes=5-', 10), { start: 5, end: 9 });
    assert.deepEqual(parseRange('bytes=5-100', 10), { start: 5, end: 9 });
    assert.deepEqual(parseRange('bytes=-3', 10), { start: 7, end: 9 });
    assert.deepEqual(parseRange('bytes=-30', 10), { start: 0, end: 9 });
    assert.deepEqual(parseRange('BYTES=1-2', 10), { start: 1, end: 2 });
    assert.equal(parseRange('bytes=10-', 10), 'unsatisfiable');
    assert.equal(parseRange('bytes=-0', 10), 'unsatisfiable');
    assert.equal(parseRange('bytes=0-', 0), 'unsatisfiable');
    for (const ignored of [undefined, 'bytes=5-1', 'bytes=-', 'bytes=1-2,4-5', 'items=0-1', 'bytes=a-b', 'bytes 0-1']) {
      assert.equal(parseRange(ignored, 10), undefined, String(ignored));
    }
  });

  it('honours If-Range only when the validator matches exactly', () => {
    const modified = new Date('2026-01-02T03:04:05.678Z');
    assert.equal(rangeStillValid(undefined, '"a"', modified), true);
    assert.equal(rangeStillValid('"a"', '"a"', modified), true);
    assert.equal(rangeStillValid('W/"a"', '"a"', modified), false);
    assert.equal(rangeStillValid('"b"', '"a"', modified), false);
    assert.equal(rangeStillValid(modified.toUTCString(), '"a"', modified), true);
    assert.equal(rangeStillValid(new Date(modified.getTime() - 5000).toUTCString(), '"a"', modified), false);
    assert.equal(rangeStillValid('yesterday', '"a"', modified), false);
  });
});
