// Black-box load: hundreds of open streams and a burst of parallel submissions against the real engine process.
// Events reach every follower at about the same time (one write per event, fanned out from memory), submissions stay
// quick while the streams are open, and no more jobs process at once than --concurrency allows.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type EngineProcess, startEngineProcess } from '../support/engine-process';
import { type ServiceCalls, serviceCalls, waitForJob } from '../support/http-calls';
import { type SseReader, openStream } from '../support/sse-reader';
import { type ArticleServer, startArticleServer } from '../support/article-server';

const ARTICLE_TEXT = readFileSync(path.join(__dirname, 'fixtures', 'article.md'), 'utf8');
const STREAMS = 300;
const SUBMISSIONS = 60;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

describe('engine process: many clients at once', () => {
  let pages: ArticleServer;
  let engine: EngineProcess;
  let calls: ServiceCalls;
  let streams: SseReader[] = [];

  before(async () => {
    pages = await startArticleServer();
    engine = await startEngineProcess({ args: ['--concurrency', '2', '--queue-depth', '500', '--heartbeat-s', '0.3'] });
    calls = serviceCalls(engine.url, engine.tokens[0] as string);
  });
  after(async () => {
    for (const stream of streams) stream.close();
    await engine.dispose();
    await pages.close();
  });

  it(`fans events out to ${STREAMS} streams evenly while ${SUBMISSIONS} parallel submissions stay fast and processing stays bounded`, async (t) => {
    const token = engine.tokens[0] as string;
    const page = pages.hold('load');
    const watched = (await calls.submit({ model_id: 'article-audio-1-mini', url: page.url })).jobId;
    await page.requested;
    streams = await Promise.all(
      Array.from({ length: STREAMS }, () => openStream(`${engine.url}/v1/jobs/${watched}/stream`, token)),
    );
    for (const stream of streams) assert.equal(stream.response.status, 200);
    await Promise.all(streams.map((s) => s.until(() => s.events.length >= 4, 'the backlog')));

    // Heartbeats come from one timer: every stream gets the same beat at about the same moment.
    const mark = performance.now();
    const beatAfterMark = (s: SseReader) => s.comments.find((c) => c.at > mark)?.at;
    await Promise.all(streams.map((s) => s.until(() => beatAfterMark(s) !== undefined, 'a heartbeat', 5000)));
    const beats = streams.map((s) => beatAfterMark(s) as number);
    const beatSpread = Math.max(...beats) - Math.min(...beats);

    // A burst of submissions while the streams are open; sample how many jobs process at once meanwhile.
    const latencies: number[] = [];
    const ids: string[] = [];
    let peakProcessing = 0;
    const submissions = Promise.all(
      Array.from({ length: SUBMISSIONS }, async (_, i) => {
        const started = performance.now();
        const answer = await calls.submit({ model_id: 'article-audio-1-mini', text: `${i}. ${ARTICLE_TEXT}` });
        latencies.push(performance.now() - started);
        assert.equal(answer.status, 202, answer.text);
        ids.push(answer.jobId);
      }),
    );
    await submissions;
    const sampling = (async () => {
      const status = async (id: string) => (await calls.get(`/v1/jobs/${id}`)).job.status;
      for (let round = 0; round < 60; round++) {
        const all = [watched, ...ids];
        const states = await Promise.all(all.map(status));
        // The answers of one pass come at different moments: a job seen processing early may have ended before
        // another was seen starting. A job seen processing and again after the whole pass was processing throughout
        // (a job never goes back), so those are all processing at once at the moment the second pass starts.
        const seen = all.filter((_, i) => states[i] === 'processing');
        const still = await Promise.all(seen.map(status));
        peakProcessing = Math.max(peakProcessing, still.filter((s) => s === 'processing').length);
        if (states.every((s) => s === 'succeeded' || s === 'failed')) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();

    // The watched job finishes: measure how far apart its `end` reaches the followers.
    page.release();
    await Promise.all(streams.map((s) => s.done));
    const ends = streams.map((s) => s.events.at(-1));
    for (const end of ends) assert.equal(end?.data, 'succeeded');
    const endTimes = ends.map((e) => e?.at ?? 0);
    const endSpread = Math.max(...endTimes) - Math.min(...endTimes);
    const sameHistory = new Set(streams.map((s) => s.events.map((e) => e.id).join(','))).size;
    await sampling;
    for (const id of ids) await waitForJob(calls, id, (j) => j.status === 'succeeded', 120_000);

    t.diagnostic(`heartbeat spread over ${STREAMS} streams: ${Math.round(beatSpread)} ms`);
    t.diagnostic(`end event spread over ${STREAMS} streams: ${Math.round(endSpread)} ms`);
    t.diagnostic(
      `submission latency with ${STREAMS} streams open: p50 ${Math.round(percentile(latencies, 50))} ms, p95 ${Math.round(percentile(latencies, 95))} ms, max ${Math.round(Math.max(...latencies))} ms`,
    );
    t.diagnostic(`most jobs processing at once: ${peakProcessing} (concurrency 2)`);
    assert.equal(sameHistory, 1, 'followers saw different histories');
    assert.ok(peakProcessing <= 2, `${peakProcessing} jobs processed at once with --concurrency 2`);
  });
});
