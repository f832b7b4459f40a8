// The local engine: the job service of spec/job-service-api.md over HTTP, as DESIGN.md fills it in.
// startEngine is what the command line, the engine process (main.ts) and tests call.
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo, Socket } from 'node:net';
import { TokenRing } from './core/auth';
import { createDefaultPipeline } from './core/default-pipeline';
import { limitConnections } from './http/connection-limits';
import { EventStreams } from './http/event-streams';
import { createRequestHandler } from './http/request-handler';
import { type TokenLimitOptions, TokenLimits } from './http/token-limits';
import { type Logger } from './core/logger';
import { EngineMetrics } from './core/metrics';
import { JobService } from './embedded/job-service';
import type { JobServiceApi } from './core/service-api';
import { type EngineOptions, resolveOptions } from './core/options';
import { removeStaleScratchDirs } from '../speech/voice/scratch-dirs';
import { FileJobStore } from './embedded/file-store';

export type { EngineOptions } from './core/options';
export type { Logger, LogLevel } from './core/logger';
export type { JobStore } from './core/job-store';

export interface RunningEngine {
  /** Base URL of the service, e.g. http://127.0.0.1:8787. */
  url: string;
  port: number;
  /**
   * Stops gracefully: new requests get 503, running jobs are put back in the queue for the next start, open
   * streams get a final event and end, everything is written; then the port is released.
   */
  close(): Promise<void>;
}

export async function startEngine(options: EngineOptions): Promise<RunningEngine> {
  const settings = resolveOptions(options);
  const tokens = new TokenRing(settings.tokens);
  const log = settings.log;
  const pipeline = settings.pipeline ?? createDefaultPipeline();
  const store =
    settings.store ?? new FileJobStore({ dataDir: settings.dataDir, log, lock: { waitMs: settings.lockWaitMs } });
  const metrics = new EngineMetrics('embedded');
  const service = new JobService({
    store,
    pipeline,
    concurrency: settings.concurrency,
    queueDepth: settings.queueDepth,
    tokenQueueDepth: settings.tokenQueueDepth,
    tokenMaxJobs: settings.tokenMaxJobs,
    tokenFairShare: Math.max(1, Math.floor(settings.queueDepth / tokens.size)),
    retentionMs: settings.retentionMs,
    idempotencyWindowMs: settings.idempotencyWindowMs,
    progressIntervalMs: settings.progressIntervalMs,
    fetchLimits: settings.fetchLimits,
    maxCrashes: settings.maxCrashes,
    stopTimeoutMs: settings.stopTimeoutMs,
    log,
    metrics,
  });
  const swept = await removeStaleScratchDirs();
  if (swept > 0)
    log('info', `Removed ${swept} synthesis scratch folder(s) left in ${os.tmpdir()} by engines that were killed.`);
  try {
    await service.start();
  } catch (error) {
    await pipeline.close().catch(() => undefined);
    await store.close().catch(() => undefined);
    throw error;
  }
  return serveHttp(
    service,
    {
      ...settings,
      tokens,
      metrics,
      limits: {
        submitRatePerMinute: settings.tokenSubmitRate,
        storageBytes: settings.tokenStorageBytes,
        minFreeDiskBytes: settings.minFreeDiskBytes,
        dataDir: settings.dataDir,
        storageOf: (owner) => service.storageOf(owner),
      },
    },
    `data in ${settings.dataDir}; ${settings.concurrency} job(s) at once; private networks ${settings.allowPrivateNetwork ? 'fetched' : 'not fetched'}`,
  );
}

export interface HttpNodeSettings {
  host: string;
  port: number;
  tokens: TokenRing;
  heartbeatMs: number;
  streamRetryMs: number;
  maxBodyBytes: number;
  /** Base of output addresses; default the address the node listens on (never the Host header). */
  publicUrl?: string | undefined;
  /** Open connections at once (connection-limits.ts). Default 256. */
  maxConnections?: number;
  /** A connection that sends no request for this long is closed. Default 10 s. */
  idleSocketTimeoutMs?: number;
  /** Per-token rate and storage, free disk (token-limits.ts). Default: none. */
  limits?: TokenLimitOptions;
  log: Logger;
  /** What GET /metrics serves; the node's service adds its runs to it. Default: a registry of this node's own. */
  metrics?: EngineMetrics;
}

