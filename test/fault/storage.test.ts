// The engine process (dist/engine.js, the real speech pipeline) on a data dir that fills up or cannot be written:
// clear errors to clients (507 insufficient_storage, a failed job with the reason, a start-up error naming the
// folder), no job left hanging in `processing`, no existing job or output damaged, and normal work once the
// problem is gone.
//
// Real conditions only: a full disk is a 4 MB tmpfs mounted for the test (needs root with CAP_SYS_ADMIN; skipped
// with the reason otherwise); an unwritable folder is chmod 555 with the engine running as an unprivileged user
// (as root the engine is started as uid/gid 65534, because root ignores permission bits).
import * as assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import os from 'node:os';
import { markerEnv, ownProcess } from '../support/own-processes.mjs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type ArticleServer, startArticleServer } from '../support/article-server';
import { repoRoot } from '../support/engine-process';
import { type ServiceCalls, type WireJob, serviceCalls, waitForJob } from '../support/http-calls';
import { checkMp3 } from '../support/mp3-check';

const SHORT = readFileSync(path.join(repoRoot, 'test/fixtures/articles/short.md'), 'utf8');
const TOKEN = 'storage-token-0123456789abcdef';
const mini = 'article-audio-1-mini';
const isRoot = process.getuid?.() === 0;
const NOBODY = 65534;

interface Engine {
  url: string;
  calls: ServiceCalls;
  stdout: string;
  stderr: string;
  exited: Promise<number | null>;
  kill(): Promise<void>;
}

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** Ends every engine this file started that still runs (a failed assertion must not leave one behind). */
async function killAll(): Promise<void> {
  await Promise.all(
    [...children].map(async (child) => {
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await gone;
    }),
  );
}

/**
 * The folder to run dist/engine.js from as `uid`: the checkout itself may sit in a folder other users cannot enter
 * (a clone inside `mktemp -d` is 0700), so for another user the engine and the files it loads from beside itself
 * are copied once into a folder everyone can read.
 */
let engineCopy: string | undefined;
function engineDirFor(uid: number | undefined): string {
  const dist = path.join(repoRoot, 'dist');
  if (uid === undefined) return dist;
  if (!engineCopy) {
    engineCopy = mkdtempSync(path.join(os.tmpdir(), 'aa-fault-engine-'));
    chmodSync(engineCopy, 0o755);
    for (const file of readdirSync(dist)) {
      if (
        file.startsWith('engine.') ||
        file.startsWith('synth-worker.') ||
        file.startsWith('parse-worker.') ||
        file.startsWith('audio-worker.') ||
        file.endsWith('.wasm')
      )
        copyFileSync(path.join(dist, file), path.join(engineCopy, file));
    }
    process.on('exit', () => rmSync(engineCopy ?? '', { recursive: true, force: true }));
  }
  return engineCopy;
}

