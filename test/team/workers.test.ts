// Workers an admin can see: each worker has a row in aa_workers, written at start and every heartbeat and removed on
// a clean stop; `article-audio workers` lists them with their state (a worker killed -9 shows as gone within two
// heartbeats) and their jobs; a finished job keeps the id of the worker that ran it. API nodes answer the same list
// at GET /v1/admin/workers to admin tokens (`article-audio token add NAME --admin`) only.
// All real processes: dist/cli.js (npm run build first), Postgres, API node and workers.
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { type ServiceCalls, articleText, call, eventually, serviceCalls, waitForJob } from '../support/http-calls';
import { type EngineProcess, repoRoot, startEngineProcess } from '../support/engine-process';
import { type Cluster, type WorkerProcess, startCluster } from './cluster';
import { type TestPostgres, startPostgres } from './postgres';

const mini = 'article-audio-1-mini';
const cli = path.join(repoRoot, 'dist', 'cli.js');
/** --lease-s 3: a worker heartbeat (its row in aa_workers) every second. */
const HEARTBEAT_MS = 1000;

interface ListedWorker {
  id: string;
  host: string;
  pid: number;
  state: 'alive' | 'gone';
  jobs: string[];
  concurrency: number;
  version: string;
}

async function workersCommand(databaseUrl: string, json = true): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [cli, 'workers', '--database', databaseUrl, ...(json ? ['--json'] : [])],
    { cwd: repoRoot, timeout: 30_000 },
  );
  return stdout;
}

async function listed(databaseUrl: string): Promise<ListedWorker[]> {
  return JSON.parse(await workersCommand(databaseUrl)) as ListedWorker[];
}

