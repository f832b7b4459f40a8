// The pipeline the engine uses when none is injected: the speech pipeline (src/speech).
import { createSpeechPipeline } from '../../speech';
import type { ParseLimits } from '../../speech/parse/parse-runner';
import type { ArticlePipeline } from '../../speech/types';
import type { VoicesConfig } from '../../speech/voice/voices-file';

/** A positive number from the environment, or undefined (then the pipeline's default applies). */
function positiveEnv(name: string, scale = 1): number | undefined {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value * scale : undefined;
}

export function createDefaultPipeline(options: { voices?: VoicesConfig } = {}): ArticlePipeline {
  const parseLimits: Partial<ParseLimits> = {};
  // Parsing and intro/outro decoding run in a worker thread with these limits (README: "Engine limits").
  const timeoutMs = positiveEnv('ARTICLE_AUDIO_PARSE_TIMEOUT_S', 1000);
  const memoryMb = positiveEnv('ARTICLE_AUDIO_PARSE_MEMORY_MB');
  const maxClipSeconds = positiveEnv('ARTICLE_AUDIO_MAX_CLIP_S');
  if (timeoutMs) parseLimits.timeoutMs = timeoutMs;
  if (memoryMb) parseLimits.memoryMb = Math.max(16, Math.round(memoryMb));
  if (maxClipSeconds) parseLimits.maxClipSeconds = maxClipSeconds;
  // ARTICLE_AUDIO_SYNTH_WORKERS: synthesis threads (default: the CPU cores, at most 4); each holds about 60 MB.
  return createSpeechPipeline({
    workers: Number(process.env.ARTICLE_AUDIO_SYNTH_WORKERS) || undefined,
    parseLimits,
    ...(options.voices ? { voices: options.voices } : {}),
  });
}