/** Starts dist/engine.js on `dataDir`, as `uid` when given; resolves with the engine or its start-up error line. */
async function startEngine(
  dataDir: string,
  uid?: number,
): Promise<Engine | { error: string; code: number | null; stderr: string }> {
  const engineDir = engineDirFor(uid);
  const child = spawn(
    process.execPath,
    [path.join(engineDir, 'engine.js'), '--port', '0', '--data-dir', dataDir, '--lock-wait-s', '1'],
    {
      cwd: engineDir,
      env: {
        PATH: process.env.PATH,
        ...markerEnv(),
        ARTICLE_AUDIO_TOKENS: TOKEN,
        ...(uid !== undefined ? { HOME: '/tmp' } : { HOME: process.env.HOME }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(uid !== undefined ? { uid, gid: uid } : {}),
    },
  );
  ownProcess(child);
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  const line = await new Promise<{ event: string; url?: string; message?: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no JSON line within 20 s; stderr: ${stderr}`)), 20_000);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const first = stdout.split('\n')[0];
      if (stdout.includes('\n') && first) {
        clearTimeout(timer);
        resolve(JSON.parse(first) as { event: string; url?: string; message?: string });
      }
    });
    void exited.then(() => setTimeout(() => reject(new Error(`exited without a JSON line; stderr: ${stderr}`)), 100));
  });
  if (line.event !== 'listening' || !line.url) return { error: line.message ?? '', code: await exited, stderr };
  const url = line.url;
  return {
    url,
    calls: serviceCalls(url, TOKEN),
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    exited,
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

function started(engine: Awaited<ReturnType<typeof startEngine>>): Engine {
  if ('error' in engine) throw new Error(`the engine did not start: ${engine.error}\n${engine.stderr}`);
  return engine;
}

async function outputs(engine: Engine, job: WireJob): Promise<{ path: string; etag: string | null; bytes: Buffer }[]> {
  return Promise.all(
    (job.outputs?.results ?? []).map(async (r) => {
      const response = await fetch(`${engine.url}${new URL(r.url).pathname}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      }).catch((error: Error) => {
        throw new Error(`GET ${r.url}: ${error.message} (${String(error.cause)})`);
      });
      assert.equal(response.status, 200, r.url);
      return {
        path: new URL(r.url).pathname,
        etag: response.headers.get('etag'),
        bytes: Buffer.from(await response.arrayBuffer()),
      };
    }),
  );
}

/** Every file under `dir` with its SHA-256, to prove nothing changed. */
function snapshot(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile())
        files.set(path.relative(dir, full), createHash('sha256').update(readFileSync(full)).digest('hex'));
    }
  };
  walk(dir);
  return files;
}

/**
 * Every job record on disk is whole JSON (a torn write would not parse). Returns the job folders without a record:
 * a creation that failed half way, which the store does not count as a job and removes when it opens.
 */
function assertRecordsParse(dataDir: string): string[] {
  const unfinished: string[] = [];
  for (const id of readdirSync(path.join(dataDir, 'jobs'))) {
    const record = path.join(dataDir, 'jobs', id, 'job.json');
    if (!existsSync(record)) unfinished.push(id);
    else assert.doesNotThrow(() => JSON.parse(readFileSync(record, 'utf8')), `${record} is not whole`);
  }
  return unfinished;
}

function fillDisk(file: string): number {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024, 7);
  let written = 0;
  try {
    for (;;) written += writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  // The last partial chunk.
  for (let size = 32 * 1024; size >= 512; size /= 2) {
    try {
      const extra = openSync(`${file}.${size}`, 'w');
      try {
        writeSync(extra, Buffer.alloc(size));
      } finally {
        closeSync(extra);
      }
    } catch {
      // full
    }
  }
  return written;
}

