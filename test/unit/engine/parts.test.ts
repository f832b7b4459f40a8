// Audio in parts through the engine's HTTP API in process (test pipeline): result events with `part` in order,
// part files readable while the job runs and only with its token, replay after Last-Event-ID, and the client's
// followParts through streams cut at random bytes (each part once, in order).
import * as assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { type JobPart, JobServiceClient, PartSequence } from '../../../src/api';
import { seededRandom, startChaosProxy } from '../../support/chaos-proxy';
import { articleText, call, waitForJob } from '../../support/http-calls';
import { openStream } from '../../support/sse-reader';
import { silentMp3 } from '../../support/test-pipeline';
import { type EngineFixture, OTHER_TOKEN, TOKEN, gate, startFixture } from './engine-fixture';

interface WirePart {
  index: number;
  start_s: number;
  duration_s: number;
  url: string;
  transcript_url: string;
  final: boolean;
}

function part(index: number): JobPart {
  return { index, startS: index, durationS: 1, url: `http://x/${index}`, final: false };
}

describe('client: parts in order, each once', () => {
  it('delivers parts in index order, drops repeats, and holds a part that came ahead of a missing one', () => {
    const sequence = new PartSequence();
    assert.deepEqual(
      sequence.accept(part(0)).map((p) => p.index),
      [0],
    );
    assert.deepEqual(sequence.accept(part(0)), [], 'a replayed part is dropped');
    assert.deepEqual(sequence.accept(part(2)), [], 'part 2 waits for part 1');
    assert.deepEqual(sequence.accept(part(2)), [], 'and is not kept twice');
    assert.deepEqual(
      sequence.accept(part(1)).map((p) => p.index),
      [1, 2],
    );
    assert.equal(sequence.delivered, 3);
    const resumed = new PartSequence(3);
    assert.deepEqual(resumed.accept(part(1)), [], 'parts delivered before a reload are not delivered again');
    assert.deepEqual(
      resumed.accept(part(3)).map((p) => p.index),
      [3],
    );
  });
});

