// The client of the job service (spec/job-service-api.md), shared by the extension and the command line. Plain Node:
// no `vscode` import. Lenient with what the service sends, strict with what it sends to the service.
import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { ArticleAudioError, InvalidResponseError, JobFailedError, NotFoundError, ValidationError } from './errors';
import { downloadOutput } from './download';
import { DEFAULT_STALL_TIMEOUT_MS, DEFAULT_STREAM, followJob, type FollowDependencies } from './follow';
import { partsOf } from './parts';
import { HttpClient, type JsonAnswer } from './http';
import { Redactor } from './redact';
import { readAccepted, readJob } from './schemas';
import { OperationScope, resolvePolling } from './timing';
import {
  type ArticleRequest,
  type CallOptions,
  type CancelResult,
  type DownloadOptions,
  type DownloadResult,
  type FieldIssue,
  type FollowOptions,
  type Job,
  type JobAccepted,
  type JobEvent,
  type JobPart,
  type LogFunction,
  type OutputFile,
  type PollingOptions,
  type StreamOptions,
  type SubmitOptions,
  type WaitOptions,
} from './types';
import { checkSubmission, describeIssues } from '../protocol';

/**
 * Problems with a request, one per field (empty when valid), by the rules the engine applies (src/protocol). Absent
 * optional fields may be `undefined` or `null`.
 */
export function validateArticleRequest(request: unknown): FieldIssue[] {
  const checked = checkSubmission(withoutNulls(request));
  return checked.ok ? [] : checked.issues;
}

function withoutNulls(request: unknown): unknown {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) return request;
  return Object.fromEntries(Object.entries(request).filter(([, value]) => value !== null && value !== undefined));
}

export interface JobServiceClientOptions {
  /**
   * The service's base address; the spec's paths (/v1/...) are relative to it. A function is called before every
   * operation (and every reconnect or status check while following), so an address that changes (a local engine
   * restarted on another port) is found without making a new client.
   */
  baseUrl: string | (() => string | Promise<string>);
  /** The API key, or a function that reads it (called for every request, so a changed key takes effect at once). */
  apiKey: string | (() => Promise<string | undefined>);
  /** undici dispatcher, such as a ProxyAgent built from VS Code's proxy settings. */
  dispatcher?: Dispatcher;
  userAgent?: string;
  /** Limit for one request (until its whole answer is read; for a stream, until its headers). Default 20 s. */
  requestTimeoutMs?: number;
  /**
   * Retries after a timeout stop when another attempt would end later than this after the call began, so that a
   * service that is down is reported in time. Default 30 s.
   */
  timeoutRetryBudgetMs?: number;
  /** Retries of one request after a failure that may pass (connection, timeout, 408, 429, 5xx). Default 2. */
  maxRetries?: number;
  /** Longest Retry-After the client waits for; a longer one ends the call with the error. Default 60 s. */
  retryAfterCapMs?: number;
  /** Backoff between retries when the service gives no Retry-After. Default 500 ms doubling to 8 s. */
  retryBackoff?: { initialMs: number; maxMs: number };
  /** Status polling; the defaults follow the spec: 2-3 s first, doubled, capped at 30-60 s, jittered. */
  polling?: PollingOptions;
  stream?: StreamOptions;
  /**
   * Following a job stops (TimeoutError, code `job_stalled`) when its status and progress stay the same this long
   * while its service answers; an outage restarts the clock. Default 30 min.
   */
  stallTimeoutMs?: number;
  /** Receives the client's log lines, already redacted. */
  log?: LogFunction;
}

const DEFAULT_USER_AGENT = 'article-audio-client/0.1';

export class JobServiceClient {
  private readonly http: HttpClient;
  private readonly redactor = new Redactor();
  private readonly logLine: LogFunction;
  private readonly follow: FollowDependencies;
  private readonly requestTimeoutMs: number;

  constructor(options: JobServiceClientOptions) {
    const { apiKey } = options;
    if (typeof apiKey === 'string') this.redactor.add(apiKey);
    const readKey = typeof apiKey === 'function' ? apiKey : () => Promise.resolve(apiKey);
    const userLog = options.log;
    this.logLine = (level, message) => {
      if (!userLog) return;
      try {
        userLog(level, this.redactor.redact(message));
      } catch {
        // A failing logger must not break the client.
      }
    };
    this.requestTimeoutMs = positive(options.requestTimeoutMs, 20_000, 'requestTimeoutMs');
    const retryAfterCapMs = positive(options.retryAfterCapMs, 60_000, 'retryAfterCapMs');
    this.http = new HttpClient({
      base: options.baseUrl,
      dispatcher: options.dispatcher,
      userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
      requestTimeoutMs: this.requestTimeoutMs,
      timeoutRetryBudgetMs: positive(options.timeoutRetryBudgetMs, 30_000, 'timeoutRetryBudgetMs'),
      maxRetries: Math.max(0, Math.floor(options.maxRetries ?? 2)),
      retryAfterCapMs,
      retryBackoff: options.retryBackoff ?? { initialMs: 500, maxMs: 8000 },
      apiKey: readKey,
      redactor: this.redactor,
      log: this.logLine,
    });
    this.follow = {
      http: this.http,
      stallTimeoutMs: positive(options.stallTimeoutMs, DEFAULT_STALL_TIMEOUT_MS, 'stallTimeoutMs'),
      fetchJob: (id, scope) => this.fetchJob(id, scope),
      polling: resolvePolling(options.polling),
      stream: { ...DEFAULT_STREAM, ...definedOnly(options.stream) },
      requestTimeoutMs: this.requestTimeoutMs,
      retryAfterCapMs,
      log: this.logLine,
      redact: (text) => this.redactor.redactSecrets(text),
    };
  }

