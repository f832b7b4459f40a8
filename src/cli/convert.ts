// `article-audio convert <url | file | ->`: the main job of the command line. Submits one article with the client
// of src/api, to a remote service (--base-url, key in ARTICLE_AUDIO_API_KEY) or to an engine started inside this
// process, shows progress and the job's log, and writes the MP3 with its WebVTT transcript beside it.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  AuthenticationError,
  ConnectionError,
  boundedLogLine as printable,
  InvalidResponseError,
  JobFailedError,
  JobServiceClient,
  NotFoundError,
  RateLimitError,
  ServerError,
  TimeoutError,
  ValidationError,
} from '../api/index';
import { type ArticleRequest, type OutputFile } from '../api/types';
import { MODELS, type ModelId, isHttpUrl, isModelId } from '../protocol';
import { type RunningEngine, startEngine } from '../engine/index';
import { loadVoices, UsageError } from '../engine/settings';
import { createDefaultPipeline } from '../engine/core/default-pipeline';
import { readArticleInput } from './article-input';
import { EXIT, EXIT_CODES_HELP } from './exit-codes';
import { ProgressDisplay } from './progress-display';
import { adviceFor, withAdvice } from '../error-advice';

/** The default voice: people convert an article to listen to all of it, so the most intelligible one. */
export const DEFAULT_MODEL: ModelId = 'article-audio-1-pro';

export const CONVERT_HELP = `Usage: article-audio convert <url | file | -> [options]

Turns one article into an MP3, with its transcript (WebVTT, one cue per sentence) beside it.
  url    a web page (http:// or https://); the service fetches it and finds the article
  file   a Markdown or text file, or a saved HTML page (its article text is taken out here)
  -      text from standard input

Options:
  --model ID        ${MODELS.map((model) => `${model.id}${model.id === DEFAULT_MODEL ? ' (default)' : ''}: ${model.description}`).join('\n                    ')}
  --out FILE        where to write the MP3 (default: <name>.mp3 in the current folder, named after the
                    file or page); the transcript is written beside it as <name>.vtt
  --intro-url URL   audio (MP3, OGG or WAV) to play before the article
  --outro-url URL   audio to play after it
  --base-url URL    use this job service, with its API key in ARTICLE_AUDIO_API_KEY; without it the
                    built-in engine runs inside this command (no account, nothing leaves this machine
                    except fetching the page and the intro/outro)
  --voices FILE     read models with the speech providers this voices file names (JSON keyed by model id;
                    env ARTICLE_AUDIO_VOICES; README "Use another voice"); the text of those models' jobs
                    goes to that provider. Keys come from the environment variables the file names.
  -h, --help        show this help

Progress and the job's log go to stderr; the names of the written files to stdout.

${EXIT_CODES_HELP}

Examples:
  article-audio convert notes.md
  article-audio convert https://example.com/blog/post --model article-audio-1-mini --out post.mp3
  pbpaste | article-audio convert - --out clipboard.mp3`;

class Interrupted extends Error {
  constructor() {
    super('Interrupted.');
  }
}

interface ConvertFlags {
  source: string;
  model: ModelId;
  out?: string;
  introUrl?: string;
  outroUrl?: string;
  baseUrl?: string;
  voices?: string;
}

const CONVERT_OPTIONS = ['model', 'out', 'intro-url', 'outro-url', 'base-url', 'voices'];

/**
 * "Unknown option --modle. Did you mean --model?" for a mistyped option, instead of Node's advice about positional
 * arguments that start with a dash; undefined for other parse errors.
 */
export function unknownOptionAdvice(error: unknown, known: readonly string[]): string | undefined {
  if ((error as { code?: unknown }).code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return undefined;
  const given = /'(-{1,2}[^']*)'/.exec((error as Error).message)?.[1];
  if (!given) return undefined;
  const name = given.replace(/^-+/, '').split('=')[0] ?? '';
  const closest = known
    .map((option) => ({ option, distance: editDistance(name.toLowerCase(), option) }))
    .sort((a, b) => a.distance - b.distance)[0];
  const prefixed = name.length >= 3 ? known.filter((option) => option.startsWith(name.toLowerCase())) : [];
  const guess =
    prefixed.length === 1
      ? prefixed[0]
      : closest && closest.distance <= Math.max(1, Math.floor(closest.option.length / 3))
        ? closest.option
        : undefined;
  return `Unknown option ${printable(given.slice(0, 60))}.${guess ? ` Did you mean --${guess}?` : ` The options are ${known.map((o) => `--${o}`).join(', ')}.`}`;
}

