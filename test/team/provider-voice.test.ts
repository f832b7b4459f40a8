// Issue 25: `serve --voices` and `worker --voices` read with a speech provider for every token, as `convert` does:
// the local engine as a server (two tokens) and the team service (an API node and a real `article-audio worker`
// process, Postgres, folder storage), against an OpenAI-protocol server on loopback. Every line goes to the provider
// with the key from the environment; the transcript says who read it; the key is in no answer or log.
import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startEngineProcess } from '../support/engine-process';
import { articleText, serviceCalls, waitForJob, type ServiceCalls } from '../support/http-calls';
import { type SpeechProvider, startSpeechProvider } from '../support/speech-provider';
import { type Cluster, startCluster } from './cluster';
import { type TestPostgres, startPostgres } from './postgres';

const KEY = 'sk-team-voice-3b8e2f61a9c4';
const PRO = 'article-audio-1-pro';

/** Submits a Pro job for each token and returns the transcripts of the finished jobs. */
async function transcriptsFor(calls: ServiceCalls[], token: (i: number) => string): Promise<string[]> {
  const ids = await Promise.all(
    calls.map(async (c) => {
      const submitted = await c.submit({ model_id: PRO, text: articleText(40) });
      assert.equal(submitted.status, 202);
      return submitted.jobId;
    }),
  );
  return Promise.all(
    ids.map(async (id, i) => {
      const job = await waitForJob(calls[i]!, id, (j) => j.status === 'succeeded' || j.status === 'failed', 180_000);
      assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
      const vtt = job.outputs?.results.find((o) => o.content_type.startsWith('text/vtt'));
      assert.ok(vtt, 'a transcript output');
      const answer = await fetch(vtt.url, { headers: { authorization: `Bearer ${token(i)}` } });
      assert.equal(answer.status, 200);
      return answer.text();
    }),
  );
}

describe('serve --voices and worker --voices read with the provider for every token', () => {
  let provider: SpeechProvider;
  let work: string;
  let voices: string;
  before(async () => {
    provider = await startSpeechProvider({ key: KEY });
    work = mkdtempSync(path.join(os.tmpdir(), 'team-voices-'));
    voices = path.join(work, 'voices.json');
    writeFileSync(
      voices,
      JSON.stringify({
        [PRO]: {
          provider: 'openai',
          base_url: provider.baseUrl,
          model: 'kokoro',
          voice: 'af_heart',
          key_env: 'VOICE_KEY',
        },
      }),
    );
  });
  after(async () => {
    await provider.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('serve --voices: both tokens are read by the provider', { timeout: 240_000 }, async () => {
    provider.reset();
    const engine = await startEngineProcess({
      args: ['--voices', voices],
      env: { VOICE_KEY: KEY },
      startTimeoutMs: 60_000,
    });
    try {
      const calls = engine.tokens.map((token) => serviceCalls(engine.url, token));
      const transcripts = await transcriptsFor(calls, (i) => engine.tokens[i]!);
      for (const vtt of transcripts) assert.match(vtt, /NOTE voice: the voice af_heart \(kokoro at 127\.0\.0\.1:\d+/);
      assert.ok(provider.requests.length >= 2, 'the provider read the lines');
      assert.deepEqual(provider.refused, []);
      assert.ok(provider.requests.every((r) => r.authorization === `Bearer ${KEY}`));
      assert.ok(!engine.stdout.includes(KEY) && !engine.stderr.includes(KEY), 'the key is in the engine output');
    } finally {
      await engine.dispose();
    }
  });

  describe('team service', () => {
    let postgres: TestPostgres;
    let cluster: Cluster;
    after(async () => {
      await cluster?.dispose();
      await postgres?.stop();
    });

    it('worker --voices: both tokens are read by the provider', { timeout: 300_000 }, async () => {
      provider.reset();
      postgres = await startPostgres();
      cluster = await startCluster({
        serverUrl: postgres.url,
        realWorker: true,
        workerArgs: ['--voices', voices, '--concurrency', '2'],
        workerEnv: { VOICE_KEY: KEY },
      });
      const api = await cluster.startApi();
      const worker = await cluster.startWorker();
      const calls = cluster.tokens.map((token) => serviceCalls(api.url, token));
      const transcripts = await transcriptsFor(calls, (i) => cluster.tokens[i]!);
      for (const vtt of transcripts) assert.match(vtt, /NOTE voice: the voice af_heart \(kokoro at 127\.0\.0\.1:\d+/);
      assert.ok(provider.requests.length >= 2, 'the provider read the lines');
      assert.ok(provider.requests.every((r) => r.authorization === `Bearer ${KEY}`));
      for (const text of [worker.stdout, worker.stderr, api.stdout, api.stderr])
        assert.ok(!text.includes(KEY), 'the key is in a process output');
    });
  });
});
