// An idle connection the engine closes (keep-alive timeout, idle sweep) must not be one a client has already sent its
// next request on. When the engine's event loop was held up (a busy machine, a long GC), the "idle too long" timers
// run before the loop reads the sockets, and closing then resets a connection with a request waiting in it: the
// client reads ECONNRESET (issue 29: waitForJob's 50 ms polls failed that way at load 25-40). Here the loop is held
// up on purpose while a client in a worker thread sends its second request on the same keep-alive connection.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { limitConnections } from '../../../src/engine/http/connection-limits';

// The client: one TCP connection, a request, then (when told) a second request on it; reports what came back.
const client = `
const net = require('node:net');
const { parentPort, workerData } = require('node:worker_threads');
const socket = net.connect(workerData.port, '127.0.0.1');
let text = '';
let answers = 0;
socket.setNoDelay(true);
socket.on('data', (chunk) => {
  text += chunk;
  const count = (text.match(/HTTP\\/1\\.1 200/g) || []).length;
  if (count > answers && text.endsWith('ok')) { answers = count; parentPort.postMessage({ answers }); }
});
socket.on('error', (error) => parentPort.postMessage({ error: error.code || error.message }));
socket.on('close', () => parentPort.postMessage({ closed: true, answers }));
const request = 'GET /v1/jobs/x HTTP/1.1\\r\\nhost: 127.0.0.1\\r\\nconnection: keep-alive\\r\\n\\r\\n';
socket.write(request);
parentPort.on('message', () => setTimeout(() => socket.write(request), 100));
`;

function holdUpEventLoop(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // The engine busy, or the machine giving it no CPU.
  }
}

async function secondRequestAfterStall(options: {
  keepAliveMs: number;
  idleMs: number;
  stallMs: number;
}): Promise<unknown[]> {
  const server = http.createServer({ keepAliveTimeout: options.keepAliveMs }, (_req, res) => {
    res.setHeader('content-length', '2');
    res.end('ok');
  });
  const limits = limitConnections(server, { maxConnections: 16, idleTimeoutMs: options.idleMs, log: () => {} });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const worker = new Worker(client, { eval: true, workerData: { port: (server.address() as AddressInfo).port } });
  const messages: unknown[] = [];
  try {
    const next = () => new Promise<unknown>((resolve) => worker.once('message', resolve));
    messages.push(await next()); // the first answer
    const second = next();
    worker.postMessage('again'); // the client sends in 100 ms, while this thread is held up
    await new Promise((resolve) => setImmediate(resolve));
    holdUpEventLoop(options.stallMs);
    messages.push(await second);
    return messages;
  } finally {
    await worker.terminate();
    limits.dispose();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('engine: idle connections are closed only when no request is waiting on them', () => {
  it('answers a request that arrived while the event loop was held up past the keep-alive timeout', async () => {
    const messages = await secondRequestAfterStall({ keepAliveMs: 200, idleMs: 60_000, stallMs: 1500 });
    assert.deepEqual(messages, [{ answers: 1 }, { answers: 2 }]);
  });

  it('answers a request that arrived while the event loop was held up past the idle-socket timeout', async () => {
    const messages = await secondRequestAfterStall({ keepAliveMs: 0, idleMs: 200, stallMs: 600 });
    assert.deepEqual(messages, [{ answers: 1 }, { answers: 2 }]);
  });
});
