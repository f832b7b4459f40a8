// The team service's coordination cost, measured against the embedded engine in the same run, both with the test
// pipeline (no speech: fixed 4 x 25 ms per job, so what is measured is the service around it) and across process
// boundaries: throughput with 1, 2 and 4 workers (2 jobs at once each) against the embedded engine with 2 slots,
// submission latency (POST to 202) and state change to follower (a cancel sent to one API node until a stream on
// another node has the job's `end`; embedded: the same engine).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../test/support/engine-process';
import { articleText, serviceCalls } from '../test/support/http-calls';
import { openStream } from '../test/support/sse-reader';
import { startCluster } from '../test/team/cluster';
import { startPostgres } from '../test/team/postgres';
import { type Bench, type Row, percentile } from './lib/report';

const mini = 'article-audio-1-mini';
const WORKER_ENV = { AA_TEST_STEPS: '4', AA_TEST_STEP_MS: '25' };
const ms = (value: number) => `${value < 10 ? value.toFixed(1) : Math.round(value)} ms`;

interface Target {
  /** Where to submit and cancel, and where to follow (another node in team mode). */
  submitUrl: string;
  followUrl: string;
  token: string;
}

async function startEmbedded(): Promise<{ target: Target; stop(): Promise<void> }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'aa-bench-embedded-'));
  const token = 'bench-token-embedded';
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(repoRoot, 'test', 'team', 'test-engine.ts'),
      '--port',
      '0',
      '--data-dir',
      dataDir,
      '--concurrency',
      '2',
      '--queue-depth',
      '5000',
    ],
    {
      cwd: repoRoot,
      env: { ...process.env, ...WORKER_ENV, ARTICLE_AUDIO_TOKENS: token },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const found = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (found) resolve(found);
    });
    child.once('exit', (code) => reject(new Error(`the embedded test engine exited (${code})`)));
  });
  return {
    target: { submitUrl: url, followUrl: url, token },
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Jobs per second: `count` jobs submitted by 20 clients, each followed to its end. */
async function throughput(target: Target, count: number): Promise<number> {
  const calls = serviceCalls(target.submitUrl, target.token);
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (next < count) {
        next++;
        const id = (await calls.submit({ model_id: mini, text: articleText(55) })).jobId;
        const stream = await openStream(`${target.followUrl}/v1/jobs/${id}/stream`, target.token);
        await stream.done;
        if (stream.events.at(-1)?.data !== 'succeeded')
          throw new Error(`job ${id} did not succeed: ${stream.describe()}`);
      }
    }),
  );
  return count / ((performance.now() - started) / 1000);
}

/** POST to 202, one submission at a time; the jobs are held and cancelled afterwards. */
async function submissions(target: Target, count: number): Promise<{ latencies: number[]; ids: string[] }> {
  const calls = serviceCalls(target.submitUrl, target.token);
  const latencies: number[] = [];
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const answer = await calls.submit({ model_id: mini, text: `${articleText(55)} HOLD` });
    latencies.push(performance.now() - started);
    ids.push(answer.jobId);
  }
  return { latencies, ids };
}

/** From sending a cancel until a follower (on another node in team mode) has the job's `end`. */
async function followerLatency(target: Target, ids: string[]): Promise<number[]> {
  const calls = serviceCalls(target.submitUrl, target.token);
  const latencies: number[] = [];
  for (const id of ids) {
    const stream = await openStream(`${target.followUrl}/v1/jobs/${id}/stream`, target.token);
    await stream.until(() => stream.events.length >= 2, 'the backlog');
    const started = performance.now();
    await calls.post(`/v1/jobs/${id}/cancel`);
    await stream.until(() => stream.events.some((e) => e.event === 'end'), 'the end');
    latencies.push((stream.events.find((e) => e.event === 'end')?.at ?? started) - started);
    stream.close();
  }
  return latencies;
}

export const team: Bench = {
  name: 'team',
  title: 'Team service (Postgres) vs embedded engine, test pipeline',
  async run(options) {
    const rows: Row[] = [];
    const jobs = options.quick ? 60 : 200;
    const samples = options.quick ? 50 : 200;
    const bench = 'team service vs embedded';
    const postgres = await startPostgres();
    try {
      options.progress('team: embedded engine');
      const embedded = await startEmbedded();
      let embeddedRate: number;
      let embeddedSubmit: number[];
      let embeddedFollow: number[];
      try {
        embeddedRate = await throughput(embedded.target, jobs);
        const submitted = await submissions(embedded.target, samples);
        embeddedSubmit = submitted.latencies;
        embeddedFollow = await followerLatency(embedded.target, submitted.ids.slice(0, Math.min(100, samples)));
      } finally {
        await embedded.stop();
      }
      rows.push({
        bench,
        case: `throughput, embedded, 2 slots (${jobs} jobs)`,
        result: `${embeddedRate.toFixed(1)} jobs/s`,
        note: '4 x 25 ms per job: at most 20 jobs/s per slot',
      });

      for (const workers of [1, 2, 4]) {
        options.progress(`team: ${workers} worker(s)`);
        const cluster = await startCluster({
          serverUrl: postgres.url,
          apiArgs: ['--queue-depth', '5000'],
          workerArgs: ['--concurrency', '2', '--lease-s', '10'],
          workerEnv: WORKER_ENV,
        });
        try {
          await Promise.all([
            cluster.startApi(),
            cluster.startApi(),
            ...Array.from({ length: workers }, () => cluster.startWorker()),
          ]);
          const target = {
            submitUrl: cluster.apis[0]?.url as string,
            followUrl: cluster.apis[1]?.url as string,
            token: cluster.tokens[0] as string,
          };
          const rate = await throughput(target, jobs);
          rows.push({
            bench,
            case: `throughput, Postgres, ${workers} worker(s) x 2 (${jobs} jobs)`,
            result: `${rate.toFixed(1)} jobs/s`,
            note: `${(rate / embeddedRate).toFixed(2)}x embedded`,
          });
          if (workers === 1) {
            // Latencies with the queue quiet: one worker holding its two claimed jobs.
            const submitted = await submissions(target, samples);
            const follow = await followerLatency(target, submitted.ids.slice(0, Math.min(100, samples)));
            const p = (values: number[], q: number) => percentile(values, q);
            rows.push({
              bench,
              case: `submission p99 (${samples}), Postgres vs embedded`,
              result: `${ms(p(submitted.latencies, 99))} vs ${ms(p(embeddedSubmit, 99))}`,
              note: `p50 ${ms(p(submitted.latencies, 50))} vs ${ms(p(embeddedSubmit, 50))}`,
            });
            rows.push({
              bench,
              case: `state change to follower p99 (${follow.length}), Postgres (other node) vs embedded`,
              result: `${ms(p(follow, 99))} vs ${ms(p(embeddedFollow, 99))}`,
              note: `p50 ${ms(p(follow, 50))} vs ${ms(p(embeddedFollow, 50))}; cancel sent until the follower has end`,
            });
          }
        } finally {
          await cluster.dispose();
        }
      }
    } finally {
      await postgres.stop();
    }
    return rows;
  },
};
