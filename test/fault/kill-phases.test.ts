// kill -9 of the real engine process (dist/cli.js serve, the real speech pipeline) while jobs are in every phase,
// then a restart on the same data dir and port:
//   1. one job queued, one processing early (its article page does not answer yet), one processing late (past 70 %
//      of its speech), and a burst of submissions answered 202 just before the kill;
//   2. a job killed the instant its stream delivered `end` (just after success).
// Nothing accepted is lost, unfinished jobs run again to success, and every finished output is intact: each MP3 is
// a whole sequence of MPEG frames that decodes, Content-Length matches the bytes, and after another kill the same
// files come back byte for byte under the same ETag.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type ArticleServer, startArticleServer } from '../support/article-server';
import { type EngineProcess, repoRoot, startEngineProcess } from '../support/engine-process';
import { type ServiceCalls, type WireJob, serviceCalls, waitForJob } from '../support/http-calls';
import { openStream } from '../support/sse-reader';
import { checkMp3 } from '../support/mp3-check';

const SHORT = readFileSync(path.join(repoRoot, 'test/fixtures/articles/short.md'), 'utf8');
// About six seconds of work for the pro voice on two cores: long enough to be caught past 70 %.
const PART_OF_MEDIUM = readFileSync(path.join(repoRoot, 'test/fixtures/articles/medium.md'), 'utf8').slice(0, 6000);

interface Fetched {
  path: string;
  status: number;
  etag: string | null;
  contentLength: number;
  bytes: Buffer;
}

async function fetchOutputs(engine: EngineProcess, job: WireJob): Promise<Fetched[]> {
  const auth = { authorization: `Bearer ${engine.tokens[0]}` };
  return Promise.all(
    (job.outputs?.results ?? []).map(async (result) => {
      const urlPath = new URL(result.url).pathname;
      const response = await fetch(`${engine.url}${urlPath}`, { headers: auth });
      const bytes = Buffer.from(await response.arrayBuffer());
      return {
        path: urlPath,
        status: response.status,
        etag: response.headers.get('etag'),
        contentLength: Number(response.headers.get('content-length')),
        bytes,
      };
    }),
  );
}

/** Every output is served whole; the MP3 walks frame by frame to its last byte, decodes, and is as long as said. */
async function assertIntact(engine: EngineProcess, job: WireJob): Promise<Fetched[]> {
  assert.equal(job.status, 'succeeded', `job ${job.id} is ${job.status}: ${JSON.stringify(job.error)}`);
  const files = await fetchOutputs(engine, job);
  assert.equal(files.length, 4, `job ${job.id} has ${files.length} outputs`);
  for (const file of files) {
    assert.equal(file.status, 200, file.path);
    assert.ok(file.etag, `${file.path} has no ETag`);
    assert.equal(
      file.contentLength,
      file.bytes.length,
      `${file.path}: Content-Length ${file.contentLength}, ${file.bytes.length} bytes`,
    );
    assert.ok(file.bytes.length > 0, `${file.path} is empty`);
  }
  const audio = job.outputs?.results.find((r) => r.content_type === 'audio/mpeg');
  const mp3 = files.find((f) => audio && f.path === new URL(audio.url).pathname);
  assert.ok(audio && mp3, 'no MP3 among the outputs');
  const facts = await checkMp3(mp3.bytes);
  const said = audio.duration_s ?? 0;
  assert.ok(
    Math.abs(facts.durationS - said) < 0.5 + said * 0.02,
    `${job.id}: the MP3 holds ${facts.durationS} s, the job says ${said} s`,
  );
  assert.ok(facts.decodedS > said * 0.9, `${job.id}: only ${facts.decodedS} s decode`);
  const vtt = files.find((f) => f.path.endsWith('.vtt'));
  assert.match(vtt?.bytes.toString('utf8') ?? '', /^WEBVTT/);
  const chapters = files.find((f) => f.path.endsWith('.json'));
  assert.doesNotThrow(() => JSON.parse(chapters?.bytes.toString('utf8') ?? ''));
  return files;
}

