// Loaded into the engine process by the service benchmark only (`node --require bench/lib/fanout-probe.cjs
// dist/cli.js serve`), never in production: it times the engine's own side of an event's fan-out from outside the
// engine's code. It wraps http.ServerResponse#write and, for every SSE chunk (it starts with `id: `), notes per
// stream path and first event id: the log event's created_at, when the first and the last follower's write call
// returned, and when each follower's socket write was done (Node sends a chunked response's write on the next tick,
// as one writev; on loopback the follower's socket has the bytes when that call returns). Each event is printed to
// stderr as one `fanout-probe {json}` line once no write has touched it for a while; the benchmark reads them back
// from the engine's stderr.
'use strict';
const { isMainThread } = require('node:worker_threads');

if (isMainThread) {
  const http = require('node:http');
  const net = require('node:net');
  const { performance } = require('node:perf_hooks');
  const now = () => performance.timeOrigin + performance.now();
  const write = http.ServerResponse.prototype.write;
  /** `${path} ${first event id}` -> { path, id, event, createdAt, first, last, sent, writes, touched } */
  const events = new Map();
  const pending = Symbol('fanout-probe event');

  http.ServerResponse.prototype.write = function probedWrite(chunk, ...rest) {
    if (typeof chunk !== 'string' || !chunk.startsWith('id: ')) return write.call(this, chunk, ...rest);
    const first = now();
    const id = Number(chunk.slice(4, chunk.indexOf('\n')));
    const path = this.req ? this.req.url : '';
    const key = `${path} ${id}`;
    let entry = events.get(key);
    if (!entry) {
      const event = /^event: (\w+)$/m.exec(chunk);
      const created = /"created_at":"([^"]+)"/.exec(chunk);
      entry = {
        path,
        id,
        event: event ? event[1] : '',
        createdAt: created ? Date.parse(created[1]) : null,
        first,
        last: first,
        sent: [],
        writes: 0,
      };
      events.set(key, entry);
    }
    if (this.socket) this.socket[pending] = entry;
    const result = write.call(this, chunk, ...rest);
    entry.last = now();
    entry.writes++;
    entry.touched = Date.now();
    return result;
  };

  for (const method of ['_writev', '_write']) {
    const original = net.Socket.prototype[method];
    net.Socket.prototype[method] = function probedSocketWrite(...args) {
      const result = original.apply(this, args);
      const entry = this[pending];
      if (entry) {
        this[pending] = undefined;
        entry.sent.push(Math.round(now() * 1000) / 1000);
        entry.touched = Date.now();
      }
      return result;
    };
  }

  const timer = setInterval(() => {
    const quiet = Date.now() - 300;
    for (const [key, entry] of events) {
      if (entry.touched > quiet) continue;
      events.delete(key);
      const { touched: _touched, ...line } = entry;
      process.stderr.write(`fanout-probe ${JSON.stringify(line)}\n`);
    }
  }, 200);
  timer.unref();
}
