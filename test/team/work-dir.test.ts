// A worker whose --work-dir is unusable (missing, not a folder, not writable) refuses to start: a clear message and
// exit code 2, before it says "started". Before, it started and then failed every job it claimed. Real processes:
// dist/cli.js worker (npm run build first) against a real Postgres, so that a usable --work-dir would start it.
import * as assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { repoRoot } from '../support/engine-process';
import { ownProcess } from '../support/own-processes.mjs';
import { type Cluster, startCluster } from './cluster';
import { type TestPostgres, startPostgres } from './postgres';

const cli = path.join(repoRoot, 'dist', 'cli.js');

describe('team worker: an unusable --work-dir', () => {
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
});
