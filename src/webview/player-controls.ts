// The pure logic of the player's controls (media keys, the OS media session's position, the sleep timer), kept free
// of the DOM and of vscode so it is unit-tested in plain Node; media/player/media-session.ts and sleep-timer.ts use it.
import { formatTime } from './transcript';

/** What a media key asks of the player. */
export type MediaKeyAction = 'playPause' | 'play' | 'pause' | 'stop' | 'next' | 'previous' | 'forward' | 'back';

/**
 * The media keys by their KeyboardEvent.key names: a keyboard's play/pause, next and previous keys arrive as these
 * when the page has the focus and the browser does not keep them for its own media session.
 */
const MEDIA_KEYS: Record<string, MediaKeyAction> = {
  MediaPlayPause: 'playPause',
  MediaPlay: 'play',
  MediaPause: 'pause',
  MediaStop: 'stop',
  MediaTrackNext: 'next',
  MediaTrackPrevious: 'previous',
  MediaFastForward: 'forward',
  MediaRewind: 'back',
};

export function mediaKeyAction(key: string): MediaKeyAction | undefined {
  return Object.hasOwn(MEDIA_KEYS, key) ? MEDIA_KEYS[key] : undefined;
}

export interface PositionState {
  duration: number;
  position: number;
  playbackRate: number;
}

/**
 * What to give navigator.mediaSession.setPositionState, or undefined when nothing sensible can be said (it throws on
 * a NaN or infinite duration, as a live stream has, and on a position past the duration).
 */
export function positionState(duration: number, position: number, rate: number): PositionState | undefined {
  if (!Number.isFinite(duration) || duration <= 0) return undefined;
  const playbackRate = Number.isFinite(rate) && rate > 0 ? rate : 1;
  const at = Number.isFinite(position) ? Math.min(Math.max(0, position), duration) : 0;
  return { duration, position: at, playbackRate };
}

// ---- the sleep timer --------------------------------------------------------------------------------------------------

/** The sleep timer's choices in minutes (besides off, the end of the article, and a number of one's own). */
export const SLEEP_MINUTES = [5, 15, 30, 45, 60] as const;
export const MAX_SLEEP_MINUTES = 720;
/** The last seconds of a timed sleep fade the volume to nothing before playback pauses. */
export const SLEEP_FADE_S = 10;

export type SleepChoice = { kind: 'off' } | { kind: 'end' } | { kind: 'minutes'; minutes: number };

/** A value of the sleep list ("off", "end", "15") or of the custom minutes field; undefined when it is neither. */
export function parseSleepChoice(value: string): SleepChoice | undefined {
  const text = value.trim();
  if (text === 'off') return { kind: 'off' };
  if (text === 'end') return { kind: 'end' };
  if (!/^\d{1,4}$/.test(text)) return undefined;
  const minutes = Number(text);
  return minutes >= 1 && minutes <= MAX_SLEEP_MINUTES ? { kind: 'minutes', minutes } : undefined;
}

/**
 * A timed sleep: counts down the time spent listening (paused time does not count, so a pause for a phone call
 * does not use it up), fades over the last SLEEP_FADE_S seconds, and is done at zero.
 */
export class SleepCountdown {
  private left: number;

  constructor(
    readonly minutes: number,
    private readonly fadeS = SLEEP_FADE_S,
  ) {
    this.left = minutes * 60;
  }

  /** Seconds of listening left. */
  get remainingS(): number {
    return this.left;
  }

  get done(): boolean {
    return this.left <= 0;
  }

  get fading(): boolean {
    return !this.done && this.left <= this.fadeS;
  }

  /** Counts `elapsedS` seconds of listening (negative, NaN or huge steps, as a sleeping laptop gives, are bounded). */
  tick(elapsedS: number): void {
    const step = Number.isFinite(elapsedS) ? Math.min(Math.max(0, elapsedS), 5) : 0;
    this.left = Math.max(0, this.left - step);
  }

  /** The share of the listener's volume to play at now: 1 until the fade, down to 0 at the end. */
  volumeFactor(): number {
    if (this.fadeS <= 0) return this.done ? 0 : 1;
    return Math.min(1, Math.max(0, this.left / this.fadeS));
  }

  /** As shown beside the control: "14:59"; whole seconds rounded up, so it reads 0:01 until the very end. */
  label(): string {
    return formatTime(Math.ceil(this.left));
  }
}
