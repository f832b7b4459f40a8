// A port on loopback that behaves like a host that silently drops packets: a connection attempt gets no answer at
// all (no SYN-ACK, no RST) and hangs in SYN-SENT until the client gives up. Built from Linux's own behaviour: a
// listening socket whose accept queue is full, and that never accepts, drops every further SYN when
// net.ipv4.tcp_abort_on_overflow is 0 (the default; with 1 it would answer with a reset, which is "refused").
//
// The listener lives in a child process whose event loop is blocked right after listen(), so nothing ever accepts;
// this process then fills the queue with idle connections and waits until the kernel shows it full
// (/proc/net/tcp: a listener's rx_queue is its accept-queue length, tx_queue its limit).
//
//   const hole = await startBlackhole();        // or startBlackhole(port): the port a stopped service used
//   ... a request to hole.url never connects ...
//   await hole.close();
//
// prepareBlackhole() starts the child first and listen(port) takes the port later, in milliseconds: a bench that
// stops a service and puts the blackhole on its port leaves no gap long enough for a reconnect to be refused.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { ownProcess } from './own-processes.mjs';

export interface Blackhole {
  readonly port: number;
  /** http://127.0.0.1:PORT */
  readonly url: string;
  close(): Promise<void>;
}

const HOST = '127.0.0.1';
/** listen()'s backlog: the queue is full with BACKLOG + 1 connections (the kernel's test is "more than backlog"). */
const BACKLOG = 1;

// Reads the port on its first line of input, listens, says on which port, then blocks its own event loop
// (Atomics.wait sleeps without using the CPU), so the connections the kernel completes stay in the accept queue.
const LISTENER = `
const net = require('node:net');
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  input += chunk;
  if (!input.includes('\\n')) return;
  process.stdin.pause();
  const server = net.createServer();
  server.listen({ host: '${HOST}', port: Number(input.trim()), backlog: ${BACKLOG} }, () => {
    require('node:fs').writeSync(1, server.address().port + '\\n');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  });
});
`;

/** Throws when this machine cannot make a blackhole this way (not Linux, or full queues answer with a reset). */
export function checkBlackholeSupport(): void {
  let abortOnOverflow: string;
  try {
    abortOnOverflow = readFileSync('/proc/sys/net/ipv4/tcp_abort_on_overflow', 'utf8').trim();
  } catch {
    throw new Error('A loopback blackhole needs Linux (/proc/sys/net/ipv4/tcp_abort_on_overflow).');
  }
  if (abortOnOverflow !== '0') {
    throw new Error(
      `net.ipv4.tcp_abort_on_overflow is ${abortOnOverflow}: a full accept queue answers with a reset, not silence.`,
    );
  }
}

/** The listener on `port` in /proc/net/tcp: its accept queue's length and limit. */
function acceptQueue(port: number): { length: number; limit: number } | undefined {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    // State 0A is LISTEN; field 4 is tx_queue:rx_queue.
    const queues = /^([0-9A-F]+):([0-9A-F]+)$/i.exec(fields[4] ?? '');
    if (fields[1] !== local || fields[3] !== '0A' || !queues) continue;
    return { length: parseInt(queues[2]!, 16), limit: parseInt(queues[1]!, 16) };
  }
  return undefined;
}

function readPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('\n')) resolve(Number(text.trim()));
    });
    child.once('exit', (code, signal) => reject(new Error(`The blackhole listener exited (${code ?? signal}).`)));
    child.once('error', reject);
  });
}

function connectIdle(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: HOST, port });
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

export interface PreparedBlackhole {
  /** Listens on `port` (0: a free one) and fills the queue; the returned blackhole drops every attempt. */
  listen(port?: number): Promise<Blackhole>;
  /** Ends the child (also when listen was never called). */
  close(): Promise<void>;
}

/** Starts the listener's process without listening yet, so that a later listen(port) is quick. */
export function prepareBlackhole(): PreparedBlackhole {
  checkBlackholeSupport();
  const child = ownProcess(spawn(process.execPath, ['-e', LISTENER], { stdio: ['pipe', 'pipe', 'inherit'] }));
  const fillers: net.Socket[] = [];
  const announced = readPort(child);
  announced.catch(() => undefined);
  const close = async () => {
    for (const socket of fillers) socket.destroy();
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
  };
  const listen = async (port = 0): Promise<Blackhole> => {
    try {
      child.stdin.end(`${port}\n`);
      const listening = await announced;
      // Each filler completes its handshake in the kernel and waits in the accept queue for ever.
      for (let i = 0; i <= BACKLOG; i++) {
        const socket = await connectIdle(listening);
        socket.on('error', () => undefined);
        fillers.push(socket);
      }
      // The last handshake's ACK may still be on its way to the listener: wait until the kernel counts the queue full.
      for (;;) {
        const queue = acceptQueue(listening);
        if (!queue) throw new Error(`No listener on ${HOST}:${listening} in /proc/net/tcp.`);
        if (queue.length > queue.limit) break;
        await delay(10);
      }
      return { port: listening, url: `http://${HOST}:${listening}`, close };
    } catch (error) {
      await close();
      throw error;
    }
  };
  return { listen, close };
}

/** A loopback port that drops every connection attempt; `port` 0 takes a free one. */
export function startBlackhole(port = 0): Promise<Blackhole> {
  return prepareBlackhole().listen(port);
}
