// Whether Flite said the last word of a line, read from Flite's own segments (its phones and their end times)
// rather than from the line's length: a line is not always longer than itself without its last word (the final
// lengthening moves to the word before: "… V P N." is only 50 ms longer than "… V P."), and a line ending in
// punctuation has no word to lose there. Used by test/unit/pipeline/whole-lines.test.ts and bench/listening.ts.
import type { SynthesisPool } from '../../src/speech/voice/synth-pool';
import { FLITE_VOWELS as VOWELS, type Segment } from '../../src/speech/voice/phones';
import type { FliteVoice } from '../../src/speech/voice/synth-protocol';

const GLIDES = new Set(['y', 'w']);
/**
 * A word whose longest vowel (with a glide before it: the "y" of "mute") is shorter than this was swallowed, not said ("rule." gave its only vowel 29 ms, "L." 38
 * ms; with the period apart, 177 and 152 ms). Most words said in full have a main vowel of 80 ms or more; schwas and
 * other unstressed vowels are often 20 to 40 ms and are not held to it ("storage": "ao" 45 ms then "r" 118 ms).
 */
export const MIN_VOWEL_S = 0.04;
/** A main vowel at least this share of its length in the word said alone is not swallowed either ("marks"). */
const ALONE_SHARE = 0.8;

export interface LastWord {
  /** The last word of the line (the last token with a letter or digit), without punctuation. */
  word: string;
  said: boolean;
  /** The word's phones as Flite says it alone, and the end of the line as Flite said it, with durations. */
  detail: string;
}

function spoken(segments: Segment[]): { phone: string; duration: number }[] {
  const out = segments.map((s, i) => ({ phone: s.phone, duration: s.end - (segments[i - 1]?.end ?? 0) }));
  return out.filter((s) => s.phone !== 'pau');
}

/**
 * Whether a line's segments end with a word's phones (as Flite says the word alone), its main vowel not swallowed.
 */
export function endsWithWord(lineSegments: Segment[], wordSegments: Segment[]): { said: boolean; detail: string } {
  const wordPhones = spoken(wordSegments);
  const end = spoken(lineSegments).slice(-wordPhones.length);
  // Phones as Flite says the word alone, a vowel allowed to be reduced in the line ("convert": k aa n … / k ax n …).
  // The word's main vowel (its longest) must be said, not swallowed; a final schwa is short by nature ("items").
  // A glide before the vowel belongs to its nucleus: "mute" is m y uw t, /juː/, and after a comma pause rms gives
  // "y" 86 ms and "uw" 39 ms ("M: does, mute."); the recogniser hears "mute" there all the same.
  const nuclei = (phones: { phone: string; duration: number }[]) =>
    phones.flatMap((s, i) =>
      VOWELS.has(s.phone)
        ? [s.duration + (i > 0 && GLIDES.has(phones[i - 1]!.phone) ? phones[i - 1]!.duration : 0)]
        : [],
    );
  const vowels = nuclei(end);
  const longest = Math.max(0, ...vowels);
  // Some words have a short main vowel even alone: rms says "marks" and "hard" with "aa" 34 ms and the length in the
  // "r" after it, in a line or alone, and pocketsphinx hears them. A vowel as long as in the word alone is not
  // swallowed.
  const alone = Math.max(0, ...nuclei(wordPhones));
  const said =
    wordPhones.length > 0 &&
    end.length === wordPhones.length &&
    end.every(
      (s, i) => s.phone === wordPhones[i]!.phone || (VOWELS.has(s.phone) && VOWELS.has(wordPhones[i]!.phone)),
    ) &&
    (vowels.length === 0 || longest >= MIN_VOWEL_S || longest >= ALONE_SHARE * alone);
  return {
    said,
    detail: `${wordPhones.map((s) => s.phone).join(' ')} | line ends ${end.map((s) => `${s.phone} ${(s.duration * 1000).toFixed(0)} ms`).join(', ')}`,
  };
}

/** The line's last word, and whether Flite said it (endsWithWord). Undefined for a line of fewer than two words. */
export async function lastWordSaid(
  pool: SynthesisPool,
  line: string,
  voice: FliteVoice,
): Promise<LastWord | undefined> {
  const words = line.split(/\s+/).filter((token) => /[\p{L}\p{N}]/u.test(token));
  if (words.length < 2) return undefined;
  const word = words.at(-1)!.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
  const [full, alone] = await Promise.all([
    pool.synthesize(line, voice, { segments: true }),
    pool.synthesize(word, voice, { segments: true }),
  ]);
  const { said, detail } = endsWithWord(full.segments ?? [], alone.segments ?? []);
  return { word, said, detail: `${word}: ${detail}` };
}
