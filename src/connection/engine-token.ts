// The local engine's token: random, made once and kept in `<globalStorage>/engine-token` (readable by this user
// only, beside the engine's data, which holds the jobs' texts anyway), so that the engine, which shows each job only
// to the token that created it, still knows this window's jobs after a reload or a restart. Not in SecretStorage:
// where that has no persistent keyring (VS Code in a browser, Linux without a Secret Service) every reload would
// make a new token and lose the running jobs. It is not the remote service's API key, which stays in SecretStorage.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Redactor } from '../api/index';
import type { Logger } from './log';

export async function readEngineToken(storage: string, redactor: Redactor, logger: Logger): Promise<string> {
  const file = path.join(storage, 'engine-token');
  let value: string | undefined;
  try {
    await mkdir(storage, { recursive: true });
    const fresh = randomBytes(32).toString('base64url');
    // 'wx': of two windows starting at once, one writes and the other reads what it wrote.
    await writeFile(file, fresh, { mode: 0o600, flag: 'wx' }).then(
      () => (value = fresh),
      (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
      },
    );
    value ??= (await readFile(file, 'utf8')).trim() || undefined;
    if (!value) throw new Error(`${file} is empty`);
  } catch (error) {
    logger.warn(
      `could not keep the local engine's token in ${file} (${(error as Error).message}); it gets a token for this session only, so its jobs cannot be followed after a reload`,
    );
    value = randomBytes(32).toString('base64url');
  }
  redactor.add(value);
  return value;
}
