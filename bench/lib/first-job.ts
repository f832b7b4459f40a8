// Issue 30: the first job of a fresh engine, as a listener meets it, on a quiet machine and beside CPU-bound work.
// One fresh engine process (started as the extension starts it, with bench/lib/loop-delay-probe.cjs loaded) per
// condition; its first job is a long article. Measured: the time from sending the submission to the result event of
// the first part; GET /v1/jobs/<id> every 20 ms during the job's first seconds (what a status request waits); the
// engine's own longest event-loop delay over those seconds (the probe); then, once the job is cancelled and over,
// the same status requests on the idle engine, the baseline of the same run. `busyLoops` runs that many bounded
// CPU-bound processes (a build's -j4) beside the engine from before the job until the engine is gone: by default
// from the engine's own session (loop-delay-probe.cjs says why), or from this process's.
import { type ChildProcess, spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { ENGINE_ENV, ENGINE_NODE_FLAGS } from '../../src/engine/process-tuning';
import { startEngineProcess } from '../../test/support/engine-process';
import { call, serviceCalls } from '../../test/support/http-calls';
import { openStream } from '../../test/support/sse-reader';
import { percentile } from './report';

export interface FirstJobRun {
  /** Seconds from sending the submission to the first part's result event. */
  firstPartS: number;
  /** Seconds of audio in that part. */
  partS: number;
  /** Status request latencies (ms) during the first `windowS` seconds of the job. */
  during: number[];
  /** The same requests, as many at the same pace, on the idle engine after the job. */
  idle: number[];
  /** The engine main thread's longest event-loop delay (ms) during those seconds, and when (s after submission). */
  loopMaxMs: number;
  loopMaxAtS: number;
  /** Every probe window of those seconds: its end (s after submission) and its longest delay. */
  windows: { atS: number; maxMs: number }[];
  /** The 1-minute load average just before the submission and after the measurement. */
  loadBefore: number;
  loadAfter: number;
}

/** One status request every STATUS_EVERY_MS, whether or not the one before has been answered. */
const STATUS_EVERY_MS = 20;

/**
 * Status requests sent at a fixed pace for `seconds` (open loop: a stall delays every request sent during it, as it
 * does a client's, instead of only the one request a back-to-back loop had in flight); their latencies in ms.
 */
async function statusRequests(request: () => Promise<unknown>, seconds: number): Promise<number[]> {
  const latencies: Promise<number>[] = [];
  const start = performance.now();
  for (let i = 0; i * STATUS_EVERY_MS < seconds * 1000; i++) {
    const due = start + i * STATUS_EVERY_MS;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const sent = performance.now();
    latencies.push(request().then(() => performance.now() - sent));
  }
  return Promise.all(latencies);
}

const PROBE = path.join(__dirname, 'loop-delay-probe.cjs');

/** CPU-bound processes, each ending by itself after `maxS` at the latest (if this process dies first). */
export function startBusyLoops(count: number, maxS = 600): { stop(): Promise<void> } {
  const children: ChildProcess[] = [];
  for (let i = 0; i < count; i++) {
    children.push(
      spawn(process.execPath, ['-e', `const end = Date.now() + ${maxS * 1000}; while (Date.now() < end) {}`], {
        stdio: 'ignore',
      }),
    );
  }
  return {
    async stop() {
      await Promise.all(
        children.map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve();
              child.once('exit', () => resolve());
              child.kill('SIGKILL');
            }),
        ),
      );
    },
  };
}

export async function firstJobOnFreshEngine(options: {
  model: string;
  text: string;
  windowS: number;
  busyLoops: number;
  /** Where the loops run: in the engine's session (they meet its threads directly), or in one of their own. */
  busyIn?: 'engine session' | 'own session';
  nodeArgs?: string[];
}): Promise<FirstJobRun> {
  const inEngine = options.busyIn !== 'own session';
  const loops = options.busyLoops > 0 && !inEngine ? startBusyLoops(options.busyLoops) : undefined;
  let loopPids: number[] = [];
  try {
    const engine = await startEngineProcess({
      startTimeoutMs: 60_000,
      env: {
        ...ENGINE_ENV,
        ...(options.busyLoops > 0 && inEngine ? { LOOP_DELAY_PROBE_BUSY_LOOPS: String(options.busyLoops) } : {}),
      },
      nodeArgs: [...ENGINE_NODE_FLAGS, '--require', PROBE, ...(options.nodeArgs ?? [])],
      args: ['--concurrency', '1'],
    });
    try {
      const token = engine.tokens[0] as string;
      const calls = serviceCalls(engine.url, token);
      // Let the fresh process settle (its start is not what is measured); the loops get going meanwhile.
      await new Promise((resolve) => setTimeout(resolve, options.busyLoops > 0 ? 2000 : 1000));
      loopPids = (
        JSON.parse(/^loop-delay-probe-busy (\{.*\})$/m.exec(engine.stderr)?.[1] ?? '{"pids":[]}') as {
          pids: number[];
        }
      ).pids;
      const loadBefore = os.loadavg()[0] ?? 0;
      const submittedAt = Date.now();
      const started = performance.now();
      const submitted = await calls.submit({ model_id: options.model, text: options.text });
      if (submitted.status !== 202) throw new Error(`The job was refused (${submitted.status}): ${submitted.text}`);
      const { jobId } = submitted;
      const stream = await openStream(`${engine.url}/v1/jobs/${jobId}/stream`, token);
      const statusPath = `/v1/jobs/${jobId}`;
      const during = statusRequests(() => calls.get(statusPath), options.windowS);
      const first = await stream.next(
        (e) => e.event === 'result' && e.data.includes('"part"'),
        'the first part',
        10 * 60_000,
      );
      const firstPartS = (first.at - started) / 1000;
      const partS = (JSON.parse(first.data) as { part: { duration_s: number } }).part.duration_s;
      await during;
      const loadAfter = os.loadavg()[0] ?? 0;
      const windowEnd = submittedAt + options.windowS * 1000;
      await call(`${engine.url}/v1/jobs/${jobId}/cancel`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      });
      await stream.done;
      // Idle baseline: the same request on the same engine, nothing running (the cancelled job's status).
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const idle = await statusRequests(() => calls.get(statusPath), options.windowS);
      // The probe's windows that overlap the job's first seconds.
      let loopMaxMs = 0;
      let loopMaxAt = submittedAt;
      const windows: { atS: number; maxMs: number }[] = [];
      for (const match of engine.stderr.matchAll(/^loop-delay-probe (\{.*\})$/gm)) {
        const { at, maxMs } = JSON.parse(match[1]!) as { at: number; maxMs: number };
        if (at < submittedAt || at - 250 > windowEnd) continue;
        windows.push({ atS: (at - submittedAt) / 1000, maxMs });
        if (maxMs > loopMaxMs) {
          loopMaxMs = maxMs;
          loopMaxAt = at;
        }
      }
      return {
        firstPartS,
        partS,
        during: await during,
        idle,
        loopMaxMs,
        loopMaxAtS: (loopMaxAt - submittedAt) / 1000,
        windows,
        loadBefore,
        loadAfter,
      };
    } finally {
      await engine.dispose();
    }
  } finally {
    await loops?.stop();
    for (const pid of loopPids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone with the engine.
      }
    }
  }
}

export const p99 = (values: readonly number[]) => percentile(values, 99);
