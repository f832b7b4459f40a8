// Intake, written once for both modes: what happens to a submission the HTTP layer has validated (checkSubmission,
// the wire contract's rules) before it is a job. The decisions live here: the engine stopping, the digests of the
// Idempotency-Key and of the request, an earlier job under the same key (within the window: the same request is a
// replay, another one a conflict; older: the key is free again), the record and first events of a new job, a key
// taken by a racing submission, the per-token limit of unfinished jobs. Each backend provides only where jobs are
// kept (IntakeBackend): the embedded engine in memory and its JobStore (embedded/intake.ts), a team API node in
// Postgres (team/api-service.ts). What stays per backend is how places are counted and taken atomically: the
// embedded queue reserves a place (with each owner's fair share) synchronously in one process; API nodes count in
// Postgres under a per-owner advisory lock held until the job's row is committed.
import { createHash } from 'node:crypto';
import { IdempotencyConflictError, StoppingError, tooManyJobs } from './job-errors';
import { newJobRecord } from './job-record';
import type { StoredEvent, StoredJob } from './job-store';
import type { SubmitContext } from './service-api';
import { acceptedEvents } from './stream-events';
import { type ArticleSubmission, submissionDigest } from './submission';

/** A stored job as intake sees it: anything that carries its record (a LiveJob, a team JobHandle). */
export interface IntakeJob {
  readonly record: StoredJob;
}

/** What a backend does for intake: keep jobs, find one by its key, count and take places. No decisions. */
export interface IntakeBackend<J extends IntakeJob> {
  /** True once the service is stopping: no new submissions. */
  stopping(): boolean;
  /**
   * The job stored (or being stored) under the owner's key digest, whatever its age; undefined if none. Resolves
   * when a job being stored is stored, and rejects when its storing failed.
   */
  byKey(owner: string, key: string): Promise<J | undefined>;
  /** Frees a key whose job is older than the window, for the new submission to take. */
  freeKey(owner: string, key: string, job: J): Promise<void>;
  /**
   * Checks the backend's limits (queue depth, per-token limits through checkOpenJobs), then stores the new job with
   * its first events and queues it, durably before this resolves. Undefined when another submission took the same
   * key in the meantime (intake then answers with that one).
   */
  admit(record: StoredJob, events: StoredEvent[], context: SubmitContext): Promise<J | undefined>;
}

/** The digest an Idempotency-Key is kept under (the key itself is never stored). */
export function keyDigest(idempotencyKey: string): string {
  return createHash('sha256').update(idempotencyKey).digest('hex');
}

/** Whether a job made under an Idempotency-Key still holds it: the window runs from the job's acceptance. */
export function withinWindow(record: Pick<StoredJob, 'createdAt'>, windowMs: number, now = Date.now()): boolean {
  return now - Date.parse(record.createdAt) < windowMs;
}

/** The per-token limit of unfinished jobs (queued or processing); 0: no limit. Throws the 429 at the limit. */
export function checkOpenJobs(open: number, limit: number, retryAfterS: number): void {
  if (limit > 0 && open >= limit) throw tooManyJobs(open, limit, retryAfterS);
}

/** A new job: its record (queued) and its first events, numbered from 1. */
export function acceptedJob(
  owner: string,
  request: ArticleSubmission,
  idempotency: StoredJob['idempotency'],
): { record: StoredJob; events: StoredEvent[] } {
  const record = newJobRecord(owner, request, idempotency);
  return { record, events: acceptedEvents(request).map((event, index) => ({ id: index + 1, ...event })) };
}

/**
 * Accepts a job: durable before this resolves. With an idempotency key that the same owner used within the window
 * for the same request, resolves to the original job (`replayed`); for a different request, IdempotencyConflictError.
 */
export async function submitJob<J extends IntakeJob>(
  backend: IntakeBackend<J>,
  windowMs: number,
  owner: string,
  submission: ArticleSubmission,
  idempotencyKey?: string,
  context: SubmitContext = {},
): Promise<{ job: J; replayed: boolean }> {
  if (backend.stopping()) throw new StoppingError();
  const request = submissionDigest(submission);
  const key = idempotencyKey === undefined ? undefined : keyDigest(idempotencyKey);
  if (key !== undefined) {
    const earlier = await earlierJob(backend, windowMs, owner, key, request);
    if (earlier) return { job: earlier, replayed: true };
  }
  const { record, events } = acceptedJob(owner, submission, key === undefined ? undefined : { key, request });
  const job = await backend.admit(record, events, context);
  if (job) return { job, replayed: false };
  if (key !== undefined) {
    // Another submission (on this node or another) stored the same key a moment ago.
    const earlier = await earlierJob(backend, windowMs, owner, key, request);
    if (earlier) return { job: earlier, replayed: true };
  }
  throw new Error('The idempotency key is taken by a job that could not be read.');
}

/** The job the key refers to within the window (a replay), a conflict, or undefined (none, or freed: too old). */
async function earlierJob<J extends IntakeJob>(
  backend: IntakeBackend<J>,
  windowMs: number,
  owner: string,
  key: string,
  request: string,
): Promise<J | undefined> {
  const earlier = await backend.byKey(owner, key);
  if (!earlier) return undefined;
  if (!withinWindow(earlier.record, windowMs)) {
    await backend.freeKey(owner, key, earlier);
    return undefined;
  }
  if (earlier.record.idempotency?.request !== request) throw new IdempotencyConflictError();
  return earlier;
}
