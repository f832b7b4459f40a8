// An engine's long-lived resources return to their level after every job (issue 23): a long-lived server or a
// week-long VS Code window runs thousands of jobs, and what one job leaves open adds up until the engine fails every
// job (EMFILE) while /healthz says ok. Counted from outside the engine process (dist/cli.js serve), on Linux:
//
//   descriptors   /proc/<pid>/fd by kind (file, socket, pipe, anon_inode:…): files, folders, sockets, Postgres or
//                 HTTP connections, worker threads' event loops all hold one
//   threads       /proc/<pid>/task: worker threads (synthesis pool, parse and audio workers) and libuv's pool
//   temp files    entries under the engine's own TMPDIR (a fresh folder per engine)
//   handles       the main thread's live timers, immediates, sockets, servers, child processes, worker threads and
//                 message ports, unref'd ones included (resource-probe.cjs, loaded with --require)
//
// The level is taken once the engine has run one job (the synthesis pool's threads start with the first job) and
// is quiet; after each later job the engine must come back to exactly that level. This test's requests close their
// connection (no keep-alive: `call` below), so no client holds a socket of the engine's between checks.
//
// The team service (API node and worker over Postgres) runs the same synthesis code; its worker's Postgres clients
// are not checked here (test/team is where a Postgres is started).
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { type EngineProcess, repoRoot, startEngineProcess } from '../support/engine-process';
import { Answer, type ServiceCalls, type WireJob, waitForJob } from '../support/http-calls';

const mini = 'article-audio-1-mini';
const PROBE = path.join(repoRoot, 'test', 'fault', 'resource-probe.cjs');
const onLinux = process.platform === 'linux';
const hasPrlimit = onLinux && existsSync('/usr/bin/prlimit');

