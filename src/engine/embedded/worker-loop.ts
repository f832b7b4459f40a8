// The worker loop of the embedded engine: what each of the WorkQueue's slots does with the job it claimed
// (JobQueue claims and settles the lease; run() is one claimed run). It marks the job processing and hands the run
// to the one JobRunner (core/runner.ts) through a RunLedger over the data dir: parts are put in the store and
// announced, the outputs committed into the job's folder, every write serialized with the job's other changes
// (cancel, stop) and fenced by the run. Team workers hand their runs to the same runner (team/worker.ts).
import path from 'node:path';
import { modelById } from '../../protocol';
import { describe, internalFailure } from '../core/job-errors';
import type { JobQueue } from '../core/job-queue';
import { partsWith } from '../core/job-record';
import type { LiveJob } from '../core/live-job';
import { type ArticlePipeline, type FetchLimits, type PipelinePart, PipelineError } from '../../speech/types';
import type { EngineMetrics } from '../core/metrics';
import { JobRunner, type RunLedger, type StoredPart } from '../core/runner';
import { jobResultOf } from '../core/submission';
import { closingEvents, logEvent, partResultEvent, statusEvent } from '../core/stream-events';
import { type JobStore, type OutputStorage, type StoredOutput, isTerminal } from '../core/job-store';
import type { Logger } from '../core/logger';
import type { JobTable } from './job-table';

export interface WorkerLoopOptions {
  store: JobStore & OutputStorage;
  pipeline: ArticlePipeline;
  progressIntervalMs: number;
  fetchLimits: FetchLimits;
  /** How long stop() waits for running pipelines to give up after being aborted. */
  stopTimeoutMs: number;
  log: Logger;
  metrics?: EngineMetrics;
  /** Lost runs before a job fails (--max-crashes): a run given back because its storage stayed down counts. */
  maxCrashes?: number;
}

interface ActiveRun {
  controller: AbortController;
  workDir?: string;
}

export class WorkerLoop {
  /** The run of each job in progress; a run that is no longer here was taken over (cancel, stop) and ends quietly. */
  private readonly runs = new Map<string, ActiveRun>();
  private readonly runner: JobRunner;

  constructor(
    private readonly table: JobTable,
    private readonly queue: JobQueue<LiveJob>,
    private readonly options: WorkerLoopOptions,
  ) {
    this.runner = new JobRunner(options);
  }

  /** One claimed job, run to its end (succeeded, failed, or back in the queue when the engine stops). */
  async run(job: LiveJob): Promise<void> {
    let run: ActiveRun | undefined;
    try {
      run = await job.serially(() => this.begin(job));
    } catch (error) {
      this.options.log('error', `Job ${job.id} could not start: ${describe(error)}`);
      await job.serially(() => this.table.fail(job, internalFailure(error))).catch(() => undefined);
      return;
    }
    if (!run) return;
    await this.runner.run(this.ledger(job, run));
  }

  /** The run as the JobRunner sees it: every write serialized with the job's other changes and fenced by the run. */
  private ledger(job: LiveJob, active: ActiveRun): RunLedger {
    const { store } = this.options;
    const current = () => this.runs.get(job.id) === active;
    const fenced = <T>(work: () => Promise<T>): Promise<T | false> =>
      job.serially(async () => (current() ? work() : false));
    return {
      jobId: job.id,
      record: job.record,
      signal: active.controller.signal,
      stopping: () => this.table.stopping,
      prepareWorkDir: async () => (active.workDir = await store.prepareRun(job.id)),
      emit: (events, progress) => {
        if (!current()) return Promise.resolve(false);
        if (progress !== undefined) job.progress = progress;
        // Written to the data dir in order by LiveJob, which logs (and keeps in memory) what the disk refuses.
        void job.emit(events);
        return Promise.resolve(true);
      },
      storePart: (part, workDir) => fenced(() => this.storePart(job, workDir, part)),
      announcePart: (part, stored) =>
        fenced(() => this.announcePart(job, part, stored.outputs)).then((done) => done !== false),
      succeed: (output, workDir) =>
        fenced(async () => {
          // A write that throws leaves the run in place: the runner then fails the job with the reason, through
          // this same fence, or (when that cannot be written either) marks it unsaved.
          const outputs = await store.commitOutputs(job.id, workDir, output.files);
          await this.table.finish(job, {
            status: 'succeeded',
            progress: 1,
            outputs,
            result: jobResultOf(job.record, output, Date.now()),
          });
          this.runs.delete(job.id);
          return true;
        }).then((done) => done !== false),
      fail: (failure) =>
        fenced(async () => {
          await this.table.fail(job, failure);
          this.runs.delete(job.id);
          return true;
        }).then((done) => done !== false),
      release: (reason) =>
        fenced(async () => {
          await this.table.requeue(
            job,
            reason ?? 'The engine is stopping; this job will run again from the start when it starts.',
            reason === undefined ? {} : { crashes: job.record.crashes + 1 },
          );
          this.runs.delete(job.id);
          if (reason !== undefined && !this.table.stopping) this.queue.enqueue(job, false);
          return true;
        }).then((done) => done !== false),
      unsaved: (error) => job.serially(() => this.failUnsaved(job, error)),
      finish: () => {
        if (current()) this.runs.delete(job.id);
        return Promise.resolve();
      },
    };
  }

