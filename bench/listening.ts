// Listening quality (issue 18): what a speech recogniser hears. Each fixed text of bench/listening/ (prose,
// technical, numeric) goes through the real pipeline in every model; Debian's pocketsphinx transcribes the MP3, and
// the word error is counted against the words the engine meant to say (the script's spoken lines) and against the
// source text. Raw Flite in the same run is the baseline: the same voice (with the model's pace and pitch settings)
// saying the engine's words straight to a WAV file (no pauses, levelling or MP3), and the same voice given the source
// text as it is (no normalizer).
// Mini against its raw voice is also one row over all texts pooled, averaged over inaudible gain offsets applied alike
// to both sides (pooledRawRow): one run per text moved by 2-3 points on a 0.1 dB change.
// Also: words per minute, the pauses between sentences and paragraphs, podcast turn length, loudness (ffmpeg
// ebur128), whether any line of README.md or ARCHITECTURE.md loses its last word, and how far questions rise
// (bench/listening-intonation.ts).
//
// Needs pocketsphinx, pocketsphinx-en-us and ffmpeg; installed with apt-get when missing and running as root.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import os from 'node:os';
import path from 'node:path';
import { articleText as textOfArticle } from '../src/speech/source/article';
import { createSpeechPipeline } from '../src/speech';
import { parseMarkdown } from '../src/speech/source/markdown';
import { MODEL_PROFILES, type Voice } from '../src/speech/text/profiles';
import { buildScript } from '../src/speech/text/script';
import { splitSentences } from '../src/speech/text/sentences';
import { SynthesisPool } from '../src/speech/voice/synth-pool';
import { parseWebVtt } from '../src/webview/transcript';
import { lastWordSaid } from '../test/support/last-word';
import { intonationRows } from './listening-intonation';
import { pcm16Wav } from '../test/support/speech-support';
import { repoRoot } from './lib/articles';
import {
  type PairedRun,
  type Tally,
  alignWords,
  errorKinds,
  fairWordError,
  gapVerdict,
  pooledGap,
  recogniserPronunciations,
  wordError,
  wordErrors,
  wordsOf,
} from './listening-score';
import { type Bench, type ModelId, type Row, below, shortModel } from './lib/report';

const TEXTS = ['prose', 'technical', 'numeric'] as const;

/** LISTENING_TEXTS=prose,technical limits a run to some texts (each text and model takes minutes on a busy machine). */
function selectedTexts(): (typeof TEXTS)[number][] {
  const wanted = process.env.LISTENING_TEXTS?.split(',').filter(Boolean);
  return wanted ? TEXTS.filter((t) => wanted.includes(t)) : [...TEXTS];
}
const TARGETS: Partial<Record<ModelId, Partial<Record<(typeof TEXTS)[number], number>>>> = {
  'article-audio-1-pro': { prose: 10, technical: 15 },
};

function haveTools(): boolean {
  const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
  return has('pocketsphinx_continuous') && has('ffmpeg');
}

function installTools(progress: (m: string) => void): void {
  if (haveTools()) return;
  if (process.getuid?.() !== 0)
    throw new Error(
      'pocketsphinx and ffmpeg are missing: apt-get install pocketsphinx pocketsphinx-en-us ffmpeg (as root)',
    );
  progress('listening: installing pocketsphinx, pocketsphinx-en-us and ffmpeg with apt-get');
  execFileSync(
    'apt-get',
    ['install', '-y', '--no-install-recommends', 'pocketsphinx', 'pocketsphinx-en-us', 'ffmpeg'],
    { stdio: 'ignore', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } },
  );
}

function toWav16k(input: string, output: string): void {
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', input, '-ar', '16000', '-ac', '1', output]);
}

const execFileAsync = promisify(execFile);

