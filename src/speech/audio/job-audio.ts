// The main thread's handle on a job's audio worker (audio-worker.ts): posts samples (transferred, not copied) and
// gets back where each line landed and which parts were closed. The main thread does no audio work of its own.
import { Worker } from 'node:worker_threads';
import type { AudioFinished, AudioRequest, AudioResponse, LineWritten } from './audio-protocol';
import type { TagRequest } from './id3';
import { ThreadPriority } from '../threads/thread-priority';
import { workerScript } from '../threads/worker-script';

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };
type Request = AudioRequest extends infer R ? (R extends { seq: number } ? Omit<R, 'seq'> : never) : never;

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

  private constructor(
    private readonly worker: Worker,
    private readonly priority: ThreadPriority,
  ) {
    worker.on('message', (response: AudioResponse) => {
      const entry = this.pending.get(response.seq);
      if (!entry) return;
      this.pending.delete(response.seq);
      if (response.ok) entry.resolve(response.result);
      else entry.reject(Object.assign(new Error(response.error), response.code ? { code: response.code } : {}));
    });
    const fail = (error: Error) => {
      this.failure ??= error;
      for (const entry of this.pending.values()) entry.reject(this.failure);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`The audio worker stopped (exit code ${code}).`)));
  }

  /**
   * Starts the worker; its code (the encoder among it) loads while the job's article is read, so it is ready when
   * the first words are. `open` it before writing. With `firstPart` it runs at the engine's normal priority until
   * `lowerPriority()` (a listener waits for the first part); otherwise it lowers itself at once (thread-priority.ts).
   */
  static start(options: { firstPart?: boolean } = {}): JobAudio {
    const { script, evaluate } = workerScript('audio-worker', __dirname);
    const priority = new ThreadPriority(Boolean(options.firstPart));
    const worker = new Worker(script, {
      eval: evaluate,
      workerData: priority.workerData,
      transferList: priority.transferList,
      resourceLimits: { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 8 },
    });
    worker.once('exit', () => priority.close());
    return new JobAudio(worker, priority);
  }

  /** The first part is out: the rest of the job's audio work yields to the main thread and to other programs. */
  lowerPriority(): void {
    this.priority.lower();
  }

  /** The worker's thread id (Linux), once it has started: for checks of its priority. */
  threadId(): Promise<number | undefined> {
    return this.priority.threadId();
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
      this.worker.postMessage({ ...request, seq }, transfer);
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

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
