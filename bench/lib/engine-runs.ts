// One end-to-end job on a fresh engine process (`node dist/cli.js serve`, the real speech pipeline), timed from the
// submission to the stream's `succeeded`, with the process's peak memory (VmHWM) read when it is done. A fresh
// process per run keeps one run's memory out of the next one's peak. Runs are cached: the speed and the memory
// benchmarks share them, so the long articles are synthesized once per model. The wall time excludes the engine's
// start (a warm-up job runs first); the peak memory includes everything.
import { readFileSync } from 'node:fs';
import { ENGINE_ENV, ENGINE_NODE_FLAGS } from '../../src/engine/process-tuning';
import { startEngineProcess } from '../../test/support/engine-process';
import { serviceCalls } from '../../test/support/http-calls';
import { openStream, type WireEvent } from '../../test/support/sse-reader';
import { articleText } from './articles';
import type { ArticleName, ModelId } from './report';

export interface EngineRun {
  model: ModelId;
  article: ArticleName;
  characters: number;
  /** Seconds from sending the submission to seeing `succeeded` on the stream. */
  wallS: number;
  /** Seconds of audio in the MP3 (the job's duration_s). */
  audioS: number;
  /** Peak resident memory of the engine process, MB. */
  peakMb: number;
  /** Seconds from sending the submission to the first part's result event (the first playable audio). */
  firstPartS: number;
  /** CPU seconds the engine process spent on the job (all its threads, ended ones included), load-proof. */
  cpuS: number;
}

const cache = new Map<string, Promise<EngineRun>>();

/**
 * Runs a first tiny job and waits for its end: it starts the synthesis workers and loads the model's voices, as in an
 * engine that has run before, so what is measured next is the engine at work, not its start.
 */
export async function warmUp(url: string, token: string, model: string): Promise<void> {
  const warm = await serviceCalls(url, token).submit({
    model_id: model,
    text: 'A short warm-up text, long enough to be accepted by the engine.',
  });
  await (
    await openStream(`${url}/v1/jobs/${warm.jobId}/stream`, token)
  ).done;
}

/** A job's stream event that is its first part's result, or the job's end (a job that ends without a part). */
export function firstPartOrEnd(event: WireEvent): boolean {
  return (
    (event.event === 'result' && event.data.includes('"part"')) ||
    (event.event === 'status' && /"status":"(succeeded|failed)"/.test(event.data))
  );
}

export function engineRun(model: ModelId, article: ArticleName): Promise<EngineRun> {
  const key = `${model}/${article}`;
  let run = cache.get(key);
  if (!run) {
    run = measure(model, article);
    cache.set(key, run);
  }
  return run;
}

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces), from the state on. */
export function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** CPU seconds (user + system) of a process so far, threads that have ended included, from /proc (Linux). */
export function processCpuS(pid: number): number {
  return cpuSeconds(statFields(pid));
}

/** CPU seconds (user + system) in a process's statFields: utime and stime are the 12th and 13th of them. */
export function cpuSeconds(fields: readonly string[]): number {
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Minor page faults of a process so far, from /proc (Linux): fresh memory it touched, among others. */
export function minorFaults(pid: number): number {
  return Number(statFields(pid)[7]);
}

/** Linux's USER_HZ: /proc counts CPU time in 1/100 s on every platform Node runs on. */
const CLOCK_TICKS = 100;

/** Peak resident set size of a process, from /proc (Linux). */
export function peakMemoryMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1]);
  return Math.round(kb / 1024);
}

async function measure(model: ModelId, article: ArticleName): Promise<EngineRun> {
  const text = articleText(article);
  // Started as the extension starts its local engine (same node flags and malloc setting).
  const engine = await startEngineProcess({
    startTimeoutMs: 60_000,
    env: { ...ENGINE_ENV },
    nodeArgs: ENGINE_NODE_FLAGS,
  });
  try {
    const token = engine.tokens[0] as string;
    const calls = serviceCalls(engine.url, token);
    // A first tiny job starts the synthesis workers, as in an engine that has run before; the raw synthesis
    // measurement warms its pool the same way.
    await warmUp(engine.url, token, model);
    const started = performance.now();
    const cpuBefore = processCpuS(engine.pid);
    const answer = await calls.submit({ model_id: model, text });
    if (answer.status !== 202) throw new Error(`submission answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    const stream = await openStream(`${engine.url}/v1/jobs/${answer.jobId}/stream`, token);
    const first = await stream.next(firstPartOrEnd, 'the first part', 30 * 60_000);
    const firstPartS = first.event === 'result' ? (first.at - started) / 1000 : Number.NaN;
    const terminal = await stream.next(
      (e) => e.event === 'status' && /"status":"(succeeded|failed)"/.test(e.data),
      'the end of the job',
      30 * 60_000,
    );
    const wallS = (terminal.at - started) / 1000;
    const cpuS = processCpuS(engine.pid) - cpuBefore;
    stream.close();
    const job = (await calls.get(`/v1/jobs/${answer.jobId}`)).job;
    if (job.status !== 'succeeded') throw new Error(`the job failed: ${JSON.stringify(job.error)}`);
    const audioS = job.outputs?.results.find((r) => r.content_type === 'audio/mpeg')?.duration_s ?? Number.NaN;
    return {
      model,
      article,
      characters: text.length,
      wallS,
      audioS,
      peakMb: peakMemoryMb(engine.pid),
      firstPartS,
      cpuS,
    };
  } finally {
    await engine.dispose();
  }
}
