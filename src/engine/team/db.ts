// The Postgres connection of a team node (the maintained `pg` driver), loaded only in team mode so the extension's
// bundles never contain it.
import pg from 'pg';
import type { Logger } from '../core/logger';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

export function openPool(url: string, log: Logger, max = 10): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
    application_name: 'article-audio',
  });
  // An idle connection the server dropped (restart, failover) is replaced on the next query; it must not crash us.
  pool.on('error', (error) => log('warn', `Database connection lost: ${error.message}`));
  return pool;
}

export function newClient(url: string): pg.Client {
  return new pg.Client({ connectionString: url, application_name: 'article-audio-listen' });
}

/** Runs `work` in a transaction; rolled back if it throws. */
export async function transaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
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
