// The Postgres options of a team node take effect on a real server: --db-pool-size caps the connections an API node
// opens under a burst of submissions (a node with the default opens more under the same burst, so the burst is big
// enough to show it), and --db-statement-timeout-s makes Postgres cancel a statement stuck behind a lock, so the
// request fails with a 500 instead of hanging while the lock is held. All real processes (npm run build first).
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { articleText, serviceCalls } from '../support/http-calls';
import { type Cluster, startCluster } from './cluster';
import { type TestPostgres, startPostgres } from './postgres';

const mini = 'article-audio-1-mini';

/** The pool connections (not the LISTEN one) API nodes hold open on a database. */
async function poolConnections(cluster: Cluster): Promise<number> {
  const rows = await cluster.query<{ n: string }>(
    "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'article-audio'",
  );
  return Number(rows[0]?.n ?? 0);
}

async function burst(cluster: Cluster): Promise<number[]> {
  const calls = serviceCalls(cluster.apis[0]?.url ?? '', cluster.tokens[0] as string);
  const answers = await Promise.all(
    Array.from({ length: 30 }, () => calls.submit({ model_id: mini, text: articleText() })),
  );
  return answers.map((a) => a.status);
}

describe('team Postgres options: pool size and statement timeout', () => {
  let postgres: TestPostgres;
  let small: Cluster;
  let standard: Cluster;

  before(async () => {
    postgres = await startPostgres();
    // No workers: the submitted jobs stay queued; the token limits answer 429 past 20, still a query each.
    small = await startCluster({
      serverUrl: postgres.url,
      apiArgs: ['--db-pool-size', '2', '--db-statement-timeout-s', '1'],
    });
    standard = await startCluster({ serverUrl: postgres.url });
    await Promise.all([small.startApi(), standard.startApi()]);
  });
  after(async () => {
    await small?.dispose();
    await standard?.dispose();
    await postgres?.stop();
  });

  it('--db-pool-size 2: a burst of 30 submissions is served over at most 2 connections (the default opens more)', async () => {
    const statuses = await burst(small);
    assert.ok(
      statuses.every((s) => s === 202 || s === 429),
      `every submission answered: ${statuses.join(',')}`,
    );
    assert.ok(statuses.includes(202));
    const opened = await poolConnections(small);
    assert.ok(opened >= 1 && opened <= 2, `pool connections with --db-pool-size 2: ${opened}`);

    await burst(standard);
    const openedByDefault = await poolConnections(standard);
    assert.ok(openedByDefault > 2, `the same burst opens more than 2 with the default pool: ${openedByDefault}`);
  });

  it('--db-statement-timeout-s 1: a statement waiting on a lock is cancelled by Postgres, the request gets 500', async () => {
    const calls = serviceCalls(small.apis[0]?.url ?? '', small.tokens[1] as string);
    const locker = new pg.Client({ connectionString: small.databaseUrl });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE aa_jobs IN ACCESS EXCLUSIVE MODE');
      // Without a statement timeout this submission waits for as long as the lock is held (the test would time out).
      const answer = await calls.submit({ model_id: mini, text: articleText() });
      assert.equal(answer.status, 500, answer.text);
      assert.match(small.apis[0]?.stderr ?? '', /canceling statement due to statement timeout/);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
    // The lock gone, the same node serves again.
    assert.equal((await calls.submit({ model_id: mini, text: articleText() })).status, 202);
  });
});
