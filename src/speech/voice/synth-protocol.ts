// Messages between the synthesis pool and its worker threads.
import type { Segment } from './phones';

export type { Segment } from './phones';
import type { Intonation } from '../text/intonation';
import type { WordTiming } from './voice';

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
  /** Also return the line's word timings (word-times.ts): each whitespace token with a letter or digit. */
  words?: boolean;
}

export type SynthesisResponse =
  | { id: number; ok: true; samples: Int16Array; sampleRate: number; segments?: Segment[]; words?: WordTiming[] }
  | { id: number; ok: false; error: string };
