// Loaded into an engine process by test/fault/resource-leaks.test.ts only (`node --require …/resource-probe.cjs
// dist/cli.js serve`), never in production. It counts the main thread's live asynchronous resources by kind
// (timers, immediates, sockets, servers, child processes, worker threads, message ports...) from
// async_hooks' init and destroy: unlike process.getActiveResourcesInfo() it also counts unref'd timers and handles,
// the kind a leak in a long-lived engine hides behind. On SIGUSR2 it writes `{"seq": n, "resources": {type: count}}`
// to the file named by RESOURCE_PROBE_FILE, with `"timers": {"<callback's name> <delay> ms": count}` to tell which
// timer a level missed by (the message of test/support/resource-level.ts's backToLevel). Worker threads load it too (they inherit node's flags) and do nothing:
// what they hold is seen from outside (their OS threads and descriptors, in /proc) and as the main thread's WORKER
// and MESSAGEPORT resources.
'use strict';
const asyncHooks = require('node:async_hooks');
const { writeFileSync } = require('node:fs');
const { isMainThread } = require('node:worker_threads');

const file = process.env.RESOURCE_PROBE_FILE;
if (file && isMainThread) {
  // Resources that end when the engine ends them (cleared, closed, terminated). Others (requests, promises, ticks,
  // FileHandle objects) are destroyed when the garbage collector gets to them, so their count says nothing about a
  // leak; an open file is a descriptor, counted from /proc.
  const COUNTED = new Set([
    'Timeout',
    'Immediate',
    'TCPWRAP',
    'TCPSERVERWRAP',
    'PIPEWRAP',
    'PIPESERVERWRAP',
    'UDPWRAP',
    'PROCESSWRAP',
    'SIGNALWRAP',
    'TTYWRAP',
    'FSEVENTWRAP',
    'STATWATCHER',
    'WORKER',
    'MESSAGEPORT',
  ]);
  /** asyncId -> type, for the resources alive now. */
  const live = new Map();
  /** asyncId -> the timer's callback and delay, for the timers alive now. */
  const timers = new Map();
  asyncHooks
    .createHook({
      init(asyncId, type, _trigger, resource) {
        if (!COUNTED.has(type)) return;
        live.set(asyncId, type);
        if (type === 'Timeout')
          timers.set(asyncId, `${resource._onTimeout?.name || 'anonymous'} ${resource._idleTimeout} ms`);
      },
      destroy(asyncId) {
        live.delete(asyncId);
        timers.delete(asyncId);
      },
    })
    .enable();
  let seq = 0;
  process.on('SIGUSR2', () => {
    const resources = {};
    for (const type of live.values()) resources[type] = (resources[type] ?? 0) + 1;
    const named = {};
    for (const timer of timers.values()) named[timer] = (named[timer] ?? 0) + 1;
    writeFileSync(file, JSON.stringify({ seq: ++seq, resources, timers: named }));
  });
}
