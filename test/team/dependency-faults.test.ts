// Done-when test of "work that survives its dependencies failing", both modes from one file, each with its own
// faults, checked by the same assertions (assertJobHistory below).
//
// Team mode, every part a separate real process: 2 API nodes, 2 workers, Postgres, an S3-protocol server. While at
// least 30 jobs run (test pipeline with parts and log lines): Postgres is restarted with `-m immediate`, the storage
// server is down for 20 s and comes back, and a worker is killed with -9 (and a new one started, as a supervisor
// would). The workers the test did not kill are still running afterwards: a dropped database connection or a
// storage outage ended no process.
//
// Embedded mode, the engine a process of its own over one data dir (test/team/test-engine.ts: the test pipeline):
// killed with -9 mid-run and started again with a full data dir (its free space below --min-free-disk-mb: a small
// tmpfs needs root, see test/fault/storage.test.ts), where it refuses new jobs with 507 and stores none of them but
// runs the accepted ones; then frozen with SIGSTOP past its lock's staleness while a second engine takes the data
// dir over, and continued: it then says on /readyz that it lost the lock (503), and writes nothing more.
//
// In both: every accepted job ends `succeeded` exactly once; its replayed stream holds every log line of the run
// that succeeded, once and in order, and its parts with indices 0..n-1, each once, in order.
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type EngineProcess, startEngineProcess } from '../support/engine-process';
import { articleText, call, serviceCalls } from '../support/http-calls';
import { type Cluster, startCluster } from './cluster';
import { type TestPostgres, startPostgres } from './postgres';
import { type TestS3, startS3 } from './s3';

const JOBS = 32;
const PARTS = 3;
const STEPS = 6;
const mini = 'article-audio-1-mini';
const TOKEN = 'dependency-faults-token-0123456789';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Whether a process still runs (its exit has not come). */
const running = (exited: Promise<unknown>) => Promise.race([exited.then(() => false), sleep(50).then(() => true)]);

interface Event {
  event: string;
  data: string;
}

function parseStream(text: string): Event[] {
  return text
    .split('\n\n')
    .map((block) => ({
      event: /^event: (.*)$/m.exec(block)?.[1] ?? '',
      data: /^data: (.*)$/m.exec(block)?.[1] ?? '',
    }))
    .filter((e) => e.event !== '');
}

/**
 * What every job's replayed stream must hold after the faults, in both modes: one end, `succeeded`; every log line
 * of the run that succeeded once and in order (lines of runs lost to the faults come before its "Processing" line);
 * its parts each once, in index order, 0..n-1 with no gap (a run after a takeover skips the ones already announced).
 */
function assertJobHistory(id: string, history: Event[]): void {
  assert.equal(history.filter((e) => e.event === 'end').length, 1, `job ${id} ends once`);
  assert.equal(history.at(-1)?.data, 'succeeded');
  const lastStart = history.findLastIndex((e) => e.event === 'log' && /"message":"Processing[ .(]/.test(e.data));
  const lines = history
    .slice(lastStart + 1)
    .filter((e) => e.event === 'log')
    .map((e) => (JSON.parse(e.data) as { message: string }).message)
    .filter((m) => /^Reading |^Step \d+ of \d+\.$/.test(m));
  const steps = Array.from({ length: STEPS }, (_, i) => i + 1)
    .filter((s) => s % 2 === 0)
    .map((s) => `Step ${s} of ${STEPS}.`);
  assert.match(lines[0] ?? '', /^Reading /, `job ${id}'s run logged ${JSON.stringify(lines)}`);
  assert.deepEqual(lines.slice(1), steps, `job ${id}'s log lines, once and in order`);
  const parts = history
    .filter((e) => e.event === 'result' && e.data.includes('"part":'))
    .map((e) => (JSON.parse(e.data) as { part: { index: number } }).part.index);
  assert.deepEqual(
    parts,
    Array.from({ length: PARTS }, (_, i) => i),
    `job ${id}'s parts`,
  );
}

type Calls = ReturnType<typeof serviceCalls>;

/** Submits JOBS jobs and returns their ids; every one must be accepted. */
async function submitJobs(submit: (n: number) => ReturnType<Calls['submit']>): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < JOBS; n++) {
    const answer = await submit(n);
    assert.equal(answer.status, 202, answer.text);
    ids.push(answer.jobId);
  }
  return ids;
}

/**
 * Waits for every job to end (asking the nodes in turn: a read that fails while a dependency comes back is asked
 * again), then checks each: `succeeded`, its replayed stream (assertJobHistory), its audio readable.
 */
