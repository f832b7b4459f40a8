// Black-box: the real engine process killed with SIGKILL at several moments (right after accepting, while
// processing, after success) and started again on the same data dir and port loses nothing: every accepted job is
// there, unfinished ones run again, finished outputs are served again, and a stream that reconnects with
// Last-Event-ID continues where it was. Also the clean stop on SIGTERM/SIGINT, the extension's entry
// (dist/engine.js) and the one-engine-per-data-dir lock.
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type EngineProcess, repoRoot, startEngineProcess } from '../support/engine-process';
import { type ServiceCalls, serviceCalls, waitForJob } from '../support/http-calls';
import { openStream } from '../support/sse-reader';
import { type ArticleServer, startArticleServer } from '../support/article-server';

const ARTICLE_TEXT = readFileSync(path.join(__dirname, 'fixtures', 'article.md'), 'utf8');
const mini = 'article-audio-1-mini';
/**
 * The cases below that cannot apply to the team service (test/team/suites-postgres.test.ts runs this file in
 * Postgres mode): dist/engine.js is the extension's engine, which has no Postgres mode (the fixture would start the
 * embedded engine again), and the data-dir lock has no counterpart (API nodes and workers share Postgres by design).
 */
const embeddedOnly =
  process.env.ARTICLE_AUDIO_TEST_ENGINE === 'postgres'
    ? 'embedded engine only: dist/engine.js and the data-dir lock have no Postgres mode'
    : false;

describe('engine process: kill -9 and restart lose nothing', () => {
  let pages: ArticleServer;
  let engine: EngineProcess | undefined;

  before(async () => {
    pages = await startArticleServer();
  });
  after(async () => {
    await engine?.dispose();
    await pages.close();
  });

  function calls(): ServiceCalls {
    return serviceCalls((engine as EngineProcess).url, (engine as EngineProcess).tokens[0] as string);
  }

  it('keeps jobs accepted just before the kill (queued and processing), runs them again, and streams continue', async () => {
    engine = await startEngineProcess({ args: ['--concurrency', '1'] });
    const token = engine.tokens[0] as string;
    const page = pages.hold('kill-processing');
    const processing = (await calls().submit({ model_id: mini, url: page.url })).jobId;
    await page.requested;
    await waitForJob(calls(), processing, (j) => j.status === 'processing');
    const stream = await openStream(`${engine.url}/v1/jobs/${processing}/stream`, token);
    await stream.next((e) => e.event === 'status' && e.data.includes('processing'), 'the processing status');
    const queued: string[] = [];
    for (let i = 0; i < 5; i++)
      queued.push((await calls().submit({ model_id: mini, text: `${i}. ${ARTICLE_TEXT}` })).jobId);

    // SIGKILL the moment the last 202 arrived: no chance to flush anything.
    const exit = await engine.kill9();
    assert.equal(exit.signal, 'SIGKILL');
    await stream.done;
    const seenBefore = stream.lastId;
    assert.ok(seenBefore);

    await engine.restart();
    for (const id of [processing, ...queued]) {
      const answer = await calls().get(`/v1/jobs/${id}`);
      assert.equal(answer.status, 200, `job ${id} was lost`);
      assert.ok(['queued', 'processing'].includes(answer.job.status), `${id} is ${answer.job.status}`);
    }
    const resumed = await openStream(`${engine.url}/v1/jobs/${processing}/stream`, token, seenBefore);
    await resumed.next((e) => e.data.includes('stopped unexpectedly'), 'the restart notice');
    assert.equal(Number(resumed.events[0]?.id), Number(seenBefore) + 1, 'event ids do not continue after the restart');
    page.release();
    await resumed.done;
    assert.equal(resumed.events.at(-1)?.data, 'succeeded');
    assert.ok(page.requests >= 2, 'the job did not run again after the restart');
    for (const id of queued) await waitForJob(calls(), id, (j) => j.status === 'succeeded', 60_000);
    await engine.dispose();
    engine = undefined;
  });

  it('survives a kill in the middle of a stream of submissions: every job that got a 202 is still there', async (t) => {
    engine = await startEngineProcess({ args: ['--queue-depth', '1000'] });
    const accepted: string[] = [];
    let cutOff = 0;
    let alive = true;
    // Four clients submit one job after another until the engine dies under them.
    const clients = Array.from({ length: 4 }, async (_, client) => {
      for (let i = 0; alive && i < 100; i++) {
        try {
          const answer = await calls().submit({ model_id: mini, text: `${client}.${i}. ${ARTICLE_TEXT}` });
          if (answer.status === 202) accepted.push(answer.jobId);
        } catch {
          cutOff++;
          return;
        }
      }
    });
    while (accepted.length < 10) await new Promise((resolve) => setTimeout(resolve, 5));
    await engine.kill9();
    alive = false;
    await Promise.all(clients);
    t.diagnostic(`${accepted.length} submissions accepted before the kill, ${cutOff} cut off by it`);
    assert.ok(accepted.length >= 10);
    await engine.restart();
    for (const id of accepted) await waitForJob(calls(), id, (j) => j.status === 'succeeded', 60_000);
    const onDisk = await engine.storedJobIds();
    for (const id of accepted) assert.ok(onDisk.includes(id));
    await engine.dispose();
    engine = undefined;
  });

  it('serves finished outputs again after a kill, byte for byte with the same ETag, and replays the same history', async () => {
    engine = await startEngineProcess();
    const token = engine.tokens[0] as string;
    const id = (await calls().submit({ model_id: mini, text: ARTICLE_TEXT })).jobId;
    const done = await waitForJob(calls(), id, (j) => j.status === 'succeeded', 60_000);
    const auth = { authorization: `Bearer ${token}` };
    const before = await Promise.all(
      (done.outputs?.results ?? []).map(async (r) => {
        const response = await fetch(r.url, { headers: auth });
        return {
          path: new URL(r.url).pathname,
          etag: response.headers.get('etag'),
          bytes: Buffer.from(await response.arrayBuffer()),
        };
      }),
    );
    const history = await openStream(`${engine.url}/v1/jobs/${id}/stream`, token);
    await history.done;

    await engine.kill9();
    await engine.restart();
    const again = (await calls().get(`/v1/jobs/${id}`)).job;
    assert.equal(again.status, 'succeeded');
    for (const file of before) {
      const response = await fetch(`${engine.url}${file.path}`, { headers: auth });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('etag'), file.etag);
      assert.ok(Buffer.from(await response.arrayBuffer()).equals(file.bytes), `${file.path} changed`);
    }
    const replay = await openStream(`${engine.url}/v1/jobs/${id}/stream`, token);
    await replay.done;
    assert.deepEqual(
      replay.events.map((e) => `${e.id} ${e.event} ${e.data}`),
      history.events.map((e) => `${e.id} ${e.event} ${e.data}`),
    );
    await engine.dispose();
    engine = undefined;
  });
});

