// Team folder storage (`--storage DIR`) kept like the embedded data dir: private to the service's user (folders 0700,
// files 0600, a folder made by someone else tightened at start), and --min-free-disk-mb applied to its disk, so that
// an API node refuses submissions (507 insufficient_storage) rather than accept jobs no worker can store.
//
// The full disk is a small tmpfs mounted for the test (needs root with CAP_SYS_ADMIN; skipped with the reason
// otherwise).
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { articleText, serviceCalls, waitForJob } from '../support/http-calls';
import { type Cluster, startCluster } from './cluster';
import { type TestPostgres, startPostgres } from './postgres';

const mini = 'article-audio-1-mini';

function modesUnder(dir: string): { path: string; dir: boolean; mode: number }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).map((entry) => {
    const full = path.join(entry.parentPath, entry.name);
    return { path: full, dir: entry.isDirectory(), mode: statSync(full).mode & 0o777 };
  });
}

describe('team folder storage: file modes and free disk', () => {
  let postgres: TestPostgres;
  const clusters: Cluster[] = [];
  const mounts: string[] = [];

  before(async () => {
    postgres = await startPostgres();
  });
  after(async () => {
    // Unmounted first: the clusters remove their storage folders.
    for (const dir of mounts) execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
    for (const cluster of clusters) await cluster.dispose();
    await postgres?.stop();
  });

  it('keeps output folders 0700 and files 0600, and tightens a storage folder made 0755', async () => {
    const cluster = await startCluster({
      serverUrl: postgres.url,
      workerEnv: { AA_TEST_STEPS: '2', AA_TEST_STEP_MS: '10', AA_TEST_PARTS: '2' },
    });
    clusters.push(cluster);
    chmodSync(cluster.storage, 0o755);
    await cluster.startApi();
    await cluster.startWorker();
    const calls = serviceCalls(cluster.apis[0]?.url ?? '', cluster.tokens[0] as string);
    const id = (await calls.submit({ model_id: mini, text: articleText() })).jobId;
    const job = await waitForJob(calls, id, (j) => j.status === 'succeeded', 60_000);
    assert.ok(job.outputs?.results?.length, 'the job has outputs');

    assert.equal(statSync(cluster.storage).mode & 0o777, 0o700, 'the storage folder');
    const entries = modesUnder(cluster.storage);
    assert.ok(
      entries.some((e) => !e.dir && e.path.endsWith('.mp3')),
      JSON.stringify(entries),
    );
    for (const entry of entries) {
      assert.equal(entry.mode.toString(8), entry.dir ? '700' : '600', entry.path);
    }
  });

  it('refuses submissions with 507 when the storage folder has less free disk than --min-free-disk-mb', async (t) => {
    const cluster = await startCluster({ serverUrl: postgres.url, apiArgs: ['--min-free-disk-mb', '1'] });
    clusters.push(cluster);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k,mode=0700', 'tmpfs', cluster.storage], { stdio: 'pipe' });
    } catch (error) {
      t.skip(
        `cannot mount a small tmpfs here (${String((error as { stderr?: Buffer }).stderr ?? error).trim()}); needs root with CAP_SYS_ADMIN`,
      );
      return;
    }
    mounts.push(cluster.storage);
    await cluster.startApi();
    const calls = serviceCalls(cluster.apis[0]?.url ?? '', cluster.tokens[0] as string);
    const refused = await calls.submit({ model_id: mini, text: articleText() });
    assert.equal(refused.status, 507, refused.text);
    assert.equal(refused.errors[0]?.code, 'insufficient_storage');
    assert.equal(refused.headers.get('retry-after'), '60');
    assert.ok(!refused.text.includes(cluster.storage), 'the answer names no folder');
    const rows = await cluster.query<{ n: string }>('SELECT count(*) AS n FROM aa_jobs');
    assert.equal(rows[0]?.n, '0', 'nothing was stored');

    // Room again (the small disk unmounted): accepted, once the node measures again (at most a second later).
    execFileSync('umount', [cluster.storage]);
    mounts.splice(mounts.indexOf(cluster.storage), 1);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    assert.equal((await calls.submit({ model_id: mini, text: articleText() })).status, 202);
  });
});
