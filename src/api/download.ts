// Downloads an output file to disk, so that nothing depends on a link that may expire: streamed to `<dest>.part`,
// checked against the announced length, then renamed into place in one step. undici does the HTTP work: its redirect
// interceptor follows up to five redirects and drops Authorization, Cookie and Proxy-Authorization when a hop leaves
// the origin (redirect-handler.js, cleanRequestHeaders); its retry interceptor resumes a cut body with Range and
// If-Match on the first answer's strong ETag, and refuses a resumed answer that does not fit (another ETag, a 200,
// a wrong Content-Range). What is left here: which failures to retry and how long to wait (the client's one retry
// policy, HttpClient.retryDelay), starting over once when a resume is refused, the file, and the limits: a body is
// read only up to the size the service announced (Content-Length) and the cap for its kind of output
// (download-limits.ts), within a deadline scaled to that size; past either the download stops, the .part file is
// deleted, and the error says what happened (issue 23: an endless body must not fill the disk).
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { getGlobalDispatcher, interceptors, type Dispatcher, type RetryHandler } from 'undici';
import { downloadDeadlineMs, downloadLimitFor, formatBytes } from './download-limits';
import { ArticleAudioError, ConnectionError, InvalidResponseError, TimeoutError, formatDuration } from './errors';
import type { HttpClient } from './http';
import { describeUrl } from './service-url';
import { OperationScope } from './timing';
import type { DownloadOptions, DownloadResult, LogFunction, OutputFile } from './types';

const MAX_REDIRECTS = 5;
/** Resumes that each made progress still end somewhere. */
const MAX_ATTEMPTS = 20;
/** A resume the service refused (the file changed, no Range support): the whole file is fetched again, once. */
const MAX_RESTARTS = 1;

export interface DownloadDependencies {
  http: HttpClient;
  requestTimeoutMs: number;
  log: LogFunction;
}

/** What undici's retry handler passes to the retry decision and, when it gives up, to the reader of the body. */
interface RetryFailure extends Error {
  code?: string;
  statusCode?: number;
  headers?: Record<string, string | string[] | undefined>;
}

