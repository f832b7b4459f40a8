// Every process a test starts ends with the test, whatever happens: the test passes or fails, the test runner ends
// the file with SIGTERM (a cancelled or timed-out file), or someone presses Ctrl+C. A process registered here is
// killed with SIGKILL (its whole process group when it was started with `detached: true`) when this process exits
// and when it receives SIGINT, SIGTERM or SIGHUP (whose default action would skip 'exit' handlers and leave it
// running: issue 29 found three orphaned `cli.js serve` after a run).
//
// `npm test` (scripts/test-all.mjs) also gives every process it starts an environment variable naming its run
// (RUN_MARKER below); children inherit it, and the run fails if any process carrying it is alive at the end.
// Helpers that spawn with an environment of their own pass markerEnv() along.

/** The environment variable that marks the processes of one `npm test` run. */
export const RUN_MARKER = 'AA_TEST_RUN_ID';

/** `{ AA_TEST_RUN_ID: id }` during an `npm test` run, else `{}`: add it to a child's own `env`. */
export function markerEnv() {
  const id = process.env[RUN_MARKER];
  return id ? { [RUN_MARKER]: id } : {};
}

/** @type {Map<import('node:child_process').ChildProcess, boolean>} child → killed as a process group */
const owned = new Map();
let hooked = false;

function killOwned() {
  for (const [child, group] of owned) {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) continue;
    try {
      if (group) process.kill(-child.pid, 'SIGKILL');
      else child.kill('SIGKILL');
    } catch {
      // gone already
    }
  }
}

function hook() {
  if (hooked) return;
  hooked = true;
  process.on('exit', killOwned);
  for (const [signal, number] of [
    ['SIGINT', 2],
    ['SIGTERM', 15],
    ['SIGHUP', 1],
  ]) {
    process.once(signal, () => {
      killOwned();
      process.exit(128 + number);
    });
  }
}

/**
 * Ends `child` with this process. `group`: it was spawned with `detached: true` and its whole process group goes.
 * @template {import('node:child_process').ChildProcess} T
 * @param {T} child
 * @param {{ group?: boolean }} [options]
 * @returns {T}
 */
export function ownProcess(child, options = {}) {
  hook();
  owned.set(child, options.group === true);
  child.once('exit', () => {
    // A group leader's children may outlive it; the group is killed when it exits on its own too.
    if (options.group === true && child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is empty
      }
    }
    owned.delete(child);
  });
  return child;
}
