// Bounds the sockets the engine holds, so that a flood of idle or half-sent connections (each a file descriptor)
// can neither make it unreachable nor starve a running job of descriptors (EMFILE). At most `maxConnections` are
// open; a new one beyond that pushes out an idle connection (one with no request in progress: never sent one, or sent
// one only partly, or waiting between keep-alive requests): first those that never got an answer, then keep-alive
// ones, each the one idle longest, so a client that sends its request gets in however many idle sockets others hold.
// Only when every connection is busy is the new one closed. Connections that send no request for `idleTimeoutMs`
// are closed anyway, and so are keep-alive connections after the server's keepAliveTimeout (this module takes that
// close over from Node: see below).
//
// No idle connection is closed while a request is waiting on it. A timer that says "idle too long" runs before the
// event loop reads the sockets (timers come first in each turn); when the engine got no CPU for a few seconds (a
// busy machine, a long GC) a client's next request can be sitting unread in the socket at that moment, and closing
// the socket then resets it: the client reads ECONNRESET for a request it sent on a connection the engine had
// advertised as good (`Keep-Alive: timeout=5`). So every close of an idle connection is decided in two steps: the
// timer marks it, and only after the event loop has read what arrived (setImmediate runs after the poll phase) is it
// closed, and only if it is still idle and no byte came in since.
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
  /** Answers finished on this connection (0: a connection that never got one, the first to push out). */
  answered: number;
  /** When it last became idle (opened, or finished its last answer). */
  idleSince: number;
}

export function limitConnections(server: http.Server, options: ConnectionLimitOptions): { dispose(): void } {
  const sockets = new Map<Socket, Tracked>();
  let refusedSinceLog = 0;
  let trimScheduled = false;

  /** The connection to push out: idle, never answered before answered, each the one idle longest. */
  function victim(except: Set<Socket>): Socket | undefined {
    let best: Socket | undefined;
    let bestRank = Infinity;
    let bestSince = Infinity;
    for (const [socket, tracked] of sockets) {
      if (tracked.active > 0 || except.has(socket)) continue;
      const rank = tracked.answered > 0 ? 1 : 0;
      if (rank < bestRank || (rank === bestRank && tracked.idleSince < bestSince)) {
        best = socket;
        bestRank = rank;
        bestSince = tracked.idleSince;
      }
    }
    return best;
  }

  /**
   * Makes room for the connections beyond the limit. Runs from setImmediate, after the event loop has read what
   * arrived, so a connection whose request is waiting counts as busy.
   */
  function trim(): void {
    trimScheduled = false;
    while (sockets.size > options.maxConnections) {
      // The newest connections (the Map keeps the order they came in) are the ones being let in.
      const newest = new Set([...sockets.keys()].slice(options.maxConnections));
      const idleOlder = victim(newest);
      // Every older connection is busy: a new one is refused (an idle one of them, if any is).
      const out = idleOlder ?? [...newest].reverse().find((s) => sockets.get(s)?.active === 0) ?? [...newest].at(-1);
      if (!out) break;
      if (!idleOlder) refusedSinceLog++;
      sockets.delete(out);
      out.destroy();
    }
  }

  server.on('connection', (socket: Socket) => {
    sockets.set(socket, { active: 0, answered: 0, idleSince: Date.now() });
    socket.once('close', () => sockets.delete(socket));
    if (sockets.size > options.maxConnections && !trimScheduled) {
      trimScheduled = true;
      setImmediate(trim);
    }
  });

  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const tracked = sockets.get(req.socket);
    if (!tracked) return;
    tracked.active++;
    res.once('close', () => {
      tracked.active--;
      tracked.answered++;
      tracked.idleSince = Date.now();
    });
  };
  // Listeners added before the request handler's own, so the count is up before the handler runs.
  server.prependListener('request', onRequest);
  server.prependListener('checkContinue', onRequest);

  /**
   * Closes an idle connection once the event loop has read what is waiting on it: not if a request has started
   * arriving in the meantime (more bytes read) or is being answered.
   */
  function closeIfStillIdle(socket: Socket): void {
    const tracked = sockets.get(socket);
    if (!tracked || tracked.active > 0) return;
    const bytesRead = socket.bytesRead;
    setImmediate(() => {
      if (sockets.get(socket) !== tracked || tracked.active > 0 || socket.bytesRead !== bytesRead) return;
      sockets.delete(socket);
      socket.destroy();
    });
  }

  // Node's keep-alive timeout (server.keepAliveTimeout) ends in a socket 'timeout'; with a listener here, Node leaves
  // the close to it (http's socketOnTimeout destroys only when nobody listens).
  const onTimeout = (socket: Socket) => {
    if (sockets.has(socket)) closeIfStillIdle(socket);
    else socket.destroy();
  };
  server.on('timeout', onTimeout);

  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [socket, tracked] of sockets) {
        if (tracked.active === 0 && now - tracked.idleSince >= options.idleTimeoutMs) closeIfStillIdle(socket);
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
      server.off('timeout', onTimeout);
    },
  };
}
