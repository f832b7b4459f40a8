// A job's first record, the same for the embedded and the team service.
import { newJobId } from './job-id';
import type { StoredJob } from './job-store';
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
