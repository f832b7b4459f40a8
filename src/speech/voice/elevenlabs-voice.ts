// A voice of ElevenLabs: `POST {base_url}/v1/text-to-speech/{voice_id}/with-timestamps?output_format=…` with
// {text, model_id} and the `xi-api-key` header. The answer is JSON: the audio as base64 and the start and end time of
// every character, which become the line's word timings (the read-along marks the word being spoken). Bounds,
// retries, time limits and redaction are every provider's (provider-voice.ts); an answer that is not this JSON with
// audio in it is refused, never spoken.
import { http } from '../http';
import { decodeAnswer } from './openai-voice';
import { ProviderFailure, retryAfterMs } from './provider-retry';
import { ProviderVoice, type ProviderVoiceOptions, TRANSIENT_STATUS, readLimited } from './provider-voice';
import type { SpokenLine, WordTiming } from './voice';
import type { ElevenLabsEntry } from './voices-file';

export const ELEVENLABS_BASE_URL = 'https://api.elevenlabs.io';
export const ELEVENLABS_MODEL = 'eleven_multilingual_v2';
/** The JSON of one line's answer: its audio is base64 (4/3 of the audio's size), so this is about 48 MiB of audio. */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

export type ElevenLabsVoiceOptions = ProviderVoiceOptions<ElevenLabsEntry>;

interface Alignment {
  characters: string[];
  character_start_times_seconds: number[];
  character_end_times_seconds: number[];
}

export class ElevenLabsVoice extends ProviderVoice<ElevenLabsEntry> {
  private readonly url: URL;
  private readonly format: string;

  constructor(options: ElevenLabsVoiceOptions) {
    const { entry } = options;
    const base = (entry.base_url ?? ELEVENLABS_BASE_URL).replace(/\/+$/, '');
    const format = entry.output_format ?? 'pcm_16000';
    const url = new URL(`${base}/v1/text-to-speech/${encodeURIComponent(options.voice)}/with-timestamps`);
    url.searchParams.set('output_format', format);
    super(
      options,
      url.host,
      `the voice ${options.voice} (${entry.model ?? ELEVENLABS_MODEL} at ${url.host}, ElevenLabs)`,
    );
    this.url = url;
    this.format = format;
  }

  protected async attempt(text: string, signal: AbortSignal): Promise<SpokenLine> {
    const { entry } = this.options;
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let response;
    try {
      response = await http().request(this.url, {
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
      body = (await readLimited(response.body, MAX_ANSWER_BYTES)).toString('utf8');
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
