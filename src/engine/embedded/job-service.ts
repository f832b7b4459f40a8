// The embedded job service (`article-audio serve`, the extension's local engine): one process accepts jobs, runs
// them through the pipeline a bounded number at a time, keeps their state and stream history in the store, cancels
// them, takes them back after a crash and forgets them after the retention time. It implements JobServiceApi
// (service-api.ts), the seam the HTTP layer (http/) talks to; the team service (team/) implements the same seam
// over Postgres with separate worker processes. It composes the units in embedded/: Intake (submit), WorkerLoop
// (each claimed run) and Recovery (start), over one JobTable, the JobQueue (WorkQueue), LiveJobEvents (EventBus)
// and the store (JobStore + OutputStorage); what stays here is reading, cancelling, retention and stopping.
import { Intake } from './intake';
import { JobTable } from './job-table';
import { Recovery } from './recovery';
import { WorkerLoop } from './worker-loop';
import { describe } from '../core/job-errors';
import { JobQueue } from '../core/job-queue';
import { type LiveJob, LiveJobEvents } from '../core/live-job';
import type { ArticlePipeline, FetchLimits } from '../../speech/types';
import type { EngineMetrics, QueueGauges } from '../core/metrics';
import { logEvent } from '../core/stream-events';
import type { ArticleSubmission } from '../core/submission';
import {
  type EventListener,
  type Following,
  type JobHandle,
  type JobServiceApi,
  type Readiness,
  type ServiceHealth,
  readinessOf,
} from '../core/service-api';
import type { ByteRange, JobStore, OutputStorage, StoredEvent, StoredOutput } from '../core/job-store';
import type { Logger } from '../core/logger';

export interface JobServiceOptions {
  /** Jobs, events and run folders, and (the same object in the data dir) the output files. */
  store: JobStore & OutputStorage;
  pipeline: ArticlePipeline;
  concurrency: number;
  queueDepth: number;
  /** Waiting jobs one owner (token) may have at most. */
  tokenQueueDepth: number;
  /**
   * Waiting jobs an owner may have that are admitted even when others filled the queue (at most queueDepth over all
   * owners together), so that one token's jobs never make the queue refuse another token.
   */
  tokenFairShare: number;
  /** Unfinished jobs (queued or processing) one owner may have at once; 0 or absent: no limit. */
  tokenMaxJobs?: number;
  retentionMs: number;
  idempotencyWindowMs: number;
  progressIntervalMs: number;
  fetchLimits: FetchLimits;
  /** Runs of one job lost to engine crashes before the job fails with `interrupted` instead of running again. */
  maxCrashes: number;
  /** How long stop() waits for running pipelines to give up after being aborted. */
  stopTimeoutMs: number;
  log: Logger;
  /** Where runs are counted (core/metrics.ts). */
  metrics?: EngineMetrics;
}

