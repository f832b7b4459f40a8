// Word timings of a line spoken by a built-in voice (issue 26, read-along word by word).
//
// Flite prints a line's phones with their end times (-psdur) but not which word each phone belongs to, and its
// command line prints one relation only (flite_main.c: print_info). The words' phones come from a second, cheap run:
// the line again, each token followed by a comma, so the voice pauses after every token and its phones come out in
// groups, one per token. That run uses kal16 (a diphone voice: the whole line in a few milliseconds, against a
// hundred or more for rms at its real length) squeezed to a twentieth of its length; the voices share Flite's US
// English lexicon, letter-to-sound rules and our lexicon addendum, so each token has as many phones in both runs (a
// phone's name can differ where the context does: "the" is "dh iy" before a vowel, "dh ax" before a pause). The
// line's own phones are then dealt out in order, group by group: a word starts where its first phone starts and ends
// where its last ends. When the counts do not agree (a token the voice says nothing for, a line Flite split in a way
// that cannot be placed), the line gets no word timings rather than wrong ones.
//
// A token said between two pauses has the same phones wherever it stands, so each worker remembers the counts it
// learnt (PhoneCounts) and the grouping run says only the tokens it has not met yet: most lines of an article then
// need a short run or none (Mini's kal16 lines cost little more than that run, so it was 70 % more synthesis CPU
// without the memory, see ARCHITECTURE.md). A line whose remembered counts do not add up is grouped whole again.
import type { Segment } from './phones';
import type { WordTiming } from './voice';

/** The tokens of a line that Flite says something for: whitespace-separated, with a letter or a digit. */
export function spokenTokens(text: string): string[] {
  return text.split(/\s+/).filter((token) => /[\p{L}\p{N}]/u.test(token));
}

/** A token as the grouping run says it: its own final punctuation taken off. */
export function groupingKey(token: string): string {
  return token.replace(/[.!?;:,]+$/u, '');
}

/** The grouping run's input: every token ended by a comma. */
export function groupingInput(tokens: readonly string[]): string {
  return `${tokens.map((token) => `${groupingKey(token)},`).join(' ')}\n`;
}

/** The most tokens a worker remembers; past it, it starts again. */
const MAX_REMEMBERED = 20_000;

/** Phone counts of tokens said between pauses, remembered from the grouping runs of one worker. */
export class PhoneCounts {
  private readonly counts = new Map<string, number>();

  /**
   * The phone count of each token: remembered ones as they are, the others from one grouping run of them alone
   * (`group` runs Flite on an input and returns its utterances). Undefined when that run's groups do not match them.
   */
  async of(tokens: readonly string[], group: (input: string) => Promise<Segment[][]>): Promise<number[] | undefined> {
    const keys = tokens.map(groupingKey);
    const missing = [...new Set(keys.filter((key) => !this.counts.has(key)))];
    if (missing.length > 0) {
      const groups = phoneGroups(await group(groupingInput(missing)));
      if (groups.length !== missing.length) return undefined;
      if (this.counts.size + missing.length > MAX_REMEMBERED) this.counts.clear();
      missing.forEach((key, i) => this.counts.set(key, groups[i]!.length));
    }
    return keys.map((key) => this.counts.get(key)!);
  }
}

/** The grouping run's phones, split at its pauses: one group of phone names per token, in order. */
export function phoneGroups(utterances: readonly Segment[][]): string[][] {
  const groups: string[][] = [];
  let current: string[] = [];
  for (const segments of utterances) {
    for (const { phone } of segments) {
      if (phone === 'pau') {
        if (current.length > 0) groups.push(current);
        current = [];
      } else current.push(phone);
    }
    if (current.length > 0) groups.push(current);
    current = [];
  }
  return groups;
}

/**
 * The line's utterances as one list of phones timed from the start of its audio, or undefined when they cannot be
 * placed. Flite writes each utterance as long as its segments say (rms, slt, awb), so an utterance starts where the
 * ones before it end; kal16 trims each utterance's final pause by an amount the segments do not tell, so a line of
 * more than one utterance is placed only when the lengths add up to the audio's.
 */
export function placeUtterances(utterances: readonly Segment[][], seconds: number): Segment[] | undefined {
  if (utterances.length === 1) return utterances[0];
  const total = utterances.reduce((sum, u) => sum + (u.at(-1)?.end ?? 0), 0);
  if (utterances.length === 0 || Math.abs(total - seconds) > 0.02) return undefined;
  const placed: Segment[] = [];
  let offset = 0;
  for (const segments of utterances) {
    for (const s of segments) placed.push({ phone: s.phone, end: s.end + offset });
    offset += segments.at(-1)?.end ?? 0;
  }
  return placed;
}

/**
 * Each token's start and end in the line's audio (seconds), from the line's placed phones and each token's phone
 * count; undefined when they do not agree.
 */
export function wordTimes(
  tokens: readonly string[],
  counts: readonly number[],
  placed: readonly Segment[] | undefined,
): WordTiming[] | undefined {
  if (!placed || counts.length !== tokens.length || tokens.length === 0) return undefined;
  const phones: { start: number; end: number }[] = [];
  placed.forEach((s, i) => {
    if (s.phone !== 'pau') phones.push({ start: i > 0 ? placed[i - 1]!.end : 0, end: s.end });
  });
  const needed = counts.reduce((sum, count) => sum + count, 0);
  if (needed !== phones.length || counts.some((count) => count < 1)) return undefined;
  const words: WordTiming[] = [];
  let at = 0;
  tokens.forEach((word, i) => {
    const count = counts[i]!;
    words.push({ word, start: phones[at]!.start, end: phones[at + count - 1]!.end });
    at += count;
  });
  return words;
}
