// The errors a submission is refused with (the HTTP layer maps each to its status) and how a failed run is described
// as a job's error. Shared by the embedded units (embedded/) and the team service (team/).
import { PipelineError, storageFailure } from '../../speech/types';
import type { JobFailure } from './job-store';

export class QueueFullError extends Error {
  constructor(
    readonly retryAfterS: number,
    /** How many jobs of this owner are waiting, when it is the owner's own share that is used up. */
    readonly ownWaiting?: number,
  ) {
    super('The queue is full.');
  }
}

/**
 * One token used up its own allowance: too many unfinished jobs at once, or too many submissions in the last
 * minute (team API nodes count both in Postgres, so the limit holds across nodes). Answered as a 429.
 */
export class TokenLimitError extends Error {
  constructor(
    readonly code: 'too_many_jobs' | 'rate_limited',
    message: string,
    readonly retryAfterS: number,
  ) {
    super(message);
  }
}

/** The 429 message for a token at its limit of unfinished jobs. */
export function tooManyJobs(open: number, limit: number, retryAfterS: number): TokenLimitError {
  return new TokenLimitError(
    'too_many_jobs',
    `This token has ${open} unfinished jobs, its limit is ${limit} at once; try again in ${retryAfterS} s, when one has finished (or cancel one).`,
    retryAfterS,
  );
}

export class IdempotencyConflictError extends Error {
  constructor() {
    super('This Idempotency-Key was already used for a different request.');
  }
}

export class StoppingError extends Error {
  constructor() {
    super('The engine is stopping.');
  }
}

/** Why a run failed, as the job's error: the pipeline's own code, else internalFailure. Team workers use it too. */
export function describeFailure(error: unknown): JobFailure {
  if (error instanceof PipelineError) return { code: error.code, message: error.message };
  return internalFailure(error);
}

/** A failure outside the pipeline's own errors: `storage_failed` for a full or read-only disk, else `internal`. */
export function internalFailure(error: unknown): JobFailure {
  // A full or read-only disk is not a defect of the engine: say so, with what to do.
  const storage = storageFailure(error);
  if (storage) return { code: storage.code, message: storage.message };
  return { code: 'internal', message: `The engine failed while processing this job: ${describe(error)}` };
}

export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** m:ss, for log lines. */
export function formatSeconds(seconds: number): string {
  const total = Math.round(seconds);
  return `${Math.floor(total / 60)}:${String(total % 60).padStart(2, '0')}`;
}
