// A small HTTP server on loopback with per-test scripted behaviours, for what a real job service does only on a bad
// day: streams cut mid-event, 429 with Retry-After, 500 then 200, truncated JSON, silence, streams that never end.
// Every request is recorded (method, path, headers, body, time) so tests can count and inspect them.
//
//   const server = await startFaultServer();
//   server.on('GET', '/v1/jobs/j1', (req, res) => sendJson(res, 500, {}), (req, res) => sendEnvelope(res, 200, job));
//   ... server.requestsTo('GET', '/v1/jobs/j1').length ...
//   await server.close();
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** Path and query, as sent. */
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Date.now() when the request arrived. */
  at: number;
}

export interface HandlerContext {
  /** The request body, read in full before the handler runs. */
  body: string;
  /** 0 for the first request this route saw, 1 for the second, ... */
  call: number;
  /** Capture groups of a RegExp path. */
  params: string[];
  server: FaultServer;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, context: HandlerContext) => void | Promise<void>;

export interface FaultServer {
  /** http://127.0.0.1:PORT (or the host given). */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /**
   * Scripts a route. Handlers answer successive requests in order; the last one answers every request after that.
   * A later `on` for the same method and path replaces the earlier one.
   */
  on(method: string, path: string | RegExp, ...handlers: Handler[]): FaultServer;
  requestsTo(method: string, path: string | RegExp): RecordedRequest[];
  /** Destroys open connections (streams that never end included) and stops listening. */
  close(): Promise<void>;
}

interface Route {
  method: string;
  path: string | RegExp;
  handlers: Handler[];
  calls: number;
}

function matches(path: string | RegExp, actual: string): RegExpExecArray | null {
  const pathname = actual.split('?')[0] ?? actual;
  if (typeof path === 'string') return path === pathname ? ([pathname] as unknown as RegExpExecArray) : null;
  return path.exec(pathname);
}

export async function startFaultServer(options: { host?: string } = {}): Promise<FaultServer> {
  const host = options.host ?? '127.0.0.1';
  const routes: Route[] = [];
  const sockets = new Set<Socket>();
  const requests: RecordedRequest[] = [];

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '/';
      requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body, at: Date.now() });
      let params: RegExpExecArray | null = null;
      const route = routes.find(
        (candidate) => candidate.method === req.method && (params = matches(candidate.path, path)) !== null,
      );
      if (!route) {
        sendErrors(res, 404, [{ code: 'not_found', message: `No route for ${req.method} ${path} in this test.` }]);
        return;
      }
      const handler = route.handlers[Math.min(route.calls, route.handlers.length - 1)]!;
      const call = route.calls++;
      Promise.resolve(
        handler(req, res, {
          body,
          call,
          params: [...((params as RegExpExecArray | null) ?? [])].slice(1),
          server: faultServer,
        }),
      ).catch((error: unknown) => {
        if (!res.headersSent) sendErrors(res, 500, [{ code: 'test_handler_failed', message: String(error) }]);
        else res.destroy();
      });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  const faultServer: FaultServer = {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    requests,
    on(method, path, ...handlers) {
      if (handlers.length === 0) throw new Error('on() needs at least one handler');
      const existing = routes.findIndex((route) => route.method === method && String(route.path) === String(path));
      if (existing >= 0) routes.splice(existing, 1);
      routes.push({ method, path, handlers, calls: 0 });
      return faultServer;
    },
    requestsTo(method, path) {
      return requests.filter((request) => request.method === method && matches(path, request.path) !== null);
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return faultServer;
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** `{data, errors: null}`, the spec's success envelope. */
export function sendEnvelope(
  res: ServerResponse,
  status: number,
  data: unknown,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { data, errors: null }, headers);
}

/** `{data: null, errors}`, the engine's error envelope. */
export function sendErrors(
  res: ServerResponse,
  status: number,
  errors: { code: string; message: string; field?: string }[],
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { data: null, errors }, headers);
}

export interface SseEvent {
  id?: string;
  event?: string;
  data: string | object;
  retry?: number;
}

/** The wire form of one event. */
export function formatEvent(event: SseEvent): string {
  const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
  let text = '';
  if (event.retry !== undefined) text += `retry: ${event.retry}\n`;
  if (event.id !== undefined) text += `id: ${event.id}\n`;
  if (event.event !== undefined) text += `event: ${event.event}\n`;
  for (const line of data.split('\n')) text += `data: ${line}\n`;
  return `${text}\n`;
}

export interface SseWriter {
  send(event: SseEvent): void;
  comment(text?: string): void;
  /** Writes raw text (half an event, say). */
  raw(text: string): void;
  /** Ends the response cleanly. */
  end(): void;
  /** Cuts the connection (no clean end): what a dropped network looks like. */
  drop(): void;
  readonly closed: boolean;
}

/** Starts an event stream answer. */
export function openSse(res: ServerResponse, headers: Record<string, string> = {}): SseWriter {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    ...headers,
  });
  res.flushHeaders();
  let closed = false;
  res.on('close', () => (closed = true));
  return {
    send: (event) => void (closed || res.write(formatEvent(event))),
    comment: (text = 'heartbeat') => void (closed || res.write(`: ${text}\n\n`)),
    raw: (text) => void (closed || res.write(text)),
    end: () => {
      if (!closed) res.end();
    },
    drop: () => {
      res.socket?.destroy();
    },
    get closed() {
      return closed;
    },
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves when the client closes the response (or after `timeoutMs`). */
export function whenClosed(res: ServerResponse, timeoutMs = 30_000): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed || res.writableFinished) {
      resolve();
      return;
    }
    const timer = setTimeout(resolve, timeoutMs);
    res.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A job body as the spec's status endpoint shows it; `overrides` replace or add fields. */
export function jobBody(id: string, status: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    status,
    created_at: '2025-01-01T00:00:00Z',
    progress: status === 'succeeded' ? 1 : 0,
    outputs: null,
    error: null,
    ...overrides,
  };
}
