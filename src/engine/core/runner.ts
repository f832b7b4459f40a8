// The one job runner of both services: what a worker does with a job it claimed, whether the embedded engine's slot
// (embedded/worker-loop.ts) or a team worker (team/worker.ts) claimed it. It runs the pipeline in a fresh run
// folder, writes the run's progress, log lines and parts through the backend's RunLedger one after another in
// order (each write retried under core/retry.ts's policy while its dependency is down: never dropped, never out of
// order, no part skipped), and concludes the run: succeeded (outputs stored, then named in the job), failed with
// the mapped error, given back to the queue (the service is stopping, or a dependency stayed down for a whole retry
// budget: the job runs again once it is back, counted as a lost run), or dropped when the run lost its job (a
// cancel, a lease another worker took over): the fence in every ledger write makes sure such a run changes nothing.
import { describe, describeFailure, internalFailure } from './job-errors';
import type { JobFailure, StoredJob, StoredOutput } from './job-store';
import type { NewEvent } from './live-job';
import type { Logger } from './logger';
import { type EngineMetrics, type RunOutcome, dependencyOf } from './metrics';
import { ProgressThrottle } from './progress-throttle';
import { DependencyDown, type RetryPolicy, withRetry } from './retry';
import { runLog, statusEvent } from './stream-events';
import { pipelineInputOf } from './submission';
import {
  type ArticlePipeline,
  type FetchLimits,
  type PipelineLogLevel,
  type PipelineOutput,
  type PipelinePart,
  PipelineError,
} from '../../speech/types';

/**
 * One claimed run, as the backend that claimed it holds it. Every write is fenced: it resolves false (and changes
 * nothing) once the run no longer holds its job. A write may throw; a transient failure is tried again by the runner.
 */
export interface RunLedger {
  readonly jobId: string;
  /** The job as claimed: its request, its progress so far, the parts an earlier run announced. */
  readonly record: StoredJob;
  /** Aborted when the run lost its job (a cancel, a lease taken over) or the service stops. */
  readonly signal: AbortSignal;
  /** Whether the service is stopping: an aborted run then gives its job back instead of failing it. */
  stopping(): boolean;
  /** A fresh folder for the run's files. */
  prepareWorkDir(): Promise<string>;
  /** Appends the run's events (and the progress the last one carries) after those written before. */
  emit(events: NewEvent[], progress?: number): Promise<boolean>;
  /**
   * Stores a part's files under the run's own key; undefined when an earlier run announced that part already (a run
   * after a crash or a takeover makes the same parts again), false when the run lost its job. The slow half of a
   * part (files flushed to disk or put in object storage): the run's events do not wait for it. Files stored by a
   * run that ends before it names them are never served, and go with the job.
   */
  storePart(part: PipelinePart, workDir: string): Promise<StoredPart | undefined | false>;
  /**
   * Names a stored part in the job and announces it with one result event, in one fenced write (a run that lost its
   * job names nothing and removes what it stored). False when the run lost its job.
   */
  announcePart(part: PipelinePart, stored: StoredPart): Promise<boolean>;
  /** Stores the outputs and, in one fenced write, names them in the job, now succeeded, with its closing events. */
  succeed(output: PipelineOutput, workDir: string): Promise<boolean>;
  fail(failure: JobFailure): Promise<boolean>;
  /**
   * Gives the job back to the queue: the service is stopping (`reason` undefined: the backend says so in its words),
   * or a dependency stayed down (`reason` says which; the run counts as lost, toward --max-crashes).
   */
  release(reason?: string): Promise<boolean>;
  /** The run's end could not be written at all: the backend keeps the job from looking `processing` forever. */
  unsaved(error: unknown): Promise<void>;
  /** Removes the run's folder; ends the run's own timers. */
  finish(workDir: string | undefined): Promise<void>;
}

/** A part's files in the output storage, not yet named in the job. */
export interface StoredPart {
  outputs: StoredOutput[];
  /** Where the backend put them, when it is not the job's own place (a team run's own storage key). */
  key?: string;
}

