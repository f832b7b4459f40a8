// What a process holds, counted from outside it (Linux: /proc), for checks that a long-lived engine or worker comes
// back to the same level after every job (issue 23; test/fault/resource-leaks.test.ts, test/team/resource-leaks.test.ts):
//
//   descriptors   /proc/<pid>/fd by kind (file, socket, pipe, anon_inode:…): open files and folders, sockets
//                 (HTTP and Postgres connections among them), worker threads' event loops all hold one
//   threads       /proc/<pid>/task: worker threads (synthesis pool, parse and audio workers) and libuv's pool
//   temp files    entries under the process's own TMPDIR (a fresh folder per process)
//   handles       the main thread's live timers, immediates, sockets, servers, child processes, worker threads and
//                 message ports, unref'd ones included (test/fault/resource-probe.cjs, loaded with --require)
//   extra         anything else the caller counts (e.g. a database's connections)
import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from './engine-process';
import { Answer, type ServiceCalls } from './http-calls';

export const RESOURCE_PROBE = path.join(repoRoot, 'test', 'fault', 'resource-probe.cjs');

export interface Level {
  descriptors: Record<string, number>;
  threads: number;
  tempEntries: number;
  handles: Record<string, number>;
  extra: Record<string, number>;
}

export interface Snapshot extends Level {
  /** Every open descriptor's target, for the message when a level is missed. */
  targets: string[];
  /** The main thread's timers by callback and delay (the probe's), for the message when a level is missed. */
  timers: Record<string, number>;
}

export interface ProcessProbe {
  snapshot(): Promise<Snapshot>;
}

/** A temp folder and a probe file for one process, and the environment that points it at them. */
export interface ProbeFiles {
  tempDir: string;
  probeFile: string;
  env: Record<string, string>;
  remove(): void;
}

export function probeFiles(): ProbeFiles {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'aa-leaks-'));
  const tempDir = path.join(dir, 'tmp');
  mkdirSync(tempDir);
  const probeFile = path.join(dir, 'probe.json');
  return {
    tempDir,
    probeFile,
    env: { TMPDIR: tempDir, RESOURCE_PROBE_FILE: probeFile },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function descriptorKind(target: string): string {
  const special = /^(socket|pipe|anon_inode):/.exec(target);
  if (special) return special[1] === 'anon_inode' ? target : special[1]!;
  return 'file';
}

function countEntries(dir: string): number {
  let count = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    count++;
    if (entry.isDirectory()) count += countEntries(path.join(dir, entry.name));
  }
  return count;
}

/**
 * Counts what process `pid` holds. `files` (optional) are its TMPDIR and probe file (then the process must run
 * with RESOURCE_PROBE loaded, or the snapshot waits for the probe in vain); `extra` adds the caller's own counts.
 */
