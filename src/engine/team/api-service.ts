// The job service of a team API node: no pipeline here. Submissions become rows in Postgres (workers claim them),
// reads come from Postgres, streams follow the event bus, output files come from the shared output storage. Any
// number of API nodes serve the same jobs; a client can reconnect to any of them with Last-Event-ID.
import type { Readable } from 'node:stream';
import type { Pool, PoolClient } from 'pg';
import { QueueFullError, StoppingError, TokenLimitError } from '../core/job-errors';
import { type IntakeBackend, checkOpenJobs, submitJob } from '../core/intake';
import { type Logger } from '../core/logger';
import type { QueueGauges } from '../core/metrics';
import {
  type EventListener,
  type Following,
  type JobHandle,
  type JobServiceApi,
  type Readiness,
  type ServiceHealth,
  type SubmitContext,
  readinessOf,
} from '../core/service-api';
import { type ByteRange, type StoredEvent, type StoredJob, type StoredOutput, isTerminal } from '../core/job-store';
import { finishedEvents } from '../core/stream-events';
import { finishedRecord } from '../core/job-record';
import type { ArticleSubmission } from '../core/submission';
import { transaction } from './db';
import { type JobRow, appendEvents, jobFields, jsonb, lockJob, readEvents, recordOf, saveJob } from './jobs';
import type { TeamOutputStorage } from './output-storage';
import type { ApiFleetValues } from './fleet-settings';
import type { PgEventBus } from './pg-events';
import { QUEUE_CHANNEL } from './schema';
import { type WorkerInfo, listWorkers } from './workers';

export interface ApiServiceOptions {
  pool: Pool;
  bus: PgEventBus;
  storage: TeamOutputStorage;
  queueDepth: number;
  retentionMs: number;
  idempotencyWindowMs: number;
  /** Unfinished jobs one token may have at once, over all nodes; 0: no limit. */
  tokenMaxJobs: number;
  /** Submissions one token may make in any minute, over all nodes; 0: no limit. */
  tokenSubmitRate: number;
  log: Logger;
  /**
   * The fleet-wide settings stored in aa_settings (fleet-settings.ts), re-read at every retention sweep: retention,
   * queue depth and the token limits then follow what an admin set, on every node. Without it the values above hold.
   */
  readFleetSettings?: () => Promise<ApiFleetValues>;
  /** The name of an owner's token for the logs (a database token's name); never the token. */
  tokenName?: (owner: string) => string | undefined;
}

/** How long /readyz waits for Postgres and the output storage before it calls one of them down. */
const READY_TIMEOUT_MS = 2000;
/** First key of the per-owner advisory lock that makes the token limits hold across API nodes. */
const OWNER_LOCK = 7_411_230;
/** Retry-After of a token at its limit of unfinished jobs: a job of the test pipeline, or a short article, takes this. */
const OPEN_JOBS_RETRY_S = 5;

export class PgApiService implements JobServiceApi {
  private stopping = false;
  private readonly inFlight = new Set<Promise<unknown>>();
  private sweeper: NodeJS.Timeout | undefined;

  /** Retention, queue depth and token limits in force: the options', then the fleet's as last read. */
  private current: ApiFleetValues;

  constructor(private readonly options: ApiServiceOptions) {
    this.current = {
      'retention-s': options.retentionMs / 1000,
      'queue-depth': options.queueDepth,
      'token-max-jobs': options.tokenMaxJobs,
      'token-submit-rate': options.tokenSubmitRate,
    };
  }

  private get retentionMs(): number {
    return this.current['retention-s'] * 1000;
  }

  /** Re-reads the fleet's settings (before each sweep); a change is logged. */
  private async refreshSettings(): Promise<void> {
    if (!this.options.readFleetSettings) return;
    const next = await this.options.readFleetSettings();
    for (const name of Object.keys(next) as (keyof ApiFleetValues)[]) {
      if (next[name] !== this.current[name])
        this.options.log('info', `Fleet setting ${name} is now ${next[name]} (was ${this.current[name]}).`, {
          setting: name,
          value: next[name],
        });
    }
    this.current = next;
  }

  start(): void {
    const sweepMs = Math.max(250, Math.min(60_000, Math.floor(this.options.retentionMs / 4)));
    this.sweeper = setInterval(
      () =>
        void this.track(this.sweep()).catch((error: unknown) =>
          this.options.log('warn', `Retention sweep failed: ${describe(error)}`),
        ),
      sweepMs,
    );
    this.sweeper.unref();
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    void work.then(
      () => this.inFlight.delete(work),
      () => this.inFlight.delete(work),
    );
    return work;
  }

  submit(
    owner: string,
    submission: ArticleSubmission,
    idempotencyKey?: string,
    context: SubmitContext = {},
  ): Promise<{ job: JobHandle; replayed: boolean }> {
    if (this.stopping) return Promise.reject(new StoppingError());
    return this.track(
      submitJob(this.intake, this.options.idempotencyWindowMs, owner, submission, idempotencyKey, context),
    );
  }

