// Routes requests to the job service. Paths are matched on their raw, undecoded segments: a job id must be exactly
// a job id and an output name exactly the name of one of that job's outputs, so nothing a client sends is ever
// decoded, joined or normalised into a file path (`..%2F`, encoded slashes and overlong ids are simply not found).
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TokenRing } from '../core/auth';
import { isJobId } from '../core/job-id';
import { type Logger } from '../core/logger';
import type { EngineMetrics } from '../core/metrics';
import type { JobHandle, JobServiceApi } from '../core/service-api';
import { ApiError } from './api-error';
import type { EventStreams } from './event-streams';
import { jobView } from './job-view';
import { sendOutputFile } from './output-file';
import { discardBody } from './request-body';
import { route } from './routes';
import { sendJson } from './send-json';
import { streamJob } from './stream-route';
import { submitJob } from './submit-route';
import type { TokenLimits } from './token-limits';

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

export function createRequestHandler(
  options: RequestHandlerOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const { service, tokens } = options;

  async function owned(owner: string, id: string): Promise<JobHandle> {
    const job = isJobId(id) ? await service.find(owner, id) : undefined;
    if (!job) throw ApiError.notFound();
    return job;
  }

  async function handle(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
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
      case 'submit':
        await submitJob(req, res, owner, options, requestId);
        return;
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
        await streamJob(options, req, res, owner, await owned(owner, target.id), base);
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
      case 'admin-workers': {
        // Team API nodes only; an admin token (article-audio token add NAME --admin), checked before any query.
        if (!service.workers) throw ApiError.notFound();
        if (!tokens.isAdmin(owner))
          throw ApiError.forbidden(
            'This needs an admin token: article-audio token add NAME --admin --database … makes one.',
          );
        sendJson(res, 200, { data: await service.workers(), errors: null });
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

  // Request ids: a random prefix for this process and a counter, 12 hex characters. Unique across the API nodes of a
  // team (the prefix) without a call into the system's random source per request: randomBytes was 11 % of the main
  // thread's CPU under a stream of status requests.
  const idPrefix = randomBytes(3).toString('hex');
  let requests = 0;
  const nextRequestId = () => {
    requests = (requests + 1) % 0x1000000;
    return idPrefix + requests.toString(16).padStart(6, '0');
  };

  return (req, res) => {
    const started = Date.now();
    // Quoted in error reports (the client keeps it on its errors) and in this engine's log; a team keeps a submission's
    // with the job, and its workers print it in their lines for that job.
    const requestId = nextRequestId();
    res.setHeader('X-Request-Id', requestId);
    if (options.isClosing()) res.setHeader('Connection', 'close');
    handle(req, res, requestId)
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
