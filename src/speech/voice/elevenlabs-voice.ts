// A voice of ElevenLabs: `POST {base_url}/v1/text-to-speech/{voice_id}/with-timestamps?output_format=…` with
// {text, model_id} and the `xi-api-key` header. The answer is JSON: the audio as base64 and the start and end time of
// every character, which become the line's word timings (the read-along marks the word being spoken). Bounded, tried
// again and timed out as the OpenAI-compatible voice is (provider-retry.ts, Limit); an answer that is not this JSON
// with audio in it is refused, never spoken; the key is redacted from every reason.
import { request } from 'undici';
import type { ModelId } from '../../protocol';
import { PipelineError } from '../types';
import { Limit, decodeAnswer } from './openai-voice';
import {
  PROVIDER_RETRY,
  ProviderFailure,
  type ProviderRetryPolicy,
  retryAfterMs,
  withProviderRetry,
} from './provider-retry';
import type { LineToSpeak, LineVoice, SpokenLine, WordTiming } from './voice';
import type { ElevenLabsEntry } from './voices-file';

export const ELEVENLABS_BASE_URL = 'https://api.elevenlabs.io';
export const ELEVENLABS_MODEL = 'eleven_multilingual_v2';
/** The JSON of one line's answer: its audio is base64 (4/3 of the audio's size), so this is about 48 MiB of audio. */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;
const TRANSIENT_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);

export interface ElevenLabsVoiceOptions {
  entry: ElevenLabsEntry;
  voice: string;
  modelId: ModelId;
  limit?: Limit;
  policy?: ProviderRetryPolicy;
  log?: (message: string) => void;
}

interface Alignment {
  characters: string[];
  character_start_times_seconds: number[];
  character_end_times_seconds: number[];
}

export class ElevenLabsVoice implements LineVoice {
  readonly provider = true;
  readonly description: string;
  readonly window: number;
  readonly maxCharacters?: number;
  readonly capSource?: string;
  private readonly url: URL;
  private readonly host: string;
  private readonly format: string;
  private readonly limit: Limit;
  private readonly policy: ProviderRetryPolicy;
  private readonly timeoutMs: number;

  constructor(private readonly options: ElevenLabsVoiceOptions) {
    const { entry } = options;
    const base = (entry.base_url ?? ELEVENLABS_BASE_URL).replace(/\/+$/, '');
    this.format = entry.output_format ?? 'pcm_16000';
    this.url = new URL(`${base}/v1/text-to-speech/${encodeURIComponent(options.voice)}/with-timestamps`);
    this.url.searchParams.set('output_format', this.format);
    this.host = this.url.host;
    this.description = `the voice ${options.voice} (${entry.model ?? ELEVENLABS_MODEL} at ${this.host}, ElevenLabs)`;
    if (entry.max_characters !== undefined) {
      this.maxCharacters = entry.max_characters;
      this.capSource = `max_characters of "${options.modelId}" in the voices file${entry.file ? ` ${entry.file}` : ''}`;
    }
    const concurrency = entry.concurrency ?? 4;
    this.window = concurrency * 2;
    this.limit = options.limit ?? new Limit(concurrency);
    this.timeoutMs = (entry.timeout_s ?? 60) * 1000;
    this.policy = options.policy ?? {
      ...PROVIDER_RETRY,
      ...(entry.retry_s !== undefined ? { budgetMs: entry.retry_s * 1000 } : {}),
    };
  }

  async speak(line: LineToSpeak, signal: AbortSignal): Promise<SpokenLine> {
    try {
      return await this.limit.run(signal, () =>
        withProviderRetry(
          () => this.attempt(line.text, signal),
          this.policy,
          signal,
          (failure, delayMs) =>
            (line.log ?? this.options.log)?.(
              `The voice at ${this.host} ${this.redact(failure.message)}; trying again in ${(delayMs / 1000).toFixed(1)} s.`,
            ),
        ),
      );
    } catch (error) {
      if (signal.aborted || !(error instanceof ProviderFailure)) throw error;
      throw new PipelineError(
        'voice_unavailable',
        `The voice ${this.options.voice} at ${this.host} could not read the article: it ${this.redact(error.message)}. Try again later, or read it with the built-in voice: remove "${this.options.modelId}" from the voices file.`,
      );
    }
  }

  private redact(text: string): string {
    let out = text;
    const { key } = this.options.entry;
    if (key) out = out.split(key).join('[redacted]');
    out = out.replace(/\p{Cc}+/gu, ' ');
    return out.length > 300 ? `${out.slice(0, 300)}…` : out;
  }