/** Edits (insert, delete, replace, swap two neighbours) from a to b: "modle" is one from "model". */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const row = d[i] as number[];
      const above = d[i - 1] as number[];
      row[j] = Math.min(
        (above[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (above[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j] as number, ((d[i - 2] as number[])[j - 2] as number) + 1);
    }
  return (d[a.length] as number[])[b.length] as number;
}

function readFlags(args: readonly string[]): ConvertFlags {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      strict: true,
      allowPositionals: true,
      options: {
        model: { type: 'string' },
        out: { type: 'string' },
        'intro-url': { type: 'string' },
        'outro-url': { type: 'string' },
        'base-url': { type: 'string' },
        voices: { type: 'string' },
      },
    });
  } catch (error) {
    throw new UsageError(
      `${unknownOptionAdvice(error, CONVERT_OPTIONS) ?? (error as Error).message}\nRun \`article-audio convert --help\` for the options.`,
    );
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) {
    throw new UsageError(
      positionals.length === 0
        ? 'Name the article: a URL, a file, or - for standard input.'
        : `Convert one article at a time (got ${positionals.length}).`,
    );
  }
  const model = values.model ?? DEFAULT_MODEL;
  if (!isModelId(model)) throw new UsageError(`--model must be one of ${MODELS.map((m) => m.id).join(', ')}.`);
  for (const flag of ['intro-url', 'outro-url', 'base-url'] as const) {
    const value = values[flag];
    if (value !== undefined && !isHttpUrl(value))
      throw new UsageError(`--${flag} must be an http:// or https:// address, not "${value}".`);
  }
  return {
    source: positionals[0] as string,
    model,
    ...(values.out !== undefined ? { out: values.out } : {}),
    ...(values['intro-url'] !== undefined ? { introUrl: values['intro-url'] } : {}),
    ...(values['outro-url'] !== undefined ? { outroUrl: values['outro-url'] } : {}),
    ...(values['base-url'] !== undefined ? { baseUrl: values['base-url'] } : {}),
    ...(values.voices !== undefined ? { voices: values.voices } : {}),
  };
}

export async function convert(args: readonly string[]): Promise<number> {
  const display = new ProgressDisplay(process.stderr);
  const controller = new AbortController();
  const interrupt = () => controller.abort(new Interrupted());
  process.on('SIGINT', interrupt);
  process.on('SIGTERM', interrupt);
  let local: { engine: RunningEngine; dataDir: string } | undefined;
  let client: JobServiceClient | undefined;
  let jobId: string | undefined;
  try {
    const flags = readFlags(args);
    const input = await readArticleInput(flags.source);
    const target = await outputPaths(flags.out, input.suggestedName);

    let baseUrl: string;
    let apiKey: string;
    const voicesFile = flags.voices ?? (process.env.ARTICLE_AUDIO_VOICES || undefined);
    if (flags.baseUrl !== undefined && flags.voices !== undefined)
      throw new UsageError(
        '--voices is for the built-in engine; a service named by --base-url chooses its own voices.',
      );
    if (flags.baseUrl !== undefined) {
      const key = process.env.ARTICLE_AUDIO_API_KEY?.trim();
      if (!key)
        throw new UsageError(
          `Set ARTICLE_AUDIO_API_KEY to your API key for ${flags.baseUrl}, or leave out --base-url to use the built-in engine.`,
        );
      baseUrl = flags.baseUrl;
      apiKey = key;
    } else {
      const dataDir = await mkdtemp(path.join(os.tmpdir(), 'article-audio-convert-'));
      apiKey = randomBytes(24).toString('hex');
      try {
        const voices = voicesFile !== undefined ? loadVoices(voicesFile, process.env) : undefined;
        const engine = await startEngine({
          dataDir,
          tokens: [apiKey],
          ...(voices ? { pipeline: createDefaultPipeline({ voices }) } : {}),
          log: (level, message) => {
            if (level === 'error') display.note(`engine: ${message}`);
          },
        });
        local = { engine, dataDir };
      } catch (error) {
        await rm(dataDir, { recursive: true, force: true });
        throw error;
      }
      baseUrl = local.engine.url;
    }

    client = new JobServiceClient({
      baseUrl,
      apiKey,
      log: (level, message) => {
        if (level === 'warn' || level === 'error') display.note(message);
      },
    });
    const request: ArticleRequest = {
      model_id: flags.model,
      ...(input.url !== undefined ? { url: input.url } : { text: input.text }),
      ...(flags.introUrl !== undefined ? { intro_audio_url: flags.introUrl } : {}),
      ...(flags.outroUrl !== undefined ? { outro_audio_url: flags.outroUrl } : {}),
    };
    display.note(`Converting ${input.label} with ${flags.model}${local ? '' : ` on ${client.baseUrl}`}…`);
    const accepted = await client.submitArticle(request, { signal: controller.signal });
    jobId = accepted.jobId;
    const job = await client.waitForJob(jobId, { signal: controller.signal, onEvent: (event) => display.show(event) });
    display.finish();

    const results = job.outputs?.results ?? [];
    const audio = pick(results, 'audio/', '.mp3') ?? results[0];
    const transcript = pick(results, 'text/vtt', '.vtt');
    if (!audio) throw new Error('The job succeeded but the service listed no output files.');
    const written = [target.mp3];
    await client.downloadOutput(audio, target.mp3, { signal: controller.signal });
    if (transcript) {
      await client.downloadOutput(transcript, target.vtt, { signal: controller.signal });
      written.push(target.vtt);
    } else {
      process.stderr.write('warning: the service sent no transcript (text/vtt); only the MP3 was written.\n');
    }
    const seconds = audio.durationS;
    process.stdout.write(
      `Wrote ${written.map(shown).join(' and ')}${seconds !== undefined ? ` (${clock(seconds)} of audio)` : ''}.\n`,
    );
    return EXIT.ok;
  } catch (error) {
    display.finish();
    const interrupted = controller.signal.aborted && controller.signal.reason instanceof Interrupted;
    if (interrupted && client && jobId) {
      // Best effort: the job should not keep a remote service busy after the user gave up on it.
      await client.cancelJob(jobId, { deadline: Date.now() + 3000 }).catch(() => undefined);
    }
    return report(interrupted ? new Interrupted() : error);
  } finally {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
    if (local) {
      await local.engine.close().catch(() => undefined);
      await rm(local.dataDir, { recursive: true, force: true }).catch(() => undefined);
    }
  }
}

