// Routes requests to the job service. Paths are matched on their raw, undecoded segments: a job id must be exactly
// a job id and an output name exactly the name of one of that job's outputs, so nothing a client sends is ever
// decoded, joined or normalised into a file path (`..%2F`, encoded slashes and overlong ids are simply not found).
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TokenRing } from '../core/auth';
import { isJobId } from '../core/job-id';
import { IdempotencyConflictError, QueueFullError, StoppingError, TokenLimitError } from '../core/job-errors';
import { type Logger } from '../core/logger';
import type { EngineMetrics } from '../core/metrics';
import type { JobHandle, JobServiceApi } from '../core/service-api';
import { checkSubmission } from '../core/submission';
import { ApiError, headerValue } from './api-error';
import type { EventStreams } from './event-streams';
import { jobView } from './job-view';
import { sendOutputFile } from './output-file';
import type { TokenLimits } from './token-limits';
import { discardBody, readJsonBody } from './request-body';

export interface RequestHandlerOptions {
  service: JobServiceApi;
  tokens: TokenRing;
  streams: EventStreams;
  maxBodyBytes: number;
  /** Per-token rate and storage, and the disk's free space, checked before a job is stored. */
  limits: TokenLimits;
  /**
   * Base of the absolute addresses in responses for a request's Host header: the configured public URL, else the
   * address the engine listens on, or another name of that same address the client used (localhost for 127.0.0.1).
   * Never any other Host: a client can set it to anything, and the links it would make (in answers and stream
   * events) would send other clients, with their tokens, wherever it says.
   */
  baseUrl: (host: string | undefined) => string;
  isClosing: () => boolean;
  log: Logger;
  metrics: EngineMetrics;
}

type Route =
  | { name: 'submit' | 'health' | 'ready' | 'metrics'; methods: readonly string[] }
  | { name: 'job' | 'stream' | 'cancel'; methods: readonly string[]; id: string }
  | { name: 'output'; methods: readonly string[]; id: string; file: string }
  | { name: 'part'; methods: readonly string[]; id: string; file: string };

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
/** Why a job could not be written to the data dir, as the client should hear it (a 507, not an opaque 500). */
const STORAGE_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EACCES', 'EPERM', 'EROFS']);

function route(target: string): Route | undefined {
  const path = target.replace(/^https?:\/\/[^/]*/i, '').split('?')[0] ?? '';
  const s = path.split('/');
  if (path === '/healthz') return { name: 'health', methods: ['GET', 'HEAD'] };
  if (path === '/readyz') return { name: 'ready', methods: ['GET', 'HEAD'] };
  if (path === '/metrics') return { name: 'metrics', methods: ['GET'] };
  if (s[0] !== '' || s[1] !== 'v1') return undefined;
  if (s.length === 3 && s[2] === 'article-to-audio') return { name: 'submit', methods: ['POST'] };
  if (s[2] !== 'jobs' || s[3] === undefined) return undefined;
  const id = s[3];
  if (s.length === 4) return { name: 'job', methods: ['GET', 'HEAD'], id };
  if (s.length === 5 && s[4] === 'stream') return { name: 'stream', methods: ['GET'], id };
  if (s.length === 5 && s[4] === 'cancel') return { name: 'cancel', methods: ['POST'], id };
  if (s.length === 6 && s[4] === 'outputs' && s[5] !== undefined)
    return { name: 'output', methods: ['GET', 'HEAD'], id, file: s[5] };
  if (s.length === 6 && s[4] === 'parts' && s[5] !== undefined)
    return { name: 'part', methods: ['GET', 'HEAD'], id, file: s[5] };
  return undefined;
}

