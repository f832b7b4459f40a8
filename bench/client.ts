// The client following a job of known length: requests it makes and how late it notices the end, when it streams
// (our default) versus when it polls with the spec's backoff (2.5 s first, doubled, capped at 40 s, jittered), and
// versus polling every second, what a simple client without backoff does. Real engine in this process on loopback,
// with the test pipeline holding each job for exactly its length, so only the following differs.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { JobServiceClient, type FollowTransport, type PollingOptions } from '../src/api';
import { startEngine } from '../src/engine/index';
import { createTestPipeline } from '../test/support/test-pipeline';
import { type Bench, type Row } from './lib/report';

const TOKEN = 'bench-client-token-0123456789';

interface Follower {
  name: string;
  transport: FollowTransport;
  polling?: PollingOptions;
}

const FOLLOWERS: Follower[] = [
  { name: 'stream (default)', transport: 'auto' },
  { name: "poll, spec's backoff", transport: 'poll' },
  { name: 'poll every 1 s', transport: 'poll', polling: { initialMs: 1000, factor: 1, maxMs: 1000, jitter: 0 } },
];

export const client: Bench = {
  name: 'client',
  title: 'Client: requests and time to notice, streaming vs polling',
  async run(options) {
    const lengthsS = options.quick ? [5, 20] : [5, 20, 60];
    options.progress(
      `client: following jobs of ${lengthsS.join(', ')} s (takes about ${Math.round(Math.max(...lengthsS) * 1.3 + 5)} s)`,
    );
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'article-audio-bench-client-'));
    const requestLog: string[] = [];
    const engine = await startEngine({
      dataDir,
      tokens: [TOKEN],
      concurrency: 32,
      // Each job is held for the number of milliseconds its text starts with, then finishes at once.
      pipeline: createTestPipeline({
        steps: 1,
        stepMs: 1,
        hold: (input) =>
          new Promise<void>((resolve) => setTimeout(resolve, Number(/^(\d+)/.exec(input.text ?? '')?.[1] ?? 0))),
      }),
      log: (_level, message) => requestLog.push(message),
    });
    try {
      const runs = lengthsS.flatMap((lengthS) =>
        FOLLOWERS.map(async (follower) => {
          const api = new JobServiceClient({
            baseUrl: engine.url,
            apiKey: TOKEN,
            ...(follower.polling ? { polling: follower.polling } : {}),
          });
          const text = `${lengthS * 1000} ms. A job of known length, followed to its end by one client.`;
          const { jobId } = await api.submitArticle({ model_id: 'article-audio-1-mini', text });
          let noticed = Number.NaN;
          let finishedAt = Number.NaN;
          for await (const event of api.followJob(jobId, { transport: follower.transport })) {
            if (
              event.type === 'status' &&
              (event.status === 'succeeded' || event.status === 'failed') &&
              Number.isNaN(noticed)
            )
              noticed = Date.now();
            if (event.type === 'end') {
              if (Number.isNaN(noticed)) noticed = Date.now();
              const body = (await (
                await fetch(`${engine.url}/v1/jobs/${jobId}`, { headers: { authorization: `Bearer ${TOKEN}` } })
              ).json()) as { data: { finished_at: string } };
              finishedAt = Date.parse(body.data.finished_at);
            }
          }
          return { lengthS, follower: follower.name, jobId, lateMs: noticed - finishedAt };
        }),
      );
      const results = await Promise.all(runs);
      const rows: Row[] = [];
      for (const result of results) {
        // The engine logs every request with its path; the one status read above is the benchmark's own.
        const requests =
          requestLog.filter((line) => line.includes(result.jobId) && /^(GET|POST|HEAD) /.test(line)).length - 1;
        rows.push({
          bench: 'client: following a job',
          case: `${result.lengthS} s job, ${result.follower}`,
          result: `${requests + 1} requests, noticed ${result.lateMs < 1000 ? `${Math.round(result.lateMs)} ms` : `${(result.lateMs / 1000).toFixed(1)} s`} after the end`,
          note: 'requests include the submission',
        });
      }
      return rows;
    } finally {
      await engine.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};
