// A team worker's own /metrics (`--metrics-port`): a worker serves no API, so this is all its HTTP. Like the API
// node's /metrics, no token: counts only (core/metrics.ts), on the --host address, loopback unless told otherwise.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../core/logger';
import type { EngineMetrics } from '../core/metrics';

export async function serveMetrics(
  metrics: EngineMetrics,
  host: string,
  port: number,
  log: Logger,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Only GET /metrics is served here.\n');
      return;
    }
    metrics.text().then(
      (text) => {
        res.writeHead(200, {
          'Content-Type': metrics.contentType,
          'Content-Length': String(Buffer.byteLength(text)),
          'Cache-Control': 'no-store',
        });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        log('error', `Could not collect metrics: ${error instanceof Error ? error.message : String(error)}`);
        res.writeHead(500).end();
      },
    );
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(new Error(`Cannot serve metrics on ${host}:${port}: ${error.message}`)));
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  const shown = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
