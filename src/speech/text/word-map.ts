// Word timings of the spoken form, carried back to the sentence as written (issue 26, read-along word by word).
//
// The voice times the words it said ("four dollars and fifty cents"); the transcript shows the sentence as written
// ("$4.50"). The written words are matched to the spoken ones in order: words that read the same (letters and digits,
// case aside) anchor the match (the longest common subsequence), and each run of written words between two anchors
// takes the spoken run between them: one written word takes the whole run ("$4.50" starts at "four"), as many
// written words as spoken ones pair up one to one ("colour" / "color"), and any other shape gives its first word the
// run's start and leaves the others untimed, rather than guess where inside the run they begin.

/** A word of the sentence as written, and where it starts in the line's audio (seconds), when known. */
export interface WrittenWord {
  text: string;
  start?: number;
}

export interface TimedToken {
  word: string;
  start: number;
}

/** The most cells the alignment fills (written words × spoken words); a longer line goes untimed. */
const MAX_CELLS = 250_000;

function key(word: string): string {
  return word
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, '');
}

/** The written sentence's words (whitespace-separated), each with the start of the spoken words it became. */
export function timeWrittenWords(written: string, spoken: readonly TimedToken[]): WrittenWord[] {
  const words = written.split(/\s+/).filter(Boolean);
  const out: WrittenWord[] = words.map((text) => ({ text }));
  const n = words.length;
  const m = spoken.length;
  if (n === 0 || m === 0 || n * m > MAX_CELLS) return out;
  const a = words.map(key);
  const b = spoken.map((t) => key(t.word));
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..], in one flat array.
  const width = m + 1;
  const lcs = new Uint16Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i * width + j] =
        a[i] && a[i] === b[j]
          ? lcs[(i + 1) * width + j + 1]! + 1
          : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
  const anchors: [number, number][] = [];
  for (let i = 0, j = 0; i < n && j < m;) {
    if (a[i] && a[i] === b[j]) anchors.push([i++, j++]);
    else if (lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!) i++;
    else j++;
  }
  anchors.push([n, m]);
  let wi = 0;
  let sj = 0;
  for (const [ai, aj] of anchors) {
    const runW = ai - wi;
    const runS = aj - sj;
    if (runW > 0 && runS > 0) {
      if (runW === runS) for (let k = 0; k < runW; k++) out[wi + k]!.start = spoken[sj + k]!.start;
      else out[wi]!.start = spoken[sj]!.start;
    }
    if (ai < n) out[ai]!.start = spoken[aj]!.start;
    wi = ai + 1;
    sj = aj + 1;
  }
  return out;
}
