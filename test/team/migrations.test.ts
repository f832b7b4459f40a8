// Schema migrations: a database made by the releases before schema versions (migration 1's tables, no aa_schema)
// with jobs waiting in it is recognised as version 1 and migrated to this release's version by the first node, and
// its jobs still finish; a node facing a schema newer than it knows refuses to start and says what to do.
// All real processes: dist/cli.js (npm run build first), Postgres, API node and test workers.
import * as assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { acceptedEvents } from '../../src/engine/core/stream-events';
import { newJobRecord } from '../../src/engine/core/job-record';
import { checkSubmission } from '../../src/engine/core/submission';
import { appendEvents, jsonb } from '../../src/engine/team/jobs';
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/engine/team/schema';
import { articleText, serviceCalls, waitForJob } from '../support/http-calls';
import { type Cluster, startCluster } from './cluster';
import { type TestPostgres, createDatabase, startPostgres } from './postgres';

const mini = 'article-audio-1-mini';

/** What an API node of the releases before migrations did at start and at each submission, on its own database. */
async function databaseOfThePreviousRelease(serverUrl: string, token: string, jobs: number): Promise<string> {
  const url = await createDatabase(serverUrl, `aa_${randomBytes(6).toString('hex')}`);
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    await pool.query(MIGRATIONS[0]?.sql ?? '');
    const owner = createHash('sha256').update(token, 'utf8').digest('hex');
    for (let i = 0; i < jobs; i++) {
      const checked = checkSubmission({ model_id: mini, text: `${articleText()} (${i})` });
      if (!checked.ok) throw new Error(JSON.stringify(checked.issues));
      const record = newJobRecord(owner, checked.submission, undefined);
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query(
          `INSERT INTO aa_jobs (id, owner, record, status, progress, idem_key, created_at) VALUES ($1, $2, $3, 'queued', 0, NULL, $4)`,
          [record.id, owner, jsonb(record), record.createdAt],
        );
        await appendEvents(client, { id: record.id, last_event_id: 0 }, acceptedEvents(checked.submission));
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    }
  } finally {
    await pool.end();
  }
  return url;
}

describe('team schema migrations', () => {
  let postgres: TestPostgres;
  let cluster: Cluster;
  const token = randomBytes(16).toString('hex');

  before(async () => {
    postgres = await startPostgres();
  });
  after(async () => {
    await cluster?.dispose();
    await postgres?.stop();
  });

  it('upgrades a database of the previous schema with jobs waiting in it; the jobs finish; an older node refuses a newer schema', async () => {
    assert.ok(SCHEMA_VERSION >= 2, 'this release has a migration past the previous schema');
    const databaseUrl = await databaseOfThePreviousRelease(postgres.url, token, 3);
    cluster = await startCluster({
      serverUrl: postgres.url,
      databaseUrl,
      tokens: [token],
      workerArgs: ['--concurrency', '1'],
      workerEnv: { AA_TEST_STEPS: '2', AA_TEST_STEP_MS: '10' },
    });
    const before = await cluster.query<{ t: string | null }>("SELECT to_regclass('aa_schema')::text AS t");
    assert.equal(before[0]?.t, null, 'the previous release had no aa_schema');
    const waiting = await cluster.query<{ id: string }>("SELECT id FROM aa_jobs WHERE status = 'queued'");
    assert.equal(waiting.length, 3);

    const api = await cluster.startApi();
    const versions = await cluster.query<{ version: number; program_version: string }>(
      'SELECT version, program_version FROM aa_schema ORDER BY version',
    );
    assert.deepEqual(
      versions.map((v) => v.version),
      MIGRATIONS.map((m) => m.version),
    );
    assert.equal(versions[0]?.program_version, 'before schema versions', 'version 1 was recognised, not re-applied');
    assert.match(versions[versions.length - 1]?.program_version ?? '', /^\d+\.\d+\.\d+/);
    const columns = await cluster.query<{ column_name: string }>(
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'aa_jobs' AND column_name IN ('request_id', 'token_name')",
    );
    assert.equal(columns.length, 2, 'migration 2 added its columns');

    await cluster.startWorker();
    const calls = serviceCalls(api.url, token);
    for (const { id } of waiting) {
      const job = await waitForJob(calls, id, (j) => j.status === 'succeeded' || j.status === 'failed', 60_000);
      assert.equal(job.status, 'succeeded', `job ${id} of the previous schema finished`);
    }
    // A new job on the migrated schema runs too.
    const fresh = (await calls.submit({ model_id: mini, text: articleText() })).jobId;
    assert.equal((await waitForJob(calls, fresh, (j) => j.status === 'succeeded', 60_000)).status, 'succeeded');

    // A newer release migrated the database past what this one knows: nodes of this release refuse it.
    const newer = SCHEMA_VERSION + 1;
    await cluster.query(
      "INSERT INTO aa_schema (version, program_version, description) VALUES ($1, '9.9.9', 'from the future')",
      [newer],
    );
    await assert.rejects(cluster.startApi(), (error: Error) => {
      assert.match(error.message, new RegExp(`schema is version ${newer} \\(applied by Article Audio 9\\.9\\.9\\)`));
      assert.match(error.message, new RegExp(`newer than version ${SCHEMA_VERSION}`));
      assert.match(error.message, /upgrade it/);
      return true;
    });
    await assert.rejects(cluster.startWorker(), (error: Error) => {
      assert.match(error.message, new RegExp(`schema is version ${newer}`));
      return true;
    });
    const after = await cluster.query<{ version: number }>('SELECT max(version) AS version FROM aa_schema');
    assert.equal(after[0]?.version, newer, 'the refusing nodes changed nothing');
  });
});
