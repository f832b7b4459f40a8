// Issue 25: what a provider voice costs the listener in waiting. Pro read by an OpenAI-compatible speech provider
// that answers each line after LATENCY_MS (test/support/speech-provider.ts on loopback, answering with a tone), against
// Pro read by the built-in voice, in the same run, on fresh engines (one warm-up job each): the time from the
// submission to the first playable part and to the job's end. Which is faster depends on the machine (the built-in
// voice is CPU work, the provider is waiting): the ratios of the same run are what to compare.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ENGINE_ENV, ENGINE_NODE_FLAGS } from '../src/engine/process-tuning';
import { startEngineProcess } from '../test/support/engine-process';
import { serviceCalls } from '../test/support/http-calls';
import { openStream } from '../test/support/sse-reader';
import { startSpeechProvider } from '../test/support/speech-provider';
import { articleText } from './lib/articles';
import { warmUp } from './lib/engine-runs';
import { type Bench, type Row } from './lib/report';

const LATENCY_MS = 300;
const MODEL = 'article-audio-1-pro';
const KEY = 'bench-provider-key';

interface Timing {
  firstPartS: number;
  endS: number;
  requests: number;
}

async function timeJob(voices: string | undefined, text: string, count: () => number): Promise<Timing> {
  const engine = await startEngineProcess({
    startTimeoutMs: 60_000,
    env: { ...ENGINE_ENV, VOICE_KEY: KEY },
    nodeArgs: ENGINE_NODE_FLAGS,
    args: ['--concurrency', '1', ...(voices ? ['--voices', voices] : [])],
  });
  try {
    const token = engine.tokens[0] as string;
    await warmUp(engine.url, token, MODEL);
    const before = count();
    const started = performance.now();
    const { jobId } = await serviceCalls(engine.url, token).submit({ model_id: MODEL, text });
    const stream = await openStream(`${engine.url}/v1/jobs/${jobId}/stream`, token);
    const first = await stream.next(
      (e) => e.event === 'result' && e.data.includes('"part"'),
      'the first part',
      10 * 60_000,
    );
    await stream.done;
    const endS = (performance.now() - started) / 1000;
    return { firstPartS: (first.at - started) / 1000, endS, requests: count() - before };
  } finally {
    await engine.dispose();
  }
}

export const provider: Bench = {
  name: 'provider',
  title: `A provider voice answering each line after ${LATENCY_MS} ms, against the built-in voice (Pro)`,
  async run(options) {
    const speech = await startSpeechProvider({ key: KEY });
    speech.fault = () => ({ kind: 'slow', delayMs: LATENCY_MS });
    const work = mkdtempSync(path.join(os.tmpdir(), 'bench-provider-'));
    const voices = path.join(work, 'voices.json');
    writeFileSync(
      voices,
      JSON.stringify({
        [MODEL]: {
          provider: 'openai',
          base_url: speech.baseUrl,
          model: 'kokoro',
          voice: 'af_heart',
          key_env: 'VOICE_KEY',
        },
      }),
    );
    const rows: Row[] = [];
    try {
      for (const article of options.articles) {
        const text = articleText(article);
        const what = `Pro, ${article} (${Math.round(text.length / 1000)}k chars)`;
        options.progress(`provider: ${what}, built-in voice`);
        const builtIn = await timeJob(undefined, text, () => speech.requests.length);
        options.progress(`provider: ${what}, provider voice (${LATENCY_MS} ms a line)`);
        const remote = await timeJob(voices, text, () => speech.requests.length);
        const load = os.loadavg()[0]!.toFixed(1);
        rows.push(
          {
            bench: 'first playable part after submission',
            case: `${what}, provider voice (${LATENCY_MS} ms a line, 4 at once)`,
            result: `${remote.firstPartS.toFixed(2)} s`,
            note: `${(remote.firstPartS / builtIn.firstPartS).toFixed(1)}x the built-in voice's ${builtIn.firstPartS.toFixed(2)} s; load ${load}`,
          },
          {
            bench: "submission to the job's end",
            case: `${what}, provider voice (${LATENCY_MS} ms a line, 4 at once)`,
            result: `${remote.endS.toFixed(1)} s (${remote.requests} lines)`,
            note: `${(remote.endS / builtIn.endS).toFixed(1)}x the built-in voice's ${builtIn.endS.toFixed(1)} s; load ${load}`,
          },
        );
      }
    } finally {
      await speech.close();
      rmSync(work, { recursive: true, force: true });
    }
    return rows;
  },
};
