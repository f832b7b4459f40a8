// Metrics of a team run (issue 28 item 1), all real processes (dist/cli.js, Postgres, API node, a worker with the
// test pipeline): the API node's GET /metrics counts submissions and reads the queue and the workers from Postgres;
// the worker's --metrics-port counts its runs by model and outcome, failures by code and run durations.
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type ServiceCalls, articleText, eventually, serviceCalls, waitForJob } from '../support/http-calls';
import { type Sample, scrape, valueOf } from '../support/metrics-scrape';
import { type Cluster, type WorkerProcess, startCluster } from './cluster';
import { type TestPostgres, startPostgres } from './postgres';

const mini = 'article-audio-1-mini';

describe('team metrics: GET /metrics on the API node and on a worker --metrics-port', () => {
  let postgres: TestPostgres;
  let cluster: Cluster;
  let calls: ServiceCalls;
  let worker: WorkerProcess;
  let apiMetrics: string;
  let workerMetrics: string;

  before(async () => {
    postgres = await startPostgres();
    cluster = await startCluster({
      serverUrl: postgres.url,
      workerArgs: ['--lease-s', '3', '--concurrency', '1'],
      workerEnv: { AA_TEST_STEPS: '2', AA_TEST_STEP_MS: '10' },
    });
    const api = await cluster.startApi();
    apiMetrics = `${api.url}/metrics`;
    calls = serviceCalls(api.url, cluster.tokens[0] as string);
    worker = await cluster.startWorker(['--metrics-port', '0']);
    const address = /Worker metrics on (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(worker.stdout)?.[1];
    assert.ok(address, `the worker says where its metrics are: ${worker.stdout}`);
    workerMetrics = address;
  });
  after(async () => {
    await cluster?.dispose();
    await postgres?.stop();
  });

  it(
    'counts submissions, queue depth and age, workers, runs by outcome, failures by code and durations',
    { timeout: 120_000 },
    async () => {
      const start = await scrape(apiMetrics);
      assert.equal(valueOf(start, 'article_audio_jobs_submitted_total'), 0);
      assert.equal(valueOf(start, 'article_audio_queue_depth'), 0);
      await eventually(
        'the worker to be counted alive',
        async () => (valueOf(await scrape(apiMetrics), 'article_audio_workers_alive') === 1 ? true : undefined),
        20_000,
      );

      // One job holds the only slot, so the next two wait in the queue.
      const held = (await calls.submit({ model_id: mini, text: `${articleText()} HOLD` })).jobId;
      await waitForJob(calls, held, (job) => job.status === 'processing');
      const ok = (await calls.submit({ model_id: mini, text: articleText() })).jobId;
      const failing = (await calls.submit({ model_id: mini, text: `${articleText()} FAIL:fetch_failed` })).jobId;
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const queued = await scrape(apiMetrics);
      assert.equal(valueOf(queued, 'article_audio_jobs_submitted_total', { model: mini }), 3);
      assert.equal(valueOf(queued, 'article_audio_queue_depth'), 2);
      assert.ok(valueOf(queued, 'article_audio_oldest_queued_age_seconds') >= 1, 'the oldest waiting job is ≥ 1 s old');
      // Counts only: no job id, text or token anywhere in a scrape.
      const text = await (await fetch(apiMetrics)).text();
      for (const secret of [held, ok, failing, ...cluster.tokens, 'HOLD']) assert.ok(!text.includes(secret), secret);

      // A follower of the held job's stream is counted on the node it is connected to.
      const stream = await fetch(apiMetrics.replace('/metrics', `/v1/jobs/${held}/stream`), {
        headers: { authorization: `Bearer ${cluster.tokens[0]}` },
      });
      assert.equal(stream.status, 200);
      assert.equal(valueOf(await scrape(apiMetrics), 'article_audio_stream_followers'), 1);

      assert.equal((await calls.post(`/v1/jobs/${held}/cancel`)).status, 200);
      await waitForJob(calls, ok, (job) => job.status === 'succeeded');
      await waitForJob(calls, failing, (job) => job.status === 'failed');
      await stream.body?.cancel();

      const runs = await eventually(
        'the worker to count both runs',
        async () => {
          const samples = await scrape(workerMetrics);
          return valueOf(samples, 'article_audio_runs_finished_total', { outcome: 'failed' }) === 1
            ? samples
            : undefined;
        },
        20_000,
      );
      const finished = (outcome: string, s: Sample[] = runs) =>
        valueOf(s, 'article_audio_runs_finished_total', { model: mini, outcome });
      assert.equal(finished('succeeded'), 1);
      assert.equal(finished('failed'), 1);
      assert.equal(finished('lost'), 1, 'the cancelled run lost its job');
      assert.equal(valueOf(runs, 'article_audio_job_failures_total', { code: 'fetch_failed' }), 1);
      assert.equal(valueOf(runs, 'article_audio_job_failures_total'), 1);
      assert.equal(valueOf(runs, 'article_audio_run_duration_seconds_count', { model: mini, outcome: 'succeeded' }), 1);
      assert.ok(valueOf(runs, 'article_audio_run_duration_seconds_sum', { model: mini, outcome: 'succeeded' }) > 0);
      assert.equal(
        valueOf(runs, 'article_audio_run_duration_seconds_bucket', { model: mini, outcome: 'failed', le: '+Inf' }),
        1,
      );
      assert.equal(runs.find((s) => s.name === 'article_audio_runs_finished_total')?.labels.role, 'worker');

      const end = await scrape(apiMetrics);
      assert.equal(valueOf(end, 'article_audio_queue_depth'), 0);
      assert.equal(valueOf(end, 'article_audio_oldest_queued_age_seconds'), 0);
      assert.equal(valueOf(end, 'article_audio_stream_followers'), 0);
      assert.ok(valueOf(end, 'article_audio_event_delivery_lag_seconds_count') >= 1, 'stream events were delivered');
    },
  );
});
