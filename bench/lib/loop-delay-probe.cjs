// Loaded into the engine process by the parts benchmark only (`node --require bench/lib/loop-delay-probe.cjs
// dist/cli.js serve`), never in production: it watches the engine's main thread from inside, without touching the
// engine's code. Every 250 ms it prints one line to stderr, `loop-delay-probe {"at":<epoch ms>,"maxMs":<ms>}`, with the
// longest event-loop delay of that window (perf_hooks.monitorEventLoopDelay, 10 ms resolution: a stall shows as a
// delay of its length). The benchmark reads the lines back from the engine's stderr and keeps the windows of the
// first seconds of a job.
'use strict';
const { isMainThread } = require('node:worker_threads');

if (isMainThread) {
  const { monitorEventLoopDelay, performance } = require('node:perf_hooks');
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  const timer = setInterval(() => {
    const maxMs = histogram.max / 1e6;
    histogram.reset();
    process.stderr.write(
      `loop-delay-probe ${JSON.stringify({ at: Math.round(performance.timeOrigin + performance.now()), maxMs: Math.round(maxMs * 10) / 10 })}\n`,
    );
  }, 250);
  timer.unref();
}

// Diagnosis only: LOOP_DELAY_PROBE_PROFILE=<file> takes a CPU profile of the main thread from the engine's start for
// LOOP_DELAY_PROBE_PROFILE_S seconds (default 30) and writes it there (open it in Chrome's DevTools).
if (isMainThread && process.env.LOOP_DELAY_PROBE_PROFILE) {
  const inspector = require('node:inspector');
  const { writeFileSync } = require('node:fs');
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable', () => {
    session.post('Profiler.setSamplingInterval', { interval: 500 }, () => {
      session.post('Profiler.start', () => {
        const stop = setTimeout(
          () =>
            session.post('Profiler.stop', (error, result) => {
              if (!error) writeFileSync(process.env.LOOP_DELAY_PROBE_PROFILE, JSON.stringify(result.profile));
            }),
          Number(process.env.LOOP_DELAY_PROBE_PROFILE_S || 30) * 1000,
        );
        stop.unref();
      });
    });
  });
}

// LOOP_DELAY_PROBE_BUSY_LOOPS=<n> starts n CPU-bound processes from the engine itself, so that they share its session.
// On Linux with autogroup (kernel.sched_autogroup_enabled=1) the scheduler first shares the CPU between sessions and
// applies nice values only within one: loops started by the benchmark would sit in another session than the engine
// (which the test helper starts with setsid) and meet it only group against group. From the engine's session they
// compete with its threads directly, as every process does on a kernel without autogroup or when the work shares the
// engine's session: the case the issue measured. Each loop ends by itself after LOOP_DELAY_PROBE_BUSY_S seconds
// (default 300) and is killed when the engine exits; their pids are printed (`loop-delay-probe-busy {"pids":[…]}`)
// so that the benchmark kills them too.
if (isMainThread && Number(process.env.LOOP_DELAY_PROBE_BUSY_LOOPS) > 0) {
  const { spawn } = require('node:child_process');
  const seconds = Number(process.env.LOOP_DELAY_PROBE_BUSY_S || 300);
  const loops = [];
  for (let i = 0; i < Number(process.env.LOOP_DELAY_PROBE_BUSY_LOOPS); i++) {
    const child = spawn(
      process.execPath,
      ['-e', `const end = Date.now() + ${seconds * 1000}; while (Date.now() < end) {}`],
      {
        stdio: 'ignore',
      },
    );
    child.unref();
    loops.push(child);
  }
  process.on('exit', () => {
    for (const child of loops) child.kill('SIGKILL');
  });
  process.stderr.write(`loop-delay-probe-busy ${JSON.stringify({ pids: loops.map((c) => c.pid) })}\n`);
}
