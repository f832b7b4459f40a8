// Reads one Server-Sent Events connection with eventsource-parser. Each connection gets a parser of its own, so a
// half-received event from a dropped connection can never be glued to the next one.
import { createParser, type ParseError } from 'eventsource-parser';

export type SseItem =
  | { kind: 'event'; event: string | undefined; id: string | undefined; data: string }
  | { kind: 'retry'; ms: number }
  /** A comment line, such as a heartbeat: proof the connection lives, nothing more. */
  | { kind: 'comment' };

export interface ReadOptions {
  /** Called when the connection has sent nothing for this long; it should abort the connection. */
  idleTimeoutMs: number;
  onIdle: () => void;
  /** Bound on a single event's size; a larger one ends the connection. */
  maxEventBytes?: number;
}

export class EventTooLargeError extends Error {
  static {
    this.prototype.name = 'EventTooLargeError';
  }
}

export async function* readEventStream(body: AsyncIterable<Uint8Array>, options: ReadOptions): AsyncGenerator<SseItem> {
  const pending: SseItem[] = [];
  let tooLarge: ParseError | undefined;
  const parser = createParser({
    onEvent: (message) => pending.push({ kind: 'event', event: message.event, id: message.id, data: message.data }),
    onRetry: (ms) => pending.push({ kind: 'retry', ms }),
    onComment: () => pending.push({ kind: 'comment' }),
    onError: (error) => {
      // Unknown fields and bad `retry:` values are ignored, as the SSE standard says; only runaway size ends the read.
      if (error.type === 'max-buffer-size-exceeded') tooLarge = error;
    },
    maxBufferSize: options.maxEventBytes ?? 8 * 1024 * 1024,
  });
  const decoder = new TextDecoder();
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(options.onIdle, options.idleTimeoutMs);
  };
  arm();
  try {
    for await (const chunk of body) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      if (tooLarge)
        throw new EventTooLargeError(`an event was larger than ${options.maxEventBytes ?? 8 * 1024 * 1024} characters`);
      // The clock stops while the consumer handles an item: a slow consumer is not a silent connection.
      if (pending.length > 0 && timer) clearTimeout(timer);
      while (pending.length > 0) yield pending.shift()!;
      arm();
    }
  } finally {
    if (timer) clearTimeout(timer);
  }
}
