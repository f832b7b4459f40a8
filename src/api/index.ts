// The job-service client: everything other modules (the extension, the command line) may use.
export { JobServiceClient, type JobServiceClientOptions, validateArticleRequest } from './client';
export {
  ArticleAudioError,
  AuthenticationError,
  ConnectionError,
  InvalidResponseError,
  JobFailedError,
  NotFoundError,
  RateLimitError,
  ServerError,
  TimeoutError,
  ValidationError,
  formatDuration,
  isCertificateProblem,
  type ErrorDetails,
  type TimeoutKind,
} from './errors';
export { DOWNLOAD_LIMITS, downloadLimitFor, formatBytes, outputKindOf, type OutputKind } from './download-limits';
export { DEFAULT_STALL_TIMEOUT_MS, DEFAULT_STREAM } from './follow';
export {
  EventHistory,
  LOG_LINES_LEFT_OUT,
  MAX_LAST_EVENT_ID_CHARS,
  MAX_LOG_LINES,
  MAX_LOG_MESSAGE_CHARS,
  boundedLogLine,
} from './follow-state';
export { MAX_PARTS, MAX_PARTS_AHEAD, PartSequence, partsOf } from './parts';
export { Redactor, redact } from './redact';
export { describeUrl } from './service-url';
export { DEFAULT_POLLING, PollingSchedule, parseRetryAfter } from './timing';
export * from './types';
