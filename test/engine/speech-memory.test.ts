// Bounded memory on the longest input: the real engine process (node dist/cli.js serve) converts the longest
// fixture article with the mini model while the test reads the process's resident memory from /proc (VmRSS while it
// works, VmHWM at the end: every thread of the engine, synthesis and MP3 encoder workers included). Two synthesis
// workers, as on the 2-core CI machine, fixed so that the bound means the same on any machine.
//
// By default a prefix of long.md is converted (25,000 characters, about 26 minutes of audio), which keeps this file
// near 15 s on an idle 2-core machine: the full article (99,000 characters, 101 minutes of audio) takes 45 s or more
// there, too long for every CI run. Memory does not depend on the length (audio is encoded and written as it is
// made), which the second check holds: resident memory must stop growing once the job is under way. Set
// ARTICLE_AUDIO_TEST_MEMORY_CHARS=all to convert the whole article (the number quoted in the issue notes).
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ENGINE_ENV, ENGINE_NODE_FLAGS } from '../../src/engine/process-tuning';
import { type EngineProcess, startEngineProcess } from '../support/engine-process';
import { type ServiceCalls, serviceCalls } from '../support/http-calls';

const LONG = readFileSync(path.join(__dirname, '..', 'fixtures', 'articles', 'long.md'), 'utf8');
const CHARS = process.env.ARTICLE_AUDIO_TEST_MEMORY_CHARS === 'all' ? LONG.length : Number(process.env.ARTICLE_AUDIO_TEST_MEMORY_CHARS) || 25_000;
/**
 * Measured 263-277 MB for this run started as the extension starts the engine (310-335 MB before that, as plain
 * node), against about 390 MB more if the article's audio were held in memory before encoding. Issue 9's benchmark
 * target for the whole article is 300 MB; this bound leaves room for a loaded CI machine.
 */
const PEAK_LIMIT_MB = 340;
/**
 * Growth allowed from a third of the way through to the end: measured 7-24 MB (the MP3 encoder's worker and the
 * allocator settling; up to 42 MB once under a full test run's load before the engine was started with
 * MALLOC_ARENA_MAX=2), while a pipeline that held the speech in memory grew 51 MB here.
 */
const GROWTH_LIMIT_MB = 40;

function memoryMb(pid: number, key: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1];
  if (!kb) throw new Error(`No ${key} in /proc/${pid}/status`);
  return Number(kb) / 1024;
}

/** A prefix that ends at a paragraph, so the article stays well formed. */
function prefixOf(text: string, chars: number): string {
  if (chars >= text.length) return text;
  const cut = text.lastIndexOf('\n\n', chars);
  return text.slice(0, cut > 0 ? cut : chars);
}

describe('speech pipeline: memory on the longest input', { skip: process.platform !== 'linux' ? 'reads /proc' : false }, () => {
  let engine: EngineProcess;
  let calls: ServiceCalls;
  before(async () => {
    // Started as the extension starts its engine (malloc arenas, young generation): what users run.
    engine = await startEngineProcess({ env: { ...ENGINE_ENV, ARTICLE_AUDIO_SYNTH_WORKERS: '2' }, nodeArgs: ENGINE_NODE_FLAGS });
    calls = serviceCalls(engine.url, engine.tokens[0]!);
  });
  after(() => engine.dispose());

  it(`converts ${CHARS === LONG.length ? 'the whole of' : `${CHARS.toLocaleString('en-US')} characters of`} long.md with mini within ${PEAK_LIMIT_MB} MB, flat after the start`, async (t) => {
    const text = prefixOf(LONG, CHARS);
    const idle = memoryMb(engine.pid, 'VmRSS');
    const started = Date.now();
    const jobId = (await calls.submit({ model_id: 'article-audio-1-mini', text })).jobId;
    const samples: { progress: number; rss: number }[] = [];
    let job;
    for (;;) {
      job = (await calls.get(`/v1/jobs/${jobId}`)).job;
      samples.push({ progress: job.progress, rss: memoryMb(engine.pid, 'VmRSS') });
      if (job.status === 'succeeded' || job.status === 'failed') break;
      assert.ok(Date.now() - started < 280_000, 'the job did not finish in time');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const peak = memoryMb(engine.pid, 'VmHWM');
    const seconds = (Date.now() - started) / 1000;
    assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
    const audioS = job.outputs?.results[0]?.duration_s ?? 0;
    t.diagnostic(`${text.length} characters -> ${audioS.toFixed(0)} s of audio in ${seconds.toFixed(1)} s; engine RSS idle ${idle.toFixed(0)} MB, peak ${peak.toFixed(0)} MB`);
    assert.ok(audioS > text.length / 25, `only ${audioS} s of audio for ${text.length} characters`);

    assert.ok(peak < PEAK_LIMIT_MB, `peak RSS ${peak.toFixed(0)} MB >= ${PEAK_LIMIT_MB} MB`);
    const underWay = samples.filter((s) => s.progress >= 0.33 && s.progress < 1);
    assert.ok(underWay.length >= 3, `too few samples after a third of the job (${underWay.length}); the job ran ${seconds} s`);
    const atThird = underWay[0]!.rss;
    const latest = Math.max(...underWay.map((s) => s.rss));
    t.diagnostic(`RSS at ${(underWay[0]!.progress * 100).toFixed(0)}%: ${atThird.toFixed(0)} MB, highest after: ${latest.toFixed(0)} MB`);
    assert.ok(latest - atThird < GROWTH_LIMIT_MB, `RSS grew ${(latest - atThird).toFixed(0)} MB from a third of the way to the end: memory follows the article's length`);
  });
});
