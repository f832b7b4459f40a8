// Crash-safe file replacement. A reader sees either the old or the new content, never a mix, and once the promise
// resolves the new content survives power loss: temp file in the same folder, fsync, rename over the target, fsync
// the folder (the rename is only durable once the folder's entry is). write-file-atomic does the first three but
// not the folder fsync, so these few lines are ours.
import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import path from 'node:path';

export const TEMP_SUFFIX = '.tmp';

export async function writeFileAtomic(file: string, content: string | Uint8Array): Promise<void> {
  const temp = `${file}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`;
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await renameWithRetry(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await syncDirectory(path.dirname(file));
}

/** Makes a folder's entries (created, renamed, removed files) durable. */
export async function syncDirectory(dir: string): Promise<void> {
  // Windows cannot open a folder for fsync; NTFS journals metadata itself.
  if (process.platform === 'win32') return;
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } catch (error) {
    // Some file systems (network mounts, some FUSE ones) cannot fsync a folder; they offer nothing stronger then.
    if (!UNSUPPORTED_SYNC.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
  } finally {
    await handle.close();
  }
}

const UNSUPPORTED_SYNC = new Set(['EINVAL', 'ENOTSUP', 'EOPNOTSUPP', 'EISDIR', 'EPERM', 'EBADF']);

/** Opens an existing file and flushes it to disk. */
export async function syncFile(file: string): Promise<void> {
  const handle = await open(file, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * rename(2), retried briefly on Windows, where a virus scanner or indexer holding the target open makes the
 * replacement fail with EPERM/EBUSY for a moment.
 */
export async function renameWithRetry(from: string, to: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await rename(from, to);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (process.platform !== 'win32' || attempt >= 10 || (code !== 'EPERM' && code !== 'EBUSY' && code !== 'EACCES'))
        throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 * (attempt + 1)));
    }
  }
}
