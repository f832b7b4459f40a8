// The built-in voices behind the voice contract: one of the model's Flite voices, synthesized in the shared pool.
import { intonationOf } from '../text/intonation';
import type { Voice } from '../text/profiles';
import type { SynthesisPool } from './synth-pool';
import type { LineToSpeak, LineVoice, SpokenLine } from './voice';

export class FliteVoice implements LineVoice {
  readonly provider = false;
  readonly description: string;

  constructor(
    private readonly pool: SynthesisPool,
    private readonly voice: Voice,
  ) {
    this.description = `the built-in voice ${voice.flite} (Flite)`;
  }

  get window(): number {
    return this.pool.size * 3;
  }

  speak(line: LineToSpeak, signal: AbortSignal): Promise<SpokenLine> {
    const { voice } = this;
    return this.pool.synthesize(line.text, voice.flite, {
      firstPart: Boolean(line.firstPart),
      durationStretch: voice.durationStretch,
      pitchSpread: voice.pitchSpread,
      words: true,
      // What the text asks for is read here, on the main thread; the worker bends the audio (pitch.ts).
      intonation: voice.intonation
        ? intonationOf(line.text, { heading: line.heading, listItem: line.listItem })
        : undefined,
      signal,
    });
  }
}
