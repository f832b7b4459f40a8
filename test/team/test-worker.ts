// A team worker process with the test pipeline (no speech): `node --import tsx test/team/test-worker.ts <worker flags>`.
// AA_TEST_STEPS and AA_TEST_STEP_MS set how long a job takes.
import { runWorkerProcess } from '../../src/engine/team/main';
import { createTestPipeline } from '../support/test-pipeline';

// Text containing HOLD stays in processing until the run is aborted (cancelled, or its worker stops).
const pipeline = createTestPipeline({
  steps: Number(process.env.AA_TEST_STEPS ?? 4),
  stepMs: Number(process.env.AA_TEST_STEP_MS ?? 20),
  audioSeconds: 1,
  hold: (input) => (input.text?.includes('HOLD') ? new Promise<void>(() => undefined) : undefined),
});
runWorkerProcess(process.argv.slice(2), process.env, pipeline).catch((error: unknown) => {
  process.stderr.write(`test worker: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