export function createRequestHandler(
  options: RequestHandlerOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const { service, tokens } = options;

  function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(text)),
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      ...headers,
    });
    res.end(text);
  }

  async function owned(owner: string, id: string): Promise<JobHandle> {
    const job = isJobId(id) ? await service.find(owner, id) : undefined;
    if (!job) throw ApiError.notFound();
    return job;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = route(req.url ?? '');
    if (!target) throw ApiError.notFound();
    const method = req.method ?? 'GET';
    if (!target.methods.includes(method)) throw ApiError.methodNotAllowed(target.methods);
    if (target.name === 'health') {
      // For load balancers: no token needed, nothing secret in it; 503 takes the node out of rotation.
      const health = options.isClosing()
        ? { ok: false, detail: { stopping: true } }
        : await service.health().catch((error: unknown) => ({ ok: false, detail: { error: String(error) } }));
      sendJson(res, health.ok ? 200 : 503, { data: { ok: health.ok, ...health.detail }, errors: null });
      return;
    }
    if (target.name === 'ready') {
      // Whether to send this node work: its dependencies answer. No token, nothing secret (error codes only).
      const readiness = options.isClosing()
        ? { ready: false, checks: { stopping: { ok: false, error: 'stopping' } } }
        : await service
            .readiness()
            .catch(() => ({ ready: false, checks: { service: { ok: false, error: 'failed' } } }));
      sendJson(res, readiness.ready ? 200 : 503, { data: readiness, errors: null });
      return;
    }
    if (target.name === 'metrics') {
      // For Prometheus: no token, as /healthz. Counts only, labelled by model, outcome and error code: never a job
      // id, a title, a URL or a token (core/metrics.ts).
      const text = await options.metrics.text();
      res.writeHead(200, {
        'Content-Type': options.metrics.contentType,
        'Content-Length': String(Buffer.byteLength(text)),
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
      });
      res.end(text);
      return;
    }
    if (options.isClosing()) throw ApiError.unavailable();
    const owner = tokens.ownerOf(req.headers.authorization);
    if (owner === undefined) throw ApiError.unauthorized();
    const base = options.baseUrl(req.headers.host);

    switch (target.name) {
      case 'submit': {
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
          accepted = await service.submit(owner, checked.submission, key);
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
        return;
      }
      case 'job': {
        sendJson(res, 200, { data: jobView(await owned(owner, target.id), base), errors: null });
        return;
      }
      case 'cancel': {
        const job = await service.cancel(await owned(owner, target.id));
        sendJson(res, 200, { data: jobView(job, base), errors: null });
        return;
      }
      case 'stream': {
        await streamJob(req, res, owner, await owned(owner, target.id), base);
        return;
      }
      case 'output': {
        const job = await owned(owner, target.id);
        const file =
          job.record.status === 'succeeded' ? job.record.outputs?.find((o) => o.name === target.file) : undefined;
        if (!file) throw ApiError.notFound();
        await sendOutputFile(req, res, file, new Date(job.record.finishedAt ?? job.record.updatedAt), (range) =>
          service.readOutput(job, file, range),
        );
        return;
      }
      case 'part': {
        // Parts are readable while the job runs and for its retention afterwards.
        const job = await owned(owner, target.id);
        const file = job.record.parts?.find((p) => p.name === target.file);
        if (!file) throw ApiError.notFound();
        await sendOutputFile(req, res, file, new Date(job.record.createdAt), (range) =>
          service.readOutput(job, file, range),
        );
        return;
      }
    }
  }

  async function streamJob(
    req: IncomingMessage,
    res: ServerResponse,
    owner: string,
    job: JobHandle,
    base: string,
  ): Promise<void> {
    const header = headerValue(req.headers['last-event-id']);
    // An id this engine never sent (garbage, or from another server) is ignored: the client gets the whole history.
    const afterId = header !== undefined && /^\d{1,15}$/.test(header.trim()) ? Number(header.trim()) : 0;
    let stopFollowing = () => {};
    const stream = options.streams.create(res, owner, base, afterId, () => stopFollowing());
    const following = await service.follow(job, afterId, (events) => stream.send(events));
    if (following) {
      // The backlog may already have held the job's `end`, which ended the stream inside follow().
      if (stream.isEnded) {
        following.stop();
      } else {
        stopFollowing = () => following.stop();
        stream.start();
      }
      return;
    }
    // A finished job: its history is in the store and will not grow.
    const events = (await service.storedHistory(job)).filter((e) => e.id > afterId);
    if (events.length === 0) {
      // Nothing after the client's last event: 204 tells an EventSource to stop reconnecting.
      res.writeHead(204, { 'Cache-Control': 'no-store' }).end();
      stream.end();
      return;
    }
    stream.send(events);
    stream.end();
  }

  return (req, res) => {
    const started = Date.now();
    // Quoted in error reports (the client keeps it on its errors) and in this engine's log.
    const requestId = randomBytes(6).toString('hex');
    res.setHeader('X-Request-Id', requestId);
    if (options.isClosing()) res.setHeader('Connection', 'close');
    handle(req, res)
      .catch((error: unknown) => {
        const apiError =
          error instanceof ApiError
            ? error
            : ApiError.of(
                500,
                'internal',
                `The engine failed to handle this request; its log has the details (request ${requestId}).`,
              );
        if (!(error instanceof ApiError)) {
          options.log(
            'error',
            `${req.method} ${req.url} (request ${requestId}): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
          );
        }
        if (res.headersSent) {
          res.destroy();
          return;
        }
        discardBody(req);
        sendJson(res, apiError.status, apiError.body, apiError.headers);
      })
      .finally(() => {
        options.log(
          'debug',
          `${req.method} ${req.url} ${res.statusCode} ${Date.now() - started} ms (request ${requestId})`,
        );
      });
  };
}
