// One engine per data dir: two engines on the same jobs would run them twice and race on their files. The lock is a
// file holding the owner's pid; the owner touches it periodically. A lock is stale when its process is gone or
// when it has not been touched for a while (its pid was reused by another program after a crash or a reboot).
import { randomBytes } from 'node:crypto';
import { open, readFile, rename, rm, stat, utimes } from 'node:fs/promises';
import path from 'node:path';

export interface DataDirLock {
  release(): Promise<void>;
}

export interface LockOptions {
  /** How long to wait for a live engine to let go (a restart right after a stop). */
  waitMs: number;
  /** A lock not touched for this long is considered abandoned. */
  staleMs: number;
}

export const LOCK_FILE = 'engine.lock';

/** Lock files held by this process, so that its own pid in a lock is told apart from a dead process's reused pid. */
const heldHere = new Set<string>();

export async function lockDataDir(dataDir: string, options: LockOptions): Promise<DataDirLock> {
  const file = path.join(dataDir, LOCK_FILE);
  const nonce = randomBytes(8).toString('hex');
  const content = JSON.stringify({ pid: process.pid, nonce, startedAt: new Date().toISOString() });
  const deadline = Date.now() + options.waitMs;
  for (;;) {
    try {
      const handle = await open(file, 'wx', 0o600);
      try {
        await handle.writeFile(content);
        await handle.sync();
      } finally {
        await handle.close();
      }
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = heldHere.has(file) ? { stale: false, pid: process.pid } : await inspect(file, options.staleMs);
    if (holder.stale) {
      // Move the abandoned lock aside before deleting it, so two engines starting at once do not both delete it.
      const aside = `${file}.${nonce}.stale`;
      await rename(file, aside).catch((error: NodeJS.ErrnoException) => {
        // ENOENT: another engine moved it first. Anything else (a read-only folder) would retry forever.
        if (error.code === 'ENOENT') return;
        throw new Error(`Cannot take over the data dir ${dataDir}: its stale lock file cannot be replaced (${error.code ?? error.message}). Check that the folder is writable.`, { cause: error });
      });
      await rm(aside, { force: true });
      continue;
    }
    if (Date.now() >= deadline) {
      throw new Error(`Another engine (pid ${holder.pid ?? 'unknown'}) is using the data dir ${dataDir}. Stop it, or choose another --data-dir.`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  heldHere.add(file);
  const touch = setInterval(() => {
    const now = new Date();
    utimes(file, now, now).catch(() => undefined);
  }, Math.max(50, Math.floor(options.staleMs / 3)));
  touch.unref();

  return {
    async release() {
      clearInterval(touch);
      heldHere.delete(file);
      const current = await readFile(file, 'utf8').catch(() => '');
      if (current.includes(nonce)) await rm(file, { force: true });
    },
  };
}

async function inspect(file: string, staleMs: number): Promise<{ stale: boolean; pid?: number }> {
  let text: string;
  let modified: number;
  try {
    [text, modified] = await Promise.all([readFile(file, 'utf8'), stat(file).then((info) => info.mtimeMs)]);
  } catch (error) {
    // Released in between: take it.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { stale: true };
    throw error;
  }
  const age = Date.now() - modified;
  let pid: number | undefined;
  try {
    const parsed = JSON.parse(text) as { pid?: unknown };
    if (typeof parsed.pid === 'number' && Number.isInteger(parsed.pid) && parsed.pid > 0) pid = parsed.pid;
  } catch {
    // Torn by a crash while it was written, or being written right now by an engine that is starting.
    return { stale: age > 2000 };
  }
  // Our own pid in a lock this process does not hold: a previous process that had the same pid (containers reuse them).
  if (pid === undefined || pid === process.pid) return { stale: true, pid };
  if (!isAlive(pid)) return { stale: true, pid };
  return { stale: age > staleMs, pid };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
