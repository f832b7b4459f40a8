// The event bus of an API node: one LISTEN connection per node; a NOTIFY (sent by whichever node or worker appended
// events, at commit) makes every follower of that job on this node read the events after the last one it got. Each
// follower reads in order and one read at a time, so it sees every event once and in order, whichever node wrote
// it; a lost connection or a missed notification is covered by reconnecting and by a slow poll.
import type { Client, Pool } from 'pg';
import type { Logger } from '../core/logger';
import type { EngineMetrics } from '../core/metrics';
import type { EventBus, StoredEvent } from '../core/job-store';
import { type DbConnection, newClient } from './db';
import { readEvents } from './jobs';
import { EVENTS_CHANNEL } from './schema';

interface Subscriber {
  jobId: string;
  lastId: number;
  listener: (events: readonly StoredEvent[]) => void;
  reading: boolean;
  again: boolean;
  stopped: boolean;
  /** When a notification for the job arrived that this follower has not yet been given the events of. */
  notifiedAt: number | undefined;
}

export class PgEventBus implements EventBus {
  private readonly subscribers = new Map<string, Set<Subscriber>>();
  private listenClient: Client | undefined;
  private closed = false;
  private poll: NodeJS.Timeout | undefined;
  private reconnecting: Promise<void> | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly url: string | DbConnection,
    private readonly log: Logger,
    private readonly pollMs = 5000,
    private readonly metrics?: EngineMetrics,
  ) {}

  async start(): Promise<void> {
    await this.listen();
    this.poll = setInterval(() => this.wakeAll(), this.pollMs);
    this.poll.unref();
  }

  private async listen(): Promise<void> {
    const client = newClient(this.url);
    client.on('notification', (message) => {
      if (message.channel === EVENTS_CHANNEL && message.payload) this.wake(message.payload, performance.now());
    });
    client.on('error', (error) => {
      this.log('warn', `Event listener connection lost (${error.message}); reconnecting.`);
      void this.reconnect(client);
    });
    client.on('end', () => void this.reconnect(client));
    await client.connect();
    await client.query(`LISTEN ${EVENTS_CHANNEL}`);
    this.listenClient = client;
  }

  private reconnect(failed: Client): Promise<void> {
    if (this.closed || this.listenClient !== failed) return Promise.resolve();
    this.listenClient = undefined;
    failed.end().catch(() => undefined);
    this.reconnecting ??= (async () => {
      for (let delay = 200; !this.closed; delay = Math.min(5000, delay * 2)) {
        try {
          await this.listen();
          // Events committed while nobody listened: every follower reads what it missed.
          this.wakeAll();
          return;
        } catch (error) {
          this.log('warn', `Cannot listen for events yet (${(error as Error).message}).`);
          await new Promise((resolve) => setTimeout(resolve, delay));
        }
      }
    })().finally(() => {
      this.reconnecting = undefined;
    });
    return this.reconnecting;
  }

  subscribe(
    jobId: string,
    afterId: number,
    listener: (events: readonly StoredEvent[]) => void,
  ): Promise<{ stop(): void }> {
    const subscriber: Subscriber = {
      jobId,
      lastId: afterId,
      listener,
      reading: false,
      again: false,
      stopped: false,
      notifiedAt: undefined,
    };
    let set = this.subscribers.get(jobId);
    if (!set) this.subscribers.set(jobId, (set = new Set()));
    set.add(subscriber);
    const stop = () => {
      subscriber.stopped = true;
      const current = this.subscribers.get(jobId);
      current?.delete(subscriber);
      if (current?.size === 0) this.subscribers.delete(jobId);
    };
    return this.read(subscriber).then(() => ({ stop }));
  }

  history(jobId: string, afterId: number): Promise<StoredEvent[]> {
    return readEvents(this.pool, jobId, afterId);
  }

  get followerCount(): number {
    let count = 0;
    for (const set of this.subscribers.values()) count += set.size;
    return count;
  }

  private wake(jobId: string, notifiedAt?: number): void {
    for (const subscriber of this.subscribers.get(jobId) ?? []) {
      if (notifiedAt !== undefined) subscriber.notifiedAt ??= notifiedAt;
      void this.read(subscriber);
    }
  }

  private wakeAll(): void {
    for (const jobId of this.subscribers.keys()) this.wake(jobId);
  }

  private async read(subscriber: Subscriber): Promise<void> {
    if (subscriber.reading) {
      subscriber.again = true;
      return;
    }
    subscriber.reading = true;
    try {
      do {
        subscriber.again = false;
        if (subscriber.stopped) return;
        const notifiedAt = subscriber.notifiedAt;
        subscriber.notifiedAt = undefined;
        let events: StoredEvent[];
        try {
          events = await readEvents(this.pool, subscriber.jobId, subscriber.lastId);
        } catch (error) {
          // The poll tries again; the follower has lost nothing.
          this.log('warn', `Could not read events of job ${subscriber.jobId}: ${(error as Error).message}`);
          return;
        }
        if (events.length > 0 && !subscriber.stopped) {
          subscriber.lastId = (events.at(-1) as StoredEvent).id;
          subscriber.listener(events);
          if (notifiedAt !== undefined) this.metrics?.eventDeliveryLag.observe((performance.now() - notifiedAt) / 1000);
        }
      } while (subscriber.again);
    } finally {
      subscriber.reading = false;
    }
  }

  async close(): Promise<void> {
    // A stopping node first hands every open stream what was committed up to now (a worker that gave its job back
    // on the same SIGTERM wrote that just before), so that clients resume elsewhere from the latest event.
    await Promise.all([...this.subscribers.values()].flatMap((set) => [...set].map((s) => this.read(s))));
    this.closed = true;
    if (this.poll) clearInterval(this.poll);
    const client = this.listenClient;
    this.listenClient = undefined;
    await client?.end().catch(() => undefined);
  }
}
