// Done-when test of "work that survives its dependencies failing", team mode, every part a separate real process:
// 2 API nodes, 2 workers, Postgres, an S3-protocol server. While at least 30 jobs run (test pipeline with parts and
// log lines): Postgres is restarted with `-m immediate`, the storage server is down for 20 s and comes back, and a
// worker is killed with -9 (and a new one started, as a supervisor would). Afterwards every accepted job has
// succeeded exactly once; every job's replayed stream holds the log lines of its run once and in order and its parts
// with indices 0..n-1, each once; and the workers the test did not kill are still running: a dropped database
// connection or a storage outage ended no process.
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { articleText, serviceCalls } from '../support/http-calls';
import { type Cluster, startCluster } from './cluster';
import { type TestPostgres, startPostgres } from './postgres';
import { type TestS3, startS3 } from './s3';

const JOBS = 32;
const PARTS = 3;
const STEPS = 6;
const mini = 'article-audio-1-mini';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
    const ids: string[] = [];
    for (let n = 0; n < JOBS; n++) {
      const answer = await (nodes[n % nodes.length] as (typeof nodes)[number]).submit(
        { model_id: mini, text: articleText(60 + n) },
        { 'idempotency-key': `dependency-faults-${n}` },
      );
      assert.equal(answer.status, 202, answer.text);
      ids.push(answer.jobId);
    }
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

    // Clients meet the restarted database too: a read that fails while it comes back is asked again.
    const finalOf = async (id: string) => {
      for (let tries = 0; ; tries++) {
        const answer = await (nodes[tries % nodes.length] as (typeof nodes)[number]).get(`/v1/jobs/${id}`);
        if (answer.status === 200 && (answer.job.status === 'succeeded' || answer.job.status === 'failed'))
          return answer.job;
        if (tries > 1200) throw new Error(`job ${id} did not end: ${answer.status} ${answer.text}`);
        await sleep(250);
      }
    };
    for (const id of ids) {
      const job = await finalOf(id);
      assert.equal(job.status, 'succeeded', `job ${id}: ${JSON.stringify(job.error)}`);
      const history = parseStream((await (nodes[0] as (typeof nodes)[number]).get(`/v1/jobs/${id}/stream`)).text);
      assert.equal(history.filter((e) => e.event === 'end').length, 1, `job ${id} ends once`);
      assert.equal(history.at(-1)?.data, 'succeeded');
      // The run that succeeded: every line it logged is there once, in order (lines of runs lost to the faults
      // come before its "Processing" line).
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
      // Parts: each index once, announced in order, 0..n-1 with no gap (a run after a takeover skips known ones).
      const parts = history
        .filter((e) => e.event === 'result' && e.data.includes('"part":'))
        .map((e) => (JSON.parse(e.data) as { part: { index: number } }).part.index);
      assert.deepEqual(
        parts,
        Array.from({ length: PARTS }, (_, i) => i),
        `job ${id}'s parts`,
      );
      const audio = job.outputs?.results.find((o) => o.content_type === 'audio/mpeg');
      assert.ok(audio, `job ${id} has its audio`);
      const bytes = await fetch(audio.url, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(bytes.status, 200, `job ${id}'s audio is in the storage`);
    }
    const running = (exited: Promise<unknown>) => Promise.race([exited.then(() => false), sleep(50).then(() => true)]);
    for (const api of cluster.apis) assert.ok(await running(api.exited), 'the API nodes are still running');
    assert.ok(await running(kept.exited), `the worker that was not killed still runs: ${kept.stderr.slice(-2000)}`);
  });
});
