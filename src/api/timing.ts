// Time in the client: the caller's deadline and AbortSignal joined into one scope that every request and every wait
// honours, backoff with jitter, the spec's polling schedule, and Retry-After.
import { TimeoutError, abortReason, formatDuration } from './errors';
import type { PollingOptions } from './types';

/** Longest delay setTimeout accepts; longer ones fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * One operation's limits: aborts when the caller's signal aborts (with the caller's reason) or when the deadline
 * passes (with a TimeoutError of kind `deadline`). Dispose it when the operation ends, to clear its timer.
 */
export class OperationScope {
  readonly signal: AbortSignal;
  readonly deadline: number | undefined;
  private readonly controller = new AbortController();
  private readonly startedAt = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private readonly unlink: () => void;

  constructor(
    callerSignal: AbortSignal | undefined,
    deadline: number | undefined,
    /** What the operation does, for the deadline's message: "following job 42". */
    private readonly operation: string,
  ) {
    this.signal = this.controller.signal;
    this.deadline = deadline !== undefined && Number.isFinite(deadline) ? deadline : undefined;
    this.unlink = linkAbort(callerSignal, this.controller);
    if (this.deadline !== undefined && !this.signal.aborted) this.armDeadline();
  }

  private armDeadline(): void {
    const remaining = (this.deadline ?? Infinity) - Date.now();
    if (remaining <= 0) {
      this.controller.abort(this.deadlineError());
      return;
    }
    this.timer = setTimeout(() => this.armDeadline(), Math.min(remaining, MAX_TIMER_MS));
    this.timer.unref?.();
  }

  private deadlineError(): TimeoutError {
    const allowed = (this.deadline ?? Date.now()) - this.startedAt;
    return new TimeoutError(
      `Stopped ${this.operation}: its time limit of ${formatDuration(allowed)} passed. ` +
        'Nothing was lost on the service; try again later or allow more time.',
      'deadline',
      allowed,
    );
  }

  /** Milliseconds until the deadline (Infinity without one). */
  remainingMs(): number {
    return this.deadline === undefined ? Infinity : Math.max(0, this.deadline - Date.now());
  }

  /** Throws the abort reason or the deadline's TimeoutError when the scope is over. */
  throwIfDone(): void {
    if (this.signal.aborted) throw this.reason();
    if (this.deadline !== undefined && Date.now() >= this.deadline) {
      this.controller.abort(this.deadlineError());
      throw this.reason();
    }
  }

  /** Why the scope ended: the caller's abort reason or the deadline's TimeoutError. */
  reason(): unknown {
    return abortReason(this.signal);
  }

  sleep(ms: number): Promise<void> {
    return sleep(ms, this.signal);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.unlink();
  }
}

/** Aborts `target` when `source` aborts, with the same reason. Returns a function that removes the link. */
export function linkAbort(source: AbortSignal | undefined, target: AbortController): () => void {
  if (!source) return () => {};
  if (source.aborted) {
    target.abort(abortReason(source));
    return () => {};
  }
  const onAbort = () => target.abort(abortReason(source));
  source.addEventListener('abort', onAbort, { once: true });
  return () => source.removeEventListener('abort', onAbort);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  // The rejection is the signal's reason, whatever it is, as AbortSignal-aware Node APIs do.
  /* eslint-disable @typescript-eslint/prefer-promise-reject-errors */
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.min(Math.max(0, ms), MAX_TIMER_MS),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  /* eslint-enable @typescript-eslint/prefer-promise-reject-errors */
}

/** `base` scaled by a random factor in [1 - jitter, 1 + jitter], so that many clients do not retry in step. */
export function withJitter(base: number, jitter: number, random: () => number = Math.random): number {
  const spread = Math.min(Math.max(jitter, 0), 1);
  return base * (1 - spread + 2 * spread * random());
}

/** Exponential backoff for retries: initialMs, doubled per attempt, capped, jittered. `attempt` counts from 0. */
export function backoffDelay(
  attempt: number,
  initialMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const base = Math.min(initialMs * 2 ** Math.min(attempt, 30), maxMs);
  return Math.round(Math.min(withJitter(base, 0.25, random), maxMs));
}

/** Defaults within the spec's recommendation (4.2): first wait 2-3 s, doubled after each check, capped at 30-60 s. */
export const DEFAULT_POLLING: Required<PollingOptions> = { initialMs: 2500, factor: 2, maxMs: 40_000, jitter: 0.2 };

/** The waits between status checks: initialMs, multiplied by factor after each check, jittered, never above maxMs. */
export class PollingSchedule {
  private checks = 0;
  constructor(
    private readonly options: Required<PollingOptions>,
    private readonly random: () => number = Math.random,
  ) {}

  /** The base (unjittered) wait after the n-th check, counting from 0. */
  baseDelay(n: number): number {
    const { initialMs, factor, maxMs } = this.options;
    return Math.min(initialMs * factor ** Math.min(n, 60), maxMs);
  }

  next(): number {
    const base = this.baseDelay(this.checks++);
    return Math.round(Math.min(withJitter(base, this.options.jitter, this.random), this.options.maxMs));
  }
}

export function resolvePolling(options: PollingOptions | undefined): Required<PollingOptions> {
  const merged = { ...DEFAULT_POLLING, ...options };
  const { initialMs, factor, maxMs, jitter } = merged;
  if (!(initialMs > 0) || !(factor >= 1) || !(maxMs >= initialMs) || !(jitter >= 0 && jitter < 1)) {
    throw new RangeError(
      `Invalid polling options (initialMs ${initialMs}, factor ${factor}, maxMs ${maxMs}, jitter ${jitter}): ` +
        'initialMs must be positive, factor at least 1, maxMs at least initialMs, jitter in [0, 1).',
    );
  }
  return merged;
}

/**
 * When to retry, from `retry-after-ms` (milliseconds) or `Retry-After` (seconds or an HTTP date), in milliseconds.
 * Undefined when absent or unreadable.
 */
export function parseRetryAfter(
  headers: Record<string, string | string[] | undefined>,
  now = Date.now(),
): number | undefined {
  const first = (name: string) => {
    const value = headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const ms = first('retry-after-ms');
  if (ms !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.round(Number(ms));
  const value = first('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
