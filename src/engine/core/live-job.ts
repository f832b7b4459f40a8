// A job as the running engine holds it: its persisted record, its progress, and its stream history with the
// clients following it. Events get their ids here, are written to the store in order (batched while a write is in
// flight), and only then fanned out from memory to every subscriber, so a client never sees an event that a crash
// could take back, and hundreds of followers cost one write and one render per event, not one disk read each.
import type { EventBus, JobStore, StoredEvent, StoredJob, StreamEventName } from './job-store';
import { isTerminal } from './job-store';

export type EventListener = (events: readonly StoredEvent[]) => void;

export interface NewEvent {
  event: StreamEventName;
  data: unknown;
}

export class LiveJob {
  /** The last progress sent, 0..1; never decreases, also across restarts of the engine. */
  progress = 0;
  /** Where the job's history is while it can still grow; undefined once it is finished (read from the store). */
  private history: StoredEvent[] | undefined;
  private lastEventId: number;
  private readonly listeners = new Set<EventListener>();
  private pending: StoredEvent[] = [];
  private pendingDurable = false;
  private draining: Promise<void> | undefined;
  private transitions: Promise<void> = Promise.resolve();

  constructor(
    public record: StoredJob,
    private readonly store: JobStore,
    history: StoredEvent[] | undefined,
    lastEventId: number,
    private readonly onWriteError: (error: unknown) => void,
  ) {
    this.history = history;
    this.lastEventId = lastEventId;
  }

  get id(): string {
    return this.record.id;
  }

  get finished(): boolean {
    return isTerminal(this.record.status);
  }

  /**
   * Runs state changes of this job one at a time, in order (a cancel arriving while the job is being started waits
   * for the start to be on disk). A failing change does not block the ones after it.
   */
  serially<T>(change: () => Promise<T>): Promise<T> {
    const result = this.transitions.then(change);
    this.transitions = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  /** Resolves once every change queued so far is done. */
  settled(): Promise<void> {
    return this.transitions;
  }

  /**
   * Appends events to the history. The promise resolves when they are stored and delivered; `durable` also asks
   * the store to flush them to the disk itself (for the events that end a job).
   */
  emit(events: readonly NewEvent[], durable = false): Promise<void> {
    for (const e of events) this.pending.push({ id: ++this.lastEventId, event: e.event, data: e.data });
    this.pendingDurable ||= durable;
    this.draining ??= this.drain().finally(() => {
      this.draining = undefined;
    });
    return this.draining;
  }

  /** Resolves when every event emitted so far is stored and delivered. */
  async flushed(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending;
      const durable = this.pendingDurable;
      this.pending = [];
      this.pendingDurable = false;
      try {
        await this.store.appendEvents(this.id, batch, durable);
      } catch (error) {
        // Followers still get the events; only their replay after a restart is at risk, which the log says.
        this.onWriteError(error);
      }
      this.history?.push(...batch);
      for (const listener of this.listeners) listener(batch);
    }
  }

  /**
   * Sends the history after `afterId` to the listener, then every later event as it happens. Returns undefined
   * when the job is finished and its history is only in the store (read it from there).
   */
  follow(afterId: number, listener: EventListener): { stop(): void } | undefined {
    if (!this.history) return undefined;
    const backlog = this.history.filter((e) => e.id > afterId);
    if (backlog.length > 0) listener(backlog);
    this.listeners.add(listener);
    return { stop: () => this.listeners.delete(listener) };
  }

  /**
   * Whether the job's stream holds the `result` event of part `index` (emitted, maybe not yet stored). Undefined when
   * the history is not in memory (a finished job).
   */
  announcedPart(index: number): boolean | undefined {
    if (!this.history) return undefined;
    const isPart = (e: StoredEvent) =>
      e.event === 'result' && (e.data as { part?: { index?: unknown } } | null)?.part?.index === index;
    return this.history.some(isPart) || this.pending.some(isPart);
  }

  get followerCount(): number {
    return this.listeners.size;
  }

  /** Keeps the history in memory only while the job can still change (after its last events are delivered). */
  releaseHistory(): void {
    this.history = undefined;
  }
}

/**
 * The embedded engine's EventBus (the seam team/pg-events.ts implements over Postgres): the streams of every job
 * this process holds. A job that can still change is followed through its LiveJob (its history after the id, then
 * each event as it is stored); a finished job's history is read from the store once, as it will not grow.
 */
export class LiveJobEvents implements EventBus {
  constructor(
    private readonly jobOf: (jobId: string) => LiveJob | undefined,
    private readonly store: Pick<JobStore, 'readEvents'>,
  ) {}

  /** Subscribes to a job's events after `afterId`; for a job that can still change, undefined when it cannot. */
  followLive(jobId: string, afterId: number, listener: EventListener): { stop(): void } | undefined {
    return this.jobOf(jobId)?.follow(afterId, listener);
  }

  async subscribe(jobId: string, afterId: number, listener: EventListener): Promise<{ stop(): void }> {
    const following = this.followLive(jobId, afterId, listener);
    if (following) return following;
    const rest = await this.history(jobId, afterId);
    if (rest.length > 0) listener(rest);
    return { stop: () => undefined };
  }

  async history(jobId: string, afterId: number): Promise<StoredEvent[]> {
    const events = await this.store.readEvents(jobId);
    return afterId > 0 ? events.filter((e) => e.id > afterId) : events;
  }
}
