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
export { DEFAULT_STREAM, EventHistory, PartSequence, partsOf } from './follow';
export { Redactor, redact } from './redact';
export { describeUrl } from './service-url';
export { DEFAULT_POLLING, PollingSchedule, parseRetryAfter } from './timing';
export * from './types';
