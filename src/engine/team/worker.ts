// A team synthesis worker: claims queued jobs from Postgres (FOR UPDATE SKIP LOCKED, so workers never take the
// same job), holds each with a lease it renews, runs the pipeline, puts the files in the output storage under the
// run's own key and then, in one transaction fenced by the lease token, marks the job succeeded with its closing
// events. A worker that dies stops renewing; once the lease has expired another worker takes the job and runs it
// from the start. Whatever the dead one would still write is refused by the fence, so a job is done to the end once.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Client, Pool, PoolClient } from 'pg';
import { modelById } from '../../protocol';
import { pidNamespace } from '../../speech/threads/process-alive';
import { removeStaleFolders } from '../../speech/threads/stale-folders';
import { describe, formatSeconds } from '../core/job-errors';
import { type LogFields, type Logger } from '../core/logger';
import type { NewEvent } from '../core/live-job';
import {
  type ArticlePipeline,
  type FetchLimits,
  type PipelineOutput,
  type PipelinePart,
  PipelineError,
} from '../../speech/types';
import type { EngineMetrics } from '../core/metrics';
import { JobRunner, type RunLedger, type StoredPart } from '../core/runner';
import { jobResultOf } from '../core/submission';
import type { Claim, OutputStorage, StoredJob, StoredOutput, WorkQueue } from '../core/job-store';
import { finishedRecord, partsWith } from '../core/job-record';
import { afterLostRun, requeueEvents } from '../core/recovery';
import { finishedEvents, logEvent, partResultEvent, statusEvent } from '../core/stream-events';
import { type DbConnection, newClient, transaction } from './db';
import { type JobRow, appendEvents, jobFields, lockJob, recordOf, saveJob } from './jobs';
import { QUEUE_CHANNEL } from './schema';

export interface WorkerOptions {
  pool: Pool;
  databaseUrl: string | DbConnection;
  storage: OutputStorage;
  pipeline: ArticlePipeline;
  /** Jobs this worker runs at once. */
  concurrency: number;
  /** How long a claim holds without a heartbeat; a dead worker's jobs wait this long before another takes them. */
  leaseMs: number;
  maxCrashes: number;
  progressIntervalMs: number;
  fetchLimits: FetchLimits;
  /** Local scratch folder for runs. */
  workDir: string;
  /** How long a stop lets running jobs finish before giving them back to the queue. */
  stopTimeoutMs: number;
  /** The package version, shown by `article-audio workers`. */
  version: string;
  log: Logger;
  /** Where runs are counted (core/metrics.ts); served on --metrics-port. */
  metrics?: EngineMetrics;
}

/**
 * How often a worker renews its row in aa_workers: every few seconds, more often with a short lease. A row older
 * than two of these is a gone worker (`article-audio workers`).
 */
export function workerHeartbeatMs(leaseMs: number): number {
  return Math.max(250, Math.min(5000, Math.floor(leaseMs / 3)));
}

/** Rows of workers gone this long are removed (by any worker's heartbeat): the list shows recent deaths only. */
const GONE_WORKERS_KEPT = '24 hours';

export interface JobClaim extends Claim {
  record: StoredJob;
  /** For the logs: the X-Request-Id of the job's submission and its token's name (jobs made since migration 2). */
  requestId?: string;
  tokenName?: string;
}

/** The log fields of a claimed run (logger.ts). */
export function runFields(claim: JobClaim, workerId: string): LogFields {
  return {
    job_id: claim.jobId,
    token: claim.tokenName,
    request_id: claim.requestId,
    worker: workerId,
    run: claim.attempt,
  };
}

/** The queue in Postgres: claim with a lease, heartbeat, release, and writes fenced by the lease token. */
export class PgWorkQueue implements WorkQueue {
  constructor(
    private readonly pool: Pool,
    private readonly leaseMs: number,
    private readonly maxCrashes: number,
    private readonly log: Logger,
  ) {}