describe('team workers: article-audio workers, and the worker that ran a job', () => {
  let postgres: TestPostgres;
  let cluster: Cluster;
  let calls: ServiceCalls;

  before(async () => {
    postgres = await startPostgres();
    cluster = await startCluster({
      serverUrl: postgres.url,
      workerArgs: ['--lease-s', '3', '--concurrency', '1'],
      workerEnv: { AA_TEST_STEPS: '2', AA_TEST_STEP_MS: '10' },
    });
    await cluster.startApi();
    calls = serviceCalls(cluster.apis[0]?.url ?? '', cluster.tokens[0] as string);
  });
  after(async () => {
    await cluster?.dispose();
    await postgres?.stop();
  });

  it('lists running workers with their jobs, a worker killed -9 as gone within two heartbeats, none after a clean stop', async (t) => {
    const [first, second] = await Promise.all([cluster.startWorker(), cluster.startWorker()]);
    const byPid = (workers: ListedWorker[], w: WorkerProcess) => workers.find((l) => l.pid === w.pid);

    const both = await listed(cluster.databaseUrl);
    assert.equal(both.length, 2, JSON.stringify(both));
    for (const w of [first, second] as WorkerProcess[]) {
      const row = byPid(both, w);
      assert.ok(row, `worker ${w.pid} is listed`);
      assert.equal(row.state, 'alive');
      assert.equal(row.host, os.hostname());
      assert.equal(row.concurrency, 1);
      assert.match(row.version, /^\d+\.\d+\.\d+/);
      assert.match(row.id, new RegExp(`^${os.hostname()}:${w.pid}:`));
    }

    // A job that runs until it is cancelled: listed under the worker that claimed it.
    const held = (await calls.submit({ model_id: mini, text: `${articleText()} HOLD` })).jobId;
    const runner = await eventually('the held job to be listed under a worker', async () => {
      const workers = await listed(cluster.databaseUrl);
      return workers.find((l) => l.jobs.includes(held));
    });
    const table = await workersCommand(cluster.databaseUrl, false);
    assert.match(table, /^WORKER\s+STATE\s+LAST HEARTBEAT\s+STARTED\s+VERSION\s+JOBS$/m);
    assert.match(table, new RegExp(`^${runner.id}\\s+alive\\s+\\d+\\.\\d s ago\\s.*\\s1/1 ${held}$`, 'm'));

    const killed = runner.pid === first.pid ? first : second;
    const survivor = killed === first ? second : first;
    await killed.kill9();
    await new Promise((resolve) => setTimeout(resolve, 2 * HEARTBEAT_MS));
    const after = await listed(cluster.databaseUrl);
    assert.equal(byPid(after, killed)?.state, 'gone', JSON.stringify(after));
    assert.deepEqual(byPid(after, killed)?.jobs, [held], 'the jobs it held when it died');
    assert.equal(byPid(after, survivor)?.state, 'alive', JSON.stringify(after));
    const goneTable = await workersCommand(cluster.databaseUrl, false);
    t.diagnostic(goneTable);
    assert.match(goneTable, new RegExp(`^${runner.id}\\s+gone\\s`, 'm'));

    // The survivor takes the held job over once its lease runs out; a cancel ends it.
    await eventually('the survivor to take the job over', async () =>
      byPid(await listed(cluster.databaseUrl), survivor)?.jobs.includes(held) ? true : undefined,
    );
    await calls.post(`/v1/jobs/${held}/cancel`);
    await survivor.stop();
    const left = await listed(cluster.databaseUrl);
    assert.deepEqual(
      left.map((l) => [l.pid, l.state]),
      [[killed.pid, 'gone']],
      'a clean stop removes its row; the killed one stays listed as gone',
    );
  });

  it('GET /v1/admin/workers answers the same list to an admin token, 403 to any other, 404 on the local engine', async () => {
    const worker = await cluster.startWorker();
    const api = cluster.apis[0] as EngineProcess;
    const token = async (...args: string[]) =>
      (
        await promisify(execFile)(process.execPath, [cli, 'token', ...args, '--database', cluster.databaseUrl], {
          cwd: repoRoot,
          timeout: 30_000,
        })
      ).stdout.trim();
    try {
      const admin = await token('add', 'ops-admin', '--admin');
      const user = await token('add', 'plain-user');
      assert.match(await token('list'), /^ops-admin\t\S+\tadmin$/m);
      assert.match(await token('list'), /^plain-user\t\S+$/m);
      await assert.rejects(token('remove', 'plain-user', '--admin'), /--admin goes with add/);

      const get = (bearer?: string) =>
        call(`${api.url}/v1/admin/workers`, bearer ? { headers: { authorization: `Bearer ${bearer}` } } : {});
      // API nodes re-read the tokens table every few seconds: a refresh between the two `token add`s knows the admin
      // token and not yet the other (401), so both are waited for.
      const answer = await eventually('both tokens to be known to the API node', async () => {
        const a = await get(admin);
        return a.status === 200 && (await get(user)).status !== 401 ? a : undefined;
      });
      const body = JSON.parse(answer.text) as { data: ListedWorker[]; errors: null };
      const fromCli = await listed(cluster.databaseUrl);
      const shape = (list: ListedWorker[]) =>
        list.map((w) => [w.id, w.host, w.pid, w.state, w.concurrency, w.version, w.jobs]).sort();
      assert.deepEqual(shape(body.data), shape(fromCli), 'the same workers as `article-audio workers --json`');
      assert.ok(body.data.some((w) => w.pid === worker.pid && w.state === 'alive'));
      assert.deepEqual(Object.keys(body.data[0] ?? {}).sort(), Object.keys(fromCli[0] ?? {}).sort(), 'the same fields');

      for (const [who, bearer] of [
        ['a database token without --admin', user],
        ['a token from ARTICLE_AUDIO_TOKENS', cluster.tokens[0] as string],
      ] as const) {
        const refused = await get(bearer);
        assert.equal(refused.status, 403, `${who}: ${refused.text}`);
        assert.equal(refused.errors[0]?.code, 'forbidden');
        assert.match(refused.errors[0]?.message ?? '', /admin token: article-audio token add NAME --admin/);
        assert.doesNotMatch(refused.text, new RegExp(String(worker.pid)), 'nothing about the workers');
      }
      assert.equal((await get()).status, 401);
      assert.equal((await get('not-a-token')).status, 401);

      // The local engine has no workers: the route does not exist there.
      const local = await startEngineProcess();
      try {
        const there = await call(`${local.url}/v1/admin/workers`, {
          headers: { authorization: `Bearer ${local.tokens[0] as string}` },
        });
        assert.equal(there.status, 404, there.text);
      } finally {
        await local.dispose();
      }
    } finally {
      await worker.stop();
    }
  });

  it('keeps the id of the worker that ran a job in its row once it succeeded', async () => {
    const worker = await cluster.startWorker();
    try {
      const id = (await calls.submit({ model_id: mini, text: articleText() })).jobId;
      await waitForJob(calls, id, (j) => j.status === 'succeeded', 60_000);
      const rows = await cluster.query<{ worker: string | null }>('SELECT worker FROM aa_jobs WHERE id = $1', [id]);
      assert.match(rows[0]?.worker ?? 'NULL', new RegExp(`^${os.hostname()}:${worker.pid}:[0-9a-f]+$`));
    } finally {
      await worker.stop();
    }
  });
});