/** What pocketsphinx hears in a 16 kHz WAV (asynchronous, so the pooled row can run two at once). */
async function recognise(wav: string): Promise<string> {
  const { stdout } = await execFileAsync('pocketsphinx_continuous', ['-infile', wav, '-logfn', '/dev/null'], {
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

/**
 * Gains (dB) applied alike to the engine's decoded audio and the raw voice's WAV before recognition for the pooled
 * Mini-vs-raw row: a listener cannot hear 0.2 dB, but pocketsphinx's running feature normalisation starts from
 * different values, and on texts of 100-250 words that alone moved the word error 2-3 points.
 * LISTENING_GAINS_DB=-0.2,0,0.2 changes them.
 */
function perturbationGains(): number[] {
  const given = process.env.LISTENING_GAINS_DB?.split(',').filter(Boolean).map(Number);
  return given && given.length > 0 && given.every(Number.isFinite) ? given : [-0.2, -0.1, 0, 0.1, 0.2];
}

/** Each element of `items` through `work`, at most `limit` at a time (pocketsphinx is single-threaded). */
async function inParallel<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await work(items[i]!);
      }
    }),
  );
  return results;
}

interface HeardPair {
  text: string;
  meant: string[];
  engineWav: string;
  rawWav: string;
  /** What was heard of each at no gain (already recognised for the per-text rows). */
  engineHeard: string[];
  rawHeard: string[];
}

/**
 * The Mini-vs-raw figure as its own row: all texts pooled, engine minus raw averaged over inaudible gain offsets
 * applied equally to both sides, with the spread, so a reader sees whether the 2-point limit is beyond the noise.
 */
