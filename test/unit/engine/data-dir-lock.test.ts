// The data dir lock against holders a pid check gets wrong: an engine whose event loop is blocked (it cannot touch
// its lock on the main thread), and an engine in another PID namespace (its pid is invisible, or someone else's, here).
// Both are real processes holding the lock through the real module; the second engine tries for several times the
// staleness limit and must not get the lock.
import * as assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ownerIdOf } from '../../../src/engine/core/auth';
import { newJobRecord } from '../../../src/engine/core/job-record';
import { newJobId } from '../../../src/engine/core/job-id';
import { LOCK_FILE, lockDataDir } from '../../../src/engine/embedded/data-dir-lock';
import { FileJobStore } from '../../../src/engine/embedded/file-store';

const MODULE = path.resolve(__dirname, '../../../src/engine/embedded/data-dir-lock.ts');
const STALE_MS = 1000;

/** A holder process: takes the lock, prints `locked <pid>`, then (when asked) blocks its event loop for good. */
function holderScript(dataDir: string, block: boolean): string {
  return `require(${JSON.stringify(MODULE)}).lockDataDir(${JSON.stringify(dataDir)}, { waitMs: 0, staleMs: ${STALE_MS} }).then(() => {
    process.stdout.write('locked ' + process.pid + '\\n');
    ${block ? 'for (;;) {}' : 'setInterval(() => {}, 1000);'}
  });`;
}

async function untilLocked(child: ChildProcess): Promise<number> {
  let out = '';
  let err = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  return new Promise((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const pid = /locked (\d+)/.exec(out)?.[1];
      if (pid) resolve(Number(pid));
    });
    child.on('exit', (code) => reject(new Error(`the holder exited (${code}) before taking the lock: ${err}`)));
  });
}

