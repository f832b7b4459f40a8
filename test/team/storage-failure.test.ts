// A team worker whose disk fills up: its local scratch folder (--work-dir) or the shared output folder (--storage
// DIR). Either way the job fails with `storage_failed` and a message that says what to do, as in the embedded engine
// (job-service's describeFailure / internalFailure), not as an opaque `internal`; no half-written file is left in
// the output storage, and the worker goes on with the next job once there is room.
//
// Real conditions only: a full disk is a small tmpfs mounted for the test (needs root with CAP_SYS_ADMIN; skipped
// with the reason otherwise).
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type ServiceCalls, articleText, serviceCalls, waitForJob } from '../support/http-calls';
import { type Cluster, startCluster } from './cluster';
import { type TestPostgres, startPostgres } from './postgres';

const mini = 'article-audio-1-mini';

function mountTiny(dir: string, size: string): string | undefined {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir], { stdio: 'pipe' });
    return undefined;
  } catch (error) {
    return `cannot mount a small tmpfs here (${String((error as { stderr?: Buffer }).stderr ?? error).trim()}); needs root with CAP_SYS_ADMIN`;
  }
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

describe('team worker: a full disk fails the job as storage_failed', () => {
  let postgres: TestPostgres;
  let cluster: Cluster;
  let calls: ServiceCalls;
  const mounts: string[] = [];
  let skipReason: string | undefined;

  before(async () => {
    postgres = await startPostgres();
    // --min-free-disk-mb 0: the API node would refuse submissions to a full storage folder (507) before any worker
    // could find it full; here the worker's side is tested (folder-storage.test.ts tests the refusal).
    cluster = await startCluster({
      serverUrl: postgres.url,
      apiArgs: ['--min-free-disk-mb', '0'],
      workerArgs: ['--lease-s', '5', '--concurrency', '1'],
    });
    await cluster.startApi();
    calls = serviceCalls(cluster.apis[0]?.url ?? '', cluster.tokens[0] as string);
  });
  after(async () => {
    await cluster?.dispose();
    for (const dir of mounts) {
      execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    }
    await postgres?.stop();
  });

  it("fails as storage_failed when the worker's scratch folder (--work-dir) is full", async (t) => {
    const scratch = mkdtempSync(path.join(os.tmpdir(), 'aa-team-scratch-'));
    skipReason = mountTiny(scratch, '8k');
    if (skipReason) {
      rmSync(scratch, { recursive: true, force: true });
      t.skip(skipReason);
      return;
    }
    mounts.push(scratch);
    const worker = await cluster.startWorker(['--work-dir', scratch]);
    try {
      const id = (await calls.submit({ model_id: mini, text: articleText() })).jobId;
      const job = await waitForJob(calls, id, (j) => j.status === 'failed', 60_000);
      assert.equal(job.error?.code, 'storage_failed', JSON.stringify(job.error));
      assert.match(job.error?.message ?? '', /disk is full \(ENOSPC\)\. Free some disk space/);
    } finally {
      await worker.stop();
    }
  });

  it('fails as storage_failed when the shared output folder (--storage DIR) is full, leaving no file behind', async (t) => {
    if (skipReason) {
      t.skip(skipReason);
      return;
    }
    // The test pipeline writes about 20 KB of audio: 12 KB of shared folder cannot take it.
    const reason = mountTiny(cluster.storage, '12k');
    if (reason) {
      t.skip(reason);
      return;
    }
    mounts.push(cluster.storage);
    const worker = await cluster.startWorker();
    try {
      const id = (await calls.submit({ model_id: mini, text: articleText() })).jobId;
      const job = await waitForJob(calls, id, (j) => j.status === 'failed', 60_000);
      assert.equal(job.error?.code, 'storage_failed', JSON.stringify(job.error));
      assert.match(job.error?.message ?? '', /\(ENOSPC\)/);
      assert.deepEqual(filesUnder(cluster.storage), [], 'the failed run removed what it had written');
      const rows = await cluster.query<{ status: string }>('SELECT status FROM aa_jobs WHERE id = $1', [id]);
      assert.equal(rows[0]?.status, 'failed');

      // Room again (the folder unmounted: the real one underneath): the same worker does the next job.
      execFileSync('umount', [cluster.storage]);
      mounts.splice(mounts.indexOf(cluster.storage), 1);
      const next = (await calls.submit({ model_id: mini, text: articleText() })).jobId;
      await waitForJob(calls, next, (j) => j.status === 'succeeded', 60_000);
    } finally {
      await worker.stop();
    }
  });
});
