// The client's options: a base address with a path prefix, the caller's undici dispatcher (a proxy agent in VS Code),
// the User-Agent, and clear errors for settings that cannot work.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Agent, type Dispatcher } from 'undici';
import { JobServiceClient, ValidationError, type JobEvent } from '../../../src/api';
import { jobBody, openSse, sendEnvelope, startFaultServer, type FaultServer } from '../../support/fault-server';
import { API_KEY, TEXT } from '../../support/api-client';

/** An undici Agent that counts what goes through it. */
class CountingAgent extends Agent {
  dispatched: string[] = [];
  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    this.dispatched.push(`${options.method} ${options.path}`);
    return super.dispatch(options, handler);
  }
}

describe('client options', () => {
  let server: FaultServer;
  let dir: string;
  before(async () => {
    server = await startFaultServer();
    dir = mkdtempSync(path.join(os.tmpdir(), 'article-audio-options-'));
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads a base address given as a function before every request: a service on a new port is found', async () => {
    // A local engine restarted on another port: the same client follows the job there, without being made anew.
    const first = await startFaultServer();
    const second = await startFaultServer();
    let current = first.url;
    let reads = 0;
    first.on('GET', '/v1/jobs/m1', (_req, res) => {
      sendEnvelope(res, 200, jobBody('m1', 'processing'));
      current = second.url;
      void first.close();
    });
    second.on('GET', '/v1/jobs/m1', (_req, res) => sendEnvelope(res, 200, jobBody('m1', 'succeeded')));
    second.on('GET', '/v1/jobs/m1/outputs/a.mp3', (_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': '3' });
      res.end('abc');
    });
    const client = new JobServiceClient({
      baseUrl: () => {
        reads++;
        return current;
      },
      apiKey: API_KEY,
      polling: { initialMs: 20, factor: 1, maxMs: 20, jitter: 0 },
    });
    try {
      const statuses: string[] = [];
      for await (const event of client.followJob('m1', { transport: 'poll' })) {
        if (event.type === 'status') statuses.push(event.status);
      }
      assert.deepEqual(statuses, ['processing', 'succeeded']);
      assert.equal(first.requestsTo('GET', '/v1/jobs/m1').length, 1);
      assert.equal(second.requestsTo('GET', '/v1/jobs/m1').length, 1);
      assert.equal(client.baseUrl, second.url);
      const file = path.join(dir, 'moved.mp3');
      await client.downloadOutput('/v1/jobs/m1/outputs/a.mp3', file);
      assert.equal(
        second.requestsTo('GET', '/v1/jobs/m1/outputs/a.mp3')[0]!.headers.authorization,
        `Bearer ${API_KEY}`,
      );
      assert.ok(reads >= 3, `the address was read ${reads} times`);
    } finally {
      await second.close();
    }
  });

  it('serves a service behind a path prefix: requests and relative links stay under it', async () => {
    server.on('POST', '/audio/v1/article-to-audio', (_req, res) =>
      sendEnvelope(res, 202, { job_id: 'o1', links: { self: '/v1/jobs/o1', stream: '/audio/v1/jobs/o1/stream' } }),
    );
    server.on('GET', '/audio/v1/jobs/o1', (_req, res) =>
      sendEnvelope(
        res,
        200,
        jobBody('o1', 'succeeded', {
          outputs: { results: [{ url: 'v1/jobs/o1/outputs/a.mp3' }, { url: '/v1/jobs/o1/outputs/b.vtt' }] },
        }),
      ),
    );
    const client = new JobServiceClient({ baseUrl: `${server.url}/audio/`, apiKey: API_KEY });
    assert.equal(client.baseUrl, `${server.url}/audio`);
    const accepted = await client.submitArticle({ model_id: 'article-audio-1-mini', text: TEXT });
    assert.deepEqual(accepted.links, {
      self: `${server.url}/audio/v1/jobs/o1`,
      stream: `${server.url}/audio/v1/jobs/o1/stream`,
    });
    const job = await client.getJob('o1');
    assert.deepEqual(
      job.outputs?.results.map((file) => file.url),
      [`${server.url}/audio/v1/jobs/o1/outputs/a.mp3`, `${server.url}/audio/v1/jobs/o1/outputs/b.vtt`],
    );
  });

  it("sends every request (JSON, stream, download) through the caller's dispatcher, with the User-Agent", async () => {
    server.on('GET', '/v1/jobs/o2', (_req, res) => sendEnvelope(res, 200, jobBody('o2', 'succeeded')));
    server.on('GET', '/v1/jobs/o2/stream', (_req, res) => {
      const sse = openSse(res);
      sse.send({ id: '1', event: 'end', data: 'succeeded' });
      sse.end();
    });
    server.on('GET', '/files/o2.mp3', (_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': '3' });
      res.end('abc');
    });
    const agent = new CountingAgent();
    try {
      const client = new JobServiceClient({
        baseUrl: server.url,
        apiKey: API_KEY,
        dispatcher: agent,
        userAgent: 'article-audio-vscode/9.9',
      });
      const events: JobEvent[] = [];
      for await (const event of client.followJob('o2')) events.push(event);
      await client.downloadOutput('/files/o2.mp3', path.join(dir, 'o2.mp3'));
      assert.deepEqual(agent.dispatched, ['GET /v1/jobs/o2/stream', 'GET /v1/jobs/o2', 'GET /files/o2.mp3']);
      for (const request of server.requests.slice(-3))
        assert.equal(request.headers['user-agent'], 'article-audio-vscode/9.9');
    } finally {
      await agent.close();
    }
  });

  it('rejects a base address or polling settings that cannot work, naming them', () => {
    for (const baseUrl of ['', 'audio.example.com', 'ftp://example.com', 'https://user:secret@example.com']) {
      assert.throws(
        () => new JobServiceClient({ baseUrl, apiKey: API_KEY }),
        (error: unknown) =>
          error instanceof ValidationError && error.fields[0]?.field === 'baseUrl' && !error.message.includes('secret'),
        baseUrl,
      );
    }
    assert.throws(
      () =>
        new JobServiceClient({ baseUrl: server.url, apiKey: API_KEY, polling: { initialMs: 0, factor: 2, maxMs: 10 } }),
      /initialMs/,
    );
    assert.throws(
      () => new JobServiceClient({ baseUrl: server.url, apiKey: API_KEY, requestTimeoutMs: -1 }),
      /requestTimeoutMs/,
    );
  });
});
