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
import { describe, describeFailure, formatSeconds, internalFailure } from '../core/job-errors';
import { type Logger } from '../core/logger';
import type { NewEvent } from '../core/live-job';
import {
  type ArticlePipeline,
  type FetchLimits,
  type PipelineOutput,
  type PipelinePart,
  PipelineError,
} from '../../speech/types';
import { ProgressThrottle } from '../core/progress-throttle';
import { jobResultOf, pipelineInputOf } from '../core/submission';
import type { Claim, JobFailure, OutputStorage, StoredJob, StoredOutput, WorkQueue } from '../core/job-store';
import { closingEvents, logEvent, partResultEvent, runLog, statusEvent } from '../core/stream-events';
import { newClient, transaction } from './db';
import { type JobRow, appendEvents, lockJob, recordOf, saveJob } from './jobs';
import { QUEUE_CHANNEL } from './schema';

export interface WorkerOptions {
  pool: Pool;
  databaseUrl: string;
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
  log: Logger;
}

export interface JobClaim extends Claim {
  record: StoredJob;
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
          const crashes = record.crashes + 1;
          if (crashes > this.maxCrashes) {
            record = {
              ...record,
              status: 'failed',
              crashes,
              updatedAt: now,
              finishedAt: now,
              error: {
                code: 'interrupted',
                message: `The worker running this job stopped unexpectedly ${crashes} times, so it was not tried again.`,
              },
            };
            await saveJob(client, record, { token: null });
            await appendEvents(
              client,
              row,
              closingEvents(record, `Failed (interrupted): ${record.error?.message ?? ''}`),
            );
            this.log('warn', `Job ${row.id} failed: its workers stopped ${crashes} times.`);
            return 'again' as const;
          }
          record = { ...record, crashes };
          events.push(
            logEvent(
              'warn',
              'The worker running this job stopped unexpectedly; another worker runs it again from the start.',
            ),
          );
          this.log('warn', `Job ${row.id}: taking it over from worker ${row.worker ?? '?'}, whose lease expired.`);
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
        return { jobId: row.id, token, attempt: attempts, record } satisfies JobClaim;
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

