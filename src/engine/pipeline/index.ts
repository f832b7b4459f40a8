// The speech pipeline: a job's input -> MP3, WebVTT transcript, chapters (JSON) and the article as read (Markdown).
//
//   fetch (URL) ─▶ extract (HTML: Readability; Markdown/text: marked) ─▶ Article ─▶ script (per model)
//   ─▶ synthesis in the worker pool, a few lines ahead ─▶ in order: trim, level, pauses ─▶ MP3 encoder ─▶ file
//
// Only a small window of lines is in flight, and audio is encoded as it arrives, so memory stays flat whatever the
// article length.
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type Article, articleMarkdown, articleText, countWords } from './article';
import { decodeToMono, fadeIn, fadeOut, int16ToFloat, normalizeLoudness, silence, trimSilence, TARGET_RMS } from './audio';
import { decodeText, FetchError, fetchWithLimits } from './fetch-source';
import { extractHtmlArticle } from './html-article';
import { parseMarkdown } from './markdown';
import { Mp3Writer } from './mp3-writer';
import { buildScript, type ScriptLine, type Voice } from './script';
import { SynthesisPool, type Utterance } from './synth-pool';
import { type Chapter, type Cue, toChaptersJson, toWebVtt } from './transcript';
import { type ArticlePipeline, type PipelineContext, type PipelineInput, type PipelineOutput, PipelineError } from './types';

export { PipelineError } from './types';
export type { ArticlePipeline } from './types';

const SAMPLE_RATE = 16_000;
const MIN_CHARACTERS = 50;
const MAX_CHARACTERS = 100_000;
const INTRO_GAP_S = 0.6;
const FADE_S = 0.35;

export const OUTPUT_NAMES = { audio: 'audio.mp3', transcript: 'transcript.vtt', chapters: 'chapters.json', article: 'article.md' } as const;

export interface SpeechPipelineOptions {
  /** Synthesis worker threads shared by all jobs (default: the CPU cores, at most 4). */
  workers?: number;
}

const PAGE_TYPES = new Set(['text/html', 'application/xhtml+xml']);
const TEXT_TYPES = new Set(['text/plain', 'text/markdown', 'text/x-markdown', '']);

function formatKb(bytes: number): string {
  return bytes < 1024 ? `${bytes} bytes` : `${Math.round(bytes / 1024).toLocaleString('en-US')} KB`;
}

async function articleFromUrl(url: string, context: PipelineContext): Promise<Article> {
  let fetched;
  try {
    fetched = await fetchWithLimits(url, context.fetchLimits, context.signal, 'text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.8');
  } catch (error) {
    if (error instanceof FetchError) throw new PipelineError('fetch_failed', error.message, { cause: error });
    throw error;
  }
  const from = new URL(fetched.finalUrl).hostname.replace(/^www\./, '');
  context.log('info', `Fetched ${formatKb(fetched.body.length)} from ${from}.`);
  if (PAGE_TYPES.has(fetched.mediaType)) {
    const extracted = extractHtmlArticle(decodeText(fetched), fetched.finalUrl);
    if (!extracted || extracted.article.blocks.length === 0) {
      throw new PipelineError('not_an_article', `The page at ${fetched.finalUrl} has no readable article (it looks like a list of links or an app). Open the article itself, or paste its text instead.`);
    }
    return extracted.article;
  }
  if (TEXT_TYPES.has(fetched.mediaType)) return { ...parseMarkdown(decodeText(fetched)), sourceLabel: from };
  throw new PipelineError('fetch_failed', `${fetched.finalUrl} is ${fetched.mediaType || 'of an unknown type'}, not a web page, Markdown or plain text. Convert a page or text instead.`);
}