/** One request on a connection of its own, closed with the response (fetch would keep it open for a while). */
function call(
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

function closingCalls(baseUrl: string, token: string): ServiceCalls {
  const auth = { authorization: `Bearer ${token}` };
  const absolute = (p: string) => (p.startsWith('http') ? p : baseUrl + p);
  return {
    submit: (body, headers = {}) =>
      call(`${baseUrl}/v1/article-to-audio`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    get: (p, headers = {}) => call(absolute(p), { headers: { ...auth, ...headers } }),
    post: (p, headers = {}) => call(absolute(p), { method: 'POST', headers: { ...auth, ...headers } }),
  };
}

interface Snapshot {
  descriptors: Record<string, number>;
  threads: number;
  tempEntries: number;
  handles: Record<string, number>;
}

interface ProbedEngine {
  engine: EngineProcess;
  calls: ServiceCalls;
  snapshot(): Promise<Snapshot & { targets: string[] }>;
  dispose(): Promise<void>;
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

async function startProbedEngine(): Promise<ProbedEngine> {
  const temp = mkdtempSync(path.join(os.tmpdir(), 'aa-leaks-'));
  const engineTmp = path.join(temp, 'tmp');
  const probeFile = path.join(temp, 'probe.json');
  execFileSync('mkdir', ['-p', engineTmp]);
  const engine = await startEngineProcess({
    nodeArgs: ['--require', PROBE],
    env: { TMPDIR: engineTmp, RESOURCE_PROBE_FILE: probeFile },
  });
  let seq = 0;
  async function handles(): Promise<Record<string, number>> {
    process.kill(engine.pid, 'SIGUSR2');
    const deadline = Date.now() + 5000;
    for (;;) {
      try {
        const probe = JSON.parse(readFileSync(probeFile, 'utf8')) as {
          seq: number;
          resources: Record<string, number>;
        };
        if (probe.seq > seq) {
          seq = probe.seq;
          return probe.resources;
        }
      } catch {
        // not written yet, or being written
      }
      if (Date.now() > deadline) throw new Error('The resource probe in the engine did not answer');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  return {
    engine,
    calls: closingCalls(engine.url, engine.tokens[0]!),
    async snapshot() {
      const targets: string[] = [];
      for (const fd of readdirSync(`/proc/${engine.pid}/fd`)) {
        try {
          targets.push(readlinkSync(`/proc/${engine.pid}/fd/${fd}`));
        } catch {
          // closed between the listing and the link
        }
      }
      const descriptors: Record<string, number> = {};
      for (const target of targets)
        descriptors[descriptorKind(target)] = (descriptors[descriptorKind(target)] ?? 0) + 1;
      return {
        descriptors,
        threads: readdirSync(`/proc/${engine.pid}/task`).length,
        tempEntries: countEntries(engineTmp),
        handles: await handles(),
        targets: targets.sort(),
      };
    },
    async dispose() {
      await engine.dispose();
      rmSync(temp, { recursive: true, force: true });
    },
  };
}

const sameLevel = (a: Snapshot, b: Snapshot) =>
  JSON.stringify([a.descriptors, a.threads, a.tempEntries, a.handles]) ===
  JSON.stringify([b.descriptors, b.threads, b.tempEntries, b.handles]);

const levelOf = ({ descriptors, threads, tempEntries, handles }: Snapshot): Snapshot => ({
  descriptors,
  threads,
  tempEntries,
  handles,
});

/** The engine's level once it is quiet: the same snapshot twice, 300 ms apart. */
async function quietLevel(probed: ProbedEngine): Promise<Snapshot & { targets: string[] }> {
  let last = await probed.snapshot();
  for (let i = 0; i < 40; i++) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const now = await probed.snapshot();
    if (sameLevel(now, last)) return now;
    last = now;
  }
  return last;
}

/** Waits (up to 10 s) for the engine to come back to `level`; fails with what differs and the new descriptors. */
async function backToLevel(probed: ProbedEngine, level: Snapshot & { targets: string[] }, what: string) {
  const deadline = Date.now() + 10_000;
  let now = await probed.snapshot();
  while (!sameLevel(now, level) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    now = await probed.snapshot();
  }
  if (sameLevel(now, level)) return;
  // What is open now and was not then (a folder open twice counts twice).
  const before = new Map<string, number>();
  for (const target of level.targets) before.set(target, (before.get(target) ?? 0) + 1);
  const added = now.targets.filter((target) => {
    const left = before.get(target) ?? 0;
    before.set(target, left - 1);
    return left <= 0;
  });
  assert.deepEqual(
    levelOf(now),
    levelOf(level),
    `${what}: the engine did not come back to its level; new descriptors: ${added.slice(0, 10).join(', ')}${added.length > 10 ? ` and ${added.length - 10} more` : ''}`,
  );
}

const finished = (calls: ServiceCalls, id: string, timeoutMs = 60_000): Promise<WireJob> =>
  waitForJob(calls, id, (job) => job.status === 'succeeded' || job.status === 'failed', timeoutMs);

async function run(calls: ServiceCalls, text: string, timeoutMs?: number): Promise<WireJob> {
  return finished(calls, (await calls.submit({ model_id: mini, text })).jobId, timeoutMs);
}

const succeeded = (job: WireJob) =>
  assert.equal(job.status, 'succeeded', `job ${job.id}: ${job.status} ${JSON.stringify(job.error)}`);

/** `count` short sentences, each its own line for Flite. */
const sentences = (count: number) => Array.from({ length: count }, (_, i) => `Line ${i + 1} is here.`).join(' ');

const TINY = 'A small note to read aloud. It has two short sentences and nothing else.';

describe('fault: resources return to their level after each job', { skip: !onLinux && 'reads /proc' }, () => {
  it(
    'under a limit of 400 descriptors, a job of 2,500 sentences and then another job both succeed',
    { skip: !hasPrlimit && 'reads /proc' },
    async () => {
      const probed = await startProbedEngine();
      try {
        // As `prlimit --nofile=400:400 article-audio serve` (node raises its soft limit to the hard one at start, so
        // the limit must be the hard one too; set on the running engine, before any job).
        execFileSync('prlimit', ['--pid', String(probed.engine.pid), '--nofile=400:400']);
        succeeded(await run(probed.calls, TINY));
        const level = await quietLevel(probed);
        const long = await run(probed.calls, sentences(2500), 240_000);
        succeeded(long);
        await backToLevel(probed, level, 'after the job of 2,500 sentences');
        succeeded(await run(probed.calls, sentences(20)));
        await backToLevel(probed, level, 'after the job that followed');
      } finally {
        await probed.dispose();
      }
    },
  );

  it('an engine that ran 200 jobs holds what it held after its first', async () => {
    const probed = await startProbedEngine();
    try {
      succeeded(await run(probed.calls, TINY));
      const level = await quietLevel(probed);
      // One at a time first: the level is checked after each job.
      for (let i = 0; i < 5; i++) {
        succeeded(await run(probed.calls, `${TINY} Job ${i + 2}.`));
        await backToLevel(probed, level, `after job ${i + 2}`);
      }
      // The rest four at a time (jobs that overlap), checked at the end.
      let next = 7;
      await Promise.all(
        [0, 1, 2, 3].map(async () => {
          while (next <= 200) {
            const n = next++;
            succeeded(await run(probed.calls, `${TINY} Job ${n}.`));
          }
        }),
      );
      await backToLevel(probed, level, 'after 200 jobs');
    } finally {
      await probed.dispose();
    }
  });
});