describe('fault: kill -9 in every job phase, restart on the same data dir', () => {
  let pages: ArticleServer;
  let engine: EngineProcess;
  let calls: ServiceCalls;

  before(async () => {
    pages = await startArticleServer();
    // The early job's page is held until after the restart: the fetch must not time out meanwhile, however slow
    // the machine is (its default 20 s passed under load while the late job reached 70 %).
    engine = await startEngineProcess({ args: ['--concurrency', '2', '--fetch-timeout-s', '600'] });
    calls = serviceCalls(engine.url, engine.tokens[0] as string);
  });
  after(async () => {
    await engine.dispose();
    await pages.close();
  });

  it('loses no accepted job, reruns unfinished ones to success, keeps finished outputs intact', async (t) => {
    const page = pages.hold('kill-phases');
    const early = (await calls.submit({ model_id: 'article-audio-1-mini', url: page.url })).jobId;
    await page.requested;
    const late = (await calls.submit({ model_id: 'article-audio-1-pro', text: PART_OF_MEDIUM })).jobId;
    const lateBefore = await waitForJob(
      calls,
      late,
      (j) => j.progress >= 0.7 || (j.status !== 'processing' && j.status !== 'queued'),
      // A wait, not a bound: at load 20-25 the job was at 64 % after 60 s.
      300_000,
    );
    assert.equal(lateBefore.status, 'processing', 'the long job finished before it could be caught late');
    // Both slots are busy now: what comes next waits in the queue.
    const queued: string[] = [];
    for (let i = 0; i < 4; i++)
      queued.push((await calls.submit({ model_id: 'article-audio-1-mini', text: `${i}. ${SHORT}` })).jobId);
    const states = await Promise.all(
      [early, late, ...queued].map(async (id) => (await calls.get(`/v1/jobs/${id}`)).job),
    );
    t.diagnostic(`at the kill: ${states.map((j) => `${j.status} ${Math.round(j.progress * 100)}%`).join(', ')}`);
    assert.equal(states[0]?.status, 'processing');
    assert.ok(
      states.slice(2).some((j) => j.status === 'queued'),
      'no job was queued at the kill',
    );

    assert.equal((await engine.kill9()).signal, 'SIGKILL');
    await engine.restart();
    for (const id of [early, late, ...queued]) {
      const answer = await calls.get(`/v1/jobs/${id}`);
      assert.equal(answer.status, 200, `job ${id} was lost`);
      assert.ok(
        ['queued', 'processing'].includes(answer.job.status),
        `${id} is ${answer.job.status} after the restart`,
      );
    }
    page.release();
    const finished: WireJob[] = [];
    for (const id of [early, late, ...queued])
      finished.push(await waitForJob(calls, id, (j) => j.status === 'succeeded' || j.status === 'failed', 300_000));
    assert.ok(page.requests >= 2, 'the early job did not fetch its page again');
    const before = new Map<string, Fetched[]>();
    for (const job of finished) before.set(job.id, await assertIntact(engine, job));

    // Just after success: kill at the moment the stream says `end`.
    const last = (await calls.submit({ model_id: 'article-audio-1-mini', text: `Last. ${SHORT}` })).jobId;
    const stream = await openStream(`${engine.url}/v1/jobs/${last}/stream`, engine.tokens[0] as string);
    await stream.next((e) => e.event === 'end', 'the end event', 60_000);
    await engine.kill9();
    await engine.restart();
    const lastJob = (await calls.get(`/v1/jobs/${last}`)).job;
    await assertIntact(engine, lastJob);
    for (const [id, files] of before) {
      const again = await fetchOutputs(engine, (await calls.get(`/v1/jobs/${id}`)).job);
      assert.deepEqual(
        again.map((f) => [f.path, f.etag, f.bytes.length]),
        files.map((f) => [f.path, f.etag, f.bytes.length]),
      );
      again.forEach((file, i) => assert.ok(file.bytes.equals(files[i]!.bytes), `${file.path} changed across a kill`));
    }
  });
});