async function pooledRawRow(
  model: ModelId,
  pairs: HeardPair[],
  dir: string,
  progress: (m: string) => void,
): Promise<Row> {
  const gains = perturbationGains();
  progress(`listening: ${shortModel(model)} against its raw voice, all texts pooled, gains ${gains.join(', ')} dB`);
  const jobs = gains.flatMap((gain) =>
    pairs.flatMap((pair) => (['engine', 'raw'] as const).map((side) => ({ gain, pair, side }))),
  );
  const heard = await inParallel(jobs, 2, async ({ gain, pair, side }) => {
    if (gain === 0) return side === 'engine' ? pair.engineHeard : pair.rawHeard;
    const input = side === 'engine' ? pair.engineWav : pair.rawWav;
    const output = path.join(dir, `${pair.text}-${side}-${gain}.wav`);
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', input, '-af', `volume=${gain}dB`, '-c:a', 'pcm_s16le', output]);
    const words = wordsOf(await recognise(output));
    rmSync(output, { force: true });
    return words;
  });
  const tally = (gain: number, pair: HeardPair, side: 'engine' | 'raw'): Tally => ({
    errors: wordErrors(
      pair.meant,
      heard[jobs.findIndex((j) => j.gain === gain && j.pair === pair && j.side === side)]!,
    ),
    words: pair.meant.length,
  });
  const runs: PairedRun[] = gains.map((gain) => ({
    label: `${gain > 0 ? '+' : ''}${gain} dB`,
    engine: pairs.map((pair) => tally(gain, pair, 'engine')),
    raw: pairs.map((pair) => tally(gain, pair, 'raw')),
  }));
  const summary = pooledGap(runs);
  const { verdict, clear } = gapVerdict(summary, 2);
  const points = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(1)}`;
  return {
    bench: 'listening: engine against its raw voice, texts pooled',
    case: `${shortModel(model)}, ${pairs.map((p) => p.text).join(' + ')} (${summary.words} words), ${gains.length} gains`,
    result: `${points(summary.mean)} points (sd ${summary.sd.toFixed(1)}, ${points(summary.min)} to ${points(summary.max)})`,
    target: 'within 2 points of raw',
    verdict,
    note: `${clear ? 'every gain agrees' : 'the range straddles 2 points: not beyond the noise'}; engine / raw per gain: ${summary.runs.map((r) => `${r.label} ${r.engine.toFixed(1)} / ${r.raw.toFixed(1)} %`).join(', ')}`,
  };
}

function loudness(file: string): { lufs: number; truePeak: number } {
  const result = spawnSync('ffmpeg', ['-nostats', '-i', file, '-af', 'ebur128=peak=true', '-f', 'null', '-'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const summary = result.stderr.slice(result.stderr.lastIndexOf('Summary:'));
  return {
    lufs: Number(/I:\s+(-?[\d.]+) LUFS/.exec(summary)?.[1]),
    truePeak: Number(/Peak:\s+(-?[\d.]+) dBFS/.exec(summary)?.[1]),
  };
}

function writeWav(file: string, samples: Int16Array[], sampleRate: number): void {
  writeFileSync(file, pcm16Wav(samples, sampleRate));
}

const median = (values: number[]) =>
  values.length === 0 ? Number.NaN : [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

/** Each line in its voice, with the model's settings for that voice (pace, pitch spread): only the pipeline differs. */
async function synthesizeToWav(
  pool: SynthesisPool,
  texts: { text: string; voice: Voice }[],
  file: string,
): Promise<void> {
  const parts = await Promise.all(
    texts.map(
      async ({ text, voice }) =>
        (
          await pool.synthesize(text, voice.flite, {
            durationStretch: voice.durationStretch,
            pitchSpread: voice.pitchSpread,
          })
        ).samples,
    ),
  );
  writeWav(file, parts, 16_000);
}

export const listening: Bench = {
  name: 'listening',
  title: 'Listening: word error heard by pocketsphinx, pace, pauses, loudness',
  async run(options) {
    installTools(options.progress);
    const rows: Row[] = [];
    // Each row is printed as soon as it is measured, so a long run that is stopped still leaves its figures.
    const push = (...added: Row[]) => {
      rows.push(...added);
      for (const row of added)
        options.progress(`listening row: ${row.bench} | ${row.case} | ${row.result} | ${row.note ?? ''}`);
    };
    const dir = mkdtempSync(path.join(os.tmpdir(), 'aa-listening-'));
    const pipeline = createSpeechPipeline({ workers: 2 });
    const pool = new SynthesisPool(2);
    const dictionary = recogniserPronunciations();
    const canWrite = (word: string) => dictionary?.has(word) ?? true;
    // Mini's audio and raw voice per text, kept for the pooled row after the last text.
    const heardPairs: HeardPair[] = [];
    try {
      if (process.env.LISTENING_LAST_WORDS !== '0') push(...(await lastWords(pool, options.progress)));
      if (process.env.LISTENING_INTONATION !== '0')
        push(...(await intonationRows(pool, options.models, options.progress)));
      for (const name of selectedTexts()) {
        const markdown = readFileSync(path.join(__dirname, 'listening', `${name}.md`), 'utf8');
        const source = wordsOf(textOfArticle(parseMarkdown(markdown)));
        for (const model of options.models) {
          options.progress(`listening: ${shortModel(model)} reads ${name}`);
          const { lines } = buildScript(parseMarkdown(markdown), model);
          const spoken = lines.map((l) => l.spoken).join(' ');
          const meant = wordsOf(spoken);
          const workDir = mkdtempSync(path.join(dir, `${name}-`));
          await pipeline.run(
            { jobId: `${name}-${model}`, modelId: model, text: markdown },
            {
              workDir,
              signal: new AbortController().signal,
              progress: () => {},
              log: () => {},
              fetchLimits: { maxBytes: 1 << 20, timeoutMs: 20_000, maxRedirects: 5 },
            },
          );
          const mp3 = path.join(workDir, 'audio.mp3');
          const wav = path.join(workDir, 'audio.wav');
          toWav16k(mp3, wav);
          const heard = wordsOf(await recognise(wav));
          const cues = parseWebVtt(readFileSync(path.join(workDir, 'transcript.vtt'), 'utf8'));
          const durationS = cues.length > 0 ? cues[cues.length - 1]!.end : 0;
          const gaps = cues.slice(1).map((cue, i) => ({
            gap: cue.start - cues[i]!.end,
            paragraph: cue.paragraph === true,
            speakerChange: cue.speaker !== cues[i]!.speaker,
          }));
          const level = loudness(mp3);
          const werMeant = wordError(meant, heard);
          // What the errors are: meant and heard words side by side, for the Pro rows (LISTENING_ALIGN=1: every row).
          if (model === 'article-audio-1-pro' || process.env.LISTENING_ALIGN === '1')
            options.progress(`listening aligned (${shortModel(model)}, ${name}): ${alignWords(meant, heard)}`);
          const target = TARGETS[model]?.[name];
          const label = `${shortModel(model)}, ${name}`;
          push({
            bench: 'listening: word error vs meant words',
            case: label,
            result: pct(werMeant),
            ...(target !== undefined
              ? { target: `<= ${target} %`, verdict: below(werMeant * 100, target + 1e-9) }
              : {}),
            note: `vs source text ${pct(wordError(source, heard))}; ${meant.length} words meant, ${heard.length} heard`,
          });
          const fair = fairWordError(meant, heard, canWrite);
          push({
            bench: 'listening: word error vs meant words, recogniser limits apart',
            case: label,
            result: pct(fair.rate),
            ...(target !== undefined
              ? { target: `<= ${target} %`, verdict: below(fair.rate * 100, target + 1e-9) }
              : {}),
            note: `${fair.variants} errors were spelling variants (harbour/harbor) and ${fair.compounds} compounds written apart (time out/timeout), counted as right; ${fair.setAside} of ${meant.length} meant words set aside, not in the recogniser's dictionary so it can never write them: ${fair.unwritable.join(', ') || 'none'}`,
          });
          if (dictionary) {
            const kinds = errorKinds(spoken, heard, dictionary);
            push({
              bench: 'listening: where the strict errors are',
              case: label,
              result: `${kinds.atLetters} of ${kinds.errors} at spelled letters`,
              note: `${kinds.homophones} homophones in the recogniser's dictionary (cache/cash), ${kinds.other} elsewhere; without the errors at spelled letters ${pct((kinds.errors - kinds.atLetters) / kinds.meant)}, and without the homophones too ${pct(kinds.other / kinds.meant)}`,
            });
          }
          const turns: number[] = [];
          let turnStart = cues[0]?.start ?? 0;
          cues.forEach((cue, i) => {
            const next = cues[i + 1];
            if (!next || next.speaker !== cue.speaker) {
              turns.push(cue.end - turnStart);
              turnStart = next?.start ?? 0;
            }
          });
          push({
            bench: 'listening: pace and pauses',
            case: label,
            result: `${((meant.length / durationS) * 60).toFixed(0)} wpm`,
            ...(model === 'article-audio-1-mini'
              ? {
                  target: '165-175 wpm',
                  verdict:
                    (meant.length / durationS) * 60 >= 165 && (meant.length / durationS) * 60 <= 175
                      ? ('meets' as const)
                      : ('misses' as const),
                }
              : {}),
            note: `median pause between sentences ${median(gaps.filter((g) => !g.paragraph && !g.speakerChange).map((g) => g.gap)).toFixed(2)} s, between paragraphs ${median(gaps.filter((g) => g.paragraph).map((g) => g.gap)).toFixed(2)} s${model.includes('podcast') ? `; ${turns.length} turns, average ${(turns.reduce((a, b) => a + b, 0) / turns.length).toFixed(1)} s` : ''}`,
          });
          push({
            bench: 'listening: loudness (ebur128)',
            case: label,
            result: `${level.lufs.toFixed(1)} LUFS`,
            target: '-19 LUFS mono',
            verdict: Math.abs(level.lufs + 19) <= 1 ? 'meets' : 'misses',
            note: `true peak ${level.truePeak.toFixed(1)} dBTP (target <= -1); ${MODEL_PROFILES[model].bitrate / 1000} kbps`,
          });

          // Baselines: the same voice, straight to WAV: the engine's words, and the source text as written.
          const voices = MODEL_PROFILES[model].voices;
          const voice = voices[0]!;
          const rawMeant = path.join(workDir, 'raw-meant.wav');
          await synthesizeToWav(
            pool,
            lines.map((l) => ({ text: l.spoken, voice: voices[l.voice]! })),
            rawMeant,
          );
          const rawMeantHeard = wordsOf(await recognise(rawMeant));
          if (model === 'article-audio-1-mini') {
            const kept = { engineWav: path.join(dir, `${name}-engine.wav`), rawWav: path.join(dir, `${name}-raw.wav`) };
            copyFileSync(wav, kept.engineWav);
            copyFileSync(rawMeant, kept.rawWav);
            heardPairs.push({ text: name, meant, ...kept, engineHeard: heard, rawHeard: rawMeantHeard });
          }
          const rawSource = path.join(workDir, 'raw-source.wav');
          const sourceLines = parseMarkdown(markdown).blocks.flatMap((b) =>
            b.kind === 'paragraph' || b.kind === 'heading' || b.kind === 'quote'
              ? splitSentences(b.text)
              : b.kind === 'list'
                ? b.items
                : [],
          );
          await synthesizeToWav(
            pool,
            sourceLines.map((text) => ({ text, voice })),
            rawSource,
          );
          const rawSourceHeard = wordsOf(await recognise(rawSource));
          push({
            bench: 'listening: raw Flite baseline',
            case: `${voices.map((v) => v.flite).join(' + ')} (${shortModel(model)}), ${name}`,
            result: pct(wordError(meant, rawMeantHeard)),
            // Both figures, as for the pipeline's rows, so a model is compared with its raw voice like for like.
            note: `engine's words straight to WAV, vs meant words (recogniser limits apart: ${pct(fairWordError(meant, rawMeantHeard, canWrite).rate)}); the source text unnormalized: ${pct(wordError(source, rawSourceHeard))} vs source`,
          });
          rmSync(workDir, { recursive: true, force: true });
        }
      }
      if (heardPairs.length > 0 && process.env.LISTENING_POOLED !== '0')
        push(await pooledRawRow('article-audio-1-mini', heardPairs, dir, options.progress));
    } finally {
      await pipeline.close();
      await pool.close();
      rmSync(dir, { recursive: true, force: true });
    }
    return rows;
  },
};

