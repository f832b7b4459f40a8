// Fleet-wide settings stored once: the first API node stores its retention; a second node started with
// --retention-s 5 warns and uses the stored one, so the first node's jobs are not deleted early (before, one such
// node deleted every job, event and file of the service); `article-audio settings set` changes it for every node.
// All real processes: dist/cli.js (npm run build first), Postgres, API nodes and a test worker.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { repoRoot } from '../support/engine-process';
import { articleText, eventually, serviceCalls, waitForJob } from '../support/http-calls';
import { type Cluster, startCluster } from './cluster';
import { type TestPostgres, startPostgres } from './postgres';

const mini = 'article-audio-1-mini';

describe('team fleet-wide settings', () => {
  let postgres: TestPostgres;
  let cluster: Cluster;

  before(async () => {
    postgres = await startPostgres();
    cluster = await startCluster({
      serverUrl: postgres.url,
      workerArgs: ['--concurrency', '1'],
      workerEnv: { AA_TEST_STEPS: '2', AA_TEST_STEP_MS: '10' },
    });
  });
  after(async () => {
    await cluster?.dispose();
    await postgres?.stop();
  });

  it("a node started with --retention-s 5 keeps the fleet's stored retention and deletes nothing early; `settings set` changes it for all", async () => {
    const settings = (...args: string[]) =>
      execFileSync(
        process.execPath,
        [path.join(repoRoot, 'dist', 'cli.js'), 'settings', ...args, '--database', cluster.databaseUrl],
        { encoding: 'utf8' },
      );
    const first = await cluster.startApi(['--retention-s', '120']);
    const second = await cluster.startApi(['--retention-s', '5']);
    await cluster.startWorker();
    assert.match(settings('list'), /^retention-s\t120\tset by the first node/m);
    const warning = second.stderr
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { level: string; msg: string; setting?: string })
      .find((l) => l.setting === 'retention-s');
    assert.ok(warning, second.stderr);
    assert.equal(warning.level, 'warn');
    assert.match(
      warning.msg,
      /--retention-s 5 differs from the fleet's stored retention-s 120 .*using the stored value/,
    );
    assert.ok(!first.stderr.includes('differs from'), 'the first node stored its own value');

    const token = cluster.tokens[0] as string;
    const viaFirst = serviceCalls(first.url, token);
    const viaSecond = serviceCalls(second.url, token);
    const id = (await viaFirst.submit({ model_id: mini, text: articleText() })).jobId;
    await waitForJob(viaFirst, id, (j) => j.status === 'succeeded', 60_000);
    // With its own 5 s, the second node would sweep every 1.25 s and delete the job 5 s after it finished.
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    assert.equal((await viaSecond.get(`/v1/jobs/${id}`)).status, 200, 'the second node still serves the job');
    assert.equal((await viaFirst.get(`/v1/jobs/${id}`)).status, 200);
    assert.equal((await cluster.query('SELECT id FROM aa_jobs WHERE id = $1', [id])).length, 1);

    // An admin lowers it for the whole fleet: the nodes take it at their next sweep (every 30 s at 120 s) and then
    // the finished job goes.
    assert.match(settings('set', 'retention-s', '2'), /^retention-s = 2/);
    assert.match(settings('list'), /^retention-s\t2\tset by article-audio settings/m);
    await eventually(
      'the job to expire under the new fleet retention',
      async () => ((await viaSecond.get(`/v1/jobs/${id}`)).status === 404 ? true : undefined),
      120_000,
    );
    assert.throws(() => settings('set', 'retention-s', 'soon'), /retention-s must be a number/);
  });

  it("the lease is the fleet's: the first worker stores it, a worker given another warns and uses it, heartbeats follow", async () => {
    const fleet = await startCluster({
      serverUrl: postgres.url,
      workerArgs: ['--concurrency', '1'],
      workerEnv: { AA_TEST_STEPS: '2', AA_TEST_STEP_MS: '10' },
    });
    try {
      const settings = (...args: string[]) =>
        execFileSync(
          process.execPath,
          [path.join(repoRoot, 'dist', 'cli.js'), 'settings', ...args, '--database', fleet.databaseUrl],
          { encoding: 'utf8' },
        );
      const api = await fleet.startApi();
      assert.match(settings('list'), /^lease-s\t\(not stored yet: the first worker stores its own\)/m);
      const first = await fleet.startWorker(['--lease-s', '4']);
      const second = await fleet.startWorker(['--lease-s', '30']);
      const third = await fleet.startWorker();
      assert.match(settings('list'), /^lease-s\t4\tset by the first node/m);
      const lines = (text: string) =>
        text
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { level: string; msg: string; setting?: string });
      const warning = lines(second.stderr).find((l) => l.setting === 'lease-s');
      assert.ok(warning, second.stderr);
      assert.equal(warning.level, 'warn');
      assert.match(warning.msg, /--lease-s 30 differs from the fleet's stored lease-s 4 .*using the stored value/);
      for (const worker of [first, third])
        assert.ok(!worker.stderr.includes('differs from'), `no warning: ${worker.stderr}`);
      for (const worker of [first, second, third])
        assert.ok(
          lines(worker.stderr).some((l) => /started: .*lease 4 s/.test(l.msg)),
          `the worker runs with the stored lease: ${worker.stderr}`,
        );
      // Heartbeats follow from the lease: a third of it (workerHeartbeatMs).
      const rows = await fleet.query<{ heartbeat_ms: number }>('SELECT heartbeat_ms FROM aa_workers');
      assert.deepEqual(
        rows.map((r) => r.heartbeat_ms),
        [1333, 1333, 1333],
      );
      // Jobs still run.
      const calls = serviceCalls(api.url, fleet.tokens[0] as string);
      const id = (await calls.submit({ model_id: mini, text: articleText() })).jobId;
      await waitForJob(calls, id, (j) => j.status === 'succeeded', 60_000);

      // An admin changes it; a worker started afterwards takes the new value.
      assert.match(settings('set', 'lease-s', '9'), /^lease-s = 9 \(workers use it from their next start/);
      const later = await fleet.startWorker();
      assert.ok(
        lines(later.stderr).some((l) => /started: .*lease 9 s/.test(l.msg)),
        later.stderr,
      );
      const laterRow = await fleet.query<{ heartbeat_ms: number }>(
        'SELECT heartbeat_ms FROM aa_workers WHERE pid = $1',
        [later.pid],
      );
      assert.equal(laterRow[0]?.heartbeat_ms, 3000);
    } finally {
      await fleet.dispose();
    }
  });
});