  /** Intake's storage in Postgres (core/intake.ts makes the decisions). */
  private readonly intake: IntakeBackend<JobHandle> = {
    stopping: () => this.stopping,
    byKey: async (owner, key) => {
      const found = await this.options.pool.query<JobRow>('SELECT * FROM aa_jobs WHERE owner = $1 AND idem_key = $2', [
        owner,
        key,
      ]);
      const row = found.rows[0];
      return row ? handleOf(row) : undefined;
    },
    freeKey: async (_owner, _key, job) => {
      await this.options.pool.query('UPDATE aa_jobs SET idem_key = NULL WHERE id = $1', [job.id]);
    },
    admit: (record, events, context) => this.admit(record, events, context),
  };

  /**
   * Stores a new job's row and first events and wakes the workers, after the queue-depth check and (in the same
   * transaction, under the owner's lock) the token limits. Undefined when another node stored the same key first.
   */
  private async admit(
    record: StoredJob,
    events: StoredEvent[],
    context: SubmitContext,
  ): Promise<JobHandle | undefined> {
    const { pool } = this.options;
    const waiting = await pool.query<{ n: string }>("SELECT count(*) AS n FROM aa_jobs WHERE status = 'queued'");
    if (Number(waiting.rows[0]?.n ?? 0) >= this.current['queue-depth']) throw new QueueFullError(5);
    const tokenName = this.options.tokenName?.(record.owner) ?? null;
    const requestId = context.requestId ?? null;
    const created = await transaction(pool, async (client) => {
      await this.checkTokenLimits(client, record.owner);
      const inserted = await client.query(
        `INSERT INTO aa_jobs (id, owner, record, status, progress, idem_key, created_at, request_id, token_name)
         VALUES ($1, $2, $3, 'queued', 0, $4, $5, $6, $7)
         ON CONFLICT (owner, idem_key) WHERE idem_key IS NOT NULL DO NOTHING RETURNING id`,
        [
          record.id,
          record.owner,
          jsonb(record),
          record.idempotency?.key ?? null,
          record.createdAt,
          requestId,
          tokenName,
        ],
      );
      if (inserted.rowCount === 0) return false;
      await appendEvents(client, { id: record.id, last_event_id: 0 }, events);
      await client.query('SELECT pg_notify($1, $2)', [QUEUE_CHANNEL, record.id]);
      return true;
    });
    if (!created) return undefined;
    this.options.log('info', 'Job submitted (queued).', {
      ...jobFields({ id: record.id, request_id: requestId, token_name: tokenName }),
      state: 'queued',
    });
    return { id: record.id, record, progress: 0 };
  }

