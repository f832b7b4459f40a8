// The extension's record of every job: submits new ones, follows each unfinished job (stream, else polling) until it
// ends, downloads the outputs of finished ones into the audio cache, and keeps the list in extension storage so that
// after a reload or a restart unfinished jobs are followed again and finished ones stay playable.
//
// Plain Node: the event emitters, the key-value store (VS Code's globalState), the services and the log are handed in,
// so the tracker is tested without VS Code (test/unit/jobs/). It keeps no retry loop of its own: the HTTP layer
// retries each request, and followJob reconnects the stream and polls through an outage, reporting it once
// (`unreachable`), which the tracker passes on as onDidLoseContact.
import {
  ArticleAudioError,
  InvalidResponseError,
  type Job,
  type JobEvent,
  type ModelId,
  NotFoundError,
  type OutputFile,
  boundedLogLine,
  isTerminalStatus,
} from '../api/index';
import type { AudioCache } from './audio-cache';
import { LiveParts } from './live-parts';
import {
  type Emitter,
  type JobClient,
  type JobLog,
  type JobServices,
  type KeyValueStore,
  type LogLevel,
  OtherServiceError,
  type ServiceId,
} from './services';
import type { CachedJobFiles, JobRecord, JobSource, PlayableJobs } from './types';

const STORAGE_KEY = 'articleAudio.jobs.v1';
/** The list keeps this many jobs; older finished ones (and their cached audio) are dropped first. */
const MAX_JOBS = 200;
const SAVE_DELAY_MS = 500;
/** Downloads the client refused (download.ts): an output larger than it can be, or an address that is not http(s). */
const REFUSED_OUTPUT_CODES = new Set(['download_too_large', 'unsupported_url']);

export interface NewJob {
  title: string;
  modelId: ModelId;
  source: JobSource;
  /** Exactly one of text and url. */
  text?: string;
  url?: string;
  introAudioUrl?: string;
  outroAudioUrl?: string;
}

export interface FinishedJob {
  job: JobRecord;
  /** Submitted (or retried) in this window, as opposed to resumed after a reload. */
  startedHere: boolean;
}

/** Tracking stopped without the job ending (an error that will not pass by itself, such as a rejected key). */
export interface TrackingProblem {
  job: JobRecord;
  error: unknown;
}

/** The service of a job could not be reached; following goes on in the background. Once per service and outage. */
export interface ContactProblem {
  job: JobRecord;
  service: ServiceId;
  message: string;
}

export interface JobTrackerDependencies {
  /** Where the list is kept (VS Code's globalState). */
  store: KeyValueStore;
  cache: AudioCache;
  services: JobServices;
  log: JobLog;
  /** Makes the tracker's event emitters (vscode.EventEmitter in the extension). */
  emitter: <T>() => Emitter<T>;
}

export class JobTracker implements PlayableJobs {
  private readonly jobs = new Map<string, JobRecord>();
  private readonly followers = new Map<string, AbortController>();
  private readonly startedHere = new Set<string>();
  private readonly lastEventIds = new Map<string, string>();
  private readonly parts: LiveParts;
  private readonly unreachable = new Set<ServiceId>();
  /** The client each job is followed with, to notice when the service's client has changed. */
  private readonly clients = new Map<string, JobClient>();
  private readonly changed: Emitter<JobRecord | undefined>;
  private readonly finished: Emitter<FinishedJob>;
  private readonly firstPart: Emitter<FinishedJob>;
  private readonly trackingProblems: Emitter<TrackingProblem>;
  private readonly contactProblems: Emitter<ContactProblem>;
  private readonly memento: KeyValueStore;
  private readonly cache: AudioCache;
  private readonly connection: JobServices;
  private readonly logger: JobLog;
  private saveTimer: NodeJS.Timeout | undefined;
  private disposed = false;

  /** A job was added, changed or removed (undefined: several). */
  readonly onDidChange: Emitter<JobRecord | undefined>['event'];
  /** A job reached succeeded (with its files cached) or failed. */
  readonly onDidFinish: Emitter<FinishedJob>['event'];
  /** A running job's first part is here: it can be played while it is converted. */
  readonly onDidGetFirstPart: Emitter<FinishedJob>['event'];
  readonly onDidLoseTrack: Emitter<TrackingProblem>['event'];
  readonly onDidLoseContact: Emitter<ContactProblem>['event'];

