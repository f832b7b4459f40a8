// The main thread's handle on a job's audio worker (audio-worker.ts): posts samples (transferred, not copied) and
// gets back where each line landed and which parts were closed. The main thread does no audio work of its own.
//
// The engine keeps an audio thread between jobs (`AudioThreads` with AUDIO_THREAD_REUSE), as it keeps a parse thread
// and the synthesis workers: a thread started for a job spent most of a short job's audio CPU on starting and on
// running its code cold (a profile of 20 two-sentence Mini jobs: about 210 ms of the thread's CPU a job, against 360 ms
// for the whole engine: Node's start-up, LAME compiled and run before it is optimized, the loudness filters
// interpreted, a first collection). A kept thread has been lowered once its first job's first part was out, and
// lowering is one way (thread-priority.ts), so the next job's first line is handled at the lower priority: by then its
// code is compiled and optimized, so that line costs a few milliseconds of CPU instead of the new thread's start-up at
// normal priority. What it must not meet is its own job's synthesis running ahead on both cores (the first part came
// 3x later in a benchmark when it did): until the first part is cut the job asks for one line beyond it at a time
// (`speak` in ../index.ts). Without an idle thread (the engine's first job, or two jobs at once), a job starts one as
// before, at normal priority for a first part.
import { Worker } from 'node:worker_threads';
import type { AudioFinished, AudioReleased, AudioRequest, AudioResponse, LineWritten } from './audio-protocol';
import type { TagRequest } from './id3';
import { ThreadPriority } from '../threads/thread-priority';
import { workerScript } from '../threads/worker-script';

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };
type Request = AudioRequest extends infer R ? (R extends { seq: number } ? Omit<R, 'seq'> : never) : never;

/** What is kept of audio threads between jobs. */
export interface AudioThreadReuse {
  /** Threads kept idle at most. */
  maxIdle: number;
  /** An idle thread is ended after this long without a job. */
  idleMs: number;
  /** A thread holding more than this once released (heap and buffers outside it) is ended. */
  maxHeapBytes: number;
  /** A thread that ran this many jobs is ended. */
  maxJobs: number;
}

/** The engine's: one thread kept for 30 s, as the parse thread (parse-runner.ts THREAD_REUSE). */
export const AUDIO_THREAD_REUSE: AudioThreadReuse = {
  maxIdle: 1,
  idleMs: 30_000,
  maxHeapBytes: 32 * 1024 * 1024,
  maxJobs: 200,
};

interface AudioThread {
  worker: Worker;
  priority: ThreadPriority;
  /** Jobs given to this thread so far. */
  jobs: number;
  ended: boolean;
  /** The job whose audio the thread is doing; undefined while idle. */
  user?: JobAudio;
  idleTimer?: NodeJS.Timeout;
}

/** Starts audio threads for jobs and keeps one between jobs when reuse is given (the engine); see the header. */
export class AudioThreads {
  private readonly idle: AudioThread[] = [];
  private closed = false;

  constructor(private readonly reuse?: AudioThreadReuse) {}

  /**
   * A job's audio, on an idle kept thread if there is one, else on a new thread whose code loads while the job's
   * article is read, so it is ready when the first words are. `open` it before writing. With `firstPart` a new
   * thread runs at the engine's normal priority until `lowerPriority()` (a listener waits for the first part);
   * otherwise the thread is lowered at once (thread-priority.ts).
   */
  start(options: { firstPart?: boolean } = {}): JobAudio {
    const firstPart = Boolean(options.firstPart);
    const thread = this.takeIdle(firstPart) ?? this.spawn(firstPart);
    thread.jobs++;
    this.counts.jobs++;
    const audio = new JobAudio(thread, this);
    thread.user = audio;
    return audio;
  }

  /** Threads started and jobs given out so far, and threads kept idle now (for tests and benchmarks). */
  readonly counts = { threads: 0, jobs: 0 };

  get idleCount(): number {
    return this.idle.length;
  }

  /** Ends the idle threads; threads in use end when their job lets them go. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.idle.map((thread) => this.end(thread)));
  }

  private takeIdle(firstPart: boolean): AudioThread | undefined {
    // One still at normal priority for a first part (a job that ended before its first part was cut), if any.
    let at = this.idle.findIndex((thread) => thread.priority.isLowered !== firstPart);
    if (at < 0) at = this.idle.length - 1;
    if (at < 0) return undefined;
    const [thread] = this.idle.splice(at, 1);
    clearTimeout(thread!.idleTimer);
    thread!.worker.ref();
    if (!firstPart) thread!.priority.lower();
    return thread;
  }

  private spawn(firstPart: boolean): AudioThread {
    const { script, evaluate } = workerScript('audio-worker', __dirname);
    const priority = new ThreadPriority(firstPart);
    const worker = new Worker(script, {
      eval: evaluate,
      workerData: priority.workerData,
      transferList: priority.transferList,
      resourceLimits: { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 8 },
    });
    const thread: AudioThread = { worker, priority, jobs: 0, ended: false };
    this.counts.threads++;
    worker.on('message', (response: AudioResponse) => thread.user?.answer(response));
    worker.on('error', (error: Error) => {
      this.forget(thread);
      thread.user?.fail(error);
    });
    worker.on('exit', (code) => {
      priority.close();
      this.forget(thread);
      thread.user?.fail(new Error(`The audio worker stopped (exit code ${code}).`));
    });
    return thread;
  }

  /** The job is done with the thread: kept idle if reuse allows it and the thread is well, ended otherwise. */
  async release(thread: AudioThread, audio: JobAudio, healthy: boolean): Promise<void> {
    const reuse = this.reuse;
    let released: AudioReleased | undefined;
    if (reuse && healthy && !this.closed && !thread.ended && thread.jobs < reuse.maxJobs)
      released = await audio.releaseThread().catch(() => undefined);
    thread.user = undefined;
    if (
      !reuse ||
      !released ||
      released.heapBytes > reuse.maxHeapBytes ||
      this.closed ||
      thread.ended ||
      this.idle.length >= reuse.maxIdle
    ) {
      await this.end(thread);
      return;
    }
    // An idle thread keeps no process alive, and is ended when it has waited idleMs.
    thread.worker.unref();
    thread.idleTimer = setTimeout(() => void this.end(thread), reuse.idleMs);
    thread.idleTimer.unref();
    this.idle.push(thread);
  }

