// One engine per data dir: two engines on the same jobs would run them twice and race on their files.
//
// The lock is a file (`engine.lock`) that names its owner, and a heartbeat: the owner touches the file every
// `staleMs / 8` from a worker thread, which keeps beating while the engine's event loop is blocked by a long
// synchronous task or a GC pause. A lock is taken over only when its heartbeat is older than `staleMs`; a pid is never
// enough on its own, because the owner may live in another PID namespace (a container sharing the folder) where its
// pid means nothing here, and pids are reused. The one shortcut: a lock written in this same PID namespace on this
// same host by a process that no longer exists (a kill -9) is taken at once, so a restart after a crash does not wait.
// Node has no flock(); native lock modules cannot be loaded from a universal .vsix under VS Code's Electron.
//
// Breaking a stale lock is itself guarded by an exclusive `engine.lock.breaking` file, so two engines starting at once
// cannot both break it, or break the fresh lock the other just made.
import { randomBytes } from 'node:crypto';
import { open, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { isAlive, pidNamespace } from '../../speech/threads/process-alive';

export interface DataDirLock {
  /**
   * Whether the lock file still names this engine, read now (not at the heartbeat's next beat); calls `onLost` when it
   * does not. A lock file that is gone counts as still held: the heartbeat puts it back.
   */
  stillHeld(): Promise<boolean>;
  release(): Promise<void>;
}

export interface LockOptions {
  /** How long to wait for a live engine to let go (a restart right after a stop). */
  waitMs: number;
  /** A lock whose heartbeat is older than this is abandoned. */
  staleMs: number;
  /** Called if the lock file is found replaced by another engine's (someone deleted the data dir under us). */
  onLost?: (message: string) => void;
}

export const LOCK_FILE = 'engine.lock';

interface Owner {
  pid?: number;
  nonce?: string;
  host?: string;
  pidNamespace?: string;
}

/** Lock files held by this process, so that its own pid in a lock is told apart from a dead process's reused pid. */
const heldHere = new Set<string>();

export async function lockDataDir(dataDir: string, options: LockOptions): Promise<DataDirLock> {
  const file = path.join(dataDir, LOCK_FILE);
  const nonce = randomBytes(8).toString('hex');
  const content = JSON.stringify({
    pid: process.pid,
    nonce,
    host: os.hostname(),
    pidNamespace: pidNamespace(),
    startedAt: new Date().toISOString(),
  });
  const deadline = Date.now() + options.waitMs;
  for (;;) {
    if (await createExclusive(file, content)) break;
    const holder = heldHere.has(file)
      ? { stale: false, owner: { pid: process.pid } }
      : await inspect(file, options.staleMs);
    if (holder.stale) {
      await breakStaleLock(file, holder.owner.nonce, options.staleMs, dataDir);
      continue;
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `Another engine (pid ${holder.owner.pid ?? 'unknown'}${holder.owner.host && holder.owner.host !== os.hostname() ? ` on ${holder.owner.host}` : ''}) is using the data dir ${dataDir}. Stop it, or choose another --data-dir.`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  heldHere.add(file);

  const lostMessage = `The data dir lock ${file} now belongs to another engine; this engine no longer owns its jobs.`;
  const heartbeat = startHeartbeat(file, nonce, content, Math.max(25, Math.floor(options.staleMs / 8)), () =>
    options.onLost?.(lostMessage),
  );

  return {
    async stillHeld() {
      const current = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) =>
        error.code === 'ENOENT' ? undefined : nonce,
      );
      if (current === undefined || current.includes(nonce)) return true;
      options.onLost?.(lostMessage);
      return false;
    },
    async release() {
      await heartbeat.stop();
      heldHere.delete(file);
      const current = await readFile(file, 'utf8').catch(() => '');
      if (current.includes(nonce)) await rm(file, { force: true });
    },
  };
}

async function createExclusive(file: string, content: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(file, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return true;
}

async function breakStaleLock(
  file: string,
  staleNonce: string | undefined,
  staleMs: number,
  dataDir: string,
): Promise<void> {
  const guard = `${file}.breaking`;
  let got: boolean;
  try {
    got = await createExclusive(guard, String(process.pid));
  } catch (error) {
    throw new Error(
      `Cannot take over the data dir ${dataDir}: its stale lock file cannot be replaced (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}). Check that the folder is writable.`,
      { cause: error },
    );
  }
  if (!got) {
    // Another engine is breaking it right now; a guard left by a crash in the middle of that is removed when old.
    const age = await stat(guard).then(
      (info) => Date.now() - info.mtimeMs,
      () => 0,
    );
    if (age > staleMs) await rm(guard, { force: true });
    await new Promise((resolve) => setTimeout(resolve, 50));
    return;
  }
  try {
    // Still the same stale lock? It may have been released and taken afresh since it was inspected.
    const again = await inspect(file, staleMs);
    if (again.stale && again.owner.nonce === staleNonce) await rm(file, { force: true });
  } finally {
    await rm(guard, { force: true });
  }
}

async function inspect(file: string, staleMs: number): Promise<{ stale: boolean; owner: Owner }> {
  let text: string;
  let modified: number;
  try {
    [text, modified] = await Promise.all([readFile(file, 'utf8'), stat(file).then((info) => info.mtimeMs)]);
  } catch (error) {
    // Released in between: take it.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { stale: true, owner: {} };
    throw error;
  }
  const age = Date.now() - modified;
  let owner: Owner;
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    owner = {
      pid: typeof parsed.pid === 'number' && Number.isInteger(parsed.pid) && parsed.pid > 0 ? parsed.pid : undefined,
      nonce: typeof parsed.nonce === 'string' ? parsed.nonce : undefined,
      host: typeof parsed.host === 'string' ? parsed.host : undefined,
      pidNamespace: typeof parsed.pidNamespace === 'string' ? parsed.pidNamespace : undefined,
    };
  } catch {
    // Torn by a crash while it was written, or being written right now by an engine that is starting.
    return { stale: age > Math.min(2000, staleMs), owner: {} };
  }
  const here = pidNamespace();
  const sameNamespace = owner.host === os.hostname() && here !== undefined && owner.pidNamespace === here;
  // A dead owner is only believed when its pid means the same thing here; our own pid in a lock this process does
  // not hold is a previous process that had the same pid.
  if (sameNamespace && owner.pid !== undefined && (owner.pid === process.pid || !isAlive(owner.pid)))
    return { stale: true, owner };
  return { stale: age > staleMs, owner };
}

// The heartbeat runs in a worker so that nothing on the main thread (a long parse, a synchronous loop, a GC pause of
// the main heap) can delay it. It checks that the lock is still ours before touching it.
const HEARTBEAT_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { file, nonce, content, intervalMs } = workerData;
let lost = false;
const beat = () => {
  if (lost) return;
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if (error.code !== 'ENOENT') return;
    // The lock (or the whole data dir) was deleted under us: put it back if nobody else took the dir meanwhile.
    try {
      fs.mkdirSync(require('node:path').dirname(file), { recursive: true, mode: 0o700 });
      fs.writeFileSync(file, content, { flag: 'wx', mode: 0o600 });
      parentPort.postMessage({ restored: true });
      return;
    } catch {
      text = '';
    }
  }
  if (!text.includes(nonce)) {
    lost = true;
    parentPort.postMessage({ lost: true });
    return;
  }
  const now = new Date();
  try { fs.utimesSync(file, now, now); } catch {}
};
const timer = setInterval(beat, intervalMs);
parentPort.on('message', (message) => {
  if (message === 'stop') {
    clearInterval(timer);
    parentPort.postMessage({ stopped: true });
  }
});
`;

function startHeartbeat(
  file: string,
  nonce: string,
  content: string,
  intervalMs: number,
  onLost: () => void,
): { stop(): Promise<void> } {
  const worker = new Worker(HEARTBEAT_SOURCE, { eval: true, workerData: { file, nonce, content, intervalMs } });
  worker.unref();
  worker.on('message', (message: { lost?: boolean; restored?: boolean }) => {
    if (message.lost) onLost();
  });
  worker.on('error', () => undefined);
  return {
    async stop() {
      await worker.terminate();
    },
  };
}
