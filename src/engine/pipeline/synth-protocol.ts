// Messages between the synthesis pool and its worker threads.

export type FliteVoice = 'kal16' | 'rms' | 'slt' | 'awb';

export interface SynthesisRequest {
  id: number;
  text: string;
  voice: FliteVoice;
  /** > 1 speaks slower, < 1 faster. */
  durationStretch?: number;
  /** Mean pitch in Hz, to tell voices further apart. */
  pitchMean?: number;
}

export type SynthesisResponse =
  | { id: number; ok: true; samples: Int16Array; sampleRate: number }
  | { id: number; ok: false; error: string };