describe('engine process: clean stop, the extension entry, one engine per data dir', () => {
  let pages: ArticleServer;
  before(async () => {
    pages = await startArticleServer();
  });
  after(async () => {
    await pages.close();
  });

  it('stops on SIGTERM with exit code 0 after a final event to open streams, and the job continues after a restart', async () => {
    const engine = await startEngineProcess();
    try {
      const token = engine.tokens[0] as string;
      const calls = serviceCalls(engine.url, token);
      const page = pages.hold('sigterm');
      const id = (await calls.submit({ model_id: mini, url: page.url })).jobId;
      await page.requested;
      const stream = await openStream(`${engine.url}/v1/jobs/${id}/stream`, token);
      await stream.next((e) => e.event === 'status' && e.data.includes('processing'), 'the processing status');
      const exit = await engine.stop('SIGTERM');
      assert.deepEqual(exit, { code: 0, signal: null });
      await stream.done;
      assert.equal(stream.error, undefined, 'the stream broke instead of being ended by the server');
      // Embedded: "The engine is stopping"; Postgres mode: "The worker running this job is stopping".
      assert.match(stream.events.at(-2)?.data ?? '', /(engine|worker running this job) is stopping/);
      assert.equal((JSON.parse(stream.events.at(-1)?.data ?? '{}') as { status: string }).status, 'queued');
      assert.match(engine.stderr, /SIGTERM: stopping/);

      await engine.restart();
      page.release();
      const restarted = serviceCalls(engine.url, token);
      await waitForJob(restarted, id, (j) => j.status === 'succeeded', 60_000);
      assert.deepEqual(await engine.stop('SIGINT'), { code: 0, signal: null });
    } finally {
      await engine.dispose();
    }
  });

  it(
    'dist/engine.js prints one JSON line when listening and exits with stdin when asked',
    { skip: embeddedOnly },
    async () => {
      const engine = await startEngineProcess({ entry: 'engine', args: ['--exit-with-stdin'] });
      try {
        const lines = engine.stdout.trim().split('\n');
        assert.equal(lines.length, 1);
        assert.deepEqual(JSON.parse(lines[0] as string), { event: 'listening', url: engine.url });
        assert.match(engine.url, /^http:\/\/127\.0\.0\.1:\d+$/);
        const calls = serviceCalls(engine.url, engine.tokens[0] as string);
        const id = (await calls.submit({ model_id: mini, text: ARTICLE_TEXT })).jobId;
        await waitForJob(calls, id, (j) => j.status === 'succeeded', 60_000);
        // The extension dies: the engine's stdin closes.
        engine.closeStdin();
        assert.deepEqual(await engine.exited, { code: 0, signal: null });
      } finally {
        await engine.dispose();
      }
    },
  );

  it('dist/engine.js reports bad settings as a JSON error line and exit code 2', { skip: embeddedOnly }, async () => {
    const child = spawn(
      process.execPath,
      [path.join(repoRoot, 'dist', 'engine.js'), '--port', '0', '--data-dir', path.join(repoRoot, 'out', 'never')],
      {
        env: { ...process.env, ARTICLE_AUDIO_TOKENS: '' },
      },
    );
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.equal(code, 2);
    const message = JSON.parse(stdout.trim()) as { event: string; message: string };
    assert.equal(message.event, 'error');
    assert.match(message.message, /ARTICLE_AUDIO_TOKENS/);
  });

  it(
    'refuses a second engine on a data dir in use, and takes the dir over after a kill -9',
    { skip: embeddedOnly },
    async () => {
      const first = await startEngineProcess();
      try {
        await assert.rejects(
          startEngineProcess({ dataDir: first.dataDir, args: ['--lock-wait-s', '0.5'], startTimeoutMs: 30_000 }),
          /Another engine \(pid \d+\) is using the data dir/,
        );
        await first.kill9();
        const second = await startEngineProcess({ dataDir: first.dataDir });
        assert.equal(
          (
            await serviceCalls(second.url, second.tokens[0] as string).get(
              '/v1/jobs/00000000-0000-4000-8000-000000000000',
            )
          ).status,
          404,
        );
        await second.dispose();
      } finally {
        await first.dispose();
      }
    },
  );
});