  /**
   * Takes a running job away from its run (called inside job.serially by a cancel): the pipeline is aborted with
   * `cancelled` and the run's end is ignored. False when the job is not running here.
   */
  abandon(jobId: string): boolean {
    const run = this.runs.get(jobId);
    if (!run) return false;
    this.runs.delete(jobId);
    run.controller.abort(new PipelineError('cancelled', 'The job was cancelled.'));
    return true;
  }

  /**
   * The engine is stopping (the queue is paused and JobTable.stopping set): aborts every run, waits up to
   * stopTimeoutMs for them to put their jobs back in the queue, and puts back those that did not. Returns the ids of
   * the jobs that were running.
   */
  async stop(): Promise<Set<string>> {
    const interrupted = new Set(this.runs.keys());
    for (const run of this.runs.values()) run.controller.abort(new Error('The engine is stopping.'));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.queue.idle(),
      new Promise((resolve) => (timer = setTimeout(resolve, this.options.stopTimeoutMs))),
    ]);
    clearTimeout(timer);
    for (const [id, run] of [...this.runs]) {
      const job = this.table.jobs.get(id);
      if (!job) continue;
      this.options.log(
        'warn',
        `Job ${id}: the pipeline did not stop within ${this.options.stopTimeoutMs} ms; leaving it behind.`,
      );
      await job
        .serially(async () => {
          if (this.runs.get(id) !== run) return;
          this.runs.delete(id);
          await this.table.requeue(
            job,
            'The engine is stopping; this job will run again from the start when it starts.',
          );
        })
        .catch((error: unknown) => this.options.log('error', `Job ${id}: ${describe(error)}`));
    }
    return interrupted;
  }

  /**
   * Keeps a part's files through the store (flushed, then renamed into the job's outputs folder). A run after a
   * crash publishes the parts of the lost run again (the pipeline is deterministic): those whose `result` event is in
   * the job's stream are neither stored nor announced twice. The stream decides, not the record: the record names a
   * part before its event is appended (announcePart), so a crash between the two left a part named and never
   * announced, which the next run then skipped (a stream with a gap; seen in the dependency fault test under load).
   */
  private async storePart(job: LiveJob, workDir: string, part: PipelinePart): Promise<StoredPart | undefined> {
    const known = job.record.parts ?? [];
    const announced =
      job.announcedPart(part.index) ?? part.files.every((file) => known.some((k) => k.name === file.name));
    if (announced) return undefined;
    const outputs: StoredOutput[] = [];
    for (const file of part.files) {
      outputs.push(
        await this.options.store.put(job.id, file.name, path.join(workDir, file.name), {
          contentType: file.contentType,
          ...(file.durationS !== undefined ? { durationS: file.durationS } : {}),
        }),
      );
    }
    return { outputs };
  }

  /** Names a stored part in the job's record and announces it with a result event. */
  private async announcePart(job: LiveJob, part: PipelinePart, stored: StoredOutput[]): Promise<true> {
    await this.table.save(job, { parts: partsWith(job.record, stored) });
    const styleId = modelById(job.record.request.model_id).styleId;
    void job.emit([
      partResultEvent(
        job.record,
        styleId,
        { index: part.index, start_s: part.startS, duration_s: part.durationS, final: part.final },
        stored,
      ),
    ]);
    return true;
  }

  /**
   * The job's end could not be written (a full or unwritable data dir). It must not look `processing` forever:
   * it fails here with the reason. Its record on disk still says processing, so the next start runs it again.
   */
  private async failUnsaved(job: LiveJob, error: unknown): Promise<void> {
    if (isTerminal(job.record.status)) return;
    const now = new Date().toISOString();
    const reason = `The engine could not save this job's result to its data dir (${describe(error)}). Free disk space or fix the folder's permissions; the job runs again when the engine restarts.`;
    job.record = {
      ...job.record,
      status: 'failed',
      error: { code: 'storage_failed', message: reason },
      outputs: null,
      updatedAt: now,
      finishedAt: now,
    };
    // The history stays in memory: the store may not hold these last events.
    await job.emit(closingEvents(job.record, `Failed (storage_failed): ${reason}`), true);
  }

  private async begin(job: LiveJob): Promise<ActiveRun | undefined> {
    if (job.record.status !== 'queued' || this.table.stopping) return undefined;
    const now = new Date().toISOString();
    const attempts = job.record.attempts + 1;
    await this.table.save(job, { status: 'processing', startedAt: now, attempts, progress: job.progress });
    const run: ActiveRun = { controller: new AbortController() };
    this.runs.set(job.id, run);
    void job.emit([
      statusEvent('processing', job.progress, null),
      logEvent('info', attempts > 1 ? `Processing (attempt ${attempts}).` : 'Processing.'),
    ]);
    return run;
  }
}
