// The engine's settings with their defaults (DESIGN.md "Limits"). Every limit is a setting: startEngine takes them
// as options, `article-audio serve` and dist/engine.js as flags or environment variables (settings.ts).
import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { Logger } from './logger';
import type { ArticlePipeline, FetchLimits } from '../../speech/types';
import type { JobStore, OutputStorage } from './job-store';

export interface EngineOptions {
  /** Interface to listen on; 127.0.0.1 by default (the engine is for this machine unless told otherwise). */
  host?: string;
  /** 0 picks a free port. Default 0. */
  port?: number;
  dataDir: string;
  tokens: string[];
  /** Jobs processed at once. Default: the number of CPU cores. */
  concurrency?: number;
  /** Jobs that may wait for a slot before submissions get 429. Default 100. */
  queueDepth?: number;
  /** How long a finished job and its files are kept. Default 24 h. */
  retentionMs?: number;
  /** Interval of the stream's comment heartbeat. Default 15 s. */
  heartbeatMs?: number;
  /** Largest request body accepted. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Limits of fetching articles and intro/outro audio. Default 10 MiB, 20 s, 5 redirects. */
  fetchLimits?: Partial<FetchLimits>;
  /** Default: the speech pipeline. The engine closes it when it stops. */
  pipeline?: ArticlePipeline;
  log?: Logger;
  /** Shortest interval between two progress events of a job. Default 250 ms. */
  progressIntervalMs?: number;
  /** How long an Idempotency-Key refers to its job. Default 24 h. */
  idempotencyWindowMs?: number;
  /** Runs of a job lost to engine crashes before it fails with `interrupted`. Default 3. */
  maxCrashes?: number;
  /** How long a clean stop waits for running pipelines to give up. Default 10 s. */
  stopTimeoutMs?: number;
  /** How long to wait for another engine to release the data dir (a restart right after a stop). Default 10 s. */
  lockWaitMs?: number;
  /** Reconnection delay suggested to stream clients (`retry:`). Default 2 s. */
  streamRetryMs?: number;
  /**
   * Base of absolute addresses in responses (output URLs), e.g. `https://audio.example.com` when clients reach the
   * engine through a proxy. Default: the address the engine listens on. Never taken from the request's Host header,
   * which any client can set.
   */
  publicUrl?: string;
  /**
   * Whether articles and intro/outro audio may be fetched from loopback, private, link-local and other non-public
   * addresses. Default true here (one person's engine: the extension's, `convert`'s); `article-audio serve` defaults
   * to false, because a shared service must not let its clients read its own network.
   */
  allowPrivateNetwork?: boolean;
  /** Host names that may be fetched even when they resolve to private addresses (a team's intranet). Default none. */
  fetchAllowedHosts?: string[];
  /**
   * Open connections at once; beyond it the longest-idle connection without a request in progress is closed.
   * Default: half the process's file descriptor limit (the other half is for jobs' files), at most 1024.
   */
  maxConnections?: number;
  /** How long a connection may stay open without sending a request. Default 10 s. */
  idleSocketTimeoutMs?: number;
  /**
   * Submissions per minute per token (a token bucket that holds as many). 0: no limit. Default 0 here (one person's
   * engine); `article-audio serve` defaults to 60.
   */
  tokenSubmitRate?: number;
  /**
   * Jobs one token may have waiting. Default: queueDepth. Whatever it is, a token that has fewer waiting jobs than
   * its fair share (queueDepth / number of tokens) is admitted even when other tokens filled the queue.
   */
  tokenQueueDepth?: number;
  /**
   * Unfinished jobs (queued or processing) one token may have at once; beyond it 429 `too_many_jobs` until one
   * finishes. 0: no limit. Default 0 here (one person's engine); `article-audio serve` and team API nodes 20.
   */
  tokenMaxJobs?: number;
  /** Bytes of finished outputs one token may keep in the data dir; beyond it 429 until some expire. 0: no limit. Default 0 here; serve 2 GiB. */
  tokenStorageBytes?: number;
  /** Free space the data dir's disk must keep; below it submissions get 507. Default 0 here; serve 256 MiB. */
  minFreeDiskBytes?: number;
  /** Where jobs are kept. Default: files in dataDir. */
  store?: JobStore & OutputStorage;
}

export const DEFAULT_FETCH_LIMITS: FetchLimits = { maxBytes: 10 * 1024 * 1024, timeoutMs: 20_000, maxRedirects: 5 };

export type ResolvedOptions = Required<Omit<EngineOptions, 'pipeline' | 'store' | 'publicUrl' | 'fetchLimits'>> &
  Pick<EngineOptions, 'pipeline' | 'store' | 'publicUrl'> & { fetchLimits: Required<FetchLimits> };

