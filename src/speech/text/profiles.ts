// The models as they are read aloud: each model's voices, pauses and encoding (MODEL_PROFILES), and the line of a
// script (ScriptLine), the unit every later stage works on: synthesis, pauses, parts, transcript and chapters.
import type { EngineModelId } from '../types';
import type { FliteVoice } from '../voice/synth-protocol';

export interface Voice {
  name: string;
  flite: FliteVoice;
  durationStretch?: number;
  /** Pitch spread in Hz (Flite's default for slt is about 20): wider is less monotone. */
  pitchSpread?: number;
  /** Questions, lists and headings get the intonation their text asks for (pitch.ts), bent after synthesis. */
  intonation?: boolean;
}

export interface ModelProfile {
  voices: Voice[];
  /** Pause after a sentence, a paragraph, a list item, before and after a heading (seconds). */
  sentencePause: number;
  paragraphPause: number;
  listItemPause: number;
  headingPauseBefore: number;
  headingPauseAfter: number;
  /** Whether section headings are announced with their number ("Section 2: …"). */
  numberSections: boolean;
  podcast: boolean;
  /** MP3 bitrate, bits per second. */
  bitrate: number;
  /** LAME's quality setting (lame.ts): 3 is LAME's default; 7 halves the encoding CPU but needs more bits. */
  lameQuality: number;
}

export const MODEL_PROFILES: Record<EngineModelId, ModelProfile> = {
  // The fastest clear voice, read straight through. kal16 is quick: at stretch 1.13 with 0.35 s between sentences and
  // 0.7 s between paragraphs it read prose at 187 words a minute. Listeners want about 165-175 with a reader's pauses
  // (about 0.4-0.7 s after a sentence, 0.8-1.2 s after a paragraph), so most of the time goes into pauses and a little
  // into the stretch: prose 172 wpm, technical 153, numeric 154 (their spelled letters and number words are slower
  // per word; one setting cannot put all three in range). Against a slower stretch alone (1.22, same prose pace) this
  // measured closer to the raw voice in word error: +0.6 points pooled over the three texts against +2.2, and the
  // old setting +2.9 (bench/listening.ts; BENCHMARKS.md, "fourth round"). Its 48 kbps at LAME quality 7 encodes for
  // half the CPU of quality 3 and measured the same word error as quality 3 at 32 kbps (22.7 % against 22.4 %, 842
  // words of medium.md, the same speech; quality 7 at 32 kbps: 32.1 %; BENCHMARKS.md, "Issue 14, third round").
  'article-audio-1-mini': {
    // No intonation: kal16's diphones give PSOLA unsteady pitch marks (three questions measured +9.7, -0.8 and -1.2
    // semitones at the end), so Mini is said as Flite says it.
    voices: [{ name: 'Narrator', flite: 'kal16', durationStretch: 1.16 }],
    sentencePause: 0.65,
    paragraphPause: 1.15,
    listItemPause: 0.5,
    // After a paragraph's 1.15 s: about 1.75 s of silence before a heading, near Pro's 1.6 s.
    headingPauseBefore: 0.6,
    headingPauseAfter: 0.6,
    numberSections: false,
    podcast: false,
    bitrate: 48_000,
    lameQuality: 7,
  },
  // The most intelligible voice (lowest word error rate measured), with room to breathe and numbered sections.
  'article-audio-1-pro': {
    // Questions, lists and headings get their intonation (pitch.ts): a yes/no question measured ending 4-5 semitones
    // above the line instead of 2-3 below it.
    voices: [{ name: 'Narrator', flite: 'rms', intonation: true }],
    sentencePause: 0.25,
    paragraphPause: 0.6,
    listItemPause: 0.35,
    headingPauseBefore: 1.0,
    headingPauseAfter: 0.6,
    numberSections: true,
    podcast: false,
    bitrate: 48_000,
    lameQuality: 3,
  },
  // Two clearly different voices (a male and a female one) sharing the article as a show.
  'article-podcast-1-pro': {
    voices: [
      { name: 'Alex', flite: 'rms', intonation: true },
      // slt is monotone by default (1.7 semitones of pitch variation against rms's 2.2); a wider spread measures 2.4.
      { name: 'Sam', flite: 'slt', pitchSpread: 45, intonation: true },
    ],
    sentencePause: 0.25,
    paragraphPause: 0.55,
    listItemPause: 0.35,
    headingPauseBefore: 0.8,
    headingPauseAfter: 0.5,
    numberSections: false,
    podcast: true,
    bitrate: 48_000,
    lameQuality: 3,
  },
};

export interface ScriptLine {
  /** As written (the transcript cue). */
  written: string;
  /** What the synthesizer says. */
  spoken: string;
  voice: number;
  pauseBefore: number;
  pauseAfter: number;
  /** The line opens a chapter with this title (a heading, or the article's start). */
  chapter?: { title: string; level: number };
  /** The line opens the k-th section (for progress messages). */
  section?: number;
  /** The line starts a paragraph of the text as written (the transcript marks it; the player starts a new one). */
  paragraph?: boolean;
  /** The line is a heading (or the title): said a little higher when the voice has intonation. */
  heading?: boolean;
  /**
   * The line ends an item of a list of two or more: "middle" before the last item (it ends level or a little
   * higher, not with a statement's fall), "last" on the last one (it falls). The item's earlier sentences are plain.
   */
  listItem?: 'middle' | 'last';
  /** The podcast line this was made from (a greeting, a hand-over), so an episode can use each at most twice. */
  template?: string;
}
