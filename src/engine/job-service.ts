// The embedded job service (`article-audio serve`, the extension's local engine): one process accepts jobs, runs
// them through the pipeline a bounded number at a time, keeps their state and stream history in the store, cancels
// them, takes them back after a crash and forgets them after the retention time. It implements JobServiceApi
// (service-api.ts), the seam the HTTP layer (http/) talks to; the team service (team/) implements the same seam
// over Postgres with separate worker processes.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { modelById } from '../protocol';
import { newJobId } from './job-id';
import { JobQueue } from './job-queue';
import { LiveJob, LiveJobEvents } from './live-job';
import {
  type ArticlePipeline,
  type FetchLimits,
  type PipelineLogLevel,
  type PipelineOutput,
  type PipelinePart,
  PipelineError,
  storageFailure,
} from './pipeline/types';
import { ProgressThrottle } from './progress-throttle';
import { acceptedEvents, closingEvents, logEvent, partResultEvent, runLog, statusEvent } from './stream-events';
import { type ArticleSubmission, submissionDigest } from './submission';
import type { EventListener, Following, JobHandle, JobServiceApi, ServiceHealth } from './service-api';
import {
  type ByteRange,
  type JobFailure,
  type JobStore,
  type LoadedJob,
  type OutputStorage,
  type StoredEvent,
  type StoredJob,
  type StoredOutput,
  isTerminal,
} from './store/types';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type Logger = (level: LogLevel, message: string) => void;

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
}

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

interface ActiveRun {
  controller: AbortController;
  workDir?: string;
}

interface IdempotencyEntry {
  createdAt: number;
  pending?: Promise<LiveJob>;
  job?: LiveJob;
}

