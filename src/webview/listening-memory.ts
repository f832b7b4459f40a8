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

export interface PlaybackPreferences {
  rate: number;
  volume: number;
  muted: boolean;
}

export class ListeningMemory {
  constructor(
    private readonly store: KeyValueStore,
    private readonly now: () => number = Date.now,
  ) {}

  position(jobId: string): number {
    const saved = this.positions()[jobId];
    return saved && Number.isFinite(saved.time) && saved.time > 0 ? saved.time : 0;
  }

  async savePosition(jobId: string, time: number, durationS?: number): Promise<void> {
    const finished = durationS !== undefined && durationS > 0 && time >= durationS - FINISHED_MARGIN_S;
    const value = finished || !Number.isFinite(time) || time < 0 ? 0 : Math.round(time * 10) / 10;
    const positions = this.positions();
    if (positions[jobId]?.time === value) return;
    positions[jobId] = { time: value, at: this.now() };
    const kept = Object.entries(positions)
      .sort(([, a], [, b]) => b.at - a.at)
      .slice(0, MAX_REMEMBERED);
    await this.store.update(POSITIONS_KEY, Object.fromEntries(kept));
  }

  async forget(jobId: string): Promise<void> {
    const positions = this.positions();
    if (!(jobId in positions)) return;
    delete positions[jobId];
    await this.store.update(POSITIONS_KEY, positions);
  }

  preferences(): PlaybackPreferences {
    const saved = this.store.get<Partial<PlaybackPreferences>>(PLAYBACK_KEY) ?? {};
    return {
      rate: isRate(saved.rate) ? saved.rate : 1,
      volume: isVolume(saved.volume) ? saved.volume : 1,
      muted: saved.muted === true,
    };
  }

  async savePreferences(preferences: PlaybackPreferences): Promise<void> {
    const current = this.preferences();
    const next = { rate: clampRate(preferences.rate), volume: isVolume(preferences.volume) ? preferences.volume : current.volume, muted: preferences.muted };
    if (next.rate === current.rate && next.volume === current.volume && next.muted === current.muted) return;
    await this.store.update(PLAYBACK_KEY, next);
  }

  private positions(): Record<string, SavedPosition> {
    const saved = this.store.get<unknown>(POSITIONS_KEY);
    if (typeof saved !== 'object' || saved === null) return {};
    const result: Record<string, SavedPosition> = {};
    for (const [id, value] of Object.entries(saved as Record<string, unknown>)) {
      if (typeof value !== 'object' || value === null) continue;
      const { time, at } = value as Partial<SavedPosition>;
      if (typeof time === 'number' && Number.isFinite(time)) result[id] = { time, at: typeof at === 'number' ? at : 0 };
    }
    return result;
  }
}
