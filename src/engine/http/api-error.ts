// Every error the service answers with: an HTTP status, a stable code and a message a person can act on, sent in
// the envelope `{data: null, errors: [{code, message, field?}]}` (DESIGN.md).
import type { ApiErrorCode } from '../../protocol';

export type { ApiErrorCode } from '../../protocol';

export interface ErrorEntry {
  code: ApiErrorCode;
  message: string;
  field?: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly entries: ErrorEntry[],
    readonly headers: Record<string, string> = {},
  ) {
    super(entries.map((e) => e.message).join(' '));
    this.name = 'ApiError';
  }

  static of(status: number, code: ApiErrorCode, message: string, headers?: Record<string, string>): ApiError {
    return new ApiError(status, [{ code, message }], headers);
  }

  static notFound(): ApiError {
    return ApiError.of(404, 'not_found', 'No such resource. Jobs are visible only to the token that created them.');
  }

  static unauthorized(): ApiError {
    return ApiError.of(401, 'unauthorized', 'Missing or wrong API token: send `Authorization: Bearer <token>`.', {
      'WWW-Authenticate': 'Bearer',
    });
  }

  static forbidden(message: string): ApiError {
    return ApiError.of(403, 'forbidden', message);
  }

  static methodNotAllowed(allowed: readonly string[]): ApiError {
    return ApiError.of(405, 'method_not_allowed', `Use ${allowed.join(' or ')} here.`, { Allow: allowed.join(', ') });
  }

  static unavailable(): ApiError {
    return ApiError.of(503, 'unavailable', 'The engine is shutting down. Try again when it is back.', {
      'Retry-After': '5',
    });
  }

  /** The data dir cannot take the new job: full (ENOSPC, EDQUOT) or not writable (EACCES, EPERM, EROFS). */
  static storage(errno: string): ApiError {
    const full = errno === 'ENOSPC' || errno === 'EDQUOT';
    return ApiError.of(
      507,
      'insufficient_storage',
      full
        ? 'The engine cannot store the job: its data dir has no space left. Free disk space, then submit again.'
        : `The engine cannot store the job: its data dir is not writable (${errno}). Fix the folder's permissions, then submit again.`,
    );
  }

  static validation(entries: { field?: string; message: string }[]): ApiError {
    return new ApiError(
      422,
      entries.map((e) => ({
        code: 'validation_failed' as const,
        message: e.message,
        ...(e.field ? { field: e.field } : {}),
      })),
    );
  }

  get body(): { data: null; errors: ErrorEntry[] } {
    return { data: null, errors: this.entries };
  }
}

/** A request header as one string (Node gives repeated custom headers as arrays; the first one counts here). */
export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