export function probeProcess(
  pid: number,
  files?: { tempDir: string; probeFile: string },
  extra?: () => Promise<Record<string, number>>,
): ProcessProbe {
  let seq = 0;
  async function handles(): Promise<{ resources: Record<string, number>; timers: Record<string, number> }> {
    if (!files) return { resources: {}, timers: {} };
    process.kill(pid, 'SIGUSR2');
    const deadline = Date.now() + 5000;
    for (;;) {
      try {
        const probe = JSON.parse(readFileSync(files.probeFile, 'utf8')) as {
          seq: number;
          resources: Record<string, number>;
          timers?: Record<string, number>;
        };
        if (probe.seq > seq) {
          seq = probe.seq;
          return { resources: probe.resources, timers: probe.timers ?? {} };
        }
      } catch {
        // not written yet, or being written
      }
      if (Date.now() > deadline) throw new Error(`The resource probe in process ${pid} did not answer`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  return {
    async snapshot() {
      const targets: string[] = [];
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        try {
          targets.push(readlinkSync(`/proc/${pid}/fd/${fd}`));
        } catch {
          // closed between the listing and the link
        }
      }
      const descriptors: Record<string, number> = {};
      for (const target of targets)
        descriptors[descriptorKind(target)] = (descriptors[descriptorKind(target)] ?? 0) + 1;
      const { resources, timers } = await handles();
      return {
        descriptors,
        threads: readdirSync(`/proc/${pid}/task`).length,
        tempEntries: files ? countEntries(files.tempDir) : 0,
        handles: resources,
        extra: extra ? await extra() : {},
        targets: targets.sort(),
        timers,
      };
    },
  };
}

const levelOf = ({ descriptors, threads, tempEntries, handles, extra }: Level): Level => ({
  descriptors,
  threads,
  tempEntries,
  handles,
  extra,
});

const sameLevel = (a: Level, b: Level) => JSON.stringify(levelOf(a)) === JSON.stringify(levelOf(b));

/** The level once the process is quiet: the same snapshot twice, 300 ms apart (or the last of 40 tries). */
export async function quietLevel(probe: ProcessProbe): Promise<Snapshot> {
  let last = await probe.snapshot();
  for (let i = 0; i < 40; i++) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const now = await probe.snapshot();
    if (sameLevel(now, last)) return now;
    last = now;
  }
  return last;
}

/** Every count of `now` is at most the same count of `level` (and nothing new is counted). */
function notAbove(now: Level, level: Level): boolean {
  const within = (a: Record<string, number>, b: Record<string, number>) =>
    Object.entries(a).every(([key, n]) => n <= (b[key] ?? 0));
  return (
    within(now.descriptors, level.descriptors) &&
    now.threads <= level.threads &&
    now.tempEntries <= level.tempEntries &&
    within(now.handles, level.handles) &&
    within(now.extra, level.extra)
  );
}

/**
 * Waits (10 s, or `timeoutMs`) for the process to come back to `level`; fails with what differs and the new
 * descriptors. `atMost`: back to that level or below, for a process that also lets go of what it held at the level
 * (a database pool closes its idle clients after a while).
 */
export async function backToLevel(
  probe: ProcessProbe,
  level: Snapshot,
  what: string,
  { atMost = false, timeoutMs = 10_000 }: { atMost?: boolean; timeoutMs?: number } = {},
): Promise<void> {
  const reached = (now: Level) => (atMost ? notAbove(now, level) : sameLevel(now, level));
  const deadline = Date.now() + timeoutMs;
  let now = await probe.snapshot();
  while (!reached(now) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    now = await probe.snapshot();
  }
  if (reached(now)) return;
  // What is open now and was not then (a folder open twice counts twice).
  const before = new Map<string, number>();
  for (const target of level.targets) before.set(target, (before.get(target) ?? 0) + 1);
  const added = now.targets.filter((target) => {
    const left = before.get(target) ?? 0;
    before.set(target, left - 1);
    return left <= 0;
  });
  const timers =
    JSON.stringify(now.timers) === JSON.stringify(level.timers)
      ? ''
      : `; timers at the level: ${JSON.stringify(level.timers)}, now: ${JSON.stringify(now.timers)}`;
  assert.deepEqual(
    levelOf(now),
    levelOf(level),
    `${what}: not back to its level; new descriptors: ${added.slice(0, 10).join(', ')}${added.length > 10 ? ` and ${added.length - 10} more` : ''}${timers}`,
  );
}

/**
 * One request on a connection of its own, closed with the response (fetch would keep it open for a while). A GET (or
 * a submission with its Idempotency-Key) whose fresh connection is reset is asked once more: this suite counts the engine's resources, and a reset seen here
 * once at load 10 (a new connection, not a reused one) is the connection suites' subject (hostile-network.test.ts),
 * not this one's.
 */
async function call(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<Answer> {
  try {
    return await callOnce(url, init);
  } catch (error) {
    const repeatable = (init.method ?? 'GET') === 'GET' || init.headers?.['idempotency-key'] !== undefined;
    if (!repeatable || (error as NodeJS.ErrnoException).code !== 'ECONNRESET') throw error;
    return callOnce(url, init);
  }
}

function callOnce(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: init.method ?? 'GET', headers: init.headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers))
          if (typeof value === 'string') headers.set(name, value);
        resolve(new Answer(res.statusCode ?? 0, headers, text));
      });
      res.on('error', reject);
    });
    request.on('error', reject);
    request.end(init.body);
  });
}

/** serviceCalls whose connections close after each answer: no client holds an engine's socket between checks. */
export function closingCalls(baseUrl: string, token: string): ServiceCalls {
  const auth = { authorization: `Bearer ${token}` };
  const absolute = (p: string) => (p.startsWith('http') ? p : baseUrl + p);
  return {
    submit: (body, headers = {}) =>
      call(`${baseUrl}/v1/article-to-audio`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': randomUUID(), ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    get: (p, headers = {}) => call(absolute(p), { headers: { ...auth, ...headers } }),
    post: (p, headers = {}) => call(absolute(p), { method: 'POST', headers: { ...auth, ...headers } }),
  };
}

/** `count` short sentences, each its own line for Flite. */
export const sentences = (count: number) => Array.from({ length: count }, (_, i) => `Line ${i + 1} is here.`).join(' ');
