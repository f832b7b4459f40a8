// Folders a process makes in a shared folder (the temp folder, a worker's --work-dir) and removes when it is done
// with them: a process killed with SIGKILL (or by the OOM killer) cannot. The next process of the same kind removes,
// when it starts, the folders whose owner is gone. A folder names its owner's pid; one whose pid looks alive is left
// alone (the owner may still run, or the pid was reused: the folder is then only left a while longer). A folder
// without an owner on this machine (an older version's, another machine's in a shared folder) is removed once nobody
// has written in it for an hour.
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { isAlive } from './process-alive';

const UNOWNED_MAX_AGE_MS = 3600_000;

/**
 * Removes the folders in `dir` whose names start with `prefix` and whose owner is gone; `ownerPid` reads the owner's
 * pid on this machine from a name (undefined: no owner here). Returns how many; never throws.
 */
export async function removeStaleFolders(
  dir: string,
  prefix: string,
  ownerPid: (name: string) => number | undefined,
): Promise<number> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((name) => name.startsWith(prefix));
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const full = path.join(dir, name);
    const pid = ownerPid(name);
    const stale =
      pid !== undefined ? pid !== process.pid && !isAlive(pid) : await untouchedFor(full, UNOWNED_MAX_AGE_MS);
    if (!stale) continue;
    try {
      await rm(full, { recursive: true, force: true });
      removed++;
    } catch {
      // Another user's, or being removed by another process: not ours to insist on.
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
