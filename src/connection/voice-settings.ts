// A speech provider for the local engine (issue 25): the `articleAudio.voice.*` settings turned into the engine's
// voices file (src/speech/voice/voices-file.ts, the contract the CLI, `serve` and `worker` share). The key is never in
// the file nor on a command line: the file names an environment variable (`key_env`) and the engine's environment
// carries the key, read from SecretStorage (ApiKeyStore, keyed by the provider's origin).
import * as vscode from 'vscode';
import { isModelId, type ModelId } from '../protocol';
import { SECTION } from '../config';

/** The environment variable of the engine's process that holds the provider key. */
export const VOICE_KEY_ENV = 'ARTICLE_AUDIO_VOICE_KEY';

export interface VoiceSettings {
  provider: 'builtin' | 'openai';
  /** Up to the API version, e.g. https://api.openai.com/v1. */
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

export const VOICE_DEFAULTS: VoiceSettings = {
  provider: 'builtin',
  baseUrl: 'https://api.openai.com/v1',
  model: 'gpt-4o-mini-tts',
  voice: 'alloy',
  podcastVoices: ['alloy', 'onyx'],
  models: ['article-audio-1-pro', 'article-podcast-1-pro'],
  maxCharacters: 50_000,
};

export function readVoiceSettings(): VoiceSettings {
  const config = vscode.workspace.getConfiguration(`${SECTION}.voice`);
  const text = (name: string, fallback: string) => {
    const value = config.get<unknown>(name);
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : fallback;
  };
  const podcast = config.get<unknown>('podcastVoices');
  const models = config.get<unknown>('models');
  const cap = config.get<unknown>('maxCharacters');
  return {
    provider: config.get<unknown>('provider') === 'openai' ? 'openai' : 'builtin',
    baseUrl: text('baseUrl', VOICE_DEFAULTS.baseUrl).replace(/\/+$/, ''),
    model: text('model', VOICE_DEFAULTS.model),
    voice: text('voice', VOICE_DEFAULTS.voice),
    podcastVoices:
      Array.isArray(podcast) && podcast.some((v) => typeof v === 'string' && v.trim() !== '')
        ? podcast
            .filter((v): v is string => typeof v === 'string' && v.trim() !== '')
            .map((v) => v.trim())
            .slice(0, 8)
        : VOICE_DEFAULTS.podcastVoices,
    models: Array.isArray(models) ? [...new Set(models.filter(isModelId))] : VOICE_DEFAULTS.models,
    maxCharacters: typeof cap === 'number' && Number.isInteger(cap) && cap >= 0 ? cap : VOICE_DEFAULTS.maxCharacters,
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
    provider: 'openai',
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
