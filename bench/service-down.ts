// How long the extension takes to tell a user that the job service is down: a JobTracker (as the extension builds
// it, with the client's default retries, stream and polling settings) follows a job on the real engine running the
// test pipeline (the job held in processing), which then goes away; the row is the time from the engine going away to
// onDidLoseContact (the "Cannot reach …" notice). Following goes on in the background after that. Two ways to be
// down: the engine stopped (connections refused), and, on the same port, something that accepts connections but
// never answers (hung).
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { JobServiceClient } from '../src/api';
import { AudioCache } from '../src/jobs/audio-cache';
import { JobTracker } from '../src/jobs/job-tracker';
import { startEngine } from '../src/engine/index';
import { createTestPipeline } from '../test/support/test-pipeline';
import { MemoryStore, PlainEmitter, nextEvent } from '../test/support/plain-node';
import { type Bench, type Row, below } from './lib/report';

const TARGET_S = 30;
const TEXT = 'This is a short article. It has enough characters to pass the minimum length check easily.';

async function timeToNotice(hang: boolean): Promise<number> {
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
  const tracker = new JobTracker({
    store: new MemoryStore(),
    cache: new AudioCache(dir),
    services: { current: () => 'remote', describe: () => 'the bench service', client: () => Promise.resolve(client) },
    log: { log: () => undefined },
    emitter: () => new PlainEmitter(),
  });
  let hung: net.Server | undefined;
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
    const downAt = performance.now();
    await engine.close();
    if (hang) {
      // The same port, now held by something that takes connections and never answers.
      hung = net.createServer((socket) => sockets.add(socket));
      await new Promise<void>((resolve) => hung!.listen(port, '127.0.0.1', resolve));
    }
    await lost;
    return (performance.now() - downAt) / 1000;
  } finally {
    tracker.dispose();
    release();
    await engine.close().catch(() => undefined);
    for (const socket of sockets) socket.destroy();
    hung?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const serviceDown: Bench = {
  name: 'down',
  title: 'Time to tell the user the job service is down',
  async run(options) {
    const rows: Row[] = [];
    for (const [label, hang] of [
      ['stopped (connection refused)', false],
      ['hung (accepts, never answers)', true],
    ] as const) {
      options.progress(`down: ${label}`);
      const seconds = await timeToNotice(hang);
      rows.push({
        bench: 'service down -> first "Cannot reach" notice',
        case: label,
        result: `${seconds.toFixed(1)} s`,
        target: `< ${TARGET_S} s`,
        verdict: below(seconds, TARGET_S),
        note: 'JobTracker + client defaults on the engine (test pipeline); following goes on in the background',
      });
    }
    return rows;
  },
};