/**
 * Serves a job service over HTTP: the embedded engine, or a team API node. On close the port stays open (503) while
 * the service stops, then open streams end and the port is released.
 */
export async function serveHttp(
  service: JobServiceApi,
  settings: HttpNodeSettings,
  description: string,
): Promise<RunningEngine> {
  const { log, tokens } = settings;
  const streams = new EventStreams({
    heartbeatMs: settings.heartbeatMs,
    retryMs: settings.streamRetryMs,
    maxBufferedBytes: 1024 * 1024,
  });
  const metrics = settings.metrics ?? new EngineMetrics('api');
  metrics.readQueueFrom(() => service.queueGauges());
  metrics.readFollowersFrom(() => streams.size);
  const stopRevoking = tokens.onRevoked((owner) => {
    const ended = streams.endOwner(owner);
    if (ended > 0) log('info', `Ended ${ended} open stream(s) of a removed token.`);
  });
  let closing = false;
  let url = '';
  let aliases = new Set<string>();
  const handler = createRequestHandler({
    service,
    tokens,
    streams,
    maxBodyBytes: settings.maxBodyBytes,
    limits: new TokenLimits(settings.limits ?? { submitRatePerMinute: 0, storageBytes: 0, minFreeDiskBytes: 0 }),
    baseUrl: (host) =>
      settings.publicUrl ??
      (host !== undefined && aliases.has(host.toLowerCase()) ? `http://${host.toLowerCase()}` : url),
    isClosing: () => closing,
    log,
    metrics,
  });
  // Slow or stalled uploads are cut off; streams are responses, which these timeouts do not limit.
  const idleSocketTimeoutMs = settings.idleSocketTimeoutMs ?? 10_000;
  const headersTimeout = Math.min(20_000, idleSocketTimeoutMs);
  const server = http.createServer(
    {
      requestTimeout: 60_000,
      headersTimeout,
      // Sent to clients as `Keep-Alive: timeout=N`: never longer than the engine really keeps an idle socket.
      keepAliveTimeout: Math.min(5_000, idleSocketTimeoutMs),
      connectionsCheckingInterval: Math.min(30_000, headersTimeout),
    },
    handler,
  );
  const connections = limitConnections(server, {
    maxConnections: settings.maxConnections ?? 256,
    idleTimeoutMs: idleSocketTimeoutMs,
    log,
  });
  server.on('checkContinue', handler);
  server.on('clientError', answerClientError);

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(settings.port, settings.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    stopRevoking();
    connections.dispose();
    await service.stop();
    throw new Error(`Cannot listen on ${settings.host}:${settings.port}: ${(error as Error).message}`);
  }
  const port = (server.address() as AddressInfo).port;
  url = `http://${urlHost(settings.host)}:${port}`;
  // Names of this very address a local client may use; a Host header naming one of them is answered in kind.
  aliases = new Set(['127.0.0.1', 'localhost', '[::1]', urlHost(settings.host)].map((name) => `${name}:${port}`));
  log('info', `Listening on ${url}; ${description}.`);
  if (settings.publicUrl === undefined && !isLoopback(settings.host)) {
    log(
      'warn',
      `Output addresses name ${url}; clients on other machines need --public-url (the address they reach this engine at).`,
    );
  }

  let closed: Promise<void> | undefined;
  return {
    url,
    port,
    close() {
      closed ??= (async () => {
        // The port stays open while the jobs stop, so that clients get a clear 503 rather than a refused connection.
        closing = true;
        stopRevoking();
        await service.stop();
        streams.closeAll();
        const released = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        // A client still holding a connection open after its answer must not keep the engine alive.
        const force = setTimeout(() => server.closeAllConnections(), 2000);
        await released;
        clearTimeout(force);
        connections.dispose();
        log('info', 'Stopped.');
      })();
      return closed;
    },
  };
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/** Requests Node cannot parse still get the error envelope. */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, code, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'headers_too_large', 'The request headers are too large.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'request_timeout', 'The request was not received in time.']
        : [400, 'Bad Request', 'bad_request', 'The request is not valid HTTP/1.1.'];
  const body = JSON.stringify({ data: null, errors: [{ code, message }] });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
