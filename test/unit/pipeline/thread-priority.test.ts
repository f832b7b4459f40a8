// The engine's audio work yields the CPU to its main thread (HTTP, events, files) and to other programs: on Linux
// each synthesis worker and the audio worker renice their own thread, and only it. Checked on the real workers, by
// reading every thread's nice value of this process from the OS.
import * as assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { after, describe, it } from 'node:test';
import { JobAudio } from '../../../src/speech/audio/job-audio';
import { SynthesisPool } from '../../../src/speech/voice/synth-pool';
import { AUDIO_THREAD_NICENESS } from '../../../src/speech/threads/thread-priority';

const niceByThread = () =>
  new Map(readdirSync('/proc/self/task').map((tid) => [Number(tid), os.getPriority(Number(tid))] as const));

describe(
  'engine: audio work runs below the main thread',
  { skip: process.platform !== 'linux' && 'Linux only' },
  () => {
    const pool = new SynthesisPool(2);
    let audio: JobAudio | undefined;
    after(async () => {
      await pool.close();
      await audio?.close();
    });

    it('every synthesis worker and the audio worker run at a lower priority, every other thread as before', async () => {
      // libuv's thread pool is started here, by the main thread, as the engine's store does long before any job.
      await readFile(__filename);
      const base = os.getPriority(process.pid);
      const before = niceByThread();
      // Both synthesis workers answered, and the audio worker handled a request: each ran its start-up code.
      await Promise.all([pool.synthesize('One line.', 'rms'), pool.synthesize('Another line.', 'rms')]);
      audio = JobAudio.start();
      await audio.abort();

      const lowered = Math.min(19, base + AUDIO_THREAD_NICENESS);
      const now = niceByThread();
      const newThreads = [...now.keys()].filter((tid) => !before.has(tid));
      const reniced = newThreads.filter((tid) => now.get(tid) === lowered);
      assert.equal(reniced.length, 3, `nice of the new threads: ${newThreads.map((t) => now.get(t)).join(', ')}`);
      assert.equal(os.getPriority(process.pid), base, 'the main thread keeps its priority');
      for (const [tid, nice] of before) if (now.has(tid)) assert.equal(now.get(tid), nice, `thread ${tid} was reniced`);
    });
  },
);
