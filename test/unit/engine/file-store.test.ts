// The file store and crash recovery: what a crash can leave on disk (torn event lines, temp files, half-created
// jobs, a job stopped mid-run, a finished record without its closing events, a stale lock) never stops the engine
// from starting, and every accepted job comes back.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ownerIdOf } from '../../../src/engine/core/auth';
import { newJobRecord } from '../../../src/engine/core/job-record';
import { newJobId } from '../../../src/engine/core/job-id';
import { FileJobStore } from '../../../src/engine/embedded/file-store';
import { LOCK_FILE } from '../../../src/engine/embedded/data-dir-lock';
import type { StoredEvent, StoredJob } from '../../../src/engine/core/job-store';
import { articleText, waitForJob } from '../../support/http-calls';
import { openStream } from '../../support/sse-reader';
import { TOKEN, startFixture } from './engine-fixture';

function record(overrides: Partial<StoredJob> = {}): StoredJob {
  return {
    ...newJobRecord(ownerIdOf(TOKEN), { model_id: 'article-audio-1-mini', text: articleText() }, undefined),
    ...overrides,
  };
}

const firstEvents: StoredEvent[] = [
  { id: 1, event: 'status', data: { status: 'queued', output: null, progress: 0 } },
  { id: 2, event: 'log', data: { level: 'info', message: 'Accepted.', created_at: new Date().toISOString() } },
];

