// Engine speed per model and article: seconds of audio per second of work end to end (submission to succeeded, on
// the real engine process), next to the speed of the same voice synthesizing the same lines alone. Their ratio is
// the pipeline's overhead: fetch/parse, script, trimming and loudness, pauses, MP3 encoding, files, HTTP, events.
import { encodingTime } from './lib/encoding';
import { engineRun } from './lib/engine-runs';
import { rawSynthesis } from './lib/raw-synthesis';
import { type Bench, type ModelId, type Row, atLeast, below, shortModel } from './lib/report';

const TARGET_SPEED: Record<ModelId, number> = {
  'article-audio-1-mini': 150,
  'article-audio-1-pro': 40,
  'article-podcast-1-pro': 35,
};
/** Issue 14: the first playable part, seconds after submission, whatever the article's length. */
const TARGET_FIRST_PART_S: Record<ModelId, number> = {
  'article-audio-1-mini': 2,
  'article-audio-1-pro': 4,
  'article-podcast-1-pro': 4,
};
/** Issue 14: mini end to end at least this fraction of synthesis alone. */
const MINI_MIN_RATIO = 0.85;
const MAX_OVERHEAD = 0.2;

export const engineSpeed: Bench = {
  name: 'speed',
  title: 'Engine speed per model (end to end vs synthesis alone)',
  async run(options) {
    const rows: Row[] = [];
    for (const model of options.models) {
      for (const article of options.articles) {
        options.progress(`speed: ${model} on ${article}: end to end`);
        const e2e = await engineRun(model, article);
        options.progress(`speed: ${model} on ${article}: synthesis alone`);
        const raw = await rawSynthesis(model, article);
        const speed = e2e.audioS / e2e.wallS;
        const rawSpeed = raw.audioS / raw.wallS;
        const overhead = e2e.wallS / raw.wallS - 1;
        const label = `${shortModel(model)}, ${article} (${Math.round(e2e.characters / 1000)}k chars, ${Math.round(e2e.audioS)} s audio)`;
        rows.push({
          bench: 'engine speed, end to end',
          case: label,
          result: `${speed.toFixed(0)}x (${e2e.wallS.toFixed(1)} s)`,
          target: `>= ${TARGET_SPEED[model]}x`,
          verdict: atLeast(speed, TARGET_SPEED[model]),
        });
        rows.push({
          bench: 'first playable part after submission',
          case: label,
          result: `${e2e.firstPartS.toFixed(2)} s`,
          target: `<= ${TARGET_FIRST_PART_S[model]} s`,
          verdict: below(e2e.firstPartS, TARGET_FIRST_PART_S[model] + 1e-9),
          note: 'submission to the result event of part 0 (warm engine)',
        });
        rows.push({
          bench: 'synthesis alone, same voice and lines',
          case: label,
          result: `${rawSpeed.toFixed(0)}x (${raw.wallS.toFixed(1)} s, ${raw.lines} lines, ${raw.workers} workers)`,
          note: 'speech seconds before trimming, no pauses',
        });
        const encoding = await encodingTime(model, e2e.audioS);
        rows.push({
          bench: 'MP3 encoding alone, same length',
          case: label,
          result: `${((encoding.wallS / raw.wallS) * 100).toFixed(0)}% of synthesis time (${encoding.wallS.toFixed(1)} s, ${(e2e.audioS / encoding.wallS).toFixed(0)}x)`,
          note: 'one thread; in the engine it runs beside the synthesis workers',
        });
        // CPU seconds do not depend on what else the machine runs: on two busy cores, end to end can be at most
        // synthesis CPU / (synthesis CPU + encoding CPU) of synthesis alone, whatever the scheduling.
        rows.push({
          bench: 'MP3 encoding CPU / synthesis CPU',
          case: label,
          result: `${((encoding.cpuS / raw.cpuS) * 100).toFixed(0)}% (${encoding.cpuS.toFixed(2)} s / ${raw.cpuS.toFixed(2)} s CPU)`,
          note: `end to end can reach at most ${(raw.cpuS / (raw.cpuS + encoding.cpuS)).toFixed(2)} of synthesis alone`,
        });
        // Everything the engine did for the job (synthesis, trimming, levelling, encoding, parts, files, HTTP, events)
        // against synthesis alone: the same bound for the whole pipeline, measured rather than summed.
        const cpuBound = raw.cpuS / e2e.cpuS;
        rows.push({
          bench: 'engine CPU for the job / synthesis CPU',
          case: label,
          result: `${((e2e.cpuS / raw.cpuS) * 100).toFixed(0)}% (${e2e.cpuS.toFixed(2)} s / ${raw.cpuS.toFixed(2)} s CPU)`,
          note: `end to end can reach at most ${cpuBound.toFixed(2)} of synthesis alone`,
        });
        rows.push({
          bench: 'pipeline overhead',
          case: label,
          result: `${overhead >= 0 ? '+' : ''}${(overhead * 100).toFixed(0)}% of synthesis time`,
          target: '< 20%',
          verdict: below(overhead, MAX_OVERHEAD),
          note: 'end-to-end time / synthesis-alone time - 1',
        });
        if (model === 'article-audio-1-mini') {
          const ratio = raw.wallS / e2e.wallS;
          rows.push({
            bench: 'mini end to end / synthesis alone',
            case: label,
            result: ratio.toFixed(2),
            target: `>= ${MINI_MIN_RATIO}`,
            verdict: atLeast(ratio, MINI_MIN_RATIO),
            note: `same run; the engine's CPU allows at most ${cpuBound.toFixed(2)}`,
          });
        }
      }
    }
    return rows;
  },
};
