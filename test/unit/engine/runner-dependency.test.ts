// A run whose database or storage stays down for a whole retry budget gives its job back to the queue and counts as
// a lost run (issue 24); past --max-crashes such runs, the job fails `unavailable` instead of being given back for
// ever. The runner (src/engine/core/runner.ts) against a ledger (its own contract, RunLedger) whose writes keep
// failing as a stopped database does (ECONNREFUSED), with a retry budget of a few milliseconds.
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import type { JobFailure, StoredJob } from '../../../src/engine/core/job-store';
import { JobRunner, type RunLedger } from '../../../src/engine/core/runner';
import type { ArticlePipeline } from '../../../src/speech/types';

const work = mkdtempSync(path.join(os.tmpdir(), 'aa-runner-'));
after(() => rmSync(work, { recursive: true, force: true }));

function record(crashes: number): StoredJob {
  const now = new Date().toISOString();
  return {
    id: 'job-1',
    owner: 'owner',
    request: { model_id: 'article-audio-1-mini', text: 'A text.' },
    status: 'processing',
    progress: 0,
    createdAt: now,
    updatedAt: now,
    attempts: crashes + 1,
    crashes,
    error: null,
    outputs: null,
    result: null,
  };
}

/** A pipeline that says one line and then waits until its run is aborted (the runner aborts it when a write fails). */
const pipeline: ArticlePipeline = {
  run: (_input, context) => {
    context.log('info', 'Fetching the article.');
    return new Promise((_resolve, reject) => {
      context.signal.addEventListener('abort', () => reject(context.signal.reason as Error), { once: true });
    });
  },
  close: () => Promise.resolve(),
};

async function runWithDatabaseDown(crashes: number, maxCrashes: number | undefined) {
  const calls: { released?: string; failed?: JobFailure } = {};
  const refused = () =>
    Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
  const ledger: RunLedger = {
    jobId: 'job-1',
    record: record(crashes),
    signal: new AbortController().signal,
    stopping: () => false,
    prepareWorkDir: () => Promise.resolve(mkdtempSync(path.join(work, 'run-'))),
    emit: refused,
    storePart: refused,
    announcePart: refused,
    succeed: refused,
    fail: (failure) => {
      calls.failed = failure;
      return Promise.resolve(true);
    },
    release: (reason) => {
      calls.released = reason;
      return Promise.resolve(true);
    },
    unsaved: () => Promise.resolve(),
    finish: (dir) => (dir ? Promise.resolve(rmSync(dir, { recursive: true, force: true })) : Promise.resolve()),
  };
  const logged: string[] = [];
  const runner = new JobRunner({
    pipeline,
    progressIntervalMs: 1000,
    fetchLimits: {} as never,
    log: (_level, message) => logged.push(message),
    retry: { budgetMs: 30, firstDelayMs: 5, maxDelayMs: 10 },
    ...(maxCrashes === undefined ? {} : { maxCrashes }),
  });
  await runner.run(ledger);
  return { ...calls, logged };
}

describe('a run whose dependency stays down', () => {
  it('gives its job back to the queue, saying why, while runs lost are within --max-crashes', async () => {
    const run = await runWithDatabaseDown(0, 3);
    assert.equal(run.failed, undefined);
    assert.match(
      run.released ?? '',
      /could not reach its storage or database for a minute \(writing a log line kept failing for \d+ tries: connect ECONNREFUSED/,
    );
    assert.match(run.released ?? '', /runs again from the start/);
  });

  it('fails the job as unavailable, with advice, once its runs lost pass --max-crashes', async () => {
    const run = await runWithDatabaseDown(3, 3);
    assert.equal(run.released, undefined, 'not given back again');
    assert.equal(run.failed?.code, 'unavailable');
    assert.match(run.failed?.message ?? '', /4 runs of this job were lost, so it was not tried again/);
    assert.match(run.failed?.message ?? '', /administrator should check its database and storage/);
    assert.ok(
      run.logged.some((line) => /4 runs lost, so it fails/.test(line)),
      run.logged.join('\n'),
    );
  });

  it('is always given back when no limit is set', async () => {
    const run = await runWithDatabaseDown(10, undefined);
    assert.equal(run.failed, undefined);
    assert.ok(run.released);
  });
});
