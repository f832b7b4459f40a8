// How long the extension takes to tell a user that the job service is down: a JobTracker (as the extension builds
// it, with the client's default retries, stream and polling settings) follows a job on a test service, which then
// goes away; the row is the time from the service going away to onDidLoseContact (the "Cannot reach …" notice).
// Following goes on in the background after that. Two ways to be down: the process stopped (connections refused),
// and a service that accepts connections but never answers (hung).
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { JobServiceClient } from '../src/api';
import { AudioCache } from '../src/jobs/audio-cache';
import { JobTracker } from '../src/jobs/job-tracker';
import { jobBody, openSse, sendEnvelope, startFaultServer } from '../test/support/fault-server';
import { MemoryStore, PlainEmitter, nextEvent } from '../test/support/plain-node';
import { type Bench, type Row, below } from './lib/report';

const TARGET_S = 30;
const TEXT = 'This is a short article. It has enough characters to pass the minimum length check easily.';

async function timeToNotice(hang: boolean): Promise<number> {
  const server = await startFaultServer();
  const port = Number(new URL(server.url).port);
  server.on('POST', '/v1/article-to-audio', (_req, res) =>
    sendEnvelope(res, 202, { job_id: 'down', links: { self: '/v1/jobs/down', stream: '/v1/jobs/down/stream' } }),
  );
  server.on('GET', '/v1/jobs/down', (_req, res) => sendEnvelope(res, 200, jobBody('down', 'processing')));
  server.on('GET', '/v1/jobs/down/stream', (_req, res) =>
    openSse(res).send({ id: '1', event: 'status', data: { status: 'processing', progress: 0.1 } }),
  );
  const client = new JobServiceClient({ baseUrl: server.url, apiKey: 'bench-key' });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'aa-bench-down-'));
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
    await server.close();
    if (hang) {
      // The same port, now held by something that takes connections and never answers.
      hung = net.createServer((socket) => sockets.add(socket));
      await new Promise<void>((resolve) => hung!.listen(port, '127.0.0.1', resolve));
    }
    await lost;
    return (performance.now() - downAt) / 1000;
  } finally {
    tracker.dispose();
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
        note: 'JobTracker + client defaults on a test service; following goes on in the background',
      });
    }
    return rows;
  },
};