export interface JobRunnerOptions {
  pipeline: ArticlePipeline;
  progressIntervalMs: number;
  fetchLimits: FetchLimits;
  log: Logger;
  retry?: RetryPolicy;
  /** Where runs, failures and retries are counted (core/metrics.ts). */
  metrics?: EngineMetrics;
  /**
   * Runs of one job that may be lost (--max-crashes) before it fails: a run that gives its job back because a
   * dependency stayed down counts as lost, so a job whose database or storage never comes back ends, `unavailable`,
   * instead of being given back for ever. Without it, such a job is always given back.
   */
  maxCrashes?: number;
}

export class JobRunner {
  constructor(private readonly options: JobRunnerOptions) {}

  /** One claimed run, from its first write to its conclusion. Never throws. */
  async run(ledger: RunLedger): Promise<void> {
    const { options } = this;
    const id = ledger.jobId;
    const started = performance.now();
    const controller = new AbortController();
    const abort = () => controller.abort(ledger.signal.reason);
    if (ledger.signal.aborted) abort();
    else ledger.signal.addEventListener('abort', abort, { once: true });
    /** Set once a write found the job gone (the run changes nothing more), a dependency stayed down, or a write failed for good. */
    let lost = false;
    let down: DependencyDown | undefined;
    let broken: unknown;
    const retried = <T>(what: string, call: () => Promise<T>) =>
      withRetry(what, call, {
        ...(options.retry ? { policy: options.retry } : {}),
        onRetry: (error, delayMs) => {
          options.metrics?.dependencyRetries.inc({ dependency: dependencyOf(what) });
          options.log(
            'warn',
            `Job ${id}: ${what} failed (${describe(error)}); trying again in ${Math.round(delayMs)} ms.`,
          );
        },
      });
    let workDir: string | undefined;
    const ended = () => lost || down !== undefined || broken !== undefined;
    /** Runs one write of the run (retried); a write that finds the job gone, or fails for good, ends the run. */
    const attempt = async <T>(what: string, call: () => Promise<T>): Promise<T | undefined> => {
      try {
        const result = await retried(what, call);
        if (result === false) {
          lost = true;
          controller.abort(new PipelineError('cancelled', 'This run lost its job (cancelled, or taken over).'));
        }
        return result;
      } catch (error) {
        if (error instanceof DependencyDown) down = error;
        else broken = error;
        controller.abort(error);
        return undefined;
      }
    };
    // Every write to the job, one after another: events stay in order and parts are announced in index order.
    let chain: Promise<void> = Promise.resolve();
    const write = (what: string, call: () => Promise<boolean>): Promise<void> => {
      chain = chain.then(async () => {
        if (!ended()) await attempt(what, call);
      });
      return chain;
    };
    // Parts are stored one after another beside that chain, so that a log line or a progress step never waits for a
    // part's files to be flushed to disk or uploaded to the object storage; each stored part is then announced
    // through the chain, in index order.
    let parts: Promise<void> = Promise.resolve();
    const publish = (part: PipelinePart): Promise<void> => {
      parts = parts.then(async () => {
        if (ended()) return;
        const stored = await attempt(`storing part ${part.index}`, () => ledger.storePart(part, workDir as string));
        if (stored && !ended()) await write(`announcing part ${part.index}`, () => ledger.announcePart(part, stored));
      });
      return parts;
    };

    let output: PipelineOutput | undefined;
    let failure: unknown;
    const throttle = new ProgressThrottle(ledger.record.progress, options.progressIntervalMs, (progress) => {
      void write('writing progress', () => ledger.emit([statusEvent('processing', progress, null)], progress));
    });
    const log = runLog((event) => void write('writing a log line', () => ledger.emit([event])));
    try {
      workDir = await retried('preparing the run folder', () => ledger.prepareWorkDir());
      output = await options.pipeline.run(pipelineInputOf(id, ledger.record.request), {
        workDir,
        signal: controller.signal,
        progress: (fraction) => throttle.report(fraction),
        log: (level: PipelineLogLevel, message: string) => log(level, message),
        fetchLimits: options.fetchLimits,
        publishPart: publish,
      });
    } catch (error) {
      failure = error;
    } finally {
      throttle.stop();
      ledger.signal.removeEventListener('abort', abort);
    }
    await parts;
    await chain;
    try {
      const ended = await this.conclude(
        ledger,
        { lost, down, broken, output, failure, workDir, aborted: controller.signal.aborted },
        retried,
      );
      options.metrics?.runEnded(
        ledger.record.request.model_id,
        ended.outcome,
        (performance.now() - started) / 1000,
        ended.code,
      );
    } catch (error) {
      options.log('error', `Job ${id} could not be concluded: ${describe(error)}`);
      await ledger.unsaved(error).catch(() => undefined);
    } finally {
      await ledger.finish(workDir).catch(() => undefined);
    }
  }

