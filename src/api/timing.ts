// Time in the client: the caller's deadline and AbortSignal joined into one scope that every request and every wait
// honours (AbortSignal.any + AbortSignal.timeout, timers/promises), backoff with jitter, the spec's polling schedule,
// and Retry-After.
import { setTimeout as delay } from 'node:timers/promises';
import { TimeoutError, abortReason, formatDuration } from './errors';
import type { PollingOptions } from './types';

/** Longest delay a timer accepts; longer ones fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * One operation's limits: its signal aborts when the caller's signal aborts (`reason()` is then the caller's reason)
 * or when the deadline passes (`reason()` is a TimeoutError of kind `deadline` naming the operation).
 */
export class OperationScope {
  readonly signal: AbortSignal;
  readonly deadline: number | undefined;
  private readonly deadlineSignal: AbortSignal | undefined;
  private readonly allowedMs: number;
  private deadlineError: TimeoutError | undefined;

  constructor(
    callerSignal: AbortSignal | undefined,
    deadline: number | undefined,
    /** What the operation does, for the deadline's message: "following job 42". */
    private readonly operation: string,
  ) {
    this.deadline = deadline !== undefined && Number.isFinite(deadline) ? deadline : undefined;
    this.allowedMs = Math.max(0, (this.deadline ?? Date.now()) - Date.now());
    // A deadline beyond what a timer can hold is checked by throwIfDone alone.
    if (this.deadline !== undefined && this.allowedMs <= MAX_TIMER_MS)
      this.deadlineSignal = AbortSignal.timeout(this.allowedMs);
    const signals = [callerSignal, this.deadlineSignal].filter((signal): signal is AbortSignal => !!signal);
    this.signal = AbortSignal.any(signals);
  }

  /** Milliseconds until the deadline (Infinity without one). */
  remainingMs(): number {
    return this.deadline === undefined ? Infinity : Math.max(0, this.deadline - Date.now());
  }

  /** Throws the abort reason or the deadline's TimeoutError when the scope is over. */
  throwIfDone(): void {
    if (this.signal.aborted || (this.deadline !== undefined && Date.now() >= this.deadline)) throw this.reason();
  }

  /** Why the scope ended: the caller's abort reason or the deadline's TimeoutError. */
  reason(): unknown {
    const callerFirst = this.signal.aborted && this.signal.reason !== this.deadlineSignal?.reason;
    if (callerFirst) return abortReason(this.signal);
    this.deadlineError ??= new TimeoutError(
      `Stopped ${this.operation}: its time limit of ${formatDuration(this.allowedMs)} passed.`,
      'deadline',
      this.allowedMs,
    );
    return this.deadlineError;
  }

  /** Resolves after `ms`, or rejects with `reason()` as soon as the scope ends. */
  sleep(ms: number): Promise<void> {
    return delay(Math.min(Math.max(0, ms), MAX_TIMER_MS), undefined, { signal: this.signal }).catch(() => {
      throw this.reason();
    });
  }
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
