// The worker loop of the embedded engine: what each of the WorkQueue's slots does with the job it claimed
// (JobQueue claims and settles the lease; run() is one claimed run). It marks the job processing, runs the pipeline
// in a fresh run folder, stores and announces each part while the job runs (the pipeline's publishPart hook), then
// completes the job (outputs committed through the store) or fails it with the mapped error, or puts it back in the
// queue when the engine is stopping. Team workers do the same over Postgres in team/worker.ts.
import path from 'node:path';
import { modelById } from '../../protocol';
import { describe, describeFailure, internalFailure } from '../core/job-errors';
import type { JobQueue } from '../core/job-queue';
import type { LiveJob } from '../core/live-job';
import {
  type ArticlePipeline,
  type FetchLimits,
  type PipelineLogLevel,
  type PipelineOutput,
  type PipelinePart,
  PipelineError,
} from '../../speech/types';
import { ProgressThrottle } from '../core/progress-throttle';
import { jobResultOf, pipelineInputOf } from '../core/submission';
import { closingEvents, logEvent, partResultEvent, runLog, statusEvent } from '../core/stream-events';
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
}

interface ActiveRun {
  controller: AbortController;
  workDir?: string;
}

export class WorkerLoop {
  /** The run of each job in progress; a run that is no longer here was taken over (cancel, stop) and ends quietly. */
  private readonly runs = new Map<string, ActiveRun>();

  constructor(
    private readonly table: JobTable,
    private readonly queue: JobQueue<LiveJob>,
    private readonly options: WorkerLoopOptions,
  ) {}

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
    const active = run;
    const current = () => this.runs.get(job.id) === active;
    const throttle = new ProgressThrottle(job.progress, this.options.progressIntervalMs, (progress) => {
      if (!current()) return;
      job.progress = progress;
      void job.emit([statusEvent('processing', progress, null)]);
    });
    const logLine = runLog((event) => void job.emit([event]));
    const log = (level: PipelineLogLevel, message: string) => {
      if (current()) logLine(level, message);
    };
    const { request } = job.record;
    let output: PipelineOutput | undefined;
    let failure: unknown;
    try {
      active.workDir = await this.options.store.prepareRun(job.id);
      output = await this.options.pipeline.run(pipelineInputOf(job.id, request), {
        workDir: active.workDir,
        signal: active.controller.signal,
        progress: (fraction) => throttle.report(fraction),
        log,
        fetchLimits: this.options.fetchLimits,
        publishPart: (part) => job.serially(() => this.publishPart(job, active, part)),
      });
    } catch (error) {
      failure = error;
    } finally {
      throttle.stop();
    }
    await job
      .serially(() => this.conclude(job, active, output, failure))
      .catch(async (error: unknown) => {
        this.options.log('error', `Job ${job.id} could not be concluded: ${describe(error)}`);
        await job.serially(() => this.failUnsaved(job, error)).catch(() => undefined);
      });
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
   * Keeps a part through the store and announces it with a result event. A run after a crash publishes the parts
   * of the lost run again (the pipeline is deterministic): those already announced are recognized by name, and
   * neither stored nor announced twice.
   */
  private async publishPart(job: LiveJob, run: ActiveRun, part: PipelinePart): Promise<void> {
    if (this.runs.get(job.id) !== run || job.finished || !run.workDir) return;
    const known = job.record.parts ?? [];
    if (part.files.every((file) => known.some((k) => k.name === file.name))) return;
    const stored: StoredOutput[] = [];
    for (const file of part.files) {
      stored.push(
        await this.options.store.put(job.id, file.name, path.join(run.workDir, file.name), {
          contentType: file.contentType,
          ...(file.durationS !== undefined ? { durationS: file.durationS } : {}),
        }),
      );
    }
    await this.table.save(job, {
      parts: [...known.filter((k) => !stored.some((s) => s.name === k.name)), ...stored],
    });
    const styleId = modelById(job.record.request.model_id).styleId;
    await job.emit([
      partResultEvent(
        job.record,
        styleId,
        { index: part.index, start_s: part.startS, duration_s: part.durationS, final: part.final },
        stored,
      ),
    ]);
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

  private async conclude(
    job: LiveJob,
    run: ActiveRun,
    output: PipelineOutput | undefined,
    failure: unknown,
  ): Promise<void> {
    // Someone else took the job over meanwhile: a cancel, or stop() after waiting too long for this run.
    if (this.runs.get(job.id) !== run) return;
    this.runs.delete(job.id);
    if (output && run.workDir) {
      let outputs;
      try {
        if (output.files.length === 0) throw new Error('The pipeline finished without output files.');
        outputs = await this.options.store.commitOutputs(job.id, run.workDir, output.files);
      } catch (error) {
        this.options.log('error', `Job ${job.id}: ${describe(error)}`);
        await this.table.fail(job, internalFailure(error));
        return;
      }
      await this.table.finish(job, {
        status: 'succeeded',
        progress: 1,
        outputs,
        result: jobResultOf(job.record, output, Date.now()),
      });
      return;
    }
    if (this.table.stopping && run.controller.signal.aborted) {
      await this.table.requeue(job, 'The engine is stopping; this job will run again from the start when it starts.');
      return;
    }
    await this.table.fail(job, describeFailure(failure));
  }
}
