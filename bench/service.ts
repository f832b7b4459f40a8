// The service around the speech: how fast a submission shows up as the first `status` event, how quickly 500 open
// streams on one engine see what happens to a job while it is really being synthesized, and how many status
// requests per second one engine answers. All against the real engine process (`node dist/cli.js serve`).
import { fork } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { type ArticleServer, startArticleServer } from '../test/support/article-server';
import { type EngineProcess, startEngineProcess } from '../test/support/engine-process';
import { serviceCalls } from '../test/support/http-calls';
import { openStream } from '../test/support/sse-reader';
import type { FollowRequest, FollowResult, FollowedEvent } from './service-followers';
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
        nodeArgs: ['--require', path.join(__dirname, 'lib', 'fanout-probe.cjs')],
        startTimeoutMs: 60_000,
      });
      rows.push(...(await firstStatus(engine, pages, options.quick ? 20 : 60, options.progress)));
      // One follower first: what the busy engine alone adds, against which the 500 are compared.
      rows.push(...(await manyStreams(engine, pages, 1, options.quick ? 1 : 3, options.progress)));
      const waits = watchThreadWaits(engine.pid);
      rows.push(
        ...(await manyStreams(engine, pages, options.quick ? 200 : STREAMS, options.quick ? 1 : 3, options.progress)),
      );
      rows.push(...waits.stop(`while ${options.quick ? 200 : STREAMS} streams follow`));
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

/** Follower processes the streams are spread over, so that reading 500 streams does not compete with itself. */
const FOLLOWER_PROCESSES = 4;

interface Delivery {
  event: FollowedEvent;
  /** Wall clock when every stream was open and the job was let go. */
  opened: number;
}

interface ProbeLine {
  path: string;
  id: number;
  event: string;
  createdAt: number | null;
  first: number;
  last: number;
  /** When each follower's socket write was done (on loopback: the follower's socket has the bytes). */
  sent: number[];
  writes: number;
}

/**
 * Many followers of one job that is really being synthesized (the engine is busy). The followers run in
 * FOLLOWER_PROCESSES child processes (bench/service-followers.ts) over raw sockets, so neither the engine nor one
 * bench process parses them all. Each `log` event carries the moment the engine made it (created_at), so the delay
 * until each follower has it is measured per event and follower; `rounds` jobs are followed one after another and
 * pooled, as one job has only a few log events. The engine runs with bench/lib/fanout-probe.cjs, which times its
 * socket writes: the engine's own share of the delay.
 */
