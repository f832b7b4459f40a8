// Issue 14: how soon a job can be listened to. One engine process (started as the extension starts it, warmed up
// per model), each model on each article: the time from sending the submission to the result event of the job's
// first part (its first playable audio), then the job is cancelled. Whatever the article's length, the first part
// must not wait for the whole article.
import { ENGINE_ENV, ENGINE_NODE_FLAGS } from '../src/engine/process-tuning';
import { startEngineProcess } from '../test/support/engine-process';
import { call, serviceCalls } from '../test/support/http-calls';
import { openStream } from '../test/support/sse-reader';
import { articleText } from './lib/articles';
import { warmUp } from './lib/engine-runs';
import { type Bench, type ModelId, type Row, below, shortModel } from './lib/report';

const TARGET_S: Record<ModelId, number> = {
  'article-audio-1-mini': 2,
  'article-audio-1-pro': 4,
  'article-podcast-1-pro': 4,
};

export const firstPart: Bench = {
  name: 'parts',
  title: 'First playable part after submission (audio in parts)',
  async run(options) {
    const rows: Row[] = [];
    const engine = await startEngineProcess({
      startTimeoutMs: 60_000,
      env: { ...ENGINE_ENV },
      nodeArgs: ENGINE_NODE_FLAGS,
      args: ['--concurrency', '1'],
    });
    try {
      const token = engine.tokens[0] as string;
      const calls = serviceCalls(engine.url, token);
      for (const model of options.models) {
        await warmUp(engine.url, token, model);
        for (const article of options.articles) {
          options.progress(`parts: ${model} on ${article}`);
          const text = articleText(article);
          const started = performance.now();
          const { jobId } = await calls.submit({ model_id: model, text });
          const stream = await openStream(`${engine.url}/v1/jobs/${jobId}/stream`, token);
          const first = await stream.next(
            (e) => e.event === 'result' && e.data.includes('"part"'),
            'the first part',
            10 * 60_000,
          );
          const seconds = (first.at - started) / 1000;
          const part = (JSON.parse(first.data) as { part: { duration_s: number } }).part;
          await call(`${engine.url}/v1/jobs/${jobId}/cancel`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}` },
          });
          await stream.done;
          rows.push({
            bench: 'first playable part after submission',
            case: `${shortModel(model)}, ${article} (${Math.round(text.length / 1000)}k chars)`,
            result: `${seconds.toFixed(2)} s (part of ${part.duration_s.toFixed(1)} s)`,
            target: `<= ${TARGET_S[model]} s`,
            verdict: below(seconds, TARGET_S[model] + 1e-9),
            note: 'warm engine, one job at a time',
          });
        }
      }
    } finally {
      await engine.dispose();
    }
    return rows;
  },
};
