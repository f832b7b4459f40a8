// The engine's audio work yields the CPU to its main thread (HTTP, events, files) and to other programs: on Linux
// each synthesis worker and the audio worker run 10 nice steps lower, and only they. The exception is a job's first
// part, which a listener waits for (issue 30): one synthesis worker and the job's audio worker run at the engine's
// own priority until it is out, then they are lowered. Checked on the real workers, by reading each thread's nice
// value from /proc/<pid>/task/<tid>/stat. What is checked does not depend on the machine's load.
import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { after, describe, it } from 'node:test';
import { JobAudio } from '../../../src/speech/audio/job-audio';
import { eventually } from '../../support/http-calls';
import { SynthesisPool } from '../../../src/speech/voice/synth-pool';
import { AUDIO_THREAD_NICENESS } from '../../../src/speech/threads/thread-priority';

/** A thread's nice value, field 19 of its stat line (after the command name, which may hold spaces). */
function niceOf(tid: number): number {
  const stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

/** A thread's nice value, or 'ended' when the thread is gone (its /proc entry with it). */
function niceOrEnded(tid: number): number | 'ended' {
  try {
    return niceOf(tid);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ESRCH')
      return 'ended';
    throw error;
  }
}

const niceByThread = () =>
  new Map(readdirSync(`/proc/${process.pid}/task`).map((tid) => [Number(tid), niceOf(Number(tid))] as const));

describe(
  'engine: audio work runs below the main thread, but for the first part',
  { skip: process.platform !== 'linux' && 'reads /proc' },
  () => {
    const pools: SynthesisPool[] = [];
    const audios: JobAudio[] = [];
    after(async () => {
      await Promise.all(pools.map((p) => p.close()));
      await Promise.all(audios.map((a) => a.close()));
    });
    const base = os.getPriority(process.pid);
    const lowered = Math.min(19, base + AUDIO_THREAD_NICENESS);

    it('every synthesis worker and a job without parts: its audio worker run lower, every other thread as before', async () => {
      // libuv's thread pool is started here, by the main thread, as the engine's store does long before any job.
      await readFile(__filename);
      const pool = new SynthesisPool(2);
      pools.push(pool);
      await pool.prepare();
      const before = niceByThread();
      // Both synthesis workers answered, and the audio worker handled a request: each ran its start-up code.
      await Promise.all([pool.synthesize('One line.', 'rms'), pool.synthesize('Another line.', 'rms')]);
      const audio = JobAudio.start();
      audios.push(audio);
      await audio.abort();

      const now = niceByThread();
      const newThreads = [...now.keys()].filter((tid) => !before.has(tid));
      const reniced = newThreads.filter((tid) => now.get(tid) === lowered);
      assert.equal(reniced.length, 3, `nice of the new threads: ${newThreads.map((t) => now.get(t)).join(', ')}`);
      const threads = [...(await pool.threads()).map((t) => t.tid), await audio.threadId()];
      for (const tid of threads) assert.equal(niceOf(tid!), lowered, `worker thread ${tid}`);
      assert.equal(niceOf(process.pid), base, 'the main thread keeps its priority');
      for (const [tid, nice] of before) if (now.has(tid)) assert.equal(now.get(tid), nice, `thread ${tid} was reniced`);
    });

    it("a job's first part: one synthesis worker and the audio worker at normal priority; the audio worker is lowered when it is out, the synthesis worker waits for the next job's first part", async () => {
      // Idle for 10 minutes before it is ended: nothing here waits that long, whatever the load.
      const pool = new SynthesisPool(2, 600_000);
      pools.push(pool);
      await pool.prepare();
      const release = pool.holdFirstPart();
      const audio = JobAudio.start({ firstPart: true });
      audios.push(audio);
      // The first-part line and two others: all three workers start (the first-part worker takes only its line).
      await Promise.all([
        pool.synthesize('The first line.', 'rms', { firstPart: true }),
        pool.synthesize('Another line.', 'rms'),
        pool.synthesize('A third line.', 'rms'),
      ]);
      await audio.abort();
      const threads = await pool.threads();
      assert.equal(threads.length, 3, 'two workers and the first-part worker');
      const first = threads.filter((t) => t.firstPart);
      assert.equal(first.length, 1);
      assert.equal(niceOf(first[0]!.tid!), base, 'the first-part worker runs at normal priority');
      for (const t of threads.filter((t) => !t.firstPart)) assert.equal(niceOf(t.tid!), lowered, 'the others lower');
      const audioTid = (await audio.threadId())!;
      assert.equal(niceOf(audioTid), base, 'the audio worker runs at normal priority until the first part is out');

      // The first part is out: the audio worker is lowered; the first-part worker stays, idle, at normal priority,
      // and takes no other line.
      release();
      audio.lowerPriority();
      assert.equal(niceOf(audioTid), lowered, 'the audio worker is lowered');
      await Promise.all([pool.synthesize('A later line.', 'rms'), pool.synthesize('And one more.', 'rms')]);
      const after = await pool.threads();
      assert.equal(after.length, 3, 'the two workers and the idle first-part worker');
      const idle = after.filter((t) => t.firstPart);
      assert.deepEqual(
        idle.map((t) => t.tid),
        [first[0]!.tid],
      );
      assert.equal(niceOf(idle[0]!.tid!), base, 'it keeps its priority, and runs nothing meanwhile');
      for (const t of after.filter((t) => !t.firstPart)) assert.equal(niceOf(t.tid!), lowered);
      assert.equal(niceOf(process.pid), base, 'the main thread keeps its priority');

      // The next job's first part runs on the same worker: no new thread.
      const releaseNext = pool.holdFirstPart();
      await pool.synthesize('The next first line.', 'rms', { firstPart: true });
      const next = (await pool.threads()).filter((t) => t.firstPart);
      assert.deepEqual(
        next.map((t) => t.tid),
        [first[0]!.tid],
      );
      assert.equal(niceOf(next[0]!.tid!), base);
      releaseNext();
    });

    it('ends the idle first-part worker when no job asked for a first part for a while, and starts one again when a job does', async () => {
      const pool = new SynthesisPool(1, 200);
      pools.push(pool);
      await pool.prepare();
      const release = pool.holdFirstPart();
      await pool.synthesize('The first line.', 'rms', { firstPart: true });
      const [first] = (await pool.threads()).filter((t) => t.firstPart);
      release();
      await eventually(
        'the idle first-part worker is ended',
        async () => ((await pool.threads()).some((t) => t.firstPart) ? undefined : true),
        30_000,
      );
      await eventually(
        'its thread to end',
        () => Promise.resolve(niceOrEnded(first!.tid!) === 'ended' ? true : undefined),
        30_000,
      );
      const releaseLater = pool.holdFirstPart();
      await pool.synthesize('A first line, later.', 'rms', { firstPart: true });
      const later = (await pool.threads()).filter((t) => t.firstPart);
      assert.equal(later.length, 1);
      assert.notEqual(later[0]!.tid, first!.tid);
      assert.equal(niceOf(later[0]!.tid!), base);
      releaseLater();
    });
  },
);
