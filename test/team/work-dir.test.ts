// A worker whose --work-dir is unusable (missing, not a folder, not writable) refuses to start: a clear message and
// exit code 2, before it says "started". Before, it started and then failed every job it claimed. Real processes:
// dist/cli.js worker (npm run build first) against a real Postgres, so that a usable --work-dir would start it.
// A worker killed mid-job leaves its run folder (audio and all) in --work-dir; the next worker started there removes
// it, and only the folders whose worker is gone; a worker already running removes it after its next run.
import * as assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { repoRoot } from '../support/engine-process';
import { articleText, serviceCalls, waitForJob } from '../support/http-calls';
import { ownProcess } from '../support/own-processes.mjs';
import { type Cluster, type WorkerProcess, startCluster } from './cluster';
import { type TestPostgres, startPostgres } from './postgres';

const cli = path.join(repoRoot, 'dist', 'cli.js');

describe('team worker: its --work-dir', () => {
  let postgres: TestPostgres;
  let cluster: Cluster;

  before(async () => {
    postgres = await startPostgres();
    cluster = await startCluster({ serverUrl: postgres.url });
  });
  after(async () => {
    await cluster?.dispose();
    await postgres?.stop();
  });

  it('refuses to start a worker whose --work-dir is missing, not a folder or not writable: exit code 2', async (t) => {
    const scratch = mkdtempSync(path.join(os.tmpdir(), 'aa-workdir-'));
    const file = path.join(scratch, 'a-file');
    writeFileSync(file, 'not a folder');
    const readOnly = path.join(scratch, 'read-only');
    execFileSync('mkdir', [readOnly]);
    let mounted = false;
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=64k', 'tmpfs', readOnly], { stdio: 'pipe' });
      mounted = true;
    } catch {
      // Not root: a folder without write permission says the same (root would write it anyway).
      execFileSync('chmod', ['0500', readOnly]);
    }
    try {
      const cases: [string, RegExp][] = [
        [path.join(scratch, 'missing'), /--work-dir \S+missing does not exist/],
        [file, /--work-dir \S+a-file is not a folder/],
        [readOnly, /--work-dir \S+read-only is not writable \((EROFS|EACCES)\)/],
      ];
      for (const [dir, message] of cases) {
        const child = spawn(
          process.execPath,
          [cli, 'worker', '--database', cluster.databaseUrl, '--storage', cluster.storage, '--work-dir', dir],
          { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
        );
        ownProcess(child);
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        const exit = await new Promise<number | null | 'still running'>((resolve) => {
          const timer = setTimeout(() => resolve('still running'), 30_000);
          child.on('exit', (code) => {
            clearTimeout(timer);
            resolve(code);
          });
        });
        if (exit === 'still running') {
          child.kill('SIGKILL');
          await new Promise((resolve) => child.once('exit', resolve));
        }
        assert.equal(exit, 2, `--work-dir ${dir}: stdout ${stdout} stderr ${stderr}`);
        assert.doesNotMatch(stdout, /started/);
        assert.match(stderr, message);
      }
      if (!mounted) t.diagnostic('read-only case: a 0500 folder (no tmpfs mount here)');
    } finally {
      if (mounted) execFileSync('umount', ['-l', readOnly], { stdio: 'ignore' });
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('removes, when it starts, the run folders of a worker killed on this machine, and no one else’s', async () => {
    await withRunAtGate(async ({ slow, workDir, gate, first, calls, id, killedRun, runFolders }) => {
      // A pid that is gone: a process that has exited.
      const dead = await new Promise<number>((resolve) => {
        const child = spawn(process.execPath, ['-e', '']);
        child.on('exit', () => resolve(child.pid as number));
      });
      const owner = /^aa-run-\d+@([^-]+)-/.exec(killedRun)?.[1];
      assert.ok(owner, killedRun);
      // Beside it: a live worker's (this test process's pid), another machine's (or container's), an older version's
      // (no owner) left two hours ago, and one written just now.
      const others = {
        live: `aa-run-${process.pid}@${owner}-${id}-Live01`,
        otherMachine: `aa-run-${dead}@${owner}x-${id}-Other1`,
        oldVersionOld: `aa-run-${id}-Old001`,
        oldVersionNew: `aa-run-${id}-New001`,
      };
      for (const name of Object.values(others)) {
        mkdirSync(path.join(workDir, name));
        writeFileSync(path.join(workDir, name, 'audio.mp3'), 'x');
      }
      const past = new Date(Date.now() - 2 * 3600_000);
      utimesSync(path.join(workDir, others.oldVersionOld, 'audio.mp3'), past, past);
      utimesSync(path.join(workDir, others.oldVersionOld), past, past);

      await first.kill9();
      assert.deepEqual(runFolders(first.pid), [killedRun], 'a killed worker leaves its run folder');
      writeFileSync(gate, '');
      const second = await slow.startWorker();
      const left = readdirSync(workDir);
      assert.ok(!left.includes(killedRun), `the killed worker's run folder is removed: ${left.join(', ')}`);
      assert.ok(!left.includes(others.oldVersionOld), 'an old folder without an owner here is removed');
      for (const kept of [others.live, others.otherMachine, others.oldVersionNew])
        assert.ok(left.includes(kept), `${kept} is kept: ${left.join(', ')}`);
      assert.match(second.stderr, /Removed 2 run folder\(s\) left in \S+ by workers that were killed/);

      // The job is run again by the second worker, and its folder goes when the run ends.
      await waitForJob(calls, id, (job) => job.status === 'succeeded', 120_000);
      const lingering = Date.now() + 10_000;
      while (runFolders(second.pid).length > 0 && Date.now() < lingering)
        await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(runFolders(second.pid), [], 'a run that ended removes its folder');
    });
  });

  it('removes the run folder of a worker killed beside it after its own next run, without a restart', async () => {
    await withRunAtGate(async ({ slow, workDir, gate, first, calls, id, killedRun }) => {
      // Started while the first one lives: its start-up sweep rightly keeps that folder.
      const second = await slow.startWorker();
      assert.doesNotMatch(second.stderr, /Removed \d+ run folder/);
      await first.kill9();
      writeFileSync(gate, '');
      // The second worker takes the job over once the lease runs out; after that run it removes the killed folder.
      await waitForJob(calls, id, (job) => job.status === 'succeeded', 120_000);
      const swept = Date.now() + 10_000;
      while (readdirSync(workDir).includes(killedRun) && Date.now() < swept)
        await new Promise((resolve) => setTimeout(resolve, 50));
      assert.deepEqual(readdirSync(workDir), [], "the killed worker's folder and the finished run's are gone");
      assert.match(second.stderr, /Removed 1 run folder\(s\) left in \S+ by workers that were killed/);
    });
  });

  /**
   * A team whose workers share a fresh work dir, and a job whose first worker holds it with its run folder made: the
   * job waits after its first part until `gate` exists, so that worker can be killed while it waits, however slow
   * the machine, and another finds the file and finishes the job.
   */
  async function withRunAtGate(
    test: (run: {
      slow: Cluster;
      workDir: string;
      gate: string;
      first: WorkerProcess;
      calls: ReturnType<typeof serviceCalls>;
      id: string;
      killedRun: string;
      runFolders: (pid: number) => string[];
    }) => Promise<void>,
  ): Promise<void> {
    const workDir = mkdtempSync(path.join(os.tmpdir(), 'aa-workdir-'));
    const gate = path.join(os.tmpdir(), `aa-workdir-gate-${process.pid}-${Date.now()}`);
    const slow = await startCluster({
      serverUrl: postgres.url,
      workerArgs: ['--work-dir', workDir, '--lease-s', '1', '--concurrency', '1'],
      workerEnv: { AA_TEST_STEPS: '4', AA_TEST_STEP_MS: '20', AA_TEST_PARTS: '2', AA_TEST_PART_GATE: gate },
    });
    try {
      const api = await slow.startApi();
      const first = await slow.startWorker();
      const calls = serviceCalls(api.url, slow.tokens[0] as string);
      const id = (await calls.submit({ model_id: 'article-audio-1-mini', text: articleText() })).jobId;
      const runFolders = (pid: number) => readdirSync(workDir).filter((name) => name.startsWith(`aa-run-${pid}@`));
      const deadline = Date.now() + 60_000;
      while (runFolders(first.pid).length === 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      const [killedRun] = runFolders(first.pid);
      assert.ok(killedRun, `the first worker's run folder appears in the work dir: ${readdirSync(workDir).join(', ')}`);
      await test({ slow, workDir, gate, first, calls, id, killedRun, runFolders });
    } finally {
      await slow.dispose();
      rmSync(workDir, { recursive: true, force: true });
      rmSync(gate, { force: true });
    }
  }
});
