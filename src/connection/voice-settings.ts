// A speech provider for the local engine (issue 25): the `articleAudio.voice.*` settings turned into the engine's
// voices file (src/speech/voice/voices-file.ts, the contract the CLI, `serve` and `worker` share). The key is never in
// the file nor on a command line: the file names an environment variable (`key_env`) and the engine's environment
// carries the key, read from SecretStorage (ApiKeyStore, keyed by the provider's origin).
import * as vscode from 'vscode';
import { isModelId, type ModelId } from '../protocol';
import { SECTION } from '../config';

/** The environment variable of the engine's process that holds the provider key. */
export const VOICE_KEY_ENV = 'ARTICLE_AUDIO_VOICE_KEY';

export type ProviderKind = 'builtin' | 'openai' | 'elevenlabs';

export interface VoiceSettings {
  provider: ProviderKind;
  /** OpenAI: up to the API version (https://api.openai.com/v1); ElevenLabs: https://api.elevenlabs.io. */
  baseUrl: string;
  model: string;
  voice: string;
  /** One voice per podcast host. */
  podcastVoices: string[];
  /** The models the provider reads (the others keep the built-in voices). */
  models: ModelId[];
  /** The most characters of article text one job may send the provider (0: no cap beyond the service's). */
  maxCharacters: number;
}

/** What an empty setting means, per provider. */
export const PROVIDER_DEFAULTS: Record<
  Exclude<ProviderKind, 'builtin'>,
  Pick<VoiceSettings, 'baseUrl' | 'model' | 'voice' | 'podcastVoices'>
> = {
  openai: {
    baseUrl: 'https://api.openai.com/v1',
    model: 'gpt-4o-mini-tts',
    voice: 'alloy',
    podcastVoices: ['alloy', 'onyx'],
  },
  elevenlabs: {
    baseUrl: 'https://api.elevenlabs.io',
    model: 'eleven_multilingual_v2',
    // ElevenLabs' premade voices "Rachel" and "Adam", named by id as its API wants.
    voice: '21m00Tcm4TlvDq8ikWAM',
    podcastVoices: ['21m00Tcm4TlvDq8ikWAM', 'pNInz6obpgDQGcFmaJgB'],
  },
};

const DEFAULT_MODELS: ModelId[] = ['article-audio-1-pro', 'article-podcast-1-pro'];
const DEFAULT_MAX_CHARACTERS = 50_000;

export function readVoiceSettings(): VoiceSettings {
  const config = vscode.workspace.getConfiguration(`${SECTION}.voice`);
  const chosen = config.get<unknown>('provider');
  const provider: ProviderKind = chosen === 'openai' || chosen === 'elevenlabs' ? chosen : 'builtin';
  const defaults = PROVIDER_DEFAULTS[provider === 'builtin' ? 'openai' : provider];
  const text = (name: string, fallback: string) => {
    const value = config.get<unknown>(name);
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : fallback;
  };
  const podcast = config.get<unknown>('podcastVoices');
  const podcastVoices = Array.isArray(podcast)
    ? podcast
        .filter((v): v is string => typeof v === 'string' && v.trim() !== '')
        .map((v) => v.trim())
        .slice(0, 8)
    : [];
  const models = config.get<unknown>('models');
  const cap = config.get<unknown>('maxCharacters');
  return {
    provider,
    baseUrl: text('baseUrl', defaults.baseUrl).replace(/\/+$/, ''),
    model: text('model', defaults.model),
    voice: text('voice', defaults.voice),
    podcastVoices: podcastVoices.length > 0 ? podcastVoices : defaults.podcastVoices,
    models: Array.isArray(models) ? [...new Set(models.filter(isModelId))] : DEFAULT_MODELS,
    maxCharacters: typeof cap === 'number' && Number.isInteger(cap) && cap >= 0 ? cap : DEFAULT_MAX_CHARACTERS,
  };
}

/** Whether a setting that shapes the voices file changed. */
export function affectsVoices(event: vscode.ConfigurationChangeEvent): boolean {
  return event.affectsConfiguration(`${SECTION}.voice`);
}

/** Whether a job of this model would be read by the provider (the text leaves this machine). */
export function providerReads(settings: VoiceSettings, model: ModelId): boolean {
  return settings.provider !== 'builtin' && settings.models.includes(model);
}

/** Where the text goes, for the notice and the log: the provider's host (and port), never a path or a user name. */
export function providerHost(settings: VoiceSettings): string {
  try {
    return new URL(settings.baseUrl).host;
  } catch {
    return 'the speech provider';
  }
}

/** The voices file for these settings (JSON, keyed by model id), or undefined when every model keeps its built-in voice. */
export function voicesFileFor(settings: VoiceSettings, hasKey: boolean): Record<string, unknown> | undefined {
  if (settings.provider === 'builtin' || settings.models.length === 0) return undefined;
  const common = {
    provider: settings.provider,
    base_url: settings.baseUrl,
    model: settings.model,
    ...(hasKey ? { key_env: VOICE_KEY_ENV } : {}),
    ...(settings.maxCharacters > 0 ? { max_characters: settings.maxCharacters } : {}),
  };
  return Object.fromEntries(
    settings.models.map((model) => [
      model,
      model === 'article-podcast-1-pro'
        ? { ...common, voices: settings.podcastVoices }
        : { ...common, voice: settings.voice },
    ]),
  );
}
