// Done-when test of the team service: 3 API nodes and 3 workers as separate processes over one Postgres, 300 jobs
// (test pipeline) submitted across the nodes while random API nodes and workers are killed with SIGKILL and started
// again. Clients submit with an Idempotency-Key and retry on another live node when a node dies under them, and
// follow their job's stream, reconnecting to any live node with Last-Event-ID. Every accepted job must end
// succeeded, exactly once (one result and one end event, one committed run), with intact outputs; every client
// must have seen every event of its job's history once and in order.
import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import type { EngineProcess } from '../support/engine-process';
import { articleText } from '../support/http-calls';
import { type SseReader, type WireEvent, openStream } from '../support/sse-reader';
import { silentMp3 } from '../support/test-pipeline';
import { type Cluster, type WorkerProcess, startCluster } from './cluster';
import { type TestPostgres, startPostgres } from './postgres';

const JOBS = 300;
const MIN_KILLS = 10;
const SUBMITTERS = 25;
const mini = 'article-audio-1-mini';

interface Followed {
  id: string;
  events: WireEvent[];
  reconnects: number;
}

describe('team service under kill -9: 3 API nodes, 3 workers, 300 jobs', () => {
  let postgres: TestPostgres;
  let cluster: Cluster;

  before(async () => {
    postgres = await startPostgres();
    cluster = await startCluster({
      serverUrl: postgres.url,
      apiArgs: ['--queue-depth', '1000', '--heartbeat-s', '1'],
      workerArgs: ['--lease-s', '1', '--concurrency', '2', '--max-crashes', '20'],
      workerEnv: { AA_TEST_STEPS: '3', AA_TEST_STEP_MS: '20' },
    });
    await Promise.all([cluster.startApi(), cluster.startApi(), cluster.startApi()]);
    await Promise.all([cluster.startWorker(), cluster.startWorker(), cluster.startWorker()]);
  });
  after(async () => {
    await cluster?.dispose();
    await postgres?.stop();
  });

  it('every accepted job succeeds exactly once with intact outputs; every stream sees every event once, in order', async () => {
    const token = cluster.tokens[0] as string;
    const apis = [...cluster.apis];
    const apiUp = apis.map(() => true);
    const workers: (WorkerProcess | undefined)[] = [...cluster.workers];
    const pick = (): EngineProcess => {
      const live = apis.filter((_, i) => apiUp[i]);
      return live[Math.floor(Math.random() * live.length)] as EngineProcess;
    };

    /** Retries a request on other live nodes while nodes die under it (the same Idempotency-Key each time). */
    async function submit(n: number): Promise<string> {
      const key = `fleet-${n}-${randomBytes(4).toString('hex')}`;
      const body = JSON.stringify({ model_id: mini, text: `${articleText(55)} Job ${n}.` });
      for (let attempt = 0; ; attempt++) {
        const api = pick();
        try {
          const response = await fetch(`${api.url}/v1/article-to-audio`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
            body,
          });
          const text = await response.text();
          if (response.status === 202) return (JSON.parse(text) as { data: { job_id: string } }).data.job_id;
          if (response.status !== 503) throw new Error(`Submission answered ${response.status}: ${text}`);
        } catch (error) {
          if (attempt > 200 || !(error instanceof TypeError)) throw error;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }

    async function follow(id: string): Promise<Followed> {
      const followed: Followed = { id, events: [], reconnects: 0 };
      for (;;) {
        const api = pick();
        let reader: SseReader;
        try {
          reader = await openStream(`${api.url}/v1/jobs/${id}/stream`, token, followed.events.at(-1)?.id);
        } catch {
          followed.reconnects++;
          await new Promise((resolve) => setTimeout(resolve, 50));
          continue;
        }
        if (reader.response.status === 204) return followed;
        if (reader.response.status !== 200) {
          followed.reconnects++;
          await reader.response.body?.cancel().catch(() => undefined);
          await new Promise((resolve) => setTimeout(resolve, 50));
          continue;
        }
        await reader.done;
        followed.events.push(...reader.events);
        if (followed.events.at(-1)?.event === 'end') return followed;
        followed.reconnects++;
      }
    }

    // The chaos: kill -9 a random API node or worker every JOBS / 14 finished jobs (so the kills are spread over the
    // run however fast the machine is), and start it again in the background while the run goes on.
    const results: Followed[] = [];
    let kills = 0;
    let apiKills = 0;
    let workerKills = 0;
    let finished = false;
    const restarts: Promise<unknown>[] = [];
    const progressed = async (count: number) => {
      while (!finished && results.length < count) await new Promise((resolve) => setTimeout(resolve, 50));
    };
    const chaos = (async () => {
      for (let round = 1; !finished; round++) {
        await progressed(Math.floor((round * JOBS) / 14));
        if (finished) return;
        const upApis = apis.map((_, i) => i).filter((i) => apiUp[i]);
        const upWorkers = workers.map((_, i) => i).filter((i) => workers[i]);
        const killApi = upWorkers.length < 2 || (upApis.length >= 2 && Math.random() < 0.5);
        if (killApi) {
          if (upApis.length < 2) continue;
          const i = upApis[Math.floor(Math.random() * upApis.length)] as number;
          apiUp[i] = false;
          await (apis[i] as EngineProcess).kill9();
          kills++;
          apiKills++;
          restarts.push((apis[i] as EngineProcess).restart().then(() => (apiUp[i] = true)));
        } else {
          const i = upWorkers[Math.floor(Math.random() * upWorkers.length)] as number;
          const worker = workers[i] as WorkerProcess;
          workers[i] = undefined;
          await worker.kill9();
          kills++;
          workerKills++;
          restarts.push(cluster.startWorker().then((started) => (workers[i] = started)));
        }
      }
    })();

    let next = 0;
    await Promise.all(
      Array.from({ length: SUBMITTERS }, async () => {
        while (next < JOBS) {
          const n = next++;
          const id = await submit(n);
          results.push(await follow(id));
        }
      }),
    );
    finished = true;
    await chaos;
    await Promise.all(restarts);

    assert.equal(results.length, JOBS);
    assert.equal(new Set(results.map((r) => r.id)).size, JOBS, 'one job per submission, however often it was retried');
    assert.ok(kills >= MIN_KILLS, `${kills} kills`);
    assert.ok(apiKills > 0 && workerKills > 0, `API nodes killed ${apiKills} times, workers ${workerKills} times`);

    const db = new pg.Client({ connectionString: cluster.databaseUrl });
    await db.connect();
    try {
      for (const followed of results) {
        const ids = followed.events.map((e) => Number(e.id));
        assert.deepEqual(
          ids,
          ids.map((_, i) => i + 1),
          `job ${followed.id}: ids once each and in order`,
        );
        const stored = await db.query<{ id: number; event: string; data: unknown }>(
          'SELECT id, event, data FROM aa_events WHERE job_id = $1 ORDER BY id',
          [followed.id],
        );
        assert.equal(
          followed.events.length,
          stored.rows.length,
          `job ${followed.id}: the client saw its whole history`,
        );
        for (const [i, row] of stored.rows.entries()) {
          const seen = followed.events[i] as WireEvent;
          assert.equal(seen.event, row.event);
          // The store keeps output addresses relative to the node's base URL; the wire carries them absolute.
          const data =
            row.event === 'end'
              ? seen.data
              : (JSON.parse(seen.data.replace(/http:\/\/127\.0\.0\.1:\d+/g, '')) as unknown);
          assert.deepEqual(data, row.data, `job ${followed.id}: event ${row.id} as stored`);
        }
        assert.equal(followed.events.filter((e) => e.event === 'end').length, 1, `job ${followed.id}: one end`);
        assert.equal(followed.events.filter((e) => e.event === 'result').length, 1, `job ${followed.id}: one result`);
        assert.equal(followed.events.at(-1)?.data, 'succeeded', `job ${followed.id} succeeded`);
      }
      const states = await db.query<{ status: string; n: string }>(
        'SELECT status, count(*) AS n FROM aa_jobs GROUP BY status',
      );
      assert.deepEqual(
        states.rows.map((r) => [r.status, Number(r.n)]),
        [['succeeded', JOBS]],
      );
    } finally {
      await db.end();
    }

    // Outputs intact, read through any node.
    for (const followed of results) {
      const result = JSON.parse(followed.events.find((e) => e.event === 'result')?.data ?? '{}') as {
        results: { url: string; content_type: string }[];
      };
      const audio = result.results.find((r) => r.content_type === 'audio/mpeg');
      assert.ok(audio, `job ${followed.id} has audio`);
      const path = new URL(audio.url).pathname;
      const response = await fetch(`${pick().url}${path}`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(response.status, 200);
      assert.deepEqual(Buffer.from(await response.arrayBuffer()), silentMp3(1), `job ${followed.id}: audio intact`);
    }
    const reconnects = results.reduce((sum, r) => sum + r.reconnects, 0);
    const takeovers = results.filter((r) =>
      r.events.some((e) => e.event === 'log' && e.data.includes('stopped unexpectedly')),
    ).length;
    process.stdout.write(
      `# fleet: ${JOBS} jobs, ${kills} kills during the run (${apiKills} API nodes, ${workerKills} workers), ${takeovers} jobs taken over from a killed worker, ${reconnects} stream reconnects\n`,
    );
    assert.ok(takeovers > 0, 'some jobs were running on a killed worker and were finished by another');
  });
});
