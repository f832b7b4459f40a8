// The listening queue: the jobs the listener wants to hear next, in order, as podcast and read-later apps keep it.
// "Play Next" puts a job first, "Add to Queue" last; the player takes the first one when an article ends. Kept in
// globalState so it survives reloads. Takes a Memento-shaped store and has no vscode import (unit-tested in Node).

export interface KeyValueStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): PromiseLike<void>;
}

/** Where a queued job is: playable now, still converting, or never going to play (failed, removed). */
export type QueuedState = 'ready' | 'pending' | 'gone';

export const QUEUE_KEY = 'articleAudio.queue.v1';
/** A queue longer than this is a mistake, not a listening plan; the oldest entries go. */
export const MAX_QUEUED = 500;

export class ListeningQueue {
  private ids: string[];
  private readonly listeners = new Set<() => void>();
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly store: KeyValueStore) {
    const saved = store.get<unknown>(QUEUE_KEY);
    this.ids = Array.isArray(saved)
      ? [...new Set(saved.filter((id): id is string => typeof id === 'string' && id.length > 0))]
      : [];
  }

  /** Job ids, next first. */
  items(): readonly string[] {
    return this.ids;
  }

  has(id: string): boolean {
    return this.ids.includes(id);
  }

  /** Puts jobs at the front, in the given order (moved there if already queued). */
  playNext(...ids: string[]): void {
    this.change(() => [...ids, ...this.ids.filter((id) => !ids.includes(id))]);
  }

  /** Puts jobs at the end, in the given order (moved there if already queued). */
  add(...ids: string[]): void {
    this.change(() => [...this.ids.filter((id) => !ids.includes(id)), ...ids]);
  }

  remove(id: string): void {
    if (this.has(id)) this.change(() => this.ids.filter((queued) => queued !== id));
  }

  clear(): void {
    if (this.ids.length > 0) this.change(() => []);
  }

  /**
   * The job to play next: the first queued one that is ready is taken off the queue; one still converting stays
   * first and nothing is taken (the queue waits for it, so parts play in order); gone or failed ones are dropped.
   */
  takeNext(state: (id: string) => QueuedState): string | undefined {
    let dropped = 0;
    let taken: string | undefined;
    for (const id of this.ids) {
      const now = state(id);
      if (now === 'gone') {
        dropped++;
        continue;
      }
      if (now === 'ready') taken = id;
      break;
    }
    const skip = dropped + (taken === undefined ? 0 : 1);
    if (skip > 0) this.change(() => this.ids.slice(skip));
    return taken;
  }

  /** Forgets ids the job list no longer has. */
  retain(exists: (id: string) => boolean): void {
    if (this.ids.some((id) => !exists(id))) this.change(() => this.ids.filter(exists));
  }

  onDidChange(listener: () => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Resolves when every change so far is written. */
  flushed(): Promise<void> {
    return this.writing;
  }

  private change(next: () => string[]): void {
    const ids = [...new Set(next().filter((id) => typeof id === 'string' && id.length > 0))].slice(-MAX_QUEUED);
    if (ids.length === this.ids.length && ids.every((id, i) => id === this.ids[i])) return;
    this.ids = ids;
    // One write at a time, each with the newest list: overlapping updates of one globalState key can lose the later.
    this.writing = this.writing
      .then(() => this.store.update(QUEUE_KEY, this.ids))
      .then(
        () => undefined,
        () => undefined,
      );
    for (const listener of this.listeners) listener();
  }
}
