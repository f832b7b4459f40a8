// What every speech provider's voice shares (openai-voice.ts, elevenlabs-voice.ts): its requests bounded per entry of
// the voices file (engine-wide), tried again by provider-retry.ts, timed out, read up to a size; a failure that does
// not pass ends the job `voice_unavailable` with the provider's reason, the key redacted. A provider is one subclass
// that makes one request (`attempt`) and turns its answer into a line's audio.
import type { ModelId } from '../../protocol';
import { PipelineError } from '../types';
import { PROVIDER_RETRY, ProviderFailure, type ProviderRetryPolicy, withProviderRetry } from './provider-retry';
import type { LineToSpeak, LineVoice, SpokenLine } from './voice';

/** Statuses worth another try: a timeout, too early, too many requests, the server's own trouble. */
export const TRANSIENT_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);
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

/** The fields of a voices-file entry every provider has (voices-file.ts). */
interface ProviderEntry {
  key?: string;
  file?: string;
  concurrency?: number;
  timeout_s?: number;
  retry_s?: number;
  max_characters?: number;
}

export interface ProviderVoiceOptions<Entry extends ProviderEntry> {
  entry: Entry;
  /** Which of the entry's voices (a podcast host's). */
  voice: string;
  /** The model whose lines it reads, for the advice of a failure. */
  modelId: ModelId;
  /** Shared by the voices of one entry: the entry's concurrency is engine-wide. */
  limit?: Limit;
  policy?: ProviderRetryPolicy;
  log?: (message: string) => void;
}

export abstract class ProviderVoice<Entry extends ProviderEntry> implements LineVoice {
  readonly provider = true;
  readonly window: number;
  readonly maxCharacters?: number;
  readonly capSource?: string;
  protected readonly timeoutMs: number;
  private readonly limit: Limit;
  private readonly policy: ProviderRetryPolicy;

  /** `host` is the provider's host and port (never a user name or password); `description` says who reads. */
  constructor(
    protected readonly options: ProviderVoiceOptions<Entry>,
    protected readonly host: string,
    readonly description: string,
  ) {
    const { entry } = options;
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

  /** One request for one line's text: its audio, or a ProviderFailure saying whether another try may pass. */
  protected abstract attempt(text: string, signal: AbortSignal): Promise<SpokenLine>;

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
  protected redact(text: string): string {
    let out = text;
    const { key } = this.options.entry;
    if (key) out = out.split(key).join('[redacted]');
    out = out.replace(/(bearer\s+)\S+/gi, '$1[redacted]').replace(/\p{Cc}+/gu, ' ');
    return out.length > 300 ? `${out.slice(0, 300)}…` : out;
  }

  /** A request that failed below HTTP: a timeout or a dropped or refused connection passes, other errors do not. */
  protected connectionFailure(error: unknown, signal: AbortSignal, timeout: AbortSignal): unknown {
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

/** An answer's body, refused past `max` bytes (`what`: what the bytes are, for the message, e.g. " of audio"). */
export async function readLimited(body: AsyncIterable<Uint8Array>, max: number, what = ''): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of body) {
    length += chunk.length;
    if (length > max) throw new ProviderFailure(`sent more than ${max / 1024 / 1024} MiB${what} for one line`, false);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, length);
}
