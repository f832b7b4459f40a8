// The Postgres connection of a team node (the maintained `pg` driver), loaded only in team mode so the extension's
// bundles never contain it.
import pg from 'pg';
import type { Logger } from '../core/logger';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

/**
 * How a node reaches Postgres beyond its address (settings-help.ts reads the --db-* flags): TLS options given by
 * flags (undefined: whatever the address says, `?sslmode=…`, or none) and a statement timeout set on every connection
 * at its start (undefined: the server's or role's own). A bare address string means neither.
 */
export interface DbConnection {
  url: string;
  ssl?: false | { ca?: string; rejectUnauthorized: boolean; checkServerIdentity?: () => undefined };
  statementTimeoutMs?: number;
}

function connectionConfig(db: string | DbConnection): pg.ClientConfig {
  const { url, ssl, statementTimeoutMs } = typeof db === 'string' ? ({ url: db } as DbConnection) : db;
  return {
    connectionString: url,
    ...(ssl !== undefined ? { ssl } : {}),
    ...(statementTimeoutMs !== undefined ? { statement_timeout: statementTimeoutMs } : {}),
  };
}

export function openPool(db: string | DbConnection, log: Logger, max = 10): pg.Pool {
  const pool = new pg.Pool({
    ...connectionConfig(db),
    max,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
    application_name: 'article-audio',
  });
  // An idle connection the server dropped (restart, failover) is replaced on the next query; it must not crash us.
  pool.on('error', (error) => log('warn', `Database connection lost: ${error.message}`));
  return pool;
}

export function newClient(db: string | DbConnection): pg.Client {
  return new pg.Client({ ...connectionConfig(db), application_name: 'article-audio-listen' });
}

/**
 * Runs `work` in a transaction; rolled back if it throws. A connection the server drops while it is checked out
 * emits 'error' on the client, which the pool does not listen to then: with no listener here that event ended the
 * whole process (a worker died at a `pg_ctl restart -m immediate`). The failure reaches the caller as the query's
 * error instead, and the broken connection is destroyed rather than returned to the pool.
 */
export async function transaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (error: Error) => (broken = error);
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    if (!broken) await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.off('error', onError);
    client.release(broken ?? false);
  }
}

/** The database address without its password, for logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://…';
  }
}
