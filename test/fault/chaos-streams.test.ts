// A chaos proxy on loopback between the client and the real engine cuts every event stream at a random byte (seeded):
// in the response headers, between events, in the middle of an event line. JobServiceClient.followJob must still
// hand every event of the job to its caller exactly once and in order, by reconnecting with Last-Event-ID, without
// falling back to polling (which would lose the log lines). The job's true history is read from the engine directly.
// The engine is the test-pipeline fixture: in-process (embedded), or an API node and a worker over Postgres when
// test/team/suites-postgres.test.ts runs this file.
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type JobEvent, JobServiceClient } from '../../src/api';
import { type ChaosProxy, seededRandom, startChaosProxy } from '../support/chaos-proxy';
import { openStream } from '../support/sse-reader';
import { type TestPipelineEngine, startTestPipelineEngine } from '../support/test-pipeline-engine';

const TOKEN = 'chaos-token-0123456789abcdef';
const SEED = Number(process.env.FAULT_SEED ?? 20261122);
const JOBS = 4;

describe('fault: every event stream dropped at random points (chaos proxy)', () => {
  let engine: TestPipelineEngine;
  let proxy: ChaosProxy;

  before(async () => {
    engine = await startTestPipelineEngine({
      tokens: [TOKEN],
      concurrency: JOBS,
      // Many small events over about two seconds; a short `retry:` hint so that reconnecting takes little time.
      steps: 40,
      stepMs: 45,
      progressIntervalMs: 1,
      streamRetryMs: 15,
      heartbeatMs: 200,
    });
    proxy = await startChaosProxy(Number(new URL(engine.url).port), seededRandom(SEED), 3000);
  });
  after(async () => {
    await proxy?.close();
    await engine?.close();
  });

  it(`delivers every event of ${JOBS} jobs exactly once and in order through streams cut at random bytes`, async (t) => {
    t.diagnostic(`chaos seed ${SEED} (replay with FAULT_SEED=${SEED}), ${engine.mode} engine`);
    const client = new JobServiceClient({
      baseUrl: proxy.url,
      apiKey: TOKEN,
      // Cuts come in runs; the point here is delivery across reconnections, so the stream is never given up.
      stream: { maxFailures: 10_000, reconnectMs: 10, idleTimeoutMs: 10_000 },
      log: process.env.CHAOS_DEBUG ? (level, message) => console.error(level, message) : undefined,
    });
    const followed = await Promise.all(
      Array.from({ length: JOBS }, async (_, i) => {
        const { jobId } = await client.submitArticle({
          model_id: 'article-audio-1-mini',
          text: `Job ${i}. ${'Chaos on the line, words still arrive. '.repeat(4)}`,
        });
        const events: JobEvent[] = [];
        for await (const event of client.followJob(jobId, { deadline: Date.now() + 60_000 })) events.push(event);
        return { jobId, events };
      }),
    );

    t.diagnostic(
      `${proxy.streams} stream connections, ${proxy.cuts} cut (${proxy.cutsInHeaders} inside the response headers)`,
    );
    assert.ok(proxy.cuts >= JOBS * 5, `only ${proxy.cuts} streams were cut`);
    for (const { jobId, events } of followed) {
      // The truth: the whole history, read from the engine without the proxy once the job is over.
      const direct = await openStream(`${engine.url}/v1/jobs/${jobId}/stream`, TOKEN);
      await direct.done;
      const history = direct.events.filter((e) => e.event !== 'end');
      assert.equal(direct.events.at(-1)?.data, 'succeeded');
      assert.ok(history.length >= 30, `only ${history.length} events in the history of ${jobId}`);

      const fromStream = events.filter(
        (e): e is Extract<JobEvent, { type: 'status' | 'log' | 'result' }> =>
          e.type === 'status' || e.type === 'log' || e.type === 'result',
      );
      assert.ok(!events.some((e) => e.type === 'transport' && e.mode === 'poll'), `job ${jobId} fell back to polling`);
      assert.deepEqual(
        fromStream.map((e) => e.eventId),
        history.map((e) => e.id),
        `job ${jobId}: the client's events differ from the engine's history (ids)`,
      );
      // Same content too, not only the same ids.
      fromStream.forEach((event, index) => {
        const wire = history[index]!;
        assert.equal(event.type, wire.event);
        const data = JSON.parse(wire.data) as { status?: string; message?: string };
        if (event.type === 'status') assert.equal(event.status, data.status);
        if (event.type === 'log') assert.equal(event.message, data.message);
      });
      const end = events.at(-1);
      assert.equal(end?.type, 'end');
      assert.equal(end.type === 'end' ? end.job.status : undefined, 'succeeded');
      const reconnections = events.filter((e) => e.type === 'transport').length - 1;
      assert.ok(reconnections >= 1, `job ${jobId} never had to reconnect`);
    }
  });
});
