// Job rows and stream events in Postgres, shared by API nodes and workers. Every change of a job happens in one
// transaction that locks its row: the new record, its stream events numbered from the row's last_event_id, and a
// NOTIFY that reaches every node at commit. The row lock makes a job's events gapless and committed in id order,
// and the fence (a run's lease token) makes sure a run that lost its job can change nothing any more.
import type { PoolClient } from 'pg';
import { storableText } from '../../protocol/text';
import type { NewEvent } from '../core/live-job';
import type { StoredEvent, StoredJob } from '../core/job-store';
import { isTerminal } from '../core/job-store';
import { EVENTS_CHANNEL } from './schema';

export interface JobRow {
  id: string;
  owner: string;
  record: StoredJob;
  status: StoredJob['status'];
  progress: number;
  last_event_id: number;
  lease_token: string | null;
  lease_until: Date | null;
  worker: string | null;
  /** Since migration 2: the X-Request-Id of the submission, and the name of its token (never the token), for logs. */
  request_id?: string | null;
  token_name?: string | null;
}

/** The log fields of a job (logger.ts): its id, its token's name and the request id of its submission. */
export function jobFields(row: Pick<JobRow, 'id' | 'request_id' | 'token_name'>): {
  job_id: string;
  token: string | undefined;
  request_id: string | undefined;
} {
  return { job_id: row.id, token: row.token_name ?? undefined, request_id: row.request_id ?? undefined };
}

/**
 * JSON for a jsonb column: every string storable (no NUL, no lone surrogate, which Postgres refuses), so that no
 * record or event can fail to be written for its text; the embedded store keeps the same text (protocol/text.ts).
 */
export function jsonb(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => (typeof item === 'string' ? storableText(item) : item));
}

/** The record as clients see it: the row's columns are the truth for status and progress. */
export function recordOf(row: JobRow): StoredJob {
  return { ...row.record, status: row.status, progress: row.progress };
}

export async function lockJob(client: PoolClient, id: string): Promise<JobRow | undefined> {
  const result = await client.query<JobRow>('SELECT * FROM aa_jobs WHERE id = $1 FOR UPDATE', [id]);
  return result.rows[0];
}

/**
 * Writes a job's record (status, progress, finish time and lease from it) inside the caller's transaction. The
 * `worker` column names the worker of the job's last run: set by a claim, kept when the run ends (succeeded, failed
 * or given back), so an admin can tell which worker ran a job.
 */
export async function saveJob(
  client: PoolClient,
  record: StoredJob,
  lease?: { token: string | null; untilMs?: number; worker?: string | null },
): Promise<void> {
  const values: unknown[] = [
    record.id,
    jsonb(record),
    record.status,
    record.progress,
    isTerminal(record.status) ? (record.finishedAt ?? new Date().toISOString()) : null,
  ];
  let sql = 'UPDATE aa_jobs SET record = $2, status = $3, progress = $4, finished_at = $5';
  if (lease) {
    values.push(
      lease.token,
      lease.untilMs === undefined ? null : `${lease.untilMs} milliseconds`,
      lease.worker ?? null,
    );
    sql += `, lease_token = $6, lease_until = CASE WHEN $7::interval IS NULL THEN NULL ELSE now() + $7::interval END, worker = COALESCE($8::text, worker)`;
  }
  await client.query(`${sql} WHERE id = $1`, values);
}

/** Appends events to a locked job's stream and announces them to every node (delivered at commit). */
export async function appendEvents(
  client: PoolClient,
  row: { id: string; last_event_id: number },
  events: readonly NewEvent[],
  progress?: number,
): Promise<StoredEvent[]> {
  if (events.length === 0) return [];
  const first = row.last_event_id + 1;
  const stored = events.map((e, i) => ({ id: first + i, event: e.event, data: e.data }));
  row.last_event_id += events.length;
  await client.query(
    `INSERT INTO aa_events (job_id, id, event, data)
     SELECT $1, x.id, x.event, x.data FROM jsonb_to_recordset($2::jsonb) AS x(id integer, event text, data jsonb)`,
    [row.id, jsonb(stored)],
  );
  await client.query(
    progress === undefined
      ? 'UPDATE aa_jobs SET last_event_id = $2 WHERE id = $1'
      : 'UPDATE aa_jobs SET last_event_id = $2, progress = GREATEST(progress, $3) WHERE id = $1',
    progress === undefined ? [row.id, row.last_event_id] : [row.id, row.last_event_id, progress],
  );
  await client.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, row.id]);
  return stored;
}

export async function readEvents(
  client: { query: PoolClient['query'] },
  jobId: string,
  afterId: number,
): Promise<StoredEvent[]> {
  const result = await client.query<StoredEvent>(
    'SELECT id, event, data FROM aa_events WHERE job_id = $1 AND id > $2 ORDER BY id',
    [jobId, afterId],
  );
  return result.rows;
}
