// Audio work runs at a lower OS priority than the engine's main thread, so that HTTP answers, stream events and file
// serving never wait for a CPU while synthesis or encoding keeps every core busy, and other programs on the machine
// (VS Code itself, when the engine runs embedded) stay responsive. On Linux every worker thread has its own thread id,
// and setpriority(PRIO_PROCESS, tid) renices that one thread only; elsewhere this does nothing.
//
// The one exception is the work a listener is waiting for (issue 30): a job's first part. The synthesis worker that
// speaks its first lines and the job's audio worker start at the engine's own priority and are lowered, from the main
// thread, once the first part is published. Lowering is one way: an unprivileged process may raise a thread's nice
// value but not take it back (RLIMIT_NICE is 0 by default), so a worker once lowered stays lowered, and the next job's
// first part gets a worker of its own (synth-pool.ts).
import { readlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MessageChannel, type MessagePort, workerData } from 'node:worker_threads';

/** Nice steps added to a worker thread (Linux nice runs from -20 to 19; 10 is what `nice` uses by default). */
export const AUDIO_THREAD_NICENESS = 10;

/** What a worker gets in `workerData.threadPriority`: whether it starts at normal priority, and where to say its id. */
export interface ThreadPriorityData {
  normal: boolean;
  port: MessagePort;
}

/** The calling thread's Linux thread id; undefined elsewhere or when /proc is not there. */
export function thisThreadId(): number | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    // "<pid>/task/<tid>"
    const tid = Number(path.basename(readlinkSync('/proc/thread-self')));
    return Number.isSafeInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
}

/** Adds AUDIO_THREAD_NICENESS nice steps to a thread of this process; best effort, and never the main thread. */
function lower(tid: number | undefined): void {
  if (tid === undefined || tid === process.pid) return;
  try {
    os.setPriority(tid, Math.min(19, os.getPriority(tid) + AUDIO_THREAD_NICENESS));
  } catch {
    // A sandbox that refuses, or a thread that has ended: the thread keeps its priority, which only costs
    // responsiveness.
  }
}

/**
 * Called by a worker thread when it starts: lowers its own priority unless its ThreadPriority (below) started it at
 * normal priority, and tells that handle its thread id, so that the main thread can lower it later.
 */
export function applyThreadPriority(): void {
  const data = (workerData as { threadPriority?: ThreadPriorityData } | null)?.threadPriority;
  const tid = thisThreadId();
  if (!data?.normal) lower(tid);
  if (data) {
    data.port.postMessage({ tid: tid ?? null });
    data.port.unref(); // the main thread closes the channel once it has the id
  }
}

/**
 * The main thread's handle on one worker's priority. Pass `workerData` and `transferList` to the Worker; `lower()`
 * renices the worker's thread (at once when its id is known, else as soon as the worker says it).
 */
export class ThreadPriority {
  readonly workerData: { threadPriority: ThreadPriorityData };
  readonly transferList: MessagePort[];
  private readonly port: MessagePort;
  private lowered: boolean;
  private tid: number | undefined;
  private readonly known: Promise<number | undefined>;

  constructor(normal: boolean) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.lowered = !normal;
    this.workerData = { threadPriority: { normal, port: port2 } };
    this.transferList = [port2];
    this.known = new Promise((resolve) => {
      port1.once('message', ({ tid }: { tid: number | null }) => {
        this.tid = tid ?? undefined;
        port1.close();
        if (this.lowered && normal) lower(this.tid);
        resolve(this.tid);
      });
      // A worker that ends before it said its id leaves nothing to lower.
      port1.once('close', () => resolve(this.tid));
    });
    port1.unref();
  }

  /** Whether the worker runs (or will run) at the lower priority. */
  get isLowered(): boolean {
    return this.lowered;
  }

  /** Lowers the worker by AUDIO_THREAD_NICENESS steps, once. */
  lower(): void {
    if (this.lowered) return;
    this.lowered = true;
    if (this.tid !== undefined) lower(this.tid);
  }

  /** The worker's thread id, once it has started (undefined off Linux). */
  threadId(): Promise<number | undefined> {
    return this.known;
  }

  /** When the worker never started: stop waiting for its id. */
  close(): void {
    this.port.close();
  }
}