  constructor(dependencies: JobTrackerDependencies) {
    this.memento = dependencies.store;
    this.cache = dependencies.cache;
    this.connection = dependencies.services;
    this.logger = dependencies.log;
    this.changed = dependencies.emitter();
    this.finished = dependencies.emitter();
    this.firstPart = dependencies.emitter();
    this.trackingProblems = dependencies.emitter();
    this.contactProblems = dependencies.emitter();
    this.onDidChange = this.changed.event;
    this.onDidFinish = this.finished.event;
    this.onDidGetFirstPart = this.firstPart.event;
    this.onDidLoseTrack = this.trackingProblems.event;
    this.onDidLoseContact = this.contactProblems.event;
    this.parts = new LiveParts({
      cacheDir: (jobId) => this.cache.dir(jobId),
      warn: (message) => this.log.warn(message),
      added: (job, index) => {
        this.changedJob(job, false);
        if (index === 0)
          this.firstPart.fire({ job, startedHere: this.startedHere.has(job.id) || job.startedHere === true });
      },
    });
    const saved = this.memento.get<unknown>(STORAGE_KEY);
    for (const record of Array.isArray(saved) ? (saved as unknown[]) : []) {
      if (isRecord(record)) this.jobs.set(record.id, { ...record, playingWhileConverting: undefined });
    }
  }

  private readonly log = {
    debug: (message: string) => this.logger.log('debug', message),
    info: (message: string) => this.logger.log('info', message),
    warn: (message: string) => this.logger.log('warn', message),
    error: (message: string) => this.logger.log('error', message),
  };

  /** Newest first. */
  all(): JobRecord[] {
    return [...this.jobs.values()].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  }

  get(id: string): JobRecord | undefined {
    return this.jobs.get(id);
  }

  playable(): JobRecord[] {
    return this.all().filter(
      (job) =>
        (job.status === 'succeeded' && job.files !== undefined) ||
        (!isTerminalStatus(job.status) && (job.parts?.length ?? 0) > 0),
    );
  }

  setPlayingWhileConverting(id: string, playing: boolean): void {
    const job = this.jobs.get(id);
    if (!job || (job.playingWhileConverting ?? false) === playing) return;
    job.playingWhileConverting = playing || undefined;
    this.changedJob(job, false);
  }

  /** Jobs that have not ended, newest first. */
  unfinished(): JobRecord[] {
    return this.all().filter((job) => !isTerminalStatus(job.status) || (job.status === 'succeeded' && !job.files));
  }

  isFollowing(id: string): boolean {
    return this.followers.has(id);
  }

  /** Follows every unfinished job of the current service again (after activation, or a switch of service). */
  resume(): void {
    const current = this.connection.current();
    for (const job of this.unfinished()) {
      if (job.service === current && !this.followers.has(job.id)) {
        this.log.info(`resuming job ${job.id} (${job.status})`);
        this.follow(job.id);
      }
    }
  }

  async submit(input: NewJob): Promise<JobRecord> {
    const service = this.connection.current();
    const client = await this.connection.client(service);
    const accepted = await client.submitArticle({
      model_id: input.modelId,
      ...(input.text !== undefined ? { text: input.text } : {}),
      ...(input.url !== undefined ? { url: input.url } : {}),
      ...(input.introAudioUrl ? { intro_audio_url: input.introAudioUrl } : {}),
      ...(input.outroAudioUrl ? { outro_audio_url: input.outroAudioUrl } : {}),
    });
    const now = new Date().toISOString();
    const record: JobRecord = {
      id: accepted.jobId,
      title: input.title,
      modelId: input.modelId,
      service,
      source: input.source,
      status: 'queued',
      progress: 0,
      createdAt: now,
      updatedAt: now,
      // Kept with the record, so that a job resumed after a reload still ends with its notification and player.
      startedHere: true,
    };
    this.log.info(
      `job ${record.id} submitted to ${this.connection.describe(service)}: "${record.title}" (${record.modelId})`,
    );
    if (input.text !== undefined) {
      await this.cache
        .saveInput(record.id, input.text)
        .catch((error: unknown) =>
          this.log.warn(`could not keep the text of job ${record.id} for retries: ${String(error)}`),
        );
    }
    this.jobs.set(record.id, record);
    this.startedHere.add(record.id);
    this.prune();
    this.changedJob(record, true);
    this.follow(record.id);
    return record;
  }

