// The window a running job's stream keeps in the player's SourceBuffer (issue 26): what to remove and what to append
// given the parts that arrived, the buffered ranges and the playhead. Pure functions; media/player/live.ts carries
// the steps out in the browser (test/ui/player-parts.test.ts plays a whole long job through them).
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DEFAULT_LIMITS,
  MIN_LIMITS,
  type PartSpan,
  type Range,
  type WindowState,
  isBuffered,
  isComplete,
  liveEnd,
  nextStep,
  partAt,
  shrink,
  windowEnd,
  windowStart,
} from '../../../src/webview/live-window';

/** Parts as the engine cuts them: short ones first, then a minute each, up to `totalS`. */
function partsUpTo(totalS: number): PartSpan[] {
  const parts: PartSpan[] = [];
  let start = 0;
  for (const length of [1, 4, 10, 15, 30]) {
    if (start >= totalS) break;
    parts.push({ index: parts.length, startS: start, durationS: Math.min(length, totalS - start) });
    start += length;
  }
  while (start < totalS) {
    const durationS = Math.min(60, totalS - start);
    parts.push({ index: parts.length, startS: start, durationS });
    start += durationS;
  }
  return parts;
}

/** Plays the steps out on a model of the SourceBuffer: ranges merge when they touch, like a browser's. */
function apply(buffered: Range[], parts: readonly PartSpan[], step: ReturnType<typeof nextStep>): Range[] {
  let next: [number, number][] = buffered.map(([s, e]) => [s, e]);
  if (step.kind === 'remove') {
    next = next.flatMap(([s, e]): [number, number][] => {
      if (e <= step.start || s >= step.end) return [[s, e]];
      const kept: [number, number][] = [];
      if (s < step.start) kept.push([s, step.start]);
      if (e > step.end) kept.push([step.end, e]);
      return kept;
    });
  } else if (step.kind === 'append') {
    const part = parts[step.index]!;
    next.push([part.startS, part.startS + part.durationS]);
  }
  next.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const range of next) {
    const last = merged[merged.length - 1];
    if (last && range[0] <= last[1] + 0.001) last[1] = Math.max(last[1], range[1]);
    else merged.push(range);
  }
  return merged;
}

/** Runs steps until idle; returns the buffered ranges and what was done. */
function settle(state: WindowState): { buffered: Range[]; steps: ReturnType<typeof nextStep>[]; last?: number } {
  let buffered = [...state.buffered];
  let lastAppended = state.lastAppended;
  const steps: ReturnType<typeof nextStep>[] = [];
  for (let i = 0; i < 1000; i++) {
    const step = nextStep({ ...state, buffered, ...(lastAppended !== undefined ? { lastAppended } : {}) });
    if (step.kind === 'idle') return { buffered, steps, ...(lastAppended !== undefined ? { last: lastAppended } : {}) };
    steps.push(step);
    buffered = apply(buffered, state.parts, step);
    if (step.kind === 'append') lastAppended = step.index;
  }
  throw new Error('the window never settled');
}

const span = (buffered: Range[]): number => buffered.reduce((sum, [s, e]) => sum + e - s, 0);

