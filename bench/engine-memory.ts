// Peak memory of the engine process (VmHWM: the most resident memory it ever had, worker threads included) on the
// longest article, per model. Each run is a fresh process, so the peak is that job's.
import { engineRun } from './lib/engine-runs';
import { type ArticleName, type Bench, type Row, below, shortModel } from './lib/report';

const TARGET_MB = 250;

export const engineMemory: Bench = {
  name: 'memory',
  title: 'Engine peak memory on the longest article',
  async run(options) {
    const rows: Row[] = [];
    // The longest article of the selection (long, unless a quick run left it out).
    const article: ArticleName = options.articles.includes('long') ? 'long' : (options.articles.at(-1) ?? 'medium');
    for (const model of options.models) {
      options.progress(`memory: ${model} on ${article}`);
      const run = await engineRun(model, article);
      rows.push({
        bench: 'engine peak memory (VmHWM)',
        case: `${shortModel(model)}, ${article}`,
        result: `${run.peakMb} MB`,
        target: `< ${TARGET_MB} MB`,
        verdict: below(run.peakMb, TARGET_MB),
        note: 'whole engine process, fresh per job',
      });
    }
    return rows;
  },
};
