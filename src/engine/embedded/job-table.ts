// The jobs one embedded engine holds (its LiveJobs, the idempotency index) and the state changes every unit makes on
// them: save a record, requeue, finish with the closing events. Intake, the worker loop and recovery (the other
// files here) all change jobs through it, so a state change is written the same way whoever makes it.
import { describe } from '../core/job-errors';
import { finishedRecord } from '../core/job-record';
import { LiveJob } from '../core/live-job';
import { requeueEvents } from '../core/recovery';
import { finishedEvents } from '../core/stream-events';
import { type JobFailure, type JobStore, type StoredEvent, type StoredJob, isTerminal } from '../core/job-store';
import type { Logger } from '../core/logger';

export interface IdempotencyEntry {
  createdAt: number;
  pending?: Promise<LiveJob>;
  job?: LiveJob;
}

export interface JobTableOptions {
  store: JobStore;
  retentionMs: number;
  idempotencyWindowMs: number;
  log: Logger;
}

export class JobTable {
  readonly jobs = new Map<string, LiveJob>();
  /** By `<owner>:<key digest>`: the job an Idempotency-Key created (or is creating) within the window. */
  readonly idempotency = new Map<string, IdempotencyEntry>();
  /** Set once stop() began: no new submissions, no new runs. */
  stopping = false;

  constructor(private readonly options: JobTableOptions) {}

  /** A LiveJob over the store that logs (does not throw) when its events cannot be written. */
  live(record: StoredJob, history: StoredEvent[] | undefined, lastEventId: number): LiveJob {
    return new LiveJob(record, this.options.store, history, lastEventId, (error) => this.writeFailed(record.id, error));
  }

  /** Holds a job taken back from the store, indexed under its idempotency key while the window lasts. */
  register(job: LiveJob): void {
    this.jobs.set(job.id, job);
    const idempotency = job.record.idempotency;
    if (idempotency) {
      const createdAt = Date.parse(job.record.createdAt);
      if (Date.now() - createdAt < this.options.idempotencyWindowMs) {
        this.idempotency.set(`${job.record.owner}:${idempotency.key}`, { createdAt, job });
      }
    }
  }

  fail(job: LiveJob, error: JobFailure): Promise<void> {
    return this.finish(job, { status: 'failed', error });
  }

  /** Moves the job to its terminal state: on disk first, then the closing events, flushed to the disk itself. */
  async finish(job: LiveJob, changes: Partial<StoredJob> & { status: 'succeeded' | 'failed' }): Promise<void> {
    const next = finishedRecord(job.record, { progress: job.progress, ...changes });
    await this.options.store.save(next);
    job.record = next;
    job.progress = job.record.progress;
    await job.emit(finishedEvents(job.record), true);
    job.releaseHistory();
    job.record = withoutText(job.record);
  }

  async requeue(job: LiveJob, message: string, changes: Partial<StoredJob> = {}): Promise<void> {
    await this.save(job, { ...changes, status: 'queued', progress: job.progress });
    await job.emit(requeueEvents(message, job.progress), true);
  }

  async save(job: LiveJob, changes: Partial<StoredJob>): Promise<void> {
    const next: StoredJob = { ...job.record, ...changes, updatedAt: new Date().toISOString() };
    await this.options.store.save(next);
    job.record = next;
  }

  isExpired(record: StoredJob): boolean {
    return (
      isTerminal(record.status) &&
      record.finishedAt !== undefined &&
      Date.now() - Date.parse(record.finishedAt) >= this.options.retentionMs
    );
  }

  private writeFailed(jobId: string, error: unknown): void {
    this.options.log(
      'error',
      `Job ${jobId}: could not store stream events (${describe(error)}); a replay after a restart may miss them.`,
    );
  }
}

/**
 * A finished job's record without the article text (up to 100000 characters, kept on disk): nothing reads it once
 * the job has ended, and finished jobs stay in memory for the whole retention time. Its final record is on disk
 * already and is never saved again, so the text is not lost.
 */
export function withoutText(record: StoredJob): StoredJob {
  if (record.request.text === undefined) return record;
  const { text: _text, ...request } = record.request;
  return { ...record, request };
}