async function loadClip(url: string | undefined, which: 'intro' | 'outro', context: PipelineContext): Promise<Float32Array | undefined> {
  if (!url) return undefined;
  const code = which === 'intro' ? 'intro_unusable' : 'outro_unusable';
  let fetched;
  try {
    fetched = await fetchWithLimits(url, context.fetchLimits, context.signal, 'audio/mpeg,audio/ogg,audio/wav,audio/*;q=0.8');
  } catch (error) {
    if (error instanceof FetchError) throw new PipelineError(code, `The ${which} audio could not be fetched: ${error.message}`, { cause: error });
    throw error;
  }
  let samples: Float32Array;
  try {
    samples = await decodeToMono(fetched.body, SAMPLE_RATE);
  } catch (error) {
    throw new PipelineError(code, `The ${which} audio at ${url} cannot be used: ${(error as Error).message}. Use an MP3, OGG or WAV file.`, { cause: error });
  }
  if (samples.length < SAMPLE_RATE * 0.05) throw new PipelineError(code, `The ${which} audio at ${url} is empty.`);
  // Matched to the speech's level, with short fades where it meets the voice.
  normalizeLoudness(samples, SAMPLE_RATE, TARGET_RMS);
  const fade = Math.round(FADE_S * SAMPLE_RATE);
  if (which === 'intro') {
    fadeIn(samples, Math.round(0.02 * SAMPLE_RATE));
    fadeOut(samples, fade);
  } else {
    fadeIn(samples, fade);
    fadeOut(samples, Math.round(0.05 * SAMPLE_RATE));
  }
  context.log('info', `Using ${(samples.length / SAMPLE_RATE).toFixed(1)} s of ${which} audio.`);
  return samples;
}

function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

class SpeechPipeline implements ArticlePipeline {
  private readonly pool: SynthesisPool;

  constructor(options: SpeechPipelineOptions) {
    this.pool = new SynthesisPool(options.workers);
  }

  async run(input: PipelineInput, context: PipelineContext): Promise<PipelineOutput> {
    const { signal } = context;
    context.progress(0.01);
    let article: Article;
    if (input.url) {
      context.log('info', `Fetching ${input.url}`);
      article = await articleFromUrl(input.url, context);
    } else {
      article = parseMarkdown(input.text ?? '');
    }
    signal.throwIfAborted();
    const text = articleText(article);
    const characters = text.replace(/\s+/g, ' ').trim().length;
    if (characters < MIN_CHARACTERS) {
      throw new PipelineError('too_short', input.url
        ? `The article at ${input.url} has only ${characters} characters of text; at least ${MIN_CHARACTERS} are needed. Open the article itself, or paste its text.`
        : `The text has only ${characters} characters to read once its markup is removed; at least ${MIN_CHARACTERS} are needed.`);
    }
    if (characters > MAX_CHARACTERS) {
      throw new PipelineError('too_long', `The article has ${characters.toLocaleString('en-US')} characters; the limit is ${MAX_CHARACTERS.toLocaleString('en-US')}. Convert a part of it (select it and convert the selection).`);
    }
    const words = countWords(text);
    context.log('info', `Extracted ${words.toLocaleString('en-US')} words${article.title ? ` (title: ${article.title})` : ''}.`);
    context.progress(0.05);

    const [intro, outro] = await Promise.all([
      loadClip(input.introAudioUrl, 'intro', context),
      loadClip(input.outroAudioUrl, 'outro', context),
    ]);
    context.progress(0.08);

    const { profile, lines, sections } = buildScript(article, input.modelId);
    const audioPath = path.join(context.workDir, OUTPUT_NAMES.audio);
    const writer = await Mp3Writer.create(audioPath, SAMPLE_RATE, profile.bitrate);
    const cues: Cue[] = [];
    const chapters: Chapter[] = [];
    try {
      if (intro) {
        await writer.write(intro);
        await writer.write(silence(INTRO_GAP_S, SAMPLE_RATE));
      }
      await this.speak(lines, profile.voices, writer, cues, chapters, sections, context);
      if (outro) {
        await writer.write(silence(INTRO_GAP_S, SAMPLE_RATE));
        await writer.write(outro);
      }
      context.log('info', 'Encoding the last frames and writing the transcript.');
      await writer.finish();
    } catch (error) {
      await writer.abort();
      await rm(audioPath, { force: true });
      if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new PipelineError('cancelled', 'The job was cancelled.');
      if (error instanceof PipelineError) throw error;
      throw new PipelineError('synthesis_failed', `Speech synthesis failed: ${(error as Error).message}`, { cause: error });
    }
    const durationS = writer.durationS;
    const multiVoice = profile.voices.length > 1;
    await writeFile(path.join(context.workDir, OUTPUT_NAMES.transcript), toWebVtt(multiVoice ? cues : cues.map(({ voice: _voice, ...cue }) => cue), article.title));
    await writeFile(path.join(context.workDir, OUTPUT_NAMES.chapters), toChaptersJson(chapters, durationS));
    await writeFile(path.join(context.workDir, OUTPUT_NAMES.article), articleMarkdown(article));
    context.progress(0.99);
    context.log('info', `Made ${formatDuration(durationS)} of audio, ${cues.length} sentences, ${chapters.length} chapter${chapters.length === 1 ? '' : 's'}.`);
    return {
      title: article.title,
      durationS,
      files: [
        { name: OUTPUT_NAMES.audio, contentType: 'audio/mpeg', durationS },
        { name: OUTPUT_NAMES.transcript, contentType: 'text/vtt', durationS },
        { name: OUTPUT_NAMES.chapters, contentType: 'application/json' },
        { name: OUTPUT_NAMES.article, contentType: 'text/markdown' },
      ],
    };
  }

