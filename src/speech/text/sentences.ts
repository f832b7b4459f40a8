// Splitting text into sentences: Intl.Segmenter (Unicode sentence boundaries), mended where it breaks after
// abbreviations ("Dr. Smith", "e.g. this") and initials ("J. R. R. Tolkien").

import { shortenLongRuns } from './normalize/long-tokens';

const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/** Abbreviations after which a sentence does not end (lower case, without the final period). */
const NO_BREAK_AFTER = new Set([
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'sr',
  'jr',
  'st',
  'mt',
  'ft',
  'no',
  'nos',
  'vol',
  'fig',
  'figs',
  'eq',
  'approx',
  'vs',
  'etc',
  'e.g',
  'i.e',
  'cf',
  'al',
  'inc',
  'ltd',
  'co',
  'corp',
  'dept',
  'est',
  'gen',
  'gov',
  'lt',
  'col',
  'capt',
  'sgt',
  'rev',
  'hon',
  'jan',
  'feb',
  'mar',
  'apr',
  'jun',
  'jul',
  'aug',
  'sep',
  'sept',
  'oct',
  'nov',
  'dec',
  'u.s',
  'u.k',
  'a.m',
  'p.m',
  'ph.d',
  'p',
  'pp',
  'ch',
  'sec',
  'min',
  'max',
  'op',
  'ed',
  'eds',
  'trans',
]);

/** Abbreviations that may well end a sentence when a capital follows ("... and so on, etc. Then"). */
const MAY_END = new Set(['etc', 'inc', 'ltd', 'co', 'corp', 'a.m', 'p.m', 'u.s', 'u.k', 'al']);

function endsWithAbbreviation(segment: string, next: string): boolean {
  const match = /(?:^|[\s(“"'])((?:[A-Za-z]\.)*[A-Za-z]+)\.\s*$/.exec(segment);
  if (!match) return false;
  const word = match[1]!;
  const lower = word.toLowerCase();
  if (/^[A-Z]$/.test(word)) return true; // an initial
  if (!NO_BREAK_AFTER.has(lower)) return false;
  if (MAY_END.has(lower) && /^[\s"“']*[A-Z]/.test(next)) return false;
  return true;
}

/** Sentences of a paragraph, as written (trimmed; never empty). */
export function splitSentences(text: string): string[] {
  // A page's text arrives here without the Markdown parser's shortening; a blob is one token, not 250 pieces.
  const raw = Array.from(segmenter.segment(shortenLongRuns(text)), (s) => s.segment);
  const sentences: string[] = [];
  let pending = '';
  for (let i = 0; i < raw.length; i++) {
    pending += raw[i];
    const next = raw[i + 1];
    if (next !== undefined && endsWithAbbreviation(pending, next)) continue;
    // A boundary with no space after it is inside a token: a URL's "?" or "!" ("example.com/a?x=1"), "Yahoo!Inc".
    if (next !== undefined && /\S$/.test(raw[i]!) && /^\S/.test(next)) continue;
    if (pending.trim()) sentences.push(pending.trim());
    pending = '';
  }
  if (pending.trim()) sentences.push(pending.trim());
  return splitLongSentences(sentences);
}

/**
 * The synthesizer's pauses and memory suit sentences of ordinary length; a run-on "sentence" (a list without
 * periods, a pasted log) is cut at clause boundaries so no single piece grows unbounded.
 */
const MAX_SENTENCE_CHARS = 400;

function splitLongSentences(sentences: string[]): string[] {
  const out: string[] = [];
  for (const sentence of sentences) {
    if (sentence.length <= MAX_SENTENCE_CHARS) {
      out.push(sentence);
      continue;
    }
    let rest = sentence;
    while (rest.length > MAX_SENTENCE_CHARS) {
      const window = rest.slice(0, MAX_SENTENCE_CHARS);
      const cut = Math.max(
        window.lastIndexOf('; '),
        window.lastIndexOf(', '),
        window.lastIndexOf(': '),
        window.lastIndexOf(' – '),
        window.lastIndexOf(' - '),
      );
      const at =
        cut > MAX_SENTENCE_CHARS / 3
          ? cut + 1
          : window.lastIndexOf(' ') > 0
            ? window.lastIndexOf(' ')
            : MAX_SENTENCE_CHARS;
      out.push(rest.slice(0, at).trim());
      rest = rest.slice(at).trim();
    }
    if (rest) out.push(rest);
  }
  return out;
}
