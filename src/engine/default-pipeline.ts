// The pipeline the engine uses when none is injected: the speech pipeline (src/engine/pipeline).
import { createSpeechPipeline } from './pipeline';
import type { ArticlePipeline } from './pipeline/types';

export function createDefaultPipeline(): ArticlePipeline {
  // ARTICLE_AUDIO_SYNTH_WORKERS: synthesis threads (default: the CPU cores, at most 4); each holds about 60 MB.
  return createSpeechPipeline({ workers: Number(process.env.ARTICLE_AUDIO_SYNTH_WORKERS) || undefined });
}
