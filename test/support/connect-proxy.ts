// A CONNECT proxy on loopback that maps one made-up host name to 127.0.0.1 (nothing else resolves it), so a request
// that reaches the service proves it went through the proxy. Records each tunnel and its Proxy-Authorization.
import http from 'node:http';
import net from 'node:net';

export interface ConnectProxy {
  url: string;
  /** "host:port" of each CONNECT. */
  tunnels: string[];
  /** The Proxy-Authorization header of each CONNECT (undefined when absent). */
  authorizations: (string | undefined)[];
  close(): void;
}

export async function startConnectProxy(host: string): Promise<ConnectProxy> {
  const tunnels: string[] = [];
  const authorizations: (string | undefined)[] = [];
  const server = http.createServer((_req, res) => res.writeHead(405).end());
  server.on('connect', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    tunnels.push(req.url ?? '');
    authorizations.push(req.headers['proxy-authorization']);
    const [name, port] = (req.url ?? '').split(':');
    if (name !== host) {
      socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      return;
    }
    const upstream = net.connect(Number(port), '127.0.0.1', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return { url: `http://127.0.0.1:${port}`, tunnels, authorizations, close: () => server.close() };
}