describe('engine: audio in parts', () => {
  let fixture: EngineFixture | undefined;
  afterEach(async () => {
    await fixture?.dispose();
    fixture = undefined;
  });

  it('announces parts in order with result events, serves them while the job runs (with its token only), and replays them', async () => {
    const held = gate();
    fixture = await startFixture({
      pipelineOptions: {
        parts: 4,
        steps: 8,
        audioSeconds: 4,
        afterPart: (index) => (index === 1 ? held.promise : undefined),
      },
    });
    const id = (await fixture.calls.submit({ model_id: 'article-audio-1-mini', text: articleText() })).jobId;
    const stream = await openStream(`${fixture.engine.url}/v1/jobs/${id}/stream`, TOKEN);
    const second = await stream.next(
      (e) => e.event === 'result' && (JSON.parse(e.data) as { part?: WirePart }).part?.index === 1,
      'part 1',
    );

    // The pipeline is held after part 1: the job is still running.
    const running = await fixture.calls.get(`/v1/jobs/${id}`);
    assert.equal(running.job.status, 'processing');
    const data = JSON.parse(second.data) as {
      part: WirePart;
      images: unknown[];
      model_id: string;
      style_id: number;
      request_duration_s: number;
      results: { url: string; content_type: string }[];
    };
    assert.deepEqual(data.images, []);
    assert.equal(data.model_id, 'article-audio-1-mini');
    assert.equal(typeof data.style_id, 'number');
    assert.equal(typeof data.request_duration_s, 'number');
    assert.ok(data.part.url.startsWith(fixture.engine.url), `the part's address is absolute: ${data.part.url}`);
    assert.ok(
      data.part.transcript_url.startsWith(fixture.engine.url),
      `the transcript's address is absolute: ${data.part.transcript_url}`,
    );
    assert.deepEqual(
      data.results.map((r) => [r.url, r.content_type]),
      [
        [data.part.url, 'audio/mpeg'],
        [data.part.transcript_url, 'text/vtt'],
      ],
    );
    const audio = await call(data.part.url, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(audio.status, 200);
    assert.equal(audio.headers.get('content-type'), 'audio/mpeg');
    assert.ok(audio.headers.get('etag'));
    const ranged = await call(data.part.url, { headers: { authorization: `Bearer ${TOKEN}`, range: 'bytes=0-3' } });
    assert.equal(ranged.status, 206);
    assert.equal(
      (await call(data.part.url, { headers: { authorization: `Bearer ${OTHER_TOKEN}` } })).status,
      404,
      'another token cannot read it',
    );
    assert.equal(
      (
        await call(`${fixture.engine.url}/v1/jobs/${id}/parts/part-0003.mp3`, {
          headers: { authorization: `Bearer ${TOKEN}` },
        })
      ).status,
      404,
      'a part not yet announced is not there',
    );
    const vtt = await call(data.part.transcript_url, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.match(vtt.text, /^WEBVTT/);

    held.open();
    await stream.done;
    const parts = stream.events
      .filter((e) => e.event === 'result')
      .map((e) => (JSON.parse(e.data) as { part?: WirePart }).part);
    const announced = parts.filter((p): p is WirePart => p !== undefined);
    assert.deepEqual(
      announced.map((p) => p.index),
      [0, 1, 2, 3],
    );
    assert.deepEqual(
      announced.map((p) => p.final),
      [false, false, false, true],
    );
    for (let i = 1; i < announced.length; i++) {
      assert.ok(
        Math.abs(announced[i]!.start_s - (announced[i - 1]!.start_s + announced[i - 1]!.duration_s)) < 0.01,
        'parts are contiguous',
      );
    }
    assert.equal(parts.at(-1), undefined, 'the last result is the final outputs, without part');
    // Order on the wire: every part before the closing status.
    const closing = stream.events.findIndex(
      (e) => e.event === 'status' && (JSON.parse(e.data) as { status: string }).status === 'succeeded',
    );
    const lastPart = stream.events.findLastIndex(
      (e) => e.event === 'result' && (JSON.parse(e.data) as { part?: unknown }).part !== undefined,
    );
    assert.ok(lastPart < closing);

    // Together the parts are the final MP3.
    const job = await waitForJob(fixture.calls, id, (j) => j.status === 'succeeded');
    const bytes = async (url: string) =>
      Buffer.from(await (await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } })).arrayBuffer());
    const final = await bytes(job.outputs!.results[0]!.url);
    const pieces = await Promise.all(announced.map((p) => bytes(p.url)));
    assert.ok(final.equals(silentMp3(4)));
    assert.ok(Buffer.concat(pieces).equals(final), 'the parts one after another are the final MP3');
    // Still served once the job has ended, and replayed after Last-Event-ID.
    assert.equal((await call(data.part.url, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200);
    const replay = await openStream(`${fixture.engine.url}/v1/jobs/${id}/stream`, TOKEN, second.id);
    await replay.done;
    const replayed = replay.events
      .filter((e) => e.event === 'result')
      .map((e) => (JSON.parse(e.data) as { part?: WirePart }).part?.index);
    assert.deepEqual(replayed, [2, 3, undefined]);
  });

  it('followParts yields every part once and in order through event streams cut at random bytes', async (t) => {
    fixture = await startFixture({
      pipelineOptions: { parts: 12, steps: 36, stepMs: 30 },
      progressIntervalMs: 1,
      streamRetryMs: 15,
      heartbeatMs: 200,
    });
    const seed = Number(process.env.FAULT_SEED ?? 20261123);
    t.diagnostic(`chaos seed ${seed}`);
    const engineUrl = fixture.engine.url;
    const proxy = await startChaosProxy(fixture.engine.port, seededRandom(seed), 2500);
    try {
      const client = new JobServiceClient({
        baseUrl: proxy.url,
        apiKey: TOKEN,
        stream: { maxFailures: 10_000, reconnectMs: 10, idleTimeoutMs: 10_000 },
      });
      const results = await Promise.all(
        [0, 1].map(async (i) => {
          const { jobId } = await client.submitArticle({
            model_id: 'article-audio-1-pro',
            text: `Job ${i}. ${articleText()}`,
          });
          const parts: JobPart[] = [];
          for await (const received of client.followParts(jobId, { deadline: Date.now() + 120_000 }))
            parts.push(received);
          return parts;
        }),
      );
      t.diagnostic(`${proxy.streams} stream connections, ${proxy.cuts} cut`);
      assert.ok(proxy.cuts >= 4, `only ${proxy.cuts} streams were cut`);
      for (const parts of results) {
        assert.deepEqual(
          parts.map((p) => p.index),
          [...Array(12).keys()],
        );
        assert.equal(parts.at(-1)?.final, true);
        // Output addresses name the engine's own address (or --public-url), never a Host header it was sent.
        assert.ok(
          parts.every((p) => p.url.startsWith(`${engineUrl}/v1/jobs/`) && p.transcriptUrl?.endsWith('.vtt')),
          parts[0]?.url,
        );
      }
    } finally {
      await proxy.close();
    }
  });
});
