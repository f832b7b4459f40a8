// What the engine persists about jobs, and the seams of its coordination:
// - JobStore: the embedded engine's jobs, events and run folders (files in the data dir, file-store.ts);
// - OutputStorage: where finished files (and parts of a running job) live and how they are read back with ranges:
//   the data dir (embedded), a shared folder or S3-compatible object storage (team service, team/output-storage.ts);
// - WorkQueue and EventBus: how jobs reach workers (claim with a lease, heartbeat, fenced completion) and how a job's
//   events reach streams on any node (replay after an event id). Embedded: JobQueue and LiveJob in memory; team
//   service: Postgres (team/pg-queue.ts, team/pg-events.ts).
import type { Readable } from 'node:stream';
import type { PipelineOutputFile } from '../../speech/types';
import type { ArticleSubmission } from '../../protocol';

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
  /**
   * Where the bytes are in the output storage when that is not `<job id>/<name>` (the team service keeps each run's
   * files under a key of their own, so a run that lost its lease can never overwrite the files of the one that won).
   */
  key?: string;
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
  /** Files of the parts announced while the job ran (audio and transcript of each), served for its retention. */
  parts?: StoredOutput[];
}

export interface JobResultInfo {
  title?: string;
  durationS: number;
  /** The article's language (BCP 47), when the pipeline could tell it. */
  language?: string;
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
  /**
   * What `/readyz` checks of this store (service-api.ts `readinessOf`): each resolves `{ok}`, or `{ok: false, error}`
   * with a code, never a path. Without it the store is taken as ready.
   */
  readinessChecks?(): Record<string, () => Promise<{ ok: boolean; error?: string }>>;
  /** Flushes and releases the storage. */
  close(): Promise<void>;
}

/** What put() is told about a file besides its bytes. */
export interface OutputMeta {
  contentType: string;
  durationS?: number;
  key?: string;
}

/** How every OutputStorage describes a file it stored. */
export function storedOutput(name: string, meta: OutputMeta, bytes: number, etag: string): StoredOutput {
  return {
    name,
    contentType: meta.contentType,
    ...(meta.durationS !== undefined ? { durationS: meta.durationS } : {}),
    bytes,
    etag,
    ...(meta.key ? { key: meta.key } : {}),
  };
}

/** Where output files live. put() makes a file visible whole or not at all, also while its job still runs (parts). */
export interface OutputStorage {
  /** Stores the local file `file` as output `name` of the job (under `key` when given) and describes it. */
  put(jobId: string, name: string, file: string, meta: OutputMeta): Promise<StoredOutput>;
  read(jobId: string, output: StoredOutput, range?: ByteRange): Readable;
  /** Deletes every file of the job (or, with `key`, the files under that key only). */
  remove(jobId: string, key?: string): Promise<void>;
  close(): Promise<void>;
}

/** A job handed to one worker until `leaseUntil`; `token` fences every write of that run. */
export interface Claim {
  jobId: string;
  token: string;
  attempt: number;
}

/** Hands queued jobs to workers on any machine; a job whose worker stops renewing its lease goes to another. */
export interface WorkQueue {
  /** The next job to run, leased to this worker, or undefined when none is waiting. */
  claim(workerId: string): Promise<Claim | undefined>;
  /** Renews the lease; false when the run lost it (expired and taken by another worker, or the job was cancelled). */
  heartbeat(claim: Claim): Promise<boolean>;
  /**
   * Gives a job back: without counting a crash (a worker stopping cleanly), or, with `lostRun`, counting the run as
   * lost (a dependency stayed down through the retry budget). False when the claim no longer held the job.
   */
  release(claim: Claim, reason: string, lostRun?: boolean): Promise<boolean>;
}

/** One job's event stream across nodes: numbered, durable when published, replayable after any id. */
export interface EventBus {
  subscribe(
    jobId: string,
    afterId: number,
    listener: (events: readonly StoredEvent[]) => void,
  ): Promise<{ stop(): void }>;
  history(jobId: string, afterId: number): Promise<StoredEvent[]>;
}