function header(headers: Dispatcher.ResponseData['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** undici's RequestRetryError for a status it may retry ("Request failed"), as opposed to a resume it refused. */
function isStatusFailure(error: RetryFailure): boolean {
  return error.code === 'UND_ERR_REQ_RETRY' && error.message === 'Request failed' && error.statusCode !== undefined;
}

/** A resume that cannot go on: undici found the answer does not fit, or If-Match failed (412) or the range did (416). */
function isRefusedResume(error: unknown): boolean {
  const failure = error as RetryFailure | null;
  if (failure?.code !== 'UND_ERR_REQ_RETRY') return false;
  return !isStatusFailure(failure) || failure.statusCode === 412 || failure.statusCode === 416;
}

function isFileError(error: unknown): error is NodeJS.ErrnoException {
  return typeof error === 'object' && error !== null && typeof (error as NodeJS.ErrnoException).path === 'string';
}

function fileError(error: NodeJS.ErrnoException, file: string): ArticleAudioError {
  return new ArticleAudioError(
    `Could not write ${file} (${error.code ?? 'error'}: ${error.message.replace(/^\w+: /, '').replace(/, \w+ '.*'$/, '')}).`,
    { code: error.code, cause: error },
  );
}

/** The scheme of an address, for messages ("javascript:"), bounded: the rest of it is not shown. */
function schemeOf(url: string): string {
  const match = /^\s*([a-z][a-z0-9+.-]{0,30}):/i.exec(url);
  return match ? `${match[1]!.toLowerCase()}:` : 'no scheme';
}

export async function downloadOutput(
  deps: DownloadDependencies,
  file: string | OutputFile,
  destination: string,
  options: DownloadOptions = {},
): Promise<DownloadResult> {
  const { http } = deps;
  const url = typeof file === 'string' ? file : file.url;
  // Only http(s) is ever requested: a `javascript:`, `data:` or `file:` address from the service is refused by its
  // scheme alone, before it is resolved or shown (undici would read a `data:` URL without the network).
  const scheme = schemeOf(url);
  if (scheme !== 'no scheme' && scheme !== 'http:' && scheme !== 'https:') {
    throw new InvalidResponseError(
      `The service gave an output address with the scheme "${scheme}"; only http:// and https:// addresses are downloaded, so it was refused.`,
      { code: 'unsupported_url' },
    );
  }
  const target = (await http.readBase()).resolve(url);
  const operation = `downloading ${describeUrl(target)}`;
  const spec = { operation, url: target };
  const protocol = new URL(target).protocol;
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new InvalidResponseError(
      `The service gave an output address with the scheme "${protocol}"; only http:// and https:// addresses are downloaded, so it was refused.`,
      { code: 'unsupported_url' },
    );
  }
  const limit = downloadLimitFor(typeof file === 'string' ? { url: target } : { ...file, url: target });
  const maxBytes = options.maxBytes ?? limit.maxBytes;
  const basis = options.maxBytes === undefined ? limit.basis : (options.maxBytesBasis ?? 'the limit the caller set');
  // The overall time limit, scaled to the most this download may bring; tightened once the size is announced.
  const started = Date.now();
  const limits = new AbortController();
  let limitTimer: NodeJS.Timeout | undefined;
  const allowTime = (bytes: number) => {
    const allowedMs = downloadDeadlineMs(bytes);
    if (limitTimer) clearTimeout(limitTimer);
    limitTimer = setTimeout(
      () =>
        limits.abort(
          new TimeoutError(
            `The download of ${describeUrl(target)} was stopped after ${formatDuration(allowedMs)} with ${formatBytes(received)} received: ` +
              `too slow for a file of at most ${formatBytes(bytes)}; nothing was kept.`,
            'deadline',
            allowedMs,
            { code: 'download_too_slow' },
          ),
        ),
      Math.max(0, started + allowedMs - Date.now()),
    );
  };
  const tooLarge = (what: string) =>
    new InvalidResponseError(
      `The download of ${describeUrl(target)} was stopped: ${what} more than the ${formatBytes(maxBytes)} allowed ` +
        `(${basis}); nothing was kept.`,
      { code: 'download_too_large' },
    );
  let refused: InvalidResponseError | undefined;
  const signals = [options.signal, limits.signal].filter((signal): signal is AbortSignal => !!signal);
  const scope = new OperationScope(AbortSignal.any(signals), options.deadline, operation);
  const part = `${destination}.part`;
  let received = 0;
  let total: number | undefined;
  let contentType: string | undefined;
  const report = (bytes: number) => {
    try {
      options.onProgress?.(bytes, total);
    } catch (error) {
      deps.log(
        'warn',
        `a download progress listener failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  };

  // The client's retry policy, asked by undici's retry handler before each retry: failures in a row without a new
  // byte count as the attempt number, so a slow but moving download is not given up.
  let attempts = 0;
  let stalled = 0;
  let receivedAtLastFailure = 0;
  const decide: RetryHandler.RetryCallback = (cause, _context, callback) => {
    const error = cause as RetryFailure;
    attempts++;
    stalled = received > receivedAtLastFailure ? 0 : stalled + 1;
    receivedAtLastFailure = received;
    if (refused || scope.signal.aborted || isRefusedResume(error) || attempts >= MAX_ATTEMPTS) {
      callback(error);
      return;
    }
    let failure: ArticleAudioError;
    try {
      failure = isStatusFailure(error)
        ? http.errorFromStatus(error.statusCode!, error.headers ?? {}, spec)
        : http.toClientError(error, spec, scope);
    } catch {
      callback(error);
      return;
    }
    const delay = http.retryDelay(failure, true, Math.max(0, stalled - 1), scope);
    if (delay === undefined) {
      callback(error);
      return;
    }
    deps.log('warn', `${operation} failed (${failure.message}); resuming after ${received} bytes in ${delay} ms`);
    scope.sleep(delay).then(
      () => callback(null),
      () => callback(error),
    );
  };
  const dispatcher = (http.settings.dispatcher ?? getGlobalDispatcher()).compose(
    interceptors.redirect({ maxRedirections: MAX_REDIRECTS }),
    // Outermost, so that a resume follows the redirects again (and drops Authorization again when they leave).
    interceptors.retry({
      // The decision is `decide`; these only let every failure reach it.
      maxRetries: Number.MAX_SAFE_INTEGER,
      methods: ['GET'],
      statusCodes: [408, 409, 429, ...Array.from({ length: 100 }, (_, i) => 500 + i)],
      throwOnError: false,
      retry: decide,
    }),
  );

  allowTime(maxBytes);
  try {
    try {
      await mkdir(path.dirname(destination), { recursive: true });
      // A leftover from an earlier run has no validator to resume it safely with: start clean.
      await rm(part, { force: true });
    } catch (error) {
      throw isFileError(error) ? fileError(error, destination) : error;
    }
    for (let restarts = 0; ; restarts++) {
      scope.throwIfDone();
      received = 0;
      receivedAtLastFailure = 0;
      const failure = await fetchInto(part, dispatcher).catch((error: unknown) => error as Error);
      if (failure === undefined) break;
      if (refused) throw refused;
      if (scope.signal.aborted) throw scope.reason();
      if (isFileError(failure)) throw fileError(failure, part);
      if (!isRefusedResume(failure)) throw failure;
      const why = failure.message;
      if (restarts >= MAX_RESTARTS) {
        throw new ConnectionError(`The service could not resume ${operation} (${why}).`, true, {
          code: 'resume_refused',
        });
      }
      deps.log('info', `${operation}: the resume was refused (${why}); downloading the file whole again`);
    }

    const written = await sizeOf(part);
    if (total !== undefined && written !== total) {
      throw new ConnectionError(
        `The download of ${describeUrl(target)} ended after ${written} of ${total} bytes.`,
        true,
        { code: 'incomplete_download' },
      );
    }
    try {
      await rename(part, destination);
    } catch (error) {
      throw isFileError(error) ? fileError(error, destination) : error;
    }
    const result: DownloadResult = { path: destination, bytes: written };
    if (contentType !== undefined) result.contentType = contentType;
    return result;
  } catch (error) {
    await rm(part, { force: true }).catch(() => undefined);
    if (error instanceof ArticleAudioError && error.code === 'download_too_large')
      deps.log('warn', `${operation}: ${error.message}`);
    throw error;
  } finally {
    clearTimeout(limitTimer);
  }

  /** One GET through the interceptors, written to `file` from its start. Rejects with what to do next. */
  async function fetchInto(file: string, through: Dispatcher): Promise<void> {
    const response = await http
      .open(
        {
          ...spec,
          headers: { accept: '*/*', 'accept-encoding': 'identity' },
          headersTimeoutMs: deps.requestTimeoutMs,
          bodyTimeoutMs: deps.requestTimeoutMs,
        },
        scope.signal,
        scope,
        through,
      )
      .catch((error: unknown) => {
        throw isRefusedResume((error as { cause?: unknown }).cause) ? (error as { cause: unknown }).cause : error;
      });
    if (response.statusCode !== 200 && response.statusCode !== 206) {
      throw await http.errorFromResponse(response, spec);
    }
    const range = /^bytes (\d+)-\d+\/(\d+)$/.exec(header(response.headers, 'content-range') ?? '');
    const length = Number(header(response.headers, 'content-length'));
    if (response.statusCode === 206 && range?.[1] !== '0') {
      response.body.destroy();
      throw new ConnectionError(`The service answered ${operation} with a part that does not start at byte 0.`, true, {
        code: 'bad_range',
      });
    }
    total = range ? Number(range[2]) : Number.isSafeInteger(length) && length >= 0 ? length : undefined;
    contentType = header(response.headers, 'content-type');
    if (total !== undefined && total > maxBytes) {
      response.body.destroy();
      throw (refused = tooLarge(`the service announced ${formatBytes(total)},`));
    }
    if (total !== undefined) allowTime(total);
    const sink = createWriteStream(file, { flags: 'w' });
    try {
      await pipeline(
        response.body,
        async function* (source: AsyncIterable<Buffer>) {
          for await (const chunk of source) {
            received += chunk.length;
            if (received > maxBytes) throw (refused = tooLarge('the service sent'));
            report(received);
            yield chunk;
          }
        },
        sink,
      );
    } catch (error) {
      // pipeline settles as soon as the body fails, not when the file is closed: a file still being opened then would
      // be created after the caller removed it (a .part left behind by a cancelled download; seen under load).
      if (!sink.closed) await new Promise<void>((resolve) => sink.destroy().once('close', () => resolve()));
      if (refused) throw refused;
      if (scope.signal.aborted) throw scope.reason();
      if (isFileError(error) || isRefusedResume(error)) throw error;
      const failure = error as RetryFailure;
      throw isStatusFailure(failure)
        ? http.errorFromStatus(failure.statusCode!, failure.headers ?? {}, spec)
        : http.toClientError(error, spec, scope);
    }
  }
}

async function sizeOf(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch {
    return 0;
  }
}