  async claim(workerId: string): Promise<JobClaim | undefined> {
    for (;;) {
      const outcome = await transaction(this.pool, async (client) => {
        const found = await client.query<JobRow>(
          `SELECT * FROM aa_jobs WHERE status = 'queued' OR (status = 'processing' AND lease_until < now())
           ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED`,
        );
        const row = found.rows[0];
        if (!row) return 'none' as const;
        const now = new Date().toISOString();
        let record = recordOf(row);
        const events: NewEvent[] = [];
        if (row.status === 'processing') {
          // Its worker stopped renewing the lease: the run was lost.
          const outcome = afterLostRun(record, this.maxCrashes, 'worker');
          if (!outcome.retry) {
            record = finishedRecord(
              record,
              { status: 'failed', crashes: outcome.crashes, error: outcome.error },
              new Date(now),
            );
            await saveJob(client, record, { token: null });
            await appendEvents(client, row, finishedEvents(record));
            this.log('info', `Job ${row.id} failed: its workers stopped ${outcome.crashes} times.`, {
              ...jobFields(row),
              state: 'failed',
              code: 'interrupted',
              worker: workerId,
            });
            return 'again' as const;
          }
          record = { ...record, crashes: outcome.crashes };
          events.push(logEvent('warn', outcome.message));
          this.log('warn', `Job ${row.id}: taking it over from worker ${row.worker ?? '?'}, whose lease expired.`, {
            ...jobFields(row),
            worker: workerId,
          });
        }
        const token = randomBytes(12).toString('hex');
        const attempts = record.attempts + 1;
        record = { ...record, status: 'processing', attempts, startedAt: now, updatedAt: now };
        await saveJob(client, record, { token, untilMs: this.leaseMs, worker: workerId });
        events.push(
          statusEvent('processing', record.progress, null),
          logEvent('info', attempts > 1 ? `Processing (attempt ${attempts}).` : 'Processing.'),
        );
        await appendEvents(client, row, events);
        return {
          jobId: row.id,
          token,
          attempt: attempts,
          record,
          requestId: row.request_id ?? undefined,
          tokenName: row.token_name ?? undefined,
        } satisfies JobClaim;
      });
      if (outcome === 'none') return undefined;
      if (outcome !== 'again') return outcome;
    }
  }

  async heartbeat(claim: Claim): Promise<boolean> {
    const renewed = await this.pool.query(
      "UPDATE aa_jobs SET lease_until = now() + $3::interval WHERE id = $1 AND lease_token = $2 AND status = 'processing'",
      [claim.jobId, claim.token, `${this.leaseMs} milliseconds`],
    );
    return renewed.rowCount === 1;
  }

  /** Runs `work` on the job's locked row if this claim still holds it; undefined when it does not. */
  fenced<T>(claim: Claim, work: (client: PoolClient, row: JobRow) => Promise<T>): Promise<T | undefined> {
    return transaction(this.pool, async (client) => {
      const row = await lockJob(client, claim.jobId);
      if (!row || row.lease_token !== claim.token || row.status !== 'processing') return undefined;
      return work(client, row);
    });
  }

  /** Gives the job back to the queue; `lostRun` counts the run as lost (a dependency stayed down), toward --max-crashes. */
  async release(claim: Claim, reason: string, lostRun = false): Promise<boolean> {
    const done = await this.fenced(claim, async (client, row) => {
      const before = recordOf(row);
      const record: StoredJob = {
        ...before,
        status: 'queued',
        ...(lostRun ? { crashes: before.crashes + 1 } : {}),
        updatedAt: new Date().toISOString(),
      };
      await saveJob(client, record, { token: null });
      await appendEvents(client, row, requeueEvents(reason, record.progress));
      await client.query('SELECT pg_notify($1, $2)', [QUEUE_CHANNEL, row.id]);
      return true as const;
    });
    return done === true;
  }
}

interface Run {
  claim: JobClaim;
  controller: AbortController;
  done: Promise<void>;
}

