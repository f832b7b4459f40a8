// One retry policy for every call a run makes to what it depends on (the database, the output storage, the data
// dir): a call that failed for a reason that passes (a dropped connection, a database restarting, a storage server
// down or throttling) is tried again with bounded exponential backoff and full jitter, within a budget of about a
// minute; a failure that does not pass (a full disk, a refused request, a defect) is thrown at once. A call that
// still fails when the budget is spent throws DependencyDown, which the runner turns into a visible end of the run.

export interface RetryPolicy {
  /** Time all tries of one call may take together. */
  budgetMs: number;
  firstDelayMs: number;
  maxDelayMs: number;
}

export const DEPENDENCY_RETRY: RetryPolicy = { budgetMs: 60_000, firstDelayMs: 200, maxDelayMs: 5_000 };

/** A dependency stayed down for a whole retry budget. `what` says which call, `cause` the last failure. */
export class DependencyDown extends Error {
  constructor(
    readonly what: string,
    readonly triesMade: number,
    options: { cause: unknown },
  ) {
    super(`${what} kept failing for ${triesMade} tries: ${messageOf(options.cause)}`, options);
    this.name = 'DependencyDown';
  }
}

const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  // Postgres: admin shutdown, crash shutdown, cannot connect now (starting up), connection failures, serialization.
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '40001',
  '40P01',
  '53300',
]);
const TRANSIENT_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|socket hang up|Client has encountered a connection error|the database system is (starting up|shutting down|in recovery)|terminating connection|Client was closed|ServiceUnavailable|SlowDown|InternalError|RequestTimeout|ThrottlingException/i;

/** Whether an error is one that passes: worth trying the call again. Looks through `cause` chains. */
export function isTransient(error: unknown): boolean {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && TRANSIENT_CODES.has(code)) return true;
    const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if (typeof status === 'number' && (status === 429 || status >= 500)) return true;
    if (e instanceof Error && TRANSIENT_MESSAGES.test(e.message)) return true;
  }
  return false;
}

/**
 * Runs `call` until it succeeds, retrying transient failures within the policy's budget. `onRetry` hears of each
 * failed try that will be tried again (for a log line). An `abort` ends the waiting at once (the last error is thrown).
 */
export async function withRetry<T>(
  what: string,
  call: () => Promise<T>,
  options: { policy?: RetryPolicy; signal?: AbortSignal; onRetry?: (error: unknown, delayMs: number) => void } = {},
): Promise<T> {
  const policy = options.policy ?? DEPENDENCY_RETRY;
  const started = Date.now();
  let delay = policy.firstDelayMs;
  for (let tries = 1; ; tries++) {
    try {
      return await call();
    } catch (error) {
      if (!isTransient(error) || options.signal?.aborted) throw error;
      const left = policy.budgetMs - (Date.now() - started);
      if (left <= 0) throw new DependencyDown(what, tries, { cause: error });
      // Full jitter: workers that lost the same database do not come back in step.
      const wait = Math.min(left, Math.random() * delay);
      options.onRetry?.(error, wait);
      await sleep(wait, options.signal);
      delay = Math.min(policy.maxDelayMs, delay * 2);
    }
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
