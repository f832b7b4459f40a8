// The seam between the HTTP layer and whatever runs jobs. Two implementations: the embedded JobService (one
// process, files in the data dir: `article-audio serve`) and the team service's API node (team/api-service.ts: jobs,
// events and the queue in Postgres, outputs in a shared folder or S3, synthesis on separate worker processes).
// The HTTP layer only ever sees this interface, so both serve the same API byte for byte.
import type { Readable } from 'node:stream';
import type { ByteRange, StoredEvent, StoredJob, StoredOutput } from './job-store';
import type { QueueGauges } from './metrics';
import type { ArticleSubmission } from './submission';

/** A job as a request sees it: its record and its live progress (which may be ahead of the saved record). */
export interface JobHandle {
  readonly id: string;
  readonly record: StoredJob;
  readonly progress: number;
}

export type EventListener = (events: readonly StoredEvent[]) => void;

export interface Following {
  stop(): void;
}

export interface ServiceHealth {
  ok: boolean;
  /** What a load balancer's operator needs to see; never a secret. */
  detail: Record<string, unknown>;
}

/** One dependency a node needs to take work: a data dir, a database, an output storage. */
export interface ReadinessCheck {
  ok: boolean;
  /** Why not, in a few words or an error code (ECONNREFUSED, timeout); never a secret, a path or an address. */
  error?: string;
}

/** Whether a node can take requests now (`/readyz`): every check passes. A load balancer's view, no secrets. */
export interface Readiness {
  ready: boolean;
  checks: Record<string, ReadinessCheck>;
}

/** Runs named checks at once, each within `timeoutMs` (a hung NFS mount or database answers "timeout"). */
export async function readinessOf(
  checks: Record<string, () => Promise<ReadinessCheck>>,
  timeoutMs: number,
): Promise<Readiness> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]): Promise<[string, ReadinessCheck]> => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<ReadinessCheck>((resolve) => {
        timer = setTimeout(() => resolve({ ok: false, error: 'timeout' }), timeoutMs);
      });
      try {
        return [name, await Promise.race([check().catch((error: unknown) => failedCheck(error)), timeout])];
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return { ready: entries.every(([, check]) => check.ok), checks: Object.fromEntries(entries) };
}

/** A failed check as a load balancer may see it: the error's code only (messages can name paths, users, hosts). */
export function failedCheck(error: unknown): ReadinessCheck {
  const code = (error as { code?: unknown; name?: unknown } | undefined)?.code;
  if (typeof code === 'string' && /^[A-Za-z0-9_]{1,40}$/.test(code)) return { ok: false, error: code };
  const name = (error as { name?: unknown } | undefined)?.name;
  if (typeof name === 'string' && /^[A-Za-z0-9_]{1,40}$/.test(name) && name !== 'Error')
    return { ok: false, error: name };
  return { ok: false, error: 'failed' };
}

/** What the HTTP layer knows of a submission besides its body: for the logs (a team keeps it with the job). */
export interface SubmitContext {
  /** The X-Request-Id of the submitting request. */
  requestId?: string;
}

export interface JobServiceApi {
  /**
   * Accepts a job: durable before this resolves. With an idempotency key that the same owner used within the window
   * for the same request, resolves to the original job (`replayed`). Throws QueueFullError, IdempotencyConflictError,
   * StoppingError (job-service.ts) or a storage error.
   */
  submit(
    owner: string,
    submission: ArticleSubmission,
    idempotencyKey?: string,
    context?: SubmitContext,
  ): Promise<{ job: JobHandle; replayed: boolean }>;
  /** The job if it exists, belongs to `owner` and has not expired. */
  find(owner: string, id: string): Promise<JobHandle | undefined>;
  /** Cancels a queued or processing job (failed, code `cancelled`); a finished job stays as it is. Returns it as it is now. */
  cancel(job: JobHandle): Promise<JobHandle>;
  /**
   * Sends the job's events after `afterId` to the listener, then every later one as it happens, in order and each
   * once. Undefined when the job has finished and its whole history is in storedHistory().
   */
  follow(job: JobHandle, afterId: number, listener: EventListener): Promise<Following | undefined>;
  storedHistory(job: JobHandle): Promise<StoredEvent[]>;
  /** The bytes of one output of the job (whole, or one range). */
  readOutput(job: JobHandle, output: StoredOutput, range?: ByteRange): Readable;
  /** Liveness (`/healthz`): the process answers. */
  health(): Promise<ServiceHealth>;
  /**
   * Readiness (`/readyz`): what this node needs to take work is there (embedded: the data-dir lock held and the
   * data dir writable; team API node: Postgres answers and the output storage is reachable). Not ready while stopping.
   */
  readiness(): Promise<Readiness>;
  /**
   * Team API node only: the workers as `article-audio workers --json` lists them (GET /v1/admin/workers, for admin
   * tokens). The embedded engine has no workers to list and leaves it out: that route is 404 there.
   */
  workers?(): Promise<readonly object[]>;
  /** The queue as /metrics shows it (embedded: the queue in memory; team API node: Postgres). */
  queueGauges(): Promise<QueueGauges>;
  stop(): Promise<void>;
}