export class JobService implements JobServiceApi {
  private readonly jobs = new Map<string, LiveJob>();
  private readonly runs = new Map<string, ActiveRun>();
  private readonly queue: JobQueue<LiveJob>;
  /** The EventBus seam over this process's LiveJobs and the store. */
  private readonly events: LiveJobEvents;
  private readonly idempotency = new Map<string, IdempotencyEntry>();
  private readonly creations = new Set<Promise<unknown>>();
  /** Submissions being stored, per owner: they count as waiting for that owner's share. */
  private readonly creatingFor = new Map<string, number>();
  private stopping = false;
  private stopped: Promise<void> | undefined;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly options: JobServiceOptions) {
    this.queue = new JobQueue<LiveJob>(options.concurrency, options.queueDepth, (job) => this.runJob(job));
    this.events = new LiveJobEvents((id) => this.jobs.get(id), options.store);
  }

  /** Opens the store and takes back every job in it: unfinished ones run again, finished ones are served. */
  async start(): Promise<void> {
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
    const sweepMs = Math.max(250, Math.min(60_000, Math.floor(this.options.retentionMs / 4)));
    this.sweeper = setInterval(() => this.sweep(), sweepMs);
    this.sweeper.unref();
  }

  private async recover({ job: record, lastEvent }: LoadedJob): Promise<LiveJob | undefined> {
    const onWriteError = (error: unknown) => this.writeFailed(record.id, error);
    if (isTerminal(record.status)) {
      if (this.isExpired(record)) {
        await this.options.store.remove(record.id);
        return undefined;
      }
      const job = new LiveJob(withoutText(record), this.options.store, undefined, lastEvent?.id ?? 0, onWriteError);
      job.progress = record.progress;
      this.register(job);
      // The record was saved but the crash came before its closing events were: write them now.
      if (lastEvent?.event !== 'end')
        await job.emit(closingEvents(record, 'The job finished just before the engine stopped.'), true);
      return job;
    }
    const history = await this.options.store.readEvents(record.id);
    const job = new LiveJob(record, this.options.store, history, history.at(-1)?.id ?? 0, onWriteError);
    job.progress = Math.max(record.progress, lastProgress(history));
    this.register(job);
    if (record.status === 'processing') {
      const crashes = record.crashes + 1;
      if (crashes > this.options.maxCrashes) {
        await this.finish(job, {
          status: 'failed',
          crashes,
          error: {
            code: 'interrupted',
            message: `The engine stopped unexpectedly ${crashes} times while running this job, so it was not tried again.`,
          },
        });
      } else {
        await this.requeue(
          job,
          'The engine stopped unexpectedly while this job was running; it will run again from the start.',
          { crashes },
        );
      }
    }
    return job;
  }

  private register(job: LiveJob): void {
    this.jobs.set(job.id, job);
    const idempotency = job.record.idempotency;
    if (idempotency) {
      const createdAt = Date.parse(job.record.createdAt);
      if (Date.now() - createdAt < this.options.idempotencyWindowMs) {
        this.idempotency.set(`${job.record.owner}:${idempotency.key}`, { createdAt, job });
      }
    }
  }

  /**
   * Accepts a job: on disk before this resolves. With an idempotency key that the same owner used within the window
   * for the same request, resolves to the original job instead (`replayed`).
   */
  async submit(
    owner: string,
    submission: ArticleSubmission,
    idempotencyKey?: string,
  ): Promise<{ job: LiveJob; replayed: boolean }> {
    if (this.stopping) throw new StoppingError();
    const request = submissionDigest(submission);
    const key = idempotencyKey === undefined ? undefined : createHash('sha256').update(idempotencyKey).digest('hex');
    const indexKey = key === undefined ? undefined : `${owner}:${key}`;
    if (indexKey !== undefined) {
      const entry = this.idempotency.get(indexKey);
      const earlier =
        entry && Date.now() - entry.createdAt < this.options.idempotencyWindowMs
          ? (entry.pending ?? (entry.job && this.jobs.get(entry.job.id) === entry.job ? entry.job : undefined))
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
      for (const job of this.jobs.values()) if (!job.finished && job.record.owner === owner) open++;
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
      this.idempotency.set(indexKey, entry);
      creation.then(
        (job) => {
          entry.job = job;
          entry.pending = undefined;
        },
        () => {
          if (this.idempotency.get(indexKey) === entry) this.idempotency.delete(indexKey);
        },
      );
    }
    return { job: await creation, replayed: false };
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
    const job = new LiveJob(record, this.options.store, [...first], first.length, (error) =>
      this.writeFailed(record.id, error),
    );
    this.jobs.set(job.id, job);
    this.queue.enqueue(job, true);
    return job;
  }

  /** The job if it exists, belongs to `owner` and has not expired. */
  find(owner: string, id: string): Promise<LiveJob | undefined> {
    return Promise.resolve(this.findNow(owner, id));
  }

  findNow(owner: string, id: string): LiveJob | undefined {
    const job = this.jobs.get(id);
    if (!job || job.record.owner !== owner) return undefined;
    if (this.isExpired(job.record)) {
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
      ok: !this.stopping,
      detail: {
        mode: 'embedded',
        jobs: this.jobs.size,
        waiting: this.queue.waitingCount,
        running: this.queue.runningCount,
      },
    });
  }

  /** Cancels a queued or processing job (failed, code `cancelled`); a finished job stays as it is. */
  async cancel(handle: JobHandle): Promise<LiveJob> {
    const job = this.jobs.get(handle.id);
    if (!job) return handle as LiveJob;
    await job.serially(async () => {
      if (job.finished) return;
      this.queue.remove(job.id);
      const run = this.runs.get(job.id);
      if (run) {
        this.runs.delete(job.id);
        run.controller.abort(new PipelineError('cancelled', 'The job was cancelled.'));
      }
      await this.finish(job, { status: 'failed', error: { code: 'cancelled', message: 'The job was cancelled.' } });
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
    for (const job of this.jobs.values()) {
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

  private async runJob(job: LiveJob): Promise<void> {
    let run: ActiveRun | undefined;
    try {
      run = await job.serially(() => this.begin(job));
    } catch (error) {
      this.options.log('error', `Job ${job.id} could not start: ${describe(error)}`);
      await job.serially(() => this.fail(job, internalFailure(error))).catch(() => undefined);
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
      output = await this.options.pipeline.run(
        {
          jobId: job.id,
          modelId: request.model_id,
          ...(request.url !== undefined ? { url: request.url } : {}),
          ...(request.text !== undefined ? { text: request.text } : {}),
          ...(request.intro_audio_url !== undefined ? { introAudioUrl: request.intro_audio_url } : {}),
          ...(request.outro_audio_url !== undefined ? { outroAudioUrl: request.outro_audio_url } : {}),
        },
        {
          workDir: active.workDir,
          signal: active.controller.signal,
          progress: (fraction) => throttle.report(fraction),
          log,
          fetchLimits: this.options.fetchLimits,
          publishPart: (part) => job.serially(() => this.publishPart(job, active, part)),
        },
      );
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
    await this.save(job, { parts: [...known.filter((k) => !stored.some((s) => s.name === k.name)), ...stored] });
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
    if (job.record.status !== 'queued' || this.stopping) return undefined;
    const now = new Date().toISOString();
    const attempts = job.record.attempts + 1;
    await this.save(job, { status: 'processing', startedAt: now, attempts, progress: job.progress });
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
        await this.fail(job, internalFailure(error));
        return;
      }
      const finishedAt = Date.now();
      await this.finish(job, {
        status: 'succeeded',
        progress: 1,
        outputs,
        result: {
          ...(output.title ? { title: output.title } : {}),
          durationS: output.durationS,
          styleId: modelById(job.record.request.model_id).styleId,
          requestDurationS: Math.round((finishedAt - Date.parse(job.record.createdAt)) / 10) / 100,
        },
      });
      return;
    }
    if (this.stopping && run.controller.signal.aborted) {
      await this.requeue(job, 'The engine is stopping; this job will run again from the start when it starts.');
      return;
    }
    await this.fail(job, describeFailure(failure));
  }

  private fail(job: LiveJob, error: JobFailure): Promise<void> {
    return this.finish(job, { status: 'failed', error });
  }

  /** Moves the job to its terminal state: on disk first, then the closing events, flushed to the disk itself. */
  private async finish(job: LiveJob, changes: Partial<StoredJob> & { status: 'succeeded' | 'failed' }): Promise<void> {
    await this.save(job, { progress: job.progress, ...changes, finishedAt: new Date().toISOString() });
    job.progress = job.record.progress;
    const message =
      job.record.status === 'succeeded'
        ? `Done: ${formatSeconds(job.record.result?.durationS ?? 0)} of audio.`
        : `Failed (${job.record.error?.code ?? 'unknown'}): ${job.record.error?.message ?? ''}`;
    await job.emit(closingEvents(job.record, message), true);
    job.releaseHistory();
    job.record = withoutText(job.record);
  }

  private async requeue(job: LiveJob, message: string, changes: Partial<StoredJob> = {}): Promise<void> {
    await this.save(job, { ...changes, status: 'queued', progress: job.progress });
    await job.emit([logEvent('warn', message), statusEvent('queued', job.progress, null)], true);
  }

  private async save(job: LiveJob, changes: Partial<StoredJob>): Promise<void> {
    const next: StoredJob = { ...job.record, ...changes, updatedAt: new Date().toISOString() };
    await this.options.store.save(next);
    job.record = next;
  }

  private isExpired(record: StoredJob): boolean {
    return (
      isTerminal(record.status) &&
      record.finishedAt !== undefined &&
      Date.now() - Date.parse(record.finishedAt) >= this.options.retentionMs
    );
  }

  private sweep(): void {
    const now = Date.now();
    for (const job of this.jobs.values()) if (this.isExpired(job.record)) void this.expire(job);
    for (const [key, entry] of this.idempotency)
      if (now - entry.createdAt >= this.options.idempotencyWindowMs) this.idempotency.delete(key);
  }

  private async expire(job: LiveJob): Promise<void> {
    if (this.jobs.get(job.id) !== job) return;
    this.jobs.delete(job.id);
    try {
      await this.options.store.remove(job.id);
      this.options.log('debug', `Job ${job.id} expired and was removed.`);
    } catch (error) {
      this.options.log('warn', `Could not remove expired job ${job.id}: ${describe(error)}`);
    }
  }

  private writeFailed(jobId: string, error: unknown): void {
    this.options.log(
      'error',
      `Job ${jobId}: could not store stream events (${describe(error)}); a replay after a restart may miss them.`,
    );
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
    this.stopping = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.queue.pause();
    await Promise.allSettled([...this.creations]);
    const interrupted = new Set(this.runs.keys());
    for (const run of this.runs.values()) run.controller.abort(new Error('The engine is stopping.'));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.queue.idle(),
      new Promise((resolve) => (timer = setTimeout(resolve, this.options.stopTimeoutMs))),
    ]);
    clearTimeout(timer);
    for (const [id, run] of [...this.runs]) {
      const job = this.jobs.get(id);
      if (!job) continue;
      this.options.log(
        'warn',
        `Job ${id}: the pipeline did not stop within ${this.options.stopTimeoutMs} ms; leaving it behind.`,
      );
      await job
        .serially(async () => {
          if (this.runs.get(id) !== run) return;
          this.runs.delete(id);
          await this.requeue(job, 'The engine is stopping; this job will run again from the start when it starts.');
        })
        .catch((error: unknown) => this.options.log('error', `Job ${id}: ${describe(error)}`));
    }
    const unfinished = [...this.jobs.values()].filter((job) => !job.finished && !interrupted.has(job.id));
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
      [...this.jobs.values()].map(async (job) => {
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

/** The record of a job just accepted: queued, nothing run yet. */
export function newJobRecord(
  owner: string,
  request: ArticleSubmission,
  idempotency: StoredJob['idempotency'],
): StoredJob {
  const now = new Date().toISOString();
  return {
    id: newJobId(),
    owner,
    request,
    ...(idempotency ? { idempotency } : {}),
    status: 'queued',
    progress: 0,
    createdAt: now,
    updatedAt: now,
    attempts: 0,
    crashes: 0,
    error: null,
    outputs: null,
    result: null,
  };
}

/**
 * A finished job's record without the article text (up to 100000 characters, kept on disk): nothing reads it once
 * the job has ended, and finished jobs stay in memory for the whole retention time. Its final record is on disk
 * already and is never saved again, so the text is not lost.
 */
function withoutText(record: StoredJob): StoredJob {
  if (record.request.text === undefined) return record;
  const { text: _text, ...request } = record.request;
  return { ...record, request };
}

function lastProgress(history: readonly StoredEvent[]): number {
  for (let i = history.length - 1; i >= 0; i--) {
    const event = history[i] as StoredEvent;
    const progress = (event.data as { progress?: unknown } | null)?.progress;
    if (event.event === 'status' && typeof progress === 'number' && progress >= 0 && progress <= 1) return progress;
  }
  return 0;
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