/** Prints what went wrong and what to do, and returns the exit code. */
function report(error: unknown): number {
  // Messages may quote the service (a job's error, a status detail): one line, nothing a terminal would act on.
  const say = (message: string) => process.stderr.write(`article-audio: ${printable(message)}\n`);
  if (error instanceof Interrupted) {
    say('interrupted; the job was cancelled.');
    return EXIT.interrupted;
  }
  if (error instanceof UsageError) {
    say(error.message);
    return EXIT.usage;
  }
  if (error instanceof JobFailedError) {
    say(`the job failed (${error.jobError.code ?? 'no code'}): ${error.jobError.message ?? error.message}`);
    return EXIT.jobFailed;
  }
  // The client states facts; what to do comes from the same advice the extension shows.
  const advised = (error: Error) => withAdvice(error.message, adviceFor(error).advice);
  if (error instanceof ValidationError) {
    say(advised(error));
    for (const field of error.fields.slice(0, 20))
      process.stderr.write(`  ${printable(field.field || '(request)')}: ${printable(field.message)}\n`);
    return EXIT.refused;
  }
  if (error instanceof AuthenticationError) {
    say(`${error.message} (the key comes from ARTICLE_AUDIO_API_KEY)`);
    return EXIT.refused;
  }
  if (error instanceof RateLimitError || error instanceof NotFoundError) {
    say(advised(error));
    return EXIT.refused;
  }
  // A service that misbehaves (an endless or oversized download) failed as surely as one answering 5xx.
  const misbehaved = error instanceof InvalidResponseError;
  if (error instanceof ConnectionError || error instanceof TimeoutError || error instanceof ServerError || misbehaved) {
    say(advised(error));
    return EXIT.network;
  }
  say(error instanceof Error ? advised(error) : String(error));
  return EXIT.failure;
}

function pick(results: readonly OutputFile[], type: string, extension: string): OutputFile | undefined {
  return (
    results.find((r) => r.contentType?.toLowerCase().startsWith(type)) ??
    results.find((r) => r.contentType === undefined && new URL(r.url).pathname.toLowerCase().endsWith(extension))
  );
}

/** The MP3 path (from --out, or named after the input in the current folder) and the transcript beside it. */
async function outputPaths(out: string | undefined, suggestedName: string): Promise<{ mp3: string; vtt: string }> {
  let mp3 = path.resolve(out ?? `${suggestedName}.mp3`);
  const existing = await stat(mp3).catch(() => undefined);
  if (out !== undefined && (existing?.isDirectory() || /[\\/]$/.test(out)))
    mp3 = path.join(mp3, `${suggestedName}.mp3`);
  else if (!/\.mp3$/i.test(mp3)) mp3 = `${mp3}.mp3`;
  const folder = path.dirname(mp3);
  const info = await stat(folder).catch(() => undefined);
  if (!info?.isDirectory()) throw new UsageError(`The folder ${folder} does not exist.`);
  return { mp3, vtt: mp3.replace(/\.mp3$/i, '.vtt') };
}

function shown(file: string): string {
  const relative = path.relative(process.cwd(), file);
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : file;
}

function clock(seconds: number): string {
  const total = Math.round(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}
