// A team worker process with the test pipeline (no speech): `node --import tsx test/team/test-worker.ts <worker flags>`.
// AA_TEST_STEPS and AA_TEST_STEP_MS set how long a job takes; AA_TEST_PARTS how many parts it publishes on the way;
// with AA_TEST_PART_GATE (a file path) a job waits after its first part until that file exists.
import { existsSync } from 'node:fs';
import { runWorkerProcess } from '../../src/engine/team/main';
import { createTestPipeline } from '../support/test-pipeline';

const gate = process.env.AA_TEST_PART_GATE;

async function gateOpens(file: string): Promise<void> {
  while (!existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 50));
}

// Text containing HOLD stays in processing until the run is aborted (cancelled, or its worker stops).
const pipeline = createTestPipeline({
  steps: Number(process.env.AA_TEST_STEPS ?? 4),
  stepMs: Number(process.env.AA_TEST_STEP_MS ?? 20),
  audioSeconds: 1,
  parts: Number(process.env.AA_TEST_PARTS ?? 0),
  hold: (input) => (input.text?.includes('HOLD') ? new Promise<void>(() => undefined) : undefined),
  afterPart: (index) => (index === 0 && gate ? gateOpens(gate) : undefined),
});
runWorkerProcess(process.argv.slice(2), process.env, pipeline).catch((error: unknown) => {
  process.stderr.write(`test worker: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