  /**
   * Counts the owner's unfinished jobs and its submissions of the last minute in the database, under a lock per owner
   * held until the job's row is committed: two nodes taking the last place at the same moment cannot both get it.
   */
  private async checkTokenLimits(client: PoolClient, owner: string): Promise<void> {
    const tokenMaxJobs = this.current['token-max-jobs'];
    const tokenSubmitRate = this.current['token-submit-rate'];
    if (tokenMaxJobs <= 0 && tokenSubmitRate <= 0) return;
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [OWNER_LOCK, owner]);
    const counted = await client.query<{ open: string; recent: string; frees_in_s: number | null }>(
      `SELECT
         (SELECT count(*) FROM aa_jobs WHERE owner = $1 AND status IN ('queued', 'processing')) AS open,
         (SELECT count(*) FROM aa_jobs WHERE owner = $1 AND created_at > now() - interval '1 minute') AS recent,
         (SELECT extract(epoch FROM min(created_at) + interval '1 minute' - now())::float8
            FROM aa_jobs WHERE owner = $1 AND created_at > now() - interval '1 minute') AS frees_in_s`,
      [owner],
    );
    const row = counted.rows[0];
    const open = Number(row?.open ?? 0);
    const recent = Number(row?.recent ?? 0);
    checkOpenJobs(open, tokenMaxJobs, OPEN_JOBS_RETRY_S);
    if (tokenSubmitRate > 0 && recent >= tokenSubmitRate) {
      const retryAfterS = Math.min(60, Math.max(1, Math.ceil(row?.frees_in_s ?? 60)));
      throw new TokenLimitError(
        'rate_limited',
        `Too many submissions with this token: at most ${tokenSubmitRate} a minute. Try again in ${retryAfterS} s.`,
        retryAfterS,
      );
    }
  }

  async find(owner: string, id: string): Promise<JobHandle | undefined> {
    const found = await this.options.pool.query<JobRow>('SELECT * FROM aa_jobs WHERE id = $1', [id]);
    const row = found.rows[0];
    if (!row || row.owner !== owner) return undefined;
    const handle = handleOf(row);
    return this.isExpired(handle.record) ? undefined : handle;
  }

  cancel(job: JobHandle): Promise<JobHandle> {
    return this.track(
      transaction(this.options.pool, async (client) => {
        const row = await lockJob(client, job.id);
        if (!row) return job;
        if (isTerminal(row.status)) return handleOf(row);
        const record = finishedRecord(recordOf(row), {
          status: 'failed',
          error: { code: 'cancelled', message: 'The job was cancelled.' },
        });
        // Clearing the lease fences the worker running it: its next heartbeat fails and it stops.
        await saveJob(client, record, { token: null });
        await appendEvents(client, row, finishedEvents(record));
        this.options.log('info', 'Job cancelled.', {
          ...jobFields(row),
          state: 'cancelled',
          ...(row.worker && row.status === 'processing' ? { worker: row.worker } : {}),
        });
        return { id: record.id, record, progress: record.progress };
      }),
    );
  }

  follow(job: JobHandle, afterId: number, listener: EventListener): Promise<Following | undefined> {
    if (isTerminal(job.record.status)) return Promise.resolve(undefined);
    return this.options.bus.subscribe(job.id, afterId, listener);
  }

  storedHistory(job: JobHandle): Promise<StoredEvent[]> {
    return readEvents(this.options.pool, job.id, 0);
  }

  readOutput(job: JobHandle, output: StoredOutput, range?: ByteRange): Readable {
    return this.options.storage.read(job.id, output, range);
  }

  /** The whole team's queue and workers, read from Postgres (every API node shows the same). */
  /** GET /v1/admin/workers: the same list as `article-audio workers --json`. */
  workers(): Promise<WorkerInfo[]> {
    return listWorkers(this.options.pool);
  }

  async queueGauges(): Promise<QueueGauges> {
    const { rows } = await this.options.pool.query<{ queued: string; oldest: number | null; alive: string }>(
      `SELECT (SELECT count(*) FROM aa_jobs WHERE status = 'queued') AS queued,
              (SELECT extract(epoch FROM now() - min(created_at))::float8 FROM aa_jobs WHERE status = 'queued') AS oldest,
              (SELECT count(*) FROM aa_workers
                WHERE now() - last_heartbeat <= make_interval(secs => 2 * heartbeat_ms / 1000.0)) AS alive`,
    );
    const row = rows[0];
    return {
      queued: Number(row?.queued ?? 0),
      oldestQueuedAgeS: Math.max(0, row?.oldest ?? 0),
      workersAlive: Number(row?.alive ?? 0),
    };
  }

  /**
   * `/healthz`, liveness: the node answers (503 only while it stops). A database outage is readiness's to report
   * (`/readyz`): restarting every API node because Postgres is down would serve nobody, so it is only said here.
   */
  async health(): Promise<ServiceHealth> {
    if (this.stopping) return { ok: false, detail: { mode: 'team', role: 'api', stopping: true } };
    const database = await this.options.pool.query('SELECT 1').then(
      () => 'reachable',
      () => 'unreachable',
    );
    return { ok: true, detail: { mode: 'team', role: 'api', database, followers: this.options.bus.followerCount } };
  }

  /** `/readyz`: Postgres answers a query and the output storage answers, each within READY_TIMEOUT_MS. */
  readiness(): Promise<Readiness> {
    const { pool, storage } = this.options;
    return readinessOf(
      {
        stopping: () => Promise.resolve(this.stopping ? { ok: false, error: 'stopping' } : { ok: true }),
        database: async () => {
          await pool.query('SELECT 1');
          return { ok: true };
        },
        storage: async () => {
          await storage.reachable(AbortSignal.timeout(READY_TIMEOUT_MS));
          return { ok: true };
        },
      },
      READY_TIMEOUT_MS,
    );
  }

  private isExpired(record: StoredJob): boolean {
    return (
      isTerminal(record.status) &&
      record.finishedAt !== undefined &&
      Date.now() - Date.parse(record.finishedAt) >= this.retentionMs
    );
  }

  /** Deletes jobs finished longer than the retention time ago: files first, then the row (and its events). */
  private async sweep(): Promise<void> {
    await this.refreshSettings();
    const { pool, storage } = this.options;
    const { retentionMs } = this;
    const due = await pool.query<{ id: string }>(
      'SELECT id FROM aa_jobs WHERE finished_at < now() - $1::interval ORDER BY finished_at LIMIT 200',
      [`${retentionMs} milliseconds`],
    );
    for (const { id } of due.rows) {
      if (this.stopping) return;
      await storage.remove(id);
      await pool.query('DELETE FROM aa_jobs WHERE id = $1', [id]);
      this.options.log('debug', `Job ${id} expired and was removed.`, { job_id: id });
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.sweeper) clearInterval(this.sweeper);
    await Promise.allSettled([...this.inFlight]);
    await this.options.bus.close();
  }
}

function handleOf(row: JobRow): JobHandle {
  const record = recordOf(row);
  return { id: row.id, record, progress: record.progress };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
