// The voice contract: a line of text in, its audio (and word timings where the voice has them) out. Everything after
// it (pauses, levelling, resampling to the stream's rate, MP3, parts, transcript, chapters, ID3) is the same whichever
// voice spoke. The built-in Flite voices are one implementation (flite-voice.ts); a speech service that speaks
// OpenAI's protocol is another (openai-voice.ts). A new provider (ElevenLabs, issue 25 item 3) is one more class
// behind `LineVoice`, built by `voicesFor` (voices-file.ts) from its entry in the voices file.
import type { Intonation } from '../text/intonation';

/** A line as the pipeline asks for it: the spoken form, and what a voice that bends pitch needs to know. */
export interface LineToSpeak {
  /** The spoken form (ScriptLine.spoken). */
  text: string;
  heading?: boolean;
  listItem?: 'middle' | 'last';
  /** A line the job's first part waits for (the built-in voices synthesize it at normal priority). */
  firstPart?: boolean;
  /** The job's log, for what a provider voice has to say about this line (a retry and its reason). */
  log?: (message: string) => void;
}

export interface WordTiming {
  word: string;
  /** Seconds from the start of the line's audio. */
  start: number;
  end: number;
}

/** A line's audio: mono samples at their own rate (the audio worker resamples to the stream's). */
export interface SpokenLine {
  samples: Int16Array | Float32Array;
  sampleRate: number;
  /** Word timings, when the voice gives them. */
  words?: WordTiming[];
}

export interface LineVoice {
  /** Who reads, for the job's log: "the built-in voice rms (Flite)", "af_heart (kokoro at host:8880)". */
  readonly description: string;
  /** Lines the pipeline keeps in flight for this voice (the voice may bound its own concurrency further). */
  readonly window: number;
  /** Whether the voice is a remote provider (its failures end the job as `voice_unavailable`). */
  readonly provider: boolean;
  /**
   * The most characters of text a job may send this voice (a provider's `max_characters`, issue 25): a longer article
   * is refused before any line is asked for. `capSource` says where the cap was set, for the job's failure.
   */
  readonly maxCharacters?: number;
  readonly capSource?: string;
  speak(line: LineToSpeak, signal: AbortSignal): Promise<SpokenLine>;
}

/** Float samples in [-1, 1] as 16-bit integers (what the audio worker takes); integers pass through. */
export function toInt16(samples: Int16Array | Float32Array): Int16Array {
  if (samples instanceof Int16Array) return samples;
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const s = Math.max(-1, Math.min(1, samples[i]!));
    out[i] = Math.round(s < 0 ? s * 0x8000 : s * 0x7fff);
  }
  return out;
}

export type { Intonation };
