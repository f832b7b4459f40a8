// Memory that does not follow the article's length: the real speech pipeline converts a long prefix of the longest
// fixture article while the test, at points along the way, asks V8 which audio buffers (typed arrays of PCM) are
// still alive after a full collection, and how many samples they hold. A pipeline that kept the article's speech
// until the end (or grew one buffer with it) would hold more at every step; one that encodes as it goes holds a
// window of a few lines, whatever the length.
//
// Resident memory (RSS) is not asserted here: it depends on when each thread's collector runs (the MP3 encoder's
// worker frees the PCM handed to it only when its own collector runs), so on a loaded machine it flaked ("RSS grew
// 47 MB from a third of the way to the end" with nothing retained). The engine's RSS is measured in the benchmark
// instead: `npm run bench -- memory` (BENCHMARKS.md).
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import v8 from 'node:v8';
import { createSpeechPipeline } from '../../src/speech';
import { runJob } from '../support/speech-support';

const LONG = readFileSync(path.join(__dirname, '..', 'fixtures', 'articles', 'long.md'), 'utf8');
const CHARS =
  process.env.ARTICLE_AUDIO_TEST_MEMORY_CHARS === 'all'
    ? LONG.length
    : Number(process.env.ARTICLE_AUDIO_TEST_MEMORY_CHARS) || 15_000;
const SAMPLE_RATE = 16_000;
/**
 * The most audio alive at once, as a share of the job's: the window of lines in flight (measured 20-40 s of a 920 s
 * job, 2-4%). A pipeline that kept the speech would hold nearly all of it by the end.
 */
const ALIVE_SHARE_LIMIT = 0.12;

/**
 * Samples of audio alive in this thread (Float32Array and Int16Array, the pipeline's PCM), counted by V8 after a full
 * collection. Buffers handed to the MP3 encoder's worker are detached (length 0) and not counted: that thread frees
 * them when its own collector runs, which is what made resident memory a timing measure.
 */
const TYPED_ARRAY = Object.getPrototypeOf(Int16Array) as typeof Int16Array;

function livePcmSamples(): number {
  let samples = 0;
  // One walk of the heap for every typed array (each walk takes about a second), then the two PCM types.
  for (const preview of v8.queryObjects(TYPED_ARRAY, { format: 'summary' })) {
    samples += Number(/^(?:Float32Array|Int16Array)\((\d+)\)/.exec(preview)?.[1] ?? 0);
  }
  return samples;
}

/** A prefix that ends at a paragraph, so the article stays well formed. */
function prefixOf(text: string, chars: number): string {
  if (chars >= text.length) return text;
  const cut = text.lastIndexOf('\n\n', chars);
  return text.slice(0, cut > 0 ? cut : chars);
}

describe('speech pipeline: memory on the longest input', () => {
  const pipeline = createSpeechPipeline({ workers: 2 });
  after(() => pipeline.close());

  it(`holds a few lines of audio at a time, not the article, converting ${CHARS === LONG.length ? 'the whole of' : `${CHARS.toLocaleString('en-US')} characters of`} long.md (live audio buffers after a collection)`, async (t) => {
    const text = prefixOf(LONG, CHARS);
    const samples: { progress: number; pcm: number }[] = [];
    let nextAt = 0.1;
    const run = await runJob(
      pipeline,
      { modelId: 'article-audio-1-mini', text },
      {
        onProgress: (fraction) => {
          // Sampled while the lines are spoken (progress 0.08-0.98), about every tenth of the way.
          if (fraction >= nextAt && fraction < 0.99) {
            samples.push({ progress: fraction, pcm: livePcmSamples() });
            nextAt = fraction + 0.1;
          }
        },
      },
    );
    try {
      assert.equal(run.error, undefined, run.error?.message);
      const durationS = run.output!.durationS;
      assert.ok(durationS > text.length / 25, `only ${durationS} s of audio for ${text.length} characters`);
      assert.ok(samples.length >= 6, `too few samples along the way (${samples.length})`);
      t.diagnostic(
        `${text.length} characters -> ${durationS.toFixed(0)} s of audio; seconds of audio alive at ${samples.map((s) => `${(s.progress * 100).toFixed(0)}%: ${(s.pcm / SAMPLE_RATE).toFixed(1)}`).join(', ')}`,
      );
      const most = samples.reduce((a, b) => (b.pcm > a.pcm ? b : a));
      assert.ok(
        most.pcm / SAMPLE_RATE < durationS * ALIVE_SHARE_LIMIT,
        `${(most.pcm / SAMPLE_RATE).toFixed(0)} s of audio alive at ${(most.progress * 100).toFixed(0)}% of a ${durationS.toFixed(0)} s job: memory follows the article's length`,
      );
    } finally {
      run.dispose();
    }
  });
});
