// Finds where each spoken sentence is in the document it came from, for read-along highlighting in the editor.
// Cues carry sentences as written but after Markdown was rendered (no `**`, `#`, link targets), so matching compares
// words only: letters and digits, case-folded, ignoring punctuation, markup and line breaks between them.
// Plain TypeScript with no vscode import, so it is unit-tested in plain Node.

export interface TextSpan {
  /** Offsets into the document text: [start, end). */
  start: number;
  end: number;
}

/** A cue's span, and the span of each of its words (letters and digits, as WORD finds them in the cue's text). */
export interface CueSpan extends TextSpan {
  words: TextSpan[];
}

interface Word {
  text: string;
  start: number;
  end: number;
}

const WORD = /[\p{L}\p{N}]+/gu;

/** Parts of Markdown that are never read aloud: link and image targets, HTML tags and comments, reference definitions. */
const UNSPOKEN = /\]\([^)\n]*\)|<!--[\s\S]*?-->|<\/?[A-Za-z][^>\n]*>|^\s{0,3}\[[^\]\n]+\]:\s*\S.*$/gm;

function fold(word: string): string {
  return word.normalize('NFKC').toLocaleLowerCase('en');
}

export function wordsOf(text: string, from = 0, to = text.length): Word[] {
  const skipped: TextSpan[] = [];
  for (const match of text.slice(from, to).matchAll(UNSPOKEN)) {
    const start = from + (match.index ?? 0);
    skipped.push({ start, end: start + match[0].length });
  }
  const words: Word[] = [];
  let skip = 0;
  for (const match of text.slice(from, to).matchAll(WORD)) {
    const start = from + (match.index ?? 0);
    while (skip < skipped.length && (skipped[skip]?.end ?? 0) <= start) skip += 1;
    const span = skipped[skip];
    if (span && span.start <= start && start < span.end) continue;
    words.push({ text: fold(match[0]), start, end: start + match[0].length });
  }
  return words;
}

/**
 * The document span of every cue, in cue order, or undefined for a cue that is not in the document (a podcast host's
 * greeting or hand-over line). Each cue is searched forward from where the previous match ended, so a sentence that
 * occurs twice is found at the right place; a cue not found leaves the search position where it was.
 */
export function matchCues(
  documentText: string,
  cueTexts: readonly string[],
  region?: TextSpan,
): (CueSpan | undefined)[] {
  const words = wordsOf(documentText, region?.start ?? 0, region?.end ?? documentText.length);
  // Where each word occurs, so each cue is tried only at the places its first word appears.
  const positions = new Map<string, number[]>();
  words.forEach((word, index) => {
    const list = positions.get(word.text);
    if (list) list.push(index);
    else positions.set(word.text, [index]);
  });
  let cursor = 0;
  return cueTexts.map((cue) => {
    const wanted = [...cue.matchAll(WORD)].map((m) => fold(m[0]));
    const first = wanted[0];
    if (first === undefined) return undefined;
    const candidates = positions.get(first) ?? [];
    for (let c = firstAtOrAfter(candidates, cursor); c < candidates.length; c += 1) {
      const at = candidates[c] ?? 0;
      if (wanted.every((word, k) => words[at + k]?.text === word)) {
        const last = words[at + wanted.length - 1];
        const start = words[at]?.start;
        if (start === undefined || !last) return undefined;
        cursor = at + wanted.length;
        const spans = words.slice(at, at + wanted.length).map((w) => ({ start: w.start, end: w.end }));
        return { start, end: last.end, words: spans };
      }
    }
    return undefined;
  });
}

/**
 * For each piece of a cue's text (TranscriptCue.words: the text cut at its word timestamps), the range of the cue's
 * words (WORD matches in the whole text) that start inside it: [first, end). A piece without a letter or digit has
 * an empty range.
 */
export function pieceWordRanges(pieces: readonly string[]): [number, number][] {
  const text = pieces.join('');
  const starts = [...text.matchAll(WORD)].map((m) => m.index);
  const ranges: [number, number][] = [];
  let offset = 0;
  let word = 0;
  for (const piece of pieces) {
    const end = offset + piece.length;
    const first = word;
    while (word < starts.length && starts[word]! < end) word++;
    ranges.push([first, word]);
    offset = end;
  }
  return ranges;
}

function firstAtOrAfter(sorted: readonly number[], value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if ((sorted[mid] ?? Infinity) < value) low = mid + 1;
    else high = mid;
  }
  return low;
}
