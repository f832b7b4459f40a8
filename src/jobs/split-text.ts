// Splits a text that is over the service's length limit into parts that each fit, for "convert in parts": at
// Markdown headings where it can, else between paragraphs, else between sentences, else between words, so each part
// reads as a whole. Plain Node (unit-tested without VS Code).

export interface TextPart {
  text: string;
  /** 1-based. */
  index: number;
}

export type CharacterCounter = (text: string) => number;

/** Code points, as the service counts them (an emoji is one character, not two UTF-16 units). */
export const countCodePoints: CharacterCounter = (text) => {
  let n = 0;
  for (const _ of text) n++;
  return n;
};

/** Break points, best first: where a heading starts, a paragraph starts, a sentence starts, a word starts. */
const BOUNDARIES: readonly RegExp[] = [/\n+(?=#{1,6}\s)/g, /\n\s*\n/g, /(?<=[.!?…]["')\]]?)\s+/g, /\s+/g];

/**
 * Parts of at most `limit` characters (counted with `count`, after trimming), in order, together holding all of the
 * text's content, as few as fit and of about equal length. A part is cut at the best kind of boundary that leaves it
 * at least half its share long.
 */
export function splitText(text: string, limit: number, count: CharacterCounter = countCodePoints): TextPart[] {
  if (!(limit > 0)) throw new RangeError('limit must be positive');
  const parts: string[] = [];
  let rest = text.trim();
  for (let total = count(rest); total > limit; total = count(rest)) {
    // Parts of about equal length (a little over the average, so cuts can find a boundary), never over the limit:
    // the last part is then never a scrap.
    const remainingParts = Math.ceil(total / limit);
    const target = Math.min(limit, Math.ceil((total / remainingParts) * 1.15));
    const cut = cutPoint(rest, target, count);
    const head = rest.slice(0, cut).trim();
    if (head) parts.push(head);
    rest = rest.slice(cut).trim();
  }
  if (rest) parts.push(rest);
  return parts.map((part, i) => ({ text: part, index: i + 1 }));
}

/** A UTF-16 offset in `text` to cut at, such that the text before it has at most `limit` characters. */
function cutPoint(text: string, limit: number, count: CharacterCounter): number {
  const window = prefixOf(text, limit, count);
  const atLeast = Math.floor(window.length / 2);
  for (const boundary of BOUNDARIES) {
    let best = -1;
    for (const match of window.matchAll(boundary)) {
      if (match.index > 0) best = match.index;
    }
    if (best >= atLeast) return best;
  }
  // No boundary in the second half of the window: a hard cut, never inside a surrogate pair.
  return window.length;
}

/** The longest prefix of `text` with at most `limit` characters. */
function prefixOf(text: string, limit: number, count: CharacterCounter): string {
  if (count === countCodePoints) {
    let n = 0;
    let end = 0;
    for (const ch of text) {
      if (n === limit) break;
      n++;
      end += ch.length;
    }
    return text.slice(0, end);
  }
  // Any other counter: binary search on code-point boundaries.
  const points = [...text];
  let lo = 0;
  let hi = points.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (count(points.slice(0, mid).join('')) <= limit) lo = mid;
    else hi = mid - 1;
  }
  return points.slice(0, lo).join('');
}
