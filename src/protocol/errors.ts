// Error codes on the wire. Request errors come in the envelope `{data: null, errors: [{code, message, field?}]}`
// with an HTTP status; a failed job carries one `error: {code, message}`. Clients must accept codes not listed here.

export const API_ERROR_CODES = [
  'bad_request',
  'invalid_json',
  'unauthorized',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'payload_too_large',
  'unsupported_media_type',
  'validation_failed',
  'range_not_satisfiable',
  'headers_too_large',
  'request_timeout',
  'too_many_jobs',
  'rate_limited',
  'storage_quota_exceeded',
  'internal',
  'unavailable',
  'insufficient_storage',
] as const;
export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

/** Why a job failed: what the pipeline reports, and what the service adds (crashes, storage, cancellation). */
export const JOB_ERROR_CODES = [
  'fetch_failed',
  'not_an_article',
  'too_short',
  'too_long',
  'too_complex',
  'intro_unusable',
  'outro_unusable',
  'synthesis_failed',
  'voice_unavailable',
  'unsupported_language',
  'cancelled',
  'interrupted',
  'storage_failed',
  'internal',
] as const;
export type JobErrorCode = (typeof JOB_ERROR_CODES)[number];