  /** Submits the job's input again as a new job (with the same model and current intro/outro settings). */
  async retry(id: string, extra: Pick<NewJob, 'introAudioUrl' | 'outroAudioUrl'>): Promise<JobRecord> {
    const job = this.require(id);
    if (!isTerminalStatus(job.status) && !this.followers.has(id)) {
      // Tracking stopped (service was unreachable): follow it again rather than starting over.
      this.follow(id);
      return job;
    }
    const text = job.source.kind === 'url' ? undefined : await this.cache.readInput(id);
    if (job.source.kind !== 'url' && text === undefined) {
      throw new Error(`The text of "${job.title}" is no longer available. Convert the selection or document again.`);
    }
    return this.submit({
      title: job.title,
      modelId: job.modelId,
      source: job.source,
      ...(text !== undefined ? { text } : { url: job.source.url ?? '' }),
      ...extra,
    });
  }

  /** Asks the service to cancel. Returns false when the service cannot cancel jobs. */
  async cancel(id: string): Promise<boolean> {
    const job = this.require(id);
    if (isTerminalStatus(job.status)) return true;
    const client = await this.connection.client(job.service);
    const result = await client.cancelJob(id);
    if (!result.supported) return false;
    if (result.job) this.applyJob(job, result.job);
    this.log.info(`job ${id}: cancel requested`);
    return true;
  }

  /** Forgets the job and deletes its cached files (the service keeps or drops it on its own schedule). */
  async remove(id: string): Promise<void> {
    this.followers.get(id)?.abort();
    this.followers.delete(id);
    this.jobs.delete(id);
    this.startedHere.delete(id);
    this.parts.forget(id);
    await this.cache.remove(id);
    this.changed.fire(undefined);
    this.scheduleSave(true);
  }

  dispose(): void {
    this.disposed = true;
    for (const controller of this.followers.values()) controller.abort();
    this.followers.clear();
    if (this.saveTimer) {
      clearTimeout(this.saveTimer);
      this.saveTimer = undefined;
      void this.save();
    }
    this.changed.dispose();
    this.finished.dispose();
    this.firstPart.dispose();
    this.trackingProblems.dispose();
  }

  private require(id: string): JobRecord {
    const job = this.jobs.get(id);
    if (!job) throw new Error(`Article Audio has no job ${id}. It may have been removed from the list.`);
    return job;
  }

  private follow(id: string): void {
    const controller = new AbortController();
    this.followers.set(id, controller);
    void this.track(id, controller.signal).finally(() => {
      if (this.followers.get(id) === controller) this.followers.delete(id);
      const job = this.jobs.get(id);
      if (job && !this.disposed) this.changedJob(job, true);
    });
  }

