// Recovery of the embedded engine, once at start: every job the JobStore holds is taken back. Finished ones are
// served (or removed once expired; closing events a crash cut off are written); a job that was `processing` when
// the engine died lost its run, and core/recovery.ts (afterLostRun, shared with team workers) decides whether it is
// put back in the queue or fails `interrupted` after too many lost runs; the waiting ones are handed to the
// WorkQueue in the order they were accepted. Team mode finds its lost runs at claim time instead: a worker's claim
// takes over a job whose lease expired (team/worker.ts PgWorkQueue.claim), with the same decision.
import { describe } from '../core/job-errors';
import type { JobQueue } from '../core/job-queue';
import type { LiveJob } from '../core/live-job';
import { closingEvents } from '../core/stream-events';
import { type JobStore, type LoadedJob, type StoredEvent, isTerminal } from '../core/job-store';
import type { Logger } from '../core/logger';
import { afterLostRun } from '../core/recovery';
import { type JobTable, withoutText } from './job-table';

export interface RecoveryOptions {
  store: JobStore;
  /** Runs of one job lost to engine crashes before the job fails with `interrupted` instead of running again. */
  maxCrashes: number;
  log: Logger;
}

export class Recovery {
  constructor(
    private readonly table: JobTable,
    private readonly queue: JobQueue<LiveJob>,
    private readonly options: RecoveryOptions,
  ) {}

  /** Opens the store and takes back every job in it: unfinished ones run again, finished ones are served. */
  async run(): Promise<void> {
    const loaded = await this.options.store.open();
    loaded.sort((a, b) => a.job.createdAt.localeCompare(b.job.createdAt));
    const waiting: LiveJob[] = [];
    for (const entry of loaded) {
      try {
        const job = await this.recover(entry);
        if (job && !job.finished) waiting.push(job);
      } catch (error) {
        this.options.log('error', `Could not take back job ${entry.job.id}: ${describe(error)}`);
      }
    }
    for (const job of waiting) this.queue.enqueue(job, false);
    if (loaded.length > 0)
      this.options.log('info', `Took back ${loaded.length} stored job(s); ${waiting.length} to run.`);
  }

  private async recover({ job: record, lastEvent }: LoadedJob): Promise<LiveJob | undefined> {
    if (isTerminal(record.status)) {
      if (this.table.isExpired(record)) {
        await this.options.store.remove(record.id);
        return undefined;
      }
      const job = this.table.live(withoutText(record), undefined, lastEvent?.id ?? 0);
      job.progress = record.progress;
      this.table.register(job);
      // The record was saved but the crash came before its closing events were: write them now.
      if (lastEvent?.event !== 'end')
        await job.emit(closingEvents(record, 'The job finished just before the engine stopped.'), true);
      return job;
    }
    const history = await this.options.store.readEvents(record.id);
    const job = this.table.live(record, history, history.at(-1)?.id ?? 0);
    job.progress = Math.max(record.progress, lastProgress(history));
    this.table.register(job);
    if (record.status === 'processing') {
      const outcome = afterLostRun(record, this.options.maxCrashes, 'engine');
      if (outcome.retry) await this.table.requeue(job, outcome.message, { crashes: outcome.crashes });
      else await this.table.finish(job, { status: 'failed', crashes: outcome.crashes, error: outcome.error });
    }
    return job;
  }
}

function lastProgress(history: readonly StoredEvent[]): number {
  for (let i = history.length - 1; i >= 0; i--) {
    const event = history[i] as StoredEvent;
    const progress = (event.data as { progress?: unknown } | null)?.progress;
    if (event.event === 'status' && typeof progress === 'number' && progress >= 0 && progress <= 1) return progress;
  }
  return 0;
}
