// How a speech provider's request is tried again (the speech layer's own policy: it may not import the engine's
// retry.ts). A failure that passes (429, 5xx, 408, a dropped or refused connection, a request past its time limit)
// is tried again with exponential backoff and full jitter, waiting at least what a Retry-After asks, within a budget
// per line; anything else (a refused key, a bad request, an answer that is not audio) fails at once.

export interface ProviderRetryPolicy {
  /** Time all tries of one line may take together. */
  budgetMs: number;
  firstDelayMs: number;
  maxDelayMs: number;
}

export const PROVIDER_RETRY: ProviderRetryPolicy = { budgetMs: 60_000, firstDelayMs: 500, maxDelayMs: 10_000 };

/** One try failed. `transient`: worth another; `retryAfterMs`: what the provider asked to wait. */
export class ProviderFailure extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'ProviderFailure';
  }
}

/** Retry-After as seconds or an HTTP date, in milliseconds from now; undefined when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Runs `attempt` until it succeeds or fails for good. Throws the last ProviderFailure (its message says how many
 * tries were made when the budget ran out); an abort of `signal` ends at once with the signal's reason.
 */
export async function withProviderRetry<T>(
  attempt: () => Promise<T>,
  policy: ProviderRetryPolicy,
  signal: AbortSignal,
  onRetry?: (failure: ProviderFailure, delayMs: number) => void,
): Promise<T> {
  const started = Date.now();
  let delay = policy.firstDelayMs;
  for (let tries = 1; ; tries++) {
    signal.throwIfAborted();
    try {
      return await attempt();
    } catch (error) {
      signal.throwIfAborted();
      if (!(error instanceof ProviderFailure)) throw error;
      if (!error.transient) throw error;
      const left = policy.budgetMs - (Date.now() - started);
      const wait = Math.max(error.retryAfterMs ?? 0, Math.random() * delay);
      if (wait > left)
        throw new ProviderFailure(
          `${error.message} (${tries} ${tries === 1 ? 'try' : 'tries'} in ${Math.round((Date.now() - started) / 1000)} s)`,
          false,
        );
      onRetry?.(error, wait);
      await sleep(wait, signal);
      delay = Math.min(policy.maxDelayMs, delay * 2);
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      if (signal.aborted) reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      else resolve();
    }
  });
}
