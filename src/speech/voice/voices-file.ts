// Which voice reads what: the voices file (`--voices FILE`, env ARTICLE_AUDIO_VOICES), shared by `convert`, `serve`
// and `worker`. JSON keyed by model id; a model not in the file keeps its built-in voice. The API key is never in the
// file: the entry names the environment variable that holds it (`key_env`), read once when the file is read.
//
//   {"article-audio-1-pro": {"provider": "openai", "base_url": "http://127.0.0.1:8880/v1", "model": "kokoro",
//                            "voice": "af_heart", "key_env": "VOICE_API_KEY"},
//    "article-podcast-1-pro": {"provider": "openai", "base_url": "…", "model": "kokoro", "voices": ["af_heart", "am_adam"]}}
//
//   {"article-audio-1-pro": {"provider": "elevenlabs", "voice": "21m00Tcm4TlvDq8ikWAM", "key_env": "ELEVENLABS_API_KEY"}}
//
// `provider` is a discriminated union: each provider is one branch here and one LineVoice (openai-voice.ts,
// elevenlabs-voice.ts).
import { readFileSync } from 'node:fs';
import * as z from 'zod';
import { isModelId, MODEL_IDS, type ModelId } from '../../protocol';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const openAiEntry = z
  .strictObject({
    provider: z.literal('openai'),
    /** Up to the API version, e.g. https://api.openai.com/v1 or http://localhost:8880/v1: `/audio/speech` is added. */
    base_url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// address' }),
    model: z.string().min(1).max(200),
    voice: z.string().min(1).max(200).optional(),
    /** One voice per host of a podcast (the first host reads with the first). */
    voices: z.array(z.string().min(1).max(200)).min(1).max(8).optional(),
    key_env: z.string().regex(ENV_NAME, 'must be the name of an environment variable').optional(),
    response_format: z.enum(['wav', 'pcm', 'mp3', 'opus']).optional(),
    speed: z.number().min(0.25).max(4).optional(),
    /** Requests in flight at once, engine-wide, for this entry (default 4). */
    concurrency: z.number().int().min(1).max(32).optional(),
    /** Time for one request, seconds (default 60). */
    timeout_s: z.number().positive().max(600).optional(),
    /** Time a line may spend in retries before the job fails `voice_unavailable`, seconds (default 60). */
    retry_s: z.number().min(0).max(3600).optional(),
    /**
     * The most characters of article text one job may send (cost control): a longer one fails `too_long` before any
     * request. Unset: only the engine's own limit.
     */
    max_characters: z.number().int().min(1).max(10_000_000).optional(),
  })
  .refine((entry) => entry.voice !== undefined || entry.voices !== undefined, {
    message: 'needs "voice" (or "voices", one per podcast host)',
  });

/** ElevenLabs' output formats this engine decodes: raw 16-bit PCM at the rate named, or MP3. */
export const ELEVENLABS_FORMATS = [
  'pcm_16000',
  'pcm_22050',
  'pcm_24000',
  'pcm_44100',
  'mp3_22050_32',
  'mp3_44100_64',
  'mp3_44100_128',
] as const;

const elevenLabsEntry = z
  .strictObject({
    provider: z.literal('elevenlabs'),
    /** Default https://api.elevenlabs.io: `/v1/text-to-speech/{voice}/with-timestamps` is added. */
    base_url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// address' }).optional(),
    /** The model_id (default eleven_multilingual_v2). */
    model: z.string().min(1).max(200).optional(),
    /** A voice id (ElevenLabs' voices are named by id, e.g. 21m00Tcm4TlvDq8ikWAM). */
    voice: z.string().min(1).max(200).optional(),
    voices: z.array(z.string().min(1).max(200)).min(1).max(8).optional(),
    key_env: z.string().regex(ENV_NAME, 'must be the name of an environment variable').optional(),
    output_format: z.enum(ELEVENLABS_FORMATS).optional(),
    concurrency: z.number().int().min(1).max(32).optional(),
    timeout_s: z.number().positive().max(600).optional(),
    retry_s: z.number().min(0).max(3600).optional(),
    max_characters: z.number().int().min(1).max(10_000_000).optional(),
  })
  .refine((entry) => entry.voice !== undefined || entry.voices !== undefined, {
    message: 'needs "voice" (a voice id, or "voices", one per podcast host)',
  });

const entrySchema = z.discriminatedUnion('provider', [openAiEntry, elevenLabsEntry], {
  error: 'provider must be "openai" (an OpenAI-compatible speech API) or "elevenlabs"',
});

export type VoiceEntry = z.infer<typeof entrySchema>;

/** A voices file's entry with its key read from the environment (never printed), and the file it came from. */
export type ResolvedVoiceEntry = VoiceEntry & { key?: string; file?: string };
export type OpenAiEntry = Extract<ResolvedVoiceEntry, { provider: 'openai' }>;
export type ElevenLabsEntry = Extract<ResolvedVoiceEntry, { provider: 'elevenlabs' }>;

export type VoicesConfig = Partial<Record<ModelId, ResolvedVoiceEntry>>;

/** The voices file cannot be used: the message names the file and the field. */
export class VoicesFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VoicesFileError';
  }
}

function fieldOf(path: readonly PropertyKey[]): string {
  return (
    path
      .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
      .join('')
      .replace(/^\./, '') || '(file)'
  );
}

/** Reads and checks a voices file; keys come from the environment variables it names. */
export function readVoicesFile(file: string, env: NodeJS.ProcessEnv): VoicesConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new VoicesFileError(`Cannot read the voices file ${file}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new VoicesFileError(`The voices file ${file} is not JSON: ${(error as Error).message}`);
  }
  return parseVoices(json, file, env);
}

export function parseVoices(json: unknown, file: string, env: NodeJS.ProcessEnv): VoicesConfig {
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new VoicesFileError(
      `The voices file ${file} must be a JSON object keyed by model id (${MODEL_IDS.join(', ')}).`,
    );
  const config: VoicesConfig = {};
  for (const [modelId, value] of Object.entries(json)) {
    if (!isModelId(modelId))
      throw new VoicesFileError(
        `The voices file ${file}: "${modelId.slice(0, 80)}" is not a model; use ${MODEL_IDS.join(', ')}.`,
      );
    const parsed = entrySchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new VoicesFileError(`The voices file ${file}: ${fieldOf([modelId, ...issue.path])}: ${issue.message}`);
    }
    const entry: ResolvedVoiceEntry = { ...parsed.data, file };
    if (entry.key_env !== undefined) {
      const key = env[entry.key_env]?.trim();
      if (!key)
        throw new VoicesFileError(
          `The voices file ${file}: ${modelId}.key_env: the environment variable ${entry.key_env} is not set (it holds the provider's API key).`,
        );
      entry.key = key;
    }
    config[modelId] = entry;
  }
  return config;
}