async function assertEveryJobSucceededOnce(ids: string[], nodes: Calls[], token: string): Promise<void> {
  const finalOf = async (id: string) => {
    for (let tries = 0; ; tries++) {
      const answer = await (nodes[tries % nodes.length] as Calls).get(`/v1/jobs/${id}`);
      if (answer.status === 200 && (answer.job.status === 'succeeded' || answer.job.status === 'failed'))
        return answer.job;
      if (tries > 1200) throw new Error(`job ${id} did not end: ${answer.status} ${answer.text}`);
      await sleep(250);
    }
  };
  for (const id of ids) {
    const job = await finalOf(id);
    assert.equal(job.status, 'succeeded', `job ${id}: ${JSON.stringify(job.error)}`);
    assertJobHistory(id, parseStream((await (nodes[0] as Calls).get(`/v1/jobs/${id}/stream`)).text));
    const audio = job.outputs?.results.find((o) => o.content_type === 'audio/mpeg');
    assert.ok(audio, `job ${id} has its audio`);
    const bytes = await fetch(audio.url, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(bytes.status, 200, `job ${id}'s audio is in the storage`);
  }
}

describe('team service while Postgres restarts, the storage server is down 20 s and a worker is killed', () => {
  let postgres: TestPostgres;
  let s3: TestS3;
  let cluster: Cluster;

  before(async () => {
    // Acknowledged commits must survive the crash, as with Postgres's production settings.
    postgres = await startPostgres({ crashSafe: true });
    s3 = await startS3();
    cluster = await startCluster({
      serverUrl: postgres.url,
      s3,
      apiArgs: ['--queue-depth', '200', '--heartbeat-s', '1'],
      workerArgs: ['--lease-s', '3', '--concurrency', '2', '--max-crashes', '10'],
      workerEnv: { AA_TEST_STEPS: String(STEPS), AA_TEST_STEP_MS: '250', AA_TEST_PARTS: String(PARTS) },
    });
    await Promise.all([cluster.startApi(), cluster.startApi(), cluster.startWorker(), cluster.startWorker()]);
  });
  after(async () => {
    await cluster?.dispose();
    await s3?.stop();
    await postgres?.stop();
  });

  it('every job succeeds once with all its log lines and parts; no worker process ends', async () => {
    const token = cluster.tokens[0] as string;
    const nodes = cluster.apis.map((api) => serviceCalls(api.url, token));
    const ids = await submitJobs((n) =>
      (nodes[n % nodes.length] as Calls).submit(
        { model_id: mini, text: articleText(60 + n) },
        { 'idempotency-key': `dependency-faults-${n}` },
      ),
    );
    const [kept, killed] = cluster.workers;
    assert.ok(kept && killed);

    await sleep(1500);
    await postgres.restartImmediate();
    await sleep(1000);
    await s3.down();
    await sleep(3000);
    await killed.kill9();
    await cluster.startWorker();
    await sleep(17_000);
    await s3.up();

    await assertEveryJobSucceededOnce(ids, nodes, token);
    for (const api of cluster.apis) assert.ok(await running(api.exited), 'the API nodes are still running');
    assert.ok(await running(kept.exited), `the worker that was not killed still runs: ${kept.stderr.slice(-2000)}`);
  });
});

describe('embedded engine killed -9, on a full data dir, and frozen while another engine takes its data dir over', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'aa-dependency-faults-'));
  const engines: EngineProcess[] = [];
  const base = ['--concurrency', '2', '--queue-depth', '200', '--max-crashes', '10'];
  const env = { AA_TEST_STEPS: String(STEPS), AA_TEST_STEP_MS: '250', AA_TEST_PARTS: String(PARTS) };
  const start = async (args: string[], port = 0) => {
    const engine = await startEngineProcess({
      entry: 'test-pipeline',
      dataDir,
      port,
      tokens: [TOKEN],
      args: [...base, ...args],
      env,
      startTimeoutMs: 60_000,
    });
    engines.push(engine);
    return engine;
  };
  after(async () => {
    for (const engine of engines) {
      // One left frozen by a failed assertion must be continued to end.
      if ((await running(engine.exited)) && engine.pid > 0) process.kill(engine.pid, 'SIGCONT');
      await engine.dispose();
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('every job succeeds once with all its log lines and parts; the frozen engine reports its lost lock', async () => {
    const first = await start([]);
    const ids = await submitJobs((n) =>
      serviceCalls(first.url, TOKEN).submit(
        { model_id: mini, text: articleText(60 + n) },
        { 'idempotency-key': `dependency-faults-${n}` },
      ),
    );

    // kill -9 mid-run; the engine comes back on the same data dir and port, its disk now full.
    await sleep(1500);
    await first.kill9();
    const full = await start(['--min-free-disk-mb', String(1024 * 1024 * 1024)], first.port);
    const stored = readdirSync(path.join(dataDir, 'jobs')).length;
    for (let n = 0; n < 3; n++) {
      const refused = await serviceCalls(full.url, TOKEN).submit({ model_id: mini, text: articleText(40 + n) });
      assert.equal(refused.status, 507, refused.text);
      assert.equal(refused.errors[0]?.code, 'insufficient_storage');
    }
    assert.equal(readdirSync(path.join(dataDir, 'jobs')).length, stored, 'a refused job was stored');

    // Frozen (a suspended laptop, a stalled VM) past its lock's staleness: a second engine takes the data dir over
    // and takes back the jobs the frozen one was running. Then the frozen one runs again.
    await sleep(2000);
    process.kill(full.pid, 'SIGSTOP');
    let second: EngineProcess;
    try {
      second = await start(['--lock-wait-s', '60']);
    } finally {
      process.kill(full.pid, 'SIGCONT');
    }
    let ready = await call(`${full.url}/readyz`);
    for (let tries = 0; ready.status === 200 && tries < 600; tries++) {
      await sleep(100);
      ready = await call(`${full.url}/readyz`);
    }
    assert.equal(ready.status, 503, ready.text);
    const checks = (ready.body as { data: { checks: Record<string, unknown> } }).data.checks;
    assert.deepEqual(checks.data_dir_lock, { ok: false, error: 'taken_over_by_another_engine' });

    await assertEveryJobSucceededOnce(ids, [serviceCalls(second.url, TOKEN)], TOKEN);
    // The faults did hit running jobs: runs lost to the kill and to the takeover were taken back and run again.
    let lost = 0;
    for (const id of ids) {
      const history = (await serviceCalls(second.url, TOKEN).get(`/v1/jobs/${id}/stream`)).text;
      lost += history.match(/The engine stopped unexpectedly while this job was running/g)?.length ?? 0;
    }
    assert.ok(lost >= 2, `${lost} lost runs were taken back`);
    assert.ok(await running(second.exited), 'the engine that took over still runs');
    assert.ok(await running(full.exited), `the frozen engine, continued, still runs: ${full.stderr.slice(-2000)}`);
  });
});