describe('engine: file store', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'aa-store-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('cuts off a torn last event line, so later appends start clean and replay reads every intact event', async () => {
    const store = new FileJobStore({ dataDir: dir });
    await store.open();
    const job = record();
    await store.create(job, firstEvents);
    await store.appendEvents(
      job.id,
      [{ id: 3, event: 'log', data: { level: 'info', message: 'three', created_at: 'x' } }],
      false,
    );
    await store.close();
    const log = path.join(dir, 'jobs', job.id, 'events.ndjson');
    appendFileSync(log, '{"id":4,"event":"log","data":{"lev');

    const reopened = new FileJobStore({ dataDir: dir });
    const loaded = await reopened.open();
    assert.equal(loaded.length, 1);
    assert.equal(loaded[0]?.lastEvent?.id, 3);
    assert.ok(readFileSync(log, 'utf8').endsWith('"created_at":"x"}}\n'), 'the torn line is still there');
    await reopened.appendEvents(
      job.id,
      [{ id: 4, event: 'log', data: { level: 'info', message: 'four', created_at: 'y' } }],
      true,
    );
    assert.deepEqual(
      (await reopened.readEvents(job.id)).map((e) => e.id),
      [1, 2, 3, 4],
    );
    await reopened.close();
  });

  it('skips what a crash or a stranger left behind: temp files, half-created jobs, damaged records, foreign folders', async () => {
    const store = new FileJobStore({ dataDir: dir });
    await store.open();
    const good = record();
    await store.create(good, firstEvents);
    const damaged = record();
    await store.create(damaged, firstEvents);
    await store.close();
    const jobs = path.join(dir, 'jobs');
    writeFileSync(path.join(jobs, good.id, 'job.json.abc123.tmp'), '{"half');
    writeFileSync(path.join(jobs, damaged.id, 'job.json'), '{"id": "not what it should be"}');
    const halfCreated = newJobId();
    mkdirSync(path.join(jobs, halfCreated));
    writeFileSync(path.join(jobs, halfCreated, 'events.ndjson'), '');
    mkdirSync(path.join(jobs, 'not-a-job'));

    const logs: string[] = [];
    const reopened = new FileJobStore({ dataDir: dir, log: (level, message) => logs.push(`${level} ${message}`) });
    const loaded = await reopened.open();
    assert.deepEqual(
      loaded.map((l) => l.job.id),
      [good.id],
    );
    assert.equal(existsSync(path.join(jobs, good.id, 'job.json.abc123.tmp')), false);
    assert.equal(existsSync(path.join(jobs, halfCreated)), false);
    assert.ok(existsSync(path.join(jobs, damaged.id)), 'a damaged record must be kept for inspection, not deleted');
    assert.ok(logs.some((l) => l.startsWith('error') && l.includes(damaged.id)));
    await reopened.close();
  });

  it('refuses output names that could leave the job folder, and files that are not regular files', async () => {
    const store = new FileJobStore({ dataDir: dir });
    await store.open();
    const job = record();
    await store.create(job, firstEvents);
    const run = await store.prepareRun(job.id);
    // A file outside the job's folder (removed with the data dir).
    writeFileSync(path.join(dir, 'outside.txt'), 'secret');
    symlinkSync(path.join(dir, 'outside.txt'), path.join(run, 'link.mp3'));
    for (const name of ['../job.json', '.hidden', 'a/b.mp3', '', 'x'.repeat(101)]) {
      await assert.rejects(
        store.commitOutputs(job.id, run, [{ name, contentType: 'audio/mpeg' }]),
        /not a plain, unique file name/,
        name,
      );
    }
    await assert.rejects(
      store.commitOutputs(job.id, run, [{ name: 'link.mp3', contentType: 'audio/mpeg' }]),
      /not a regular file/,
    );
    assert.throws(() => store.readOutput(job.id, '../job.json'));
    assert.throws(() => store.readOutput('../../etc', 'passwd'));
    await store.close();
  });

  it('lets only one engine use a data dir, and takes over a lock whose process is gone', async () => {
    const first = new FileJobStore({ dataDir: dir });
    await first.open();
    const second = new FileJobStore({ dataDir: dir, lock: { waitMs: 300 } });
    await assert.rejects(second.open(), /Another engine \(pid \d+\) is using the data dir/);
    await first.close();
    await second.open();
    await second.close();

    // A lock left by a process that no longer exists (kill -9): taken over at once.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    // (Only a pid from this same host and PID namespace is believed dead; see data-dir-lock.test.ts.)
    writeFileSync(
      path.join(dir, LOCK_FILE),
      JSON.stringify({
        pid: Number(dead.stdout),
        nonce: 'x',
        host: os.hostname(),
        pidNamespace: readlinkSync('/proc/self/ns/pid'),
      }),
    );
    const third = new FileJobStore({ dataDir: dir, lock: { waitMs: 0 } });
    await third.open();
    assert.match(readFileSync(path.join(dir, LOCK_FILE), 'utf8'), new RegExp(`"pid":${process.pid}`));
    await third.close();
    assert.equal(existsSync(path.join(dir, LOCK_FILE)), false);

    // A torn lock file (crash while writing it) is taken over once it is not brand new.
    writeFileSync(path.join(dir, LOCK_FILE), '{"pi');
    const past = new Date(Date.now() - 10_000);
    const { utimesSync } = await import('node:fs');
    utimesSync(path.join(dir, LOCK_FILE), past, past);
    const fourth = new FileJobStore({ dataDir: dir, lock: { waitMs: 0 } });
    await fourth.open();
    await fourth.close();
  });
});

