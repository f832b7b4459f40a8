// Downloads an output file to disk, so that nothing depends on a link that may expire: streamed to `<dest>.part`,
// resumed with Range (and If-Range, so a file that changed meanwhile is fetched whole again) after a cut, checked
// against the announced length, then renamed into place in one step. Redirects are followed by hand so that the
// Authorization header never leaves the service's origin.
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat, truncate } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Dispatcher } from 'undici';
import { ArticleAudioError, ConnectionError } from './errors';
import { discard, type HttpClient } from './http';
import { describeUrl } from './service-url';
import { OperationScope, linkAbort } from './timing';
import type { DownloadOptions, DownloadResult, LogFunction } from './types';

const MAX_REDIRECTS = 5;
/** Attempts that each made progress still end somewhere. */
const MAX_ATTEMPTS = 20;

export interface DownloadDependencies {
  http: HttpClient;
  requestTimeoutMs: number;
  log: LogFunction;
}

function header(headers: Dispatcher.ResponseData['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** `bytes 100-199/1000` -> {start: 100, end: 199, total: 1000}; with a star for the range (416) -> {total: 1000}. */
export function parseContentRange(
  value: string | undefined,
): { start?: number; end?: number; total?: number } | undefined {
  if (!value) return undefined;
  const match = /^\s*bytes\s+(?:(\d+)-(\d+)|\*)\/(\d+|\*)\s*$/i.exec(value);
  if (!match) return undefined;
  const range: { start?: number; end?: number; total?: number } = {};
  if (match[1] !== undefined) range.start = Number(match[1]);
  if (match[2] !== undefined) range.end = Number(match[2]);
  if (match[3] !== '*') range.total = Number(match[3]);
  return range;
}

/** A validator If-Range may carry: a strong ETag, else Last-Modified (weak ETags are not allowed there). */
function validatorOf(headers: Dispatcher.ResponseData['headers']): string | undefined {
  const etag = header(headers, 'etag');
  if (etag && !etag.startsWith('W/')) return etag;
  return header(headers, 'last-modified');
}

function isFileError(error: unknown): error is NodeJS.ErrnoException {
  return typeof error === 'object' && error !== null && typeof (error as NodeJS.ErrnoException).path === 'string';
}

function fileError(error: NodeJS.ErrnoException, file: string): ArticleAudioError {
  return new ArticleAudioError(
    `Could not write ${file} (${error.code ?? 'error'}: ${error.message.replace(/^\w+: /, '').replace(/, \w+ '.*'$/, '')}). ` +
      'Check that the folder exists, is writable and has free space, or choose another folder.',
    { code: error.code, cause: error },
  );
}

export async function downloadOutput(
  deps: DownloadDependencies,
  url: string,
  destination: string,
  options: DownloadOptions = {},
): Promise<DownloadResult> {
  const { http } = deps;
  const target = http.base.resolve(url);
  const operation = `downloading ${describeUrl(target)}`;
  const protocol = new URL(target).protocol;
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new ArticleAudioError(
      `Cannot download ${describeUrl(target)}: only http:// and https:// addresses are supported.`,
      { code: 'unsupported_url' },
    );
  }
  const scope = new OperationScope(options.signal, options.deadline, operation);
  const part = `${destination}.part`;
  let offset = 0;
  let total: number | undefined;
  let validator: string | undefined;
  let contentType: string | undefined;
  let stalled = 0;
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

  try {
    try {
      await mkdir(path.dirname(destination), { recursive: true });
      // A leftover from an earlier run has no validator to resume it safely with: start clean.
      await rm(part, { force: true });
    } catch (error) {
      throw isFileError(error) ? fileError(error, destination) : error;
    }
    for (let attempt = 1; ; attempt++) {
      scope.throwIfDone();
      const before = offset;
      let failure: ArticleAudioError | undefined;
      let complete = false;
      const connection = new AbortController();
      const unlink = linkAbort(scope.signal, connection);
      try {
        const headers: Record<string, string> = { accept: '*/*', 'accept-encoding': 'identity' };
        if (offset > 0) {
          headers.range = `bytes=${offset}-`;
          if (validator) headers['if-range'] = validator;
        }
        const response = await openFollowingRedirects(deps, target, operation, headers, connection.signal, scope);
        const status = response.statusCode;
        if (status === 416 && offset > 0) {
          discard(response.body);
          const whole = parseContentRange(header(response.headers, 'content-range'))?.total;
          if (whole !== undefined && whole === offset) {
            total = whole;
            complete = true;
          } else {
            deps.log('debug', `${operation}: the service refused to resume at byte ${offset}; starting over`);
            offset = 0;
            failure = new ConnectionError(`The service could not resume ${operation}.`, true, {
              status,
              code: 'range_not_satisfiable',
            });
          }
        } else if (status !== 200 && status !== 206) {
          failure = await http.errorFromResponse(response, { operation, url: target });
        } else {
          let append = false;
          if (status === 206) {
            const range = parseContentRange(header(response.headers, 'content-range'));
            if (range?.start !== offset) {
              discard(response.body);
              offset = 0;
              failure = new ConnectionError(`The service resumed ${operation} at the wrong place.`, true, {
                status,
                code: 'bad_range',
              });
            } else {
              append = offset > 0;
              total = range.total ?? total;
              if (offset === 0) {
                validator = validatorOf(response.headers);
                contentType = header(response.headers, 'content-type');
              }
            }
          } else {
            if (offset > 0)
              deps.log('debug', `${operation}: the file changed or cannot be resumed; downloading it whole again`);
            offset = 0;
            const length = Number(header(response.headers, 'content-length'));
            total = Number.isSafeInteger(length) && length >= 0 ? length : undefined;
            validator = validatorOf(response.headers);
            contentType = header(response.headers, 'content-type');
          }
          if (!failure) {
            const file = createWriteStream(part, { flags: append ? 'a' : 'w' });
            let fileFailure: unknown;
            file.once('error', (error) => (fileFailure = error));
            try {
              await pipeline(
                response.body,
                async function* (source: AsyncIterable<Buffer>) {
                  for await (const chunk of source) {
                    offset += chunk.length;
                    report(offset);
                    yield chunk;
                  }
                },
                file,
              );
            } catch (error) {
              if (scope.signal.aborted) throw scope.reason();
              if (fileFailure !== undefined && error === fileFailure)
                throw fileError(error as NodeJS.ErrnoException, part);
              failure = http.toClientError(error, { operation, url: target }, scope);
            }
            if (!failure && total !== undefined && offset !== total) {
              failure = new ConnectionError(
                `The download of ${describeUrl(target)} ended after ${offset} of ${total} bytes.`,
                true,
                { code: 'incomplete_download' },
              );
            }
            complete = !failure;
          }
        }
      } catch (error) {
        if (scope.signal.aborted) throw scope.reason();
        if (error instanceof ArticleAudioError) failure = error;
        else failure = http.toClientError(error, { operation, url: target }, scope);
      } finally {
        connection.abort();
        unlink();
      }
      if (complete) break;

      // What is on disk is what counts: bytes counted but not yet flushed when the connection broke are fetched again.
      offset = offset > 0 ? await sizeOf(part) : 0;
      if (offset === 0) await truncate(part).catch(() => undefined);
      stalled = offset > before ? 0 : stalled + 1;
      const delay =
        attempt >= MAX_ATTEMPTS || !failure
          ? undefined
          : http.retryDelay(failure, true, Math.max(0, stalled - 1), scope);
      if (delay === undefined)
        throw failure ?? new ConnectionError(`Gave up ${operation} after ${attempt} attempts.`, true);
      deps.log(
        'warn',
        `${operation} failed (${failure?.message ?? 'unknown'}); resuming at byte ${offset} in ${delay} ms`,
      );
      await scope.sleep(delay);
    }

    const written = await sizeOf(part);
    if (total !== undefined && written !== total) {
      throw new ConnectionError(
        `The download of ${describeUrl(target)} has ${written} of ${total} bytes on disk. Try again.`,
        true,
        {
          code: 'incomplete_download',
        },
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
    throw error;
  } finally {
    scope.dispose();
  }
}

async function sizeOf(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch {
    return 0;
  }
}

/** GET `url`, following up to five redirects; the Authorization header goes only to the service's own origin. */
async function openFollowingRedirects(
  deps: DownloadDependencies,
  url: string,
  operation: string,
  headers: Record<string, string>,
  signal: AbortSignal,
  scope: OperationScope,
): Promise<Dispatcher.ResponseData> {
  let current = url;
  for (let hop = 0; ; hop++) {
    const response = await deps.http.open(
      {
        url: current,
        operation,
        headers,
        headersTimeoutMs: deps.requestTimeoutMs,
        bodyTimeoutMs: deps.requestTimeoutMs,
      },
      signal,
      scope,
    );
    const location = header(response.headers, 'location');
    if (![301, 302, 303, 307, 308].includes(response.statusCode) || !location) return response;
    discard(response.body);
    let next: URL;
    try {
      next = new URL(location, current);
    } catch {
      throw new ArticleAudioError(`The service redirected ${operation} to an invalid address.`, {
        status: response.statusCode,
        code: 'bad_redirect',
      });
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') {
      throw new ArticleAudioError(`The service redirected ${operation} to a non-http address.`, {
        status: response.statusCode,
        code: 'bad_redirect',
      });
    }
    if (hop >= MAX_REDIRECTS) {
      throw new ArticleAudioError(
        `The service redirected ${operation} more than ${MAX_REDIRECTS} times. Try again later.`,
        {
          status: response.statusCode,
          code: 'too_many_redirects',
        },
      );
    }
    deps.log(
      'debug',
      `${operation}: redirected to ${describeUrl(next)}${deps.http.base.isOwnOrigin(next) ? '' : ' (another origin: no Authorization)'}`,
    );
    current = next.href;
  }
}