  private async attempt(text: string, signal: AbortSignal): Promise<SpokenLine> {
    const { entry } = this.options;
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let response;
    try {
      response = await request(this.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...(entry.key ? { 'xi-api-key': entry.key } : {}),
        },
        body: JSON.stringify({ text, model_id: entry.model ?? ELEVENLABS_MODEL }),
        signal: AbortSignal.any([signal, timeout]),
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
    } catch (error) {
      throw this.connectionFailure(error, signal, timeout);
    }
    let body: string;
    try {
      body = await readText(response.body, MAX_ANSWER_BYTES);
    } catch (error) {
      throw this.connectionFailure(error, signal, timeout);
    }
    if (response.statusCode < 200 || response.statusCode >= 300) {
      throw new ProviderFailure(
        `answered HTTP ${response.statusCode}${reasonOf(body)}`,
        TRANSIENT_STATUS.has(response.statusCode),
        retryAfterMs(response.headers['retry-after']),
      );
    }
    const answer = parseAnswer(body);
    const bytes = Buffer.from(answer.audio, 'base64');
    const spoken = this.format.startsWith('pcm_')
      ? pcmLine(bytes, Number(this.format.slice(4)))
      : await decodeAnswer(bytes, 'audio/mpeg', 'mp3');
    const words = answer.alignment ? wordsOf(answer.alignment) : [];
    return { ...spoken, ...(words.length > 0 ? { words } : {}) };
  }

  private connectionFailure(error: unknown, signal: AbortSignal, timeout: AbortSignal): unknown {
    if (signal.aborted) return error;
    if (timeout.aborted) return new ProviderFailure(`did not answer within ${this.timeoutMs / 1000} s`, true);
    if (error instanceof ProviderFailure) return error;
    const code = (error as { code?: unknown }).code;
    return new ProviderFailure(
      `could not be reached (${typeof code === 'string' ? code : (error as Error).message})`,
      true,
    );
  }
}

async function readText(body: AsyncIterable<Uint8Array>, max: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of body) {
    length += chunk.length;
    if (length > max) throw new ProviderFailure(`sent more than ${max / 1024 / 1024} MiB for one line`, false);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, length).toString('utf8');
}

/** ElevenLabs' error shapes: {"detail": {"status", "message"}} or a validation list {"detail": [{"msg"}]}. */
function reasonOf(body: string): string {
  try {
    const json = JSON.parse(body) as { detail?: unknown };
    const detail = json.detail;
    if (detail && typeof detail === 'object' && !Array.isArray(detail)) {
      const { status, message } = detail as { status?: unknown; message?: unknown };
      const text = [status, message].filter((v) => typeof v === 'string').join(': ');
      if (text) return `: ${text.slice(0, 200)}`;
    }
    if (Array.isArray(detail)) {
      const first = detail[0] as { msg?: unknown } | undefined;
      if (typeof first?.msg === 'string') return `: ${first.msg.slice(0, 200)}`;
    }
  } catch {
    // Not JSON: an HTML error page of a proxy, say.
  }
  const text = body
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return text ? `: ${text.slice(0, 200)}` : '';
}

/** The answer's audio and alignment, or a refusal when it is not ElevenLabs' JSON with audio in it. */
function parseAnswer(body: string): { audio: string; alignment?: Alignment } {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new ProviderFailure(
      `answered with something that is not JSON ("${body.slice(0, 60).replace(/\s+/g, ' ').trim()}…"); nothing of it was spoken`,
      false,
    );
  }
  const record = (json ?? {}) as { audio_base64?: unknown; alignment?: unknown };
  if (
    typeof record.audio_base64 !== 'string' ||
    record.audio_base64.length === 0 ||
    !/^[A-Za-z0-9+/=\s]+$/.test(record.audio_base64)
  )
    throw new ProviderFailure('answered without audio (no audio_base64); nothing of it was spoken', false);
  return { audio: record.audio_base64, ...(isAlignment(record.alignment) ? { alignment: record.alignment } : {}) };
}

function isAlignment(value: unknown): value is Alignment {
  if (!value || typeof value !== 'object') return false;
  const a = value as Record<string, unknown>;
  const chars = a.characters;
  const starts = a.character_start_times_seconds;
  const ends = a.character_end_times_seconds;
  return (
    Array.isArray(chars) &&
    Array.isArray(starts) &&
    Array.isArray(ends) &&
    chars.length === starts.length &&
    chars.length === ends.length &&
    chars.every((c) => typeof c === 'string') &&
    starts.every((t) => typeof t === 'number' && Number.isFinite(t) && t >= 0) &&
    ends.every((t) => typeof t === 'number' && Number.isFinite(t) && t >= 0)
  );
}

/** Raw 16-bit little-endian mono PCM at `rate`. */
function pcmLine(bytes: Buffer, rate: number): SpokenLine {
  if (bytes.length < 2) throw new ProviderFailure('sent no audio', false);
  const samples = new Int16Array(Math.floor(bytes.length / 2));
  for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(i * 2);
  return { samples, sampleRate: rate };
}

/**
 * Character timings as word timings: a word is a run of characters without white space; it starts when its first
 * character starts and ends when its last ends. Times that go backwards are clamped, so the words stay in order.
 */
export function wordsOf(alignment: Alignment): WordTiming[] {
  const words: WordTiming[] = [];
  let current: WordTiming | undefined;
  let last = 0;
  alignment.characters.forEach((character, i) => {
    const start = Math.max(last, alignment.character_start_times_seconds[i] ?? last);
    const end = Math.max(start, alignment.character_end_times_seconds[i] ?? start);
    last = start;
    if (/^\s*$/.test(character)) {
      current = undefined;
      return;
    }
    if (!current) {
      current = { word: character, start, end };
      words.push(current);
    } else {
      current.word += character;
      current.end = end;
    }
  });
  return words;
}
