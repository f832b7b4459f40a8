// Capacity of one Postgres (issue 28, item 8): the coordination cost alone, with the speech stage replaced by a fixed
// short sleep (the test pipeline: 2 steps of 10 ms, so a slot could finish 50 jobs a second if coordination were
// free). One database, 2 API nodes and 1, 4, 16, then 64 worker processes (2 slots each), all real processes.
//
// Each row: the workers are paused (SIGSTOP), `jobs` are submitted, 1,000 followers (SSE streams over raw sockets, in
// 4 child processes, bench/service-followers.ts) open on the two API nodes, spread over those jobs; then the workers
// go on (SIGCONT) and, while they drain the queue, one client submits `sideJobs` more one at a time (POST to 202
// under load). Measured: jobs finished per second through the queue (from SIGCONT to the last bulk job's
// finished_at), event rows written and delivered to the followers per second, p99 of created_at to a follower's
// socket for `log` events, the Postgres connections of the fleet (pg_stat_activity, the most seen while draining)
// and the CPU time the workers, API nodes and Postgres spent per job (/proc, utime + stime).
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { repoRoot } from '../test/support/engine-process';
import { articleText, serviceCalls } from '../test/support/http-calls';
import { type Cluster, startCluster } from '../test/team/cluster';
import { startPostgres } from '../test/team/postgres';
import { articleText as fixture } from './lib/articles';
import { type Bench, type Row, percentile } from './lib/report';
import type { FollowRequest, FollowResult } from './service-followers';

const mini = 'article-audio-1-mini';
const STEPS = 2;
const STEP_MS = 10;
const SLOTS = 2;
const FOLLOWER_PROCESSES = 4;
const followerScript = path.join(__dirname, 'service-followers.ts');
const ms = (value: number) => `${value < 10 ? value.toFixed(1) : Math.round(value)} ms`;
const now = () => performance.timeOrigin + performance.now();

/** test-worker.ts bundled once into plain JavaScript (under node_modules, so its packages resolve from there). */
function bundleWorker(): string {
  const dir = path.join(repoRoot, 'node_modules', '.cache', 'aa-bench');
  mkdirSync(dir, { recursive: true });
  const out = path.join(dir, 'test-worker.cjs');
  execFileSync(
    path.join(repoRoot, 'node_modules', '.bin', 'esbuild'),
    [
      path.join(repoRoot, 'test', 'team', 'test-worker.ts'),
      '--bundle',
      '--platform=node',
      '--format=cjs',
      '--packages=external',
      `--outfile=${out}`,
      '--log-level=warning',
    ],
    { cwd: repoRoot, stdio: 'inherit' },
  );
  return out;
}

/** CPU seconds (user + system) a process has used so far, or 0 once it is gone. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the name: state(0) ppid(1) ... utime(11) stime(12), in clock ticks (100 a second on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** The postmaster and every process it started (one backend per connection, plus its helpers). */
function postgresPids(postmaster: number): number[] {
  const pids = [postmaster];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster) pids.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

