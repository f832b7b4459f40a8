// One HTTP exchange with the service, and the retries around it. Only undici's `request` API is used (not fetch), so
// the extension bundle stays small (see esbuild.mjs). The API key is read per request, sent only to the service's own
// origin, and never written anywhere but the Authorization header.
import { request, type Dispatcher } from 'undici';
import {
  ArticleAudioError,
  AuthenticationError,
  abortReason,
  ConnectionError,
  InvalidResponseError,
  NotFoundError,
  RateLimitError,
  ServerError,
  TimeoutError,
  ValidationError,
  formatDuration,
  isCertificateProblem,
} from './errors';
import type { Redactor } from './redact';
import { fieldIssuesFrom, readEnvelope, readServiceErrors, type ServiceErrorEntry } from './schemas';
import { describeUrl, ServiceBase } from './service-url';
import { backoffDelay, parseRetryAfter, type OperationScope } from './timing';
import type { LogFunction } from './types';
import { describeIssues } from '../protocol';

export type Headers = Record<string, string | string[] | undefined>;

export interface HttpSettings {
  /** The base address, read again before each operation (a restarted local engine listens on another port). */
  base: string | (() => string | Promise<string>);
  dispatcher?: Dispatcher;
  userAgent: string;
  requestTimeoutMs: number;
  /**
   * A call that has waited out a timeout (no answer, or no connection) tries again only if the user still hears of
   * the failure within this time: a service that is down is reported in under 30 s (README, "service down"), and
   * whoever follows a job keeps trying in the background after that.
   */
  timeoutRetryBudgetMs: number;
  maxRetries: number;
  retryAfterCapMs: number;
  retryBackoff: { initialMs: number; maxMs: number };
  apiKey: () => Promise<string | undefined>;
  redactor: Redactor;
  /** Already redacting. */
  log: LogFunction;
}

export interface CallSpec {
  method: 'GET' | 'POST';
  url: string;
  /** What the call does, for messages: "submitting the article", "reading job 42". */
  operation: string;
  /** The job the call is about, so that a 404 can say "no job 42". */
  jobId?: string;
  json?: unknown;
  headers?: Record<string, string>;
  /** True when repeating the request cannot do harm even if the first one reached the service. */
  idempotent: boolean;
}

export interface JsonAnswer {
  status: number;
  headers: Headers;
  data: unknown;
  errors: unknown;
}

export interface OpenSpec {
  url: string;
  operation: string;
  jobId?: string;
  headers?: Record<string, string>;
  /** Limit for the answer's headers; the caller watches the body itself. */
  headersTimeoutMs: number;
  /** undici's limit between body chunks (0: none). */
  bodyTimeoutMs?: number;
}

const MAX_JSON_BYTES = 16 * 1024 * 1024;
const MAX_ERROR_BODY_BYTES = 64 * 1024;

const MAX_DETAIL_LENGTH = 300;

/** Connection failures that happen before a single byte of the request can have reached the service. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

const CONNECTION_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EADDRNOTAVAIL: 'address not available',
  UND_ERR_CONNECT_TIMEOUT: 'connecting timed out',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed while sending',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_SOCKET: 'the connection closed unexpectedly',
  UND_ERR_CLOSED: 'the connection closed unexpectedly',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'the answer was cut short',
};

function errorCode(error: unknown): string | undefined {
  const read = (value: unknown) =>
    typeof value === 'object' && value !== null && typeof (value as { code?: unknown }).code === 'string'
      ? (value as { code: string }).code
      : undefined;
  return read(error) ?? read((error as { cause?: unknown } | null)?.cause);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A failure that came from waiting out a limit: no answer in time, or no connection in time. */
function isTimeout(error: ArticleAudioError): boolean {
  return (error instanceof TimeoutError && error.kind === 'request') || error.code === 'UND_ERR_CONNECT_TIMEOUT';
}

/** STYLE.md: 408, 409 (a request with the same Idempotency-Key still in progress), 429 and 5xx may pass by themselves. */
function isRetryableStatus(status: number): boolean {
  return (
    status === 408 ||
    status === 409 ||
    status === 429 ||
    (status >= 500 && status <= 599 && status !== 501 && status !== 505)
  );
}