  private forget(thread: AudioThread): void {
    thread.ended = true;
    clearTimeout(thread.idleTimer);
    const at = this.idle.indexOf(thread);
    if (at >= 0) this.idle.splice(at, 1);
  }

  private async end(thread: AudioThread): Promise<void> {
    this.forget(thread);
    await thread.worker.terminate();
  }
}

export interface JobAudioOptions {
  path: string;
  partsDir: string;
  sampleRate: number;
  bitrate: number;
  /** LAME's quality setting. */
  quality: number;
  /** Seconds of audio in the first part, the second, ...; the last value repeats. */
  partTargetsS: number[];
}

export class JobAudio {
  private readonly pending = new Map<number, Pending>();
  private nextSeq = 1;
  private failure: Error | undefined;
  /** A request failed (a full disk, a file it could not open): the thread is not kept, as a precaution. */
  private failedRequest = false;
  private closing: Promise<void> | undefined;

  /** Use `AudioThreads.start` (the engine), or `JobAudio.start` for a thread of its own. */
  constructor(
    private readonly thread: AudioThread,
    private readonly threads: AudioThreads,
  ) {}

  /** On a thread of its own, ended by `close()`. */
  static start(options: { firstPart?: boolean } = {}): JobAudio {
    return new AudioThreads().start(options);
  }

  /** A response of the worker (AudioThreads routes the thread's messages to the job using it). */
  answer(response: AudioResponse): void {
    const entry = this.pending.get(response.seq);
    if (!entry) return;
    this.pending.delete(response.seq);
    if (response.ok) entry.resolve(response.result);
    else {
      this.failedRequest = true;
      entry.reject(Object.assign(new Error(response.error), response.code ? { code: response.code } : {}));
    }
  }

  /** The worker failed or stopped: every request waiting and every later one fails. */
  fail(error: Error): void {
    this.failure ??= error;
    for (const entry of this.pending.values()) entry.reject(this.failure);
    this.pending.clear();
  }

  /** The first part is out: the rest of the job's audio work yields to the main thread and to other programs. */
  lowerPriority(): void {
    this.thread.priority.lower();
  }

  /** The worker's thread id (Linux), once it has started: for checks of its priority. */
  threadId(): Promise<number | undefined> {
    return this.thread.priority.threadId();
  }

  /** Creates the file and the encoder; requests sent meanwhile wait behind it in the worker. */
  async open(options: JobAudioOptions): Promise<void> {
    await this.send({ op: 'open', ...options });
  }

  private send(request: Request, transfer: ArrayBuffer[] = []): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    const seq = this.nextSeq++;
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      this.thread.worker.postMessage({ ...request, seq }, transfer);
    });
  }

  /** Queued without waiting; a failure fails every later request. */
  clip(samples: Float32Array): void {
    this.send({ op: 'clip', samples }).catch((error: unknown) => (this.failure ??= error as Error));
  }

  silence(seconds: number): void {
    this.send({ op: 'silence', seconds }).catch((error: unknown) => (this.failure ??= error as Error));
  }

  /** The samples are handed over to the worker: they are unusable here afterwards. */
  line(samples: Int16Array, sampleRate: number, pauseBeforeS: number, pauseAfterS: number): Promise<LineWritten> {
    return this.send({ op: 'line', samples, sampleRate, pauseBeforeS, pauseAfterS }, [
      samples.buffer as ArrayBuffer,
    ]) as Promise<LineWritten>;
  }

  finish(tags?: TagRequest): Promise<AudioFinished> {
    return this.send({ op: 'finish', ...(tags ? { tags } : {}) }) as Promise<AudioFinished>;
  }

  async abort(): Promise<void> {
    await this.send({ op: 'abort' }).catch(() => undefined);
  }

  /** For AudioThreads.release: the worker drops this job's state and says what it still holds. */
  releaseThread(): Promise<AudioReleased> {
    return this.send({ op: 'release' }) as Promise<AudioReleased>;
  }

  /**
   * The job is done with its audio (finished, aborted or failed): the thread is kept for the next job or ended.
   * Requests after this fail.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const healthy = !this.failure && !this.failedRequest;
      try {
        await this.threads.release(this.thread, this, healthy);
      } finally {
        this.fail(new Error("The job's audio is closed."));
      }
    })();
    return this.closing;
  }
}
