// The speech synthesis of a job alone: the same script lines (the engine's own script builder over the same article)
// through the engine's synthesis pool (Flite in worker threads, as many as the engine uses), all queued at once,
// nothing else: no HTTP, no queue, no loudness, no MP3, no files. What the pipeline adds on top is its overhead.
import { parseMarkdown } from '../../src/speech/source/markdown';
import { buildScript } from '../../src/speech/text/script';
import { SynthesisPool } from '../../src/speech/voice/synth-pool';
import { articleText } from './articles';
import type { ArticleName, ModelId } from './report';

export interface RawSynthesis {
  lines: number;
  wallS: number;
  /** Seconds of speech the synthesizer produced (before trimming, without the pipeline's pauses). */
  audioS: number;
  workers: number;
  /** CPU seconds of this process (the synthesis worker threads included) over the same span. */
  cpuS: number;
}

export async function rawSynthesis(model: ModelId, article: ArticleName): Promise<RawSynthesis> {
  const { lines, profile } = buildScript(parseMarkdown(articleText(article)), model);
  // The engine's default: one worker per core, at most 4 (src/engine/core/default-pipeline.ts).
  const pool = new SynthesisPool();
  try {
    // Start the workers and compile Flite before the clock starts, as a running engine has.
    await Promise.all(Array.from({ length: pool.size }, () => pool.synthesize('Warm up.', profile.voices[0]!.flite)));
    const started = performance.now();
    const cpu = process.cpuUsage();
    const samples = await Promise.all(
      lines.map(async (line) => {
        const voice = profile.voices[line.voice]!;
        const utterance = await pool.synthesize(line.spoken, voice.flite, { durationStretch: voice.durationStretch });
        return utterance.samples.length / utterance.sampleRate;
      }),
    );
    const wallS = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const cpuS = (used.user + used.system) / 1e6;
    return { lines: lines.length, wallS, audioS: samples.reduce((a, b) => a + b, 0), workers: pool.size, cpuS };
  } finally {
    await pool.close();
  }
}
