// A chaos proxy on loopback: forwards TCP both ways and cuts every event stream it carries at a random byte (seeded),
// in the response headers, between events or in the middle of an event line, like a proxy or Wi-Fi dropping it.
import net from 'node:net';

/** mulberry32: a small seeded generator, so a failing run can be replayed exactly. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface ChaosProxy {
  url: string;
  /** Stream connections cut so far, and how many of them were cut before the response headers were complete. */
  cuts: number;
  cutsInHeaders: number;
  streams: number;
  close(): Promise<void>;
}

/**
 * Forwards TCP both ways. A connection that asks for an event stream gets its answer cut after a random number of
 * bytes (1 to maxBytes after the request, mostly few), then both sides are destroyed, like a proxy or Wi-Fi dropping it.
 */
export async function startChaosProxy(
  upstreamPort: number,
  random: () => number,
  maxBytes: number,
): Promise<ChaosProxy> {
  const sockets = new Set<net.Socket>();
  const proxy: ChaosProxy = { url: '', cuts: 0, cutsInHeaders: 0, streams: 0, close: () => Promise.resolve() };
  const server = net.createServer((client) => {
    const upstream = net.connect(upstreamPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    let down = 0;
    let cutAt = Infinity;
    let headerEnd = Infinity;
    let scanned = Buffer.alloc(0);
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      if (cutAt === Infinity && /^GET \S*\/stream[ ?]/m.test(chunk.toString('latin1'))) {
        proxy.streams++;
        // Skewed towards early cuts, yet now and then long enough for the largest event (the result) to get through.
        cutAt = down + 1 + Math.floor(random() ** 2 * maxBytes);
        headerEnd = Infinity;
        scanned = Buffer.alloc(0);
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (headerEnd === Infinity && cutAt !== Infinity) {
        scanned = Buffer.concat([scanned, chunk]);
        const at = scanned.indexOf('\r\n\r\n');
        if (at >= 0) headerEnd = down - (scanned.length - chunk.length) + at + 4;
      }
      if (down + chunk.length >= cutAt) {
        client.write(chunk.subarray(0, cutAt - down), () => drop());
        proxy.cuts++;
        if (cutAt <= headerEnd) proxy.cutsInHeaders++;
        down = cutAt;
        cutAt = -1;
        return;
      }
      if (cutAt === -1) return;
      down += chunk.length;
      client.write(chunk);
    });
    for (const socket of [client, upstream]) {
      socket.on('error', drop);
      socket.on('close', () => {
        sockets.delete(socket);
        drop();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  proxy.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return proxy;
}