export class Worker {
  readonly id = `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly queue: PgWorkQueue;
  private readonly runs = new Map<string, Run>();
  private stopping = false;
  private loops: Promise<void>[] = [];
  private wakers: (() => void)[] = [];
  private listener: Client | undefined;
  private stopped: Promise<void> | undefined;
  private presence: NodeJS.Timeout | undefined;
  private beating: Promise<void> = Promise.resolve();
  /** When this worker last looked for run folders of killed workers (after a run; at most once a minute). */
  private lastSweep = 0;

  private readonly runner: JobRunner;

  constructor(private readonly options: WorkerOptions) {
    this.queue = new PgWorkQueue(options.pool, options.leaseMs, options.maxCrashes, options.log);
    this.runner = new JobRunner(options);
  }

  async start(): Promise<void> {
    await this.listenForWork();
    await this.register();
    const heartbeatMs = workerHeartbeatMs(this.options.leaseMs);
    this.presence = setInterval(() => {
      this.beating = this.beat().catch((error: unknown) =>
        this.options.log('warn', `Could not renew this worker's row in aa_workers: ${describe(error)}`),
      );
    }, heartbeatMs);
    for (let slot = 0; slot < this.options.concurrency; slot++) this.loops.push(this.loop());
    this.options.log(
      'info',
      `Worker ${this.id} started: ${this.options.concurrency} job(s) at once, lease ${this.options.leaseMs / 1000} s.`,
    );
  }

  /** This worker's row in aa_workers, which `article-audio workers` lists. */
  private async register(): Promise<void> {
    await this.options.pool.query(
      `INSERT INTO aa_workers (id, host, pid, version, concurrency, heartbeat_ms, jobs)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (id) DO UPDATE SET last_heartbeat = now(), jobs = EXCLUDED.jobs`,
      [
        this.id,
        os.hostname(),
        process.pid,
        this.options.version,
        this.options.concurrency,
        workerHeartbeatMs(this.options.leaseMs),
        [...this.runs.keys()],
      ],
    );
  }

  private async beat(): Promise<void> {
    if (this.stopping) return;
    const { pool } = this.options;
    const renewed = await pool.query('UPDATE aa_workers SET last_heartbeat = now(), jobs = $2 WHERE id = $1', [
      this.id,
      [...this.runs.keys()],
    ]);
    // Removed meanwhile (the database was out of reach for a day, or an admin deleted it): here again.
    if (renewed.rowCount === 0 && !this.stopping) await this.register();
    await pool.query(`DELETE FROM aa_workers WHERE last_heartbeat < now() - interval '${GONE_WORKERS_KEPT}'`);
  }

  get runningCount(): number {
    return this.runs.size;
  }

  private async listenForWork(): Promise<void> {
    const client = newClient(this.options.databaseUrl);
    client.on('notification', () => this.wakeOne());
    client.on('error', (error) => {
      // The poll still finds work meanwhile; listen again once the database answers.
      this.options.log('warn', `Queue listener connection lost: ${error.message}`);
      if (this.listener === client) this.listener = undefined;
      this.listenAgainLater();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${QUEUE_CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    this.listener = client;
  }

  private listenAgainLater(delayMs = 1000): void {
    setTimeout(() => {
      if (this.stopping || this.listener) return;
      this.listenForWork().catch(() => this.listenAgainLater(Math.min(10_000, delayMs * 2)));
    }, delayMs).unref();
  }

  private wakeOne(): void {
    this.wakers.shift()?.();
  }

  /** Waits for a NOTIFY of new work, or a poll interval (expired leases announce nothing). */
  private idle(): Promise<void> {
    const pollMs = Math.max(100, Math.min(1000, this.options.leaseMs / 3));
    return new Promise((resolve) => {
      const timer = setTimeout(done, pollMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakers.push(done);
    });
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      let claim: JobClaim | undefined;
      try {
        claim = await this.queue.claim(this.id);
      } catch (error) {
        this.options.log('warn', `Could not claim a job: ${describe(error)}`);
      }
      if (this.stopping) {
        if (claim)
          await this.requeue(claim, 'The worker is stopping; this job waits for another worker.').catch(
            () => undefined,
          );
        return;
      }
      if (!claim) {
        await this.idle();
        continue;
      }
      this.options.log(
        'info',
        claim.attempt > 1 ? `Job claimed (running, attempt ${claim.attempt}).` : 'Job claimed (running).',
        { ...runFields(claim, this.id), state: 'running' },
      );
      const controller = new AbortController();
      const run: Run = { claim, controller, done: Promise.resolve() };
      this.runs.set(claim.jobId, run);
      run.done = this.runner
        .run(this.ledger(run))
        .catch((error: unknown) =>
          this.options.log('error', `Job ${claim.jobId}: ${describe(error)}`, runFields(claim, this.id)),
        );
      await run.done;
      this.runs.delete(claim.jobId);
    }
  }

  /** Gives a claimed job back to the queue (PgWorkQueue.release), with its log line. */
  private async requeue(claim: JobClaim, reason: string, lostRun = false): Promise<boolean> {
    const done = await this.queue.release(claim, reason, lostRun);
    if (done) this.options.log('info', `Job requeued: ${reason}`, { ...runFields(claim, this.id), state: 'queued' });
    return done;
  }

  /** The claimed run as the JobRunner sees it: every write a transaction fenced by the run's lease token. */
  private ledger(run: Run): RunLedger {
    const { claim, controller } = run;
    const { options, queue } = this;
    const lost = () =>
      controller.abort(
        new PipelineError('cancelled', 'This run lost its job (cancelled, or taken over by another worker).'),
      );
    // The lease is renewed while the run lasts; a renewal that finds the job gone aborts the run.
    const heartbeat = setInterval(
      () => {
        queue.heartbeat(claim).then(
          (held) => {
            if (!held) lost();
          },
          (error: unknown) =>
            options.log(
              'warn',
              `Job ${claim.jobId}: heartbeat failed (${describe(error)}).`,
              runFields(claim, this.id),
            ),
        );
      },
      Math.max(50, Math.floor(options.leaseMs / 3)),
    );
    const fenced = async (work: (client: PoolClient, row: JobRow) => Promise<unknown>): Promise<boolean> => {
      const held = await queue.fenced(claim, async (client, row) => {
        await work(client, row);
        return true as const;
      });
      if (!held) lost();
      return held === true;
    };
    return {
      jobId: claim.jobId,
      record: claim.record,
      signal: controller.signal,
      stopping: () => this.stopping,
      prepareWorkDir: () => mkdtemp(path.join(options.workDir, runFolderPrefix(claim.jobId))),
      emit: (events, progress) => fenced((client, row) => appendEvents(client, row, events, progress)),
      storePart: (part, workDir) => this.storePart(claim, workDir, part),
      announcePart: (part, stored) => this.announcePart(claim, part, stored, fenced),
      succeed: async (output, workDir) => {
        const held = await this.succeed(claim, workDir, output, fenced);
        if (held)
          options.log('info', `Job succeeded: ${formatSeconds(output.durationS)} of audio.`, {
            ...runFields(claim, this.id),
            state: 'succeeded',
          });
        return held;
      },
      fail: async (error) => {
        const held = await fenced(async (client, row) => {
          const record = finishedRecord(recordOf(row), { status: 'failed', error });
          await saveJob(client, record, { token: null });
          await appendEvents(client, row, finishedEvents(record));
        });
        if (held)
          options.log('info', `Job failed (${error.code}): ${error.message}`, {
            ...runFields(claim, this.id),
            state: 'failed',
            code: error.code,
          });
        return held;
      },
      release: (reason) =>
        this.requeue(
          claim,
          reason ?? 'The worker running this job is stopping; another worker runs it again from the start.',
          reason !== undefined,
        ),
      // The lease expires; another worker takes the job over.
      unsaved: () => Promise.resolve(),
      finish: async (workDir) => {
        clearInterval(heartbeat);
        if (workDir) await rm(workDir, { recursive: true, force: true }).catch(() => undefined);
        await this.sweepWorkDir();
      },
    };
  }

  /**
   * Removes the run folders of workers on this machine killed since this one started (startWorker sweeps once
   * before): a worker that is never restarted would otherwise keep a killed neighbour's folders. After a run, at most
   * once a minute; one readdir of the work dir.
   */
  private async sweepWorkDir(): Promise<void> {
    if (Date.now() - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = Date.now();
    await sweepRunFolders(this.options.workDir, this.options.log);
  }

  /**
   * Puts a part's files in the output storage under a key of this run and this part (announcePart then names them
   * in the job). A run after a takeover makes the same parts again and skips the ones already announced.
   */
  private async storePart(claim: JobClaim, workDir: string, part: PipelinePart): Promise<StoredPart | undefined> {
    const current = await this.options.pool.query<JobRow>('SELECT * FROM aa_jobs WHERE id = $1', [claim.jobId]);
    const known = current.rows[0]?.record.parts ?? [];
    if (part.files.every((file) => known.some((k) => k.name === file.name))) return undefined;
    const key = `${claim.jobId}/${claim.token}/part-${part.index}`;
    const outputs: StoredOutput[] = [];
    for (const file of part.files) {
      outputs.push(
        await this.options.storage.put(claim.jobId, file.name, path.join(workDir, file.name), {
          contentType: file.contentType,
          ...(file.durationS !== undefined ? { durationS: file.durationS } : {}),
          key,
        }),
      );
    }
    return { outputs, key };
  }

  /**
   * Names a stored part in the job with a result event, in one fenced write: a run that lost its lease names nothing
   * and removes what it put.
   */
  private async announcePart(
    claim: JobClaim,
    part: PipelinePart,
    { outputs: stored, key }: StoredPart,
    fenced: (work: (client: PoolClient, row: JobRow) => Promise<unknown>) => Promise<boolean>,
  ): Promise<boolean> {
    const named = await fenced(async (client, row) => {
      const before = recordOf(row);
      const record: StoredJob = { ...before, parts: partsWith(before, stored), updatedAt: new Date().toISOString() };
      await saveJob(client, record);
      const styleId = modelById(record.request.model_id).styleId;
      await appendEvents(client, row, [
        partResultEvent(
          record,
          styleId,
          { index: part.index, start_s: part.startS, duration_s: part.durationS, final: part.final },
          stored,
        ),
      ]);
    });
    if (!named && key !== undefined) await this.options.storage.remove(claim.jobId, key).catch(() => undefined);
    return named;
  }

  private async succeed(
    claim: JobClaim,
    workDir: string,
    output: PipelineOutput,
    fenced: (work: (client: PoolClient, row: JobRow) => Promise<unknown>) => Promise<boolean>,
  ): Promise<boolean> {
    const key = `${claim.jobId}/${claim.token}`;
    const outputs: StoredOutput[] = [];
    try {
      for (const file of output.files) {
        outputs.push(
          await this.options.storage.put(claim.jobId, file.name, path.join(workDir, file.name), {
            contentType: file.contentType,
            ...(file.durationS !== undefined ? { durationS: file.durationS } : {}),
            key,
          }),
        );
      }
    } catch (error) {
      // Whatever made it is named by nothing: remove it (a retry puts it again).
      await this.options.storage.remove(claim.jobId, key).catch(() => undefined);
      throw error;
    }
    const named = await fenced(async (client, row) => {
      const now = new Date();
      const before = recordOf(row);
      const record = finishedRecord(
        before,
        { status: 'succeeded', progress: 1, outputs, result: jobResultOf(before, output, now.getTime()) },
        now,
      );
      await saveJob(client, record, { token: null });
      await appendEvents(client, row, finishedEvents(record));
    });
    // Another run owns the job now: these files belong to nothing.
    if (!named) await this.options.storage.remove(claim.jobId, key).catch(() => undefined);
    return named;
  }

  /** Stops claiming; running jobs may finish within stopTimeoutMs, then the rest are given back to the queue. */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.stopping = true;
      for (const wake of this.wakers.splice(0)) wake();
      let timer: NodeJS.Timeout | undefined;
      const all = Promise.all(this.loops);
      await Promise.race([all, new Promise((resolve) => (timer = setTimeout(resolve, this.options.stopTimeoutMs)))]);
      clearTimeout(timer);
      for (const run of this.runs.values()) run.controller.abort(new Error('The worker is stopping.'));
      await all;
      clearInterval(this.presence);
      await this.beating;
      await this.options.pool
        .query('DELETE FROM aa_workers WHERE id = $1', [this.id])
        .catch((error: unknown) =>
          this.options.log('warn', `Could not remove this worker's row from aa_workers: ${describe(error)}`),
        );
      await this.listener?.end().catch(() => undefined);
      await this.options.pipeline.close().catch(() => undefined);
    })();
    return this.stopped;
  }
}

