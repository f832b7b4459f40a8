// A child process of the service benchmark that follows one job's stream over many raw sockets, so that the
// followers' own work neither runs in the engine's process nor piles up in one bench process: several of these split
// the streams between them. On every arrival it only notes the time and keeps the bytes; events are found and parsed
// after the stream has ended. Times are wall-clock milliseconds with sub-millisecond resolution
// (performance.timeOrigin + performance.now()), comparable with the engine's created_at and the fan-out probe.
//
// Protocol (IPC): the parent sends a FollowRequest; the child answers `{ type: 'ready' }` once every stream has its
// response head, then a FollowResult once every stream has been closed by the engine.
import net from 'node:net';

export interface FollowRequest {
  host: string;
  port: number;
  path: string;
  token: string;
  count: number;
  /** Streams of several jobs: stream i follows paths[i % paths.length] (default: every stream follows `path`). */
  paths?: string[];
}

export interface FollowedEvent {
  id: number;
  event: string;
  /** created_at of a log event (ms since the epoch, millisecond resolution), else null. */
  createdAt: number | null;
  /** When the packet holding the event's last byte arrived. */
  at: number;
}

export interface FollowResult {
  type: 'result';
  streams: { events: FollowedEvent[]; status: number; error?: string }[];
}

const now = () => performance.timeOrigin + performance.now();

interface Stream {
  packets: Buffer[];
  times: number[];
  headed: Promise<void>;
  closed: Promise<void>;
  error?: string;
}

function open(request: FollowRequest, path: string): Stream {
  const packets: Buffer[] = [];
  const times: number[] = [];
  let error: string | undefined;
  const socket = net.connect({ host: request.host, port: request.port, noDelay: true });
  socket.write(
    `GET ${path} HTTP/1.1\r\nHost: ${request.host}:${request.port}\r\nAuthorization: Bearer ${request.token}\r\n` +
      'Accept: text/event-stream\r\nConnection: close\r\n\r\n',
  );
  let headed!: () => void;
  const stream: Stream = {
    packets,
    times,
    headed: new Promise<void>((resolve) => (headed = resolve)),
    closed: new Promise<void>((resolve) => socket.on('close', () => resolve())),
  };
  socket.on('data', (chunk: Buffer) => {
    times.push(now());
    packets.push(chunk);
    headed();
  });
  socket.on('error', (e) => {
    error = e.message;
    stream.error = error;
    headed();
  });
  socket.on('close', () => headed());
  return stream;
}

/** Splits what one socket received into SSE events, each with the arrival time of the packet that completed it. */
function parse(stream: Stream): FollowResult['streams'][number] {
  const all = Buffer.concat(stream.packets);
  const ends: number[] = [];
  let offset = 0;
  for (const packet of stream.packets) ends.push((offset += packet.length));
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(all.subarray(0, 20).toString('latin1'))?.[1] ?? 0);
  const events: FollowedEvent[] = [];
  let start = all.indexOf('\r\n\r\n') + 4;
  let packet = 0;
  for (;;) {
    const end = all.indexOf('\n\n', start);
    if (end < 0) break;
    while (ends[packet] !== undefined && (ends[packet] as number) < end + 2) packet++;
    // Chunked framing (`\r\n<size>\r\n`) may sit between two events; only the SSE fields are read.
    const fields = new Map<string, string>();
    for (const line of all.subarray(start, end).toString('utf8').split('\n')) {
      const colon = line.indexOf(': ');
      if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 2));
    }
    const id = fields.get('id');
    if (id !== undefined) {
      const event = fields.get('event') ?? 'message';
      const createdAt = event === 'log' ? /"created_at":"([^"]+)"/.exec(fields.get('data') ?? '')?.[1] : undefined;
      events.push({
        id: Number(id),
        event,
        createdAt: createdAt ? Date.parse(createdAt) : null,
        at: stream.times[packet] ?? Number.NaN,
      });
    }
    start = end + 2;
  }
  return { events, status, ...(stream.error ? { error: stream.error } : {}) };
}

process.once('message', (message: FollowRequest) => {
  void (async () => {
    const streams: Stream[] = [];
    // Opened in batches, as clients arriving one after another would.
    for (let i = 0; i < message.count; i += 25) {
      const batch = Array.from({ length: Math.min(25, message.count - i) }, (_, j) =>
        open(message, message.paths?.[(i + j) % message.paths.length] ?? message.path),
      );
      await Promise.all(batch.map((s) => s.headed));
      streams.push(...batch);
    }
    process.send?.({ type: 'ready' });
    await Promise.all(streams.map((s) => s.closed));
    const result: FollowResult = { type: 'result', streams: streams.map(parse) };
    process.send?.(result, () => process.exit(0));
  })();
});
