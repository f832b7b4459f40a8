// The team service's tables. Every node runs the same CREATE ... IF NOT EXISTS at start, under an advisory lock,
// so the first node of a fresh database creates them and the others wait for it.
//
//   aa_jobs    one row per job: the record (JSON, as the embedded store keeps it) and the columns the queue works on
//              (status, lease_token, lease_until) and the stream's last event id (the per-job sequence)
//   aa_events  every job's stream history, (job_id, id) unique: the replay source for Last-Event-ID on any node
//   aa_tokens  optional API tokens kept in the database (SHA-256 only) with a name per user
//   aa_workers one row per running worker (written at start and every heartbeat, removed on a clean stop): what
//              `article-audio workers` lists; a row whose heartbeat is older than two intervals is a gone worker
import type { Pool } from 'pg';

const MIGRATION_LOCK = 7_411_230_915;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS aa_jobs (
  id text PRIMARY KEY,
  owner text NOT NULL,
  record jsonb NOT NULL,
  status text NOT NULL,
  progress double precision NOT NULL DEFAULT 0,
  idem_key text,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  last_event_id integer NOT NULL DEFAULT 0,
  lease_token text,
  lease_until timestamptz,
  worker text
);
CREATE UNIQUE INDEX IF NOT EXISTS aa_jobs_idempotency ON aa_jobs (owner, idem_key) WHERE idem_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS aa_jobs_waiting ON aa_jobs (created_at) WHERE status IN ('queued', 'processing');
CREATE INDEX IF NOT EXISTS aa_jobs_owner_open ON aa_jobs (owner) WHERE status IN ('queued', 'processing');
CREATE INDEX IF NOT EXISTS aa_jobs_owner_created ON aa_jobs (owner, created_at);
CREATE INDEX IF NOT EXISTS aa_jobs_finished ON aa_jobs (finished_at) WHERE finished_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS aa_events (
  job_id text NOT NULL REFERENCES aa_jobs (id) ON DELETE CASCADE,
  id integer NOT NULL,
  event text NOT NULL,
  data jsonb NOT NULL,
  PRIMARY KEY (job_id, id)
);
CREATE TABLE IF NOT EXISTS aa_tokens (
  name text PRIMARY KEY,
  token_sha256 text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS aa_workers (
  id text PRIMARY KEY,
  host text NOT NULL,
  pid integer NOT NULL,
  version text NOT NULL,
  concurrency integer NOT NULL,
  heartbeat_ms integer NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  last_heartbeat timestamptz NOT NULL DEFAULT now(),
  jobs text[] NOT NULL DEFAULT '{}'
);
`;

/** Channel of "job X has new events" notifications (payload: the job id). */
export const EVENTS_CHANNEL = 'aa_events';
/** Channel of "a job is waiting" notifications, which wake idle workers. */
export const QUEUE_CHANNEL = 'aa_queue';

export async function migrate(pool: Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query(SCHEMA);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}