export class JobService implements JobServiceApi {
  private readonly table: JobTable;
  private readonly queue: JobQueue<LiveJob>;
  /** The EventBus seam over this process's LiveJobs and the store. */
  private readonly events: LiveJobEvents;
  private readonly intake: Intake;
  private readonly worker: WorkerLoop;
  private readonly recovery: Recovery;
  private stopped: Promise<void> | undefined;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly options: JobServiceOptions) {
    this.table = new JobTable(options);
    this.queue = new JobQueue<LiveJob>(options.concurrency, options.queueDepth, (job) => this.worker.run(job));
    this.events = new LiveJobEvents((id) => this.table.jobs.get(id), options.store);
    this.intake = new Intake(this.table, this.queue, options);
    this.worker = new WorkerLoop(this.table, this.queue, options);
    this.recovery = new Recovery(this.table, this.queue, options);
  }

  /** Opens the store and takes back every job in it (Recovery), then sweeps expired jobs from time to time. */
  async start(): Promise<void> {
    await this.recovery.run();
    const sweepMs = Math.max(250, Math.min(60_000, Math.floor(this.options.retentionMs / 4)));
    this.sweeper = setInterval(() => this.sweep(), sweepMs);
    this.sweeper.unref();
  }

  /**
   * Accepts a job: on disk before this resolves. With an idempotency key that the same owner used within the window
   * for the same request, resolves to the original job instead (`replayed`).
   */
  submit(
    owner: string,
    submission: ArticleSubmission,
    idempotencyKey?: string,
  ): Promise<{ job: LiveJob; replayed: boolean }> {
    return this.intake.submit(owner, submission, idempotencyKey);
  }

  /** The job if it exists, belongs to `owner` and has not expired. */
  find(owner: string, id: string): Promise<LiveJob | undefined> {
    return Promise.resolve(this.findNow(owner, id));
  }

  findNow(owner: string, id: string): LiveJob | undefined {
    const job = this.table.jobs.get(id);
    if (!job || job.record.owner !== owner) return undefined;
    if (this.table.isExpired(job.record)) {
      void this.expire(job);
      return undefined;
    }
    return job;
  }

  follow(handle: JobHandle, afterId: number, listener: EventListener): Promise<Following | undefined> {
    return Promise.resolve(this.events.followLive(handle.id, afterId, listener));
  }

  /** The stored history of a job whose history is no longer held in memory (it has finished). */
  storedHistory(job: JobHandle): Promise<StoredEvent[]> {
    return this.events.history(job.id, 0);
  }

  readOutput(job: JobHandle, output: StoredOutput, range?: ByteRange) {
    return this.options.store.read(job.id, output, range);
  }

  health(): Promise<ServiceHealth> {
    return Promise.resolve({
      ok: !this.table.stopping,
      detail: {
        mode: 'embedded',
        jobs: this.table.jobs.size,
        waiting: this.queue.waitingCount,
        running: this.queue.runningCount,
      },
    });
  }

  queueGauges(): Promise<QueueGauges> {
    const first = this.queue.waitingEntries[0];
    return Promise.resolve({
      queued: this.queue.waitingCount,
      oldestQueuedAgeS: first ? Math.max(0, (Date.now() - Date.parse(first.record.createdAt)) / 1000) : 0,
    });
  }

  readiness(): Promise<Readiness> {
    return readinessOf(
      {
        stopping: () => Promise.resolve(this.table.stopping ? { ok: false, error: 'stopping' } : { ok: true }),
        ...this.options.store.readinessChecks?.(),
      },
      2000,
    );
  }

  /** Cancels a queued or processing job (failed, code `cancelled`); a finished job stays as it is. */
  async cancel(handle: JobHandle): Promise<LiveJob> {
    const job = this.table.jobs.get(handle.id);
    if (!job) return handle as LiveJob;
    await job.serially(async () => {
      if (job.finished) return;
      this.queue.remove(job.id);
      this.worker.abandon(job.id);
      await this.table.finish(job, {
        status: 'failed',
        error: { code: 'cancelled', message: 'The job was cancelled.' },
      });
    });
    return job;
  }

  get waitingCount(): number {
    return this.queue.waitingCount;
  }

  /** Bytes of output files an owner keeps, and in how many ms the first of its jobs with files expires. */
  storageOf(owner: string): { bytes: number; firstExpiryMs: number | undefined } {
    let bytes = 0;
    let firstExpiryMs: number | undefined;
    for (const job of this.table.jobs.values()) {
      const { record } = job;
      if (record.owner !== owner || !record.outputs) continue;
      for (const output of record.outputs) bytes += output.bytes;
      if (record.finishedAt !== undefined) {
        const expiry = Date.parse(record.finishedAt) + this.options.retentionMs - Date.now();
        firstExpiryMs = firstExpiryMs === undefined ? expiry : Math.min(firstExpiryMs, expiry);
      }
    }
    return { bytes, firstExpiryMs };
  }

  private sweep(): void {
    const now = Date.now();
    for (const job of this.table.jobs.values()) if (this.table.isExpired(job.record)) void this.expire(job);
    for (const [key, entry] of this.table.idempotency)
      if (now - entry.createdAt >= this.options.idempotencyWindowMs) this.table.idempotency.delete(key);
  }

  private async expire(job: LiveJob): Promise<void> {
    if (this.table.jobs.get(job.id) !== job) return;
    this.table.jobs.delete(job.id);
    try {
      await this.options.store.remove(job.id);
      this.options.log('debug', `Job ${job.id} expired and was removed.`);
    } catch (error) {
      this.options.log('warn', `Could not remove expired job ${job.id}: ${describe(error)}`);
    }
  }

  /**
   * Stops cleanly: no new runs, running pipelines aborted and their jobs put back in the queue for the next start,
   * a last log event for every unfinished job, everything flushed, then the pipeline and the store closed.
   */
  stop(): Promise<void> {
    this.stopped ??= this.shutDown();
    return this.stopped;
  }

  private async shutDown(): Promise<void> {
    this.table.stopping = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.queue.pause();
    await this.intake.settled();
    const interrupted = await this.worker.stop();
    const unfinished = [...this.table.jobs.values()].filter((job) => !job.finished && !interrupted.has(job.id));
    await Promise.all(
      unfinished.map((job) =>
        job.serially(() =>
          job.emit(
            [logEvent('info', 'The engine is stopping; this job stays queued and will run when it starts again.')],
            true,
          ),
        ),
      ),
    );
    await Promise.all(
      [...this.table.jobs.values()].map(async (job) => {
        await job.settled();
        await job.flushed();
      }),
    );
    try {
      await this.options.pipeline.close();
    } catch (error) {
      this.options.log('warn', `The pipeline did not close cleanly: ${describe(error)}`);
    }
    await this.options.store.close();
  }
}