  /** The base address as last read: origin plus path prefix, without a trailing slash. */
  get baseUrl(): string {
    return this.http.base.href;
  }

  /** Problems with a request, one per field (empty when valid). */
  validateArticleRequest(request: unknown): FieldIssue[] {
    return validateArticleRequest(request);
  }

  /**
   * Submits an article-to-audio job (spec 4.1). Validates first (a ValidationError names the fields). Sends an
   * Idempotency-Key (generated unless given) so that retrying after a failure never creates a second job.
   */
  async submitArticle(request: ArticleRequest, options: SubmitOptions = {}): Promise<JobAccepted> {
    const checked = checkSubmission(withoutNulls(request));
    if (!checked.ok) {
      const { issues } = checked;
      throw new ValidationError(
        this.redactor.redact(`The article request is invalid: ${describeIssues(issues)}.`),
        issues.map((issue) => ({ field: issue.field, message: this.redactor.redact(issue.message) })),
        { code: 'invalid_request' },
      );
    }
    const key = options.idempotencyKey === undefined ? randomUUID() : options.idempotencyKey;
    if (key !== null && !/^[\x21-\x7e]{1,255}$/.test(key)) {
      throw new ValidationError(
        'The idempotency key must be 1 to 255 visible ASCII characters.',
        [{ field: 'idempotencyKey', message: 'must be 1 to 255 visible ASCII characters' }],
        { code: 'invalid_idempotency_key' },
      );
    }
    const operation = 'submitting the article';
    let url = '';
    const answer = await this.call(options, operation, (scope) =>
      this.http.callJson(
        {
          method: 'POST',
          url: (url = this.http.base.endpoint('/v1/article-to-audio')),
          operation,
          json: checked.submission,
          headers: key === null ? {} : { 'idempotency-key': key },
          idempotent: key !== null,
        },
        scope,
      ),
    );
    const accepted = readAccepted(answer.data) ?? acceptedFromLocation(answer);
    if (!accepted) {
      throw this.http.invalid(
        { operation, url },
        { statusCode: answer.status, headers: answer.headers },
        'the answer names no job_id',
      );
    }
    const resolve = (link: string | undefined, fallback: string) => {
      if (!link) return fallback;
      try {
        return this.http.base.resolve(link);
      } catch {
        return fallback;
      }
    };
    return {
      jobId: accepted.jobId,
      links: {
        self: resolve(accepted.self, this.http.base.jobUrl(accepted.jobId)),
        stream: resolve(accepted.stream, this.http.base.jobUrl(accepted.jobId, '/stream')),
      },
    };
  }

  /** The job's current state (spec 4.2). Unknown fields are ignored, missing optional ones stay unset. */
  getJob(id: string, options: CallOptions = {}): Promise<Job> {
    return this.call(options, `reading job ${id}`, (scope) => this.fetchJob(id, scope));
  }

  /**
   * Asks the service to cancel the job (POST /v1/jobs/<id>/cancel, an engine extension). `supported: false` when the
   * service has no such endpoint (404/405/501 there while the job itself exists).
   */
  cancelJob(id: string, options: CallOptions = {}): Promise<CancelResult> {
    const operation = `cancelling job ${id}`;
    return this.call(options, operation, async (scope) => {
      let answer: JsonAnswer;
      try {
        // Cancelling twice is the same as cancelling once, so the call may be retried.
        answer = await this.http.callJson(
          { method: 'POST', url: this.http.base.jobUrl(id, '/cancel'), operation, jobId: id, idempotent: true },
          scope,
        );
      } catch (error) {
        if (
          error instanceof ArticleAudioError &&
          (error instanceof NotFoundError || error.status === 405 || error.status === 501)
        ) {
          // Throws NotFoundError when the job itself is unknown.
          const job = await this.fetchJob(id, scope);
          this.logLine('info', `job ${id}: the service cannot cancel jobs (HTTP ${error.status})`);
          return { supported: false, job };
        }
        throw error;
      }
      const job = this.readJob(answer.data, id) ?? (await this.fetchJob(id, scope));
      return { supported: true, job };
    });
  }

