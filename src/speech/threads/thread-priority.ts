// Audio work runs at a lower OS priority than the engine's main thread, so that HTTP answers, stream events and file
// serving never wait for a CPU while synthesis or encoding keeps every core busy, and other programs on the machine
// (VS Code itself, when the engine runs embedded) stay responsive. On Linux every worker thread has its own thread id,
// and setpriority(PRIO_PROCESS, tid) renices that one thread only; elsewhere this does nothing.
import { readlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Nice steps added to the calling thread (Linux nice runs from -20 to 19; 10 is what `nice` uses by default). */
export const AUDIO_THREAD_NICENESS = 10;

/** Lowers the priority of the calling worker thread; best effort, and never the process's main thread. */
export function lowerThisThreadsPriority(): void {
  if (process.platform !== 'linux') return;
  try {
    // "<pid>/task/<tid>"
    const tid = Number(path.basename(readlinkSync('/proc/thread-self')));
    if (!Number.isSafeInteger(tid) || tid <= 0 || tid === process.pid) return;
    os.setPriority(tid, Math.min(19, os.getPriority(tid) + AUDIO_THREAD_NICENESS));
  } catch {
    // No /proc, or a sandbox that refuses: the thread keeps its priority, which only costs responsiveness.
  }
}
