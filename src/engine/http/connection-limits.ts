// Bounds the sockets the engine holds, so that a flood of idle or half-sent connections (each a file descriptor)
// can neither make it unreachable nor starve a running job of descriptors (EMFILE). At most `maxConnections` are
// open; a new one beyond that pushes out the connection that has been idle longest (one with no request in progress:
// never sent one, or sent one only partly, or waiting between keep-alive requests), so a client that sends its
// request gets in however many idle sockets others hold. Only when every connection is busy is the new one closed.
// Connections that send no request for `idleTimeoutMs` are closed anyway.
import type http from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionLimitOptions {
  maxConnections: number;
  idleTimeoutMs: number;
  log: (level: 'debug' | 'info' | 'warn' | 'error', message: string) => void;
}

interface Tracked {
  /** Requests being answered on this connection. */
  active: number;
  /** When it last became idle (opened, or finished its last answer). */
  idleSince: number;
}

export function limitConnections(server: http.Server, options: ConnectionLimitOptions): { dispose(): void } {
  const sockets = new Map<Socket, Tracked>();
  let refusedSinceLog = 0;

  function oldestIdle(): Socket | undefined {
    let oldest: Socket | undefined;
    let since = Infinity;
    for (const [socket, tracked] of sockets) {
      if (tracked.active === 0 && tracked.idleSince < since) {
        oldest = socket;
        since = tracked.idleSince;
      }
    }
    return oldest;
  }

  server.on('connection', (socket: Socket) => {
    if (sockets.size >= options.maxConnections) {
      const victim = oldestIdle();
      if (victim) {
        sockets.delete(victim);
        victim.destroy();
      } else {
        refusedSinceLog++;
        socket.destroy();
        return;
      }
    }
    sockets.set(socket, { active: 0, idleSince: Date.now() });
    socket.once('close', () => sockets.delete(socket));
  });

  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const tracked = sockets.get(req.socket);
    if (!tracked) return;
    tracked.active++;
    res.once('close', () => {
      tracked.active--;
      tracked.idleSince = Date.now();
    });
  };
  // Listeners added before the request handler's own, so the count is up before the handler runs.
  server.prependListener('request', onRequest);
  server.prependListener('checkContinue', onRequest);

  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [socket, tracked] of sockets) {
        if (tracked.active === 0 && now - tracked.idleSince >= options.idleTimeoutMs) {
          sockets.delete(socket);
          socket.destroy();
        }
      }
      if (refusedSinceLog > 0) {
        options.log(
          'warn',
          `Closed ${refusedSinceLog} new connection(s): all ${options.maxConnections} allowed connections are busy (--max-connections).`,
        );
        refusedSinceLog = 0;
      }
    },
    Math.max(100, Math.min(1000, Math.floor(options.idleTimeoutMs / 4))),
  );
  sweep.unref();

  return {
    dispose() {
      clearInterval(sweep);
    },
  };
}
