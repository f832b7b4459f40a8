// Messages between the synthesis pool and its worker threads.
import type { Intonation } from './pitch';

export type FliteVoice = 'kal16' | 'rms' | 'slt' | 'awb';

export interface SynthesisRequest {
  id: number;
  text: string;
  voice: FliteVoice;
  /** > 1 speaks slower, < 1 faster. */
  durationStretch?: number;
  /** Mean pitch in Hz, to tell voices further apart. */
  pitchMean?: number;
  /** Spread of the pitch in Hz (Flite's int_f0_target_stddev): more makes a livelier, less monotone voice. */
  pitchSpread?: number;
  /** Pitch the text asks for (a question's rise, a list's, a heading's lift), bent after synthesis (pitch.ts). */
  intonation?: Intonation;
  /** Also return Flite's segments (phones with their end times): for checks that every word was said. */
  segments?: boolean;
}

/** One phone as Flite placed it: its name ("pau" for silence) and its end in seconds. */
export interface Segment {
  phone: string;
  end: number;
}

/** The vowels of Flite's US English phone set, the phones a word's stress and length are read from. */
export const FLITE_VOWELS: ReadonlySet<string> = new Set([
  'aa',
  'ae',
  'ah',
  'ao',
  'aw',
  'ax',
  'axr',
  'ay',
  'eh',
  'er',
  'ey',
  'ih',
  'iy',
  'ow',
  'oy',
  'uh',
  'uw',
]);

export type SynthesisResponse =
  | { id: number; ok: true; samples: Int16Array; sampleRate: number; segments?: Segment[] }
  | { id: number; ok: false; error: string };
