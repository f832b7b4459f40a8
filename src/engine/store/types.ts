// What the engine persists about jobs, and the interface of the store that keeps it. The engine ships one
// implementation (files in the data dir); a team deployment can put jobs in a shared database or queue by
// implementing JobStore, without touching the HTTP layer or the job lifecycle.
import type { Readable } from 'node:stream';
import type { PipelineOutputFile } from '../pipeline/types';
import type { ArticleSubmission } from '../submission';

export type JobState = 'queued' | 'processing' | 'succeeded' | 'failed';

export const isTerminal = (state: JobState): boolean => state === 'succeeded' || state === 'failed';

export interface JobFailure {
  code: string;
  message: string;
}

/** One output file of a succeeded job, as served under /v1/jobs/<id>/outputs/<name>. */
export interface StoredOutput {
  name: string;
  contentType: string;
  durationS?: number;
  bytes: number;
  /** Strong entity tag, quoted, derived from the content. */
  etag: string;
}

export interface StoredJob {
  id: string;
  /** SHA-256 of the token that created the job: only that token may see it. */
  owner: string;
  request: ArticleSubmission;
  /** Present when the submission carried an Idempotency-Key (both values are digests). */
  idempotency?: { key: string; request: string };
  status: JobState;
  /** Progress when the record was last saved (live progress is in memory); 1 once succeeded. */
  progress: number;
  createdAt: string;
  updatedAt: string;
  startedAt?: string;
  finishedAt?: string;
  /** Runs started so far. */
  attempts: number;
  /** Runs lost because the engine stopped without shutting down (crash, kill -9, power loss). */
  crashes: number;
  error: JobFailure | null;
  outputs: StoredOutput[] | null;
  result: JobResultInfo | null;
}

export interface JobResultInfo {
  title?: string;
  durationS: number;
  styleId: number;
  requestDurationS: number;
}

export type StreamEventName = 'status' | 'log' | 'result' | 'end';

/** One event of a job's stream. `id` increases by one per event of the job, across engine restarts. */
export interface StoredEvent {
  id: number;
  event: StreamEventName;
  /** JSON payload; for `end`, the terminal state as a string. Output addresses are kept relative to the base URL. */
  data: unknown;
}

export interface LoadedJob {
  job: StoredJob;
  /** The last intact event of the job's history, if any. */
  lastEvent: StoredEvent | undefined;
}

export interface ByteRange {
  start: number;
  /** Inclusive. */
  end: number;
}

export interface JobStore {
  /** Takes ownership of the storage and returns every job it holds. Damaged entries are skipped, not fatal. */
  open(): Promise<LoadedJob[]>;
  /** Persists a new job and its first events; the job survives a crash once this resolves. */
  create(job: StoredJob, events: StoredEvent[]): Promise<void>;
  /** Replaces a job's record atomically and durably. */
  save(job: StoredJob): Promise<void>;
  /**
   * Appends events in order. Once this resolves they survive the process dying; with `durable` they also survive
   * the machine losing power.
   */
  appendEvents(jobId: string, events: readonly StoredEvent[], durable: boolean): Promise<void>;
  readEvents(jobId: string): Promise<StoredEvent[]>;
  /** An empty folder for one run of the job's pipeline (replacing any left by an earlier run). */
  prepareRun(jobId: string): Promise<string>;
  /** Makes the named files of a finished run the job's outputs, durably, and describes them. */
  commitOutputs(jobId: string, runDir: string, files: readonly PipelineOutputFile[]): Promise<StoredOutput[]>;
  readOutput(jobId: string, name: string, range?: ByteRange): Readable;
  /** Deletes a job and everything it owns. */
  remove(jobId: string): Promise<void>;
  /** Flushes and releases the storage. */
  close(): Promise<void>;
}
