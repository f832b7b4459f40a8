// The speech pipeline: a job's input -> MP3, WebVTT transcript, chapters (JSON) and the article as read (Markdown).
//
//   fetch (URL) ─▶ extract (HTML: Readability; Markdown/text: marked) ─▶ Article ─▶ script (per model)
//   ─▶ synthesis in the worker pool, a few lines ahead ─▶ the job's audio worker, in order: trim, level, pauses,
//   MP3 encoder ─▶ audio.mp3, and parts of it (part-NNNN.mp3 + .vtt) published while the job runs
//
// Only a small window of lines is in flight, and audio is encoded as it arrives, so memory stays flat whatever the
// article length. This thread only passes samples along (transferred, not copied) and keeps the transcript: the
// engine's main thread never does audio work, so HTTP, events and file serving never wait on it.
import { readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { binaryKind, isPdf, TEXT_MAX_LENGTH as MAX_CHARACTERS, TEXT_MIN_LENGTH as MIN_CHARACTERS } from '../protocol';
import { type Article, articleMarkdown } from './source/article';
import type { LineWritten, PartFile } from './audio/audio-protocol';
import { decodeText, FetchError, fetchWithLimits } from './source/fetch-source';
import { AUDIO_THREAD_REUSE, AudioThreads, type JobAudio } from './audio/job-audio';
import type { Script, ScriptHead } from './parse/parse-protocol';
import type { ScriptLine, Voice } from './text/profiles';
import { SynthesisPool } from './voice/synth-pool';
import { type LineVoice, type SpokenLine, toInt16 } from './voice/voice';
import { VoiceChoice } from './voice/voices';
import type { VoicesConfig } from './voice/voices-file';
import { type Chapter, type Cue, shiftCue, toChaptersJson, toWebVtt } from './audio/transcript';
import { timeWrittenWords } from './text/word-map';
import { isClearlyNotEnglish } from './text/language';
import { type ArticleFacts, articleFacts } from './text/article-facts';
import {
  DEFAULT_PARSE_LIMITS,
  type ParseLimits,
  ParseRunner,
  type ReadOptions,
  THREAD_REUSE,
} from './parse/parse-runner';
import {
  type ArticlePipeline,
  type PipelineContext,
  type PipelineInput,
  type PipelineOutput,
  PipelineError,
  storageFailure,
} from './types';

/**
 * Seconds of audio in the first part, the second, and so on (the last repeats): the first is short so that listening
 * can start within a second or two of submitting; later ones are larger, so a long article has few parts.
 */
export const PART_TARGETS_S = [1, 5, 15, 30, 60];

/**
 * The lines of a job's first part, as far as can be told before they are spoken: every line that starts within the
 * first 30 characters of speech (about 2 s at the voices' 14-15 characters a second, twice the first part's 1 s).
 * They are synthesized at normal priority (synth-pool.ts, holdFirstPart); a line misjudged either way costs only
 * priority, never correctness.
 */
const FIRST_PART_CHARS = 30;

export { PipelineError } from './types';
export type { ArticlePipeline } from './types';

/** The voices' rate: speech-only audio is encoded at it. */
const SAMPLE_RATE = 16_000;
/**
 * With intro or outro music, or a provider's voice, the whole stream is at 24 kHz and 64 kbps (an MP3 stream keeps one
 * rate; players stop at a change): music and neural voices keep what they have up to about 11 kHz instead of being
 * cut at 8 kHz; built-in speech beside music is resampled up.
 */
const MUSIC_RATE = 24_000;
const MUSIC_BITRATE = 64_000;
const INTRO_GAP_S = 0.6;
/** A provider voice's retries are logged at most this often per job. */
const RETRY_LOG_EVERY_MS = 5_000;

export const OUTPUT_NAMES = {
  audio: 'audio.mp3',
  transcript: 'transcript.vtt',
  chapters: 'chapters.json',
  article: 'article.md',
} as const;

export interface SpeechPipelineOptions {
  /** Synthesis worker threads shared by all jobs (default: the CPU cores, at most 4). */
  workers?: number;
  /** Time, memory and nesting limits of parsing and intro/outro decoding (parse-runner.ts). */
  parseLimits?: Partial<ParseLimits>;
  /** Which voice reads which model (the voices file, voice/voices-file.ts); a model not in it keeps its built-in voice. */
  voices?: VoicesConfig;
}

const PAGE_TYPES = new Set(['text/html', 'application/xhtml+xml']);
const TEXT_TYPES = new Set(['text/plain', 'text/markdown', 'text/x-markdown', '']);

function formatKb(bytes: number): string {
  return bytes < 1024 ? `${bytes} bytes` : `${Math.round(bytes / 1024).toLocaleString('en-US')} KB`;
}

async function articleFromUrl(
  url: string,
  context: PipelineContext,
  parser: ParseRunner,
  options: ReadOptions,
): Promise<{ article: Article; script?: Script }> {
  let fetched;
  try {
    fetched = await fetchWithLimits(
      url,
      context.fetchLimits,
      context.signal,
      'text/html,application/xhtml+xml,application/pdf;q=0.9,text/markdown;q=0.9,text/plain;q=0.8',
    );
  } catch (error) {
    if (error instanceof FetchError) throw new PipelineError('fetch_failed', error.message, { cause: error });
    throw error;
  }
  const from = new URL(fetched.finalUrl).hostname.replace(/^www\./, '');
  context.log('info', `Fetched ${formatKb(fetched.body.length)} from ${from}.`);
  // A PDF, by its type or its signature (servers often send PDFs as application/octet-stream): read by pdf.js in the
  // parse worker, with the same time and memory limits as a page.
  if (fetched.mediaType === 'application/pdf' || fetched.mediaType === 'application/x-pdf' || isPdf(fetched.body))
    return parser.readPdf(fetched.body, `The PDF at ${fetched.finalUrl}`, context.signal, {
      ...options,
      sourceLabel: from,
    });
  // A page, Markdown or text answer whose bytes are an image, an archive or a program (a mislabelled download):
  // read aloud it would be minutes of letter names.
  const binary = (PAGE_TYPES.has(fetched.mediaType) || TEXT_TYPES.has(fetched.mediaType)) && binaryKind(fetched.body);
  if (binary)
    throw new PipelineError(
      'not_an_article',
      `${fetched.finalUrl} answered with ${binary} (sent as ${fetched.mediaType}), not a web page or text. Convert a page or text instead.`,
    );
  // Parsing runs in a worker thread with time and memory limits: a hostile page must not stop the engine.
  if (PAGE_TYPES.has(fetched.mediaType))
    return parser.readPage(decodeText(fetched), fetched.finalUrl, context.signal, options);
  if (TEXT_TYPES.has(fetched.mediaType))
    return parser.readText(decodeText(fetched), `The page at ${fetched.finalUrl}`, context.signal, {
      ...options,
      sourceLabel: from,
    });
  throw new PipelineError(
    'fetch_failed',
    `${fetched.finalUrl} is ${fetched.mediaType || 'of an unknown type'}, not a web page, Markdown or plain text. Convert a page or text instead.`,
  );
}

async function loadClip(
  url: string | undefined,
  which: 'intro' | 'outro',
  sampleRate: number,
  context: PipelineContext,
  parser: ParseRunner,
): Promise<Float32Array | undefined> {
  if (!url) return undefined;
  const code = which === 'intro' ? 'intro_unusable' : 'outro_unusable';
  let fetched;
  try {
    fetched = await fetchWithLimits(
      url,
      context.fetchLimits,
      context.signal,
      'audio/mpeg,audio/ogg,audio/wav,audio/*;q=0.8',
    );
  } catch (error) {
    if (error instanceof FetchError)
      throw new PipelineError(code, `The ${which} audio could not be fetched: ${error.message}`, { cause: error });
    throw error;
  }
  // Decoded, bounded, resampled, levelled and faded in a worker thread (clip.ts).
  const samples = await parser.prepareClip(fetched.body, which, url, sampleRate, context.signal);
  context.log('info', `Using ${(samples.length / sampleRate).toFixed(1)} s of ${which} audio.`);
  return samples;
}

function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** The whole script began with other lines than its head said (see speak()); the job starts over without a head. */
class ScriptHeadChanged extends Error {
  constructor() {
    super('The script of the article began differently from its first lines');
  }
}

/** Whether two lines sound and read the same (chapter marks may differ: they are taken from the whole script). */
function sameSpeech(a: ScriptLine, b: ScriptLine | undefined): boolean {
  return (
    b !== undefined &&
    a.spoken === b.spoken &&
    a.written === b.written &&
    a.voice === b.voice &&
    a.pauseBefore === b.pauseBefore &&
    a.pauseAfter === b.pauseAfter &&
    Boolean(a.paragraph) === Boolean(b.paragraph) &&
    Boolean(a.heading) === Boolean(b.heading) &&
    a.listItem === b.listItem
  );
}

/** Writes each part's transcript beside its audio and hands the part to the service. */
class PartPublisher {
  private nextCue = 0;

  constructor(
    private readonly context: PipelineContext,
    private readonly cues: readonly Cue[],
    private readonly multiVoice: boolean,
    private readonly title: string | undefined,
    private readonly readBy: readonly string[],
    private readonly language: string | undefined,
  ) {}

  async publish(part: PartFile | undefined, final: boolean, durationS = Infinity): Promise<void> {
    if (!this.context.publishPart) return;
    // Nothing left to encode after the last part: no part is marked final, and the job's end says it all.
    if (!part) return;
    const end = final ? durationS : part.startS + part.durationS;
    const cues: Cue[] = [];
    while (this.nextCue < this.cues.length && (final || this.cues[this.nextCue]!.start < end)) {
      cues.push(shiftCue(this.cues[this.nextCue++]!, part.startS));
    }
    const transcript = part.name.replace(/\.mp3$/, '.vtt');
    await writeFile(
      path.join(this.context.workDir, transcript),
      toWebVtt(
        this.multiVoice ? cues : cues.map(({ voice: _voice, ...cue }) => cue),
        this.title,
        this.readBy,
        this.language,
      ),
    );
    await this.context.publishPart({
      index: part.index,
      startS: part.startS,
      durationS: part.durationS,
      final,
      files: [
        { name: part.name, contentType: 'audio/mpeg', durationS: part.durationS },
        { name: transcript, contentType: 'text/vtt', durationS: part.durationS },
      ],
    });
  }
}

class SpeechPipeline implements ArticlePipeline {
  private readonly pool: SynthesisPool;
  private readonly parser: ParseRunner;
  private readonly audioThreads = new AudioThreads(AUDIO_THREAD_REUSE);
  private readonly voices: VoiceChoice;

  constructor(options: SpeechPipelineOptions) {
    this.pool = new SynthesisPool(options.workers);
    this.voices = new VoiceChoice(this.pool, options.voices);
    // Flite is read and compiled now, asynchronously: never on the main thread as the first job starts.
    void this.pool.prepare();
    // One parse thread is kept between jobs (THREAD_REUSE): a thread's start-up is most of a short job's parse.
    this.parser = new ParseRunner({ ...DEFAULT_PARSE_LIMITS, ...options.parseLimits }, THREAD_REUSE);
  }

  async run(input: PipelineInput, context: PipelineContext): Promise<PipelineOutput> {
    // The synthesis workers, and an audio thread when none is kept from an earlier job, load while the article is
    // read: the first part must wait for as little as possible (issue 14: first audio within 2 s of submission). A
    // listener waits for the first part, so its work runs at normal priority, the rest of the job 10 nice steps lower
    // (issue 30, thread-priority.ts); a kept audio thread is lowered already, and warm (job-audio.ts).
    const firstPart = context.publishPart !== undefined;
    let audio = this.audioThreads.start({ firstPart });
    const releaseFirstPart = firstPart ? this.pool.holdFirstPart() : () => undefined;
    const firstPartDone = () => {
      releaseFirstPart();
      audio.lowerPriority();
    };
    try {
      this.pool.warm();
      try {
        return await this.runWith(audio, input, context, true, firstPartDone);
      } catch (error) {
        if (!(error instanceof ScriptHeadChanged)) throw error;
        // Nothing was published yet: start over, speaking from the whole script only.
        await audio.close();
        audio = this.audioThreads.start({ firstPart });
        return await this.runWith(audio, input, context, false, firstPartDone);
      }
    } finally {
      releaseFirstPart();
      await audio.close();
    }
  }

  private async runWith(
    audio: JobAudio,
    input: PipelineInput,
    context: PipelineContext,
    startOnHead: boolean,
    firstPartDone: () => void,
  ): Promise<PipelineOutput> {
    const { signal } = context;
    const music = Boolean(input.introAudioUrl || input.outroAudioUrl);
    context.progress(0.01);
    if (input.url) context.log('info', `Fetching ${input.url}`);
    // A long article's script comes in two steps: its first lines, then the whole (see speak()).
    let onHead: ReadOptions['onHead'];
    const headed = new Promise<{ article: Article; head: ScriptHead; facts: ArticleFacts }>(
      (resolve) => (onHead = (article, head, facts) => resolve({ article, head, facts })),
    );
    const options: ReadOptions = { modelId: input.modelId, ...(startOnHead ? { onHead } : {}) };
    const reading = input.url
      ? articleFromUrl(input.url, context, this.parser, options)
      : this.parser.readText(input.text ?? '', 'The text', signal, options);
    reading.catch(() => {}); // observed below, through the race or the whole script
    // The intro and outro are read meanwhile; when more than one input fails, the article's failure is reported
    // first, as when they were read one after the other.
    const clips = Promise.allSettled([
      loadClip(input.introAudioUrl, 'intro', music ? MUSIC_RATE : SAMPLE_RATE, context, this.parser),
      loadClip(input.outroAudioUrl, 'outro', music ? MUSIC_RATE : SAMPLE_RATE, context, this.parser),
    ]);
    const first: { article: Article; head?: ScriptHead; facts?: ArticleFacts } = await Promise.race([
      reading,
      headed,
    ]).catch(async (error: unknown) => {
      await clips;
      throw error;
    });
    const [intro, outro] = (await clips).map((outcome) => {
      if (outcome.status === 'rejected') throw outcome.reason;
      return outcome.value;
    });
    const { article } = first;
    signal.throwIfAborted();
    // Length, readable text, words and language: passes over the whole text, each 5-15 ms on a long article in a
    // fresh engine and the language detection up to 40 ms; one after another they were the main thread's longest
    // stall as a long job started (issue 30). The parse worker that read the article works them out beside it.
    const facts = first.facts ?? articleFacts(article);
    // Counted as at submission (src/protocol), so text accepted there is never too long here.
    const { characters, readable, longestRun, words } = facts;
    if (characters < MIN_CHARACTERS) {
      throw new PipelineError(
        'too_short',
        input.url
          ? `The article at ${input.url} has only ${characters} characters of text; at least ${MIN_CHARACTERS} are needed. Open the article itself, or paste its text.`
          : `The text has only ${characters} characters to read once its markup is removed; at least ${MIN_CHARACTERS} are needed.`,
      );
    }
    if (characters > MAX_CHARACTERS) {
      throw new PipelineError(
        'too_long',
        `The article has ${characters.toLocaleString('en-US')} characters; the limit is ${MAX_CHARACTERS.toLocaleString('en-US')}. Convert a part of it (select it and convert the selection).`,
      );
    }
    // A page or file that is a blob, a hash or a minified script (text like that is refused at submission; the
    // Markdown parser has shortened such runs by now, so their length is not told here).
    if (readable < MIN_CHARACTERS && longestRun > 0) {
      throw new PipelineError(
        'not_an_article',
        `${input.url ? `The article at ${input.url}` : 'The text'} has nothing to read aloud: it is mostly characters without spaces (a code, encoded data or a minified file, not prose). ${input.url ? 'Open the article itself, or paste its text.' : "Convert the article's text instead."}`,
      );
    }
    context.log(
      'info',
      `Extracted ${words.toLocaleString('en-US')} words${article.title ? ` (title: ${article.title})` : ''}.`,
    );
    context.progress(0.08);

    const whole = reading.then(({ script }) => {
      // The parse worker builds the script beside the article; it counts characters as above, so this is a defect.
      if (!script) throw new Error('The parse worker returned no script for an article within the limits');
      return script;
    });
    whole.catch(() => {}); // observed in speak()
    const { profile } = first.head ?? (await whole);
    const audioPath = path.join(context.workDir, OUTPUT_NAMES.audio);
    const multiVoice = profile.voices.length > 1;
    // The voice contract (voice/voice.ts): the built-in Flite voices, or a provider from the voices file.
    const speakers = this.voices.voicesFor(input.modelId, profile.voices);
    const readers = profile.voices.map((voice, i) => ({ ...voice, speaker: speakers[i]! }));
    const readBy = [...new Set(speakers.map((s) => s.description))];
    for (const description of readBy) context.log('info', `Reading with ${description}.`);
    // The built-in voices read English only: an article clearly in another language is refused unless every voice of
    // the job is a provider's (multilingual). Judged on a bounded sample of the prose (text/language.ts), in the parse
    // worker.
    const verdict = facts.language;
    const language = verdict.language;
    if (language)
      context.log(
        'info',
        `The article is in ${language.name} (${language.tag}; ${Math.round(verdict.agreeing * 100)} % of the sample agrees).`,
      );
    else context.log('info', "The article's language could not be told for sure; reading it as English.");
    if (isClearlyNotEnglish(verdict) && speakers.some((speaker) => !speaker.provider)) {
      const name = verdict.language.name;
      throw new PipelineError(
        'unsupported_language',
        `This article is in ${name}; the built-in voices read English only. Read it with a speech provider voice that speaks ${name} (see README, Use another voice), or convert an English text.`,
      );
    }
    // A provider's cost cap (voices file `max_characters`): refused here, before any line is asked for.
    for (const speaker of speakers) {
      if (speaker.maxCharacters === undefined || characters <= speaker.maxCharacters) continue;
      throw new PipelineError(
        'too_long',
        `The article has ${characters.toLocaleString('en-US')} characters; ${speaker.description} reads at most ${speaker.maxCharacters.toLocaleString('en-US')} a job (${speaker.capSource ?? 'its max_characters'}). Convert a part of it, or raise the cap in the voices file.`,
      );
    }
    // A provider's neural voice has what makes it clear up to 11-12 kHz (its s and t): its stream is at 24 kHz too,
    // like music, instead of being cut at the built-in voices' 8 kHz.
    const wide = music || speakers.some((speaker) => speaker.provider);
    const bitrate = wide ? Math.max(MUSIC_BITRATE, profile.bitrate) : profile.bitrate;
    const opened = audio
      .open({
        path: audioPath,
        partsDir: context.workDir,
        sampleRate: wide ? MUSIC_RATE : SAMPLE_RATE,
        bitrate,
        quality: profile.lameQuality,
        partTargetsS: context.publishPart ? PART_TARGETS_S : [],
      })
      .catch((error: unknown) => {
        throw storageFailure(error) ?? error;
      });
    opened.catch(() => {}); // awaited in speak(), after the first lines are asked for
    const cues: Cue[] = [];
    const chapters: Chapter[] = [];
    const parts = new PartPublisher(context, cues, multiVoice, article.title, readBy, language?.tag);
    const stopLines = new AbortController();
    let durationS: number;
    try {
      if (intro) {
        audio.clip(intro);
        audio.silence(INTRO_GAP_S);
      }
      // Lines still asked for when the run fails are given up (a provider's retries stop with the job).
      const lineContext = { ...context, signal: AbortSignal.any([signal, stopLines.signal]) };
      await this.speak(first.head, whole, readers, audio, opened, cues, chapters, parts, lineContext, firstPartDone);
      if (outro) {
        audio.silence(INTRO_GAP_S);
        audio.clip(outro);
      }
      context.log('info', 'Encoding the last frames and writing the transcript.');
      const finished = await audio.finish({
        ...(article.title ? { title: article.title } : {}),
        ...(input.url ? { sourceUrl: input.url, ...(article.sourceLabel ? { site: article.sourceLabel } : {}) } : {}),
        encoder: `Article Audio, ${input.modelId} (LAME 3.100, ${bitrate / 1000} kbps)`,
        voice: readBy.join(' and '),
        ...(language ? { language: language.iso639_3 } : {}),
        chapters: chapters.map((c) => ({ title: c.title, level: c.level, startS: c.start })),
      });
      durationS = finished.durationS;
      await parts.publish(finished.part, true, durationS);
    } catch (error) {
      stopLines.abort();
      await audio.abort();
      await rm(audioPath, { force: true });
      // Parts written but not yet handed over (those handed over are the service's now).
      const left = await readdir(context.workDir).catch(() => [] as string[]);
      await Promise.all(
        left
          .filter((name) => /^part-\d+\.(mp3|vtt)$/.test(name))
          .map((name) => rm(path.join(context.workDir, name), { force: true })),
      );
      if (error instanceof ScriptHeadChanged) throw error;
      if (signal.aborted)
        throw signal.reason instanceof Error ? signal.reason : new PipelineError('cancelled', 'The job was cancelled.');
      if (error instanceof PipelineError) throw error;
      throw (
        storageFailure(error) ??
        new PipelineError('synthesis_failed', `Speech synthesis failed: ${(error as Error).message}`, { cause: error })
      );
    }
    try {
      await writeFile(
        path.join(context.workDir, OUTPUT_NAMES.transcript),
        toWebVtt(
          multiVoice ? cues : cues.map(({ voice: _voice, ...cue }) => cue),
          article.title,
          readBy,
          language?.tag,
        ),
      );
      await writeFile(path.join(context.workDir, OUTPUT_NAMES.chapters), toChaptersJson(chapters, durationS));
      await writeFile(path.join(context.workDir, OUTPUT_NAMES.article), articleMarkdown(article));
    } catch (error) {
      throw storageFailure(error) ?? error;
    }
    context.progress(0.99);
    context.log(
      'info',
      `Made ${formatDuration(durationS)} of audio, ${cues.length} sentences, ${chapters.length} chapter${chapters.length === 1 ? '' : 's'}.`,
    );
    return {
      title: article.title,
      durationS,
      ...(language ? { language: language.tag } : {}),
      files: [
        { name: OUTPUT_NAMES.audio, contentType: 'audio/mpeg', durationS },
        { name: OUTPUT_NAMES.transcript, contentType: 'text/vtt', durationS },
        { name: OUTPUT_NAMES.chapters, contentType: 'application/json' },
        { name: OUTPUT_NAMES.article, contentType: 'text/markdown' },
      ],
    };
  }

  /**
   * Synthesizes the lines a few ahead of the audio worker and hands them to it in order. Each line's place in the
   * audio is taken as soon as the worker has written it, so a part is published the moment it is cut.
   *
   * With a `head` (a long article's first lines), speech starts on it while the whole script is built. Nothing is
   * settled (no cue, no progress, no part) before the whole script is there and begins with exactly those lines;
   * when it does not, ScriptHeadChanged starts the job over, before anything was published.
   */
  private async speak(
    head: ScriptHead | undefined,
    whole: Promise<Script>,
    voices: (Voice & { speaker: LineVoice })[],
    audio: JobAudio,
    opened: Promise<void>,
    cues: Cue[],
    chapters: Chapter[],
    parts: PartPublisher,
    context: PipelineContext,
    firstPartDone: () => void,
  ): Promise<void> {
    const { signal } = context;
    const window = Math.max(...voices.map((v) => v.speaker.window));
    const pending: Promise<SpokenLine>[] = [];
    let lines: ScriptLine[] = head?.lines ?? (await whole).lines;
    let script: Script | undefined;
    let totalChars = 1;
    let doneChars = 0;
    let next = 0;
    /** Characters of speech in the lines asked for so far, and whether the first part has been cut. */
    let requestedChars = 0;
    let firstPartCut = false;
    const holdsLinesForFirstPart =
      context.publishPart !== undefined && voices.every((voice) => !voice.speaker.provider);
    const sectionsLogged: number[] = [];
    const logSection = (section: number) =>
      script
        ? context.log('info', `Synthesizing section ${section} of ${script.sections}.`)
        : sectionsLogged.push(section);
    const confirmed = whole.then((complete) => {
      if (head && !head.lines.every((line, i) => sameSpeech(line, complete.lines[i]))) throw new ScriptHeadChanged();
      script = complete;
      lines = complete.lines;
      totalChars = Math.max(
        1,
        lines.reduce((sum, line) => sum + line.spoken.length, 0),
      );
      for (const section of sectionsLogged.splice(0)) logSection(section);
    });
    confirmed.catch(() => {}); // observed in the loop and in settle()
    // A provider's retries, in the job's log: at most one line every few seconds, however many lines wait.
    let retryLoggedAt = -Infinity;
    const retryLog = (message: string) => {
      if (performance.now() - retryLoggedAt < RETRY_LOG_EVERY_MS) return;
      retryLoggedAt = performance.now();
      context.log('warn', message);
    };
    const request = () => {
      const line = lines[next++]!;
      const firstPart = !firstPartCut && requestedChars < FIRST_PART_CHARS;
      requestedChars += line.spoken.length;
      const utterance = voices[line.voice]!.speaker.speak(
        { text: line.spoken, heading: line.heading, listItem: line.listItem, firstPart, log: retryLog },
        signal,
      );
      utterance.catch(() => {}); // observed when its turn comes; never an unhandled rejection meanwhile
      pending.push(utterance);
    };
    const fill = () => {
      while (next < lines.length && pending.length < window) {
        // Until the first part is cut, a line further on is asked for only when none waits: a listener waits for
        // the first part, and lines synthesized ahead would take the cores from its audio (the job's audio thread
        // is already lowered when it was kept from an earlier job, job-audio.ts). A job without parts (convert)
        // has no first part to wait for, and a provider's lines take no CPU here while they are made.
        if (holdsLinesForFirstPart && !firstPartCut && requestedChars >= FIRST_PART_CHARS && pending.length > 0) break;
        request();
      }
    };
    const settle = async (index: number, result: Promise<LineWritten>, spokenWords: SpokenLine['words']) => {
      const { start, end, part, trimmedS } = await result;
      await confirmed;
      const line = lines[index]!;
      if (line.chapter) chapters.push({ title: line.chapter.title, level: line.chapter.level, start });
      // The voice's word times are from the start of its samples: the audio worker cut `trimmedS` of silence off the
      // front, and the line starts at `start` in the job's audio.
      const words = spokenWords?.length
        ? timeWrittenWords(
            line.written,
            spokenWords.map((w) => ({
              word: w.word,
              start: Math.min(end, Math.max(start, start + w.start - trimmedS)),
            })),
          )
        : undefined;
      cues.push({
        start,
        end,
        text: line.written,
        voice: voices[line.voice]!.name,
        ...(line.paragraph ? { paragraph: true } : {}),
        ...(words ? { words } : {}),
      });
      doneChars += line.spoken.length;
      context.progress(0.08 + 0.9 * (doneChars / totalChars));
      if (part) await parts.publish(part, false);
    };
    // Lines in the audio worker not yet settled, settled one after another as the worker answers.
    const settling: Promise<void>[] = [];
    let settled: Promise<void> = Promise.resolve();
    let failure: { error: unknown } | undefined;
    fill();
    await opened;
    for (let i = 0; i < lines.length || !script; i++) {
      if (i >= lines.length) {
        // The head is spoken: the rest waits for the whole script.
        await confirmed;
        fill();
        if (i >= lines.length) break;
      }
      signal.throwIfAborted();
      if (failure) throw failure.error;
      const line = lines[i]!;
      const utterance = await pending.shift()!;
      fill();
      if (line.section) logSection(line.section);
      const result = audio.line(toInt16(utterance.samples), utterance.sampleRate, line.pauseBefore, line.pauseAfter);
      result.catch(() => {}); // observed in settle()
      // The first part is cut: nothing a listener waits for is left, and the rest of the job yields the CPU.
      if (!firstPartCut)
        void result.then(
          ({ part }) => {
            if (part && !firstPartCut) {
              firstPartCut = true;
              firstPartDone();
              fill();
            }
          },
          () => undefined,
        );
      const index = i;
      const spokenWords = utterance.words;
      settled = settled.then(() => settle(index, result, spokenWords));
      settled.catch((error: unknown) => (failure ??= { error }));
      settling.push(settled);
      // A bounded number of lines wait in the audio worker, so memory stays flat if encoding is slower than speech.
      while (settling.length > window) await settling.shift();
    }
    await settled;
  }

  async close(): Promise<void> {
    await Promise.all([this.pool.close(), this.parser.close(), this.audioThreads.close()]);
  }
}

export function createSpeechPipeline(options: SpeechPipelineOptions = {}): ArticlePipeline {
  return new SpeechPipeline(options);
}