  async release(claim: Claim, reason: string): Promise<void> {
    await this.fenced(claim, async (client, row) => {
      const record: StoredJob = { ...recordOf(row), status: 'queued', updatedAt: new Date().toISOString() };
      await saveJob(client, record, { token: null });
      await appendEvents(client, row, [logEvent('warn', reason), statusEvent('queued', record.progress, null)]);
      await client.query('SELECT pg_notify($1, $2)', [QUEUE_CHANNEL, row.id]);
    });
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

  constructor(private readonly options: WorkerOptions) {
    this.queue = new PgWorkQueue(options.pool, options.leaseMs, options.maxCrashes, options.log);
  }

  async start(): Promise<void> {
    await this.listenForWork();
    for (let slot = 0; slot < this.options.concurrency; slot++) this.loops.push(this.loop());
    this.options.log(
      'info',
      `Worker ${this.id} started: ${this.options.concurrency} job(s) at once, lease ${this.options.leaseMs / 1000} s.`,
    );
  }

  get runningCount(): number {
    return this.runs.size;
  }

  private async listenForWork(): Promise<void> {
    const client = newClient(this.options.databaseUrl);
    client.on('notification', () => this.wakeOne());
    client.on('error', (error) => {
      // The poll still finds work; try to listen again later.
      this.options.log('warn', `Queue listener connection lost: ${error.message}`);
      if (this.listener === client) this.listener = undefined;
      setTimeout(() => {
        if (!this.stopping && !this.listener) void this.listenForWork().catch(() => undefined);
      }, 1000).unref();
    });
    await client.connect();
    await client.query(`LISTEN ${QUEUE_CHANNEL}`);
    this.listener = client;
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
          await this.queue
            .release(claim, 'The worker is stopping; this job waits for another worker.')
            .catch(() => undefined);
        return;
      }
      if (!claim) {
        await this.idle();
        continue;
      }
      const controller = new AbortController();
      const run: Run = { claim, controller, done: Promise.resolve() };
      this.runs.set(claim.jobId, run);
      run.done = this.runClaim(run).catch((error: unknown) =>
        this.options.log('error', `Job ${claim.jobId}: ${describe(error)}`),
      );
      await run.done;
      this.runs.delete(claim.jobId);
    }
  }

  private async runClaim(run: Run): Promise<void> {
    const { claim, controller } = run;
    const { options, queue } = this;
    const lost = () =>
      controller.abort(
        new PipelineError('cancelled', 'This run lost its job (cancelled, or taken over by another worker).'),
      );
    let lostLease = false;
    const heartbeat = setInterval(
      () => {
        queue.heartbeat(claim).then(
          (held) => {
            if (!held) {
              lostLease = true;
              lost();
            }
          },
          (error: unknown) => options.log('warn', `Job ${claim.jobId}: heartbeat failed (${describe(error)}).`),
        );
      },
      Math.max(50, Math.floor(options.leaseMs / 3)),
    );
    // Stream events of the run, written one batch at a time in order, each fenced by the lease.
    let chain: Promise<void> = Promise.resolve();
    const emit = (events: NewEvent[], progress?: number) => {
      chain = chain
        .then(async () => {
          if (lostLease) return;
          const written = await queue.fenced(claim, (client, row) => appendEvents(client, row, events, progress));
          if (written === undefined) {
            lostLease = true;
            lost();
          }
        })
        .catch((error: unknown) =>
          options.log('warn', `Job ${claim.jobId}: could not store stream events (${describe(error)}).`),
        );
    };
    const throttle = new ProgressThrottle(claim.record.progress, options.progressIntervalMs, (progress) =>
      emit([statusEvent('processing', progress, null)], progress),
    );
    const log = runLog((event) => emit([event]));
    const request = claim.record.request;
    let workDir: string;
    try {
      workDir = await mkdtemp(path.join(options.workDir, `aa-run-${claim.jobId}-`));
    } catch (error) {
      // A full or unwritable scratch disk: the job fails with the reason (and the heartbeat must not hold it forever).
      clearInterval(heartbeat);
      await chain;
      await this.fail(claim, internalFailure(error));
      return;
    }
    let output: PipelineOutput | undefined;
    let failure: unknown;
    try {
      output = await options.pipeline.run(pipelineInputOf(claim.jobId, request), {
        workDir,
        signal: controller.signal,
        progress: (fraction) => throttle.report(fraction),
        log,
        fetchLimits: options.fetchLimits,
        publishPart: (part) => {
          const published = chain.then(() => (lostLease ? undefined : this.publishPart(claim, workDir, part)));
          chain = published.catch((error: unknown) =>
            options.log('warn', `Job ${claim.jobId}: could not publish part ${part.index} (${describe(error)}).`),
          );
          return chain;
        },
      });
    } catch (error) {
      failure = error;
    } finally {
      throttle.stop();
    }
    try {
      await chain;
      if (lostLease) {
        options.log('warn', `Job ${claim.jobId}: this run lost its lease; its result is dropped.`);
      } else if (output) {
        await this.succeed(claim, workDir, output);
      } else if (this.stopping && controller.signal.aborted) {
        await queue.release(
          claim,
          'The worker running this job is stopping; another worker runs it again from the start.',
        );
      } else {
        await this.fail(claim, describeFailure(failure));
      }
    } finally {
      clearInterval(heartbeat);
      await rm(workDir, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  /**
   * Puts a part's files in the output storage and announces them (fenced, like every write of the run). Parts live
   * under one key per job: a run after a takeover makes the same parts again and skips the ones already announced.
   */
  private async publishPart(claim: JobClaim, workDir: string, part: PipelinePart): Promise<void> {
    const current = await this.options.pool.query<JobRow>('SELECT * FROM aa_jobs WHERE id = $1', [claim.jobId]);
    const known = current.rows[0]?.record.parts ?? [];
    if (part.files.every((file) => known.some((k) => k.name === file.name))) return;
    const stored: StoredOutput[] = [];
    for (const file of part.files) {
      stored.push(
        await this.options.storage.put(claim.jobId, file.name, path.join(workDir, file.name), {
          contentType: file.contentType,
          ...(file.durationS !== undefined ? { durationS: file.durationS } : {}),
          key: `${claim.jobId}/parts`,
        }),
      );
    }
    await this.queue.fenced(claim, async (client, row) => {
      const before = recordOf(row);
      const parts = [...(before.parts ?? []).filter((k) => !stored.some((s) => s.name === k.name)), ...stored];
      const record: StoredJob = { ...before, parts, updatedAt: new Date().toISOString() };
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
  }

  private async succeed(claim: JobClaim, workDir: string, output: PipelineOutput): Promise<void> {
    const key = `${claim.jobId}/${claim.token}`;
    let outputs: StoredOutput[];
    try {
      if (output.files.length === 0) throw new Error('The pipeline finished without output files.');
      outputs = [];
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
      this.options.log('error', `Job ${claim.jobId}: ${describe(error)}`);
      await this.options.storage.remove(claim.jobId, key).catch(() => undefined);
      // A full or read-only output storage is `storage_failed`, as in the embedded engine.
      await this.fail(claim, internalFailure(error));
      return;
    }
    const done = await this.queue.fenced(claim, async (client, row) => {
      const now = new Date();
      const before = recordOf(row);
      const record: StoredJob = {
        ...before,
        status: 'succeeded',
        progress: 1,
        outputs,
        result: jobResultOf(before, output, now.getTime()),
        updatedAt: now.toISOString(),
        finishedAt: now.toISOString(),
      };
      await saveJob(client, record, { token: null });
      await appendEvents(client, row, closingEvents(record, `Done: ${formatSeconds(output.durationS)} of audio.`));
      return true;
    });
    if (!done) {
      // Another run owns the job now: these files belong to nothing.
      await this.options.storage.remove(claim.jobId, key).catch(() => undefined);
      this.options.log('warn', `Job ${claim.jobId}: finished after losing its lease; the result is dropped.`);
    }
  }

  private async fail(claim: Claim, error: JobFailure): Promise<void> {
    await this.queue.fenced(claim, async (client, row) => {
      const now = new Date().toISOString();
      const record: StoredJob = { ...recordOf(row), status: 'failed', error, updatedAt: now, finishedAt: now };
      await saveJob(client, record, { token: null });
      await appendEvents(client, row, closingEvents(record, `Failed (${error.code}): ${error.message}`));
    });
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
      await this.listener?.end().catch(() => undefined);
      await this.options.pipeline.close().catch(() => undefined);
    })();
    return this.stopped;
  }
}

export function defaultWorkDir(): string {
  return os.tmpdir();
}