function rssMb(pid: number): number {
  try {
    return Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

interface Connections {
  total: number;
  listen: number;
}

async function countConnections(client: pg.Client): Promise<Connections> {
  const { rows } = await client.query<{ total: string; listen: string }>(
    `SELECT count(*) AS total, count(*) FILTER (WHERE application_name = 'article-audio-listen') AS listen
     FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
  );
  return { total: Number(rows[0]?.total ?? 0), listen: Number(rows[0]?.listen ?? 0) };
}

function signalWorkers(cluster: Cluster, signal: 'SIGSTOP' | 'SIGCONT'): void {
  for (const worker of cluster.workers) process.kill(worker.pid, signal);
}

/** Opens `count` followers over `paths` (split between the API nodes) and resolves once every stream has its head. */
async function openFollowers(
  cluster: Cluster,
  paths: string[],
  count: number,
): Promise<{ results: Promise<FollowResult[]>; children: ChildProcess[] }> {
  const children: ChildProcess[] = [];
  const ready: Promise<void>[] = [];
  const results: Promise<FollowResult>[] = [];
  for (let i = 0; i < FOLLOWER_PROCESSES; i++) {
    const api = new URL(cluster.apis[i % cluster.apis.length]?.url as string);
    const child = fork(followerScript, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.push(child);
    ready.push(
      new Promise<void>((resolve, reject) => {
        child.on('message', (m: { type: string }) => m.type === 'ready' && resolve());
        child.once('exit', (code) =>
          reject(new Error(`a follower process exited (${code}) before its streams opened`)),
        );
      }),
    );
    results.push(
      new Promise<FollowResult>((resolve, reject) => {
        child.on('message', (m: FollowResult) => m.type === 'result' && resolve(m));
        child.once('exit', (code) => reject(new Error(`a follower process exited (${code}) without its result`)));
      }),
    );
    // Process i follows every FOLLOWER_PROCESSES-th job, so each job's followers are on both API nodes.
    const mine = paths.filter((_, j) => j % FOLLOWER_PROCESSES === i);
    const request: FollowRequest = {
      host: api.hostname,
      port: Number(api.port),
      path: mine[0] ?? (paths[0] as string),
      paths: mine.length > 0 ? mine : paths,
      token: cluster.tokens[0] as string,
      count: Math.floor(count / FOLLOWER_PROCESSES) + (i < count % FOLLOWER_PROCESSES ? 1 : 0),
    };
    child.send(request);
  }
  await Promise.all(ready);
  return { results: Promise.all(results), children };
}

async function until(what: string, test: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface Measured {
  workers: number;
  jobs: number;
  jobsPerS: number;
  eventRows: number;
  eventRowsPerS: number;
  deliveries: number;
  deliveriesPerS: number;
  followers: number;
  followersComplete: number;
  followerP50: number;
  followerP99: number;
  followerSamples: number;
  submitP50: number;
  submitP99: number;
  submitSamples: number;
  connections: Connections;
  cpuMsPerJob: { workers: number; apis: number; postgres: number };
  workerRssMb: number;
  load: number;
}

async function measure(
  cluster: Cluster,
  postmaster: number,
  db: pg.Client,
  options: { jobs: number; followers: number; sideJobs: number; progress: (m: string) => void },
): Promise<Measured> {
  const workers = cluster.workers.length;
  const apis = cluster.apis.map((a) => serviceCalls(a.url, cluster.tokens[0] as string));
  signalWorkers(cluster, 'SIGSTOP');
  let ids: string[];
  try {
    // The bulk: submitted by 16 clients over both API nodes while no worker claims.
    ids = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async (_, client) => {
        while (next < options.jobs) {
          next++;
          const answer = await (apis[client % apis.length] as (typeof apis)[number]).submit({
            model_id: mini,
            text: articleText(55),
          });
          if (answer.status !== 202) throw new Error(`submission answered ${answer.status}: ${answer.text}`);
          ids.push(answer.jobId);
        }
      }),
    );
    options.progress(
      `capacity: ${workers} worker(s): ${ids.length} jobs queued, opening ${options.followers} followers`,
    );
  } catch (error) {
    signalWorkers(cluster, 'SIGCONT');
    throw error;
  }
  const followers = await openFollowers(
    cluster,
    ids.map((id) => `/v1/jobs/${id}/stream`),
    options.followers,
  ).catch((error: unknown) => {
    signalWorkers(cluster, 'SIGCONT');
    throw error;
  });

  const nodePids = { workers: cluster.workers.map((w) => w.pid), apis: cluster.apis.map((a) => a.pid) };
  const pgPids = postgresPids(postmaster);
  const sum = (pids: number[]) => pids.reduce((total, pid) => total + cpuSeconds(pid), 0);
  const cpuBefore = { workers: sum(nodePids.workers), apis: sum(nodePids.apis), postgres: sum(pgPids) };
  const loadBefore = os.loadavg()[0] ?? 0;
  const opened = now();
  signalWorkers(cluster, 'SIGCONT');
  const continued = Date.now();

  // Connections, sampled while the queue drains: the most seen at once.
  let connections: Connections = { total: 0, listen: 0 };
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const seen = await countConnections(db).catch(() => connections);
      if (seen.total > connections.total) connections = seen;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();

  // Submissions under load, one at a time, to the first API node.
  const submitLatencies: number[] = [];
  const sideIds: string[] = [];
  const side: Promise<void> = (async () => {
    for (let i = 0; i < options.sideJobs; i++) {
      const started = performance.now();
      const answer = await (apis[0] as (typeof apis)[number]).submit({ model_id: mini, text: articleText(55) });
      submitLatencies.push(performance.now() - started);
      if (answer.status !== 202) throw new Error(`submission under load answered ${answer.status}: ${answer.text}`);
      sideIds.push(answer.jobId);
    }
  })();

  // Both awaited together: a failed submission must not be left unhandled while the followers are waited on.
  const [results] = await Promise.all([followers.results, side]).catch(async (error: unknown) => {
    for (const child of followers.children) child.kill('SIGKILL');
    sampling = false;
    await sampler;
    const tails = cluster.apis.map((a, i) => `API node ${i + 1}: ${a.stderr.slice(-1500)}`).join('\n');
    throw new Error(
      `${error instanceof Error ? `${error.message} (${String(error.cause)})` : String(error)}\n${tails}`,
    );
  });
  const all = [...ids, ...sideIds];
  await until(
    'every job to finish',
    async () =>
      Number(
        (
          await db.query<{ open: string }>(
            `SELECT count(*) AS open FROM aa_jobs WHERE id = ANY($1) AND finished_at IS NULL`,
            [all],
          )
        ).rows[0]?.open,
      ) === 0,
    300_000,
  );
  sampling = false;
  await sampler;
  const cpuAfter = { workers: sum(nodePids.workers), apis: sum(nodePids.apis), postgres: sum(pgPids) };
  const loadAfter = os.loadavg()[0] ?? 0;

  const bulk = (
    await db.query<{ finished: string; last: number; rows: string; failed: string }>(
      `SELECT count(*) AS finished, (extract(epoch FROM max(finished_at)) * 1000)::float8 AS last,
              count(*) FILTER (WHERE status <> 'succeeded') AS failed,
              (SELECT count(*) FROM aa_events WHERE job_id = ANY($1)) AS rows
       FROM aa_jobs WHERE id = ANY($1)`,
      [ids],
    )
  ).rows[0];
  if (!bulk || Number(bulk.failed) > 0) throw new Error(`${bulk?.failed ?? '?'} jobs did not succeed`);
  // Jobs finished between SIGCONT and the bulk's last one (side jobs in that window count too: they went through the
  // same queue).
  const windowEnd = bulk.last;
  const finishedInWindow = Number(
    (
      await db.query<{ n: string }>(
        `SELECT count(*) AS n FROM aa_jobs WHERE id = ANY($1) AND finished_at <= to_timestamp($2 / 1000.0)`,
        [all, windowEnd],
      )
    ).rows[0]?.n,
  );
  const seconds = Math.max(0.001, (windowEnd - continued) / 1000);
  const eventRows = Number(bulk.rows);

  const streams = results.flatMap((r) => r.streams);
  const live = streams.flatMap((s) => s.events.filter((e) => e.at >= opened));
  const lastArrival = Math.max(...live.map((e) => e.at));
  const delays = live
    .filter((e) => e.createdAt !== null && e.createdAt >= opened)
    .map((e) => e.at - (e.createdAt as number));
  const cpu = (key: keyof typeof cpuBefore) => ((cpuAfter[key] - cpuBefore[key]) * 1000) / all.length;
  return {
    workers,
    jobs: ids.length,
    jobsPerS: finishedInWindow / seconds,
    eventRows,
    eventRowsPerS: eventRows / seconds,
    deliveries: live.length,
    deliveriesPerS: live.length / Math.max(0.001, (lastArrival - opened) / 1000),
    followers: streams.length,
    followersComplete: streams.filter((s) => s.status === 200 && s.events.at(-1)?.event === 'end').length,
    followerP50: percentile(delays, 50),
    followerP99: percentile(delays, 99),
    followerSamples: delays.length,
    submitP50: percentile(submitLatencies, 50),
    submitP99: percentile(submitLatencies, 99),
    submitSamples: submitLatencies.length,
    connections,
    cpuMsPerJob: { workers: cpu('workers'), apis: cpu('apis'), postgres: cpu('postgres') },
    workerRssMb: nodePids.workers.reduce((total, pid) => total + rssMb(pid), 0) / Math.max(1, workers),
    load: (loadBefore + loadAfter) / 2,
  };
}

/**
 * What one real job leaves in the event table: a medium article (15k characters) through the real speech pipeline
 * (`dist/cli.js worker`), one model at a time on a cluster of its own; rows by kind and their average size
 * (pg_column_size). A longer run (a loaded machine) writes more progress rows.
 */
async function realJobEvents(serverUrl: string, model: string): Promise<Row> {
  const cluster = await startCluster({ serverUrl, realWorker: true, workerArgs: ['--concurrency', '1'] });
  try {
    const api = await cluster.startApi();
    await cluster.startWorker();
    const calls = serviceCalls(api.url, cluster.tokens[0] as string);
    const started = performance.now();
    const answer = await calls.submit({ model_id: model, text: fixture('medium') });
    if (answer.status !== 202) throw new Error(`submission answered ${answer.status}: ${answer.text}`);
    const id = answer.jobId;
    await until(
      `the ${model} job to finish`,
      async () =>
        (await cluster.query<{ s: string }>('SELECT status AS s FROM aa_jobs WHERE id = $1', [id]))[0]?.s !==
          'queued' &&
        (await cluster.query('SELECT 1 FROM aa_jobs WHERE id = $1 AND finished_at IS NOT NULL', [id])).length === 1,
      600_000,
    );
    const seconds = (performance.now() - started) / 1000;
    const kinds = await cluster.query<{ event: string; n: string }>(
      'SELECT event, count(*) AS n FROM aa_events WHERE job_id = $1 GROUP BY event ORDER BY count(*) DESC',
      [id],
    );
    const size = (
      await cluster.query<{ row: string; job: string; status: string }>(
        `SELECT (SELECT avg(pg_column_size(e.*)) FROM aa_events e WHERE job_id = $1) AS row,
                (SELECT pg_column_size(j.*) FROM aa_jobs j WHERE id = $1) AS job,
                (SELECT status FROM aa_jobs WHERE id = $1) AS status`,
        [id],
      )
    )[0];
    const total = kinds.reduce((sum, k) => sum + Number(k.n), 0);
    return {
      bench: 'capacity (one Postgres)',
      case: `event rows of one real job: ${model.replace(/^article-audio-1-/, '')}, medium (15k chars)`,
      result: `${total} rows`,
      note:
        `${kinds.map((k) => `${k.n} ${k.event}`).join(', ')}; an aa_events row ${Math.round(Number(size?.row))} bytes on average ` +
        `(pg_column_size, before the tuple header and the primary key's index entry); the job row ${size?.job ?? '?'} bytes; ${size?.status ?? '?'} in ${seconds.toFixed(1)} s ` +
        `(load ${(os.loadavg()[0] ?? 0).toFixed(1)})`,
    };
  } finally {
    await cluster.dispose();
  }
}

export const capacity: Bench = {
  name: 'capacity',
  title: 'Capacity: many worker processes on one Postgres (test pipeline, 2 x 10 ms a job)',
  async run(options) {
    const counts = options.quick ? [1, 4] : [1, 4, 16, 64];
    const jobs = options.quick ? 80 : 400;
    const followers = Number(process.env.AA_BENCH_FOLLOWERS ?? (options.quick ? 200 : 1000));
    const sideJobs = options.quick ? 30 : 100;
    const rows: Row[] = [];
    const bench = 'capacity (one Postgres)';
    options.progress('capacity: bundling the test worker');
    const workerScript = bundleWorker();
    // 64 workers x (pool + LISTEN) is more than the test server's usual 300 connections.
    const postgres = await startPostgres({ maxConnections: 1000 });
    let cluster: Cluster | undefined;
    try {
      cluster = await startCluster({
        serverUrl: postgres.url,
        apiArgs: [
          '--queue-depth',
          '100000',
          '--token-max-jobs',
          '0',
          '--token-submit-rate',
          '0',
          '--max-connections',
          '1024',
        ],
        workerArgs: ['--concurrency', String(SLOTS), '--lease-s', '10'],
        workerEnv: { AA_TEST_STEPS: String(STEPS), AA_TEST_STEP_MS: String(STEP_MS) },
        workerScript,
      });
      await cluster.startApi();
      await cluster.startApi();
      const client = new pg.Client({ connectionString: cluster.databaseUrl });
      await client.connect();
      try {
        const apiOnly = await countConnections(client);
        for (const count of counts) {
          while (cluster.workers.length < count) {
            const batch = Math.min(8, count - cluster.workers.length);
            options.progress(
              `capacity: starting workers ${cluster.workers.length + 1}-${cluster.workers.length + batch}`,
            );
            await Promise.all(Array.from({ length: batch }, () => (cluster as Cluster).startWorker()));
          }
          options.progress(`capacity: ${count} worker(s), ${jobs} jobs, ${followers} followers`);
          const m = await measure(cluster, postgres.pid, client, {
            jobs,
            followers,
            sideJobs,
            progress: options.progress,
          });
          const ceiling = (count * SLOTS * 1000) / (STEPS * STEP_MS);
          const perJob = m.eventRows / m.jobs;
          rows.push(
            {
              bench,
              case: `${count} worker(s) x ${SLOTS}: jobs finished through the queue`,
              result: `${m.jobsPerS.toFixed(1)} jobs/s`,
              note:
                `${m.jobs} jobs queued, then drained; the sleep alone would allow ${Math.round(ceiling)} jobs/s; ` +
                `CPU per job: workers ${m.cpuMsPerJob.workers.toFixed(1)} ms, API nodes ${m.cpuMsPerJob.apis.toFixed(1)} ms, ` +
                `Postgres ${m.cpuMsPerJob.postgres.toFixed(1)} ms; load ${m.load.toFixed(1)} on 2 cores`,
            },
            {
              bench,
              case: `${count} worker(s): event rows through LISTEN/NOTIFY to ${m.followers} followers`,
              result: `${Math.round(m.eventRowsPerS)} rows/s written, ${Math.round(m.deliveriesPerS)} deliveries/s`,
              note:
                `${perJob.toFixed(1)} rows a job; ${m.deliveries} deliveries to followers on 2 API nodes; ` +
                `${m.followersComplete}/${m.followers} streams got \`end\``,
            },
            {
              bench,
              case: `${count} worker(s): follower latency p99 (log event created_at to a follower's socket)`,
              result: ms(m.followerP99),
              note: `p50 ${ms(m.followerP50)}; ${m.followerSamples} deliveries`,
            },
            {
              bench,
              case: `${count} worker(s): submission p99 (POST to 202, while draining)`,
              result: ms(m.submitP99),
              note: `p50 ${ms(m.submitP50)}; ${m.submitSamples} submissions one at a time`,
            },
            {
              bench,
              case: `${count} worker(s): Postgres connections of the fleet`,
              result: `${m.connections.total}`,
              note:
                `most seen in pg_stat_activity while draining: 2 API nodes (${apiOnly.total} with no workers, ` +
                `${apiOnly.listen} LISTEN) + ${count} workers (${m.connections.listen - apiOnly.listen} LISTEN); ` +
                `worker RSS ${Math.round(m.workerRssMb)} MB each`,
            },
          );
        }
      } finally {
        await client.end().catch(() => undefined);
      }
      await cluster.dispose();
      cluster = undefined;
      for (const model of options.quick ? [mini] : [mini, 'article-audio-1-pro']) {
        options.progress(`capacity: one real ${model} job, for its event rows`);
        rows.push(await realJobEvents(postgres.url, model));
      }
    } finally {
      await cluster?.dispose();
      await postgres.stop();
    }
    return rows;
  },
};
