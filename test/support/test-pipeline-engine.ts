// The engine with the test pipeline (no speech: test/support/test-pipeline.ts), for the fault suites that need many
// quick, predictable jobs. Embedded mode (default): startEngine in this process over a temp data dir. Postgres mode
// (ARTICLE_AUDIO_TEST_ENGINE=postgres, as test/team/suites-postgres.test.ts sets it): a team service of real processes,
// one API node (`dist/cli.js serve --database … --storage DIR`) and one test worker (test/team/test-worker.ts) over
// the shared test Postgres, so the same suite runs against both modes.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEngine } from '../../src/engine/index';
import { createTestPipeline } from './test-pipeline';

export interface TestPipelineEngineOptions {
  tokens: string[];
  /** Progress steps per job and the time each takes. */
  steps?: number;
  stepMs?: number;
  /** Accepted jobs never end (the suite is about the front door): held in the embedded engine, no worker in team mode. */
  holdEveryJob?: boolean;
  concurrency?: number;
  queueDepth?: number;
  progressIntervalMs?: number;
  heartbeatMs?: number;
  /** The `retry:` hint of the event streams (embedded only: an API node sends its default, 2 s). */
  streamRetryMs?: number;
}

export interface TestPipelineEngine {
  readonly mode: 'embedded' | 'postgres';
  readonly url: string;
  close(): Promise<void>;
}

export async function startTestPipelineEngine(options: TestPipelineEngineOptions): Promise<TestPipelineEngine> {
  if (process.env.ARTICLE_AUDIO_TEST_ENGINE === 'postgres') return startTeam(options);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'aa-test-pipeline-'));
  const engine = await startEngine({
    dataDir,
    tokens: options.tokens,
    ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    ...(options.queueDepth !== undefined ? { queueDepth: options.queueDepth } : {}),
    ...(options.progressIntervalMs !== undefined ? { progressIntervalMs: options.progressIntervalMs } : {}),
    ...(options.heartbeatMs !== undefined ? { heartbeatMs: options.heartbeatMs } : {}),
    ...(options.streamRetryMs !== undefined ? { streamRetryMs: options.streamRetryMs } : {}),
    pipeline: createTestPipeline({
      ...(options.steps !== undefined ? { steps: options.steps } : {}),
      ...(options.stepMs !== undefined ? { stepMs: options.stepMs } : {}),
      ...(options.holdEveryJob ? { hold: () => new Promise<void>(() => undefined) } : {}),
    }),
  });
  return {
    mode: 'embedded',
    url: engine.url,
    async close() {
      await engine.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function startTeam(options: TestPipelineEngineOptions): Promise<TestPipelineEngine> {
  const { teamPostgres } = await import('../team/team-engine');
  const { startCluster } = await import('../team/cluster');
  const seconds = (ms: number) => String(ms / 1000);
  const cluster = await startCluster({
    serverUrl: (await teamPostgres()).url,
    tokens: options.tokens,
    apiArgs: [
      ...(options.queueDepth !== undefined ? ['--queue-depth', String(options.queueDepth)] : []),
      ...(options.heartbeatMs !== undefined ? ['--heartbeat-s', seconds(options.heartbeatMs)] : []),
    ],
    workerArgs: [
      ...(options.concurrency !== undefined ? ['--concurrency', String(options.concurrency)] : []),
      ...(options.progressIntervalMs !== undefined
        ? ['--progress-interval-s', seconds(options.progressIntervalMs)]
        : []),
    ],
    workerEnv: {
      ...(options.steps !== undefined ? { AA_TEST_STEPS: String(options.steps) } : {}),
      ...(options.stepMs !== undefined ? { AA_TEST_STEP_MS: String(options.stepMs) } : {}),
    },
  });
  try {
    const api = await cluster.startApi();
    if (!options.holdEveryJob) await cluster.startWorker();
    return { mode: 'postgres', url: api.url, close: () => cluster.dispose() };
  } catch (error) {
    await cluster.dispose();
    throw error;
  }
}
