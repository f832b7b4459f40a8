// The embedded engine with the test pipeline as a process of its own (the team benchmark's baseline, so both modes
// are measured across process boundaries, and the embedded section of test/team/dependency-faults.test.ts):
// `node --import tsx test/team/test-engine.ts --port 0 --data-dir DIR …`. AA_TEST_STEPS, AA_TEST_STEP_MS and
// AA_TEST_PARTS shape its jobs as they do a test worker's (test-worker.ts).
import { startEngine } from '../../src/engine/index';
import { readEngineSettings } from '../../src/engine/settings';
import { createTestPipeline } from '../support/test-pipeline';

const settings = readEngineSettings(process.argv.slice(2), process.env, { port: 0 });
startEngine({
  ...settings.engine,
  pipeline: createTestPipeline({
    steps: Number(process.env.AA_TEST_STEPS ?? 4),
    stepMs: Number(process.env.AA_TEST_STEP_MS ?? 20),
    audioSeconds: 1,
    parts: Number(process.env.AA_TEST_PARTS ?? 0),
    hold: (input) => (input.text?.includes('HOLD') ? new Promise<void>(() => undefined) : undefined),
  }),
}).then(
  (engine) => {
    process.stdout.write(`Test engine listening on ${engine.url}\n`);
    process.on('SIGTERM', () => void engine.close().then(() => process.exit(0)));
  },
  (error: unknown) => {
    process.stderr.write(`test engine: ${String(error)}\n`);
    process.exit(1);
  },
);
