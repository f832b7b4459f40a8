// Team logs an admin can follow a job by: JSON lines with job_id, token (its name, never its value), worker, run and
// the request id of the submission, one info line per state change, in the API node's log and the worker's.
// All real processes: dist/cli.js (npm run build first), Postgres, API node and test workers.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { repoRoot } from '../support/engine-process';
import { articleText, eventually, serviceCalls, waitForJob } from '../support/http-calls';
import { type Cluster, startCluster } from './cluster';
import { type TestPostgres, startPostgres } from './postgres';

const mini = 'article-audio-1-mini';

interface Line {
  level: string;
  role: string;
  msg: string;
  job_id?: string;
  token?: string;
  request_id?: string;
  worker?: string;
  run?: number;
  state?: string;
  code?: string;
}

function jsonLines(stderr: string): Line[] {
  return stderr
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Line);
}

describe('team logs: job fields and state changes', () => {
  let postgres: TestPostgres;
  let cluster: Cluster;

  before(async () => {
    postgres = await startPostgres();
    cluster = await startCluster({
      serverUrl: postgres.url,
      workerArgs: ['--concurrency', '1', '--stop-grace-s', '0.2'],
      workerEnv: { AA_TEST_STEPS: '2', AA_TEST_STEP_MS: '10' },
    });
    await cluster.startApi();
  });
  after(async () => {
    await cluster?.dispose();
    await postgres?.stop();
  });

  it('follows one job by job_id and request_id from the API node into the worker, with the token name and each state change in order', async () => {
    const token = execFileSync(
      process.execPath,
      [path.join(repoRoot, 'dist', 'cli.js'), 'token', 'add', 'alice', '--database', cluster.databaseUrl],
      { encoding: 'utf8' },
    ).trim();
    const api = cluster.apis[0];
    assert.ok(api);
    const alice = serviceCalls(api.url, token);
    await eventually('the API node to know the new token', async () =>
      (await alice.get('/v1/jobs/00000000-0000-4000-8000-000000000000')).status === 401 ? undefined : true,
    );
    const worker = await cluster.startWorker();

    // One job that runs to the end.
    const submitted = await alice.submit({ model_id: mini, text: articleText() });
    assert.equal(submitted.status, 202);
    const requestId = submitted.headers.get('x-request-id');
    assert.ok(requestId);
    const id = submitted.jobId;
    await waitForJob(alice, id, (j) => j.status === 'succeeded', 60_000);

    // One that runs until its worker stops (given back to the queue), then is cancelled.
    const held = (await alice.submit({ model_id: mini, text: `${articleText()} HOLD` })).jobId;
    await waitForJob(alice, held, (j) => j.status === 'processing', 60_000);
    await worker.stop();
    await waitForJob(alice, held, (j) => j.status === 'queued', 60_000);
    assert.equal((await alice.post(`/v1/jobs/${held}/cancel`)).status, 200);

    const apiLines = jsonLines(api.stderr);
    const workerLines = jsonLines(worker.stderr);
    const everything = api.stderr + worker.stderr;
    assert.ok(!everything.includes(token), 'no log line has the token');

    const apiJob = apiLines.filter((l) => l.job_id === id);
    const workerJob = workerLines.filter((l) => l.job_id === id);
    assert.deepEqual(
      apiJob.filter((l) => l.level === 'info').map((l) => l.state),
      ['queued'],
      JSON.stringify(apiJob),
    );
    assert.deepEqual(
      workerJob.filter((l) => l.level === 'info').map((l) => l.state),
      ['running', 'succeeded'],
      JSON.stringify(workerJob),
    );
    for (const line of [...apiJob, ...workerJob]) {
      assert.equal(line.request_id, requestId, `request_id in ${JSON.stringify(line)}`);
      assert.equal(line.token, 'alice', `token name in ${JSON.stringify(line)}`);
    }
    for (const line of workerJob) {
      assert.equal(line.role, 'worker');
      assert.match(line.worker ?? '', /^[^:]+:\d+:[0-9a-f]{6}$/);
      assert.equal(line.run, 1);
    }

    // Each process's lines in its own order (the two clocks are not compared).
    const states = (lines: Line[]) => lines.filter((l) => l.job_id === held && l.level === 'info').map((l) => l.state);
    assert.deepEqual(states(apiLines), ['queued', 'cancelled']);
    assert.deepEqual(states(workerLines), ['running', 'queued']);
  });
});
