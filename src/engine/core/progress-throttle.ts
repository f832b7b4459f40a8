// Progress as clients see it: never going backwards, below 1 until the job has succeeded, and at most one event
// per interval however often the pipeline reports (the last value of a burst is sent when the interval ends).

/** Progress of a job that has not succeeded yet stays below this; 1.0 means done (spec 2.3). */
export const MAX_UNFINISHED_PROGRESS = 0.99;

export class ProgressThrottle {
  private best: number;
  private lastSentAt = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    start: number,
    private readonly intervalMs: number,
    private readonly send: (progress: number) => void,
  ) {
    this.best = start;
  }

  report(fraction: number): void {
    if (this.stopped || !Number.isFinite(fraction)) return;
    const value = Math.round(Math.min(MAX_UNFINISHED_PROGRESS, Math.max(0, fraction)) * 1000) / 1000;
    if (value <= this.best) return;
    this.best = value;
    const wait = this.lastSentAt + this.intervalMs - Date.now();
    if (wait <= 0) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), wait);
  }

  /** Stops sending; a value still waiting for its interval is dropped (the job's next status supersedes it). */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private flush(): void {
    this.timer = undefined;
    if (this.stopped) return;
    this.lastSentAt = Date.now();
    this.send(this.best);
  }
}
