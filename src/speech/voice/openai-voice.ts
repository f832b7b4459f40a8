// A voice of an OpenAI-compatible speech API: `POST {base_url}/audio/speech` with {model, voice, input,
// response_format, speed} and a bearer key. OpenAI itself and servers that speak its protocol (Kokoro-FastAPI,
// LocalAI, Speaches, openedai-speech). Bounds, retries, time limits and redaction are every provider's
// (provider-voice.ts); the answers are decoded whatever the format (WAV, raw PCM, MP3, OGG) by the decoders of
// intro/outro clips (clip.ts); the audio worker resamples to the stream's rate. An answer that is not audio is
// refused, never spoken. The key is sent only in the Authorization header.
import { http } from '../http';
import { sniffAudioFormat } from '../audio/audio';
import { ClipProblem, decodeClip, probeClip } from '../audio/clip';
import { ProviderFailure, retryAfterMs } from './provider-retry';
import { ProviderVoice, type ProviderVoiceOptions, TRANSIENT_STATUS, readLimited } from './provider-voice';
import type { SpokenLine } from './voice';
import type { OpenAiEntry } from './voices-file';

/** OpenAI's raw PCM: 16-bit little-endian mono at 24 kHz. */
const PCM_RATE = 24_000;
/** The longest answer taken for one line (about 20 minutes of 24 kHz 16-bit WAV). */
const MAX_AUDIO_BYTES = 64 * 1024 * 1024;
const MAX_LINE_SECONDS = 600;

export type OpenAiVoiceOptions = ProviderVoiceOptions<OpenAiEntry>;

export class OpenAiVoice extends ProviderVoice<OpenAiEntry> {
  private readonly url: string;

  constructor(options: OpenAiVoiceOptions) {
    const { entry } = options;
    // Never a user name or password a base URL may carry: its host only.
    const host = new URL(entry.base_url).host;
    super(options, host, `the voice ${options.voice} (${entry.model} at ${host}, an OpenAI-compatible speech API)`);
    this.url = `${entry.base_url.replace(/\/+$/, '')}/audio/speech`;
  }

  protected async attempt(input: string, signal: AbortSignal): Promise<SpokenLine> {
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
      response = await http().request(this.url, {
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
      bytes = await readLimited(response.body, MAX_AUDIO_BYTES, ' of audio');
    } catch (error) {
      throw this.connectionFailure(error, signal, timeout);
    }
    return decodeAnswer(bytes, type, format);
  }
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
