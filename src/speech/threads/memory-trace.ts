// A diagnostic for the memory benchmark (bench/memory-trace.ts): with ARTICLE_AUDIO_MEMORY_TRACE=<file> in the
// engine's environment, the main thread and every pipeline worker append their own memory figures (V8 heap, external
// memory, array buffers; the process's RSS from the main thread) to that file once a second, one JSON line each.
// Process-wide figures (RSS) cannot say which thread holds what; these can. Off (nothing runs) without the variable.
import { appendFileSync } from 'node:fs';
import { threadId } from 'node:worker_threads';

const MB = 1024 * 1024;

export function traceMemory(thread: string): void {
  const file = process.env.ARTICLE_AUDIO_MEMORY_TRACE;
  if (!file) return;
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    const line = {
      t: Date.now(),
      thread,
      threadId,
      heapUsedMb: Math.round(m.heapUsed / MB),
      heapTotalMb: Math.round(m.heapTotal / MB),
      externalMb: Math.round(m.external / MB),
      arrayBuffersMb: Math.round(m.arrayBuffers / MB),
      ...(threadId === 0 ? { rssMb: Math.round(m.rss / MB) } : {}),
    };
    try {
      appendFileSync(file, `${JSON.stringify(line)}\n`);
    } catch {
      clearInterval(timer); // a diagnostic never fails the engine
    }
  }, 1000);
  timer.unref();
}
