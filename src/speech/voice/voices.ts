// Which LineVoice reads each voice of a model: the voices file's provider where it names the model, else the
// model's built-in Flite voice. Provider voices are made once per engine, so an entry's concurrency bounds every
// job together.
import type { ModelId } from '../../protocol';
import type { Voice } from '../text/profiles';
import { FliteVoice } from './flite-voice';
import { ElevenLabsVoice } from './elevenlabs-voice';
import { OpenAiVoice } from './openai-voice';
import { Limit } from './provider-voice';
import type { SynthesisPool } from './synth-pool';
import type { LineVoice } from './voice';
import type { VoicesConfig } from './voices-file';

export class VoiceChoice {
  private readonly providers = new Map<ModelId, LineVoice[]>();

  constructor(
    private readonly pool: SynthesisPool,
    config: VoicesConfig = {},
  ) {
    for (const [modelId, entry] of Object.entries(config) as [ModelId, NonNullable<VoicesConfig[ModelId]>][]) {
      const limit = new Limit(entry.concurrency ?? 4);
      const names = entry.voices ?? [entry.voice!];
      this.providers.set(
        modelId,
        names.map((voice) =>
          entry.provider === 'elevenlabs'
            ? new ElevenLabsVoice({ entry, voice, modelId, limit })
            : new OpenAiVoice({ entry, voice, modelId, limit }),
        ),
      );
    }
  }

  /** The voices of a model's profile, in order (a podcast's hosts); a host beyond the file's list gets its last voice. */
  voicesFor(modelId: ModelId, profile: readonly Voice[]): LineVoice[] {
    const provided = this.providers.get(modelId);
    return profile.map((voice, i) =>
      provided ? provided[Math.min(i, provided.length - 1)]! : new FliteVoice(this.pool, voice),
    );
  }
}
