// An engine's long-lived resources return to their level after every job (issue 23): a long-lived server or a
// week-long VS Code window runs thousands of jobs, and what one job leaves open adds up until the engine fails every
// job (EMFILE) while /healthz says ok. Counted from outside the engine process (dist/cli.js serve), on Linux, by
// test/support/resource-level.ts: descriptors by kind, threads, temp files, and the main thread's timers, sockets,
// servers, child processes, worker threads and message ports (resource-probe.cjs, loaded with --require).
//
// The level is taken once the engine has run one job (the synthesis pool's threads start with the first job) and
// is quiet; after each later job the engine must come back to that level (or below it). This test's requests close their
// connection (closingCalls), so no client holds a socket of the engine's between checks.
// The team service's worker and API node: test/team/resource-leaks.test.ts (Postgres clients too).
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { type EngineProcess, startEngineProcess } from '../support/engine-process';
import { type ServiceCalls, type WireJob, waitForJob } from '../support/http-calls';
import {
  type ProcessProbe,
  RESOURCE_PROBE,
  backToLevel,
  closingCalls,
  probeFiles,
  probeProcess,
  quietLevel,
  sentences,
} from '../support/resource-level';

const mini = 'article-audio-1-mini';
const onLinux = process.platform === 'linux';
const hasPrlimit = onLinux && existsSync('/usr/bin/prlimit');
const TINY = 'A small note to read aloud. It has two short sentences and nothing else.';
/**
 * After a job the engine must hold no more than at its level (a leak only ever adds). Not exactly as much: at load
 * 20-25 (two full test runs side by side) the level was once taken while a timer of the first job's end was still
 * pending, and later snapshots had one Timeout fewer, which failed an equality check twice in a row.
 */
const BACK = { atMost: true };

async function startProbedEngine(): Promise<{
  engine: EngineProcess;
  calls: ServiceCalls;
  probe: ProcessProbe;
  dispose: () => Promise<void>;
}> {
  const files = probeFiles();
  const engine = await startEngineProcess({ nodeArgs: ['--require', RESOURCE_PROBE], env: files.env });
  return {
    engine,
    calls: closingCalls(engine.url, engine.tokens[0]!),
    probe: probeProcess(engine.pid, files),
    dispose: async () => {
      await engine.dispose();
      files.remove();
    },
  };
}

async function run(calls: ServiceCalls, text: string, timeoutMs = 60_000): Promise<WireJob> {
  const id = (await calls.submit({ model_id: mini, text })).jobId;
  return waitForJob(calls, id, (job) => job.status === 'succeeded' || job.status === 'failed', timeoutMs);
}

const succeeded = (job: WireJob) =>
  assert.equal(job.status, 'succeeded', `job ${job.id}: ${job.status} ${JSON.stringify(job.error)}`);

describe('fault: resources return to their level after each job', { skip: !onLinux && 'reads /proc' }, () => {
  it(
    'under a limit of 400 descriptors, a job of 2,500 sentences and then another job both succeed',
    { skip: !hasPrlimit && 'reads /proc' },
    async () => {
      const { engine, calls, probe, dispose } = await startProbedEngine();
      try {
        // As `prlimit --nofile=400:400 article-audio serve` (node raises its soft limit to the hard one at start, so
        // the limit must be the hard one too; set on the running engine, before any job).
        execFileSync('prlimit', ['--pid', String(engine.pid), '--nofile=400:400']);
        succeeded(await run(calls, TINY));
        const level = await quietLevel(probe);
        succeeded(await run(calls, sentences(2500), 240_000));
        await backToLevel(probe, level, 'after the job of 2,500 sentences', BACK);
        succeeded(await run(calls, sentences(20)));
        await backToLevel(probe, level, 'after the job that followed', BACK);
      } finally {
        await dispose();
      }
    },
  );

  it('an engine that ran 200 jobs holds what it held after its first', async () => {
    const { calls, probe, dispose } = await startProbedEngine();
    try {
      succeeded(await run(calls, TINY));
      const level = await quietLevel(probe);
      // One at a time first: the level is checked after each job.
      for (let i = 2; i <= 6; i++) {
        succeeded(await run(calls, `${TINY} Job ${i}.`));
        await backToLevel(probe, level, `after job ${i}`, BACK);
      }
      // The rest four at a time (jobs that overlap), checked at the end.
      let next = 7;
      await Promise.all(
        [0, 1, 2, 3].map(async () => {
          while (next <= 200) succeeded(await run(calls, `${TINY} Job ${next++}.`));
        }),
      );
      await backToLevel(probe, level, 'after 200 jobs', BACK);
    } finally {
      await dispose();
    }
  });
});