function visible(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

describe('engine: the data dir lock cannot be taken from a live engine', () => {
  let dir: string;
  let holder: ChildProcess | undefined;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'aa-lock-'));
  });
  afterEach(async () => {
    if (holder && holder.exitCode === null && holder.signalCode === null) {
      const gone = new Promise((resolve) => holder!.once('exit', resolve));
      holder.kill('SIGKILL');
      await gone;
    }
    holder = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  async function assertNotTaken(): Promise<void> {
    const before = readFileSync(path.join(dir, LOCK_FILE), 'utf8');
    // Several times the staleness limit: a heartbeat from the blocked main thread would have been missed by now.
    await assert.rejects(
      lockDataDir(dir, { waitMs: STALE_MS * 4, staleMs: STALE_MS }),
      /Another engine \(pid \d+.*\) is using the data dir/,
    );
    assert.equal(readFileSync(path.join(dir, LOCK_FILE), 'utf8'), before, 'the lock file is still the holder’s');
  }

  it('keeps the lock while the holder’s event loop is blocked', async () => {
    holder = spawn(process.execPath, ['--import', 'tsx', '-e', holderScript(dir, true)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await untilLocked(holder);
    await assertNotTaken();
  });

  it('keeps the lock when the holder lives in another PID namespace', async (t) => {
    const probe = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true'], { stdio: 'ignore' });
    if (probe.error || probe.status !== 0) {
      t.skip('unshare --pid is not available here (needs root or user namespaces)');
      return;
    }
    // Pids in a new namespace count up from 1 (sh), so after n short processes the holder is pid n + 2. Pick n so that
    // this pid names no process or thread out here: the case where a pid check believes a live holder dead.
    let n = 60;
    while (n < 2000 && visible(n + 2)) n++;
    const command = `i=0; while [ $i -lt ${n} ]; do /bin/true; i=$((i+1)); done; "$0" --import tsx -e "$1"`;
    holder = spawn(
      'unshare',
      [
        '--pid',
        '--fork',
        '--kill-child',
        '--mount-proc',
        'sh',
        '-c',
        command,
        process.execPath,
        holderScript(dir, false),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const innerPid = await untilLocked(holder);
    assert.equal(innerPid, n + 2);
    assert.match(readFileSync(path.join(dir, LOCK_FILE), 'utf8'), new RegExp(`"pid":${innerPid}\\b`));
    await assertNotTaken();
  });

  it('is taken at once from a holder that was killed, and after a clean release', async () => {
    holder = spawn(process.execPath, ['--import', 'tsx', '-e', holderScript(dir, false)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await untilLocked(holder);
    const gone = new Promise((resolve) => holder!.once('exit', resolve));
    holder.kill('SIGKILL');
    await gone;
    const lock = await lockDataDir(dir, { waitMs: 0, staleMs: 60_000 });
    assert.match(readFileSync(path.join(dir, LOCK_FILE), 'utf8'), new RegExp(`"pid":${process.pid}\\b`));
    await lock.release();
    const again = await lockDataDir(dir, { waitMs: 0, staleMs: 60_000 });
    await again.release();
  });

  it('stops writing, and starts no job, once another engine holds the lock', async () => {
    let lost!: () => void;
    const noticed = new Promise<void>((resolve) => (lost = resolve));
    const store = new FileJobStore({
      dataDir: dir,
      lock: { staleMs: 400 },
      log: (level, message) => {
        if (level === 'error' && /belongs to another engine/.test(message)) lost();
      },
    });
    await store.open();
    const job = newJobRecord(ownerIdOf('t'), { model_id: 'article-audio-1-mini', text: 'x'.repeat(60) }, undefined);
    await store.create(job, []);
    // What a second engine does once our lock is gone (say the data dir was deleted and made again by it).
    writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: 1, nonce: 'another-engine', host: 'elsewhere' }));
    await noticed;
    await assert.rejects(store.prepareRun(job.id), /belongs to another engine/);
    await assert.rejects(store.save({ ...job, status: 'processing' }), /belongs to another engine/);
    await assert.rejects(store.create({ ...job, id: newJobId() }, []), /belongs to another engine/);
    await store.close();
    assert.match(
      readFileSync(path.join(dir, LOCK_FILE), 'utf8'),
      /another-engine/,
      'the other engine’s lock is left alone',
    );
  });

  it('refuses a run’s writes at once after a takeover, before its heartbeat notices (an engine frozen, then woken)', async () => {
    // Seen in a stress run (dependency-faults, embedded): the frozen engine, continued, wrote a job `failed` (ENOENT
    // in the run folder the other engine had removed) while the other engine ran it. The heartbeat beats every
    // 10 s here, so only a read of the lock at the write itself can refuse these.
    const logs: string[] = [];
    const store = new FileJobStore({
      dataDir: dir,
      lock: { staleMs: 80_000 },
      log: (level, message) => logs.push(`${level} ${message}`),
    });
    await store.open();
    try {
      const job = newJobRecord(ownerIdOf('t'), { model_id: 'article-audio-1-mini', text: 'x'.repeat(60) }, undefined);
      await store.create(job, []);
      const run = await store.prepareRun(job.id);
      writeFileSync(path.join(run, 'part-0000.mp3'), 'audio');
      writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: 1, nonce: 'another-engine', host: 'elsewhere' }));

      await assert.rejects(store.save({ ...job, status: 'failed' }), /belongs to another engine/);
      await assert.rejects(
        store.appendEvents(job.id, [{ id: 1, event: 'end', data: 'failed' }], true),
        /belongs to another engine/,
      );
      await assert.rejects(
        store.put(job.id, 'part-0000.mp3', path.join(run, 'part-0000.mp3'), { contentType: 'audio/mpeg' }),
        /belongs to another engine/,
      );
      await assert.rejects(store.prepareRun(job.id), /belongs to another engine/);
      assert.ok(existsSync(run), 'the run folder, which the other engine may be using, is left alone');
      assert.equal(
        (JSON.parse(readFileSync(path.join(dir, 'jobs', job.id, 'job.json'), 'utf8')) as { status: string }).status,
        'queued',
      );
      assert.equal(logs.filter((line) => /belongs to another engine/.test(line)).length, 1, 'said once');
    } finally {
      await store.close();
    }
  });

  it('refuses a woken run’s progress and log lines too: the lock is read again when its last read is 250 ms old', async () => {
    const store = new FileJobStore({ dataDir: dir, lock: { staleMs: 80_000 }, log: () => undefined });
    await store.open();
    try {
      const job = newJobRecord(ownerIdOf('t'), { model_id: 'article-audio-1-mini', text: 'x'.repeat(60) }, undefined);
      await store.create(job, []);
      await store.prepareRun(job.id);
      const line = (id: number) => ({
        id,
        event: 'log' as const,
        data: JSON.stringify({ level: 'info', message: `line ${id}` }),
      });
      await store.appendEvents(job.id, [line(1)], false);
      writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: 1, nonce: 'another-engine', host: 'elsewhere' }));
      // The time the engine was frozen, as the wall clock sees it.
      await new Promise((resolve) => setTimeout(resolve, 300));
      await assert.rejects(store.appendEvents(job.id, [line(2)], false), /belongs to another engine/);
      const events = readFileSync(path.join(dir, 'jobs', job.id, 'events.ndjson'), 'utf8');
      assert.match(events, /line 1/);
      assert.doesNotMatch(events, /line 2/, 'no line of the frozen run after the takeover');
    } finally {
      await store.close();
    }
  });
});