export function resolveOptions(options: EngineOptions): ResolvedOptions {
  const queueDepth = options.queueDepth ?? 100;
  const allowPrivateNetwork = options.allowPrivateNetwork ?? options.fetchLimits?.allowPrivateNetwork ?? true;
  const resolved: ResolvedOptions = {
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    dataDir: options.dataDir,
    tokens: options.tokens,
    concurrency: options.concurrency ?? os.availableParallelism(),
    queueDepth,
    retentionMs: options.retentionMs ?? 24 * 3600_000,
    heartbeatMs: options.heartbeatMs ?? 15_000,
    maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
    fetchLimits: {
      ...DEFAULT_FETCH_LIMITS,
      ...options.fetchLimits,
      allowPrivateNetwork,
      allowedHosts: options.fetchAllowedHosts ?? options.fetchLimits?.allowedHosts ?? [],
    },
    allowPrivateNetwork,
    fetchAllowedHosts: options.fetchAllowedHosts ?? [],
    maxConnections: options.maxConnections ?? defaultMaxConnections(),
    idleSocketTimeoutMs: options.idleSocketTimeoutMs ?? 10_000,
    tokenSubmitRate: options.tokenSubmitRate ?? 0,
    tokenQueueDepth: options.tokenQueueDepth ?? Math.max(1, queueDepth),
    tokenMaxJobs: options.tokenMaxJobs ?? 0,
    tokenStorageBytes: options.tokenStorageBytes ?? 0,
    minFreeDiskBytes: options.minFreeDiskBytes ?? 0,
    log: options.log ?? (() => undefined),
    progressIntervalMs: options.progressIntervalMs ?? 250,
    idempotencyWindowMs: options.idempotencyWindowMs ?? 24 * 3600_000,
    maxCrashes: options.maxCrashes ?? 3,
    stopTimeoutMs: options.stopTimeoutMs ?? 10_000,
    streamRetryMs: options.streamRetryMs ?? 2000,
    lockWaitMs: options.lockWaitMs ?? 10_000,
    pipeline: options.pipeline,
    store: options.store,
    publicUrl: options.publicUrl?.replace(/\/+$/, ''),
  };
  const problems: string[] = [];
  if (typeof resolved.dataDir !== 'string' || resolved.dataDir === '') problems.push('dataDir is required');
  if (!Number.isInteger(resolved.port) || resolved.port < 0 || resolved.port > 65535)
    problems.push('port must be 0..65535');
  for (const [name, value, min] of [
    ['concurrency', resolved.concurrency, 1],
    ['queueDepth', resolved.queueDepth, 0],
    ['maxBodyBytes', resolved.maxBodyBytes, 1],
    ['maxCrashes', resolved.maxCrashes, 0],
    ['fetchLimits.maxBytes', resolved.fetchLimits.maxBytes, 1],
    ['fetchLimits.maxRedirects', resolved.fetchLimits.maxRedirects, 0],
    ['maxConnections', resolved.maxConnections, 1],
    ['tokenSubmitRate', resolved.tokenSubmitRate, 0],
    ['tokenQueueDepth', resolved.tokenQueueDepth, 1],
    ['tokenMaxJobs', resolved.tokenMaxJobs, 0],
    ['tokenStorageBytes', resolved.tokenStorageBytes, 0],
    ['minFreeDiskBytes', resolved.minFreeDiskBytes, 0],
  ] as const) {
    if (!Number.isInteger(value) || value < min) problems.push(`${name} must be an integer >= ${min}`);
  }
  for (const [name, value] of [
    ['retentionMs', resolved.retentionMs],
    ['heartbeatMs', resolved.heartbeatMs],
    ['progressIntervalMs', resolved.progressIntervalMs],
    ['idempotencyWindowMs', resolved.idempotencyWindowMs],
    ['stopTimeoutMs', resolved.stopTimeoutMs],
    ['streamRetryMs', resolved.streamRetryMs],
    ['lockWaitMs', resolved.lockWaitMs],
    ['idleSocketTimeoutMs', resolved.idleSocketTimeoutMs],
    ['fetchLimits.timeoutMs', resolved.fetchLimits.timeoutMs],
  ] as const) {
    if (!Number.isFinite(value) || value <= 0) problems.push(`${name} must be a positive number of milliseconds`);
  }
  if (resolved.publicUrl !== undefined && !/^https?:\/\/[^/]+$/.test(resolved.publicUrl))
    problems.push('publicUrl must be http(s)://host[:port]');
  if (problems.length > 0) throw new Error(`Invalid engine settings: ${problems.join('; ')}.`);
  return resolved;
}

/** Half the soft limit of open files (Linux: /proc/self/limits), at most 1024; 1024 where it cannot be read. */
export function defaultMaxConnections(): number {
  try {
    const limits = readFileSync('/proc/self/limits', 'utf8');
    const soft = Number(/^Max open files\s+(\d+)/m.exec(limits)?.[1]);
    if (Number.isFinite(soft) && soft > 0) return Math.max(16, Math.min(1024, Math.floor(soft / 2)));
  } catch {
    // Not Linux.
  }
  return 1024;
}