function firstHeader(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export class HttpClient {
  private current: { from: string; base: ServiceBase } | undefined;

  constructor(readonly settings: HttpSettings) {
    // A fixed address is checked at once, so a wrong one fails where the client is made.
    if (typeof settings.base === 'string') this.current = { from: settings.base, base: new ServiceBase(settings.base) };
  }

  /** The base address as last read (by `readBase`, which every operation calls first). */
  get base(): ServiceBase {
    if (!this.current) throw new Error('The job service address has not been read yet.');
    return this.current.base;
  }

  /** Reads the base address again; a changed one takes effect for this request and every later one. */
  async readBase(): Promise<ServiceBase> {
    const { base } = this.settings;
    if (typeof base === 'string') return this.base;
    const from = await base();
    if (this.current?.from !== from) this.current = { from, base: new ServiceBase(from) };
    return this.current.base;
  }

  /** Headers for one request; Authorization only when the URL is on the service's own origin. */
  async headersFor(url: string, extra: Record<string, string>, signal: AbortSignal): Promise<Record<string, string>> {
    const headers: Record<string, string> = { 'user-agent': this.settings.userAgent, ...extra };
    if (this.base.isOwnOrigin(url)) headers.authorization = `Bearer ${await this.apiKey(signal)}`;
    return headers;
  }

  private async apiKey(signal: AbortSignal): Promise<string> {
    let key: string | undefined;
    try {
      // A key store that never answers (a keyring waiting for a password) must not outlive the request's limits.
      key = await raceAbort(this.settings.apiKey(), signal);
    } catch (error) {
      if (signal.aborted) throw abortReason(signal);
      throw new AuthenticationError(
        this.settings.redactor.redact(`Could not read the API key (${errorText(error)}).`),
        { code: 'api_key_unavailable' },
      );
    }
    this.settings.redactor.add(key);
    const trimmed = key?.trim();
    if (!trimmed) {
      throw new AuthenticationError(`No API key is set for the job service at ${this.base.origin}.`, {
        code: 'missing_api_key',
      });
    }
    // A key with a line break would split the header (and undici would put the header's name in its message).
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(trimmed)) {
      throw new AuthenticationError(
        'The API key contains a line break or another control character, so it cannot be sent.',
        { code: 'malformed_api_key' },
      );
    }
    return trimmed;
  }

  /**
   * A JSON call with retries: connection failures, request timeouts, 408, 429 and 5xx are retried with backoff
   * (honouring Retry-After up to the cap) when the request is idempotent or certainly never reached the service.
   * A 2xx answer resolves; anything else rejects with the error its status calls for.
   */
  async callJson(spec: CallSpec, scope: OperationScope): Promise<JsonAnswer> {
    const body = spec.json === undefined ? undefined : JSON.stringify(spec.json);
    const started = Date.now();
    for (let attempt = 0; ; attempt++) {
      scope.throwIfDone();
      const attemptStarted = Date.now();
      const error = await this.attemptJson(spec, body, scope).then(
        (answer) => answer,
        (failure: unknown) => this.toClientError(failure, spec, scope),
      );
      if (!(error instanceof ArticleAudioError)) return error;
      let delay = this.retryDelay(error, spec.idempotent, attempt, scope);
      // Another attempt that times out would take as long as this one did.
      const now = Date.now();
      if (
        delay !== undefined &&
        isTimeout(error) &&
        now - started + delay + (now - attemptStarted) > this.settings.timeoutRetryBudgetMs
      )
        delay = undefined;
      if (delay === undefined) throw error;
      this.settings.log(
        'warn',
        `${spec.method} ${describeUrl(spec.url)} failed (${error.name}${error.status ? ` HTTP ${error.status}` : ''}); retry ${attempt + 1} of ${this.settings.maxRetries} in ${formatDuration(delay)}`,
      );
      await scope.sleep(delay);
    }
  }

  private async attemptJson(
    spec: CallSpec,
    body: string | undefined,
    scope: OperationScope,
  ): Promise<JsonAnswer | ArticleAudioError> {
    const timeoutMs = this.settings.requestTimeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([scope.signal, timeout]);
    const started = Date.now();
    try {
      const headers = await this.headersFor(
        spec.url,
        {
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...spec.headers,
        },
        signal,
      );
      const response = await request(spec.url, {
        method: spec.method,
        headers,
        body,
        signal,
        dispatcher: this.settings.dispatcher,
        // Our own timer bounds the whole exchange; undici's defaults (300 s) must not cut in first.
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      this.settings.log(
        'debug',
        `${spec.method} ${describeUrl(spec.url)} -> ${response.statusCode} (${Date.now() - started} ms)`,
      );
      if (response.statusCode < 200 || response.statusCode > 299) {
        return await this.errorFromResponse(response, spec);
      }
      const text = await readText(response.body, MAX_JSON_BYTES);
      return { status: response.statusCode, headers: response.headers, ...this.parseJson(text, response, spec) };
    } catch (error) {
      if (timeout.aborted && !scope.signal.aborted) throw this.requestTimeout(spec, timeoutMs);
      throw error;
    }
  }

  private parseJson(
    text: string | undefined,
    response: { statusCode: number; headers: Headers },
    spec: { operation: string; url: string },
  ): { data: unknown; errors: unknown } {
    if (text === undefined) {
      throw this.invalid(spec, response, `the answer is larger than ${MAX_JSON_BYTES / 1024 / 1024} MiB`);
    }
    if (text.trim() === '') return { data: undefined, errors: undefined };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      const type = firstHeader(response.headers, 'content-type') ?? 'no content type';
      const page = /html/i.test(type) ? '; it looks like a web page, not the job service' : '';
      throw this.invalid(spec, response, `the body is not valid JSON (${errorText(error)}; ${type}${page})`);
    }
    return readEnvelope(json);
  }

  invalid(
    spec: { operation: string; url: string },
    response: { statusCode: number; headers: Headers } | undefined,
    why: string,
  ): InvalidResponseError {
    return new InvalidResponseError(
      this.settings.redactor.redact(
        `The job service sent an answer the client cannot read while ${spec.operation}` +
          `${response ? ` (HTTP ${response.statusCode} from ${describeUrl(spec.url)})` : ''}: ${why}.`,
      ),
      {
        status: response?.statusCode,
        requestId: response
          ? this.settings.redactor.redact(requestIdOf(response.headers) ?? '') || undefined
          : undefined,
        code: 'invalid_response',
      },
    );
  }

  private requestTimeout(spec: { operation: string }, timeoutMs: number): TimeoutError {
    return new TimeoutError(
      `The job service did not answer within ${formatDuration(timeoutMs)} while ${spec.operation}.`,
      'request',
      timeoutMs,
    );
  }

  /**
   * One request without retries, for streams and downloads: resolves with any answer (the caller reads its status
   * and body); rejects with a client error when no answer came. The returned body stays tied to `signal`.
   */
  async open(
    spec: OpenSpec,
    signal: AbortSignal,
    scope: OperationScope,
    dispatcher: Dispatcher | undefined = this.settings.dispatcher,
  ): Promise<Dispatcher.ResponseData> {
    const started = Date.now();
    try {
      const headers = await this.headersFor(
        spec.url,
        spec.headers ?? {},
        AbortSignal.any([signal, AbortSignal.timeout(spec.headersTimeoutMs)]),
      ).catch((error: unknown) => {
        // A key store that never answers (a keyring waiting for a password) counts against the wait for headers.
        if (!signal.aborted && !(error instanceof ArticleAudioError))
          throw this.requestTimeout(spec, spec.headersTimeoutMs);
        throw error;
      });
      const response = await request(spec.url, {
        method: 'GET',
        headers,
        // The body outlives this call and stays tied to the caller's signal; undici bounds the wait for headers.
        signal,
        dispatcher,
        headersTimeout: spec.headersTimeoutMs,
        bodyTimeout: spec.bodyTimeoutMs ?? 0,
      });
      this.settings.log('debug', `GET ${describeUrl(spec.url)} -> ${response.statusCode} (${Date.now() - started} ms)`);
      // An abort while nobody reads the body must not become an uncaught 'error' event; readers still see the error.
      response.body.on('error', () => undefined);
      return response;
    } catch (error) {
      if (!signal.aborted && errorCode(error) === 'UND_ERR_HEADERS_TIMEOUT')
        throw this.requestTimeout(spec, spec.headersTimeoutMs);
      throw this.toClientError(error, spec, scope);
    }
  }

  /** The typed error for an answer with a non-2xx status. Reads (a bounded part of) the body. */
  async errorFromResponse(
    response: Dispatcher.ResponseData,
    spec: { operation: string; url: string; jobId?: string },
  ): Promise<ArticleAudioError> {
    const { statusCode: status, headers } = response;
    let entries: ServiceErrorEntry[] = [];
    let plain: string | undefined;
    try {
      const text = await readText(response.body, MAX_ERROR_BODY_BYTES);
      if (text?.trim()) {
        try {
          entries = readServiceErrors(readEnvelope(JSON.parse(text)).errors);
        } catch {
          const type = firstHeader(headers, 'content-type') ?? '';
          if (/^text\/plain/i.test(type)) plain = text.trim();
        }
      }
    } catch {
      // The status alone says enough.
    }
    return this.errorFromStatus(status, headers, spec, entries, plain);
  }

  /** The typed error for a non-2xx status, from what was read of the body (nothing, when the body is gone). */
  errorFromStatus(
    status: number,
    headers: Headers,
    spec: { operation: string; url: string; jobId?: string },
    entries: ServiceErrorEntry[] = [],
    plain?: string,
  ): ArticleAudioError {
    const redact = (text: string) => this.settings.redactor.redact(text);
    const primary = entries[0];
    const detailText = primary ? [primary.code, primary.message].filter(Boolean).join(': ') : plain;
    const detail = detailText ? `: ${redact(truncate(detailText, MAX_DETAIL_LENGTH))}` : '';
    const requestId = requestIdOf(headers);
    const details = {
      status,
      code: primary?.code === undefined ? undefined : redact(truncate(primary.code, 100)),
      requestId: requestId === undefined ? undefined : redact(truncate(requestId, 200)),
    };
    const retryAfterMs = parseRetryAfter(headers);
    const where = `while ${spec.operation}`;

    if (status === 401) {
      return new AuthenticationError(
        redact(`The job service rejected the API key ${where} (HTTP 401${detail}).`),
        details,
      );
    }
    if (status === 403) {
      return new AuthenticationError(redact(`The job service refused access ${where} (HTTP 403${detail}).`), details);
    }
    if (status === 400 || status === 413 || status === 422) {
      const fields = fieldIssuesFrom(entries).map((issue) => ({
        field: redact(issue.field),
        message: redact(truncate(issue.message, MAX_DETAIL_LENGTH)),
      }));
      const what =
        status === 413
          ? 'The request is too large for the job service'
          : `The job service did not accept the request ${where}`;
      const listed = fields.length > 0 ? `: ${describeIssues(fields)}` : detail;
      return new ValidationError(`${what} (HTTP ${status})${listed}.`, fields, details);
    }
    if (status === 404) {
      const message = spec.jobId
        ? `The job service does not know job ${spec.jobId} (HTTP 404${detail}).`
        : `The job service has nothing at ${describeUrl(spec.url)} (HTTP 404${detail}).`;
      return new NotFoundError(redact(message), details);
    }
    if (status === 408) {
      return new TimeoutError(
        redact(`The job service timed out ${where} (HTTP 408${detail}).`),
        'request',
        undefined,
        details,
      );
    }
    if (status === 429) {
      const when = retryAfterMs !== undefined ? ` It asked to wait ${formatDuration(retryAfterMs)}.` : '';
      return new RateLimitError(
        redact(`The job service is limiting requests (HTTP 429${detail}).${when}`),
        retryAfterMs,
        details,
      );
    }
    if (status >= 500) {
      const when = retryAfterMs !== undefined ? ` It asked to wait ${formatDuration(retryAfterMs)}.` : '';
      return new ServerError(
        redact(`The job service failed ${where} (HTTP ${status}${detail}).${when}`),
        retryAfterMs,
        details,
      );
    }
    if (status >= 300 && status < 400) {
      const location = firstHeader(headers, 'location');
      let target = '';
      try {
        if (location) target = ` to ${describeUrl(new URL(location, spec.url))}`;
      } catch {
        // An unreadable Location: the status still says what happened.
      }
      return new ArticleAudioError(redact(`The job service redirected ${spec.operation}${target} (HTTP ${status}).`), {
        ...details,
        code: details.code ?? 'redirect',
      });
    }
    return new ArticleAudioError(redact(`The job service answered HTTP ${status} ${where}${detail}.`), details);
  }

  /**
   * Any failure as a client error. Rethrows the scope's reason (the caller's abort, the deadline) as it is: those end
   * the operation and are never retried.
   */
  toClientError(error: unknown, spec: { operation: string; url: string }, scope: OperationScope): ArticleAudioError {
    if (scope.signal.aborted) throw scope.reason();
    if (error instanceof ArticleAudioError) return error;
    const code = errorCode(error);
    const origin = describeUrl(spec.url).replace(/^(\w+:\/\/[^/]+).*$/, '$1');
    const redact = (text: string) => this.settings.redactor.redact(text);
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      return new TimeoutError(`The job service stopped answering while ${spec.operation}.`, 'request', undefined, {
        code,
      });
    }
    if (isCertificateProblem(code)) {
      return new ConnectionError(
        `Could not make a secure connection to the job service at ${origin} while ${spec.operation} (certificate problem: ${code}).`,
        false,
        { code },
      );
    }
    const message = errorText(error);
    if (/proxy/i.test(message)) {
      return new ConnectionError(
        redact(`The proxy did not let the request through while ${spec.operation} (${truncate(message, 200)}).`),
        false,
        { code },
      );
    }
    const words = code ? CONNECTION_WORDS[code] : undefined;
    if (words || (code && /^E[A-Z]+$/.test(code))) {
      return new ConnectionError(
        redact(`Could not reach the job service at ${origin} while ${spec.operation} (${words ?? code}).`),
        !(code && NOT_SENT_CODES.has(code)),
        { code },
      );
    }
    return new ArticleAudioError(redact(`The request failed while ${spec.operation} (${truncate(message, 200)}).`), {
      code,
      cause: error,
    });
  }

  /** How long to wait before retrying after `error`, or undefined when it must not be retried. */
  retryDelay(
    error: ArticleAudioError,
    idempotent: boolean,
    attempt: number,
    scope: OperationScope,
  ): number | undefined {
    if (attempt >= this.settings.maxRetries) return undefined;
    let retryable: boolean;
    if (error instanceof ConnectionError) {
      retryable = idempotent || !error.mayHaveReachedService;
      // Certificate and proxy problems do not go away by themselves.
      if (isCertificateProblem(error.code)) retryable = false;
    } else if (error instanceof TimeoutError) {
      retryable = error.kind === 'request' && idempotent;
    } else if (error.status !== undefined) {
      retryable = isRetryableStatus(error.status) && idempotent;
    } else {
      retryable = false;
    }
    if (!retryable) return undefined;
    const hinted = error instanceof RateLimitError || error instanceof ServerError ? error.retryAfterMs : undefined;
    // A service that asks for a longer wait than the cap gets an error the caller can show ("try again in 1 h"),
    // rather than a client that hangs.
    if (hinted !== undefined && hinted > this.settings.retryAfterCapMs) return undefined;
    const delay =
      hinted ?? backoffDelay(attempt, this.settings.retryBackoff.initialMs, this.settings.retryBackoff.maxMs);
    if (delay >= scope.remainingMs()) return undefined;
    return delay;
  }
}

export function requestIdOf(headers: Headers | undefined): string | undefined {
  if (!headers) return undefined;
  return firstHeader(headers, 'x-request-id') ?? firstHeader(headers, 'request-id');
}

function truncate(text: string, max: number): string {
  const single = text.replace(/\s+/g, ' ').trim();
  return single.length > max ? `${single.slice(0, max - 1)}…` : single;
}

/** The body as text, or undefined (and the body destroyed) when it exceeds `maxBytes`. */
export async function readText(body: Dispatcher.ResponseData['body'], maxBytes: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      discard(body);
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Closes a body that will not be read, without the 'error' event undici emits for an unread body. */
export function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** The promise's outcome, or the signal's reason as soon as it aborts. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  /* eslint-disable @typescript-eslint/prefer-promise-reject-errors -- rejects with the signal's reason, as Node's APIs do */
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
  /* eslint-enable @typescript-eslint/prefer-promise-reject-errors */
}
