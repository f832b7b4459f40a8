// What the player remembers: positions per job and the listener's speed and volume, in a Memento-shaped store
// (a Map here; in VS Code it is globalState, exercised by the UI test's close-and-reopen).
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ListeningMemory, MAX_REMEMBERED, POSITIONS_KEY, type KeyValueStore } from '../../../src/webview/listening-memory';

function mapStore(): KeyValueStore & { data: Map<string, unknown>; writes: number } {
  const data = new Map<string, unknown>();
  const store = {
    data,
    writes: 0,
    get: <T>(key: string) => structuredClone(data.get(key)) as T | undefined,
    update: (key: string, value: unknown) => {
      store.writes += 1;
      data.set(key, structuredClone(value));
      return Promise.resolve();
    },
  };
  return store;
}

describe('player: listening memory', () => {
  it('remembers a position per job and starts a finished job from the beginning', async () => {
    const store = mapStore();
    const memory = new ListeningMemory(store);
    assert.equal(memory.position('a'), 0);
    await memory.savePosition('a', 12.345, 60);
    await memory.savePosition('b', 30, 60);
    assert.equal(memory.position('a'), 12.3);
    assert.equal(memory.position('b'), 30);
    await memory.savePosition('b', 58.5, 60);
    assert.equal(memory.position('b'), 0, 'heard to the end');
    assert.equal(new ListeningMemory(store).position('a'), 12.3, 'a new instance (a restart) reads the same store');
    await memory.forget('a');
    assert.equal(memory.position('a'), 0);
  });

  it('does not write when nothing changed, and forgets the oldest jobs beyond the limit', async () => {
    const store = mapStore();
    let now = 0;
    const memory = new ListeningMemory(store, () => ++now);
    await memory.savePosition('same', 5);
    const writes = store.writes;
    await memory.savePosition('same', 5.01);
    assert.equal(store.writes, writes);
    for (let i = 0; i < MAX_REMEMBERED + 5; i += 1) await memory.savePosition(`job${i}`, i + 1);
    const kept = Object.keys(store.data.get(POSITIONS_KEY) as object);
    assert.equal(kept.length, MAX_REMEMBERED);
    assert.ok(!kept.includes('same') && !kept.includes('job0'), 'the oldest went first');
    assert.ok(kept.includes(`job${MAX_REMEMBERED + 4}`));
  });

  it('survives junk in the store', async () => {
    const store = mapStore();
    store.data.set(POSITIONS_KEY, { a: 'x', b: { time: 'y' }, c: { time: 7 }, d: null });
    store.data.set('articleAudio.player.playback', { rate: 99, volume: -1, muted: 'yes' });
    const memory = new ListeningMemory(store);
    assert.equal(memory.position('a'), 0);
    assert.equal(memory.position('c'), 7);
    assert.deepEqual(memory.preferences(), { rate: 1, volume: 1, muted: false });
    await memory.savePosition('e', 1);
    assert.equal(memory.position('c'), 7);
  });

  it('keeps speed, volume and mute globally', async () => {
    const store = mapStore();
    const memory = new ListeningMemory(store);
    await memory.savePreferences({ rate: 1.75, volume: 0.4, muted: true });
    assert.deepEqual(new ListeningMemory(store).preferences(), { rate: 1.75, volume: 0.4, muted: true });
    await memory.savePreferences({ rate: 7, volume: 3, muted: false });
    assert.deepEqual(memory.preferences(), { rate: 3, volume: 0.4, muted: false });
  });
});
