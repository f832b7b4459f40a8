// The parts of a job's audio that a service announces while it converts (the engine sends them as `result` events
// with a `part`): put in order, each once, and bounded (issue 23), so a service announcing endless parts or parts
// far ahead cannot grow the cache or memory without end.
import type { JobEvent, JobPart } from './types';

/**
 * Parts of one job that are passed on. The engine sends about 150 for its longest article (parts of up to 60 s), and a
 * service with 10 s parts fits 5 hours; parts beyond are left out (the finished file brings the whole audio), so a
 * service announcing endless parts cannot grow the cache or the job list without end.
 */
export const MAX_PARTS = 2000;
/**
 * How far ahead of the next expected part a part may arrive and wait in memory for the ones before it. A part further
 * ahead is left out, so the parts waiting their turn are at most this many.
 */
export const MAX_PARTS_AHEAD = 64;

/**
 * Puts announced parts in order, each once: a part seen before (a replayed stream, a reconnect that started over) is
 * dropped, and one that arrives ahead of a missing one waits for it (up to MAX_PARTS_AHEAD ahead). Parts from index
 * MAX_PARTS on are left out.
 */
export class PartSequence {
  private readonly waiting = new Map<number, JobPart>();
  /** Parts left out: from index MAX_PARTS on, or more than MAX_PARTS_AHEAD ahead of the next expected one. */
  leftOut = 0;

  /** `next`: the index expected first (the parts before it were delivered earlier, say before a reload). */
  constructor(private next = 0) {}

  /** The parts that are now next in order (none, this one, or this one and those that waited for it). */
  accept(part: JobPart): JobPart[] {
    if (part.index < this.next || this.waiting.has(part.index)) return [];
    if (part.index >= MAX_PARTS || part.index >= this.next + MAX_PARTS_AHEAD) {
      this.leftOut++;
      return [];
    }
    this.waiting.set(part.index, part);
    const ready: JobPart[] = [];
    for (let found = this.waiting.get(this.next); found; found = this.waiting.get(this.next)) {
      this.waiting.delete(this.next);
      ready.push(found);
      this.next++;
    }
    return ready;
  }

  /** How many parts have been delivered in order. */
  get delivered(): number {
    return this.next;
  }

  /** How many parts wait in memory for one before them. */
  get waitingCount(): number {
    return this.waiting.size;
  }
}

/** The parts of a job's audio from its events, each once and in order; ends when the events end. */
export async function* partsOf(
  events: AsyncIterable<JobEvent>,
  sequence = new PartSequence(),
): AsyncGenerator<JobPart> {
  for await (const event of events) {
    if (event.type === 'result' && event.part) yield* sequence.accept(event.part);
  }
}
