// Synthesis scratch folders in the system's temp folder (`article-audio-flite-<engine pid>-XXXXXX`) are what engines
// before issue 23 left behind: their synthesis workers wrote Flite's files there, removed when the engine exited. An
// engine killed with SIGKILL (or by the OOM killer) could not remove them. Synthesis now works in memory
// (memory-wasi.ts) and makes no such folder, so this sweep only tidies up after older engines: each engine removes,
// when it starts, the folders whose engine is gone. A pid that looks alive is left alone (an older engine may still be
// running, or the pid was reused: the folder is then only left a while longer). Folders of still older versions,
// without a pid, are removed once nobody has written in them for an hour.
import { readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isAlive } from '../threads/process-alive';

export const SCRATCH_PREFIX = 'article-audio-flite-';
const UNOWNED_MAX_AGE_MS = 3600_000;

/** Removes synthesis scratch folders left by engines that no longer run; returns how many. Never throws. */
export async function removeStaleScratchDirs(tempDir = os.tmpdir()): Promise<number> {
  let names: string[];
  try {
    names = (await readdir(tempDir)).filter((name) => name.startsWith(SCRATCH_PREFIX));
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const full = path.join(tempDir, name);
    const pid = /^article-audio-flite-(\d+)-[^-]+$/.exec(name)?.[1];
    const stale =
      pid !== undefined
        ? Number(pid) !== process.pid && !isAlive(Number(pid))
        : await untouchedFor(full, UNOWNED_MAX_AGE_MS);
    if (!stale) continue;
    try {
      await rm(full, { recursive: true, force: true });
      removed++;
    } catch {
      // Another user's, or being removed by another engine: not ours to insist on.
    }
  }
  return removed;
}

async function untouchedFor(dir: string, ms: number): Promise<boolean> {
  try {
    const times = [(await stat(dir)).mtimeMs];
    for (const entry of await readdir(dir)) times.push((await stat(path.join(dir, entry))).mtimeMs);
    return Date.now() - Math.max(...times) > ms;
  } catch {
    return false;
  }
}
