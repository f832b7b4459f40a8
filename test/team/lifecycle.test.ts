// The team service's life-cycle cases, every part real (Postgres, s3rver, API nodes and workers as processes):
// a worker on SIGTERM finishes its job, or gives it back for another worker to do exactly once; an API node on
// SIGTERM ends its streams and the clients resume on another node without a gap or a repeat; finished jobs expire
// with their rows, events and files (shared folder and S3); parts are announced through Postgres and served from
// the output storage by any API node while the job still runs.
import * as assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { after, before, describe, it } from 'node:test';
import { articleText, serviceCalls, waitForJob } from '../support/http-calls';
import { type SseReader, type WireEvent, openStream } from '../support/sse-reader';
import { silentMp3 } from '../support/test-pipeline';
import { type Cluster, type ClusterOptions, startCluster } from './cluster';
import { type TestPostgres, startPostgres } from './postgres';
import { type TestS3, startS3 } from './s3';

const mini = 'article-audio-1-mini';

function assertGapless(events: readonly WireEvent[]): void {
  const ids = events.map((e) => Number(e.id));
  assert.deepEqual(
    ids,
    ids.map((_, i) => i + 1),
    'ids 1, 2, 3, … without gaps or repeats',
  );
}

function progressed(stream: SseReader): boolean {
  return stream.events.some((e) => e.event === 'status' && /"progress":0\.[1-9]/.test(e.data));
}