export function defaultWorkDir(): string {
  return os.tmpdir();
}

// A run's folder in --work-dir: `aa-run-<worker pid>@<host>.<pid namespace>-<job id>-XXXXXX`, removed when the run
// ends. A worker killed with SIGKILL (a deploy, the OOM killer) cannot remove its folders, audio and all: the next
// worker started on this machine does (removeStaleRunFolders), those whose pid is gone. The host and pid namespace
// are in the name because a work dir may be shared (machines, containers): folders whose pid this worker cannot see
// are left to the age rule of stale-folders.ts (an hour without a write).
const RUN_FOLDER = 'aa-run-';
const SWEEP_EVERY_MS = 60_000;
function ownerTag(): string {
  const host = os
    .hostname()
    .replace(/[^A-Za-z0-9]/g, '_')
    .slice(0, 40);
  return `${host}.${/\d+/.exec(pidNamespace() ?? '')?.[0] ?? '0'}`;
}

function runFolderPrefix(jobId: string): string {
  return `${RUN_FOLDER}${process.pid}@${ownerTag()}-${jobId}-`;
}

/** Removes run folders in `workDir` left by workers that were killed; returns how many. Never throws. */
function removeStaleRunFolders(workDir: string): Promise<number> {
  const owner = ownerTag();
  return removeStaleFolders(workDir, RUN_FOLDER, (name) => {
    const found = /^aa-run-(\d+)@([A-Za-z0-9._]+)-/.exec(name);
    return found && found[2] === owner ? Number(found[1]) : undefined;
  });
}

/** Removes the run folders of killed workers (removeStaleRunFolders) and logs how many, if any. Never throws. */
export async function sweepRunFolders(workDir: string, log: Logger): Promise<void> {
  const removed = await removeStaleRunFolders(workDir);
  if (removed > 0) log('info', `Removed ${removed} run folder(s) left in ${workDir} by workers that were killed.`);
}
