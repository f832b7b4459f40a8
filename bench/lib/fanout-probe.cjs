// Loaded into the engine process by the service benchmark only (`node --require bench/lib/fanout-probe.cjs
// dist/cli.js serve`), never in production: it times the engine's own side of an event's fan-out, from outside the
// engine's code. It wraps http.ServerResponse#write and, for every SSE chunk (it starts with `id: `), notes per stream
// path and first event id when the first and the last follower's write returned, when the last one reached the kernel
// (Node sends a chunked response's write on the next tick), how many writes there were, and the log event's
// created_at. Each event is printed to stderr as one `fanout-probe {json}` line once no write has touched
// it for a while; the benchmark reads them back from the engine's stderr.
'use strict';
const { isMainThread } = require('node:worker_threads');

if (isMainThread) {
  const http = require('node:http');
  const { performance } = require('node:perf_hooks');
  const write = http.ServerResponse.prototype.write;
  /** `${path} ${first event id}` -> { path, id, event, createdAt, first, last, flushed, writes, touched } */
  const events = new Map();

  http.ServerResponse.prototype.write = function probedWrite(chunk, ...rest) {
    if (rest.length > 0 || typeof chunk !== 'string' || !chunk.startsWith('id: '))
      return write.call(this, chunk, ...rest);
    const now = performance.timeOrigin + performance.now();
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
        first: now,
        last: now,
        flushed: 0,
        writes: 0,
      };
      events.set(key, entry);
    }
    const probed = entry;
    const result = write.call(this, chunk, () => {
      probed.flushed = Math.max(probed.flushed, performance.timeOrigin + performance.now());
    });
    probed.last = performance.timeOrigin + performance.now();
    probed.writes++;
    probed.touched = Date.now();
    return result;
  };

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
