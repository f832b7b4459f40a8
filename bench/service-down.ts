// How long the extension takes to tell a user that the job service is down: a JobTracker (as the extension builds
// it, with the client's default retries, stream and polling settings) follows a job on the real engine running the
// test pipeline (the job held in processing), which then goes away; the row is the time from the engine going away to
// onDidLoseContact (the "Cannot reach …" notice). Following goes on in the background after that. Three ways to be
// down: the engine stopped (connections refused); on the same port, something that accepts connections but never
// answers (hung); and on the same port, a listener that drops every connection attempt without a word, as a host
// that drops packets does (test/support/blackhole-server.ts: a full accept queue on Linux, loopback only).
// The second group of rows is the same three outages met at submission: the time until JobTracker.submit rejects
// (the error notice), with the HTTP layer's default retries in between.
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { JobServiceClient } from '../src/api';
import { AudioCache } from '../src/jobs/audio-cache';
import { JobTracker } from '../src/jobs/job-tracker';
import { startEngine } from '../src/engine/index';
import {
  type Blackhole,
  type PreparedBlackhole,
  prepareBlackhole,
  startBlackhole,
} from '../test/support/blackhole-server';
import { createTestPipeline } from '../test/support/test-pipeline';
import { MemoryStore, PlainEmitter, nextEvent } from '../test/support/plain-node';
import { type Bench, type Row, below } from './lib/report';

const TARGET_S = 30;
const TEXT = 'This is a short article. It has enough characters to pass the minimum length check easily.';

type Down = 'stopped' | 'hung' | 'blackhole';

async function timeToNotice(down: Down): Promise<{ seconds: number; message: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'aa-bench-down-'));
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const engine = await startEngine({
    dataDir: path.join(dir, 'engine'),
    tokens: ['bench-key'],
    pipeline: createTestPipeline({ steps: 2, stepMs: 1, hold: () => held }),
    log: () => undefined,
  });
  const port = engine.port;
  const client = new JobServiceClient({ baseUrl: engine.url, apiKey: 'bench-key' });
  const tracker = makeTracker(client, dir);
  let hung: net.Server | undefined;
  let blackhole: PreparedBlackhole | undefined;
  const sockets = new Set<net.Socket>();
  try {
    const processing = nextEvent(tracker.onDidChange, (job) => job?.status === 'processing');
    await tracker.submit({
      title: 'Bench',
      modelId: 'article-audio-1-mini',
      source: { kind: 'selection' },
      text: TEXT,
    });
    await processing;
    const lost = nextEvent(tracker.onDidLoseContact);
    // The listener's process starts before the engine stops, so the port is silent within milliseconds of the stop,
    // well before the stream's first reconnection (about 1 s).
    if (down === 'blackhole') blackhole = prepareBlackhole();
    const downAt = performance.now();
    await engine.close();
    if (blackhole) await blackhole.listen(port);
    if (down === 'hung') {
      // The same port, now held by something that takes connections and never answers.
      hung = net.createServer((socket) => sockets.add(socket));
      await new Promise<void>((resolve) => hung!.listen(port, '127.0.0.1', resolve));
    }
    const { message } = await lost;
    return { seconds: (performance.now() - downAt) / 1000, message };
  } finally {
    tracker.dispose();
    release();
    await engine.close().catch(() => undefined);
    for (const socket of sockets) socket.destroy();
    hung?.close();
    await blackhole?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function makeTracker(client: JobServiceClient, dir: string): JobTracker {
  return new JobTracker({
    store: new MemoryStore(),
    cache: new AudioCache(dir),
    services: { current: () => 'remote', describe: () => 'the bench service', client: () => Promise.resolve(client) },
    log: { log: () => undefined },
    emitter: () => new PlainEmitter(),
  });
}

async function timeToSubmitError(down: Down): Promise<{ seconds: number; message: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'aa-bench-down-'));
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let blackhole: Blackhole | undefined;
  try {
    let url: string;
    if (down === 'blackhole') {
      blackhole = await startBlackhole();
      url = blackhole.url;
    } else {
      server = net.createServer((socket) => sockets.add(socket));
      await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
      // Stopped: the port was just free'd, so connections to it are refused.
      if (down === 'stopped') await new Promise((resolve) => server!.close(resolve));
    }
    const tracker = makeTracker(new JobServiceClient({ baseUrl: url, apiKey: 'bench-key' }), dir);
    const started = performance.now();
    try {
      await tracker.submit({
        title: 'Bench',
        modelId: 'article-audio-1-mini',
        source: { kind: 'selection' },
        text: TEXT,
      });
    } catch (error) {
      return { seconds: (performance.now() - started) / 1000, message: (error as Error).message };
    } finally {
      tracker.dispose();
    }
    throw new Error('The submission to a service that is down succeeded.');
  } finally {
    for (const socket of sockets) socket.destroy();
    server?.close();
    await blackhole?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const serviceDown: Bench = {
  name: 'down',
  title: 'Time to tell the user the job service is down',
  async run(options) {
    const rows: Row[] = [];
    const cases = [
      ['stopped (connection refused)', 'stopped'],
      ['hung (accepts, never answers)', 'hung'],
      ['drops packets (connection attempts unanswered)', 'blackhole'],
    ] as const;
    for (const [label, down] of cases) {
      options.progress(`down, while following: ${label}`);
      const { seconds, message } = await timeToNotice(down);
      options.progress(`down, while following: ${label}: ${message}`);
      rows.push({
        bench: 'service down -> first "Cannot reach" notice',
        case: label,
        result: `${seconds.toFixed(1)} s`,
        target: `< ${TARGET_S} s`,
        verdict: below(seconds, TARGET_S),
        note: 'JobTracker + client defaults on the engine (test pipeline); following goes on in the background',
      });
    }
    for (const [label, down] of cases) {
      options.progress(`down, at submission: ${label}`);
      const { seconds, message } = await timeToSubmitError(down);
      options.progress(`down, at submission: ${label}: ${message}`);
      rows.push({
        bench: 'service down at submission -> error',
        case: label,
        result: `${seconds.toFixed(1)} s`,
        target: `< ${TARGET_S} s`,
        verdict: below(seconds, TARGET_S),
        note: 'JobTracker.submit + client defaults (up to 3 attempts within 30 s); nothing goes on after the error',
      });
    }
    return rows;
  },
};
