// A job's records as both services write them: the first one (accepted, queued) and a finished one.
import { newJobId } from './job-id';
import type { StoredJob, StoredOutput } from './job-store';
import type { ArticleSubmission } from './submission';

/** The record of a job just accepted: queued, nothing run yet. */
export function newJobRecord(
  owner: string,
  request: ArticleSubmission,
  idempotency: StoredJob['idempotency'],
): StoredJob {
  const now = new Date().toISOString();
  return {
    id: newJobId(),
    owner,
    request,
    ...(idempotency ? { idempotency } : {}),
    status: 'queued',
    progress: 0,
    createdAt: now,
    updatedAt: now,
    attempts: 0,
    crashes: 0,
    error: null,
    outputs: null,
    result: null,
  };
}

/** The record of a job that has just finished (succeeded or failed): `changes` over `record`, ended at `now`. */
export function finishedRecord(
  record: StoredJob,
  changes: Partial<StoredJob> & { status: 'succeeded' | 'failed' },
  now = new Date(),
): StoredJob {
  const at = now.toISOString();
  return { ...record, ...changes, updatedAt: at, finishedAt: at };
}

/**
 * The record's `parts` with a part's stored files named: a file of the same name (a rerun's part) is replaced, the
 * others kept in order, the new ones last.
 */
export function partsWith(record: StoredJob, stored: readonly StoredOutput[]): StoredOutput[] {
  const known = record.parts ?? [];
  return [...known.filter((k) => !stored.some((s) => s.name === k.name)), ...stored];
}