  private async conclude(
    ledger: RunLedger,
    run: {
      lost: boolean;
      down: DependencyDown | undefined;
      broken: unknown;
      output: PipelineOutput | undefined;
      failure: unknown;
      workDir: string | undefined;
      aborted: boolean;
    },
    retried: <T>(what: string, call: () => Promise<T>) => Promise<T>,
  ): Promise<{ outcome: RunOutcome; code?: string }> {
    const { log } = this.options;
    const id = ledger.jobId;
    if (run.lost) {
      log('warn', `Job ${id}: this run lost its job; its result is dropped.`);
      return { outcome: 'lost' };
    }
    const dependencyDown = async (error: DependencyDown): Promise<{ outcome: RunOutcome; code?: string }> => {
      const lostRuns = ledger.record.crashes + 1;
      const { maxCrashes } = this.options;
      if (maxCrashes !== undefined && lostRuns > maxCrashes) {
        log('error', `Job ${id}: ${error.message}; ${lostRuns} runs lost, so it fails.`);
        return this.failed(
          ledger,
          {
            code: 'unavailable',
            message: `The service could not reach its storage or database for a minute (${error.message}), and ${lostRuns} runs of this job were lost, so it was not tried again. Convert it again later; if this keeps happening, the service's administrator should check its database and storage.`,
          },
          retried,
        );
      }
      log('error', `Job ${id}: ${error.message}; giving it back to the queue.`);
      await retried('giving the job back', () =>
        ledger.release(
          `The service could not reach its storage or database for a minute (${error.message}); the job runs again from the start.`,
        ),
      );
      return { outcome: 'requeued' };
    };
    if (run.down) return dependencyDown(run.down);
    if (run.broken !== undefined) {
      log('error', `Job ${id}: ${describe(run.broken)}`);
      return this.failed(ledger, internalFailure(run.broken), retried);
    }
    if (run.output && run.workDir) {
      const { output, workDir } = run;
      let named: boolean;
      try {
        if (output.files.length === 0) throw new Error('The pipeline finished without output files.');
        named = await retried('storing the outputs', () => ledger.succeed(output, workDir));
      } catch (error) {
        if (error instanceof DependencyDown) return dependencyDown(error);
        log('error', `Job ${id}: ${describe(error)}`);
        return this.failed(ledger, internalFailure(error), retried);
      }
      if (!named) log('warn', `Job ${id}: finished after losing its job; the result is dropped.`);
      return { outcome: named ? 'succeeded' : 'lost' };
    }
    if (ledger.stopping() && run.aborted) {
      await retried('giving the job back', () => ledger.release());
      return { outcome: 'requeued' };
    }
    return this.failed(ledger, describeFailure(run.failure), retried);
  }

  private async failed(
    ledger: RunLedger,
    failure: JobFailure,
    retried: <T>(what: string, call: () => Promise<T>) => Promise<T>,
  ): Promise<{ outcome: RunOutcome; code?: string }> {
    const written = await retried('failing the job', () => ledger.fail(failure));
    return written ? { outcome: 'failed', code: failure.code } : { outcome: 'lost' };
  }
}
