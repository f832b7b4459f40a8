// Synthesis scratch folders in the system's temp folder (`article-audio-flite-<engine pid>-XXXXXX`) are what engines
// before issue 23 left behind: their synthesis workers wrote Flite's files there, removed when the engine exited. An
// engine killed with SIGKILL (or by the OOM killer) could not remove them. Synthesis now works in memory
// (memory-wasi.ts) and makes no such folder, so this sweep only tidies up after older engines: each engine removes,
// when it starts, the folders whose engine is gone (the rules: threads/stale-folders.ts; folders of still older
// versions have no pid).
import os from 'node:os';
import { removeStaleFolders } from '../threads/stale-folders';

export const SCRATCH_PREFIX = 'article-audio-flite-';

/** Removes synthesis scratch folders left by engines that no longer run; returns how many. Never throws. */
export function removeStaleScratchDirs(tempDir = os.tmpdir()): Promise<number> {
  return removeStaleFolders(tempDir, SCRATCH_PREFIX, (name) => {
    const pid = /^article-audio-flite-(\d+)-[^-]+$/.exec(name)?.[1];
    return pid === undefined ? undefined : Number(pid);
  });
}