describe('team service: SIGTERM, retention and parts', () => {
  let postgres: TestPostgres;
  let s3: TestS3;
  const clusters: Cluster[] = [];

  async function cluster(options: Omit<ClusterOptions, 'serverUrl'>): Promise<Cluster> {
    const started = await startCluster({ serverUrl: postgres.url, ...options });
    clusters.push(started);
    return started;
  }

  before(async () => {
    postgres = await startPostgres();
    s3 = await startS3();
  });
  after(async () => {
    for (const c of clusters) await c.dispose();
    await s3?.stop();
    await postgres?.stop();
  });

  it('a worker on SIGTERM finishes a job that ends within --stop-grace-s, then exits', async () => {
    const team = await cluster({
      workerArgs: ['--lease-s', '5', '--concurrency', '1', '--stop-grace-s', '60'],
      workerEnv: { AA_TEST_STEPS: '20', AA_TEST_STEP_MS: '50' },
    });
    const api = await team.startApi();
    const worker = await team.startWorker();
    const calls = serviceCalls(api.url, team.tokens[0] as string);
    const id = (await calls.submit({ model_id: mini, text: articleText() })).jobId;
    const stream = await openStream(`${api.url}/v1/jobs/${id}/stream`, team.tokens[0] as string);
    await stream.until(() => progressed(stream), 'progress from the worker', 60_000);
    const exit = await worker.stop();
    assert.equal(exit.code, 0, worker.stderr);
    await stream.done;
    assertGapless(stream.events);
    assert.equal(stream.events.at(-1)?.data, 'succeeded', 'the stopping worker finished the job');
    assert.ok(!stream.events.some((e) => e.event === 'log' && e.data.includes('stopping')), 'it was not given back');
    assert.equal(stream.events.filter((e) => e.event === 'result').length, 1);
  });

  it('a worker on SIGTERM gives back a job that runs past --stop-grace-s; another worker completes it exactly once', async () => {
    const team = await cluster({
      workerArgs: ['--lease-s', '5', '--concurrency', '1', '--stop-grace-s', '0.2'],
      workerEnv: { AA_TEST_STEPS: '40', AA_TEST_STEP_MS: '50' },
    });
    const api = await team.startApi();
    const first = await team.startWorker();
    const calls = serviceCalls(api.url, team.tokens[0] as string);
    const id = (await calls.submit({ model_id: mini, text: articleText() })).jobId;
    const stream = await openStream(`${api.url}/v1/jobs/${id}/stream`, team.tokens[0] as string);
    await stream.until(() => progressed(stream), 'progress from the first worker', 60_000);
    const exit = await first.stop();
    assert.equal(exit.code, 0, first.stderr);
    // Given back at once (not after the lease): queued again, no worker holds it.
    const [row] = await team.query<{ status: string; lease_token: string | null }>(
      'SELECT status, lease_token FROM aa_jobs WHERE id = $1',
      [id],
    );
    assert.deepEqual(row, { status: 'queued', lease_token: null });
    await team.startWorker();
    await stream.done;
    assertGapless(stream.events);
    assert.ok(
      stream.events.some((e) => e.event === 'log' && /worker running this job is stopping/.test(e.data)),
      'the release is in the stream',
    );
    assert.equal(stream.events.filter((e) => e.event === 'result').length, 1, 'one result');
    assert.equal(stream.events.filter((e) => e.event === 'end').length, 1, 'one end');
    assert.equal(stream.events.at(-1)?.data, 'succeeded');
    const job = await waitForJob(calls, id, (j) => j.status === 'succeeded');
    const audio = await fetch(job.outputs?.results[0]?.url as string, {
      headers: { authorization: `Bearer ${team.tokens[0]}` },
    });
    assert.deepEqual(Buffer.from(await audio.arrayBuffer()), silentMp3(1), 'outputs intact');
    // Exactly one run's files: the record names one set, and the folder holds only that set.
    const outputs = job.outputs?.results ?? [];
    const stored = readdirSync(path.join(team.storage, id), { recursive: true, withFileTypes: true }).filter((e) =>
      e.isFile(),
    );
    assert.equal(stored.length, outputs.length, stored.map((e) => path.join(e.parentPath, e.name)).join('\n'));
  });

  it('an API node on SIGTERM ends its streams and exits; the clients resume on another node, nothing lost or repeated', async () => {
    const team = await cluster({
      apiArgs: ['--heartbeat-s', '0.5'],
      workerArgs: ['--lease-s', '5', '--concurrency', '2'],
      workerEnv: { AA_TEST_STEPS: '100', AA_TEST_STEP_MS: '50' },
    });
    const [a, b] = await Promise.all([team.startApi(), team.startApi()]);
    await team.startWorker();
    const token = team.tokens[0] as string;
    const calls = serviceCalls(a.url, token);
    const ids = [
      (await calls.submit({ model_id: mini, text: articleText() })).jobId,
      (await calls.submit({ model_id: mini, text: articleText(80) })).jobId,
    ];
    const streams = await Promise.all(ids.map((id) => openStream(`${a.url}/v1/jobs/${id}/stream`, token)));
    for (const stream of streams) await stream.until(() => progressed(stream), 'progress', 60_000);
    const exit = await a.stop('SIGTERM');
    assert.equal(exit.code, 0, a.stderr);
    for (const [i, stream] of streams.entries()) {
      await stream.done;
      assert.equal(stream.error, undefined, 'the node ended the stream; the connection was not cut');
      assert.ok(!stream.events.some((e) => e.event === 'end'), 'the job was still running when the node stopped');
      const rest = await openStream(`${b.url}/v1/jobs/${ids[i]}/stream`, token, stream.lastId);
      await rest.done;
      const all = [...stream.events, ...rest.events];
      assertGapless(all);
      assert.equal(all.at(-1)?.data, 'succeeded');
      assert.equal(all.filter((e) => e.event === 'end').length, 1);
    }
  });

  for (const kind of ['dir', 's3'] as const) {
    it(`removes a finished job after --retention-s: its row, its events and its files (${kind})`, async () => {
      const team = await cluster({
        ...(kind === 's3' ? { s3 } : {}),
        apiArgs: ['--retention-s', '1'],
        workerArgs: ['--lease-s', '5', '--concurrency', '1'],
        workerEnv: { AA_TEST_STEPS: '2', AA_TEST_STEP_MS: '10', AA_TEST_PARTS: '2' },
      });
      const api = await team.startApi();
      await team.startWorker();
      const calls = serviceCalls(api.url, team.tokens[0] as string);
      const id = (await calls.submit({ model_id: mini, text: articleText() })).jobId;
      const done = await waitForJob(calls, id, (j) => j.status === 'succeeded', 60_000);
      const url = done.outputs?.results[0]?.url as string;
      const objects = async (): Promise<string[]> => {
        if (kind === 'dir') {
          const folder = path.join(team.storage, id);
          if (!existsSync(folder)) return [];
          return readdirSync(folder, { recursive: true, withFileTypes: true })
            .filter((e) => e.isFile())
            .map((e) => e.name);
        }
        const [bucket, ...prefix] = team.storage.replace('s3://', '').split('/');
        const client = new S3Client({
          endpoint: s3.endpoint,
          forcePathStyle: true,
          region: s3.env.AWS_REGION,
          credentials: {
            accessKeyId: s3.env.AWS_ACCESS_KEY_ID as string,
            secretAccessKey: s3.env.AWS_SECRET_ACCESS_KEY as string,
          },
        });
        try {
          const listed = await client.send(
            new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix.join('/')}/${id}/` }),
          );
          return (listed.Contents ?? []).map((o) => o.Key ?? '');
        } finally {
          client.destroy();
        }
      };
      // Right after it finished: its files are there (the four outputs and the parts' files).
      const before = await objects();
      assert.ok(before.length >= 4 + 4, `files of the job: ${before.join(', ')}`);

      // Expired: gone for the client, and gone from the database and the storage.
      let answer = await calls.get(`/v1/jobs/${id}`);
      while (answer.status === 200) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        answer = await calls.get(`/v1/jobs/${id}`);
      }
      assert.equal(answer.status, 404);
      assert.equal((await calls.get(url)).status, 404);
      for (;;) {
        const rows = await team.query<{ jobs: string; events: string }>(
          'SELECT (SELECT count(*) FROM aa_jobs WHERE id = $1) AS jobs, (SELECT count(*) FROM aa_events WHERE job_id = $1) AS events',
          [id],
        );
        if (rows[0]?.jobs === '0') {
          assert.equal(rows[0].events, '0', 'its events went with it');
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.deepEqual(await objects(), [], 'its files were removed before its row');
    });
  }

  it('announces parts through Postgres; any API node serves them from S3 while the job runs', async () => {
    const gate = path.join(os.tmpdir(), `aa-part-gate-${process.pid}-${Date.now()}`);
    const team = await cluster({
      s3,
      workerArgs: ['--lease-s', '5', '--concurrency', '1'],
      workerEnv: { AA_TEST_STEPS: '4', AA_TEST_STEP_MS: '20', AA_TEST_PARTS: '2', AA_TEST_PART_GATE: gate },
    });
    const [a, b] = await Promise.all([team.startApi(), team.startApi()]);
    await team.startWorker();
    const token = team.tokens[0] as string;
    const id = (await serviceCalls(a.url, token).submit({ model_id: mini, text: articleText() })).jobId;
    const onB = serviceCalls(b.url, token);
    const stream = await openStream(`${b.url}/v1/jobs/${id}/stream`, token);
    const first = await stream.next((e) => e.event === 'result', 'the first part', 60_000);
    const data = JSON.parse(first.data) as { part?: { index: number; url: string; final: boolean } };
    assert.ok(data.part, `a part result: ${first.data}`);
    assert.equal(data.part.index, 0);
    assert.equal(data.part.final, false);
    // The worker waits at the gate: the job is still running while both nodes serve the part.
    assert.equal((await onB.get(`/v1/jobs/${id}`)).job.status, 'processing');
    const whole = silentMp3(1);
    const bytes: Buffer[] = [];
    for (const node of [a, b]) {
      const partUrl = data.part.url.startsWith('http') ? new URL(data.part.url).pathname : data.part.url;
      const response = await fetch(`${node.url}${partUrl}`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(response.status, 200, node.url);
      assert.equal(response.headers.get('content-type'), 'audio/mpeg');
      bytes.push(Buffer.from(await response.arrayBuffer()));
    }
    assert.ok((bytes[0] as Buffer).length > 0);
    assert.deepEqual(bytes[0], bytes[1], 'the same bytes from both nodes');
    assert.deepEqual(bytes[0], whole.subarray(0, (bytes[0] as Buffer).length), 'the first slice of the audio');
    const ranged = await fetch(`${a.url}${new URL(data.part.url, a.url).pathname}`, {
      headers: { authorization: `Bearer ${token}`, range: 'bytes=0-9' },
    });
    assert.equal(ranged.status, 206);
    assert.deepEqual(Buffer.from(await ranged.arrayBuffer()), whole.subarray(0, 10));
    assert.equal((await onB.get(`/v1/jobs/${id}`)).job.status, 'processing', 'still running after the reads');

    writeFileSync(gate, '');
    await stream.done;
    rmSync(gate, { force: true });
    assertGapless(stream.events);
    const parts = stream.events
      .filter((e) => e.event === 'result')
      .map((e) => (JSON.parse(e.data) as { part?: { index: number } }).part?.index);
    assert.deepEqual(parts, [0, 1, undefined], 'part 0, part 1, then the final result');
    assert.equal(stream.events.at(-1)?.data, 'succeeded');
  });
});
