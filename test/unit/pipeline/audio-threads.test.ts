// The engine keeps an audio thread between jobs (job-audio.ts, AUDIO_THREAD_REUSE), as it keeps a parse thread: a
// job on a kept thread writes the same bytes as on a thread of its own, and a thread whose job failed, one over its
// share of jobs, one more than the idle limit, or one idle for too long is ended. A kept thread at normal priority
// (its job ended before its first part was cut) goes to the next job with a first part; a lowered one to a job
// without. Real worker threads, real files; `counts.threads` is how many threads were started.
import * as assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { AUDIO_THREAD_REUSE, AudioThreads, type AudioThreadReuse, JobAudio } from '../../../src/speech/audio/job-audio';
import { eventually } from '../../support/http-calls';

const RATE = 16_000;
const dir = mkdtempSync(path.join(os.tmpdir(), 'aa-audio-threads-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** A line of speech-like audio: a tone that rises and falls, `seconds` long. */
function line(seconds: number, pitch: number): Int16Array {
  const samples = new Int16Array(Math.round(seconds * RATE));
  for (let i = 0; i < samples.length; i++) {
    const t = i / RATE;
    samples[i] = Math.round(
      8000 * Math.sin(2 * Math.PI * (pitch + 40 * Math.sin(3 * t)) * t) * Math.sin((Math.PI * t) / seconds),
    );
  }
  return samples;
}

/** A job's audio written through `audio`: three lines, parts on, then finished; the file's and the parts' bytes. */
async function writeJob(audio: JobAudio, quality = 7): Promise<Buffer> {
  const file = path.join(dir, `job-${files++}.mp3`);
  const partsDir = `${file}.parts`;
  await audio.open({ path: file, partsDir, sampleRate: RATE, bitrate: 48_000, quality, partTargetsS: [1, 5] });
  for (const [seconds, pitch] of [
    [1.5, 180],
    [2.2, 140],
    [0.8, 220],
  ] as const)
    await audio.line(line(seconds, pitch), RATE, 0.2, 0.4);
  await audio.finish({ encoder: 'test', chapters: [] });
  await audio.close();
  // The parts by name, then the file: a part's name or cut carried over from the job before would show.
  const parts = readdirSync(partsDir).sort();
  assert.ok(parts.length >= 2, `parts: ${parts.join(', ')}`);
  return Buffer.concat([
    ...parts.flatMap((name) => [Buffer.from(name), readFileSync(path.join(partsDir, name))]),
    readFileSync(file),
  ]);
}

function threads(reuse: Partial<AudioThreadReuse> = {}): AudioThreads {
  return new AudioThreads({ ...AUDIO_THREAD_REUSE, ...reuse });
}

/** A thread's nice value (Linux), or 'ended' once the thread is gone. */
function niceOf(tid: number): number | 'ended' {
  try {
    const stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  } catch {
    return 'ended';
  }
}

const onLinux = process.platform === 'linux';

describe('audio threads kept between jobs', () => {
  it('runs jobs one after another on one thread, each file and part the same bytes as on a thread of its own', async () => {
    const kept = threads();
    try {
      const alone = await writeJob(JobAudio.start());
      const q3Alone = await writeJob(JobAudio.start(), 3);
      const first = await writeJob(kept.start({ firstPart: true }));
      // Another job's settings in between (LAME quality 3): the next one starts from nothing all the same.
      const other = await writeJob(kept.start(), 3);
      const again = await writeJob(kept.start({ firstPart: true }));
      assert.ok(alone.length > 10_000, `an MP3 of ${alone.length} bytes`);
      assert.ok(first.equals(alone), 'the first job on the kept thread');
      assert.ok(other.equals(q3Alone), 'a job with other settings');
      assert.ok(again.equals(alone), 'a job after one with other settings');
      assert.deepEqual(kept.counts, { threads: 1, jobs: 3 });
      assert.equal(kept.idleCount, 1);
    } finally {
      await kept.close();
    }
    assert.equal(kept.idleCount, 0, 'closed: nothing kept');
  });

  it('keeps one thread when jobs ran at once, and ends the other', async () => {
    const kept = threads();
    try {
      const a = kept.start();
      const b = kept.start();
      const [tidA, tidB] = await Promise.all([a.threadId(), b.threadId()]);
      await Promise.all([writeJob(a), writeJob(b)]);
      assert.deepEqual(kept.counts, { threads: 2, jobs: 2 });
      assert.equal(kept.idleCount, 1);
      if (onLinux) {
        const ended = await eventually(
          'one of the two threads to end',
          () => Promise.resolve([tidA, tidB].filter((tid) => niceOf(tid!) === 'ended').length || undefined),
          30_000,
        );
        assert.equal(ended, 1);
      }
      await writeJob(kept.start());
      assert.deepEqual(kept.counts, { threads: 2, jobs: 3 }, 'the next job ran on the kept thread');
    } finally {
      await kept.close();
    }
  });

  it('ends the thread of a job whose audio failed, and the next job gets a new one', async () => {
    const kept = threads();
    try {
      const notADir = path.join(dir, 'a-file');
      writeFileSync(notADir, 'x');
      const failing = kept.start();
      await assert.rejects(
        failing.open({
          path: path.join(notADir, 'audio.mp3'),
          partsDir: notADir,
          sampleRate: RATE,
          bitrate: 48_000,
          quality: 7,
          partTargetsS: [],
        }),
        /EEXIST|ENOTDIR/,
      );
      // The pipeline records a failed request as the job's failure: a line sent after it fails too.
      await assert.rejects(failing.line(line(0.5, 200), RATE, 0, 0));
      await failing.close();
      assert.equal(kept.idleCount, 0, 'not kept');
      await writeJob(kept.start());
      assert.deepEqual(kept.counts, { threads: 2, jobs: 2 });
    } finally {
      await kept.close();
    }
  });

  it('ends a thread that ran its share of jobs or waited too long', async () => {
    const kept = threads({ maxJobs: 2, idleMs: 300 });
    try {
      await writeJob(kept.start());
      await writeJob(kept.start());
      assert.equal(kept.idleCount, 0, 'two jobs: its share');
      await writeJob(kept.start());
      assert.deepEqual(kept.counts, { threads: 2, jobs: 3 });
      assert.equal(kept.idleCount, 1);
      await eventually('the idle thread to be ended', () => Promise.resolve(kept.idleCount === 0 || undefined), 30_000);
      await writeJob(kept.start());
      assert.deepEqual(kept.counts, { threads: 3, jobs: 4 });
    } finally {
      await kept.close();
    }
  });

  it(
    'gives a kept thread still at normal priority to a job with a first part, a lowered one to a job without',
    { skip: !onLinux && 'reads /proc' },
    async () => {
      const kept = threads({ maxIdle: 2 });
      const base = os.getPriority(process.pid);
      try {
        // Two jobs with a first part at once: one has its first part cut (lowered), the other ends before (not).
        const cut = kept.start({ firstPart: true });
        const uncut = kept.start({ firstPart: true });
        const [cutTid, uncutTid] = await Promise.all([cut.threadId(), uncut.threadId()]);
        cut.lowerPriority();
        await Promise.all([writeJob(cut), writeJob(uncut)]);
        assert.equal(kept.idleCount, 2);
        assert.ok(niceOf(cutTid!) !== base && niceOf(uncutTid!) === base, 'one lowered, one not');

        const withFirstPart = kept.start({ firstPart: true });
        const without = kept.start();
        assert.equal(
          await withFirstPart.threadId(),
          uncutTid,
          'the job with a first part gets the thread at normal priority',
        );
        assert.equal(await without.threadId(), cutTid, 'the job without gets the lowered one');
        assert.equal(niceOf(uncutTid!), base);
        await Promise.all([withFirstPart.close(), without.close()]);
        assert.equal(kept.counts.threads, 2);

        // Only a lowered thread kept: a job without a first part takes it; a thread at normal priority given to such a
        // job is lowered.
        const a = kept.start();
        const b = kept.start();
        assert.deepEqual(new Set([await a.threadId(), await b.threadId()]), new Set([cutTid, uncutTid]));
        assert.notEqual(niceOf(uncutTid!), base, 'lowered for a job without a first part');
        await Promise.all([a.close(), b.close()]);
      } finally {
        await kept.close();
      }
    },
  );
});
