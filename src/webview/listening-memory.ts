// What the player remembers between sessions, in the extension's globalState: where each job was left, and the
// listener's speed and volume (global, since they are habits, not properties of one article).
// Takes a Memento-shaped store instead of importing vscode, so it is unit-tested in plain Node.
import { clampRate, isRate, isVolume } from './protocol';

export interface KeyValueStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): PromiseLike<void>;
}

interface SavedPosition {
  time: number;
  /** Epoch ms, to forget the oldest first. */
  at: number;
}

export const POSITIONS_KEY = 'articleAudio.player.positions';
export const PLAYBACK_KEY = 'articleAudio.player.playback';
/** Enough for any real listening history while keeping globalState small. */
export const MAX_REMEMBERED = 200;
/** A job heard to (nearly) the end starts again from the beginning next time. */
export const FINISHED_MARGIN_S = 3;
/**
 * Writes are gathered for this long and then made one at a time. VS Code's globalState can hand back an older value
 * when updates of one key overlap (a later update is overwritten by the echo of an earlier one), which lost speed
 * changes made with three quick key presses; so this class keeps the truth in memory and writes rarely.
 */
export const WRITE_DELAY_MS = 400;

export interface PlaybackPreferences {
  rate: number;
  volume: number;
  muted: boolean;
}

export class ListeningMemory {
  private positionsCache: Record<string, SavedPosition> | undefined;
  private preferencesCache: PlaybackPreferences | undefined;
  private readonly unwritten = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: KeyValueStore,
    private readonly now: () => number = Date.now,
    private readonly writeDelayMs = WRITE_DELAY_MS,
  ) {}

  position(jobId: string): number {
    const saved = this.positions()[jobId];
    return saved && Number.isFinite(saved.time) && saved.time > 0 ? saved.time : 0;
  }

  savePosition(jobId: string, time: number, durationS?: number): void {
    const finished = durationS !== undefined && durationS > 0 && time >= durationS - FINISHED_MARGIN_S;
    const value = finished || !Number.isFinite(time) || time < 0 ? 0 : Math.round(time * 10) / 10;
    const positions = this.positions();
    if (positions[jobId]?.time === value) return;
    positions[jobId] = { time: value, at: this.now() };
    const ids = Object.keys(positions);
    if (ids.length > MAX_REMEMBERED) {
      for (const id of ids
        .sort((a, b) => (positions[a]?.at ?? 0) - (positions[b]?.at ?? 0))
        .slice(0, ids.length - MAX_REMEMBERED))
        delete positions[id];
    }
    this.scheduleWrite(POSITIONS_KEY);
  }

  forget(jobId: string): void {
    const positions = this.positions();
    if (!(jobId in positions)) return;
    delete positions[jobId];
    this.scheduleWrite(POSITIONS_KEY);
  }

  preferences(): PlaybackPreferences {
    if (!this.preferencesCache) {
      const saved = this.store.get<Partial<PlaybackPreferences>>(PLAYBACK_KEY) ?? {};
      this.preferencesCache = {
        rate: isRate(saved.rate) ? saved.rate : 1,
        volume: isVolume(saved.volume) ? saved.volume : 1,
        muted: saved.muted === true,
      };
    }
    return { ...this.preferencesCache };
  }

  savePreferences(preferences: PlaybackPreferences): void {
    const current = this.preferences();
    const next = {
      rate: clampRate(preferences.rate),
      volume: isVolume(preferences.volume) ? preferences.volume : current.volume,
      muted: preferences.muted,
    };
    if (next.rate === current.rate && next.volume === current.volume && next.muted === current.muted) return;
    this.preferencesCache = next;
    this.scheduleWrite(PLAYBACK_KEY);
  }

  /** Writes whatever is not yet in the store (on close and dispose). */
  flush(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const keys = [...this.unwritten];
    this.unwritten.clear();
    // One write after another, never two of one key at once.
    this.writing = this.writing.then(async () => {
      for (const key of keys) {
        const value = key === POSITIONS_KEY ? this.positions() : this.preferences();
        try {
          await this.store.update(key, value);
        } catch {
          // A full or broken storage loses a position; playback goes on.
        }
      }
    });
    return this.writing;
  }

  private scheduleWrite(key: string): void {
    this.unwritten.add(key);
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => void this.flush(), this.writeDelayMs);
  }

  private positions(): Record<string, SavedPosition> {
    if (this.positionsCache) return this.positionsCache;
    const saved = this.store.get<unknown>(POSITIONS_KEY);
    const result: Record<string, SavedPosition> = {};
    if (typeof saved === 'object' && saved !== null) {
      for (const [id, value] of Object.entries(saved as Record<string, unknown>)) {
        if (typeof value !== 'object' || value === null) continue;
        const { time, at } = value as Partial<SavedPosition>;
        if (typeof time === 'number' && Number.isFinite(time))
          result[id] = { time, at: typeof at === 'number' ? at : 0 };
      }
    }
    this.positionsCache = result;
    return result;
  }
}
