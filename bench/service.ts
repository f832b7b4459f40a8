// The service around the speech: how fast a submission shows up as the first `status` event, how quickly 500 open
// streams on one engine see what happens to a job while it is really being synthesized, and how many status
// requests per second one engine answers. All against the real engine process (`node dist/cli.js serve`).
import { Pool } from 'undici';
import { type ArticleServer, startArticleServer } from '../test/support/article-server';
import { type EngineProcess, startEngineProcess } from '../test/support/engine-process';
import { serviceCalls } from '../test/support/http-calls';
import { type SseReader, openStream } from '../test/support/sse-reader';
import { type Bench, type Row, below, percentile } from './lib/report';

const STREAMS = 500;
const STREAM_TARGET_P99_MS = 50;

const ms = (value: number) => `${value < 10 ? value.toFixed(1) : Math.round(value)} ms`;

export const service: Bench = {
  name: 'service',
  title: 'Service overhead: first status event, 500 streams, status requests per second',
  async run(options) {
    const rows: Row[] = [];
    const pages = await startArticleServer();
    let engine: EngineProcess | undefined;
    try {
      engine = await startEngineProcess({
        args: ['--queue-depth', '5000', '--concurrency', '2'],
        startTimeoutMs: 60_000,
      });
      rows.push(...(await firstStatus(engine, pages, options.quick ? 20 : 60, options.progress)));
      // One follower first: what the busy engine alone adds, against which the 500 are compared.
      rows.push(...(await manyStreams(engine, pages, 1, options.progress)));
      rows.push(...(await manyStreams(engine, pages, options.quick ? 200 : STREAMS, options.progress)));
      rows.push(...(await statusRate(engine, options.quick ? 1500 : 4000, options.progress)));
    } finally {
      await engine?.dispose();
      await pages.close();
    }
    return rows;
  },
};

/** Submission to the first `status` event, on a stream opened as soon as the 202 arrives. */
async function firstStatus(
  engine: EngineProcess,
  pages: ArticleServer,
  count: number,
  progress: (m: string) => void,
): Promise<Row[]> {
  progress(`service: submission to first status event, ${count} jobs`);
  const token = engine.tokens[0] as string;
  const calls = serviceCalls(engine.url, token);
  // Jobs wait on a page that does not answer, so no synthesis runs meanwhile; they are cancelled afterwards.
  const page = pages.hold('first-status');
  const accepted: number[] = [];
  const firstEvent: number[] = [];
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const answer = await calls.submit({ model_id: 'article-audio-1-mini', url: page.url });
    accepted.push(performance.now() - started);
    ids.push(answer.jobId);
    const stream = await openStream(`${engine.url}/v1/jobs/${answer.jobId}/stream`, token);
    const first = await stream.next((e) => e.event === 'status', 'the first status event');
    firstEvent.push(first.at - started);
    stream.close();
  }
  for (const id of ids) await calls.post(`/v1/jobs/${id}/cancel`);
  return [
    {
      bench: 'service: submission answered (202)',
      case: `${count} sequential submissions`,
      result: `p50 ${ms(percentile(accepted, 50))}, p99 ${ms(percentile(accepted, 99))}`,
      note: 'the job is on disk (fsync) before the 202',
    },
    {
      bench: 'service: submission to first status event',
      case: `${count} sequential submissions`,
      result: `p50 ${ms(percentile(firstEvent, 50))}, p99 ${ms(percentile(firstEvent, 99))}`,
      note: 'POST, then open the stream, until its first status event',
    },
  ];
}

/**
 * Many followers of one job that is really being synthesized (the engine is busy): each `log` event carries the
 * moment the engine made it (created_at), so the delay until each follower has it is measured per event and
 * follower. The followers are parsed in this process, which shares the two cores with the engine.
 */
