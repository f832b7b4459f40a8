// kill -9 of the engine the extension starts (dist/engine.js, the real speech pipeline), 100 times at random moments:
// while it starts and takes back its jobs, and while it runs them, with new jobs submitted along the way. Afterwards
// every accepted job has ended exactly once (succeeded, or failed `interrupted` once its runs lost to crashes passed
// --max-crashes), none ran more than --max-crashes + 1 times, none was lost, and every MP3 decodes.
// Bounded: 100 cycles of at most about 1.5 s each (every tenth 3 s), then the jobs left finish on a quiet engine.
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { type EngineProcess, repoRoot, startEngineProcess } from '../support/engine-process';
import { type ServiceCalls, articleText, serviceCalls, waitForJob } from '../support/http-calls';
import { checkMp3 } from '../support/mp3-check';

const CYCLES = 100;
const MAX_CRASHES = 2;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Jobs seen succeeded by oneMoreSucceeds. */
const succeededSoFar = new Set<string>();

/** Waits until one more of `ids` has succeeded than before (or `timeoutMs` passed: the assertions then tell). */
async function oneMoreSucceeds(calls: ServiceCalls, ids: readonly string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    let running = 0;
    for (const id of ids) {
      if (succeededSoFar.has(id)) continue;
      const answer = await calls.get(`/v1/jobs/${id}`);
      if (answer.status !== 200) continue;
      if (answer.job.status === 'succeeded') {
        succeededSoFar.add(id);
        return;
      }
      if (answer.job.status !== 'failed') running++;
    }
    if (running === 0) return; // none left that could succeed: the assertions tell
    await sleep(200);
  }
}

/** Starts the engine on the same data dir and port and kills it `ms` later, listening or not. */
async function killWhileStarting(engine: EngineProcess, ms: number): Promise<void> {
  const child = spawn(
    process.execPath,
    [
      path.join(repoRoot, 'dist', 'engine.js'),
      '--port',
      String(engine.port),
      '--data-dir',
      engine.dataDir,
      '--max-crashes',
      String(MAX_CRASHES),
    ],
    { cwd: repoRoot, env: { ...process.env, ARTICLE_AUDIO_TOKENS: engine.tokens.join(',') }, stdio: 'ignore' },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await sleep(ms);
  child.kill('SIGKILL');
  await exited;
}

describe('kill -9 of the embedded engine, 100 times at random moments', () => {
  let engine: EngineProcess | undefined;
  after(() => engine?.dispose());

  it('ends every accepted job once, runs none more than --max-crashes + 1 times, loses none; every MP3 decodes', async () => {
    engine = await startEngineProcess({ entry: 'engine', args: ['--max-crashes', String(MAX_CRASHES)] });
    const calls = () => serviceCalls((engine as EngineProcess).url, (engine as EngineProcess).tokens[0] as string);
    const accepted: string[] = [];
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      // A new job every few cycles, of a few sentences: some finish between kills, some are caught again and again.
      if (cycle % 4 === 0) {
        const answer = await calls().submit({
          model_id: 'article-audio-1-mini',
          text: articleText(60 + (cycle % 8) * 40),
        });
        if (answer.status === 202) accepted.push(answer.jobId);
      }
      // Most kills come within a second; every tenth cycle leaves time for a job to finish, however busy the machine:
      // it waits (up to 2 minutes) for one more accepted job to have succeeded. A fixed 2.5 s was too short at load
      // 20-25 (two full test runs beside each other): no job ever finished between kills, and the test failed.
      if (cycle % 10 === 9) await oneMoreSucceeds(calls(), accepted, 120_000);
      else await sleep(Math.random() * 800);
      await engine.kill9();
      if (cycle % 2 === 0) await killWhileStarting(engine, Math.random() * 700);
      await engine.restart();
    }
    assert.ok(accepted.length >= CYCLES / 4 - 2, `${accepted.length} jobs accepted`);

    const stored = new Set(await engine.storedJobIds());
    assert.deepEqual(
      accepted.filter((id) => !stored.has(id)),
      [],
      'no accepted job is lost',
    );
    let succeeded = 0;
    for (const id of accepted) {
      const job = await waitForJob(calls(), id, (j) => j.status === 'succeeded' || j.status === 'failed', 120_000);
      const history: string = await fetch(`${engine.url}/v1/jobs/${id}/stream`, {
        headers: { authorization: `Bearer ${engine.tokens[0]}` },
      }).then((r) => r.text());
      const runs = history.match(/"message":"Processing[ .]/g)?.length ?? 0;
      assert.ok(runs <= MAX_CRASHES + 1, `job ${id} ran ${runs} times (at most ${MAX_CRASHES + 1})`);
      assert.equal(history.match(/^event: end$/gm)?.length, 1, `job ${id} ended once`);
      if (job.status === 'failed') {
        assert.equal(job.error?.code, 'interrupted', `job ${id} failed ${job.error?.code}: ${job.error?.message}`);
        continue;
      }
      succeeded++;
      const mp3 = job.outputs?.results?.[0]?.url;
      assert.ok(mp3);
      const bytes = await fetch(`${engine.url}${new URL(mp3).pathname}`, {
        headers: { authorization: `Bearer ${engine.tokens[0]}` },
      }).then(async (r) => new Uint8Array(await r.arrayBuffer()));
      const facts = await checkMp3(bytes);
      assert.ok(facts.durationS > 1, `job ${id}'s MP3 decodes to ${facts.durationS} s`);
    }
    assert.ok(succeeded > 0, 'some jobs finished between the kills');
  });
});
