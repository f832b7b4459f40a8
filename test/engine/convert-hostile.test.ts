// Black-box: `article-audio convert --base-url` (node dist/cli.js) against a hostile service on loopback (issue 23):
// an endless audio body stops at its cap with a clear message and exit 4, leaving no file; an endless stream of log
// lines with terminal escapes is printed bounded, one line each, without the escapes.
import * as assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MAX_LOG_LINES } from '../../src/api';
import { runCli } from '../support/cli-run';
import { jobBody, openSse, sendEnvelope, startFaultServer, type FaultServer } from '../support/fault-server';

const FIXTURE = path.join(__dirname, 'fixtures', 'article.md');
const KEY = 'sk-hostile-test-1f2e3d4c5b6a';

function acceptsAndSucceeds(server: FaultServer, id: string, durationS: number): void {
  server.on('POST', '/v1/article-to-audio', (_req, res) => sendEnvelope(res, 202, { job_id: id }));
  server.on('GET', `/v1/jobs/${id}`, (_req, res) =>
    sendEnvelope(
      res,
      200,
      jobBody(id, 'succeeded', {
        outputs: {
          results: [
            { url: `/v1/jobs/${id}/outputs/audio.mp3`, content_type: 'audio/mpeg', duration_s: durationS },
            { url: `/v1/jobs/${id}/outputs/transcript.vtt`, content_type: 'text/vtt' },
          ],
        },
      }),
    ),
  );
}

/** An `audio/mpeg` body that never ends, as fast as the client reads it. */
function endless(sent: { bytes: number }) {
  return (_req: unknown, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'audio/mpeg' });
    const chunk = Buffer.alloc(64 * 1024, 0xaa);
    const pump = () => {
      while (!res.destroyed && res.write(chunk)) sent.bytes += chunk.length;
      if (!res.destroyed) res.once('drain', pump);
    };
    pump();
  };
}

describe('article-audio convert against a hostile service', () => {
  let server: FaultServer;
  let work: string;
  before(async () => {
    server = await startFaultServer();
    work = mkdtempSync(path.join(os.tmpdir(), 'article-audio-convert-hostile-'));
  });
  after(async () => {
    await server.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('an endless audio body stops at its cap: exit 4, a clear message, and no file (not even a .part) left', async () => {
    acceptsAndSucceeds(server, 'h1', 30);
    server.on('GET', '/v1/jobs/h1/stream', (_req, res) => {
      const sse = openSse(res);
      sse.send({ id: '1', event: 'status', data: { status: 'succeeded', progress: 1 } });
      sse.send({ id: '2', event: 'end', data: 'succeeded' });
      res.end();
    });
    const sent = { bytes: 0 };
    server.on('GET', '/v1/jobs/h1/outputs/audio.mp3', endless(sent));
    const out = path.join(work, 'one');
    await import('node:fs/promises').then((fs) => fs.mkdir(out));
    const started = Date.now();
    const run = await runCli(['convert', FIXTURE, '--base-url', server.url, '--out', path.join(out, 'a.mp3')], {
      env: { ARTICLE_AUDIO_API_KEY: KEY },
      killAfterMs: 60_000,
    });
    assert.equal(run.code, 4, run.stderr);
    assert.match(
      run.stderr,
      /was stopped: the service sent more than the 3\.6 MB allowed \(30 s of audio, as the service announced\); nothing was kept\..*report it to whoever runs the service/,
    );
    assert.deepEqual(readdirSync(out), []);
    assert.ok(Date.now() - started < 30_000);
    assert.ok(sent.bytes < 40_000_000, `the server wrote ${sent.bytes} bytes`);
    assert.ok(!run.stderr.includes(KEY) && !run.stdout.includes(KEY));
  });

  it('an endless stream of log lines with terminal escapes is printed bounded, one line each, without escapes', async () => {
    acceptsAndSucceeds(server, 'h2', 1);
    const evil = `\u001b]0;pwned\u0007\u001b[2J${'y'.repeat(3000)}\nforged line`;
    server.on('GET', '/v1/jobs/h2/stream', (_req, res) => {
      const sse = openSse(res);
      sse.send({ id: '0', event: 'status', data: { status: 'processing', progress: 0.1 } });
      for (let i = 1; i <= 3000; i++) sse.send({ id: String(i), event: 'log', data: { level: 'info', message: evil } });
      sse.send({ id: 'a', event: 'status', data: { status: 'succeeded', progress: 1 } });
      sse.send({ id: 'b', event: 'end', data: 'succeeded' });
      res.end();
    });
    server.on('GET', '/v1/jobs/h2/outputs/audio.mp3', (_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': '4' });
      res.end(Buffer.from([0xff, 0xfb, 0x90, 0x00]));
    });
    server.on('GET', '/v1/jobs/h2/outputs/transcript.vtt', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/vtt' });
      res.end('WEBVTT\n');
    });
    const run = await runCli(['convert', FIXTURE, '--base-url', server.url, '--out', path.join(work, 'b.mp3')], {
      env: { ARTICLE_AUDIO_API_KEY: KEY },
      killAfterMs: 60_000,
    });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assert.ok(!run.stderr.includes('\u001b'), 'an escape sequence reached the terminal');
    const lines = run.stderr.split('\n');
    assert.ok(lines.length < MAX_LOG_LINES + 50, `${lines.length} lines on stderr`);
    assert.ok(!lines.some((line) => line.startsWith('forged line')));
    assert.ok(lines.every((line) => line.length <= 1100));
    assert.match(run.stderr, /further log lines from the service were left out/);
  });
});