async function manyStreams(
  engine: EngineProcess,
  pages: ArticleServer,
  count: number,
  progress: (m: string) => void,
): Promise<Row[]> {
  progress(`service: ${count} streams following one job`);
  const token = engine.tokens[0] as string;
  const calls = serviceCalls(engine.url, token);
  const page = pages.hold(`many-streams-${count}`);
  const { jobId } = await calls.submit({ model_id: 'article-audio-1-mini', url: page.url });
  await page.requested;
  const streams: SseReader[] = [];
  // Opened in batches, as clients arriving one after another would.
  for (let i = 0; i < count; i += 50) {
    streams.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(50, count - i) }, () =>
          openStream(`${engine.url}/v1/jobs/${jobId}/stream`, token),
        ),
      )),
    );
  }
  const opened = performance.now();
  page.release();
  await Promise.all(streams.map((s) => s.done));
  const delays: number[] = [];
  let events = 0;
  for (const stream of streams) {
    for (const event of stream.events) {
      if (event.event !== 'log') continue;
      const created = Date.parse((JSON.parse(event.data) as { created_at: string }).created_at);
      const arrived = performance.timeOrigin + event.at;
      // Only what happened after every stream was open: earlier events were replayed history.
      if (created < performance.timeOrigin + opened) continue;
      delays.push(arrived - created);
      events++;
    }
  }
  const ends = streams.map((s) => s.events.at(-1)?.at ?? Number.NaN);
  const complete = streams.filter((s) => s.events.at(-1)?.data === 'succeeded').length;
  const p99 = percentile(delays, 99);
  if (count === 1) {
    return [
      {
        bench: 'service: state change to each follower',
        case: '1 stream on one job (mini, synthesizing)',
        result: `p50 ${ms(percentile(delays, 50))}, p99 ${ms(p99)}, max ${ms(Math.max(...delays))}`,
        note: `baseline for the 500: ${events} log events`,
      },
    ];
  }
  return [
    {
      bench: 'service: state change to each follower',
      case: `${count} streams on one job (mini, synthesizing)`,
      result: `p50 ${ms(percentile(delays, 50))}, p99 ${ms(p99)}, max ${ms(Math.max(...delays))}`,
      target: `p99 < ${STREAM_TARGET_P99_MS} ms`,
      verdict: below(p99, STREAM_TARGET_P99_MS),
      note: `${events} deliveries of log events (created_at to arrival, 1 ms clock); ${complete}/${count} streams got \`end\``,
    },
    {
      bench: 'service: end event spread over followers',
      case: `${count} streams`,
      result: ms(Math.max(...ends) - Math.min(...ends)),
      note: 'first to last follower seeing `end`',
    },
  ];
}

/** GET /v1/jobs/{id} as fast as 32 keep-alive connections can ask, for a fixed time. */
async function statusRate(engine: EngineProcess, durationMs: number, progress: (m: string) => void): Promise<Row[]> {
  progress(`service: status requests for ${durationMs / 1000} s`);
  const token = engine.tokens[0] as string;
  const calls = serviceCalls(engine.url, token);
  const { jobId } = await calls.submit({
    model_id: 'article-audio-1-mini',
    text: 'A short text for the status endpoint to describe, long enough to be accepted.',
  });
  const pool = new Pool(engine.url, { connections: 32, pipelining: 1 });
  const latencies: number[] = [];
  let failed = 0;
  const deadline = performance.now() + durationMs;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        const response = await pool.request({
          path: `/v1/jobs/${jobId}`,
          method: 'GET',
          headers: { authorization: `Bearer ${token}` },
        });
        await response.body.text();
        if (response.statusCode !== 200) failed++;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return [
    {
      bench: 'service: status requests per second',
      case: '32 keep-alive connections, one engine',
      result: `${Math.round(latencies.length / seconds)} req/s (p50 ${ms(percentile(latencies, 50))}, p99 ${ms(percentile(latencies, 99))})`,
      note: `${failed} not 200; load generator on the same 2 cores`,
    },
  ];
}
