// Jobs waiting for a processing slot, first come first served, with at most `concurrency` running at once and at
// most `depth` waiting (new submissions beyond that are refused with 429; jobs recovered after a restart are
// always taken back, whatever the depth).

export interface QueueEntry {
  readonly id: string;
}

export class JobQueue<T extends QueueEntry> {
  private waiting: T[] = [];
  private running = 0;
  private reserved = 0;
  private paused = false;
  /** Recent run time, for telling refused clients when a slot is likely to free up. */
  private averageRunMs = 10_000;
  private readonly idleWaiters: (() => void)[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly depth: number,
    private readonly run: (entry: T) => Promise<void>,
  ) {}

  /**
   * Holds a place in the queue for a submission that is being stored; false when the queue is full. `beyondDepth`:
   * a place even so (for a client below its fair share of a queue that others filled; see JobService.submit).
   */
  reserve(beyondDepth = false): boolean {
    if (!beyondDepth && this.waiting.length + this.reserved >= this.depth) return false;
    this.reserved++;
    return true;
  }

  cancelReservation(): void {
    this.reserved = Math.max(0, this.reserved - 1);
  }

  /** Adds a job behind the others; `reserved` when it was admitted with reserve(). */
  enqueue(entry: T, reserved: boolean): void {
    if (reserved) this.cancelReservation();
    this.waiting.push(entry);
    this.pump();
  }

  /** Takes a waiting job out of the queue; false when it is not waiting (already running, or unknown). */
  remove(id: string): boolean {
    const index = this.waiting.findIndex((e) => e.id === id);
    if (index === -1) return false;
    this.waiting.splice(index, 1);
    return true;
  }

  get waitingCount(): number {
    return this.waiting.length;
  }

  countWaiting(predicate: (entry: T) => boolean): number {
    let count = 0;
    for (const entry of this.waiting) if (predicate(entry)) count++;
    return count;
  }

  get runningCount(): number {
    return this.running;
  }

  /** Seconds after which a refused submission is likely to be accepted: when the next waiting job starts. */
  retryAfterSeconds(): number {
    return Math.min(60, Math.max(1, Math.ceil(this.averageRunMs / 1000 / this.concurrency)));
  }

  /** Starts no more runs (the engine is stopping); running ones go on until they settle. */
  pause(): void {
    this.paused = true;
  }

  /** Resolves when no run is in progress. */
  idle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (!this.paused && this.running < this.concurrency && this.waiting.length > 0) {
      const entry = this.waiting.shift() as T;
      this.running++;
      const started = Date.now();
      void this.run(entry)
        .catch(() => undefined)
        .finally(() => {
          this.running--;
          this.averageRunMs = 0.8 * this.averageRunMs + 0.2 * (Date.now() - started);
          if (this.running === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
          this.pump();
        });
    }
  }
}
