// GET/HEAD /v1/jobs/<id>/outputs/<name>: a finished job's file with its strong ETag, conditional requests
// (If-None-Match -> 304) and single byte ranges (Range -> 206 or 416, guarded by If-Range), so players can seek
// and downloads can resume.
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { ByteRange, StoredOutput } from '../core/job-store';
import { ApiError, headerValue } from './api-error';

export type RangeRequest = ByteRange | 'unsatisfiable' | undefined;

/**
 * Parses a Range header against a file size. Undefined means "serve the whole file": no header, a syntax this
 * server does not honour (several ranges, other units) or a malformed one, which RFC 9110 says to ignore.
 */
export function parseRange(header: string | undefined, size: number): RangeRequest {
  if (header === undefined) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/i.exec(header.trim());
  if (!match) return undefined;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  if (last !== '' && Number(last) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end: last === '' ? size - 1 : Math.min(Number(last), size - 1) };
}

/** Whether an If-Range validator still matches the file, i.e. whether a Range may be honoured. */
export function rangeStillValid(ifRange: string | undefined, etag: string, lastModified: Date): boolean {
  if (ifRange === undefined) return true;
  const value = ifRange.trim();
  if (value.startsWith('"') || value.startsWith('W/')) return value === etag;
  const date = Date.parse(value);
  return Number.isFinite(date) && date === Math.floor(lastModified.getTime() / 1000) * 1000;
}

function matchesAny(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === opaque);
}

export async function sendOutputFile(
  req: IncomingMessage,
  res: ServerResponse,
  file: StoredOutput,
  lastModified: Date,
  open: (range?: ByteRange) => Readable,
): Promise<void> {
  const headers: Record<string, string> = {
    ETag: file.etag,
    'Last-Modified': lastModified.toUTCString(),
    'Accept-Ranges': 'bytes',
    // The bytes behind an output address never change; only the token that owns the job may read them.
    'Cache-Control': 'private, max-age=86400, immutable',
    'X-Content-Type-Options': 'nosniff',
  };
  const ifNoneMatch = req.headers['if-none-match'];
  if (ifNoneMatch !== undefined && matchesAny(ifNoneMatch, file.etag)) {
    res.writeHead(304, headers).end();
    return;
  }
  const range = rangeStillValid(headerValue(req.headers['if-range']), file.etag, lastModified)
    ? parseRange(req.headers.range, file.bytes)
    : undefined;
  if (range === 'unsatisfiable') {
    throw new ApiError(
      416,
      [
        {
          code: 'range_not_satisfiable',
          message: `The file has ${file.bytes} bytes; the requested range lies outside it.`,
        },
      ],
      {
        ...headers,
        'Content-Range': `bytes */${file.bytes}`,
      },
    );
  }
  const status = range ? 206 : 200;
  const length = range ? range.end - range.start + 1 : file.bytes;
  Object.assign(headers, { 'Content-Type': file.contentType, 'Content-Length': String(length) });
  if (range) headers['Content-Range'] = `bytes ${range.start}-${range.end}/${file.bytes}`;
  if (req.method === 'HEAD' || length === 0) {
    res.writeHead(status, headers).end();
    return;
  }
  const stream = open(range);
  try {
    await once(stream, 'ready');
  } catch (error) {
    stream.destroy();
    throw error;
  }
  res.writeHead(status, headers);
  await pipeline(stream, res).catch(() => {
    // The client went away mid-file; nothing to answer any more.
    stream.destroy();
  });
}
