// An engine started in this process on a free port, over a temp data dir, with the test pipeline (or another one).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type EngineOptions, type RunningEngine, startEngine } from '../../../src/engine/index';
import { type ServiceCalls, serviceCalls } from '../../support/http-calls';
import { type TestPipelineOptions, createTestPipeline } from '../../support/test-pipeline';

export const TOKEN = 'unit-token-a';
export const OTHER_TOKEN = 'unit-token-b';

export interface EngineFixture {
  engine: RunningEngine;
  dataDir: string;
  calls: ServiceCalls;
  other: ServiceCalls;
  logs: string[];
  /** Starts another engine on the same data dir (after this one was closed). */
  restart(overrides?: Partial<EngineOptions> & { pipelineOptions?: TestPipelineOptions }): Promise<EngineFixture>;
  /** Closes the engine (if still running) and removes the data dir. */
  dispose(): Promise<void>;
}

export async function startFixture(
  options: Partial<EngineOptions> & { pipelineOptions?: TestPipelineOptions } = {},
  dataDir?: string,
): Promise<EngineFixture> {
  const dir = dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'aa-engine-unit-'));
  const logs: string[] = [];
  const { pipelineOptions, ...engineOptions } = options;
  const engine = await startEngine({
    dataDir: dir,
    tokens: [TOKEN, OTHER_TOKEN],
    concurrency: 2,
    pipeline: createTestPipeline(pipelineOptions),
    log: (level, message) => logs.push(`${level} ${message}`),
    ...engineOptions,
  });
  let closed = false;
  const close = engine.close.bind(engine);
  engine.close = async () => {
    closed = true;
    await close();
  };
  return {
    engine,
    dataDir: dir,
    calls: serviceCalls(engine.url, TOKEN),
    other: serviceCalls(engine.url, OTHER_TOKEN),
    logs,
    restart: (overrides = {}) => startFixture({ ...options, ...overrides }, dir),
    async dispose() {
      if (!closed) await engine.close();
      if (!dataDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A gate a test opens when it wants a held pipeline run to go on. */
export function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
