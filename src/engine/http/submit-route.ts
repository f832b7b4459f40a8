// POST /v1/article-to-audio: checks the Idempotency-Key and the body, admits the token (rate, storage, disk), submits,
// and answers 202 with the job's links, or the error the spec gives for each refusal (429 with Retry-After, 422, 503,
// 507 for a data dir that cannot be written).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { IdempotencyConflictError, QueueFullError, StoppingError, TokenLimitError } from '../core/job-errors';
import type { EngineMetrics } from '../core/metrics';
import type { JobServiceApi } from '../core/service-api';
import { checkSubmission } from '../core/submission';
import { ApiError, headerValue } from './api-error';
import { readJsonBody } from './request-body';
import { sendJson } from './send-json';
import type { TokenLimits } from './token-limits';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
/** Why a job could not be written to the data dir, as the client should hear it (a 507, not an opaque 500). */
const STORAGE_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EACCES', 'EPERM', 'EROFS']);

export interface SubmitOptions {
  service: JobServiceApi;
  maxBodyBytes: number;
  limits: TokenLimits;
  metrics: EngineMetrics;
}

export async function submitJob(
  req: IncomingMessage,
  res: ServerResponse,
  owner: string,
  options: SubmitOptions,
  requestId?: string,
): Promise<void> {
  const { service } = options;
  const key = headerValue(req.headers['idempotency-key']);
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
    throw ApiError.validation([
      {
        field: 'Idempotency-Key',
        message: 'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces.',
      },
    ]);
  }
  const checked = checkSubmission(await readJsonBody(req, res, options.maxBodyBytes));
  if (!checked.ok) throw ApiError.validation(checked.issues);
  await options.limits.admit(owner);
  let accepted;
  try {
    accepted = await service.submit(owner, checked.submission, key, { requestId });
  } catch (error) {
    if (error instanceof QueueFullError) {
      const message =
        error.ownWaiting !== undefined
          ? `This token has ${error.ownWaiting} jobs waiting, its share of the queue; try again in ${error.retryAfterS} s, when one has started.`
          : `The queue is full; try again in ${error.retryAfterS} s.`;
      throw ApiError.of(429, 'too_many_jobs', message, { 'Retry-After': String(error.retryAfterS) });
    }
    if (error instanceof TokenLimitError)
      throw ApiError.of(429, error.code, error.message, { 'Retry-After': String(error.retryAfterS) });
    if (error instanceof IdempotencyConflictError)
      throw ApiError.validation([{ field: 'Idempotency-Key', message: error.message }]);
    if (error instanceof StoppingError) throw ApiError.unavailable();
    const errno = (error as NodeJS.ErrnoException).code;
    if (errno === 'EDATADIRLOST') {
      throw ApiError.of(
        503,
        'unavailable',
        'This engine no longer owns its data dir: another engine took it over. Use that engine, or restart this one.',
      );
    }
    if (errno !== undefined && STORAGE_ERRORS.has(errno)) throw ApiError.storage(errno);
    throw error;
  }
  if (!accepted.replayed) options.metrics.jobsSubmitted.inc({ model: checked.submission.model_id });
  const self = `/v1/jobs/${accepted.job.id}`;
  sendJson(
    res,
    202,
    { data: { job_id: accepted.job.id, links: { self, stream: `${self}/stream` } }, errors: null },
    {
      Location: self,
      ...(accepted.replayed ? { 'Idempotent-Replayed': 'true' } : {}),
    },
  );
}
