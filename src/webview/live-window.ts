// What the player page keeps in its Media Source buffer while it plays a running job from its parts (issue 26).
// Chromium caps a SourceBuffer (about 2,200 s of Pro audio filled it: "The SourceBuffer is full"), so the page keeps
// a window around the playhead instead of the whole stream: parts far behind are removed, parts are appended only up
// to AHEAD_S ahead, and a part that is needed again (a seek back, a seek ahead) is appended again from its bytes,
// which the page asks the extension for each time (it holds no part's bytes after appending them). Pure functions of
// the parts, the buffered ranges and the playhead, so that they are unit-tested without a browser
// (test/unit/webview/live-window.test.ts); media/player/live.ts carries out one step at a time.

/** A part of a running job's audio, placed on the final audio's timeline. */
export interface PartSpan {
  index: number;
  /** Where it starts in the final audio, seconds. */
  startS: number;
  durationS: number;
}

/** One buffered range of the media element, seconds. */
export type Range = readonly [start: number, end: number];

export interface WindowLimits {
  /** Parts are appended until they reach this far past the playhead. */
  aheadS: number;
  /** What ends more than this far behind the playhead is removed (whole parts at a time). */
  behindS: number;
}

/**
 * Ahead: 5 minutes of audio, 100 s of listening at 3×, while one part takes milliseconds to append. Behind: 90 s, so
 * "back 15 s" and the previous sentence never wait. At the bitrate of the built-in voices (about 3.3 kB/s) that is
 * under 2 MB in the buffer, far below Chromium's cap; at 128 kbit/s it is about 7 MB, and a QuotaExceededError halves
 * both (live.ts).
 */
export const DEFAULT_LIMITS: WindowLimits = { aheadS: 300, behindS: 90 };
/** The smallest the window shrinks to when the browser refuses an append for space. */
export const MIN_LIMITS: WindowLimits = { aheadS: 30, behindS: 10 };
/**
 * Tolerance when comparing a part's own times with the buffered ranges: MP3 frames are about 26 ms, and a browser
 * rounds the ends of ranges to frames.
 */
export const TOLERANCE_S = 0.25;
/** Buffered audio ahead of the window is removed only past twice the window (no removing what was just appended). */
const AHEAD_KEEP_FACTOR = 2;

export type WindowStep =
  /** Take [start, end) out of the SourceBuffer. */
  | { kind: 'remove'; start: number; end: number }
  /**
   * Append part `index`. `offsetS` is set when it does not follow the part appended last: the SourceBuffer's
   * timestampOffset goes there first (in `sequence` mode that places the part on the timeline). A part that follows
   * the last one is appended without it, so parts join frame-exactly as the final file does.
   */
  | { kind: 'append'; index: number; offsetS?: number }
  | { kind: 'idle' };

export interface WindowState {
  /** The parts that arrived, in order from index 0 with none missing. */
  parts: readonly PartSpan[];
  buffered: readonly Range[];
  playhead: number;
  limits: WindowLimits;
  /** The part appended last, if the SourceBuffer still continues from its end. */
  lastAppended?: number;
}

const endOf = (part: PartSpan): number => part.startS + part.durationS;

/** The index in `parts` of the part playing at `time`: the first that ends after it (-1 when all end before). */
export function partAt(parts: readonly PartSpan[], time: number): number {
  let low = 0;
  let high = parts.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (endOf(parts[middle]!) > time) {
      found = middle;
      high = middle - 1;
    } else {
      low = middle + 1;
    }
  }
  return found;
}

/** Whether the buffered ranges hold all of the part (within TOLERANCE_S at each end). */
export function isBuffered(part: PartSpan, buffered: readonly Range[]): boolean {
  return buffered.some(
    ([start, end]) => start <= part.startS + TOLERANCE_S && end >= Math.max(part.startS, endOf(part) - TOLERANCE_S),
  );
}

/**
 * Where the window starts: the start of the part that plays `behindS` before the playhead, so that removals take
 * whole parts and a seek back re-appends whole parts.
 */
export function windowStart(parts: readonly PartSpan[], playhead: number, behindS: number): number {
  const from = playhead - behindS;
  if (from <= 0) return 0;
  const index = partAt(parts, from);
  return index < 0 ? from : parts[index]!.startS;
}

/** Past this, buffered audio is removed: the start of the first part that starts at least 2 × aheadS past the playhead. */
export function windowEnd(parts: readonly PartSpan[], playhead: number, aheadS: number): number {
  const limit = playhead + AHEAD_KEEP_FACTOR * aheadS;
  const index = parts.findIndex((part) => part.startS >= limit);
  return index < 0 ? Infinity : parts[index]!.startS;
}

/**
 * The next thing to do to the SourceBuffer: first remove what lies outside the window (so that an append has room),
 * then append the first part between the playhead and aheadS past it that is not buffered yet, else nothing.
 */
export function nextStep(state: WindowState): WindowStep {
  const { parts, buffered, playhead, limits } = state;
  const start = windowStart(parts, playhead, limits.behindS);
  const end = windowEnd(parts, playhead, limits.aheadS);
  for (const [rangeStart, rangeEnd] of buffered) {
    // Less than the tolerance is a frame's rounding, not audio worth removing.
    if (rangeStart < start - TOLERANCE_S && Math.min(rangeEnd, start) - rangeStart > TOLERANCE_S)
      return { kind: 'remove', start: rangeStart, end: Math.min(rangeEnd, start) };
    if (rangeEnd > end + TOLERANCE_S && rangeEnd - Math.max(rangeStart, end) > TOLERANCE_S)
      return { kind: 'remove', start: Math.max(rangeStart, end), end: rangeEnd };
  }
  const first = partAt(parts, playhead);
  if (first < 0) return { kind: 'idle' };
  for (let i = first; i < parts.length && parts[i]!.startS < playhead + limits.aheadS; i++) {
    const part = parts[i]!;
    if (isBuffered(part, buffered)) continue;
    const follows = state.lastAppended !== undefined && state.lastAppended === part.index - 1;
    return follows
      ? { kind: 'append', index: part.index }
      : { kind: 'append', index: part.index, offsetS: part.startS };
  }
  return { kind: 'idle' };
}

/** The window after the browser refused an append for space: half as much ahead and behind, down to MIN_LIMITS. */
export function shrink(limits: WindowLimits): WindowLimits {
  return {
    aheadS: Math.max(MIN_LIMITS.aheadS, limits.aheadS / 2),
    behindS: Math.max(MIN_LIMITS.behindS, limits.behindS / 2),
  };
}

/** Whether the stream holds everything: the final part arrived and every part up to it is in order. */
export function isComplete(parts: readonly PartSpan[], finalIndex: number | undefined): boolean {
  return finalIndex !== undefined && parts.length === finalIndex + 1;
}

/** Where the parts that arrived end on the final audio's timeline (0 with none). */
export function liveEnd(parts: readonly PartSpan[]): number {
  const last = parts[parts.length - 1];
  return last ? endOf(last) : 0;
}
