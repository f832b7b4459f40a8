// How long a text is, counted one way everywhere: the client before it sends, the engine at submission and the
// pipeline once markup is removed. A character is a code point (an emoji is one, not two UTF-16 units), spaces at
// either end do not count, and neither do invisible characters (control characters other than tab and line breaks;
// format characters such as zero-width spaces, joiners, the BOM and direction marks), which a text could otherwise be
// padded with to pass the limits and then have nothing to read.

import { binaryProblem } from './binary';

export const TEXT_MIN_LENGTH = 50;
export const TEXT_MAX_LENGTH = 100_000;

// eslint-disable-next-line no-control-regex -- control characters are exactly what this matches
const INVISIBLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\p{Cf}]/gu;
const READABLE = /[\p{L}\p{N}]/u;

/** Longer than this without a space, a run is a code or data (a SHA-256 in hex is 64 characters), not a word. */
export const LONG_RUN_CHARS = 64;
/** Scripts written without spaces: a long run of them is a sentence or a paragraph, not a code. */
const SPACELESS_SCRIPT =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{Script=Tibetan}]/u;

/** A run of non-space characters that is a code, encoded data or a minified line rather than words (a link is read). */
export function isLongRun(run: string, limit = LONG_RUN_CHARS): boolean {
  if (run.length <= limit || /^(?:https?:\/\/|www\.)/i.test(run) || SPACELESS_SCRIPT.test(run)) return false;
  // Counted in code points, as countCharacters counts: an emoji is one character.
  let count = 0;
  for (const _ of run) if (++count > limit) return true;
  return false;
}

/**
 * What is left to read once long runs are set aside (characters outside them), and the longest such run. One pass of
 * /\S+/g, which never backtracks: linear however hostile the text.
 */
export function readableLength(text: string): { readable: number; longestRun: number } {
  let readable = 0;
  let longestRun = 0;
  for (const [run] of text.matchAll(/\S+/g)) {
    if (isLongRun(run)) longestRun = Math.max(longestRun, run.length);
    else readable += run.length;
  }
  return { readable, longestRun };
}

/**
 * Text that every store can hold: NUL removed (Postgres refuses it in text and JSON) and lone surrogates (half of a
 * character, from a broken encoding) replaced by U+FFFD, as a UTF-8 decoder replaces a broken sequence. Submissions,
 * what the pipeline reads from a page and everything the team service writes go through it, so both modes keep the
 * same text and neither fails on it.
 */
export function storableText(text: string): string {
  // ES2024 string methods, in Node 20 and every VS Code; the project's lib is ES2023.
  const wellFormed = text as unknown as { isWellFormed(): boolean; toWellFormed(): string };
  const whole = wellFormed.isWellFormed() ? text : wellFormed.toWellFormed();
  return whole.includes('\u0000') ? whole.replaceAll('\u0000', '') : whole;
}

/** Characters as people count them: code points, once invisible characters and spaces at either end are removed. */
export function countCharacters(text: string): number {
  let count = 0;
  // The string iterator yields code points; a lone surrogate counts as one, as it is one in the UTF-8 sent.
  for (const _ of text.replace(INVISIBLE, '').trim()) count++;
  return count;
}

/** Why a text cannot be read aloud (a sentence fragment after "text"), or undefined when it can. */
export function textProblem(text: string): string | undefined {
  const length = countCharacters(text);
  if (length < TEXT_MIN_LENGTH || length > TEXT_MAX_LENGTH) {
    return `must be ${TEXT_MIN_LENGTH} to ${TEXT_MAX_LENGTH} characters long, not counting spaces at either end or invisible characters (it has ${length})`;
  }
  const binary = binaryProblem(text);
  if (binary) return `${binary}: send the article's text instead`;
  if (!READABLE.test(text)) return 'has nothing to read aloud: it has no letters or digits';
  const { readable, longestRun } = readableLength(text);
  if (readable < TEXT_MIN_LENGTH && longestRun > 0)
    return `has nothing to read aloud: it is mostly a run of ${longestRun.toLocaleString('en-US')} characters without spaces (a code, encoded data or a minified file, not prose); send the article's text instead`;
  return undefined;
}
