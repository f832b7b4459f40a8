// The engine as a shared service under attack from its own clients and from the network (issue 12, items 3, 5-8),
// against the real `article-audio serve` process: SSRF through article and intro/outro URLs, forged Host headers,
// floods of idle sockets, one token starving another, file modes, a data dir deleted under it, and the scratch
// folders of killed engines.
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type EngineProcess, startEngineProcess } from '../support/engine-process';
import { type ServiceCalls, serviceCalls, waitForJob } from '../support/http-calls';
import { type ArticleServer, startArticleServer } from '../support/article-server';

const mini = 'article-audio-1-mini';
const TEXT = 'A short article for the engine to read aloud. It has a few sentences, so that the job is quick to run.';
const SECRET_PAGE = `<!doctype html><title>Internal dashboard</title><article><h1>Internal notes</h1>${'<p>The internal admin password is hunter2, and this page must never be read out to a client of the shared service, whatever address it is asked for.</p>'.repeat(4)}</article>`;
const NOT_REACHABLE = /it cannot be reached from this service/;

async function startCountingServer(): Promise<{ base: string; hits: () => number; close(): Promise<void> }> {
  let hits = 0;
  const server = http.createServer((_req, res) => {
    hits++;
    res.writeHead(200, { 'content-type': 'text/html' }).end(SECRET_PAGE);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits: () => hits,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const finished = (calls: ServiceCalls, id: string) =>
  waitForJob(calls, id, (j) => j.status === 'succeeded' || j.status === 'failed', 60_000);

describe('engine: SSRF (article-audio serve does not fetch private addresses by default)', () => {
  let engine: EngineProcess;
  let calls: ServiceCalls;
  let internal: Awaited<ReturnType<typeof startCountingServer>>;
  before(async () => {
    internal = await startCountingServer();
    // '' gives the engine no value, so serve's own default applies.
    engine = await startEngineProcess({ env: { ARTICLE_AUDIO_ALLOW_PRIVATE_NETWORK: '' } });
    calls = serviceCalls(engine.url, engine.tokens[0]!);
  });
  after(async () => {
    await engine.dispose();
    await internal.close();
  });

  it('fails a job whose article is on loopback, in any spelling, without requesting it', async () => {
    const port = new URL(internal.base).port;
    for (const url of [
      `${internal.base}/admin`,
      `http://0x7f000001:${port}/admin`,
      `http://2130706433:${port}/admin`,
      `http://[::ffff:127.0.0.1]:${port}/admin`,
      `http://localhost:${port}/admin`,
    ]) {
      const job = await finished(calls, (await calls.submit({ model_id: mini, url })).jobId);
      assert.equal(job.status, 'failed', url);
      assert.equal(job.error?.code, 'fetch_failed', url);
      assert.match(job.error?.message ?? '', NOT_REACHABLE, url);
      assert.doesNotMatch(JSON.stringify(job), /hunter2/);
    }
    assert.equal(internal.hits(), 0, 'the internal server was never asked');
  });

  it('gives the same intro/outro error for an open and a closed port (no port scanner)', async () => {
    const open = new URL(internal.base).port;
    const closed = String(await closedPort());
    const messages: string[] = [];
    for (const port of [open, closed]) {
      const job = await finished(
        calls,
        (await calls.submit({ model_id: mini, text: TEXT, intro_audio_url: `http://127.0.0.1:${port}/intro.wav` }))
          .jobId,
      );
      assert.equal(job.status, 'failed');
      assert.equal(job.error?.code, 'intro_unusable');
      messages.push((job.error?.message ?? '').replaceAll(`:${port}/`, ':PORT/'));
    }
    assert.match(messages[0]!, NOT_REACHABLE);
    assert.equal(messages[0], messages[1]);
    assert.equal(internal.hits(), 0);
  });

  it('fetches loopback with --allow-private-network, and the extension’s engine does by default', async () => {
    const allowed = await startEngineProcess({
      args: ['--allow-private-network'],
      env: { ARTICLE_AUDIO_ALLOW_PRIVATE_NETWORK: '' },
    });
    const extensions = await startEngineProcess({ entry: 'engine', env: { ARTICLE_AUDIO_ALLOW_PRIVATE_NETWORK: '' } });
    try {
      for (const engineProcess of [allowed, extensions]) {
        const own = serviceCalls(engineProcess.url, engineProcess.tokens[0]!);
        const before = internal.hits();
        const job = await finished(own, (await own.submit({ model_id: mini, url: `${internal.base}/docs` })).jobId);
        assert.notEqual(job.error?.code, 'fetch_failed', JSON.stringify(job.error));
        assert.equal(internal.hits(), before + 1);
      }
    } finally {
      await allowed.dispose();
      await extensions.dispose();
    }
  });
});

describe('engine: output addresses never come from the Host header', () => {
  let engine: EngineProcess;
  before(async () => {
    engine = await startEngineProcess();
  });
  after(() => engine.dispose());

  async function submitted(target: EngineProcess, host: string): Promise<string> {
    const calls = serviceCalls(target.url, target.tokens[0]!);
    const job = await finished(calls, (await calls.submit({ model_id: mini, text: TEXT })).jobId);
    // Asked with a forged Host header, through a raw request (fetch does not let a caller set Host).
    const body = await new Promise<string>((resolve, reject) => {
      const req = http.request(
        `${target.url}/v1/jobs/${job.id}`,
        { headers: { host, authorization: `Bearer ${target.tokens[0]}` } },
        (res) => {
          let text = '';
          res
            .setEncoding('utf8')
            .on('data', (chunk: string) => (text += chunk))
            .on('end', () => resolve(text));
        },
      );
      req.on('error', reject).end();
    });
    return body;
  }

  it('uses the address the engine listens on, whatever Host says', async () => {
    const body = await submitted(engine, 'evil.example:80');
    assert.doesNotMatch(body, /evil\.example/);
    assert.match(body, new RegExp(`"url":"${engine.url.replace(/\./g, '\\.')}/v1/jobs/`));
  });

  it('answers in kind a Host that names this same engine (localhost for 127.0.0.1)', async () => {
    const body = await submitted(engine, `localhost:${engine.port}`);
    assert.match(body, new RegExp(`"url":"http://localhost:${engine.port}/v1/jobs/`));
    // The same name on another port is not this engine.
    assert.doesNotMatch(await submitted(engine, `localhost:${engine.port + 1}`), /localhost/);
  });

  it('uses --public-url when given', async () => {
    const proxied = await startEngineProcess({ args: ['--public-url', 'https://audio.example.org/'] });
    try {
      const body = await submitted(proxied, 'evil.example');
      assert.doesNotMatch(body, /evil\.example/);
      assert.match(body, /"url":"https:\/\/audio\.example\.org\/v1\/jobs\//);
    } finally {
      await proxied.dispose();
    }
  });
});

describe('engine: connection and per-token limits', () => {
  it('stays reachable for an authenticated client while 600 idle sockets are open', async () => {
    const engine = await startEngineProcess({ args: ['--max-connections', '64'] });
    const sockets: net.Socket[] = [];
    try {
      const { port } = new URL(engine.url);
      // 600 connections that never send a request (and a few that send half a request), opened in bounded batches.
      for (let batch = 0; batch < 12; batch++) {
        await Promise.all(
          Array.from(
            { length: 50 },
            (_, i) =>
              new Promise<void>((resolve) => {
                const socket = net.connect(Number(port), '127.0.0.1', () => {
                  if (i === 0) socket.write('GET /v1/jobs/x HTTP/1.1\r\nHost: a\r\n');
                  resolve();
                });
                socket.on('error', () => resolve());
                socket.on('close', () => resolve());
                sockets.push(socket);
              }),
          ),
        );
      }
      const calls = serviceCalls(engine.url, engine.tokens[0]!);
      const answer = await calls.submit({ model_id: mini, text: TEXT });
      assert.equal(answer.status, 202, answer.text);
      assert.equal((await calls.get(`/v1/jobs/${answer.jobId}`)).status, 200);
      const open = sockets.filter((s) => !s.destroyed && s.readyState === 'open').length;
      assert.ok(open <= 64, `${open} idle sockets still open; the engine holds at most 64`);
    } finally {
      for (const socket of sockets) socket.destroy();
      await engine.dispose();
    }
  });

  describe('with one page held so that jobs wait', () => {
    let engine: EngineProcess;
    let pages: ArticleServer;
    before(async () => {
      pages = await startArticleServer();
      engine = await startEngineProcess({
        args: ['--concurrency', '1', '--queue-depth', '4', '--token-submit-rate', '0'],
      });
    });
    after(async () => {
      await engine.dispose();
      await pages.close();
    });

    it('one token filling the queue does not make it refuse another token', async () => {
      const [mine, theirs] = engine.tokens.map((token) => serviceCalls(engine.url, token));
      const page = pages.hold('flood');
      assert.equal((await mine!.submit({ model_id: mini, url: page.url })).status, 202);
      await page.requested;
      let refused;
      for (let i = 0; i < 10 && !refused; i++) {
        const answer = await mine!.submit({ model_id: mini, text: TEXT });
        if (answer.status !== 202) refused = answer;
      }
      assert.equal(refused?.status, 429);
      assert.equal(refused?.errors[0]?.code, 'too_many_jobs');
      assert.match(refused?.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      const other = await theirs!.submit({ model_id: mini, text: TEXT });
      assert.equal(other.status, 202, other.text);
      page.release();
    });
  });

  it('answers 429 rate_limited with Retry-After when one token submits too fast, and not to another token', async () => {
    const engine = await startEngineProcess({ args: ['--token-submit-rate', '3'] });
    try {
      const [mine, theirs] = engine.tokens.map((token) => serviceCalls(engine.url, token));
      const statuses: number[] = [];
      let limited;
      for (let i = 0; i < 4; i++) {
        const answer = await mine!.submit({ model_id: mini, text: TEXT });
        statuses.push(answer.status);
        if (answer.status === 429) limited = answer;
      }
      assert.deepEqual(statuses, [202, 202, 202, 429]);
      assert.equal(limited?.errors[0]?.code, 'rate_limited');
      assert.match(limited?.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      assert.equal((await theirs!.submit({ model_id: mini, text: TEXT })).status, 202);
    } finally {
      await engine.dispose();
    }
  });
});

describe('engine: disk use', () => {
  it('answers 507 insufficient_storage, saying what to do, when the disk is below --min-free-disk-mb', async () => {
    // More free space than any disk has: the limit is always crossed.
    const engine = await startEngineProcess({ args: ['--min-free-disk-mb', '999999999'] });
    try {
      const answer = await serviceCalls(engine.url, engine.tokens[0]!).submit({ model_id: mini, text: TEXT });
      assert.equal(answer.status, 507);
      assert.equal(answer.errors[0]?.code, 'insufficient_storage');
      assert.match(answer.errors[0]?.message ?? '', /keeps at least 999999999 MB free.*Free disk space/);
      assert.match(answer.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    } finally {
      await engine.dispose();
    }
  });
});

describe('engine: the data dir is private, and survives being deleted', () => {
  it('makes folders 0700 and files 0600, and tightens older ones when it starts', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'aa-modes-'));
    // A data dir as an older version left it: world-readable.
    mkdirSync(path.join(dataDir, 'jobs'), { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    chmodSync(path.join(dataDir, 'jobs'), 0o755);
    const engine = await startEngineProcess({ dataDir });
    try {
      const calls = serviceCalls(engine.url, engine.tokens[0]!);
      const job = await finished(calls, (await calls.submit({ model_id: mini, text: TEXT })).jobId);
      assert.equal(job.status, 'succeeded');
      const modes: string[] = [];
      const walk = (dir: string) => {
        modes.push(`${path.relative(dataDir, dir) || '.'} ${(statSync(dir).mode & 0o777).toString(8)}`);
        for (const entry of readdirSync(dir, { withFileTypes: true })) {
          const full = path.join(dir, entry.name);
          if (entry.isDirectory()) walk(full);
          else modes.push(`${path.relative(dataDir, full)} ${(statSync(full).mode & 0o777).toString(8)}`);
        }
      };
      walk(dataDir);
      const open = modes.filter((line) => !/ (700|600)$/.test(line));
      assert.deepEqual(open, [], 'every folder 0700 and every file 0600');
      assert.ok(
        modes.some((line) => line.includes('audio.mp3')),
        'the outputs were checked too',
      );
    } finally {
      await engine.dispose();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('makes the data dir again when it is deleted under it, instead of answering 500', async () => {
    const engine = await startEngineProcess();
    try {
      const calls = serviceCalls(engine.url, engine.tokens[0]!);
      rmSync(engine.dataDir, { recursive: true, force: true });
      const answer = await calls.submit({ model_id: mini, text: TEXT });
      assert.equal(answer.status, 202, answer.text);
      const job = await finished(calls, answer.jobId);
      assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
      assert.equal(statSync(engine.dataDir).mode & 0o777, 0o700);
    } finally {
      await engine.dispose();
    }
  });
});

describe('engine: scratch folders of killed engines', () => {
  it('removes, when it starts, the synthesis scratch folders of engines that are gone', async () => {
    const temp = mkdtempSync(path.join(os.tmpdir(), 'aa-tmp-'));
    try {
      // A pid that is gone: a process that has exited.
      const dead = await new Promise<number>((resolve) => {
        const child = spawn(process.execPath, ['-e', '']);
        child.on('exit', () => resolve(child.pid!));
      });
      const leftByKilled = path.join(temp, `article-audio-flite-${dead}-AbC123`);
      const liveOne = path.join(temp, `article-audio-flite-${process.pid}-XyZ789`);
      const oldUnowned = path.join(temp, 'article-audio-flite-Old123');
      const recentUnowned = path.join(temp, 'article-audio-flite-New456');
      for (const dir of [leftByKilled, liveOne, oldUnowned, recentUnowned]) {
        mkdirSync(dir);
        writeFileSync(path.join(dir, 'out.wav'), 'x');
      }
      const past = new Date(Date.now() - 2 * 3600_000);
      utimesSync(path.join(oldUnowned, 'out.wav'), past, past);
      utimesSync(oldUnowned, past, past);
      const engine = await startEngineProcess({ env: { TMPDIR: temp } });
      try {
        const left = readdirSync(temp).filter((name) => name.startsWith('article-audio-flite-'));
        assert.ok(!left.includes(path.basename(leftByKilled)), 'the killed engine’s folder is gone');
        assert.ok(!left.includes(path.basename(oldUnowned)), 'an old folder without an owner is gone');
        assert.ok(left.includes(path.basename(liveOne)), 'a live engine’s folder is kept');
        assert.ok(left.includes(path.basename(recentUnowned)), 'a recent folder without an owner is kept');
        // The engine's own synthesis still works in its fresh folder.
        const calls = serviceCalls(engine.url, engine.tokens[0]!);
        assert.equal(
          (await finished(calls, (await calls.submit({ model_id: mini, text: TEXT })).jobId)).status,
          'succeeded',
        );
      } finally {
        await engine.dispose();
      }
    } finally {
      rmSync(temp, { recursive: true, force: true });
    }
  });
});