describe('fault: the data dir runs out of space (a real 4 MB tmpfs)', () => {
  let dataDir: string;
  let mounted = false;
  let skipReason: string | undefined;
  let pages: ArticleServer;
  let engine: Engine | undefined;

  before(async () => {
    pages = await startArticleServer();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'aa-fault-full-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0755', 'tmpfs', dataDir], { stdio: 'pipe' });
      mounted = true;
      process.on('exit', () => {
        if (mounted) execFileSync('umount', ['-l', dataDir], { stdio: 'ignore' });
      });
    } catch (error) {
      skipReason = `cannot mount a small tmpfs here (${String((error as { stderr?: Buffer }).stderr ?? error).trim()}); needs root with CAP_SYS_ADMIN`;
    }
  });
  after(async () => {
    await killAll();
    await pages.close();
    if (mounted) {
      execFileSync('umount', [dataDir]);
      mounted = false;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 507 to new jobs, fails the running one with the reason, keeps finished jobs whole, recovers', async (t) => {
    if (skipReason) {
      t.diagnostic(skipReason);
      t.skip(skipReason);
      return;
    }
    engine = started(await startEngine(dataDir));
    const { calls } = engine;
    const log = engine;
    t.after(() => {
      if (process.env.FAULT_VERBOSE) t.diagnostic(log.stderr);
    });
    const done = (id: string) =>
      waitForJob((engine as Engine).calls, id, (j) => j.status === 'succeeded' || j.status === 'failed', 60_000);
    const first = await done((await calls.submit({ model_id: mini, text: SHORT })).jobId);
    assert.equal(first.status, 'succeeded');
    const firstFiles = await outputs(engine, first);

    const page = pages.hold('disk-full');
    const running = (await calls.submit({ model_id: mini, url: page.url })).jobId;
    await page.requested;
    const filled = fillDisk(path.join(dataDir, 'filler'));
    t.diagnostic(`filled the data dir with ${Math.round(filled / 1024)} KB`);

    const refused = await calls.submit({ model_id: mini, text: SHORT });
    assert.equal(refused.status, 507, refused.text);
    assert.equal(refused.errors[0]?.code, 'insufficient_storage');
    assert.match(refused.errors[0]?.message ?? '', /no space left/);

    page.release();
    const failed = await done(running);
    assert.equal(failed.status, 'failed', 'the job running when the disk filled did not end');
    // The disk's fault, said as such: not synthesis_failed or internal.
    assert.equal(failed.error?.code, 'storage_failed', JSON.stringify(failed.error));
    assert.match(`${failed.error?.message}`, /ENOSPC|space/);
    t.diagnostic(`the running job: ${failed.error?.code}: ${failed.error?.message}`);

    // What was finished is untouched, byte for byte, and every record on disk is whole.
    const again = await outputs(engine, (await calls.get(`/v1/jobs/${first.id}`)).job);
    assert.deepEqual(
      again.map((f) => [f.path, f.etag]),
      firstFiles.map((f) => [f.path, f.etag]),
    );
    again.forEach((f, i) => assert.ok(f.bytes.equals(firstFiles[i]!.bytes), `${f.path} changed`));
    const unfinished = assertRecordsParse(dataDir);
    for (const id of unfinished)
      assert.equal((await calls.get(`/v1/jobs/${id}`)).status, 404, `the refused job ${id} is visible`);

    // Space comes back: work goes on, and after a crash the interrupted job runs again.
    for (const name of readdirSync(dataDir)) if (name.startsWith('filler')) rmSync(path.join(dataDir, name));
    const later = await done((await calls.submit({ model_id: mini, text: `Later. ${SHORT}` })).jobId);
    assert.equal(later.status, 'succeeded');
    await checkMp3((await outputs(engine, later))[0]!.bytes);
    await engine.kill();
    engine = started(await startEngine(dataDir));
    const rerun = await done(running);
    assert.equal(rerun.status, 'succeeded', `after the restart: ${JSON.stringify(rerun.error)}`);
    const restarted = await outputs(engine, (await engine.calls.get(`/v1/jobs/${first.id}`)).job);
    restarted.forEach((f, i) =>
      assert.ok(f.bytes.equals(firstFiles[i]!.bytes), `${f.path} changed across the restart`),
    );
    assert.deepEqual(assertRecordsParse(dataDir), [], 'half-created job folders are left after the restart');
  });
});