  private async track(id: string, signal: AbortSignal): Promise<void> {
    const job = this.jobs.get(id);
    if (!job) return;
    try {
      const client = await this.connection.client(job.service);
      this.clients.set(id, client);
      let final: Job | undefined;
      if (isTerminalStatus(job.status) && job.status === 'succeeded') {
        final = await client.getJob(id, { signal });
      } else {
        const lastEventId = this.lastEventIds.get(id);
        for await (const event of client.followJob(id, { signal, ...(lastEventId ? { lastEventId } : {}) })) {
          if (event.type === 'end') final = event.job;
          else if (event.type === 'result' && event.part) this.parts.receive(job, event.part, client, signal);
          else this.onEvent(job, event);
        }
      }
      if (!final) return;
      await this.finish(job, final, client, signal);
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof OtherServiceError) {
        job.lastMessage = error.message;
        this.changedJob(job, true);
        return;
      }
      if (error instanceof InvalidResponseError && REFUSED_OUTPUT_CODES.has(error.code ?? '')) {
        // The service (or the host of its output address) sent what no output can be: following it again would only
        // download it again. The job ends here, with what happened.
        this.fail(job, { code: error.code!, message: error.message });
        return;
      }
      if (error instanceof NotFoundError) {
        this.fail(job, {
          code: 'not_found',
          message: `${this.connection.describe(job.service)} no longer knows this job (finished jobs are kept for a limited time, and jobs are visible only to the key that created them).`,
        });
        return;
      }
      // Not an outage (those are waited out inside followJob): a rejected key, an answer that is not the API.
      job.lastMessage = `Stopped following: ${messageOf(error)}`;
      this.log.error(`job ${id}: stopped following it: ${messageOf(error)}`);
      this.changedJob(job, true);
      this.trackingProblems.fire({ job, error });
    }
  }

  private onEvent(job: JobRecord, event: Exclude<JobEvent, { type: 'end' }>): void {
    if ('eventId' in event && event.eventId) this.lastEventIds.set(job.id, event.eventId);
    if (event.type === 'status' || event.type === 'log' || event.type === 'result')
      this.unreachable.delete(job.service);
    switch (event.type) {
      case 'status':
        if (event.status === job.status && event.progress === job.progress) return;
        // An end is recorded by finish(): `succeeded` once the files are downloaded, so the tree never offers a play
        // that fails, and `failed` together with its error, so nothing ever sees a failed job without its reason.
        if (!isTerminalStatus(event.status)) job.status = event.status;
        if (event.progress !== undefined) job.progress = event.progress;
        this.changedJob(job, false);
        return;
      case 'log': {
        const level: LogLevel =
          event.level === 'error'
            ? 'error'
            : event.level === 'warn'
              ? 'warn'
              : event.level === 'debug'
                ? 'debug'
                : 'info';
        this.logger.log(level, `[job ${shortId(job.id)}] ${event.message}`);
        job.lastMessage = event.message;
        this.changedJob(job, false);
        return;
      }
      case 'result': {
        const audio = event.results[0];
        if (audio?.durationS !== undefined) job.durationS = audio.durationS;
        return;
      }
      case 'unreachable':
        job.lastMessage = `Cannot reach ${this.connection.describe(job.service)}; still trying. ${event.message}`;
        this.log.warn(
          `job ${job.id}: ${event.message} (trying again in ${Math.round(event.retryInMs / 1000)} s, then on the polling schedule)`,
        );
        this.changedJob(job, true);
        this.followAgainIfMoved(job);
        if (!this.unreachable.has(job.service)) {
          this.unreachable.add(job.service);
          this.contactProblems.fire({ job, service: job.service, message: event.message });
        }
        return;
      case 'transport':
        this.log.debug(
          `job ${job.id}: following by ${event.mode === 'stream' ? 'the event stream' : 'polling'}${event.reason ? ` (${event.reason})` : ''}`,
        );
        return;
    }
  }

  /**
   * The service's client changed during an outage (its proxy or key settings did): the job is followed again with
   * the new client. Not a retry: nothing is repeated if the client is the same. A local engine restarted on another
   * port needs nothing here: its client reads the engine's address before every request.
   */
  private followAgainIfMoved(job: JobRecord): void {
    const used = this.clients.get(job.id);
    const controller = this.followers.get(job.id);
    void this.connection.client(job.service).then(
      (fresh) => {
        if (fresh === used || !controller || this.followers.get(job.id) !== controller || this.disposed) return;
        this.log.info(`job ${job.id}: ${this.connection.describe(job.service)} moved; following it there`);
        controller.abort();
        this.follow(job.id);
      },
      () => undefined,
    );
  }

  private async finish(job: JobRecord, final: Job, client: JobClient, signal: AbortSignal): Promise<void> {
    // The parts announced before the end are all in the job's record before its files are (see LiveParts.settle).
    if (final.status === 'succeeded') await this.parts.settle(job.id);
    this.parts.forget(job.id);
    if (final.status === 'failed') {
      this.fail(job, {
        ...(final.error?.code ? { code: final.error.code } : {}),
        message: final.error?.message ?? 'The service gave no reason.',
      });
      return;
    }
    if (final.status !== 'succeeded') {
      this.applyJob(job, final);
      return;
    }
    const results = final.outputs?.results ?? [];
    if (results.length === 0) {
      this.fail(job, { code: 'no_output', message: 'The service reported success but listed no audio file.' });
      return;
    }
    job.lastMessage = 'Downloading the audio…';
    job.progress = 1;
    this.changedJob(job, true);
    const files = await this.download(job, results, client, signal);
    job.files = files;
    job.status = 'succeeded';
    job.finishedAt = new Date().toISOString();
    job.lastMessage = undefined;
    const audio = results.find((r) => r.url === results[0]?.url);
    if (audio?.durationS !== undefined) job.durationS = audio.durationS;
    if (final.title) job.title = final.title;
    this.log.info(`job ${job.id} finished: ${files.audio}`);
    this.changedJob(job, true);
    this.finished.fire({ job, startedHere: this.startedHere.has(job.id) || job.startedHere === true });
  }

  private async download(
    job: JobRecord,
    results: OutputFile[],
    client: JobClient,
    signal: AbortSignal,
  ): Promise<CachedJobFiles> {
    await this.cache.prepare(job.id);
    const files: Partial<CachedJobFiles> = {};
    for (const planned of this.cache.plan(job.id, results)) {
      try {
        await client.downloadOutput(planned.output, planned.path, { signal });
        files[planned.role] = planned.path;
      } catch (error) {
        // Only the audio is essential; a missing transcript leaves the player without read-along.
        if (planned.role === 'audio' || signal.aborted) throw error;
        this.log.warn(`job ${job.id}: could not download its ${planned.role}: ${messageOf(error)}`);
      }
    }
    if (!files.audio) throw new InvalidResponseError(`Job ${job.id} succeeded but none of its outputs is audio.`);
    await this.cache.restrict(job.id);
    return files as CachedJobFiles;
  }

  private applyJob(job: JobRecord, state: Job): void {
    if (state.status === 'failed') {
      this.fail(job, {
        ...(state.error?.code ? { code: state.error.code } : {}),
        message: state.error?.message ?? 'The service gave no reason.',
      });
      return;
    }
    if (state.status !== 'succeeded') job.status = state.status;
    if (state.progress !== undefined) job.progress = state.progress;
    this.changedJob(job, true);
  }

  private fail(job: JobRecord, error: { code?: string; message: string }): void {
    job.status = 'failed';
    // Kept in the job list (globalState) and shown: bounded, one line, whatever the service sent.
    job.error = {
      ...(error.code !== undefined ? { code: boundedLogLine(error.code).slice(0, 100) } : {}),
      message: boundedLogLine(error.message),
    };
    job.finishedAt = new Date().toISOString();
    this.log.error(`job ${job.id} failed${job.error.code ? ` (${job.error.code})` : ''}: ${job.error.message}`);
    this.changedJob(job, true);
    this.finished.fire({ job, startedHere: this.startedHere.has(job.id) || job.startedHere === true });
  }

  private changedJob(job: JobRecord, saveSoon: boolean): void {
    if (this.disposed) return;
    job.updatedAt = new Date().toISOString();
    this.changed.fire(job);
    this.scheduleSave(saveSoon);
  }

  /** Drops the oldest finished jobs until at most MAX_JOBS are left (unfinished ones are never dropped). */
  private prune(): void {
    let excess = this.jobs.size - MAX_JOBS;
    for (const job of this.all().reverse()) {
      if (excess <= 0) return;
      if (!isTerminalStatus(job.status)) continue;
      this.jobs.delete(job.id);
      void this.cache.remove(job.id);
      excess--;
    }
  }

  private scheduleSave(soon: boolean): void {
    if (this.saveTimer && !soon) return;
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(
      () => {
        this.saveTimer = undefined;
        void this.save();
      },
      soon ? 0 : SAVE_DELAY_MS,
    );
  }

  private async save(): Promise<void> {
    try {
      await this.memento.update(STORAGE_KEY, this.all());
    } catch (error) {
      this.log.error(`could not save the job list: ${messageOf(error)}`);
    }
  }
}

export function messageOf(error: unknown): string {
  if (error instanceof ArticleAudioError || error instanceof Error) return error.message;
  return String(error);
}

function shortId(id: string): string {
  return id.length > 12 ? id.slice(-8) : id;
}

function isRecord(value: unknown): value is JobRecord {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Partial<JobRecord>;
  return (
    typeof record.id === 'string' &&
    typeof record.title === 'string' &&
    typeof record.status === 'string' &&
    typeof record.createdAt === 'string' &&
    typeof record.service === 'string' &&
    typeof record.source === 'object'
  );
}

export type { ServiceId };