describe('player: the live stream window', () => {
  const parts = partsUpTo(4_000);

  it('finds the part playing at a time', () => {
    assert.equal(partAt(parts, 0), 0);
    assert.equal(partAt(parts, 0.999), 0);
    assert.equal(partAt(parts, 1), 1, 'a boundary belongs to the part that starts there');
    assert.equal(parts[partAt(parts, 2_000)]!.startS <= 2_000, true);
    assert.equal(partAt(parts, 4_000), -1, 'past the end');
    assert.equal(partAt([], 3), -1);
  });

  it('starts by appending from the first part, each following the one before without an offset', () => {
    const { buffered, steps } = settle({ parts, buffered: [], playhead: 0, limits: DEFAULT_LIMITS });
    assert.deepEqual(steps[0], { kind: 'append', index: 0, offsetS: 0 });
    assert.ok(
      steps.slice(1).every((s) => s.kind === 'append' && s.offsetS === undefined),
      'continuation appends',
    );
    assert.equal(buffered.length, 1);
    assert.equal(buffered[0]![0], 0);
    assert.ok(buffered[0]![1] >= DEFAULT_LIMITS.aheadS, `appended up to ${DEFAULT_LIMITS.aheadS} s ahead`);
    assert.ok(buffered[0]![1] < DEFAULT_LIMITS.aheadS + 61, 'and not much further');
  });

  it('keeps the buffer bounded while a whole job plays through it, and removes only whole parts behind', () => {
    let state = settle({ parts, buffered: [], playhead: 0, limits: DEFAULT_LIMITS });
    let most = 0;
    for (let playhead = 0; playhead < 4_000; playhead += 7) {
      state = settle({
        parts,
        buffered: state.buffered,
        playhead,
        limits: DEFAULT_LIMITS,
        ...(state.last !== undefined ? { lastAppended: state.last } : {}),
      });
      most = Math.max(most, span(state.buffered));
      assert.ok(
        state.buffered.some(([s, e]) => s <= playhead && e > playhead),
        `the playhead at ${playhead} s is buffered`,
      );
      for (const step of state.steps) {
        if (step.kind === 'remove')
          assert.ok(
            parts.some((p) => Math.abs(p.startS - step.end) < 1e-9),
            `removed up to a part boundary (${step.end})`,
          );
        if (step.kind === 'append') assert.equal(step.offsetS, undefined, 'playing on never needs an offset');
      }
    }
    assert.ok(most < DEFAULT_LIMITS.aheadS + DEFAULT_LIMITS.behindS + 2 * 60 + 1, `at most ${most} s buffered`);
    assert.ok(
      state.buffered.some(([, e]) => e === 4_000),
      'the end is in the buffer at the end',
    );
  });

  it('after a seek far ahead, appends the part at the playhead with its start as the offset and removes the old range', () => {
    const start = settle({ parts, buffered: [], playhead: 100, limits: DEFAULT_LIMITS });
    const step = nextStep({
      parts,
      buffered: start.buffered,
      playhead: 2_500,
      limits: DEFAULT_LIMITS,
      ...(start.last !== undefined ? { lastAppended: start.last } : {}),
    });
    assert.equal(step.kind, 'remove', 'what is far behind goes first, making room');
    const after = settle({
      parts,
      buffered: start.buffered,
      playhead: 2_500,
      limits: DEFAULT_LIMITS,
      ...(start.last !== undefined ? { lastAppended: start.last } : {}),
    });
    const at = partAt(parts, 2_500);
    const firstAppend = after.steps.find((s) => s.kind === 'append');
    assert.deepEqual(firstAppend, { kind: 'append', index: at, offsetS: parts[at]!.startS });
    assert.equal(after.buffered.length, 1);
    assert.equal(after.buffered[0]![0], parts[at]!.startS, 'nothing before the new playhead part is left');
  });

  it('seeking back into a removed range re-appends from the part that holds the new playhead', () => {
    const far = settle({ parts, buffered: [], playhead: 3_000, limits: DEFAULT_LIMITS });
    const back = settle({
      parts,
      buffered: far.buffered,
      playhead: 200.5,
      limits: DEFAULT_LIMITS,
      ...(far.last !== undefined ? { lastAppended: far.last } : {}),
    });
    const at = partAt(parts, 200.5);
    assert.deepEqual(
      back.steps.find((s) => s.kind === 'append'),
      { kind: 'append', index: at, offsetS: parts[at]!.startS },
    );
    assert.ok(back.buffered.some(([s, e]) => s <= 200.5 && e >= 200.5 + DEFAULT_LIMITS.aheadS));
    assert.ok(
      !back.buffered.some(([, e]) => e > 3_000),
      'the range at 3,000 s went (more than twice the window ahead)',
    );
  });

  it('waits at the live edge: with the playhead past the parts that arrived there is nothing to do', () => {
    const some = partsUpTo(600);
    assert.deepEqual(nextStep({ parts: some, buffered: [[480, 600]], playhead: 600, limits: DEFAULT_LIMITS }), {
      kind: 'idle',
    });
    assert.deepEqual(nextStep({ parts: [], buffered: [], playhead: 0, limits: DEFAULT_LIMITS }), { kind: 'idle' });
  });

  it('ignores a frame of rounding at range ends', () => {
    const part = { index: 5, startS: 60, durationS: 60 };
    assert.ok(isBuffered(part, [[60.02, 119.9]]));
    assert.ok(!isBuffered(part, [[60, 100]]));
    const some = partsUpTo(200);
    assert.deepEqual(
      nextStep({ parts: some, buffered: [[0, 200.1]], playhead: 10, limits: DEFAULT_LIMITS }),
      { kind: 'idle' },
      'a range that ends a frame past the last part is not trimmed',
    );
  });

  it('re-appends a part the browser evicted on its own', () => {
    const some = partsUpTo(400);
    const step = nextStep({ parts: some, buffered: [[0, 90]], playhead: 10, limits: DEFAULT_LIMITS, lastAppended: 7 });
    assert.deepEqual(step, { kind: 'append', index: partAt(some, 90), offsetS: some[partAt(some, 90)]!.startS });
  });

  it('shrinks the window on a full buffer, down to a floor', () => {
    let limits = DEFAULT_LIMITS;
    for (let i = 0; i < 10; i++) limits = shrink(limits);
    assert.deepEqual(limits, MIN_LIMITS);
    assert.deepEqual(shrink(DEFAULT_LIMITS), {
      aheadS: DEFAULT_LIMITS.aheadS / 2,
      behindS: DEFAULT_LIMITS.behindS / 2,
    });
  });

  it('knows where the window starts and ends', () => {
    assert.equal(windowStart(parts, 50, 90), 0);
    const start = windowStart(parts, 1_000, 90);
    assert.ok(parts.some((p) => p.startS === start) && start <= 910 && start > 850);
    assert.equal(windowEnd(parts, 3_900, 300), Infinity);
    assert.ok(windowEnd(parts, 0, 300) >= 600);
  });

  it('knows when the stream is whole and where it ends', () => {
    assert.equal(isComplete(parts, undefined), false);
    assert.equal(isComplete(parts, parts.length - 1), true);
    assert.equal(isComplete(parts.slice(0, 3), parts.length - 1), false);
    assert.equal(liveEnd(parts), 4_000);
    assert.equal(liveEnd([]), 0);
  });
});
