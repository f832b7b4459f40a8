// A voice of an OpenAI-compatible speech API: `POST {base_url}/audio/speech` with {model, voice, input,
// response_format, speed} and a bearer key. OpenAI itself and servers that speak its protocol (Kokoro-FastAPI,
// LocalAI, Speaches, openedai-speech). Requests are bounded per entry of the voices file (engine-wide), tried again
// by provider-retry.ts, timed out, and their answers decoded whatever the format (WAV, raw PCM, MP3, OGG) by the
// decoders of intro/outro clips (clip.ts); the audio worker resamples to the stream's rate. An answer that is not
// audio is refused, never spoken. The key is sent only in the Authorization header and redacted from every reason.
import { request } from 'undici';
import type { ModelId } from '../../protocol';
import { sniffAudioFormat } from '../audio/audio';
import { ClipProblem, decodeClip, probeClip } from '../audio/clip';
import { PipelineError } from '../types';
import {
  PROVIDER_RETRY,
  ProviderFailure,
  type ProviderRetryPolicy,
  retryAfterMs,
  withProviderRetry,
} from './provider-retry';
import type { LineToSpeak, LineVoice, SpokenLine } from './voice';
import type { OpenAiEntry } from './voices-file';

/** OpenAI's raw PCM: 16-bit little-endian mono at 24 kHz. */
const PCM_RATE = 24_000;
/** The longest answer taken for one line (about 20 minutes of 24 kHz 16-bit WAV). */
const MAX_AUDIO_BYTES = 64 * 1024 * 1024;
const MAX_LINE_SECONDS = 600;
const TRANSIENT_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);
const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** Requests in flight at once, first come first served (so a job's first lines go first). */
export class Limit {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly size: number) {}

  async run<T>(signal: AbortSignal, call: () => Promise<T>): Promise<T> {
    if (this.active >= this.size) {
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          const index = this.waiting.indexOf(go);
          if (index >= 0) this.waiting.splice(index, 1);
          reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        this.waiting.push(go);
      });
    }
    this.active++;
    try {
      return await call();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

export interface OpenAiVoiceOptions {
  entry: OpenAiEntry;
  /** Which of the entry's voices (a podcast host's index). */
  voice: string;
  /** The model whose lines it reads, for the advice of a failure. */
  modelId: ModelId;
  /** Shared by the voices of one entry: the entry's concurrency is engine-wide. */
  limit?: Limit;
  policy?: ProviderRetryPolicy;
  log?: (message: string) => void;
}

export class OpenAiVoice implements LineVoice {
  readonly provider = true;
  readonly description: string;
  readonly window: number;
  readonly maxCharacters?: number;
  readonly capSource?: string;
  private readonly url: string;
  private readonly host: string;
  private readonly limit: Limit;
  private readonly policy: ProviderRetryPolicy;
  private readonly timeoutMs: number;

  static limitFor(entry: { concurrency?: number }): Limit {
    return new Limit(entry.concurrency ?? 4);
  }

  constructor(private readonly options: OpenAiVoiceOptions) {
    const { entry } = options;
    const base = new URL(entry.base_url);
    this.url = `${entry.base_url.replace(/\/+$/, '')}/audio/speech`;
    // Never a user name or password a base URL may carry.
    this.host = base.host;
    this.description = `the voice ${options.voice} (${entry.model} at ${this.host}, an OpenAI-compatible speech API)`;
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

  /** The key, a bearer token and anything a terminal would act on out of a reason that may quote the provider. */
  private redact(text: string): string {
    let out = text;
    const { key } = this.options.entry;
    if (key) out = out.split(key).join('[redacted]');
    out = out.replace(/(bearer\s+)\S+/gi, '$1[redacted]').replace(/\p{Cc}+/gu, ' ');
    return out.length > 300 ? `${out.slice(0, 300)}…` : out;
  }

  private async attempt(input: string, signal: AbortSignal): Promise<SpokenLine> {
    const { entry } = this.options;
    const format = entry.response_format ?? 'wav';
    const body = JSON.stringify({
      model: entry.model,
      voice: this.options.voice,
      input,
      response_format: format,
      ...(entry.speed !== undefined ? { speed: entry.speed } : {}),
    });
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let response;
    try {
      response = await request(this.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'audio/*',
          ...(entry.key ? { authorization: `Bearer ${entry.key}` } : {}),
        },
        body,
        signal: AbortSignal.any([signal, timeout]),
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
    } catch (error) {
      throw this.connectionFailure(error, signal, timeout);
    }
    const type = String(response.headers['content-type'] ?? '').toLowerCase();
    if (response.statusCode < 200 || response.statusCode >= 300) {
      const text = await response.body.text().catch(() => '');
      const reason = text.replace(/\s+/g, ' ').trim().slice(0, 200);
      throw new ProviderFailure(
        `answered HTTP ${response.statusCode}${reason ? `: ${reason}` : ''}`,
        TRANSIENT_STATUS.has(response.statusCode),
        retryAfterMs(response.headers['retry-after']),
      );
    }
    let bytes: Uint8Array;
    try {
      bytes = await readLimited(response.body, MAX_AUDIO_BYTES);
    } catch (error) {
      throw this.connectionFailure(error, signal, timeout);
    }
    return decodeAnswer(bytes, type, format);
  }

  private connectionFailure(error: unknown, signal: AbortSignal, timeout: AbortSignal): unknown {
    if (signal.aborted) return error;
    if (timeout.aborted) return new ProviderFailure(`did not answer within ${this.timeoutMs / 1000} s`, true);
    if (error instanceof ProviderFailure) return error;
    const code = (error as { code?: unknown }).code;
    const transient = typeof code === 'string' && TRANSIENT_CODES.has(code);
    return new ProviderFailure(
      `could not be reached (${typeof code === 'string' ? code : (error as Error).message})`,
      transient || !(typeof code === 'string'),
    );
  }
}

async function readLimited(body: AsyncIterable<Uint8Array>, max: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of body) {
    length += chunk.length;
    if (length > max) throw new ProviderFailure(`sent more than ${max / 1024 / 1024} MiB of audio for one line`, false);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, length);
}

/** The answer's audio, or a refusal when it is not audio (a login page, a JSON error sent with 200). */
export async function decodeAnswer(bytes: Uint8Array, contentType: string, format: string): Promise<SpokenLine> {
  const sniffed = sniffAudioFormat(bytes);
  const textual = /^(text\/|application\/(json|xml|xhtml))/.test(contentType);
  if (sniffed && !textual) {
    try {
      const info = probeClip(bytes);
      // Decoded at its own rate (no resampling here): the audio worker resamples each line to the stream's rate.
      const samples = await decodeClip(bytes, info.sampleRate, { maxSeconds: MAX_LINE_SECONDS });
      return { samples, sampleRate: info.sampleRate };
    } catch (error) {
      const why = error instanceof ClipProblem ? error.message : (error as Error).message;
      throw new ProviderFailure(`sent audio that cannot be decoded (${why})`, false);
    }
  }
  const pcm =
    !textual && (contentType.startsWith('audio/pcm') || contentType.startsWith('audio/l16') || format === 'pcm');
  if (pcm && bytes.length >= 2 && !looksLikeText(bytes)) {
    const samples = new Int16Array(Math.floor(bytes.length / 2));
    const view = new DataView(bytes.buffer, bytes.byteOffset, samples.length * 2);
    for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(i * 2, true);
    return { samples, sampleRate: PCM_RATE };
  }
  throw new ProviderFailure(
    `answered with ${contentType || 'no content type'}${looksLikeText(bytes) ? ` ("${new TextDecoder().decode(bytes.subarray(0, 60)).replace(/\s+/g, ' ').trim()}…")` : ''}, not audio; nothing of it was spoken`,
    false,
  );
}

function looksLikeText(bytes: Uint8Array): boolean {
  const head = bytes.subarray(0, 64);
  return head.length > 0 && head.every((b) => b === 9 || b === 10 || b === 13 || (b >= 32 && b < 127));
}
