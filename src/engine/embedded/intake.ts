// Intake of the embedded engine: the storage side of core/intake.ts (whose submitJob makes every decision). Jobs are
// found by key in the JobTable's idempotency index (a job being stored counts, so a racing repeat waits for it);
// places are taken synchronously in this one process: the owner's unfinished jobs (core checkOpenJobs), the owner's
// share of the queue and the queue's depth (a reservation in the JobQueue); a new job is stored with its first
// events through the JobStore and only then put in the WorkQueue.
import { QueueFullError, StoppingError } from '../core/job-errors';
import { type IntakeBackend, checkOpenJobs, submitJob, withinWindow } from '../core/intake';
import type { JobQueue } from '../core/job-queue';
import type { LiveJob } from '../core/live-job';
import type { ArticleSubmission } from '../core/submission';
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

export class Intake implements IntakeBackend<LiveJob> {
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
  submit(
    owner: string,
    submission: ArticleSubmission,
    idempotencyKey?: string,
  ): Promise<{ job: LiveJob; replayed: boolean }> {
    return submitJob(this, this.options.idempotencyWindowMs, owner, submission, idempotencyKey);
  }

  /** Resolves when every submission being stored has been stored (or failed). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.creations]);
  }

  stopping(): boolean {
    return this.table.stopping;
  }

  byKey(owner: string, key: string): Promise<LiveJob | undefined> {
    const entry = this.table.idempotency.get(`${owner}:${key}`);
    if (!entry) return Promise.resolve(undefined);
    if (entry.pending) return entry.pending;
    const job = entry.job && this.table.jobs.get(entry.job.id) === entry.job ? entry.job : undefined;
    return Promise.resolve(job);
  }

  /** An expired key needs no freeing here: the new job's entry replaces it. */
  freeKey(): Promise<void> {
    return Promise.resolve();
  }

  /** Takes the places synchronously (one process), so two submissions never both get the last one. */
  admit(record: StoredJob, events: StoredEvent[]): Promise<LiveJob | undefined> {
    if (this.table.stopping) return Promise.reject(new StoppingError());
    const { owner } = record;
    const indexKey = record.idempotency ? `${owner}:${record.idempotency.key}` : undefined;
    if (indexKey !== undefined && this.keyTaken(indexKey)) return Promise.resolve(undefined);
    const creating = this.creatingFor.get(owner) ?? 0;
    let open = creating;
    if ((this.options.tokenMaxJobs ?? 0) > 0)
      for (const job of this.table.jobs.values()) if (!job.finished && job.record.owner === owner) open++;
    checkOpenJobs(open, this.options.tokenMaxJobs ?? 0, this.queue.retryAfterSeconds());
    const mine = this.queue.countWaiting((job) => job.record.owner === owner) + creating;
    if (mine >= this.options.tokenQueueDepth) throw new QueueFullError(this.queue.retryAfterSeconds(), mine);
    if (!this.queue.reserve() && !(mine < this.options.tokenFairShare && this.queue.reserve(true))) {
      throw new QueueFullError(this.queue.retryAfterSeconds(), mine >= this.options.tokenFairShare ? mine : undefined);
    }
    this.creatingFor.set(owner, creating + 1);
    const creation = this.create(record, events);
    const created = () => {
      const left = (this.creatingFor.get(owner) ?? 1) - 1;
      if (left > 0) this.creatingFor.set(owner, left);
      else this.creatingFor.delete(owner);
      this.creations.delete(creation);
    };
    void creation.then(created, created);
    this.creations.add(creation);
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
    return creation;
  }

  /** A key held by a job being stored, or by a stored job still within the window. */
  private keyTaken(indexKey: string): boolean {
    const entry = this.table.idempotency.get(indexKey);
    if (!entry) return false;
    if (entry.pending) return true;
    const job = entry.job && this.table.jobs.get(entry.job.id) === entry.job ? entry.job : undefined;
    return job !== undefined && withinWindow(job.record, this.options.idempotencyWindowMs);
  }

  private async create(record: StoredJob, first: StoredEvent[]): Promise<LiveJob> {
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
