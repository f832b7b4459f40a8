// MP3 encoding alone: the engine's own writer (LAME in WebAssembly, streamed to a file) fed the given seconds of
// speech-like audio in sentence-sized chunks, to tell how much of the pipeline's overhead is encoding.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Mp3Writer } from '../../src/speech/audio/mp3-writer';
import { MODEL_PROFILES } from '../../src/speech/text/profiles';
import type { ModelId } from './report';

const SAMPLE_RATE = 16_000;

/** Seconds it takes to encode `seconds` of audio at the model's bitrate: wall time, and CPU time (load-proof). */
export async function encodingTime(model: ModelId, seconds: number): Promise<{ wallS: number; cpuS: number }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'article-audio-bench-mp3-'));
  try {
    // About four seconds per sentence: a few harmonics with a slow envelope and a little noise, roughly voice-like.
    const chunk = new Float32Array(SAMPLE_RATE * 4);
    for (let i = 0; i < chunk.length; i++) {
      const t = i / SAMPLE_RATE;
      const envelope = 0.5 + 0.5 * Math.sin(2 * Math.PI * 3 * t);
      chunk[i] =
        envelope *
        (0.2 * Math.sin(2 * Math.PI * 140 * t) + 0.1 * Math.sin(2 * Math.PI * 420 * t) + 0.05 * (Math.random() - 0.5));
    }
    const started = performance.now();
    const cpu = process.cpuUsage();
    const profile = MODEL_PROFILES[model];
    const writer = await Mp3Writer.create(path.join(dir, 'audio.mp3'), SAMPLE_RATE, profile.bitrate, {
      quality: profile.lameQuality,
    });
    for (let done = 0; done < seconds; done += 4)
      await writer.write(chunk.slice(0, Math.round(Math.min(4, seconds - done) * SAMPLE_RATE)));
    await writer.finish();
    const used = process.cpuUsage(cpu);
    return { wallS: (performance.now() - started) / 1000, cpuS: (used.user + used.system) / 1e6 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