/**
 * Every line of this repo's README.md and ARCHITECTURE.md, as Pro says it: its last word must be said, read from
 * Flite's segments (test/support/last-word.ts: the line ends with the word's phones, its main vowel not swallowed).
 */
async function lastWords(pool: SynthesisPool, progress: (m: string) => void): Promise<Row[]> {
  const rows: Row[] = [];
  for (const file of ['README.md', 'ARCHITECTURE.md']) {
    progress(`listening: last words of every line of ${file}`);
    const { lines, profile } = buildScript(
      parseMarkdown(readFileSync(path.join(repoRoot, file), 'utf8')),
      'article-audio-1-pro',
    );
    const voice = profile.voices[0]!.flite;
    const lost: string[] = [];
    let checked = 0;
    await Promise.all(
      lines.map(async (line) => {
        const result = await lastWordSaid(pool, line.spoken, voice);
        if (!result) return;
        checked++;
        if (!result.said) lost.push(`${line.spoken.slice(-40)} (${result.detail})`);
      }),
    );
    rows.push({
      bench: 'listening: lines whose last word is unspoken',
      case: `pro, ${file} (${checked} lines)`,
      result: String(lost.length),
      target: '0',
      verdict: lost.length === 0 ? 'meets' : 'misses',
      note: lost
        .slice(0, 3)
        .map((l) => `…${l}`)
        .join(' | '),
    });
  }
  return rows;
}
