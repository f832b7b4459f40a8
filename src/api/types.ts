// Public types of the job-service client. The shapes follow spec/job-service-api.md; everything the spec leaves open
// is optional here, because a remote service may differ from our local engine.

import type { ArticleSubmission, JobStatus } from '../protocol';

// The wire contract (models, limits, states, the submission's rules) lives in src/protocol, shared with the engine.
export {
  type ArticleSubmission,
  type FieldIssue,
  type JobStatus,
  type KnownStatus,
  type ModelId,
  KNOWN_STATUSES,
  MODEL_IDS,
  MODELS,
  TEXT_MAX_LENGTH,
  TEXT_MIN_LENGTH,
  countCharacters,
  isModelId,
  isTerminalStatus,
  modelLabel,
} from '../protocol';

/** Body of POST /v1/article-to-audio. Exactly one of `url` and `text`. */
export type ArticleRequest = ArticleSubmission;

export interface JobAccepted {
  jobId: string;
  /** Absolute URLs, resolved against the base URL. */
  links: { self: string; stream: string };
}

/** One output file. `contentType` and `durationS` are engine extensions and may be missing. */
export interface OutputFile {
  /** Absolute (relative addresses are resolved against the base URL). */
  url: string;
  contentType?: string;
  durationS?: number;
}

export interface JobErrorDetails {
  code?: string;
  message?: string;
  /** Whatever else the service sent. */
  raw?: unknown;
}

export interface Job {
  id: string;
  status: JobStatus;
  /** 0..1 when known. */
  progress?: number;
  createdAt?: string;
  /** The article's title, when the service found one (an engine extension, set once the job has succeeded). */
  title?: string;
  outputs: { results: OutputFile[] } | null;
  error: JobErrorDetails | null;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | (string & {});

/** What following a job yields, in order, each at most once. */
export type JobEvent =
  /** `eventId` is the stream's event id when the event came from the stream and the service sent one. */
  | { type: 'status'; status: JobStatus; progress?: number; eventId?: string }
  | { type: 'log'; level: LogLevel; message: string; createdAt?: string; eventId?: string }
  | {
      type: 'result';
      /** Set when the result is a part of the audio announced while the job runs (an engine extension). */
      part?: JobPart;
      results: OutputFile[];
      images: unknown[];
      raw: unknown;
      modelId?: string;
      styleId?: number;
      requestDurationS?: number;
      eventId?: string;
    }
  /** How the client is following the job changed (stream opened, dropped, fell back to polling). */
  | { type: 'transport'; mode: 'stream' | 'poll'; reason?: string }
  /**
   * The service could not be reached (or failed) on the first try of an outage, after the HTTP layer's own retries;
   * following goes on in the background (reconnecting, then polling) until the job ends, the deadline or an abort.
   */
  | { type: 'unreachable'; message: string; retryInMs: number }
  /** Always the last event: the final job as the status endpoint reports it. */
  | { type: 'end'; job: Job };

/**
 * A part of a job's audio, announced while the job runs (our engine; see the README's "Audio in parts"): a standalone
 * MP3 of whole frames and its WebVTT cues (times relative to the part). Parts are consecutive slices of the final
 * audio, so played one after another they are the final audio.
 */
export interface JobPart {
  /** From 0, in order. */
  index: number;
  /** Where the part starts in the final audio, seconds. */
  startS: number;
  durationS: number;
  /** Absolute address of the part's MP3. */
  url: string;
  /** Absolute address of its transcript, when there is one. */
  transcriptUrl?: string;
  /** The last part. */
  final: boolean;
}

/** Polling schedule (spec 4.2): first interval 2-3 s, doubled after each check, capped at 30-60 s. */
export interface PollingOptions {
  initialMs: number;
  factor: number;
  maxMs: number;
  /** Each wait is multiplied by a random factor in [1 - jitter, 1 + jitter], then capped at `maxMs`. Default 0.2. */
  jitter?: number;
}

/** How the client keeps an event stream alive. */
export interface StreamOptions {
  /** A stream that sends nothing at all (not even a heartbeat) for this long is reconnected. Default 45 s. */
  idleTimeoutMs?: number;
  /** Consecutive connections that fail or bring nothing new before falling back to polling. Default 5. */
  maxFailures?: number;
  /** Reconnection delay when the service sent no `retry:` hint; doubled per consecutive failure. Default 1 s. */
  reconnectMs?: number;
  /** While the stream brings no new event for this long, the status endpoint is checked too. Default 60 s. */
  statusCheckMs?: number;
}

export type LogFunction = (level: 'debug' | 'info' | 'warn' | 'error', message: string) => void;

export interface CallOptions {
  signal?: AbortSignal;
  /** Epoch milliseconds after which the call gives up with a TimeoutError. */
  deadline?: number;
}

export interface SubmitOptions extends CallOptions {
  /**
   * Sent as the `Idempotency-Key` header so that a retried submission never creates a second job. A random key is
   * generated when omitted; `null` sends none, and then a submission that may have reached the service is not retried.
   */
  idempotencyKey?: string | null;
}

export type FollowTransport = 'auto' | 'stream' | 'poll';

export interface FollowOptions extends CallOptions {
  /** `auto` (default): the stream, falling back to polling when it cannot be opened or keeps dropping. */
  transport?: FollowTransport;
  /** Resume a stream after this event id (sent as `Last-Event-ID`). */
  lastEventId?: string;
}

export interface WaitOptions extends FollowOptions {
  onEvent?: (event: JobEvent) => void;
}

export interface DownloadOptions extends CallOptions {
  onProgress?: (bytes: number, total?: number) => void;
  /**
   * The most bytes to accept. Default: the cap for the output's kind (download-limits.ts), from the job's
   * `content_type` and `duration_s` when an OutputFile is downloaded, else from the address.
   */
  maxBytes?: number;
  /** Why `maxBytes` is what it is, for the message when it is exceeded ("what is left of …"). */
  maxBytesBasis?: string;
}

export interface DownloadResult {
  path: string;
  bytes: number;
  contentType?: string;
}

export interface CancelResult {
  /** False when the service has no cancel endpoint (404/405/501 there while the job exists). */
  supported: boolean;
  job?: Job;
}
