// The team service's tables and their migrations. Every node, at start, takes an advisory lock, reads the schema
// version from aa_schema and applies the migrations it knows that the database has not had yet, each in a
// transaction that also records it in aa_schema; the first node of a fresh database creates everything and the
// others wait for it. A node refuses to start against a schema newer than it knows (SchemaTooNewError): that
// database belongs to a newer release, and this node must be upgraded.
//
//   aa_schema   one row per applied migration: version, applied_at, program_version (the release that applied it)
//   aa_jobs    one row per job: the record (JSON, as the embedded store keeps it) and the columns the queue works on
//              (status, lease_token, lease_until) and the stream's last event id (the per-job sequence); since
//              migration 2 also the request id of its submission and the name of its token (for the logs)
//   aa_events  every job's stream history, (job_id, id) unique: the replay source for Last-Event-ID on any node
//   aa_tokens  optional API tokens kept in the database (SHA-256 only) with a name per user
//   aa_workers one row per running worker (written at start and every heartbeat, removed on a clean stop): what
//              `article-audio workers` lists; a row whose heartbeat is older than two intervals is a gone worker
//   aa_settings (migration 2) settings the whole fleet shares (retention-s), stored once: see fleet-settings.ts
//
// A database made before aa_schema existed (release 0.x, which ran migration 1's SQL at every start) has the tables
// but no aa_schema: it is recognised as version 1 and stamped so.
import type { Pool, PoolClient } from 'pg';

/** The advisory lock every node takes while it checks and migrates the schema (the same key as before migrations). */
const MIGRATION_LOCK = 7_411_230_915;

export interface Migration {
  version: number;
  description: string;
  sql: string;
}

/**
 * The migrations, in order; append only. Migration 1 is exactly the schema of the releases before migrations (their
 * CREATE ... IF NOT EXISTS), so their databases are version 1. Each later step must leave the schema usable by the
 * release before it (new columns nullable or with defaults, no renames or drops): that is what lets nodes of two
 * neighbouring releases run side by side during a rolling upgrade.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'jobs, events, tokens, workers',
    sql: `
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
`,
  },
  {
    version: 2,
    description: 'request id and token name of each job (logs); fleet-wide settings',
    sql: `
ALTER TABLE aa_jobs ADD COLUMN IF NOT EXISTS request_id text;
ALTER TABLE aa_jobs ADD COLUMN IF NOT EXISTS token_name text;
CREATE TABLE IF NOT EXISTS aa_settings (
  name text PRIMARY KEY,
  value text NOT NULL,
  set_at timestamptz NOT NULL DEFAULT now(),
  set_by text NOT NULL
);
`,
  },
  {
    version: 3,
    description: 'admin tokens',
    sql: `
ALTER TABLE aa_tokens ADD COLUMN IF NOT EXISTS admin boolean NOT NULL DEFAULT false;
`,
  },
];

/** The schema version this release knows and brings a database to. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

/** Channel of "job X has new events" notifications (payload: the job id). */
export const EVENTS_CHANNEL = 'aa_events';
/** Channel of "a job is waiting" notifications, which wake idle workers. */
export const QUEUE_CHANNEL = 'aa_queue';

/** The database's schema is newer than this release knows: the node must not touch it. */
export class SchemaTooNewError extends Error {
  constructor(
    readonly databaseVersion: number,
    readonly knownVersion: number,
    readonly appliedBy: string | null,
    programVersion: string,
  ) {
    super(
      `The database's schema is version ${databaseVersion}${appliedBy ? ` (applied by Article Audio ${appliedBy})` : ''}, ` +
        `newer than version ${knownVersion}, the newest this node (Article Audio ${programVersion}) knows. ` +
        'This node is older than the rest of the fleet: upgrade it to the release the other nodes run, then start it again.',
    );
    this.name = 'SchemaTooNewError';
  }
}

export interface SchemaState {
  version: number;
  appliedBy: string | null;
}

/** The schema version of the database (0: empty), recognising a database of the releases before aa_schema as 1. */
export async function schemaVersion(client: Pool | PoolClient): Promise<SchemaState> {
  const tables = await client.query<{ schema: string | null; jobs: string | null }>(
    "SELECT to_regclass('aa_schema')::text AS schema, to_regclass('aa_jobs')::text AS jobs",
  );
  const found = tables.rows[0];
  if (!found?.schema) return { version: found?.jobs ? 1 : 0, appliedBy: null };
  const rows = await client.query<{ version: number; program_version: string }>(
    'SELECT version, program_version FROM aa_schema ORDER BY version DESC LIMIT 1',
  );
  const row = rows.rows[0];
  // aa_schema made but not yet stamped (a start that stopped between the two): the tables say what it is.
  if (!row) return { version: found.jobs ? 1 : 0, appliedBy: null };
  return { version: row.version, appliedBy: row.program_version };
}

/**
 * Brings the database to this release's schema (or to `upTo`, for tests that make an older one), under the advisory
 * lock; each migration in its own transaction with its aa_schema row. Throws SchemaTooNewError, before changing
 * anything, when the database is newer than this release. Returns the versions before and after.
 */
export async function migrate(
  pool: Pool,
  options: { programVersion?: string; upTo?: number; log?: (message: string) => void } = {},
): Promise<{ from: number; to: number }> {
  const programVersion = options.programVersion ?? 'unknown';
  const target = options.upTo ?? SCHEMA_VERSION;
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      const before = await schemaVersion(client);
      if (before.version > SCHEMA_VERSION)
        throw new SchemaTooNewError(before.version, SCHEMA_VERSION, before.appliedBy, programVersion);
      await client.query(`CREATE TABLE IF NOT EXISTS aa_schema (
  version integer PRIMARY KEY,
  applied_at timestamptz NOT NULL DEFAULT now(),
  program_version text NOT NULL,
  description text NOT NULL
)`);
      // A database of the releases before migrations: its tables are migration 1.
      if (before.version === 1 && before.appliedBy === null)
        await client.query(
          "INSERT INTO aa_schema (version, program_version, description) VALUES (1, 'before schema versions', $1) ON CONFLICT DO NOTHING",
          [`${MIGRATIONS[0]?.description ?? ''} (found, made before schema versions)`],
        );
      let current = before.version;
      for (const migration of MIGRATIONS) {
        if (migration.version <= current || migration.version > target) continue;
        await client.query('BEGIN');
        try {
          await client.query(migration.sql);
          await client.query('INSERT INTO aa_schema (version, program_version, description) VALUES ($1, $2, $3)', [
            migration.version,
            programVersion,
            migration.description,
          ]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw error;
        }
        options.log?.(`Schema migrated to version ${migration.version}: ${migration.description}.`);
        current = migration.version;
      }
      return { from: before.version, to: current };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}
