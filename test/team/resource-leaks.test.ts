// The team service's long-lived processes return to their level after every job (issue 23): on a team worker with a
// limit of 400 open files, one token's long job used up the worker's descriptors and another token's three ordinary
// jobs then failed. Real Postgres, a real API node and a real speech worker (`dist/cli.js worker`), counted from
// outside (test/support/resource-level.ts): the worker's descriptors by kind, threads, temp files (its runs' folders
// are in its TMPDIR) and main-thread handles (resource-probe.cjs through NODE_OPTIONS); the API node's descriptors
// and threads; the database's connections (pg_stat_activity: the Postgres clients of both). Their pools keep a few
// idle clients for 30 s, so after jobs side by side each count must come back to the level or below.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { type ServiceCalls, type WireJob, articleText, waitForJob } from '../support/http-calls';
import {
  RESOURCE_PROBE,
  backToLevel,
  closingCalls,
  probeFiles,
  probeProcess,
  quietLevel,
  sentences,
} from '../support/resource-level';
import { type Cluster, startCluster } from './cluster';
import { type TestPostgres, startPostgres } from './postgres';

const mini = 'article-audio-1-mini';
const onLinux = process.platform === 'linux';
const hasPrlimit = onLinux && existsSync('/usr/bin/prlimit');

async function run(calls: ServiceCalls, text: string, timeoutMs = 60_000): Promise<WireJob> {
  const id = (await calls.submit({ model_id: mini, text })).jobId;
  return waitForJob(calls, id, (job) => job.status === 'succeeded' || job.status === 'failed', timeoutMs);
}

const succeeded = (job: WireJob) =>
  assert.equal(job.status, 'succeeded', `job ${job.id}: ${job.status} ${JSON.stringify(job.error)}`);

describe('team: worker, API node and database connections return to their level after each job', () => {
  let postgres: TestPostgres | undefined;
  let cluster: Cluster | undefined;
  const files = probeFiles();
  after(async () => {
    await cluster?.dispose();
    await postgres?.stop();
    files.remove();
  });

  it(
    "under a limit of 400 descriptors on the worker, one token's job of 2,500 sentences and another token's three jobs all succeed",
    { skip: !hasPrlimit && 'reads /proc' },
    async () => {
      postgres = await startPostgres();
      cluster = await startCluster({
        serverUrl: postgres.url,
        realWorker: true,
        workerArgs: ['--lease-s', '5'],
        workerEnv: { ...files.env, NODE_OPTIONS: `--require ${RESOURCE_PROBE}` },
      });
      const api = await cluster.startApi();
      const worker = await cluster.startWorker();
      execFileSync('prlimit', ['--pid', String(worker.pid), '--nofile=400:400']);
      const team = cluster;
      const connections = async () => ({
        postgres: Number(
          (
            await team.query<{ n: string }>(
              'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database()',
            )
          )[0]!.n,
        ),
      });
      const workerProbe = probeProcess(worker.pid, files, connections);
      const apiProbe = probeProcess(api.pid);
      const [one, other] = cluster.tokens.map((token) => closingCalls(api.url, token)) as [ServiceCalls, ServiceCalls];

      succeeded(await run(one, articleText()));
      const workerLevel = await quietLevel(workerProbe);
      const apiLevel = await quietLevel(apiProbe);
      const long = run(one, sentences(2500), 300_000);
      const three = (async () => {
        const jobs: WireJob[] = [];
        for (let i = 0; i < 3; i++) jobs.push(await run(other, articleText(80 + i), 300_000));
        return jobs;
      })();
      succeeded(await long);
      (await three).forEach(succeeded);
      // Jobs side by side take more Postgres clients than one did; the pools close idle ones after 30 s (db.ts).
      // Under load (two full test runs side by side) periodic queries (heartbeats, the worker row, token refreshes)
      // overlap and keep a few more clients warm: up to 90 s for them to go idle and close.
      const poolIdle = { atMost: true, timeoutMs: 90_000 };
      await backToLevel(workerProbe, workerLevel, 'the worker, after the jobs', poolIdle);
      await backToLevel(apiProbe, apiLevel, 'the API node, after the jobs', poolIdle);
      succeeded(await run(other, articleText()));
      await backToLevel(workerProbe, workerLevel, 'the worker, after one more job', poolIdle);
    },
  );
});