describe('fault: the data dir cannot be written', () => {
  let dataDir: string;
  let engine: Engine | undefined;
  const uid = isRoot ? NOBODY : undefined;
  const own = (dir: string) => {
    if (uid !== undefined) chownSync(dir, uid, uid);
  };

  before(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'aa-fault-readonly-'));
    own(dataDir);
  });
  after(async () => {
    await killAll();
    chmodSync(dataDir, 0o755);
    for (const sub of ['jobs']) {
      try {
        chmodSync(path.join(dataDir, sub), 0o755);
      } catch {
        // not there
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(`refuses new jobs with 507 and refuses to start with a clear error, changing nothing (engine runs as ${uid === undefined ? 'this user' : `uid ${uid}`})`, async () => {
    engine = started(await startEngine(dataDir, uid));
    const done = (calls: ServiceCalls, id: string) =>
      waitForJob(calls, id, (j) => j.status === 'succeeded' || j.status === 'failed', 60_000);
    const first = await done(engine.calls, (await engine.calls.submit({ model_id: mini, text: SHORT })).jobId);
    assert.equal(first.status, 'succeeded');
    const firstFiles = await outputs(engine, first);

    chmodSync(path.join(dataDir, 'jobs'), 0o555);
    const before = snapshot(path.join(dataDir, 'jobs'));
    const refused = await engine.calls.submit({ model_id: mini, text: SHORT });
    assert.equal(refused.status, 507, refused.text);
    assert.equal(refused.errors[0]?.code, 'insufficient_storage');
    assert.match(refused.errors[0]?.message ?? '', /not writable \(EACCES\)/);
    const again = await outputs(engine, (await engine.calls.get(`/v1/jobs/${first.id}`)).job);
    again.forEach((f, i) => assert.ok(f.bytes.equals(firstFiles[i]!.bytes), `${f.path} changed`));
    assert.deepEqual(snapshot(path.join(dataDir, 'jobs')), before, 'files in the data dir changed');

    // Writable again: work goes on.
    chmodSync(path.join(dataDir, 'jobs'), 0o755);
    const later = await done(
      engine.calls,
      (await engine.calls.submit({ model_id: mini, text: `Later. ${SHORT}` })).jobId,
    );
    assert.equal(later.status, 'succeeded');
    await engine.kill();
    engine = undefined;

    // Killed, then the folder turns read-only: the next start refuses with the reason (it cannot replace the
    // dead engine's lock), instead of hanging or half-starting, and changes nothing.
    chmodSync(dataDir, 0o555);
    chmodSync(path.join(dataDir, 'jobs'), 0o555);
    const beforeStart = snapshot(dataDir);
    const refusedRestart = await startEngine(dataDir, uid);
    assert.ok('error' in refusedRestart, 'the engine started on a folder it cannot write');
    assert.equal(refusedRestart.code, 1);
    assert.match(refusedRestart.error, /stale lock file cannot be replaced \(EACCES\)/);
    assert.ok(refusedRestart.error.includes(dataDir), `the error does not name the folder: ${refusedRestart.error}`);
    assert.deepEqual(snapshot(dataDir), beforeStart, 'a refused start changed the data dir');
    chmodSync(dataDir, 0o755);
    chmodSync(path.join(dataDir, 'jobs'), 0o755);
    engine = started(await startEngine(dataDir, uid));
    const served = await outputs(engine, (await engine.calls.get(`/v1/jobs/${first.id}`)).job);
    served.forEach((f, i) => assert.ok(f.bytes.equals(firstFiles[i]!.bytes), `${f.path} changed across the restart`));
    assert.equal((await engine.calls.get(`/v1/jobs/${later.id}`)).job.status, 'succeeded');
    await engine.kill();
    engine = undefined;

    // A new, empty folder it cannot write: it does not start, and says which folder and why.
    const empty = mkdtempSync(path.join(os.tmpdir(), 'aa-fault-readonly-empty-'));
    try {
      own(empty);
      chmodSync(empty, 0o555);
      const refusedStart = await startEngine(empty, uid);
      assert.ok('error' in refusedStart, 'the engine started on a folder it cannot write');
      assert.equal(refusedStart.code, 1);
      assert.match(refusedStart.error, /EACCES: permission denied/);
      assert.ok(refusedStart.error.includes(empty), `the error does not name the folder: ${refusedStart.error}`);
      assert.deepEqual(readdirSync(empty), []);
    } finally {
      chmodSync(empty, 0o755);
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('refuses to start on a data dir path that is a file, and leaves the file alone', async () => {
    const file = path.join(os.tmpdir(), `aa-fault-datadir-file-${process.pid}`);
    writeFileSync(file, 'not a folder\n');
    try {
      const result = await startEngine(file);
      assert.ok('error' in result, 'the engine started on a file');
      assert.notEqual(result.code, 0);
      assert.match(result.error, /ENOTDIR|not a directory|EEXIST|file/i);
      assert.equal(readFileSync(file, 'utf8'), 'not a folder\n');
      assert.ok(statSync(file).isFile());
    } finally {
      rmSync(file, { force: true });
    }
  });
});
