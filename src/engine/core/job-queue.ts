// Jobs waiting for a processing slot, first come first served, with at most `concurrency` running at once and at
// most `depth` waiting (new submissions beyond that are refused with 429; jobs recovered after a restart are
// always taken back, whatever the depth). It is the embedded engine's WorkQueue (the seam team/worker.ts's
// PgWorkQueue implements over Postgres): the engine's own slots claim from it, one lease per run, and hand the job to
// the WorkerLoop (embedded/worker-loop.ts); a lease lives as long as its run in this process, so a crash ends every
// lease at once and Recovery (embedded/recovery.ts) takes the jobs back at the next start.
import { randomBytes } from 'node:crypto';
import type { Claim, WorkQueue } from './job-store';

export interface QueueEntry {
  readonly id: string;
}

export class JobQueue<T extends QueueEntry> implements WorkQueue {
  private waiting: T[] = [];
  /** Runs in progress, by their claim's token: the entry each took. */
  private readonly leases = new Map<string, T>();
  private attempts = 0;
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
   * a place even so (for a client below its fair share of a queue that others filled; see Intake.submit).
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

  /** The entries waiting, first in line first. */
  get waitingEntries(): readonly T[] {
    return this.waiting;
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

  /** The next waiting job, leased to a free slot; undefined when none waits, all slots run or the queue is paused. */
  claim(_workerId = 'embedded'): Promise<Claim | undefined> {
    return Promise.resolve(this.claimNow());
  }

  /** True while the run still holds its job (in one process a lease ends only with its run). */
  heartbeat(claim: Claim): Promise<boolean> {
    return Promise.resolve(this.leases.get(claim.token)?.id === claim.jobId);
  }

  /** Gives a claimed job back: first in line again, its slot free. */
  release(claim: Claim, _reason: string): Promise<boolean> {
    const entry = this.leases.get(claim.token);
    if (entry) {
      this.settle(claim);
      this.waiting.unshift(entry);
      this.pump();
    }
    return Promise.resolve(entry !== undefined);
  }

  private claimNow(): Claim | undefined {
    if (this.paused || this.running >= this.concurrency) return undefined;
    const entry = this.waiting.shift();
    if (!entry) return undefined;
    this.running++;
    const claim: Claim = { jobId: entry.id, token: randomBytes(8).toString('hex'), attempt: ++this.attempts };
    this.leases.set(claim.token, entry);
    return claim;
  }

  /** Ends a claim's lease and frees its slot. */
  private settle(claim: Claim): void {
    if (!this.leases.delete(claim.token)) return;
    this.running--;
    if (this.running === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** The engine's slots: each claims a job and runs it; a finished run settles its claim and the next is claimed. */
  private pump(): void {
    for (let claim = this.claimNow(); claim; claim = this.claimNow()) {
      const taken = claim;
      const entry = this.leases.get(taken.token) as T;
      const started = Date.now();
      void this.run(entry)
        .catch(() => undefined)
        .finally(() => {
          this.averageRunMs = 0.8 * this.averageRunMs + 0.2 * (Date.now() - started);
          this.settle(taken);
          this.pump();
        });
    }
  }
}
