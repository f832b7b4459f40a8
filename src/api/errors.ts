// Every failure of the client is one of these classes, chosen by what happened (as openai-node's `APIError.generate`
// chooses by status). Each message says what happened and what the user can do about it, in product-neutral words;
// messages are redacted before they are built, so neither `message` nor `stack` can carry the API key.
import type { FieldIssue, Job, JobErrorDetails } from './types';

export interface ErrorDetails {
  status?: number;
  code?: string;
  requestId?: string;
  cause?: unknown;
}

/** Base class of every error the client throws (except an abort, which rejects with the signal's reason). */
export class ArticleAudioError extends Error {
  static {
    // Set on the prototype (not in the constructor) so that the stack's first line names the class, and so that
    // minified bundles, which rename classes, keep the names.
    this.prototype.name = 'ArticleAudioError';
  }
  /** HTTP status of the answer that caused this error, when there was one. */
  readonly status?: number;
  /** The service's error code (`validation_failed`, `not_found`, …) or the client's own (`missing_api_key`). */
  readonly code?: string;
  /** The service's request id (`x-request-id`), to quote when reporting a problem. */
  readonly requestId?: string;

  constructor(message: string, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    if (details.status !== undefined) this.status = details.status;
    if (details.code !== undefined) this.code = details.code;
    if (details.requestId !== undefined) this.requestId = details.requestId;
  }
}

/** The API key is missing, malformed, rejected (401) or not allowed to do this (403). */
export class AuthenticationError extends ArticleAudioError {
  static {
    this.prototype.name = 'AuthenticationError';
  }
}

/** The request is invalid: found by the client before sending, or answered with 400, 413 or 422. */
export class ValidationError extends ArticleAudioError {
  static {
    this.prototype.name = 'ValidationError';
  }
  readonly fields: FieldIssue[];
  constructor(message: string, fields: FieldIssue[], details: ErrorDetails = {}) {
    super(message, details);
    this.fields = fields;
  }
}

/** The job (or the endpoint) does not exist: 404. */
export class NotFoundError extends ArticleAudioError {
  static {
    this.prototype.name = 'NotFoundError';
  }
}

/** The service is limiting requests (429). `retryAfterMs` is when to try again, when the service said. */
export class RateLimitError extends ArticleAudioError {
  static {
    this.prototype.name = 'RateLimitError';
  }
  readonly retryAfterMs?: number;
  constructor(message: string, retryAfterMs: number | undefined, details: ErrorDetails = {}) {
    super(message, details);
    if (retryAfterMs !== undefined) this.retryAfterMs = retryAfterMs;
  }
}

/** The service failed (5xx). `retryAfterMs` is set when it said when to try again (503 with Retry-After). */
export class ServerError extends ArticleAudioError {
  static {
    this.prototype.name = 'ServerError';
  }
  readonly retryAfterMs?: number;
  constructor(message: string, retryAfterMs: number | undefined, details: ErrorDetails = {}) {
    super(message, details);
    if (retryAfterMs !== undefined) this.retryAfterMs = retryAfterMs;
  }
}

/** The service could not be reached, or the connection broke. */
export class ConnectionError extends ArticleAudioError {
  static {
    this.prototype.name = 'ConnectionError';
  }
  /**
   * False when the request certainly never reached the service (connection refused, name not found), so that even
   * a submission without an idempotency key can be retried.
   */
  readonly mayHaveReachedService: boolean;
  constructor(message: string, mayHaveReachedService: boolean, details: ErrorDetails = {}) {
    super(message, details);
    this.mayHaveReachedService = mayHaveReachedService;
  }
}

export type TimeoutKind = 'request' | 'deadline' | 'idle';

/**
 * A time limit passed: `request` (the service did not answer one request in time, or answered 408), `deadline` (the
 * caller's deadline for the whole operation), `idle` (a stream sent nothing for too long).
 */
export class TimeoutError extends ArticleAudioError {
  static {
    this.prototype.name = 'TimeoutError';
  }
  readonly kind: TimeoutKind;
  readonly timeoutMs?: number;
  constructor(message: string, kind: TimeoutKind, timeoutMs?: number, details: ErrorDetails = {}) {
    super(message, details);
    this.kind = kind;
    if (timeoutMs !== undefined) this.timeoutMs = timeoutMs;
  }
}

/** The job reached the state `failed`. `jobError` holds the service's details. */
export class JobFailedError extends ArticleAudioError {
  static {
    this.prototype.name = 'JobFailedError';
  }
  readonly job: Job;
  readonly jobError: JobErrorDetails;
  constructor(message: string, job: Job, details: ErrorDetails = {}) {
    super(message, { code: job.error?.code, ...details });
    this.job = job;
    this.jobError = job.error ?? {};
  }
}

/** The service answered something the client cannot read: not JSON, cut short, or missing what the spec requires. */
export class InvalidResponseError extends ArticleAudioError {
  static {
    this.prototype.name = 'InvalidResponseError';
  }
}

/** The error an aborted signal rejects with when the signal has no reason of its own. */
export function abortReason(signal: AbortSignal): unknown {
  if (signal.reason !== undefined) return signal.reason;
  const error = new Error('The operation was aborted.');
  error.name = 'AbortError';
  return error;
}

/** Whether a connection error code is a TLS certificate problem (it does not pass by itself). */
export function isCertificateProblem(code: string | undefined): boolean {
  return !!code && /^(ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|ERR_SSL|HOSTNAME_MISMATCH)/.test(code);
}

/** "2 min 5 s", "1.5 s", "300 ms": durations in messages. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return 'an unknown time';
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) {
    const seconds = Math.round(ms / 100) / 10;
    return `${seconds % 1 === 0 ? seconds.toFixed(0) : seconds.toFixed(1)} s`;
  }
  const totalSeconds = Math.round(ms / 1000);
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  if (hours > 0) return `${hours} h${minutes ? ` ${minutes} min` : ''}`;
  return `${minutes} min${seconds ? ` ${seconds} s` : ''}`;
}
