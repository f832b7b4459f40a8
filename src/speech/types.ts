// The contract between the engine's service (HTTP, queue, store) and its speech pipeline.
// The service owns job state, persistence and streaming; the pipeline turns one job's input into output files.

import type { ModelId } from '../protocol';

export type EngineModelId = ModelId;

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
  /**
   * Whether loopback, private, link-local and other non-public addresses may be fetched (network-policy.ts).
   * Default false: only the public internet.
   */
  allowPrivateNetwork?: boolean;
  /** Host names allowed to resolve to private addresses even so (network-policy.ts). */
  allowedHosts?: readonly string[];
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
  /**
   * Publishes a part of the audio while the job runs (its files are in workDir; the service moves them away and
   * announces the part). Parts come in order, index 0, 1, ...; a run after a crash publishes the same parts again,
   * which the service recognizes by index. The pipeline waits for it before going on.
   */
  publishPart?(part: PipelinePart): Promise<void>;
}

/** A playable piece of the job's audio: an MP3 of whole frames and its transcript, times relative to the part. */
export interface PipelinePart {
  index: number;
  /** Where the part starts in the final audio, seconds. */
  startS: number;
  durationS: number;
  /** The last part: the parts together are the whole audio. */
  final: boolean;
  /** The MP3 (audio/mpeg) and the WebVTT transcript (text/vtt), in that order, file names inside workDir. */
  files: PipelineOutputFile[];
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
  /** The article's language as a BCP 47 tag ("de"), when it could be told (text/language.ts). */
  language?: string;
}

export type PipelineErrorCode =
  | 'fetch_failed'
  | 'not_an_article'
  | 'too_short'
  | 'too_long'
  | 'intro_unusable'
  | 'outro_unusable'
  | 'synthesis_failed'
  /** A speech provider of the voices file stayed down, refused the request or answered with something not audio. */
  | 'voice_unavailable'
  /** The article is in a language the job's voices do not read (the built-in voices read English only). */
  | 'unsupported_language'
  /** The input is too large, deep or slow to parse safely (the parse worker's limits or the nesting bound). */
  | 'too_complex'
  /** The output could not be written: the disk is full, over quota or read-only. */
  | 'storage_failed'
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

/** Error codes of a file system that cannot take more data: the job's fault is the disk, not synthesis. */
const STORAGE_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EROFS']);

/** The storage failure behind `error` (itself or a cause), with a message that says what to do; else undefined. */
export function storageFailure(error: unknown): PipelineError | undefined {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && STORAGE_ERRORS.has(code)) {
      const why = code === 'EROFS' ? 'is read-only' : code === 'EDQUOT' ? 'is over its quota' : 'is full';
      return new PipelineError(
        'storage_failed',
        `The job's audio and transcript could not be written: the engine's disk ${why} (${code}). Free some disk space, then convert again.`,
        { cause: error },
      );
    }
  }
  return undefined;
}
