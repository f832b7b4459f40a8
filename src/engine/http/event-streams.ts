// Server-Sent Events for GET /v1/jobs/<id>/stream. Every event carries its id; `retry:` is sent once; a comment
// heartbeat goes to every open stream from one engine-wide timer; the server ends the stream after `end`. Each
// event is rendered once per base URL and the same text written to every follower. A follower that stops reading
// is cut off once too much is buffered for it (it can reconnect with Last-Event-ID and lose nothing).
import type { ServerResponse } from 'node:http';
import type { StoredEvent } from '../core/job-store';
import { withAbsoluteUrls } from '../core/stream-events';

export interface EventStreamOptions {
  heartbeatMs: number;
  /** The reconnection delay suggested to clients. */
  retryMs: number;
  /** Bytes buffered for one slow follower before its connection is closed. */
  maxBufferedBytes: number;
}

const rendered = new WeakMap<StoredEvent, { baseUrl: string; text: string }>();

export function renderEvent(event: StoredEvent, baseUrl: string): string {
  const cached = rendered.get(event);
  if (cached?.baseUrl === baseUrl) return cached.text;
  const data = event.event === 'end' ? String(event.data) : JSON.stringify(withAbsoluteUrls(event.data, baseUrl));
  const text = `id: ${event.id}\nevent: ${event.event}\ndata: ${data}\n\n`;
  rendered.set(event, { baseUrl, text });
  return text;
}

export class EventStream {
  private lastSentId: number;
  private started = false;
  private ended = false;

  constructor(
    private readonly res: ServerResponse,
    /** The token owner that opened it: its streams end when the token is removed. */
    readonly owner: string,
    private readonly baseUrl: string,
    afterId: number,
    private readonly options: EventStreamOptions,
    private readonly onEnd: (stream: EventStream) => void,
  ) {
    this.lastSentId = afterId;
    res.on('close', () => this.finish());
  }

  start(): void {
    if (this.started || this.ended) return;
    this.started = true;
    this.res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      'X-Accel-Buffering': 'no',
      'X-Content-Type-Options': 'nosniff',
    });
    this.write(`retry: ${this.options.retryMs}\n\n`);
  }

  send(events: readonly StoredEvent[]): void {
    this.start();
    let chunk = '';
    let last = false;
    for (const event of events) {
      if (event.id <= this.lastSentId) continue;
      chunk += renderEvent(event, this.baseUrl);
      this.lastSentId = event.id;
      if (event.event === 'end') {
        last = true;
        break;
      }
    }
    if (chunk) this.write(chunk);
    if (last) this.end();
  }

  heartbeat(): void {
    if (this.started) this.write(': heartbeat\n\n');
  }

  get isEnded(): boolean {
    return this.ended;
  }

  end(): void {
    if (this.ended) return;
    if (!this.res.headersSent) this.start();
    this.res.end();
    this.finish();
  }

  private write(chunk: string): void {
    if (this.ended || this.res.destroyed) return;
    this.res.write(chunk);
    if (this.res.writableLength > this.options.maxBufferedBytes) this.res.destroy();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.onEnd(this);
  }
}

/** The open streams of the engine, for heartbeats and for closing them all at shutdown. */
export class EventStreams {
  private readonly open = new Set<EventStream>();
  private readonly heartbeat: NodeJS.Timeout;

  constructor(private readonly options: EventStreamOptions) {
    this.heartbeat = setInterval(() => {
      for (const stream of this.open) stream.heartbeat();
    }, options.heartbeatMs);
    this.heartbeat.unref();
  }

  create(res: ServerResponse, owner: string, baseUrl: string, afterId: number, onEnd: () => void): EventStream {
    const stream = new EventStream(res, owner, baseUrl, afterId, this.options, (s) => {
      this.open.delete(s);
      onEnd();
    });
    this.open.add(stream);
    return stream;
  }

  get size(): number {
    return this.open.size;
  }

  /**
   * Ends the streams a removed token opened. The client's reconnect (with Last-Event-ID) is then refused with 401,
   * so a revoked token follows no job any longer.
   */
  endOwner(owner: string): number {
    const ended = [...this.open].filter((stream) => stream.owner === owner);
    for (const stream of ended) stream.end();
    return ended.length;
  }

  /** Ends every open stream (their jobs' final events were delivered before) and stops the heartbeat. */
  closeAll(): void {
    clearInterval(this.heartbeat);
    for (const stream of [...this.open]) stream.end();
  }
}
