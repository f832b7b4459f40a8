// `article-audio workers`: the team's workers as their rows in aa_workers say (worker.ts writes them at start and
// every heartbeat, and removes them on a clean stop). A row whose heartbeat is older than two of its intervals
// belongs to a worker that is gone (killed, its machine down, cut off from the database); the jobs it held then are
// taken over by other workers once their leases run out.
import type { Pool } from 'pg';

export interface WorkerInfo {
  id: string;
  host: string;
  pid: number;
  version: string;
  concurrency: number;
  state: 'alive' | 'gone';
  startedAt: string;
  lastHeartbeat: string;
  /** Milliseconds since the last heartbeat, by the database's clock (the same for every row). */
  sinceHeartbeatMs: number;
  /** The jobs it was running at its last heartbeat. */
  jobs: string[];
}

export async function listWorkers(pool: Pool): Promise<WorkerInfo[]> {
  const rows = await pool.query<{
    id: string;
    host: string;
    pid: number;
    version: string;
    concurrency: number;
    gone: boolean;
    started_at: Date;
    last_heartbeat: Date;
    since_ms: number;
    jobs: string[];
  }>(
    `SELECT id, host, pid, version, concurrency, started_at, last_heartbeat, jobs,
            now() - last_heartbeat > make_interval(secs => 2 * heartbeat_ms / 1000.0) AS gone,
            (extract(epoch FROM now() - last_heartbeat) * 1000)::float8 AS since_ms
     FROM aa_workers ORDER BY gone, host, started_at`,
  );
  return rows.rows.map((row) => ({
    id: row.id,
    host: row.host,
    pid: row.pid,
    version: row.version,
    concurrency: row.concurrency,
    state: row.gone ? 'gone' : 'alive',
    startedAt: row.started_at.toISOString(),
    lastHeartbeat: row.last_heartbeat.toISOString(),
    sinceHeartbeatMs: Math.max(0, Math.round(row.since_ms)),
    jobs: row.jobs,
  }));
}

function ago(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s ago`;
  if (ms < 3600_000) return `${Math.round(ms / 60_000)} min ago`;
  return `${(ms / 3600_000).toFixed(1)} h ago`;
}

/** One line per worker, in columns, under a header. */
export function workersTable(workers: readonly WorkerInfo[]): string[] {
  if (workers.length === 0) return ['No workers have registered (none is running, or none since a clean stop).'];
  const rows = [
    ['WORKER', 'STATE', 'LAST HEARTBEAT', 'STARTED', 'VERSION', 'JOBS'],
    ...workers.map((w) => [
      w.id,
      w.state,
      ago(w.sinceHeartbeatMs),
      w.startedAt.replace(/\.\d+Z$/, 'Z'),
      w.version,
      `${w.jobs.length}/${w.concurrency}${w.jobs.length > 0 ? ` ${w.jobs.join(',')}` : ''}`,
    ]),
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}
