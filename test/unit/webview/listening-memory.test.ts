// What the player remembers: positions per job and the listener's speed and volume, in a Memento-shaped store
// (a Map here; in VS Code it is globalState, exercised by the UI test's close-and-reopen and window reload).
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ListeningMemory,
  MAX_REMEMBERED,
  PLAYBACK_KEY,
  POSITIONS_KEY,
  type KeyValueStore,
} from '../../../src/webview/listening-memory';

function mapStore(): KeyValueStore & {
  data: Map<string, unknown>;
  writes: string[];
  active: number;
  overlapped: boolean;
} {
  const data = new Map<string, unknown>();
  const store = {
    data,
    writes: [] as string[],
    active: 0,
    overlapped: false,
    get: <T>(key: string) => structuredClone(data.get(key)) as T | undefined,
    update: async (key: string, value: unknown) => {
      store.writes.push(key);
      store.active += 1;
      if (store.active > 1) store.overlapped = true;
      await new Promise((resolve) => setTimeout(resolve, 5));
      data.set(key, structuredClone(value));
      store.active -= 1;
    },
  };
  return store;
}

describe('player: listening memory', () => {
  it('remembers a position per job and starts a finished job from the beginning', async () => {
    const store = mapStore();
    const memory = new ListeningMemory(store);
    assert.equal(memory.position('a'), 0);
    memory.savePosition('a', 12.345, 60);
    memory.savePosition('b', 30, 60);
    assert.equal(memory.position('a'), 12.3, 'known at once, before it is written');
    assert.equal(memory.position('b'), 30);
    memory.savePosition('b', 58.5, 60);
    assert.equal(memory.position('b'), 0, 'heard to the end');
    await memory.flush();
    const restarted = new ListeningMemory(store);
    assert.equal(restarted.position('a'), 12.3, 'a new instance (a restart) reads the same store');
    assert.equal(restarted.position('b'), 0);
    restarted.forget('a');
    await restarted.flush();
    assert.equal(new ListeningMemory(store).position('a'), 0);
  });

  it('gathers quick changes into one write and never overlaps writes of a key', async () => {
    const store = mapStore();
    const memory = new ListeningMemory(store, Date.now, 20);
    for (const rate of [2.5, 2, 1.75, 1.5]) memory.savePreferences({ rate, volume: 1, muted: false });
    memory.savePosition('a', 4);
    memory.savePosition('a', 5);
    // The timer writes by itself (no flush): wait for it however slow the machine, then count the writes.
    for (let waited = 0; store.writes.length < 2 && waited < 30_000; waited += 10)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(store.writes.sort(), [PLAYBACK_KEY, POSITIONS_KEY]);
    assert.deepEqual(store.data.get(PLAYBACK_KEY), { rate: 1.5, volume: 1, muted: false });
    // Changes while a write is under way wait for it.
    memory.savePosition('a', 6);
    const first = memory.flush();
    memory.savePosition('a', 7);
    await Promise.all([first, memory.flush()]);
    assert.equal(store.overlapped, false);
    assert.equal(new ListeningMemory(store).position('a'), 7);
    const writes = store.writes.length;
    memory.savePosition('a', 7.01);
    await memory.flush();
    assert.equal(store.writes.length, writes, 'no write when nothing changed');
  });

  it('forgets the oldest jobs beyond the limit', async () => {
    const store = mapStore();
    let now = 0;
    const memory = new ListeningMemory(store, () => ++now);
    for (let i = 0; i < MAX_REMEMBERED + 5; i += 1) memory.savePosition(`job${i}`, i + 1);
    await memory.flush();
    const kept = Object.keys(store.data.get(POSITIONS_KEY) as object);
    assert.equal(kept.length, MAX_REMEMBERED);
    assert.ok(!kept.includes('job0') && !kept.includes('job4'), 'the oldest went first');
    assert.ok(kept.includes('job5') && kept.includes(`job${MAX_REMEMBERED + 4}`));
  });

  it('survives junk in the store', async () => {
    const store = mapStore();
    store.data.set(POSITIONS_KEY, { a: 'x', b: { time: 'y' }, c: { time: 7 }, d: null });
    store.data.set(PLAYBACK_KEY, { rate: 99, volume: -1, muted: 'yes' });
    const memory = new ListeningMemory(store);
    assert.equal(memory.position('a'), 0);
    assert.equal(memory.position('c'), 7);
    assert.deepEqual(memory.preferences(), { rate: 1, volume: 1, muted: false });
    memory.savePosition('e', 1);
    await memory.flush();
    assert.equal(new ListeningMemory(store).position('c'), 7);
  });

  it('keeps speed, volume and mute globally', async () => {
    const store = mapStore();
    const memory = new ListeningMemory(store);
    memory.savePreferences({ rate: 1.75, volume: 0.4, muted: true });
    await memory.flush();
    assert.deepEqual(new ListeningMemory(store).preferences(), { rate: 1.75, volume: 0.4, muted: true });
    memory.savePreferences({ rate: 4, volume: 0.4, muted: false });
    assert.deepEqual(memory.preferences(), { rate: 4, volume: 0.4, muted: false }, '4× is a speed one can keep');
    memory.savePreferences({ rate: 7, volume: 3, muted: false });
    assert.deepEqual(memory.preferences(), { rate: 4, volume: 0.4, muted: false });
    await memory.flush();
  });
});
