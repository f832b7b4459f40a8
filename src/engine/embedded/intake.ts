// Intake of the embedded engine: checks a submission against the limits (per-token unfinished jobs, the owner's
// share of the queue, the queue's depth), answers an idempotent replay with the original job, stores the new job
// with its first events through the JobStore and only then puts it in the WorkQueue. Team API nodes do the same in
// team/api-service.ts over Postgres.
import { createHash } from 'node:crypto';
import { IdempotencyConflictError, QueueFullError, StoppingError, tooManyJobs } from '../core/job-errors';
import { newJobRecord } from '../core/job-record';
import type { JobQueue } from '../core/job-queue';
import type { LiveJob } from '../core/live-job';
import { acceptedEvents } from '../core/stream-events';
import { type ArticleSubmission, submissionDigest } from '../core/submission';
import type { JobStore, StoredEvent, StoredJob } from '../core/job-store';
import type { IdempotencyEntry, JobTable } from './job-table';

export interface IntakeOptions {
  store: JobStore;
  /** Waiting jobs one owner (token) may have at most. */
  tokenQueueDepth: number;
  /** Waiting jobs an owner may have that are admitted even when others filled the queue. */
  tokenFairShare: number;
  /** Unfinished jobs (queued or processing) one owner may have at once; 0 or absent: no limit. */
  tokenMaxJobs?: number;
  idempotencyWindowMs: number;
}

export class Intake {
  /** Submissions being stored: stop() waits for them, so none is left half accepted. */
  private readonly creations = new Set<Promise<unknown>>();
  /** Submissions being stored, per owner: they count as waiting for that owner's share. */
  private readonly creatingFor = new Map<string, number>();

  constructor(
    private readonly table: JobTable,
    private readonly queue: JobQueue<LiveJob>,
    private readonly options: IntakeOptions,
  ) {}

  /**
   * Accepts a job: on disk before this resolves. With an idempotency key that the same owner used within the window
   * for the same request, resolves to the original job instead (`replayed`).
   */
  async submit(
    owner: string,
    submission: ArticleSubmission,
    idempotencyKey?: string,
  ): Promise<{ job: LiveJob; replayed: boolean }> {
    if (this.table.stopping) throw new StoppingError();
    const request = submissionDigest(submission);
    const key = idempotencyKey === undefined ? undefined : createHash('sha256').update(idempotencyKey).digest('hex');
    const indexKey = key === undefined ? undefined : `${owner}:${key}`;
    if (indexKey !== undefined) {
      const entry = this.table.idempotency.get(indexKey);
      const earlier =
        entry && Date.now() - entry.createdAt < this.options.idempotencyWindowMs
          ? (entry.pending ?? (entry.job && this.table.jobs.get(entry.job.id) === entry.job ? entry.job : undefined))
          : undefined;
      if (earlier) {
        const job = await earlier;
        if (job.record.idempotency?.request !== request) throw new IdempotencyConflictError();
        return { job, replayed: true };
      }
    }
    const creating = this.creatingFor.get(owner) ?? 0;
    const maxJobs = this.options.tokenMaxJobs ?? 0;
    if (maxJobs > 0) {
      let open = creating;
      for (const job of this.table.jobs.values()) if (!job.finished && job.record.owner === owner) open++;
      if (open >= maxJobs) throw tooManyJobs(open, maxJobs, this.queue.retryAfterSeconds());
    }
    const mine = this.queue.countWaiting((job) => job.record.owner === owner) + creating;
    if (mine >= this.options.tokenQueueDepth) throw new QueueFullError(this.queue.retryAfterSeconds(), mine);
    if (!this.queue.reserve() && !(mine < this.options.tokenFairShare && this.queue.reserve(true))) {
      throw new QueueFullError(this.queue.retryAfterSeconds(), mine >= this.options.tokenFairShare ? mine : undefined);
    }
    this.creatingFor.set(owner, (this.creatingFor.get(owner) ?? 0) + 1);
    const creation = this.create(owner, submission, key === undefined ? undefined : { key, request });
    const created = () => {
      const left = (this.creatingFor.get(owner) ?? 1) - 1;
      if (left > 0) this.creatingFor.set(owner, left);
      else this.creatingFor.delete(owner);
    };
    void creation.then(created, created);
    this.creations.add(creation);
    void creation.then(
      () => this.creations.delete(creation),
      () => this.creations.delete(creation),
    );
    if (indexKey !== undefined) {
      const entry: IdempotencyEntry = { createdAt: Date.now(), pending: creation };
      this.table.idempotency.set(indexKey, entry);
      creation.then(
        (job) => {
          entry.job = job;
          entry.pending = undefined;
        },
        () => {
          if (this.table.idempotency.get(indexKey) === entry) this.table.idempotency.delete(indexKey);
        },
      );
    }
    return { job: await creation, replayed: false };
  }

  /** Resolves when every submission being stored has been stored (or failed). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.creations]);
  }

  private async create(
    owner: string,
    request: ArticleSubmission,
    idempotency: StoredJob['idempotency'],
  ): Promise<LiveJob> {
    const record = newJobRecord(owner, request, idempotency);
    const first: StoredEvent[] = acceptedEvents(request).map((e, index) => ({ id: index + 1, ...e }));
    try {
      await this.options.store.create(record, first);
    } catch (error) {
      this.queue.cancelReservation();
      throw error;
    }
    const job = this.table.live(record, [...first], first.length);
    this.table.jobs.set(job.id, job);
    this.queue.enqueue(job, true);
    return job;
  }
}
