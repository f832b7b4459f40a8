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
});
