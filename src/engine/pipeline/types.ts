// The contract between the engine's service (HTTP, queue, store) and its speech pipeline.
// The service owns job state, persistence and streaming; the pipeline turns one job's input into output files.

export type EngineModelId = 'article-audio-1-mini' | 'article-audio-1-pro' | 'article-podcast-1-pro';

export interface PipelineInput {
  jobId: string;
  modelId: EngineModelId;
  /** Exactly one of url and text is set (the service validated the request). */
  url?: string;
  text?: string;
  introAudioUrl?: string;
  outroAudioUrl?: string;
}

export interface FetchLimits {
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
}

export type PipelineLogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface PipelineContext {
  /** An empty folder owned by this job run; the pipeline writes its output files here. */
  workDir: string;
  /** Aborted when the job is cancelled or the engine shuts down. The pipeline stops promptly and throws. */
  signal: AbortSignal;
  /** Overall progress of the job, 0..1, non-decreasing (the service clamps and rate-limits events). */
  progress(fraction: number): void;
  log(level: PipelineLogLevel, message: string): void;
  fetchLimits: FetchLimits;
}

/** Output files in the order DESIGN.md lists them: audio/mpeg, text/vtt, application/json chapters, text/markdown. */
export interface PipelineOutputFile {
  /** File name inside workDir, e.g. `audio.mp3`. */
  name: string;
  contentType: string;
  durationS?: number;
}

export interface PipelineOutput {
  files: PipelineOutputFile[];
  /** The article's title, when one was found. */
  title?: string;
  /** Seconds of audio produced. */
  durationS: number;
}

export type PipelineErrorCode =
  | 'fetch_failed'
  | 'not_an_article'
  | 'too_short'
  | 'too_long'
  | 'intro_unusable'
  | 'outro_unusable'
  | 'synthesis_failed'
  | 'cancelled';

/** A failure the user can act on; it becomes the failed job's `error: {code, message}`. */
export class PipelineError extends Error {
  constructor(
    readonly code: PipelineErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'PipelineError';
  }
}

export interface ArticlePipeline {
  run(input: PipelineInput, context: PipelineContext): Promise<PipelineOutput>;
  /** Frees workers and other resources; called once when the engine stops. */
  close(): Promise<void>;
}