  /** Synthesizes the lines a few ahead of the encoder and writes them in order. */
  private async speak(
    lines: ScriptLine[],
    voices: Voice[],
    writer: Mp3Writer,
    cues: Cue[],
    chapters: Chapter[],
    sections: number,
    context: PipelineContext,
  ): Promise<void> {
    const { signal } = context;
    const window = this.pool.size * 3;
    const pending: Promise<Utterance>[] = [];
    const totalChars = lines.reduce((sum, line) => sum + line.spoken.length, 0);
    let doneChars = 0;
    let next = 0;
    const request = () => {
      const line = lines[next++]!;
      const voice = voices[line.voice]!;
      const utterance = this.pool.synthesize(line.spoken, voice.flite, { durationStretch: voice.durationStretch, signal });
      utterance.catch(() => {}); // observed when its turn comes; never an unhandled rejection meanwhile
      pending.push(utterance);
    };
    while (next < lines.length && pending.length < window) request();
    for (let i = 0; i < lines.length; i++) {
      signal.throwIfAborted();
      const line = lines[i]!;
      const utterance = await pending.shift()!;
      if (next < lines.length) request();
      if (line.section) context.log('info', `Synthesizing section ${line.section} of ${sections}.`);
      const speech = trimSilence(int16ToFloat(utterance.samples), utterance.sampleRate);
      normalizeLoudness(speech, utterance.sampleRate, TARGET_RMS);
      if (line.pauseBefore > 0 && writer.durationS > 0) await writer.write(silence(line.pauseBefore, SAMPLE_RATE));
      const start = writer.durationS;
      if (line.chapter) chapters.push({ title: line.chapter.title, level: line.chapter.level, start });
      await writer.write(speech);
      cues.push({ start, end: writer.durationS, text: line.written, voice: voices[line.voice]!.name });
      await writer.write(silence(line.pauseAfter, SAMPLE_RATE));
      doneChars += line.spoken.length;
      context.progress(0.08 + 0.9 * (doneChars / Math.max(1, totalChars)));
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

export function createSpeechPipeline(options: SpeechPipelineOptions = {}): ArticlePipeline {
  return new SpeechPipeline(options);
}