describe('engine: recovery after a crash', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'aa-recovery-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function seed(jobs: { job: StoredJob; events: StoredEvent[] }[]): Promise<void> {
    const store = new FileJobStore({ dataDir: dir });
    await store.open();
    for (const { job, events } of jobs) await store.create(job, events);
    await store.close();
  }

  it('runs a job again that was processing when the engine died, continuing its stream ids', async () => {
    const job = record({ status: 'processing', attempts: 1, progress: 0.4 });
    const events: StoredEvent[] = [
      ...firstEvents,
      { id: 3, event: 'status', data: { status: 'processing', output: null, progress: 0.4 } },
    ];
    await seed([{ job, events }]);
    const fixture = await startFixture({}, dir);
    try {
      const done = await waitForJob(fixture.calls, job.id, (j) => j.status === 'succeeded');
      assert.equal(done.progress, 1);
      const stream = await openStream(`${fixture.engine.url}/v1/jobs/${job.id}/stream`, TOKEN, '3');
      await stream.done;
      assert.equal(stream.events[0]?.id, '4');
      assert.match(stream.events[0]?.data ?? '', /stopped unexpectedly/);
      const progress = stream.events
        .filter((e) => e.event === 'status')
        .map((e) => (JSON.parse(e.data) as { progress: number }).progress);
      assert.ok(
        progress.every((p) => p >= 0.4),
        `progress went below what clients had seen: ${progress.join(', ')}`,
      );
      const saved = JSON.parse(readFileSync(path.join(dir, 'jobs', job.id, 'job.json'), 'utf8')) as StoredJob;
      assert.equal(saved.crashes, 1);
      assert.equal(saved.attempts, 2);
    } finally {
      await fixture.dispose();
    }
  });

  it('gives up on a job that keeps crashing the engine: failed with code interrupted', async () => {
    const job = record({ status: 'processing', attempts: 3, crashes: 3 });
    await seed([{ job, events: firstEvents }]);
    const fixture = await startFixture({ maxCrashes: 3 }, dir);
    try {
      const failed = await waitForJob(fixture.calls, job.id, (j) => j.status === 'failed');
      assert.equal(failed.error?.code, 'interrupted');
    } finally {
      await fixture.dispose();
    }
  });

  it('writes the closing events of a job whose final record was saved just before the crash', async () => {
    const job = record({
      status: 'failed',
      progress: 0.5,
      error: { code: 'fetch_failed', message: 'gone' },
      finishedAt: new Date().toISOString(),
    });
    await seed([{ job, events: firstEvents }]);
    const fixture = await startFixture({}, dir);
    try {
      const stream = await openStream(`${fixture.engine.url}/v1/jobs/${job.id}/stream`, TOKEN, '2');
      await stream.done;
      assert.deepEqual(
        stream.events.map((e) => e.event),
        ['status', 'log', 'end'],
      );
      assert.equal(stream.events.at(-1)?.data, 'failed');
      assert.deepEqual((JSON.parse(stream.events[0]?.data ?? '{}') as { error: unknown }).error, {
        code: 'fetch_failed',
        message: 'gone',
      });
    } finally {
      await fixture.dispose();
    }
  });

  it('removes finished jobs that expired while the engine was down', async () => {
    const old = new Date(Date.now() - 2 * 3600_000).toISOString();
    const job = record({
      status: 'failed',
      error: { code: 'cancelled', message: 'x' },
      createdAt: old,
      finishedAt: old,
    });
    await seed([{ job, events: firstEvents }]);
    const fixture = await startFixture({ retentionMs: 3600_000 }, dir);
    try {
      assert.equal((await fixture.calls.get(`/v1/jobs/${job.id}`)).status, 404);
      assert.deepEqual(readdirSync(path.join(dir, 'jobs')), []);
    } finally {
      await fixture.dispose();
    }
  });

  it('keeps queued jobs and their order across a clean restart', async () => {
    const fixture = await startFixture({
      concurrency: 1,
      pipelineOptions: { hold: () => new Promise(() => undefined) },
      stopTimeoutMs: 200,
    });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await fixture.calls.submit({ model_id: 'article-audio-1-mini', text: `${i} ${articleText()}` })).jobId);
    await waitForJob(fixture.calls, ids[0] as string, (j) => j.status === 'processing');
    await fixture.engine.close();
    const again = await fixture.restart({ pipelineOptions: {} });
    try {
      for (const id of ids) await waitForJob(again.calls, id, (j) => j.status === 'succeeded');
      const finished = await Promise.all(
        ids.map(async (id) => (await again.calls.get(`/v1/jobs/${id}`)).job.finished_at as string),
      );
      assert.deepEqual([...finished].sort(), finished, 'jobs did not run in the order they were accepted');
    } finally {
      await again.engine.close();
      await fixture.dispose();
    }
  });
});
