// /readyz of a team API node, for a load balancer: 200 while Postgres answers and the output storage (a folder or
// S3) is reachable, 503 naming the check that failed while one of them is down, and 200 again once it is back;
// no token, no secret (error codes only). /healthz stays the node's liveness.
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Answer, call } from '../support/http-calls';
import { type Cluster, startCluster } from './cluster';
import { type TestPostgres, startPostgres } from './postgres';
import { type TestS3, startS3 } from './s3';

interface ReadyBody {
  data: { ready: boolean; checks: Record<string, { ok: boolean; error?: string }> };
  errors: null;
}

async function readyz(url: string): Promise<{ answer: Answer; body: ReadyBody }> {
  const answer = await call(`${url}/readyz`);
  return { answer, body: answer.body as ReadyBody };
}

async function until(
  url: string,
  wanted: (r: { answer: Answer; body: ReadyBody }) => boolean,
  timeoutMs = 20_000,
): Promise<ReadyBody> {
  const deadline = Date.now() + timeoutMs;
  let last: { answer: Answer; body: ReadyBody } | undefined;
  while (Date.now() < deadline) {
    last = await readyz(url);
    if (wanted(last)) return last.body;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`/readyz never turned as expected; last: ${last?.answer.status} ${last?.answer.text}`);
}

describe('team API node: /readyz', () => {
  let postgres: TestPostgres;
  let s3: TestS3;
  let folderCluster: Cluster;
  let s3Cluster: Cluster;

  before(async () => {
    postgres = await startPostgres();
    s3 = await startS3();
    folderCluster = await startCluster({ serverUrl: postgres.url });
    s3Cluster = await startCluster({ serverUrl: postgres.url, s3 });
    await Promise.all([folderCluster.startApi(), s3Cluster.startApi()]);
  });
  after(async () => {
    await folderCluster?.dispose();
    await s3Cluster?.dispose();
    await s3?.stop();
    await postgres?.stop();
  });

  it('is ready with Postgres and the storage up, without a token, for GET and HEAD', async () => {
    for (const cluster of [folderCluster, s3Cluster]) {
      const url = cluster.apis[0]?.url ?? '';
      const { answer, body } = await readyz(url);
      assert.equal(answer.status, 200, answer.text);
      assert.deepEqual(body, {
        data: { ready: true, checks: { stopping: { ok: true }, database: { ok: true }, storage: { ok: true } } },
        errors: null,
      });
      const head = await fetch(`${url}/readyz`, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal((await call(`${url}/readyz`, { method: 'POST' })).status, 405);
    }
  });

  it('is not ready while the S3 server is down, naming the storage, and ready again once it is back', async () => {
    const url = s3Cluster.apis[0]?.url ?? '';
    await s3.down();
    try {
      const body = await until(url, (r) => r.answer.status === 503);
      assert.equal(body.data.ready, false);
      assert.equal(body.data.checks.storage?.ok, false);
      assert.equal(body.data.checks.database?.ok, true);
      assert.doesNotMatch(JSON.stringify(body), /127\.0\.0\.1|S3RVER|article-audio-test/, 'no address, key or bucket');
    } finally {
      await s3.up();
    }
    await until(url, (r) => r.answer.status === 200 && r.body.data.ready);
  });

  it('is not ready while Postgres is stopped, naming the database, and ready again once it is back', async () => {
    const url = folderCluster.apis[0]?.url ?? '';
    await postgres.down();
    try {
      const body = await until(url, (r) => r.answer.status === 503);
      assert.equal(body.data.ready, false);
      assert.equal(body.data.checks.database?.ok, false);
      assert.match(body.data.checks.database?.error ?? '', /^[A-Za-z0-9_]+$/, 'an error code, not a message');
      assert.equal(body.data.checks.storage?.ok, true);
      assert.doesNotMatch(JSON.stringify(body), /postgres:|aa@|127\.0\.0\.1/, 'no database address');
      // Liveness stays 200: a supervisor restarting every API node during a database outage would gain nothing.
      const live = await call(`${url}/healthz`);
      assert.equal(live.status, 200, live.text);
      assert.match(live.text, /"database":"unreachable"/);
    } finally {
      await postgres.up();
    }
    const back = await until(url, (r) => r.answer.status === 200);
    assert.equal(back.data.ready, true);
  });
});
