// Reads a Server-Sent Events response in tests, keeping everything on the wire: events with their ids, the
// `retry:` hint and comment lines (heartbeats), and whether the server closed the stream.
import * as assert from 'node:assert/strict';
import { createParser } from 'eventsource-parser';

export interface WireEvent {
  id: string | undefined;
  event: string | undefined;
  data: string;
  /** When the event arrived (performance.now()). */
  at: number;
}

export class SseReader {
  readonly events: WireEvent[] = [];
  readonly comments: { text: string; at: number }[] = [];
  readonly retries: number[] = [];
  /** Resolves when the server ends the stream (or the connection breaks: then `error` is set). */
  readonly done: Promise<void>;
  error: unknown;
  ended = false;
  private waiters: (() => void)[] = [];

  constructor(
    readonly response: Response,
    private readonly controller: AbortController,
  ) {
    const parser = createParser({
      onEvent: (e) => {
        this.events.push({ id: e.id, event: e.event, data: e.data, at: performance.now() });
        this.wake();
      },
      onRetry: (ms) => this.retries.push(ms),
      onComment: (text) => {
        this.comments.push({ text, at: performance.now() });
        this.wake();
      },
    });
    this.done = (async () => {
      try {
        const decoder = new TextDecoder();
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>)
          parser.feed(decoder.decode(chunk, { stream: true }));
      } catch (error) {
        this.error = error;
      } finally {
        this.wake();
      }
    })();
    void this.done.then(() => (this.ended = true));
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /** Waits until `test` holds (checked on every event, comment and at the end), or fails after `timeoutMs`. */
  async until(test: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!test()) {
      if (this.ended) throw new Error(`The stream ended before ${what}; got ${this.describe()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`Timed out waiting for ${what}; got ${this.describe()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 250));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Waits for the first event matching `test` and returns it. */
  async next(test: (e: WireEvent) => boolean, what: string, timeoutMs?: number): Promise<WireEvent> {
    await this.until(() => this.events.some(test), what, timeoutMs);
    return this.events.find(test) as WireEvent;
  }

  get lastId(): string | undefined {
    return this.events.at(-1)?.id;
  }

  close(): void {
    this.controller.abort();
  }

  describe(): string {
    return this.events.map((e) => `${e.id}:${e.event}:${e.data.slice(0, 60)}`).join(' | ') || 'no events';
  }
}

export async function openStream(
  url: string,
  token: string,
  lastEventId?: string,
  headers: Record<string, string> = {},
): Promise<SseReader> {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: {
      authorization: `Bearer ${token}`,
      accept: 'text/event-stream',
      ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
      ...headers,
    },
    signal: controller.signal,
  });
  return new SseReader(response, controller);
}

/**
 * Heartbeats come no more often than every `intervalMs`, whatever the load: the engine's interval timer never fires
 * early (by a millisecond of clock resolution at most), so from the stream's opening (`openedAt`, performance.now(),
 * taken before the request) to the last comment's arrival it can have sent at most one per interval and one more; a
 * late arrival only lengthens that span.
 */
export function assertNotMoreOften(comments: readonly { at: number }[], openedAt: number, intervalMs: number): void {
  const span = (comments.at(-1)?.at ?? openedAt) - openedAt;
  const most = Math.floor(span / (intervalMs - 2)) + 1;
  assert.ok(
    comments.length <= most,
    `${comments.length} heartbeats in ${Math.round(span)} ms at one per ${intervalMs} ms`,
  );
}
