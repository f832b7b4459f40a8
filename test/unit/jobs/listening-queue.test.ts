import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ListeningQueue, MAX_QUEUED, QUEUE_KEY, type QueuedState } from '../../../src/jobs/listening-queue';

class MemoryStore {
  readonly values = new Map<string, unknown>();
  writes = 0;
  get<T>(key: string): T | undefined {
    return this.values.get(key) as T | undefined;
  }
  update(key: string, value: unknown): Promise<void> {
    this.writes++;
    this.values.set(key, structuredClone(value));
    return Promise.resolve();
  }
}

describe('ListeningQueue', () => {
  it('plays next at the front and adds at the end, without duplicates, and persists the order', async () => {
    const store = new MemoryStore();
    const queue = new ListeningQueue(store);
    let changes = 0;
    queue.onDidChange(() => changes++);
    queue.add('a', 'b');
    queue.playNext('c');
    queue.add('a');
    assert.deepEqual(queue.items(), ['c', 'b', 'a']);
    queue.playNext('a', 'b');
    assert.deepEqual(queue.items(), ['a', 'b', 'c']);
    assert.equal(changes, 4);
    await queue.flushed();
    assert.deepEqual(store.get(QUEUE_KEY), ['a', 'b', 'c']);
    assert.deepEqual(new ListeningQueue(store).items(), ['a', 'b', 'c'], 'a new window reads the same queue');
  });

  it('takes the next ready job, waits for one still converting, and drops the gone ones before it', () => {
    const queue = new ListeningQueue(new MemoryStore());
    queue.add('gone', 'part1', 'part2', 'part3');
    const states: Record<string, QueuedState> = { gone: 'gone', part1: 'ready', part2: 'pending', part3: 'ready' };
    assert.equal(
      queue.takeNext((id) => states[id] ?? 'gone'),
      'part1',
    );
    assert.deepEqual(queue.items(), ['part2', 'part3']);
    assert.equal(
      queue.takeNext((id) => states[id] ?? 'gone'),
      undefined,
      'part 2 is still converting: part 3 must wait',
    );
    assert.deepEqual(queue.items(), ['part2', 'part3']);
    states.part2 = 'ready';
    assert.equal(
      queue.takeNext((id) => states[id] ?? 'gone'),
      'part2',
    );
    states.part3 = 'gone';
    assert.equal(
      queue.takeNext((id) => states[id] ?? 'gone'),
      undefined,
    );
    assert.deepEqual(queue.items(), []);
  });

  it('ignores damaged stored values, forgets removed jobs and keeps at most MAX_QUEUED', async () => {
    const store = new MemoryStore();
    store.values.set(QUEUE_KEY, ['x', 3, null, 'x', '', 'y']);
    const queue = new ListeningQueue(store);
    assert.deepEqual(queue.items(), ['x', 'y']);
    queue.retain((id) => id !== 'x');
    assert.deepEqual(queue.items(), ['y']);
    queue.remove('y');
    queue.remove('unknown');
    assert.deepEqual(queue.items(), []);
    queue.add(...Array.from({ length: MAX_QUEUED + 5 }, (_, i) => `j${i}`));
    assert.equal(queue.items().length, MAX_QUEUED);
    assert.equal(queue.items()[0], 'j5', 'the oldest entries go first');
    await queue.flushed();
    const writesBefore = store.writes;
    queue.add(...queue.items());
    await queue.flushed();
    assert.equal(store.writes, writesBefore, 'no write when nothing changed');
  });
});