  /**
   * Follows the job to its end: the event stream, reconnected with Last-Event-ID, falling back to polling with the
   * spec's backoff. Yields status, log, result and transport events, each at most once, then `end` with the final
   * job read from the status endpoint. Stops at `end` or a terminal status; rejects with TimeoutError at the deadline.
   */
  followJob(id: string, options: FollowOptions = {}): AsyncIterable<JobEvent> {
    return followJob(this.follow, id, options);
  }

  /**
   * The parts of the job's audio as the service announces them while the job runs, each once and in order, across
   * reconnects; ends when the job does. A service that does not make parts yields none.
   */
  followParts(id: string, options: FollowOptions = {}): AsyncIterable<JobPart> {
    return partsOf(this.followJob(id, options));
  }

  /** Follows the job and resolves with it when it succeeded; rejects with JobFailedError when it failed. */
  async waitForJob(id: string, options: WaitOptions = {}): Promise<Job> {
    let final: Job | undefined;
    for await (const event of this.followJob(id, options)) {
      options.onEvent?.(event);
      if (event.type === 'end') final = event.job;
    }
    if (!final) throw new InvalidResponseError(`Following job ${id} ended without its final state.`);
    if (final.status === 'failed') throw this.jobFailed(final);
    return final;
  }

  /**
   * Downloads an output file to `destinationPath` (through `<destinationPath>.part`, resumed with Range after a cut,
   * verified by length, renamed atomically). The API key is sent only to the service's own origin; only http(s)
   * addresses are fetched. The body is cut off past its announced size or the cap for its kind (from the OutputFile's
   * content type and duration when one is given), and past a deadline scaled to that size; nothing partial is kept.
   */
  downloadOutput(
    file: string | OutputFile,
    destinationPath: string,
    options: DownloadOptions = {},
  ): Promise<DownloadResult> {
    return downloadOutput(
      { http: this.http, requestTimeoutMs: this.requestTimeoutMs, log: this.logLine },
      file,
      destinationPath,
      options,
    );
  }

  /** `text` with the API key and anything shaped like a credential masked. */
  redact(text: string): string {
    return this.redactor.redact(text);
  }

  private jobFailed(job: Job): JobFailedError {
    const code = job.error?.code;
    const reason = job.error?.message ?? 'the service gave no reason';
    return new JobFailedError(
      this.redactor.redact(`Job ${job.id} failed${code ? ` (${code})` : ''}: ${reason.replace(/\.?\s*$/, '')}.`),
      job,
    );
  }

  /** A job from the service, with the API key masked in its error details should the service ever echo it. */
  private readJob(data: unknown, id: string): Job | undefined {
    const job = readJob(data, id, (reference) => this.http.base.resolve(reference));
    if (job?.error) {
      const { code, message, raw } = job.error;
      job.error = {};
      if (code !== undefined) job.error.code = this.redactor.redactSecrets(code);
      if (message !== undefined) job.error.message = this.redactor.redactSecrets(message);
      if (raw !== undefined) job.error.raw = this.redactor.redactSecretsIn(raw);
    }
    return job;
  }

  private async fetchJob(id: string, scope: OperationScope): Promise<Job> {
    if (!id) throw new ValidationError('A job id is required.', [{ field: 'id', message: 'is required' }]);
    const url = (await this.http.readBase()).jobUrl(id);
    const operation = `reading job ${id}`;
    const answer = await this.http.callJson({ method: 'GET', url, operation, jobId: id, idempotent: true }, scope);
    const job = this.readJob(answer.data, id);
    if (!job) {
      throw this.http.invalid(
        { operation, url },
        { statusCode: answer.status, headers: answer.headers },
        answer.data === undefined || answer.data === null ? 'the answer has no data' : 'the job has no status',
      );
    }
    return job;
  }

  private async call<T>(
    options: CallOptions,
    operation: string,
    body: (scope: OperationScope) => Promise<T>,
  ): Promise<T> {
    const scope = new OperationScope(options.signal, options.deadline, operation);
    scope.throwIfDone();
    await this.http.readBase();
    return body(scope);
  }
}

function acceptedFromLocation(answer: JsonAnswer): { jobId: string; self?: string; stream?: string } | undefined {
  const location = answer.headers.location;
  const value = Array.isArray(location) ? location[0] : location;
  const match = value ? /\/v1\/jobs\/([^/?#]+)\/?$/.exec(value) : null;
  return match?.[1] ? { jobId: decodeURIComponent(match[1]) } : undefined;
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!(value > 0)) throw new RangeError(`${name} must be a positive number of milliseconds (got ${value}).`);
  return value;
}

function definedOnly<T extends object>(value: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(value ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}
