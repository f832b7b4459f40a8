// GET /metrics on the embedded engine (issue 28 item 1): no token, Prometheus text; submissions, runs by model and
// outcome, failures by code, run durations, and the queue gauges read from the queue in memory.
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { articleText, waitForJob } from '../../support/http-calls';
import { scrape, valueOf } from '../../support/metrics-scrape';
import { type EngineFixture, startFixture } from './engine-fixture';

const mini = 'article-audio-1-mini';

describe('embedded engine: GET /metrics', () => {
  let fixture: EngineFixture;
  before(async () => {
    fixture = await startFixture({
      concurrency: 1,
      pipelineOptions: {
        hold: (input) => (input.text?.includes('HOLD') ? new Promise<void>(() => undefined) : undefined),
      },
    });
  });
  after(() => fixture?.dispose());

  it('counts jobs as they run and fail, and shows the queue', { timeout: 60_000 }, async () => {
    const url = `${fixture.engine.url}/metrics`;
    const { calls } = fixture;
    assert.equal(valueOf(await scrape(url), 'article_audio_jobs_submitted_total'), 0);
    const held = (await calls.submit({ model_id: mini, text: `${articleText()} HOLD` })).jobId;
    await waitForJob(calls, held, (job) => job.status === 'processing');
    const ok = (await calls.submit({ model_id: mini, text: articleText() })).jobId;
    const failing = (await calls.submit({ model_id: mini, text: `${articleText()} FAIL:fetch_failed` })).jobId;
    const queued = await scrape(url);
    assert.equal(valueOf(queued, 'article_audio_jobs_submitted_total', { model: mini, role: 'embedded' }), 3);
    assert.equal(valueOf(queued, 'article_audio_queue_depth'), 2);
    assert.ok(valueOf(queued, 'article_audio_oldest_queued_age_seconds') >= 0);
    assert.equal((await calls.post(`/v1/jobs/${held}/cancel`)).status, 200);
    await waitForJob(calls, ok, (job) => job.status === 'succeeded');
    await waitForJob(calls, failing, (job) => job.status === 'failed');
    let end = await scrape(url);
    for (let i = 0; i < 50 && valueOf(end, 'article_audio_runs_finished_total', { outcome: 'failed' }) < 1; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      end = await scrape(url);
    }
    assert.equal(valueOf(end, 'article_audio_runs_finished_total', { model: mini, outcome: 'succeeded' }), 1);
    assert.equal(valueOf(end, 'article_audio_runs_finished_total', { model: mini, outcome: 'failed' }), 1);
    assert.equal(valueOf(end, 'article_audio_job_failures_total', { code: 'fetch_failed' }), 1);
    assert.equal(valueOf(end, 'article_audio_run_duration_seconds_count', { model: mini, outcome: 'succeeded' }), 1);
    assert.equal(valueOf(end, 'article_audio_queue_depth'), 0);
    assert.equal(valueOf(end, 'article_audio_oldest_queued_age_seconds'), 0);
  });
});