async function manyStreams(
  engine: EngineProcess,
  pages: ArticleServer,
  count: number,
  rounds: number,
  progress: (m: string) => void,
): Promise<Row[]> {
  const token = engine.tokens[0] as string;
  const calls = serviceCalls(engine.url, token);
  const address = new URL(engine.url);
  const deliveries: Delivery[] = [];
  const probes: ProbeLine[] = [];
  let complete = 0;
  let failed = 0;
  const endSpreads: number[] = [];
  for (let round = 0; round < rounds; round++) {
    progress(`service: ${count} streams following one job (${round + 1}/${rounds})`);
    const page = pages.hold(`many-streams-${count}-${round}`);
    const { jobId } = await calls.submit({ model_id: 'article-audio-1-mini', url: page.url });
    const path = `/v1/jobs/${jobId}/stream`;
    await page.requested;
    const processes = Math.min(FOLLOWER_PROCESSES, count);
    const children = Array.from({ length: processes }, (_, i) => {
      const child = fork(followerScript, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      const ready = new Promise<void>((resolve, reject) => {
        child.on('message', (m: { type: string }) => m.type === 'ready' && resolve());
        child.once('exit', (code) =>
          reject(new Error(`a follower process exited (${code}) before its streams were open`)),
        );
      });
      const result = new Promise<FollowResult>((resolve, reject) => {
        child.on('message', (m: FollowResult) => m.type === 'result' && resolve(m));
        child.once('exit', (code) => reject(new Error(`a follower process exited (${code}) without its result`)));
      });
      const request: FollowRequest = {
        host: address.hostname,
        port: Number(address.port),
        path,
        token,
        count: Math.floor(count / processes) + (i < count % processes ? 1 : 0),
      };
      child.send(request);
      return { ready, result };
    });
    await Promise.all(children.map((c) => c.ready));
    const opened = performance.timeOrigin + performance.now();
    page.release();
    const results = await Promise.all(children.map((c) => c.result));
    const streams = results.flatMap((r) => r.streams);
    for (const stream of streams) {
      if (stream.status !== 200 || stream.error) failed++;
      if (stream.events.at(-1)?.event === 'end') complete++;
      for (const event of stream.events) if (event.at >= opened) deliveries.push({ event, opened });
    }
    const ends = streams.map((s) => s.events.at(-1)?.at ?? Number.NaN);
    endSpreads.push(Math.max(...ends) - Math.min(...ends));
    probes.push(...(await probeLines(engine, path, opened)));
  }

  // Log events made after every stream was open (earlier ones were replayed history): created_at to arrival.
  const delays = deliveries
    .filter((d) => d.event.createdAt !== null && d.event.createdAt >= d.opened)
    .map((d) => d.event.at - (d.event.createdAt as number));
  const logEvents = new Set(probes.filter((p) => p.createdAt !== null).map((p) => `${p.path} ${p.id}`)).size;
  const p99 = percentile(delays, 99);
  const followerProcesses = Math.min(FOLLOWER_PROCESSES, count);
  const spread = (values: number[]) =>
    `p50 ${ms(percentile(values, 50))}, p99 ${ms(percentile(values, 99))}, max ${ms(Math.max(...values))}`;
  const following = `${count} stream${count === 1 ? '' : 's'} on one job (mini, synthesizing)`;
  const rows: Row[] = [
    {
      bench: 'service: state change to each follower',
      case: following,
      result: spread(delays),
      ...(count === 1 ? {} : { target: `p99 < ${STREAM_TARGET_P99_MS} ms`, verdict: below(p99, STREAM_TARGET_P99_MS) }),
      note:
        `${delays.length} deliveries of ${logEvents} log events over ${rounds} job${rounds === 1 ? '' : 's'}, created_at ` +
        `(1 ms clock) to arrival in ${followerProcesses} follower process${followerProcesses === 1 ? '' : 'es'} beside the engine; ` +
        `${complete}/${count * rounds} streams got \`end\`${failed ? `, ${failed} failed` : ''}`,
    },
  ];
  // The engine's share: from the event's created_at until each follower's socket has it.
  const engineSide = probes.flatMap((p) =>
    p.createdAt === null ? [] : p.sent.map((t) => t - (p.createdAt as number)),
  );
  const fanOut = probes.map((p) => Math.max(...p.sent) - p.first);
  const handOver = probes.filter((p) => p.createdAt !== null).map((p) => p.first - (p.createdAt as number));
  if (engineSide.length > 0)
    rows.push({
      bench: "service: state change into each follower's socket",
      case: following,
      result: spread(engineSide),
      note:
        `created_at to each follower's socket write, timed inside the engine by bench/lib/fanout-probe.cjs; of which ` +
        `stored and handed to the first follower: ${spread(handOver)}; first to last follower: ${spread(fanOut)}`,
    });
  if (count > 1)
    rows.push({
      bench: 'service: end event spread over followers',
      case: following,
      result: ms(Math.max(...endSpreads)),
      note: 'first to last follower seeing `end`',
    });
  return rows;
}

const followerScript = path.join(__dirname, 'service-followers.ts');

/** The probe's lines for one stream path, once it has printed the job's `end` (it prints an event once quiet). */
async function probeLines(engine: EngineProcess, streamPath: string, after: number): Promise<ProbeLine[]> {
  const read = () =>
    engine.stderr
      .split('\n')
      .filter((line) => line.startsWith('fanout-probe '))
      .map((line) => JSON.parse(line.slice('fanout-probe '.length)) as ProbeLine)
      .filter((p) => p.path === streamPath && p.first >= after);
  const deadline = Date.now() + 10_000;
  while (!read().some((p) => p.event === 'end') && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  return read();
}

interface ThreadWait {
  nice: number;
  /** Nanoseconds on a CPU, nanoseconds runnable but waiting for one, and time slices (/proc/.../schedstat). */
  run: number;
  wait: number;
  slices: number;
}

/**
 * How long the engine's threads waited for a CPU while they could run (Linux schedstat), sampled every 100 ms so
 * that the audio worker of a job that ended is counted too: the main thread's wait per time slice is what a
 * follower's event waits before the engine can even start writing it.
 */
function watchThreadWaits(pid: number): { stop(during: string): Row[] } {
  const first = new Map<number, ThreadWait>();
  const last = new Map<number, ThreadWait>();
  const sample = (isFirst: boolean) => {
    let tids: string[] = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      return;
    }
    for (const tid of tids) {
      try {
        const [run, wait, slices] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
        const stat: ThreadWait = {
          nice: os.getPriority(Number(tid)),
          run: run ?? 0,
          wait: wait ?? 0,
          slices: slices ?? 0,
        };
        // A thread started after the first sample counts from zero.
        if (!first.has(Number(tid))) first.set(Number(tid), isFirst ? stat : { ...stat, run: 0, wait: 0, slices: 0 });
        last.set(Number(tid), stat);
      } catch {
        // The thread ended between the listing and the read.
      }
    }
  };
  sample(true);
  const timer = setInterval(() => sample(false), 100);
  return {
    stop(during) {
      clearInterval(timer);
      sample(false);
      const main = last.get(pid);
      if (!main) return [];
      const total = (which: (tid: number, stat: ThreadWait) => boolean) => {
        let run = 0;
        let wait = 0;
        let slices = 0;
        for (const [tid, stat] of last) {
          if (!which(tid, stat)) continue;
          const start = first.get(tid) as ThreadWait;
          run += stat.run - start.run;
          wait += stat.wait - start.wait;
          slices += stat.slices - start.slices;
        }
        return { run, wait, slices };
      };
      const describe = ({ run, wait, slices }: { run: number; wait: number; slices: number }) =>
        `${ms(wait / Math.max(1, slices) / 1e6)} per time slice, ${Math.round((wait / Math.max(1, run)) * 100)} % of its CPU time`;
      const lowered = total((tid, stat) => tid !== pid && stat.nice > main.nice);
      const others = total((tid, stat) => tid !== pid && stat.nice <= main.nice);
      return [
        {
          bench: 'service: engine main thread waiting for a CPU',
          case: during,
          result: describe(total((tid) => tid === pid)),
          note:
            `runnable but not running (/proc/<pid>/task/*/schedstat); threads nicer than the main thread (audio work): ` +
            `${lowered.slices > 0 ? describe(lowered) : 'none'}; the engine's other threads: ${describe(others)}`,
        },
      ];
    },
  };
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
